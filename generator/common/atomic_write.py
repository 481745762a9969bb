"""Replace a file whole or not at all (issue 35: one copy instead of one per writer)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_atomic(path: str | Path, data: str | bytes, *, mode: int = 0o644, fsync: bool = True) -> None:
    """PATH holds DATA whole or keeps what it had. The temporary file is mkstemp's (a new,
    unpredictable name opened O_CREAT|O_EXCL, so a link planted at a guessable name is never
    written through) in PATH's directory, renamed over PATH: a link at PATH itself is replaced,
    not followed. MODE: 0644 by default (node_exporter reads drift's metrics as its own user)."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data.encode("utf-8") if isinstance(data, str) else data)
            fh.flush()
            if fsync:
                os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


__all__ = ["write_atomic"]
