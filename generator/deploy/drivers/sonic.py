"""napalm driver for community SONiC over SSH (netmiko `linux`, bash on the switch).

Replace = `config checkpoint` + `config replace <config_db.json>` (generic config
updater); rollback = `config rollback <checkpoint>`. SONiC has no commit-confirm:
`revert_in` uses the `fabricgen-confirm` timer described in commands.SonicCommands.
optional_args: port, known_hosts, accept_new_host_keys, key_file.
"""

from __future__ import annotations

import copy
import datetime as dt
import difflib
import json
import re

from napalm.base.exceptions import CommitError, MergeConfigException, ReplaceConfigException

from generator.deploy.drivers.commands import SONIC
from generator.deploy.drivers.ssh import CommandFailed, SSHCliDriver


class SonicDriver(SSHCliDriver):
    platform = "sonic_fabric"
    netmiko_device_type = "linux"

    def __init__(self, hostname: str, username: str, password: str, timeout: int = 60,
                 optional_args: dict | None = None) -> None:
        super().__init__(hostname, username, password, timeout, optional_args)
        self.commands = SONIC
        self._candidate: dict | None = None
        self._last_checkpoint: str | None = None

    # --- candidate ------------------------------------------------------
    def load_replace_candidate(self, filename: str | None = None, config: str | None = None) -> None:
        self._stage(self._parse(filename, config, ReplaceConfigException), ReplaceConfigException)

    def load_merge_candidate(self, filename: str | None = None, config: str | None = None) -> None:
        patch = self._parse(filename, config, MergeConfigException)
        merged = copy.deepcopy(self._candidate if self._candidate is not None else self._running())
        for table, rows in patch.items():
            target = merged.setdefault(table, {})
            for key, fields in rows.items():
                target.setdefault(key, {}).update(fields)
        self._stage(merged, MergeConfigException)

    def _parse(self, filename, config, error: type[Exception]) -> dict:
        try:
            data = json.loads(self._read_source(filename, config))
        except (OSError, ValueError) as exc:
            raise error(f"{self.where}: candidate is not a readable config_db JSON: {exc}") from None
        if not isinstance(data, dict) or not all(isinstance(rows, dict) for rows in data.values()):
            raise error(f"{self.where}: config_db JSON must map table names to objects")
        return data

    def _stage(self, config: dict, error: type[Exception]) -> None:
        try:
            self._upload(json.dumps(config, indent=4, sort_keys=True) + "\n", self.commands.candidate_path)
        except OSError as exc:
            raise error(f"{self.where}: upload of the candidate failed: {self._scrub(str(exc))}") from None
        self._candidate = config

    def compare_config(self) -> str:
        if self._candidate is None:
            return ""
        running = _lines(self._running())
        candidate = _lines(self._candidate)
        return "".join(difflib.unified_diff(running, candidate, "running", "candidate")).strip()

    def discard_config(self) -> None:
        self._candidate = None

    # --- commit ---------------------------------------------------------
    def commit_config(self, message: str = "", revert_in: int | None = None) -> None:
        if self.has_pending_commit():
            raise CommitError(f"{self.where}: a commit is pending confirmation; confirm or roll it back first")
        if self._candidate is None:
            raise CommitError(f"{self.where}: no candidate loaded; call load_replace_candidate first")
        checkpoint = self.commands.checkpoint_prefix + dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%S%f")
        try:
            self._check(self.commands.checkpoint.format(name=checkpoint))
            self._last_checkpoint = checkpoint
            self._check(self.commands.replace.format(path=self.commands.candidate_path),
                        read_timeout=max(self.timeout, 120))
            if revert_in is not None:
                self._check(self.commands.confirm_start.format(seconds=int(revert_in), checkpoint=checkpoint))
            else:
                self._check(self.commands.save)
        except CommandFailed as exc:
            raise CommitError(f"{self.where}: {exc}") from None
        self._candidate = None

    def confirm_commit(self) -> None:
        if not self.has_pending_commit():
            raise CommitError(f"{self.where}: no commit is pending confirmation")
        try:
            self._check(self.commands.confirm_stop)
            self._check(self.commands.save)
        except CommandFailed as exc:
            raise CommitError(f"{self.where}: {exc}") from None

    def has_pending_commit(self) -> bool:
        return bool(self._confirm_status().get("pending"))

    def _confirm_status(self) -> dict:
        try:
            return json.loads(self._check(self.commands.confirm_status))
        except (json.JSONDecodeError, CommandFailed) as exc:
            raise CommitError(f"{self.where}: fabricgen-confirm is missing or broken on the switch: {exc}") from None

    def rollback(self) -> None:
        status = self._confirm_status()
        try:
            if status.get("pending"):
                self._check(self.commands.confirm_stop)
                checkpoint = status["checkpoint"]
            else:
                checkpoint = self._last_checkpoint or self._newest_checkpoint()
            self._check(self.commands.rollback.format(name=checkpoint), read_timeout=max(self.timeout, 120))
            self._check(self.commands.save)
        except CommandFailed as exc:
            raise CommitError(f"{self.where}: rollback failed: {exc}") from None

    def _newest_checkpoint(self) -> str:
        names = json.loads(self._check(self.commands.list_checkpoints) or "[]")
        ours = sorted(n for n in names if n.startswith(self.commands.checkpoint_prefix))
        if not ours:
            raise CommitError(f"{self.where}: no fabricgen checkpoint to roll back to")
        return ours[-1]

    # --- getters --------------------------------------------------------
    def _running(self) -> dict:
        return json.loads(self._check(self.commands.show_running) or "{}")

    def get_config(self, retrieve: str = "all", full: bool = False, sanitized: bool = False,
                   format: str = "text") -> dict:
        config = {"running": "", "startup": "", "candidate": ""}
        if retrieve in ("all", "running"):
            config["running"] = self._check(self.commands.show_running) + "\n"
        if retrieve in ("all", "startup"):
            config["startup"] = self._check(self.commands.show_startup) + "\n"
        if retrieve in ("all", "candidate") and self._candidate is not None:
            config["candidate"] = json.dumps(self._candidate, indent=4, sort_keys=True) + "\n"
        return config

    def get_facts(self) -> dict:
        version = {}
        for line in self._check(self.commands.show_version).splitlines():
            key, sep, value = line.partition(":")
            if sep:
                version[key.strip()] = value.strip()
        running = self._running()
        meta = running.get("DEVICE_METADATA", {}).get("localhost", {})
        hostname = str(meta.get("hostname", ""))
        return {
            "uptime": _uptime_seconds(version.get("Uptime", "")),
            "vendor": "NVIDIA",
            "os_version": version.get("SONiC Software Version", ""),
            "serial_number": version.get("Serial Number", ""),
            "model": version.get("Model Number") or version.get("HwSKU", ""),
            "hostname": hostname,
            "fqdn": hostname,
            "interface_list": sorted(running.get("PORT", {})),
        }


def _lines(config: dict) -> list[str]:
    return (json.dumps(config, indent=4, sort_keys=True) + "\n").splitlines(keepends=True)


def _uptime_seconds(text: str) -> float:
    """Seconds from `uptime` text: ' 10:32:09 up 2 days,  3:04,  1 user, ...' or 'up 7 min, ...'."""
    match = re.search(r"up\s+(?:(\d+)\s+days?,\s*)?(?:(\d+):(\d+)|(\d+)\s+min)", text)
    if not match:
        return -1.0
    days, hours, minutes, only_minutes = (int(g) if g else 0 for g in match.groups())
    return float(days * 86400 + hours * 3600 + (minutes or only_minutes) * 60)
