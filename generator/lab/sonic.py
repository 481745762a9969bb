"""Simulated SONiC: config_db as JSON, checkpoints, `config replace`, and a confirm timer.

SONiC has no commit-confirm. The lab (and a real switch, via a small helper script
the deploy installs) provides `fabricgen-confirm`:

  fabricgen-confirm start <seconds> <checkpoint>   roll back to <checkpoint> unless stopped in time
  fabricgen-confirm stop                           keep the running config (confirm)
  fabricgen-confirm status                         JSON {"pending": bool, "remaining": s, "checkpoint": name}
"""

from __future__ import annotations

import asyncio
import copy
import json
import time
import zlib
from dataclasses import dataclass

from generator.lab.device import CommandError, Device, Io

STARTUP_FILE = "/etc/sonic/config_db.json"


@dataclass
class ConfirmTimer:
    checkpoint: str
    deadline: float
    handle: asyncio.TimerHandle


class SonicDevice(Device):
    os_name = "sonic"

    def __init__(self, *args, platform: str = "SN5600", **kwargs):
        super().__init__(*args, **kwargs)
        self.platform = platform
        self.running: dict = {"DEVICE_METADATA": {"localhost": {
            "hostname": self.name, "hwsku": f"ACS-{platform}", "platform": f"x86_64-nvidia_{platform.lower()}-r0",
            "mac": "1c:34:da:00:00:02", "type": "LeafRouter"}}}
        self.checkpoints: dict[str, dict] = {}
        self.timer: ConfirmTimer | None = None
        self._save()

    @property
    def hostname(self) -> str:
        return str(self.running.get("DEVICE_METADATA", {}).get("localhost", {}).get("hostname") or self.name)

    async def run(self, argv: list[str], io: Io) -> int | None:
        if argv[:1] == ["config"]:
            handler = self._config
        elif argv[:1] == ["show"]:
            handler = self._show
        elif argv[:1] == ["fabricgen-confirm"]:
            handler = self._confirm
        else:
            return None
        try:
            handler(argv[1:], io)
        except CommandError as exc:
            io.write(f"{exc}\n")
            return 1
        return 0

    def _config(self, args: list[str], io: Io) -> None:
        sub, rest = (args[0], args[1:]) if args else ("", [])
        if sub == "checkpoint" and len(rest) == 1:
            self.checkpoints[rest[0]] = copy.deepcopy(self.running)
            io.write(f"Checkpoint {rest[0]} created successfully.\n")
        elif sub == "replace" and len(rest) == 1:
            config = self._load_config_db(rest[0])
            self._fail_if_faulted()
            self.running = config
            io.write("Config replaced successfully.\n")
        elif sub == "rollback" and len(rest) == 1:
            self.running = copy.deepcopy(self._checkpoint(rest[0]))
            io.write("Config rolled back successfully.\n")
        elif sub == "list-checkpoints":
            io.write(json.dumps(sorted(self.checkpoints), indent=4) + "\n")
        elif sub == "delete-checkpoint" and len(rest) == 1:
            self._checkpoint(rest[0])
            del self.checkpoints[rest[0]]
            io.write(f"Checkpoint {rest[0]} deleted successfully.\n")
        elif sub == "save":
            self._save()
            io.write(f"Running command: /usr/local/bin/sonic-cfggen -d --print-data > {STARTUP_FILE}\n")
        else:
            raise CommandError(f"Error: unknown or incomplete command: config {' '.join(args)}")

    def _checkpoint(self, name: str) -> dict:
        if name not in self.checkpoints:
            raise CommandError(f"Error: Checkpoint '{name}' does not exist.")
        return self.checkpoints[name]

    def _fail_if_faulted(self) -> None:
        fault = self.faults.current().apply_error
        if fault:
            raise CommandError(f"Error: {fault}")

    def _load_config_db(self, path: str) -> dict:
        try:
            data = json.loads(self.read_file(path))
        except json.JSONDecodeError as exc:
            raise CommandError(f"Error: {path} is not valid JSON: {exc}") from None
        if not isinstance(data, dict) or not all(isinstance(t, dict) for t in data.values()):
            raise CommandError(f"Error: {path}: config_db must map table names to objects")
        for table, rows in data.items():
            for key, row in rows.items():
                if not isinstance(row, dict):
                    raise CommandError(f"Error: {table}|{key}: a row must be an object of fields")
        return data

    def _save(self) -> None:
        self.write_file(STARTUP_FILE, json.dumps(self.running, indent=4, sort_keys=True) + "\n")

    def _show(self, args: list[str], io: Io) -> None:
        if args[:2] == ["runningconfiguration", "all"]:
            io.write(json.dumps(self.running, indent=4, sort_keys=True) + "\n")
        elif args[:1] == ["version"]:
            meta = self.running.get("DEVICE_METADATA", {}).get("localhost", {})
            up = int(time.time() - self.booted)
            days, rest = divmod(up, 86400)
            clock = f"{rest // 3600}:{rest % 3600 // 60:02d}" if rest >= 3600 else f"{rest // 60} min"
            uptime = (f"{days} day{'s' if days != 1 else ''}, " if days else "") + clock
            io.write(
                f"\nSONiC Software Version: SONiC.{self.version}\n"
                f"SONiC OS Version: 12\nDistribution: Debian 12\nKernel: 6.1.0-11-2-amd64\n"
                f"Platform: {meta.get('platform', '')}\nHwSKU: {meta.get('hwsku', '')}\nASIC: mellanox\n"
                f"ASIC Count: 1\nSerial Number: MT{zlib.crc32(self.name.encode()):010d}\n"
                f"Model Number: M{self.platform}\nHardware Revision: A1\nUptime: {time.strftime('%H:%M:%S')} up {uptime},  1 user,  load average: 0.00, 0.01, 0.05\n")
        else:
            raise CommandError(f"Error: show {' '.join(args)}: not simulated")

    def _confirm(self, args: list[str], io: Io) -> None:
        if args[:1] == ["start"] and len(args) == 3 and args[1].isdigit():
            if self.timer is not None:
                raise CommandError("Error: a confirm timer is already running")
            checkpoint = args[2]
            self._checkpoint(checkpoint)
            seconds = int(args[1])
            handle = asyncio.get_running_loop().call_later(seconds, self._expire)
            self.timer = ConfirmTimer(checkpoint, time.monotonic() + seconds, handle)
            io.write(f"confirm timer started: rollback to {checkpoint} in {seconds}s\n")
        elif args == ["stop"]:
            if self.timer is None:
                raise CommandError("Error: no confirm timer is running")
            self.timer.handle.cancel()
            self.timer = None
            io.write("confirm timer stopped\n")
        elif args == ["status"]:
            timer = self.timer
            status = {"pending": timer is not None,
                      "remaining": max(0, round(timer.deadline - time.monotonic())) if timer else 0,
                      "checkpoint": timer.checkpoint if timer else None}
            io.write(json.dumps(status) + "\n")
        else:
            raise CommandError("Usage: fabricgen-confirm start <seconds> <checkpoint> | stop | status")

    def _expire(self) -> None:
        if self.timer is None:
            return
        self.running = copy.deepcopy(self.checkpoints[self.timer.checkpoint])
        self.timer = None
