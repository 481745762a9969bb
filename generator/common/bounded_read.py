"""Read a file a user or a manifest names without letting it hang or exhaust the process.

open(2) with O_NONBLOCK returns at once on a FIFO that has no writer (a plain open waits for
one forever); fstat on the opened descriptor (not the path, which may be swapped between the
two calls) says whether it is a regular file and how large, so a 3 GB sparse file or /dev/zero
is refused by its size or type before a byte is read; O_NOFOLLOW refuses a symbolic link at
the last component where a link would let someone else choose what is read.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable
from pathlib import Path

from generator.common.errors import FabricgenError


class ReadRefused(FabricgenError, OSError):
    """Why a file was not read, as one line without the path (callers say where). KIND: "type",
    "size", "link", "read", "trust" or "text"; SIZE: the size found when KIND is "size"; REASON:
    the system's words (strerror) when KIND is "read", for callers that phrase their own line."""

    def __init__(self, message: str, kind: str = "read", size: int | None = None, mode: int | None = None,
                 reason: str | None = None):
        super().__init__(message)
        self.message, self.kind, self.size, self.mode, self.reason = message, kind, size, mode, reason

    def __str__(self) -> str:
        return self.message


def read_bounded(path: str | Path, limit: int, *, follow_symlinks: bool = True, dir_fd: int | None = None,
                 check: Callable[[os.stat_result], str | None] | None = None) -> bytes:
    """The bytes of the regular file PATH, at most LIMIT of them, or ReadRefused. CHECK, given
    the opened file's fstat, may refuse it (kind "trust") by returning why.

    A missing file is FileNotFoundError (callers often treat it apart)."""
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | (0 if follow_symlinks else os.O_NOFOLLOW)
    try:
        fd = os.open(path, flags, dir_fd=dir_fd)
    except FileNotFoundError:
        raise
    except OSError as exc:
        if not follow_symlinks and exc.errno == errno.ELOOP:     # O_NOFOLLOW met a symbolic link
            raise ReadRefused("a symbolic link, not a file: give the file itself", "link") from None
        raise ReadRefused(f"cannot read: {exc.strerror or exc}", reason=exc.strerror or str(exc)) from None
    try:
        st = os.fstat(fd)           # before fdopen, which refuses a directory with its own error
        if not stat.S_ISREG(st.st_mode):
            raise ReadRefused("not a regular file (a FIFO, device or directory): give a file", "type",
                              mode=st.st_mode)
        problem = check(st) if check is not None else None
        if problem:
            raise ReadRefused(problem, "trust")
        if st.st_size > limit:
            raise ReadRefused(f"{st.st_size} bytes, more than the {limit}-byte limit", "size", st.st_size)
        os.set_blocking(fd, True)
        with os.fdopen(fd, "rb", closefd=False) as fh:
            data = fh.read(limit + 1)          # a file that grew since fstat is still cut at the limit
    finally:
        os.close(fd)
    if len(data) > limit:
        raise ReadRefused(f"more than the {limit}-byte limit", "size", len(data))
    return data


def read_bounded_text(path: str | Path, limit: int, **kwargs) -> str:
    """read_bounded, decoded as UTF-8 with universal newlines (as Path.read_text gives)."""
    data = read_bounded(path, limit, **kwargs)
    try:
        return data.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")
    except UnicodeDecodeError as exc:
        raise ReadRefused(f"not UTF-8 text ({exc.reason} at byte {exc.start})", "text") from None


__all__ = ["ReadRefused", "read_bounded", "read_bounded_text"]
