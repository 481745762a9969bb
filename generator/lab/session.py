"""One SSH login on a simulated device: auth, interactive shell and exec channels."""

from __future__ import annotations

import asyncio
import hashlib
import logging
import shlex
import socket

import asyncssh

from generator.lab.device import Device

log = logging.getLogger("generator.lab")


class LabSSHServer(asyncssh.SSHServer):
    """One SSH connection: the device decides who may log in and whether it is reachable at all."""

    def __init__(self, device: Device):
        self.device = device
        self.connection: asyncssh.SSHServerConnection | None = None
        self.user: str | None = None
        self.commands = 0  # per connection: the drop fault counts every channel's commands

    def connection_made(self, conn: asyncssh.SSHServerConnection) -> None:
        self.connection = conn
        reason = self.device.refuses_connections()
        if reason:
            # The switch lost its management address: close the TCP connection before the SSH
            # banner so that a client fails at once instead of waiting for its timeout.
            log.info("%s: connection refused: %s", self.device.name, reason)
            transport = conn.get_extra_info("socket")
            if transport is not None:
                transport.shutdown(socket.SHUT_RDWR)
            return
        self.device.connections[conn] = None

    def connection_lost(self, exc: Exception | None) -> None:
        self.device.connections.pop(self.connection, None)

    def begin_auth(self, username: str) -> bool:
        self.user = username
        return True

    def password_auth_supported(self) -> bool:
        return True

    def validate_password(self, username: str, password: str) -> bool:
        if self.device.faults.current().refuse_auth:
            return False
        return self.device.check_password(username, password)

    def public_key_auth_supported(self) -> bool:
        return True

    def validate_public_key(self, username: str, key: asyncssh.SSHKey) -> bool:
        if self.device.faults.current().refuse_auth:
            return False
        key_type, key_b64 = key.export_public_key("openssh").decode().split()[:2]
        return self.device.check_public_key(username, key_type, key_b64)

    def auth_completed(self) -> None:
        if self.connection in self.device.connections:
            self.device.connections[self.connection] = self.user


class ProcessIo:
    def __init__(self, process: asyncssh.SSHServerProcess):
        self.process = process

    def write(self, text: str) -> None:
        # With a PTY, asyncssh's line editor already turns \n into \r\n as a real tty does.
        self.process.stdout.write(text)

    async def ask(self, prompt: str) -> str | None:
        self.write(prompt)
        while True:
            try:
                line = await self.process.stdin.readline()
            except asyncssh.TerminalSizeChanged:
                continue
            except (asyncssh.BreakReceived, asyncssh.SignalReceived):
                return None
            return line or None


class Session:
    def __init__(self, device: Device, username: str, process: asyncssh.SSHServerProcess):
        self.device = device
        self.username = username
        self.process = process
        self.io = ProcessIo(process)
        self.connection = process.get_extra_info("connection")
        self.finished = False

    async def run(self) -> None:
        try:
            if self.process.command is not None:
                status = await self._exec(self.process.command)
                self.process.exit(status)
            else:
                await self._shell()
        except (asyncssh.DisconnectError, asyncssh.ConnectionLost, BrokenPipeError, ConnectionError):
            pass
        except Exception:  # a simulator bug must not take the other sessions down
            log.exception("session on %s failed", self.device.name)
            self.process.exit(1)

    async def _shell(self) -> None:
        self.io.write(self.device.prompt(self.username))
        while not self.finished:
            try:
                line = await self.process.stdin.readline()
            except asyncssh.TerminalSizeChanged:
                continue
            except (asyncssh.BreakReceived, asyncssh.SignalReceived):
                self.io.write("^C\n" + self.device.prompt(self.username))
                continue
            if not line:
                break
            if line.strip():
                if not await self._command(line.strip()):
                    return
            if not self.finished:
                self.io.write(self.device.prompt(self.username))
        self.process.exit(0)

    async def _exec(self, command_line: str) -> int:
        status = 0
        for part in command_line.split(";"):
            if part.strip():
                status = await self._command_status(part.strip())
                if status is None:
                    return 255
        return status

    async def _command(self, line: str) -> bool:
        return await self._command_status(line) is not None

    async def _command_status(self, line: str) -> int | None:
        """Run one command line; None when the connection was cut by a fault."""
        faults = self.device.faults.current()
        owner = self.connection.get_owner()
        owner.commands += 1
        if faults.drop_after_commands is not None and owner.commands > faults.drop_after_commands:
            self.connection.abort()
            return None
        if faults.delay:
            await asyncio.sleep(faults.delay)
        try:
            argv = shlex.split(line)
        except ValueError as exc:
            self.io.write(f"-bash: syntax error: {exc}\n")
            return 2
        return await self.dispatch(argv)

    async def dispatch(self, argv: list[str]) -> int:
        while argv and argv[0] == "sudo":
            argv = argv[1:]
        if not argv:
            return 0
        status = await self.device.run(argv, self.io)
        if status is not None:
            return status
        return self._builtin(argv)

    def _builtin(self, argv: list[str]) -> int:
        name, args = argv[0], argv[1:]
        if name in ("exit", "logout"):
            self.finished = True
        elif name == "echo":
            self.io.write(" ".join(args) + "\n")
        elif name == "hostname":
            self.io.write(self.device.hostname + "\n")
        elif name == "whoami":
            self.io.write(self.username + "\n")
        elif name == "cat":
            try:
                for path in args:
                    self.io.write(self.device.read_file(path))
            except Exception as exc:  # noqa: BLE001 - print like cat does and go on
                self.io.write(f"cat: {exc}\n")
                return 1
        elif name == "sha256sum":
            return self._sha256sum(args)
        elif name in ("stty", "true", "terminal", "export", "unset", "clear", "pwd"):
            if name == "pwd":
                self.io.write("/home/" + self.username + "\n")
        else:
            self.io.write(f"-bash: {name}: command not found\n")
            return 127
        return 0

    def _sha256sum(self, paths: list[str]) -> int:
        """As GNU coreutils' sha256sum: "<hex>  <path>" per file (binary mode), an error line and
        status 1 for a file it cannot read."""
        status = 0
        for path in paths or ["-"]:
            try:
                if path == "-" or path.startswith("-"):
                    raise IsADirectoryError("reading standard input or options is not simulated")
                data = self.device.local_path(path).read_bytes()
            except FileNotFoundError:
                self.io.write(f"sha256sum: {path}: No such file or directory\n")
                status = 1
                continue
            except OSError as exc:
                self.io.write(f"sha256sum: {path}: {exc.strerror or exc}\n")
                status = 1
                continue
            self.io.write(f"{hashlib.sha256(data).hexdigest()}  {path}\n")
        return status
