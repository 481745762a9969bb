"""Temporary trees of renders: claimed while a render lives, removed once it is gone.

A render fills `.<OUTPUT>.tmp-XXXXXXXX` beside OUTPUT and swaps it in through
`.<OUTPUT>.old-XXXXXXXX` (output.py). A render killed in between (SIGKILL, OOM killer, a lost
node) leaves that tree behind - the size of a whole render, 100+ MB at scale - and nothing
else would ever remove it. So each render claims its trees with a marker file inside, holding
an exclusive flock(2) on it for its lifetime, and removes the trees of earlier renders into the
same OUTPUT that it can prove are leftovers:
- the name is one mkdtemp made for this OUTPUT (prefix + 8 characters of its alphabet);
- it is a directory (not a link) of this user, holding the marker as a regular file;
- the marker's flock can be taken: flock locks belong to the open file and are released when
  the last descriptor closes, i.e. when the render and its forked workers are all gone
  (flock(2)); a live render holds it, so its tree is never touched.
A `.old-` tree is removed only while OUTPUT exists: without OUTPUT it may hold the only copy of
the previous render (a render killed between its two renames).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import re
import shutil
import stat
from pathlib import Path

MARKER = ".fabricgen-render-tree"
TMP, OLD = "tmp", "old"
# tempfile's names: prefix + 8 of "abcdefghijklmnopqrstuvwxyz0123456789_" (tempfile._RandomNameSequence)
_SUFFIX = r"-[a-z0-9_]{8}\Z"


def prefix(out: Path, kind: str) -> str:
    """mkdtemp's prefix for OUTPUT's KIND of tree (TMP or OLD)."""
    return f".{out.name}.{kind}-"


def claim(tree: Path) -> int | None:
    """Mark TREE as this render's and lock the marker; the descriptor holds the lock until it is
    closed (or the process and its forked workers die). The marker is locked under another name
    and renamed into place, so no other render ever sees it unlocked while this one lives. None
    on a file system without flock (some FUSE ones): then TREE gets no marker, since an unlocked
    one would let another render take a live tree for a leftover."""
    pending = tree / f"{MARKER}.new"
    fd = os.open(pending, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)        # a new file: nobody else holds it
    except OSError as exc:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(pending)
        if exc.errno not in (errno.ENOLCK, errno.EOPNOTSUPP, errno.EINVAL):
            raise
        return None
    try:
        os.write(fd, f"fabricgen render in progress, pid {os.getpid()}\n".encode())
        os.rename(pending, tree / MARKER)
    except BaseException:
        os.close(fd)
        raise
    return fd


def unmark(tree: Path) -> None:
    """Drop TREE's marker (its lock stays with the open descriptor): before TREE becomes OUTPUT,
    and on a tree kept on purpose (the previous output after a failed swap)."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(tree / MARKER)


def remove_stale(out: Path) -> list[Path]:
    """Remove the leftover trees of earlier renders into OUT (the module's rules); the removed
    paths. Anything unreadable or unprovable is left alone: this never fails a render."""
    parent = out.parent
    names = re.compile(re.escape(f".{out.name}.") + f"({TMP}|{OLD})" + _SUFFIX)
    removed = []
    try:
        entries = sorted(os.scandir(parent), key=lambda e: e.name)
    except OSError:
        return removed
    for entry in entries:
        m = names.match(entry.name)
        if not m or (m.group(1) == OLD and not out.is_dir()):
            continue
        tree = Path(entry.path)
        with contextlib.suppress(OSError):
            if _remove_if_leftover(tree):
                removed.append(tree)
    return removed


def _remove_if_leftover(tree: Path) -> bool:
    dfd = os.open(tree, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)    # a link: ELOOP
    try:
        if os.fstat(dfd).st_uid != os.geteuid():
            return False
        fd = os.open(MARKER, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dfd)
    except OSError:
        return False                            # no marker (or a link): not provably ours
    finally:
        os.close(dfd)
    try:
        mst = os.fstat(fd)
        if not stat.S_ISREG(mst.st_mode) or mst.st_uid != os.geteuid():
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False                        # a live render (or its workers) holds it
        # held while removing: a concurrent render finds it locked and leaves it to us
        shutil.rmtree(tree)                     # fd-based on Linux: never follows a link out of TREE
        return True
    finally:
        os.close(fd)
