"""The lab directory's logs, never written through a link planted there. Whole files go through
generator/common/atomic_write.py (mode 0600): a new file under an unpredictable name, renamed
over the name, so a link at the name is replaced, never followed."""

from __future__ import annotations

import os
from pathlib import Path


def open_log(path: Path):
    """Append to a log that must be a regular file of ours: never through a link."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    return os.fdopen(fd, "ab")
