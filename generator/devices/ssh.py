"""Shared SSH plumbing for the switch drivers: netmiko session, host keys, SFTP, errors.

Host keys are checked strictly against `known_hosts` (optional_args) by default:
an unknown or changed key refuses the connection. `accept_new_host_keys: True`
trusts a key on first contact and records it (a changed key is still refused).

`run_id` (optional_args, else a random one per driver) names the files this driver uploads
to the switch (/tmp/fabricgen-<run_id>-candidate.yaml ...): runs never share a file, and
each upload is checked with `sha256sum` on the switch before it is loaded.

Every command's exit status counts (`_run`, `_check`): a command that exits non-zero is
CommandFailed with the command (secrets scrubbed) and the first lines of what it printed.
"""

from __future__ import annotations

import functools
import hashlib
import io
import os
import re
import secrets
import shlex
import tempfile
import threading
from pathlib import Path

import paramiko
from napalm.base import NetworkDriver
from napalm.base.exceptions import (
    ConnectAuthError,
    ConnectionClosedException,
    ConnectionException,
    ConnectTimeoutError,
)
from netmiko.exceptions import NetmikoAuthenticationException, NetmikoTimeoutException, ReadTimeout
from netmiko.linux.linux_ssh import LinuxSSH
from netmiko.ssh_dispatcher import CLASS_MAPPER

from generator.devices.commands import SHA256SUM

DEFAULT_KNOWN_HOSTS = "~/.ssh/known_hosts"
_RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")
_SHA256_LINE = re.compile(r"^\\?([0-9a-f]{64})\s")
# How many lines of a failed command's output its CommandFailed quotes.
FAILED_OUTPUT_LINES = 3


MARKER_PREFIX = "__fg_rc_"


def status_marker(nonce: str) -> str:
    """The exit-status marker a driver appends to each command (see SSHCliDriver._run)."""
    return f"{MARKER_PREFIX}{nonce}"


def with_status(command: str, marker: str) -> str:
    """`command` followed by an echo of its exit status: `<command>; echo "<marker>=$?"`.

    bash expands `$?` inside double quotes to the status of the last command before it, so
    the echo reports `command`'s own status (bash(1), Special Parameters). The command's echo
    on the terminal carries the literal `$?`, never digits, so it cannot be taken for the
    answer. A command list of its own (`a; b`, `a | b`) reports its last command's status, as
    bash does: every command fabricgen sends (commands.py) is one simple command.
    """
    return f'{command}; echo "{marker}=$?"'


def split_status(output: str, marker: str) -> tuple[str, int | None]:
    """(the command's output without the marker line, its exit status); None: no marker came back.

    Only the LAST line counts, and the marker may end a line the command left unterminated
    (`printf foo` then the echo prints `foo<marker>=0`). A marker-like line earlier in the
    output (a device printing text that looks like one) is output, not a status: the real
    marker follows everything the command printed.
    """
    text = output.replace("\r\n", "\n")
    head, _, last = text.rstrip("\n").rpartition("\n")
    match = re.fullmatch(rf"(.*){re.escape(marker)}=(\d{{1,3}})\s*", last)
    if match is None:
        return text.strip("\n"), None
    rest = match.group(1)
    body = f"{head}\n{rest}" if head and rest else (head or rest)
    return body.strip("\n"), int(match.group(2))


class CommandFailed(Exception):
    """The device answered a command with an error; the message is the device's."""


class ReadIncomplete(CommandFailed):
    """The answer did not arrive whole (no exit status came back, or its JSON is cut): a transient
    failure of the read, not an answer of the device. A caller may retry it once on a new session."""


def failure(command: str, status: int | None, output: str) -> str:
    """One message for a failed command: what ran, how it ended, the first lines it printed."""
    lines = [ln.strip() for ln in output.splitlines() if ln.strip()]
    said = "; ".join(lines[:FAILED_OUTPUT_LINES]) + (" ..." if len(lines) > FAILED_OUTPUT_LINES else "")
    how = "its output was cut (no exit status came back)" if status is None else f"exit status {status}"
    return f"`{command}` failed, {how}" + (f": {said}" if said else "")


