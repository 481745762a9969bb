"""One deploy per fabric at a time: a lock file per fabric in a state directory.

Where: the lock must not depend on the directory a deploy is started from (issue 15,
finding 2: two runs from two directories both took a lock in their own ./backups).
  1. $FABRICGEN_STATE_DIR, when set;
  2. /var/lib/fabricgen, when it exists: on a bastion shared by several operators an
     admin creates it once (e.g. `install -d -m 2775 -g netops /var/lib/fabricgen`) so
     every operator's deploy sees every other's lock - a per-user directory would not;
  3. else $XDG_STATE_HOME/fabricgen, else ~/.local/state/fabricgen (XDG Base Directory
     spec: "state data that should persist between (application) restarts"): one
     operator on a laptop or CI runner.
`fabricgen lock status` prints the directory in use. The lock covers one bastion (or
whatever shares the state directory); across bastions the switches themselves refuse a
second run: unique candidate paths, pending commits of others refused (rollout.py).

The file is JSON {fabric, user, host, pid, started, run_id}, created complete (written
to a temporary file, then hard-linked into place, which fails if a lock exists), so a
reader never sees half a lock. A second deploy fails at once naming the holder; it never
waits. A lock left by a dead process is reported, never taken over silently: the dead
deploy may have left commits pending on switches, and a person should look at them (and
the backups) before the next rollout starts - then `fabricgen lock break`.
"""

from __future__ import annotations

import getpass
import json
import os
import re
import secrets
import socket
import time
from dataclasses import dataclass
from pathlib import Path

from generator.common.bounded_read import ReadRefused, read_bounded
from generator.common.errors import FabricgenError

STATE_ENV = "FABRICGEN_STATE_DIR"
SHARED_STATE_DIR = Path("/var/lib/fabricgen")
LOCK_NAME = "deploy.lock"
# a lock file is a few hundred bytes; anything bigger is not ours
MAX_LOCK_BYTES = 4096


class LockError(FabricgenError, RuntimeError):
    """Another deploy holds the lock, or a stale lock needs a person's attention."""


def state_dir() -> Path:
    """The directory holding every fabric's lock (see the module docstring for the order)."""
    env = os.environ.get(STATE_ENV)
    if env:
        return Path(env).expanduser()
    if SHARED_STATE_DIR.is_dir():
        return SHARED_STATE_DIR
    xdg = os.environ.get("XDG_STATE_HOME")
    # The spec says a relative XDG path is invalid and must be ignored.
    base = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".local" / "state"
    return base / "fabricgen"


def lock_path(fabric: str, directory: Path | None = None) -> Path:
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", fabric):
        # fabric.name is validated as a label (intent/model.py); never build a path from anything else
        raise LockError(f"fabric name {fabric!r} cannot name a lock file")
    return (directory or state_dir()) / fabric / LOCK_NAME


def new_run_id() -> str:
    """UTC time + 6 random hex digits: sorts by start, unique across bastions, safe in a file name."""
    return time.strftime("%Y%m%dT%H%M%SZ", time.gmtime()) + "-" + secrets.token_hex(3)


def _user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return str(os.geteuid())


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # exists, owned by someone else
    return True


@dataclass(frozen=True)
class Holder:
    """What a lock file says, and whether its process is known to be gone."""

    path: Path
    fabric: str
    user: str
    host: str
    pid: int | None
    started: str
    run_id: str
    raw: str

    @property
    def local(self) -> bool:
        return self.host == socket.gethostname()

    @property
    def stale(self) -> bool:
        """The holder ran on this host and its PID is gone (a PID on another host cannot be checked)."""
        return self.local and isinstance(self.pid, int) and not _alive(self.pid)

    def describe(self) -> str:
        run = f", run {self.run_id}" if self.run_id else ""
        return f"{self.user}@{self.host} pid {self.pid} (started {self.started}{run})"


