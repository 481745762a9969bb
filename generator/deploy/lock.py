"""One deploy per fabric at a time: an O_EXCL lock file holding the owner's pid.

A lock left by a dead process is reported, never taken over silently: the dead
deploy may have left commits pending on switches, and a person should look at
them (and the backups) before the next rollout starts.
"""

from __future__ import annotations

import json
import os
import socket
import time
from pathlib import Path


class LockError(RuntimeError):
    """Another deploy holds the lock, or a stale lock needs a person's attention."""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # exists, owned by someone else
    return True


class DeployLock:
    def __init__(self, path: Path, fabric: str):
        self.path = Path(path)
        self.fabric = fabric
        self._token: str | None = None

    def acquire(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        token = json.dumps({"pid": os.getpid(), "host": socket.gethostname(),
                            "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())})
        try:
            fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            raise LockError(self._held_message()) from None
        with os.fdopen(fd, "w") as fh:
            fh.write(token + "\n")
        self._token = token

    def _held_message(self) -> str:
        try:
            owner = json.loads(self.path.read_text() or "{}")
        except (OSError, json.JSONDecodeError):
            owner = {}
        pid = owner.get("pid")
        since = owner.get("started", "an unknown time")
        host = owner.get("host", "?")
        if isinstance(pid, int) and host == socket.gethostname() and not _alive(pid):
            return (f"stale deploy lock {self.path}: pid {pid} (started {since}) is no longer running; "
                    "check the switches for pending commits, then remove the lock file and deploy again")
        return (f"another deploy of fabric {self.fabric!r} is running (pid {pid} on {host}, started {since}; "
                f"lock {self.path}); wait for it to finish")

    def release(self) -> None:
        if self._token is None:
            return
        try:
            if self.path.read_text().strip() == self._token:
                self.path.unlink()
        except FileNotFoundError:
            pass
        self._token = None

    def __enter__(self) -> DeployLock:
        self.acquire()
        return self

    def __exit__(self, *exc) -> None:
        self.release()