class SSHCliDriver(NetworkDriver):
    """Base for drivers that run CLI commands over one netmiko session."""

    netmiko_device_type = "linux"
    default_port = 22
    # Output lines that fail a command even when it exits 0. Empty here: the exit status
    # decides (`-bash: x: command not found` is 127, click's `Usage:`/`Error:` exit 2). A
    # driver sets this only for a NOS known to print errors with status 0 (nvue.py).
    error_prefixes: tuple[str, ...] = ()

    def __init__(self, hostname: str, username: str, password: str, timeout: int = 60,
                 optional_args: dict | None = None) -> None:
        self.hostname = hostname
        self.username = username
        self._password = password
        self.timeout = timeout
        args = dict(optional_args or {})
        self.port = int(args.get("port", self.default_port))
        self.known_hosts = str(Path(os.path.expanduser(args.get("known_hosts") or DEFAULT_KNOWN_HOSTS)))
        self.accept_new_host_keys = bool(args.get("accept_new_host_keys", False))
        self.key_file = args.get("key_file")
        run_id = str(args.get("run_id") or secrets.token_hex(6))
        if not _RUN_ID.fullmatch(run_id):
            raise ValueError(f"optional_args run_id {run_id!r}: letters, digits, - and _ only (it names files)")
        self.run_id = run_id
        self.optional_args = args
        self.device = None
        self._uploaded: dict[str, str] = {}      # remote path -> sha256 of what this driver put there
        # Per driver, random: no device output can know it in advance (see split_status).
        self._marker = status_marker(secrets.token_hex(4))
        self._prompt = re.compile(rf"{re.escape(username)}@[\w.-]+(?::\w+)?:[^\n]*[$#]\s*$")
        # Where an answer ends (_run): a status marker line, then the prompt. Any driver's nonce
        # matches here, so every driver of a run shares one compiled pattern (netmiko searches with
        # re.search(pattern, ...) after each read: per-driver patterns outgrew re's cache of 512 and
        # were compiled again on every call); split_status then accepts only this driver's marker.
        self._answer_end = rf"{MARKER_PREFIX}[0-9a-f]+=\d{{1,3}}[ \t]*\r*\n{self._prompt.pattern}"

    # --- connection -----------------------------------------------------
    @property
    def where(self) -> str:
        return f"{self.hostname}:{self.port}"

    def open(self) -> None:
        if not self.accept_new_host_keys and not Path(self.known_hosts).is_file():
            raise ConnectionException(
                f"{self.where}: known_hosts file {self.known_hosts} does not exist; pass optional_args "
                "known_hosts=<file> (strict host-key checking) or accept_new_host_keys=True")
        # Strict checking reads only this switch's entries (a new key is recorded into the whole file).
        entry = None if self.accept_new_host_keys else _known_host_entry(self.known_hosts, self.hostname, self.port)
        try:
            self.device = _connection_class(self.netmiko_device_type)(
                device_type=self.netmiko_device_type, host=self.hostname, port=self.port,
                username=self.username, password=self._password,
                use_keys=bool(self.key_file), key_file=self.key_file, allow_agent=False,
                ssh_strict=not self.accept_new_host_keys, system_host_keys=False,
                alt_host_keys=True, alt_key_file=entry or self.known_hosts,
                conn_timeout=self.timeout, auth_timeout=self.timeout, banner_timeout=self.timeout,
                read_timeout_override=None, fast_cli=True)
        except NetmikoAuthenticationException:
            hint = self.optional_args.get("password_hint")
            raise ConnectAuthError(f"{self.where}: authentication failed for user {self.username!r}"
                                   + (f"; {hint}" if hint else "")) from None
        except (NetmikoTimeoutException, ReadTimeout, paramiko.SSHException, OSError, EOFError) as exc:
            # ReadTimeout: netmiko's session preparation saw no prompt (a switch too busy to answer,
            # or its management port going down under the login): a connection failure like the others
            message = self._connect_failure(exc)
            timed_out = isinstance(exc, NetmikoTimeoutException) and "host key" not in message
            raise (ConnectTimeoutError if timed_out else ConnectionException)(f"{self.where}: {message}") from None
        finally:
            if entry is not None:
                os.unlink(entry)
        if self.accept_new_host_keys:
            self._remember_host_key()
        _skip_ansi_scan_without_escape(self.device)
        _end_read_on_closed_channel(self.device)
        self._sync()

    def _sync(self) -> None:
        """Read the shell empty before the first command: run a no-op and read up to its marker.

        netmiko's session preparation sends a newline, and another each time the shell is slow to
        answer (`_test_channel_read`, `find_prompt`), then stops reading at the first prompt. On a
        busy switch or bastion the prompts of the extra newlines arrive later, after the echo of
        our first command (a tty echoes typed-ahead input at once, the shell answers lines in
        order), so that command's answer began with a stray prompt: "`nv show interface -o
        json`: not JSON at line 1" on a healthy switch (issue 26). Every line sent before this
        no-op is answered before its marker, so reading to the marker takes all of them."""
        try:
            self._run(":")
        except ConnectionClosedException as exc:
            self.close()
            raise ConnectionException(str(exc)) from None

    def _connect_failure(self, exc: BaseException) -> str:
        # netmiko wraps paramiko's host-key errors in its timeout exception: read the text.
        text = " ".join(self._scrub(str(exc)).split()) or type(exc).__name__
        if isinstance(exc, paramiko.BadHostKeyException) or "does not match" in text:
            return (f"host key does not match {self.known_hosts}; if the switch was re-installed, remove the "
                    f"old key (ssh-keygen -R '[{self.hostname}]:{self.port}' -f {self.known_hosts})")
        if "not found in known_hosts" in text:
            return (f"host key unknown: not in {self.known_hosts}; add it (ssh-keyscan) "
                    "or pass optional_args accept_new_host_keys=True")
        return text

    def _remember_host_key(self) -> None:
        client = self.device.remote_conn_pre
        path = Path(self.known_hosts)
        path.parent.mkdir(parents=True, exist_ok=True)
        client.save_host_keys(str(path))

    def close(self) -> None:
        if self.device is not None:
            try:
                self.device.disconnect()
            except (OSError, EOFError, paramiko.SSHException):
                pass
            self.device = None

    def is_alive(self) -> dict:
        return {"is_alive": bool(self.device is not None and self.device.is_alive())}

    # --- commands -------------------------------------------------------
    def _send(self, command: str, read_timeout: float | None = None, expect: str | None = None) -> str:
        """Send one line to the shell and return its output without echo and prompt.

        The line's exit status is not read here: callers run commands with `_run`/`_check`.
        `expect`: what ends the answer (default: the prompt).
        """
        if self.device is None:
            raise ConnectionClosedException(f"{self.where}: not connected; call open() first")
        try:
            output = self.device.send_command(
                command, expect_string=expect or self._prompt.pattern, strip_prompt=False, strip_command=True,
                read_timeout=read_timeout or float(self.timeout), cmd_verify=True)
        except ReadTimeout:
            if not self._transport_alive():
                self.device = None
                raise ConnectionClosedException(f"{self.where}: connection lost during {command.split()[:3]}") from None
            raise ConnectionClosedException(
                f"{self.where}: no prompt after {command.split()[0:3]} within "
                f"{read_timeout or self.timeout}s") from None
        except (OSError, EOFError, paramiko.SSHException) as exc:
            self.device = None
            raise ConnectionClosedException(f"{self.where}: connection lost: {self._scrub(_first_line(exc))}") from None
        lines = output.replace("\r\n", "\n").split("\n")
        if lines and self._prompt.search(lines[-1]):
            # A new hostname changes the prompt; netmiko's own prompt checks (disconnect) need it.
            self.device.base_prompt = lines.pop().strip()[:-1]
        return "\n".join(lines).strip("\n")

    def _transport_alive(self) -> bool:
        channel = self.device.remote_conn
        transport = channel.get_transport() if channel is not None else None
        return bool(transport and transport.is_active() and not channel.closed)

    def _run(self, command: str, read_timeout: float | None = None) -> tuple[str, int | None]:
        """Run one command; (its output, its exit status or None when the status never came back).

        The status: netmiko drives ONE interactive shell channel (invoke_shell) for the whole
        session, and SSH reports an exit status only when a channel's program ends (RFC 4254
        section 6.10): for this channel, once at logout, never per command. An exec channel per
        command would report it, but is a new session each time (one more sshd session and PAM
        login per command, on a switch answering 700 calls per verify) and loses the shell the
        prompt handling, sudo and the NOS login banner were set up for. So each command is sent
        as `<command>; echo "<marker>=$?"` (with_status) and the marker is cut off its output
        (split_status). The marker carries a random per-driver nonce.

        The answer ends at the marker line AND the prompt after it, not at the first thing that
        looks like a prompt: netmiko searches its growing buffer after every read, so a prompt-like
        match in the middle of a long answer (issue 26: `nv show interface -o json` on a busy
        host, "its output was cut") would end the read early and leave the rest in the channel,
        where it becomes the start of the next command's answer ("not JSON at line 1"). The echo
        of the command cannot match: it carries `$?`, never digits, after the marker.
        """
        output = self._send(with_status(command, self._marker), read_timeout, expect=self._answer_end)
        return split_status(output, self._marker)

    def _check(self, command: str, read_timeout: float | None = None, *, ok: tuple[int, ...] = (0,)) -> str:
        """Run a command that must succeed: its exit status is in `ok` (0 unless the caller says
        which other statuses are an answer, not a failure), its output was not cut, and no line
        starts with one of `error_prefixes`. Returns its output."""
        output, status = self._run(command, read_timeout)
        if status is None:
            raise ReadIncomplete(self._scrub(failure(command, status, output)))
        if status not in ok:
            raise CommandFailed(self._scrub(failure(command, status, output)))
        # (the line scan only when a prefix occurs at all: a 128-port interface tree has 100k lines)
        errors = [ln for ln in output.splitlines() if ln.startswith(self.error_prefixes)] if any(
            prefix in output for prefix in self.error_prefixes) else []
        if errors:
            raise CommandFailed(self._scrub(f"`{command}` exited 0 but printed: " + "; ".join(errors)))
        return output

    def _upload(self, text: str, remote_path: str) -> None:
        """Copy a file over SFTP on the already authenticated transport (no second login)."""
        if self.device is None:
            raise ConnectionClosedException(f"{self.where}: not connected; call open() first")
        data = text.encode()
        digest = hashlib.sha256(data).hexdigest()
        if self._uploaded.get(remote_path) == digest:
            # A deploy stages each candidate in its backup + diff phase and again, rebuilt from a
            # fresh read, in its wave: mostly the same bytes. The switch's own sha256sum proves the
            # file is still exactly that; anything else (gone, changed) is sent again below.
            try:
                self._verify_upload(remote_path, digest)
                return
            except CommandFailed:
                pass
        self._uploaded.pop(remote_path, None)
        transport = self.device.remote_conn.get_transport()
        sftp = paramiko.SFTPClient.from_transport(transport)
        try:
            sftp.putfo(io.BytesIO(data), remote_path)
        finally:
            sftp.close()
        self._verify_upload(remote_path, digest)
        self._uploaded[remote_path] = digest

    def _verify_upload(self, remote_path: str, want: str) -> None:
        """The switch holds exactly what was sent: a half-written or swapped file is never loaded."""
        # sha256sum exits 1 for a file it cannot read (coreutils manual): _check reports that with
        # sha256sum's own line; a status 0 whose line is not "<64 hex>  <path>" is refused below.
        output = self._check(SHA256SUM.format(path=shlex.quote(remote_path)))
        match = _SHA256_LINE.match(output.strip().splitlines()[0] if output.strip() else "")
        if not match:
            raise CommandFailed(f"cannot verify the upload of {remote_path}: sha256sum said "
                                f"{self._scrub(output.strip()[:120])!r}")
        if match.group(1) != want:
            raise CommandFailed(f"the upload of {remote_path} does not match what was sent (sha256 "
                                f"{match.group(1)[:12]}... on the switch, {want[:12]}... sent); nothing was loaded")

    def remote_path(self, template: str) -> str:
        """A commands.py path template for this driver's run."""
        return template.format(run=self.run_id)

    @staticmethod
    def _read_source(filename: str | None, config: str | None) -> str:
        if config is not None:
            return config
        if filename is None:
            raise ValueError("give filename or config")
        return Path(filename).read_text()

    def _scrub(self, text: str) -> str:
        return text.replace(self._password, "***") if self._password else text