def read_holder(path: Path, fabric: str) -> Holder | None:
    """The lock's holder, None when there is no lock. An unreadable lock is still a lock."""
    try:
        raw = read_bounded(path, MAX_LOCK_BYTES, follow_symlinks=False).decode("utf-8", "replace")
    except FileNotFoundError:
        return None
    except ReadRefused as exc:
        if exc.kind not in ("type", "size"):
            raise LockError(f"cannot read the deploy lock {path}: {exc.message}") from None
        raw = ""            # not a lock file fabricgen wrote, but something holds the name: still a lock
    except OSError as exc:
        raise LockError(f"cannot read the deploy lock {path}: {exc.strerror}") from None
    try:
        data = json.loads(raw)
    except json.JSONDecodeError:
        data = {}
    if not isinstance(data, dict):
        data = {}
    pid = data.get("pid")
    return Holder(path=path, fabric=str(data.get("fabric") or fabric), user=str(data.get("user") or "?"),
                  host=str(data.get("host") or "?"), pid=pid if isinstance(pid, int) else None,
                  started=str(data.get("started") or "an unknown time"), run_id=str(data.get("run_id") or ""),
                  raw=raw)


def held_message(holder: Holder) -> str:
    if holder.stale:
        return (f"stale deploy lock {holder.path}: pid {holder.pid} of {holder.user} (started {holder.started}) "
                "is no longer running; check the switches for pending commits, then "
                f"`fabricgen lock break` and deploy again")
    return (f"another deploy of fabric {holder.fabric!r} is running: {holder.describe()}; lock {holder.path}; "
            "wait for it to finish")


class DeployLock:
    def __init__(self, path: Path, fabric: str, run_id: str | None = None):
        self.path = Path(path)
        self.fabric = fabric
        self.run_id = run_id or new_run_id()
        self._token: str | None = None

    def acquire(self) -> None:
        directory = self.path.parent
        try:
            directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        except OSError as exc:
            raise LockError(f"cannot create the lock directory {directory}: {exc.strerror}; set "
                            f"{STATE_ENV} to a writable directory") from None
        token = json.dumps({"fabric": self.fabric, "user": _user(), "host": socket.gethostname(),
                            "pid": os.getpid(), "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                            "run_id": self.run_id}, sort_keys=True)
        tmp = directory / f".{LOCK_NAME}.{os.getpid()}.{secrets.token_hex(4)}"
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
            with os.fdopen(fd, "w") as fh:
                fh.write(token + "\n")
            try:
                os.link(tmp, self.path)      # atomic, and fails when a lock exists: nobody sees half a file
            except FileExistsError:
                holder = read_holder(self.path, self.fabric)
                raise LockError(held_message(holder) if holder else
                                f"the deploy lock {self.path} changed while it was read; try again") from None
        except OSError as exc:
            raise LockError(f"cannot write the deploy lock {self.path}: {exc.strerror}; set {STATE_ENV} "
                            "to a writable directory") from None
        finally:
            tmp.unlink(missing_ok=True)
        self._token = token

    def release(self) -> bool:
        """Remove the lock if it is still ours; True when it was."""
        if self._token is None:
            return False
        token, self._token = self._token, None
        try:
            holder = read_holder(self.path, self.fabric)
            if holder is not None and holder.raw.strip() == token:
                self.path.unlink()
                return True
        except (OSError, LockError):
            pass
        return False

    def __enter__(self) -> DeployLock:
        self.acquire()
        return self

    def __exit__(self, *exc) -> None:
        self.release()


def break_lock(holder: Holder) -> None:
    """Remove exactly the lock `holder` describes (not one a new deploy took meanwhile)."""
    now = read_holder(holder.path, holder.fabric)
    if now is None:
        raise LockError(f"{holder.path}: the lock is already gone")
    if now.raw != holder.raw:
        raise LockError(f"{holder.path}: the lock changed meanwhile (now {now.describe()}); nothing was broken")
    holder.path.unlink()
