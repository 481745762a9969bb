"""Processes a test service started, stopped later by their PID alone, from this or another process.

A service left running for a developer (the dev Nautobot) is stopped by a later command that never
held its Popen, so a PID is all it has; the start time in /proc/PID/stat tells the process we
started from a later one that reuses its number, and a pidfd (Linux 5.3+, pidfd_open(2)) pins the
process between that check and the signal, so no other process is ever signalled.
"""

from __future__ import annotations

import os
import select
import signal
from dataclasses import dataclass
from pathlib import Path


def _stat(pid: int) -> list[str] | None:
    """/proc/PID/stat from field 3 (state) on, None when the process is gone (proc_pid_stat(5)).
    The command name (field 2) may hold spaces and ')': split after the last ')'."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError):
        return None


def start_ticks(pid: int) -> int | None:
    """Field 22, starttime (clock ticks after boot); None for a process gone or dead: a zombie
    waiting for its parent (init, for an orphan) to collect it has run its last instruction."""
    fields = _stat(pid)
    if fields is None or fields[0] in ("Z", "X"):
        return None
    return int(fields[19])


def session_of(pid: int) -> int | None:
    """Field 6: the session id."""
    fields = _stat(pid)
    return None if fields is None else int(fields[3])


@dataclass(frozen=True)
class OwnedProcess:
    name: str
    pid: int
    start_ticks: int

    @classmethod
    def of(cls, name: str, pid: int) -> OwnedProcess:
        ticks = start_ticks(pid)
        if ticks is None:
            raise ProcessLookupError(f"{name} (pid {pid}) exited at once")
        return cls(name, pid, ticks)

    def alive(self) -> bool:
        return start_ticks(self.pid) == self.start_ticks

    def to_json(self) -> dict:
        return {"name": self.name, "pid": self.pid, "start_ticks": self.start_ticks}

    @classmethod
    def from_json(cls, data: dict) -> OwnedProcess:
        return cls(str(data["name"]), int(data["pid"]), int(data["start_ticks"]))


def _exited(pidfd: int, timeout: float) -> bool:
    """A pidfd polls readable when its process exits: wait on that event, not on sleeps."""
    poller = select.poll()
    poller.register(pidfd, select.POLLIN)
    return bool(poller.poll(max(0, int(timeout * 1000))))


def stop(proc: OwnedProcess, sig: int = signal.SIGTERM, timeout: float = 30.0) -> None:
    """Send `sig`, wait up to `timeout` s for the exit, then SIGKILL. A PID now naming another
    process is left alone."""
    try:
        pidfd = os.pidfd_open(proc.pid)
    except ProcessLookupError:
        return
    try:
        if start_ticks(proc.pid) != proc.start_ticks:
            return
        signal.pidfd_send_signal(pidfd, sig)
        if not _exited(pidfd, timeout):
            signal.pidfd_send_signal(pidfd, signal.SIGKILL)
            _exited(pidfd, 10.0)
    except ProcessLookupError:
        pass
    finally:
        os.close(pidfd)
    _reap(proc.pid)


def stop_session(leader: OwnedProcess, timeout: float = 10.0) -> None:
    """Stop what a session leader we started (start_new_session) forked and left behind: its
    session's processes, started no earlier than it (a reused session id is not ours)."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == leader.pid:
            continue
        pid = int(entry.name)
        ticks = start_ticks(pid)
        if ticks is None or ticks < leader.start_ticks or session_of(pid) != leader.pid:
            continue
        stop(OwnedProcess("session member", pid, ticks), signal.SIGKILL, timeout)


def _reap(pid: int) -> None:
    """Collect the exit status of a child of this process; another process's PID is not ours to wait on."""
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass
