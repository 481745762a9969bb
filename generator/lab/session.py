"""One SSH login on a simulated device: auth, interactive shell and exec channels.

A command line is read as bash reads one (bash(1), Lists; Special Parameters; SHELL BUILTIN
COMMANDS), for the part a driver uses: simple commands joined by `;`, `&&` and `||` (equal
precedence, left to right; a skipped command leaves `$?` alone), quotes as shlex reads them,
`$?` expanded to the last command's exit status outside single quotes, and the builtins
`echo` (-n, -e, -E), `true`, `false`, `:`, `exit [N]`. Every command returns a status: the
device's own (NVUE `nv` errors 1), 127 for an unknown command, 2 for a syntax error (nothing
on the line runs then, as bash parses the whole line first).
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import shlex
import socket

import asyncssh

from generator.lab.device import Device

log = logging.getLogger("generator.lab")


def _share_line_editor_tables() -> None:
    """asyncssh builds, for every session with a PTY, a regex of the printable characters its
    line editor has no key binding for, testing all 65,536 BMP code points one by one
    (asyncssh/editor.py SSHLineEditor._build_printable): ~50 ms of CPU per login, a third of
    the simulator's CPU in a 128-switch deploy (issue 26: the lab must not be the bottleneck
    the benchmarks measure). The table depends only on the keymap's keys, which are the same
    for every session, so each distinct keymap's table is built once and shared. If asyncssh
    changes these internals the lab keeps asyncssh's own behaviour."""
    from asyncssh import editor

    build = getattr(editor.SSHLineEditor, "_build_printable", None)
    if build is None or getattr(build, "_fabricgen_shared", False):
        return
    tables: dict[frozenset, object] = {}

    def shared(self) -> None:
        keymap = getattr(self, "_keymap", None)
        if not isinstance(keymap, dict):
            build(self)
            return
        keys = frozenset(keymap)
        if keys not in tables:
            build(self)
            tables[keys] = self._printable
        self._printable = tables[keys]

    shared._fabricgen_shared = True
    editor.SSHLineEditor._build_printable = shared


_share_line_editor_tables()


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
        self.status = 0          # bash's $?: the exit status of the last command run

    async def run(self) -> None:
        try:
            if self.device.must_change_password(self.username):
                self.process.exit(await self._expired())
                return
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

    async def _expired(self) -> int:
        """An expired password (`passwd -e`): sshd's PAM account check answers "new authentication token
        required" (pam_unix), so OpenSSH runs passwd instead of the shell and ends the session after
        it; without a tty it refuses (OpenSSH session.c do_pam_chauthtok, auth-pam.c)."""
        notice = "You are required to change your password immediately (administrator enforced)"
        if self.process.command is not None or self.process.get_terminal_type() is None:
            self.io.write(f"{notice}\nPassword change required but no TTY available.\n")
            return 1
        self.io.write(f"{notice}.\n{notice}\nChanging password for {self.username}.\nCurrent password: ")
        old = await self.io.ask("")
        new = await self.io.ask("New password: ") if old is not None else None
        again = await self.io.ask("Retype new password: ") if new is not None else None
        old, new, again = ((v or "").rstrip("\r\n") for v in (old, new, again))
        if new != again:
            self.io.write("Sorry, passwords do not match.\npasswd: Authentication token manipulation error\n"
                          "passwd: password unchanged\n")
            return 1
        if not self.device.change_password(self.username, old, new):
            self.io.write("passwd: Authentication token manipulation error\npasswd: password unchanged\n")
            return 1
        self.io.write("passwd: password updated successfully\n")
        return 0

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
                if await self._run_line(line.strip()) is None:
                    return
            if not self.finished:
                self.io.write(self.device.prompt(self.username))
        # bash's `exit` without N, or end of input, exits with the last command's status
        self.process.exit(self.status)

    async def _exec(self, command_line: str) -> int:
        status = await self._run_line(command_line)
        return 255 if status is None else status

    async def _run_line(self, line: str) -> int | None:
        """Run one command line as bash does; its status, None when a fault cut the connection.

        Faults count lines, not the commands on them: `drop_after_commands` N cuts the
        connection when the client's line N+1 arrives, whatever it holds.
        """
        faults = self.device.faults.current()
        owner = self.connection.get_owner()
        owner.commands += 1
        if faults.drop_after_commands is not None and owner.commands > faults.drop_after_commands:
            self.connection.abort()
            return None
        if faults.delay:
            await asyncio.sleep(faults.delay)
        if faults.hold:
            await self._hold()
        try:
            parts = split_list(line)
        except ValueError as exc:
            self.io.write(f"-bash: {exc}\n")
            self.status = 2
            return self.status
        for operator, text in parts:
            if self.finished:
                break
            if (operator == "&&" and self.status != 0) or (operator == "||" and self.status == 0):
                continue
            try:
                argv = shlex.split(expand_status(text, self.status))
            except ValueError as exc:
                self.io.write(f"-bash: syntax error: {exc}\n")
                self.status = 2
                continue
            self.status = await self.dispatch(argv)
        return self.status

    async def _hold(self) -> None:
        """Fault `hold`: keep this line until the fault is lifted; DIR/faults/<name>.held says a
        line is held (a test instrument: no switch holds commands on its own)."""
        def holding() -> bool:
            hold = self.device.faults.current().hold
            return hold == "any" or (hold == "pending" and self.device.awaiting_confirmation())

        if not holding():
            return
        marker = self.device.faults.path.with_suffix(".held")
        marker.write_text(f"{self.device.name}\n")
        try:
            while holding():
                await asyncio.sleep(0.02)      # the fault file is re-read by mtime (FaultSource)
        finally:
            marker.unlink(missing_ok=True)

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
            if args:
                if not args[0].lstrip("-").isdigit():
                    self.io.write(f"-bash: {name}: {args[0]}: numeric argument required\n")
                    return 2
                return int(args[0]) & 0xFF
            return self.status
        elif name == "echo":
            self.io.write(bash_echo(args))
        elif name == "false":
            return 1
        elif name == ":":
            return 0
        elif name == "hostname":
            self.io.write(self.device.hostname + "\n")
        elif name == "whoami":
            self.io.write(self.username + "\n")
        elif name == "cat":
            try:
                for path in args:
                    self.io.write(self.device.read_file(path))
            except Exception as exc:  # noqa: BLE001 - print like cat does and go on
                # GNU cat: "cat: PATH: No such file or directory", status 1
                self.io.write(f"cat: {str(exc).removeprefix('Error: ')}\n")
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


_OPERATORS = ("&&", "||", ";")


def split_list(line: str) -> list[tuple[str, str]]:
    """A bash list split at `;`, `&&` and `||` outside quotes: [(operator before, command text)].

    The first command's operator is ";". A trailing `;` is allowed; an empty command anywhere
    else is bash's "syntax error near unexpected token" (ValueError). `|` and `&` stay inside
    the command text (pipelines and background jobs are not simulated).
    """
    parts: list[tuple[str, str]] = []
    operator, current, quote, i = ";", [], None, 0
    while i < len(line):
        char = line[i]
        if quote:
            if char == "\\" and quote == '"' and i + 1 < len(line):
                current.append(line[i:i + 2])
                i += 2
                continue
            quote = None if char == quote else quote
        elif char == "\\" and i + 1 < len(line):
            current.append(line[i:i + 2])
            i += 2
            continue
        elif char in "'\"":
            quote = char
        else:
            token = next((op for op in _OPERATORS if line.startswith(op, i)), None)
            if token:
                text = "".join(current).strip()
                if not text:
                    raise ValueError(f"syntax error near unexpected token `{token}'")
                parts.append((operator, text))
                operator, current = token, []
                i += len(token)
                continue
        current.append(char)
        i += 1
    text = "".join(current).strip()
    if text:
        parts.append((operator, text))
    elif operator != ";":
        raise ValueError("syntax error: unexpected end of file")
    return parts


def expand_status(text: str, status: int) -> str:
    """`$?` replaced by `status` outside single quotes (bash expands it unquoted and in double
    quotes; `\\$?` and '$?' stay literal)."""
    out, quote, i = [], None, 0
    while i < len(text):
        char = text[i]
        if char == "\\" and quote != "'" and i + 1 < len(text):
            out.append(text[i:i + 2])
            i += 2
            continue
        if char in "'\"" and quote in (None, char):
            quote = None if quote else char
        elif char == "$" and quote != "'" and text.startswith("$?", i):
            out.append(str(status))
            i += 2
            continue
        out.append(char)
        i += 1
    return "".join(out)


_ECHO_ESCAPES = {"n": "\n", "t": "\t", "\\": "\\", "a": "\a", "b": "\b", "e": "\x1b", "f": "\f",
                 "r": "\r", "v": "\v"}


def bash_echo(args: list[str]) -> str:
    """bash's builtin echo: leading -n/-e/-E option words (any mix, e.g. -ne), then the words
    joined by one space and a newline unless -n; with -e the escapes \\n \\t \\\\ ... and \\c
    (stop output here, no newline). A word like `-x` is printed, as bash does."""
    newline, escapes = True, False
    while args and len(args[0]) > 1 and args[0][0] == "-" and set(args[0][1:]) <= set("neE"):
        for flag in args[0][1:]:
            newline = newline and flag != "n"
            escapes = True if flag == "e" else (False if flag == "E" else escapes)
        args = args[1:]
    text = " ".join(args)
    if escapes:
        out, i = [], 0
        while i < len(text):
            if text[i] == "\\" and i + 1 < len(text):
                nxt = text[i + 1]
                if nxt == "c":
                    return "".join(out)
                if nxt in _ECHO_ESCAPES:
                    out.append(_ECHO_ESCAPES[nxt])
                    i += 2
                    continue
            out.append(text[i])
            i += 1
        text = "".join(out)
    return text + ("\n" if newline else "")