_KNOWN_HOSTS: dict[str, tuple[tuple[int, int, int], paramiko.HostKeys]] = {}
_KNOWN_HOSTS_LOCK = threading.Lock()


def _known_host_entry(path: str, host: str, port: int) -> str | None:
    """A private temporary file with only `host`'s entries of known_hosts `path` (None: it has
    none, or the file cannot be read: the connection then reads the whole file and reports that).

    paramiko checks every line it loads against all lines before it (HostKeys.load -> check ->
    lookup): loading a known_hosts of n switches costs n*n/2 comparisons, and netmiko loads the
    file on every login. At 128 switches that was several CPU seconds per command, at 1,000 a
    minute. The file is parsed once per process (again when it changes) and each login gets a
    file with its own entry; a hashed entry matches as well (HostKeys.lookup)."""
    try:
        st = os.stat(path)
        stamp = (st.st_mtime_ns, st.st_size, st.st_ino)
        with _KNOWN_HOSTS_LOCK:
            cached = _KNOWN_HOSTS.get(path)
            if cached is None or cached[0] != stamp:
                keys = paramiko.HostKeys()
                keys.load(path)
                cached = _KNOWN_HOSTS[path] = (stamp, keys)
    except (OSError, paramiko.SSHException, ValueError):
        return None
    name = host if port == 22 else f"[{host}]:{port}"
    found = cached[1].lookup(name)
    if not found:
        return None
    fd, entry = tempfile.mkstemp(prefix="fabricgen-known-host-")
    with os.fdopen(fd, "w") as fh:
        fh.writelines(f"{name} {keytype} {key.get_base64()}\n" for keytype, key in found.items())
    return entry


