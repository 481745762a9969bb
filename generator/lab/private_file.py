"""Write a file of the lab directory without ever following a link planted there: the text goes
to a new file (O_CREAT|O_EXCL|O_NOFOLLOW, mode 0600) in the same directory, which then replaces
the name in one rename. A link at the name is replaced itself; its target is never opened,
truncated or chmod'ed."""

from __future__ import annotations

import os
import secrets
from pathlib import Path


def write_private(path: Path, text: str, mode: int = 0o600) -> None:
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            os.fchmod(fh.fileno(), mode)          # the umask may have taken bits the caller wants
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def open_log(path: Path):
    """Append to a log that must be a regular file of ours: never through a link."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    return os.fdopen(fd, "ab")
