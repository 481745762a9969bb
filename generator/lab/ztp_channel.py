"""The lab server's ZTP channel: DIR/control.sock, a unix socket (0600 in the 0700 lab directory)
through which `lab ztp` and the switch-tool shims of a running ZTP script act on ONE simulated
switch, through the same device implementation an SSH session uses (NvueDevice.run,
SonicDevice.run): `nv config replace/patch/apply/save` validate against the release's schema and
refuse to delete a logged-in user exactly as they do over SSH.

One request per connection: a JSON line, answered by a JSON line.

  {"op": "state"}                                    every device: os, version, mac, serial, ZTP state
  {"op": "lease", "device", "address", "gateway", "hostname"}   eth0's DHCP client took this lease
  {"op": "run", "device", "argv", "files": {abs path: text}}   a switch tool; FILES are put on the
                                                     switch first at the same paths (the script's own
                                                     files, e.g. `nv config replace FILE`)
  {"op": "put", "device", "path", "text"}            write a file on the switch (configdb-json's copy)
  {"op": "log", "device", "tag", "message"}          logger(1): the switch's syslog
  {"op": "reach", "device", "vrf"}                   can a program in VRF `vrf` reach the management
                                                     network (the kit server)? only from eth0's VRF
  {"op": "finish", "device", "ok"}                   ZTP ended; ok: the switch leaves ZTP and
                                                     endpoints.yml names its deploy user
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
from collections.abc import Callable
from pathlib import Path

from generator.lab.device import CommandError, Device
from generator.lab.factory import Management

log = logging.getLogger("generator.lab")

SOCKET_FILE = "control.sock"
MAX_REQUEST_BYTES = 80 << 20     # a request carries at most one kit file (64 MB cap) plus framing
MAX_OUTPUT_BYTES = 16 << 20
# AF_UNIX paths are limited to 108 bytes (sun_path, unix(7)); keep a margin.
MAX_SOCKET_PATH = 100
# The switch tools a ZTP script may run on each NOS (contract sections 3 and 4); logger goes
# through "log", curl is served by the shim from the kit itself.
TOOLS = {"cumulus": {"nv", "hostname", "ip", "passwd", "usermod"}, "sonic": {"show", "sonic-cfggen", "config", "hostname", "test"}}


class BufferIo:
    """What a command prints, capped; nobody answers a question (no tty): prompts read as 'no'."""

    def __init__(self):
        self.parts: list[str] = []
        self.size = 0

    def write(self, text: str) -> None:
        if self.size < MAX_OUTPUT_BYTES:
            self.parts.append(text[: MAX_OUTPUT_BYTES - self.size])
            self.size += len(text)

    async def ask(self, prompt: str) -> str | None:
        self.write(prompt)
        return None

    def text(self) -> str:
        return "".join(self.parts)


class ZtpChannel:
    def __init__(self, directory: Path, devices: dict[str, Device], on_finish: Callable[[str], None]):
        self.directory = directory
        self.devices = devices
        self.on_finish = on_finish
        self.server: asyncio.AbstractServer | None = None

    @property
    def path(self) -> Path:
        return self.directory / SOCKET_FILE

    async def start(self) -> None:
        path = self.path
        if len(str(path)) > MAX_SOCKET_PATH:
            log.warning("ZTP channel off: %s is longer than a unix socket path may be; `lab ztp` needs a "
                        "shorter --dir", path)
            return
        path.unlink(missing_ok=True)
        old = os.umask(0o177)        # the socket is created 0600: only the lab's owner talks to it
        try:
            self.server = await asyncio.start_unix_server(self._serve, path=str(path), limit=MAX_REQUEST_BYTES)
        finally:
            os.umask(old)

    def close(self) -> None:
        if self.server is not None:
            self.server.close()
        self.path.unlink(missing_ok=True)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            line = await reader.readline()
            try:
                request = json.loads(line)
                if not isinstance(request, dict):
                    raise ValueError("not an object")
                answer = await self.handle(request)
            except (ValueError, KeyError, TypeError) as exc:
                answer = {"error": f"bad request: {str(exc)[:200]}"}
            writer.write(json.dumps(answer).encode() + b"\n")
            await writer.drain()
        except (ConnectionError, asyncio.LimitOverrunError, asyncio.IncompleteReadError, ValueError):
            pass
        except Exception:  # a simulator bug must not take the lab down
            log.exception("ZTP channel request failed")
        finally:
            writer.close()

    def _device(self, request: dict) -> Device:
        name = request["device"]
        device = self.devices.get(name) if isinstance(name, str) else None
        if device is None:
            raise KeyError(f"no device {name!r} in this lab")
        return device

    async def handle(self, request: dict) -> dict:
        op = request.get("op")
        if op == "state":
            return {"devices": {name: self._state(d) for name, d in self.devices.items()}}
        device = self._device(request)
        if not getattr(device, "ztp_booted", False):
            return {"error": f"{device.name} did not boot with ZTP on (`lab up --ztp`)"}
        if op == "lease":
            mgmt = Management(str(request["address"]), request.get("gateway"), "dhcp")
            device.take_lease(mgmt, request.get("hostname"))
            log.info("%s: DHCP lease %s gateway %s hostname %s", device.name, mgmt.address, mgmt.gateway,
                     request.get("hostname"))
            return {"ok": True}
        if op == "run":
            return await self._run(device, [str(a) for a in request["argv"]], request.get("files") or {})
        if op == "put":
            device.write_file(_absolute(request["path"]), str(request["text"]))
            return {"ok": True}
        if op == "reach":
            # a connection to the management network from VRF `vrf`: only eth0's own VRF routes there
            vrf = str(request.get("vrf") or "default")
            return {"reach": device.eth0_vrf() == vrf, "eth0_vrf": device.eth0_vrf()}
        if op == "log":
            device.syslog(str(request.get("tag") or "user")[:64], str(request.get("message") or "")[:4096])
            return {"ok": True}
        if op == "finish":
            # a reload at the end of ZTP restarts eth0 for a moment: reachable means after that
            await asyncio.sleep(device.restarting_for())
            if request.get("ok"):
                device.ztp_waiting = False
                self.on_finish(device.name)
            return {"ok": True, "cut_off": device.refuses_connections()}
        return {"error": f"unknown op {op!r}"}

    @staticmethod
    def _state(device: Device) -> dict:
        mgmt = getattr(device, "mgmt", None)
        return {"os": device.os_name, "version": device.version, "mac": device.eth0_mac, "serial": device.serial,
                "ztp_booted": bool(getattr(device, "ztp_booted", False)), "ztp_waiting": device.ztp_waiting,
                "address": mgmt.address if mgmt else None, "hostname": device.hostname,
                "cut_off": device.refuses_connections(), "eth0_vrf": device.eth0_vrf()}

    async def _run(self, device: Device, argv: list[str], files: dict) -> dict:
        if not argv:
            return {"status": 0, "output": ""}
        for path, text in files.items():
            device.write_file(_absolute(path), str(text))
        io = BufferIo()
        name = argv[0]
        if name not in TOOLS.get(device.os_name, set()):
            return {"status": 127, "output": f"-bash: {name}: command not found\n"}
        try:
            status = _builtin(device, argv, io)
            if status is None:
                status = await device.run(argv, io)
        except CommandError as exc:
            io.write(f"{exc}\n")
            status = 1
        if status is None:
            io.write(f"-bash: {name}: command not found\n")
            status = 127
        return {"status": status, "output": io.text()}


def _absolute(path: object) -> str:
    text = str(path)
    if not text.startswith("/"):
        raise ValueError(f"path {text[:80]!r} must be absolute")
    return text


def _builtin(device: Device, argv: list[str], io: BufferIo) -> int | None:
    """The Linux tools of the switch the channel serves itself (None: the NOS's own command)."""
    name, args = argv[0], argv[1:]
    if name == "hostname":
        if args and args[0] not in ("-s", "--short", "-f", "--fqdn"):
            io.write("hostname: setting the hostname is not simulated; the NOS config sets it\n")
            return 1
        io.write(device.hostname + "\n")
        return 0
    if name == "ip":
        words = [a for a in args if a not in ("-br", "-brief", "--brief")]
        if len(words) != len(args) and words in (["link", "show", "dev", "eth0"], ["link", "show", "eth0"],
                                                 ["l", "show", "dev", "eth0"], ["link", "dev", "eth0"]):
            io.write(device.eth0_link())
            return 0
        if words in (["link", "show", "dev", "eth0"], ["link", "show", "eth0"]):
            # iproute2's long format names the VRF device eth0 is enslaved to: "master mgmt"
            vrf = device.eth0_vrf()
            master = f" master {vrf}" if vrf != "default" else ""
            io.write(f"2: eth0: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 qdisc mq{master} state UP mode DEFAULT "
                     f"group default qlen 1000\n    link/ether {device.eth0_mac} brd ff:ff:ff:ff:ff:ff\n")
            return 0
        io.write(f"ip {' '.join(args)}: not simulated (the lab answers `ip [-br] link show dev eth0`)\n")
        return 1
    if name == "passwd" and device.os_name == "cumulus":
        # passwd(1) as root: -x DAYS USER sets the maximum password age; a forced change
        # (`passwd -e`) stays until a new password is set (shadow(5): sp_lstchg 0)
        if len(args) == 3 and args[0] == "-x" and args[1].isdigit():
            if not device.has_user(args[2]):
                io.write(f"passwd: user '{args[2]}' does not exist\n")
                return 1
            io.write("passwd: password expiry information changed.\n")
            return 0
        io.write(f"passwd {' '.join(args)}: not simulated (the lab answers passwd -x DAYS USER)\n")
        return 1
    if name == "usermod" and device.os_name == "cumulus":
        if len(args) == 3 and args[0] in ("-p", "--password"):
            if device.usermod_password(args[2], args[1]):
                return 0
            io.write(f"usermod: user '{args[2]}' does not exist\n")
            return 6
        io.write(f"usermod {' '.join(args)}: not simulated (the lab answers usermod -p HASH USER)\n")
        return 1
    if name == "test":
        # configdb-json asks whether /usr/share/sonic/device/<platform>/<hwsku> exists (sonic-ztp
        # src/usr/lib/ztp/plugins/configdb-json); nothing else of the file system is modelled
        parts = args[1].strip("/").split("/") if len(args) == 2 and args[0] == "-d" else []
        if parts[:3] == ["usr", "share", "sonic"] and len(parts) == 6 and parts[3] == "device":
            return 0 if device.has_hwsku(parts[4], parts[5]) else 1
        return 1
    return None


def request(socket_path: Path, message: dict, timeout: float = 120) -> dict:
    """One request to a running lab's channel (used by `lab ztp`)."""
    import socket

    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout)
        sock.connect(str(socket_path))
        sock.sendall(json.dumps(message).encode() + b"\n")
        chunks, size = [], 0
        while True:
            chunk = sock.recv(1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
            if size > MAX_REQUEST_BYTES:
                raise ValueError("the lab's answer is larger than any answer can be")
            if chunk.endswith(b"\n"):
                break
    answer = json.loads(b"".join(chunks) or b"{}")
    if not isinstance(answer, dict):
        raise ValueError("the lab's answer is not an object")
    return answer
