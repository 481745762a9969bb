"""Write an acceptance output into DIR without ever deleting or overwriting a user's file.

DIR may be new, empty, or an earlier acceptance output (its expected.json carries our
schema). Anything else is refused before a byte is written. In an earlier output only our
own files are replaced; the operator's logs/ stays. A file the previous output wrote and
this one no longer does (a rail group that went away) is removed only while it still has
the bytes we wrote (sha256 in expected.json), so an edited copy survives.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from generator.acceptance.expected import EXPECTED_FILE, SCHEMA
from generator.common.atomic_write import write_atomic
from generator.common.errors import FabricgenError

EXPECTED = EXPECTED_FILE
EXECUTABLE = (".sh", ".sbatch")


class OutputRefused(FabricgenError):
    """One line: why DIR cannot take the output."""


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def previous_files(out: Path) -> dict[str, str] | None:
    """path -> sha256 written by an earlier acceptance output in `out`, {} when `out` is new
    or empty; raises OutputRefused when `out` holds anything else."""
    if not out.exists():
        return {}
    if not out.is_dir():
        raise OutputRefused(f"{out} is a file, not a directory: give a new or empty directory to -o")
    if not any(out.iterdir()):
        return {}
    marker = out / EXPECTED
    try:
        doc = json.loads(marker.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        doc = None
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
        raise OutputRefused(f"{out} is not empty and is not an earlier fabricgen acceptance output "
                            f"(no {EXPECTED} with schema {SCHEMA}): give a new or empty directory to -o; "
                            "nothing written")
    files = doc.get("files")
    return {str(k): str(v) for k, v in files.items()} if isinstance(files, dict) else {}


def write_output(files: dict[str, str], out_dir: str | Path) -> Path:
    """Write every file atomically (temporary sibling + rename); expected.json last, so an
    interrupted write never leaves a marker that claims files it did not write."""
    out = Path(out_dir)
    old = previous_files(out)
    out.mkdir(parents=True, exist_ok=True)
    order = sorted(rel for rel in files if rel != EXPECTED) + [EXPECTED]
    for rel in order:
        write_atomic(out / rel, files[rel], mode=0o755 if rel.endswith(EXECUTABLE) else 0o644)
    for rel, digest in sorted(old.items()):
        if rel in files or rel != Path(rel).name or rel.startswith("."):
            continue        # ours are plain names in DIR: never follow a path out of it
        stale = out / rel
        if stale.is_file() and _digest(stale) == digest:
            stale.unlink()
    return out


def _digest(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