@functools.cache
def _connection_class(device_type: str) -> type:
    """netmiko's class for `device_type` (what ConnectHandler would make), without the fixed 0.1 s
    sleep its login starts with: _try_session_preparation writes a newline and sleeps "so that
    there is data", then session_preparation, which on a Linux shell reads until the prompt anyway
    (LinuxSSH: _test_channel_read(pattern=prompt), then find_prompt; our _sync reads the shell empty
    after that). A SONiC wave logs in again after its `config reload`, and the wave of 32 waits for
    the last of those logins (issue 32). Other classes are netmiko's own."""
    base = CLASS_MAPPER[device_type]
    if not issubclass(base, LinuxSSH) or base.session_preparation is not LinuxSSH.session_preparation:
        return base

    class Connection(base):
        def _try_session_preparation(self, force_data: bool = True) -> None:
            try:
                if force_data:
                    self.write_channel(self.RETURN)
                self.session_preparation()
            except Exception:
                self.disconnect()          # as netmiko does: no thread or socket left behind
                raise

    Connection.__name__ = Connection.__qualname__ = base.__name__
    return Connection


def _skip_ansi_scan_without_escape(connection) -> None:
    """netmiko's Linux session strips ANSI escape codes from every chunk it reads, 30-odd regex
    passes each (netmiko base_connection.strip_ansi_escape_codes), a large part of the CPU a
    128-switch read costs. Every code it strips begins with ESC (chr 27): text without one comes
    back unchanged, so it is returned at once and only text holding an ESC is scanned."""
    scan = connection.strip_ansi_escape_codes

    def strip(string_buffer: str) -> str:
        return scan(string_buffer) if "\x1b" in string_buffer else string_buffer

    connection.strip_ansi_escape_codes = strip


def _end_read_on_closed_channel(connection) -> None:
    """A read on a session the switch has closed ends at once, as a lost connection (EOFError).

    netmiko reads until its pattern or its timeout and takes an empty read for "nothing yet":
    paramiko's recv_ready() is False on a closed channel as on a quiet one (paramiko channel.py:
    "A False result does not mean that the channel has closed"), so a command whose echo had not
    come back when the connection closed waited netmiko's fixed 10 s for the echo
    (send_command -> command_echo_read(read_timeout=10)), whatever the caller's read_timeout.
    That is every session a SONiC `config reload` cuts while a probe is on the way (the watcher
    of _await_reload): one such switch held its whole wave of 32 for 9 s (issue 32). Once the
    channel is closed (its transport died: paramiko _unlink) or the switch sent EOF, and nothing
    is left in its buffer, no more bytes can come."""
    read = connection.read_channel

    def read_channel() -> str:
        data = read()
        channel = connection.remote_conn
        if not data and channel is not None and (channel.closed or channel.eof_received) \
                and not channel.recv_ready():
            raise EOFError("the switch closed the session")
        return data

    connection.read_channel = read_channel


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0]
