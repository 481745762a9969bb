"""Files that choose where secrets come from or go (fabricgen.toml, endpoints files) are obeyed
only when nobody but the user (or root) could have written them (issue 34 finding 1).

A file beside an intent in a shared directory may have been planted by another user of the
bastion: the checks are made with fstat on the descriptor that is then read, so the file
cannot be swapped between the check and the read. OpenSSH refuses a ~/.ssh/config writable by
others for the same reason (ssh_config(5), "bad owner or permissions").
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from generator.common.bounded_read import ReadRefused, read_bounded


def trust_problem(st: os.stat_result, path: str | Path) -> str | None:
    """Why a file with stat ST cannot be trusted, with the fix, or None."""
    me = os.geteuid()
    if st.st_uid not in (me, 0):
        return (f"owned by uid {st.st_uid}, not by you (uid {me}) or root, so someone else chose its contents; "
                f"check it, then take it over: cp {path} {path}.mine && mv {path}.mine {path}")
    if st.st_mode & 0o022:
        return (f"mode {stat.S_IMODE(st.st_mode):04o} lets {'group and others' if st.st_mode & 0o022 == 0o022 else 'group' if st.st_mode & 0o020 else 'others'} "
                f"change it; check it, then chmod go-w {path}")
    return None


def read_trusted(path: str | Path, limit: int, *, follow_symlinks: bool = True) -> bytes:
    """read_bounded, refused (ReadRefused kind "trust") when the file is not the user's or root's,
    or group/other-writable."""
    return read_bounded(path, limit, follow_symlinks=follow_symlinks, check=lambda st: trust_problem(st, path))


__all__ = ["ReadRefused", "read_trusted", "trust_problem"]
