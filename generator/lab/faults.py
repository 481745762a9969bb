"""Per-device fault injection, re-read from DIR/faults/<name>.json at every use.

Keys (all optional):
  refuse_auth: bool           every password is rejected
  drop_after_commands: int    the connection is cut when command N+1 arrives
  apply_error: str | bool     `nv config apply` / `config replace` fail with this message
  delay: float                seconds of sleep before each command's output

Tests flip faults mid-run by rewriting the file (control.set_faults does it atomically).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

KNOWN_KEYS = {"refuse_auth", "drop_after_commands", "apply_error", "delay"}


@dataclass(frozen=True)
class Faults:
    refuse_auth: bool = False
    drop_after_commands: int | None = None
    apply_error: str | None = None
    delay: float = 0.0

    @classmethod
    def from_dict(cls, data: dict) -> Faults:
        unknown = set(data) - KNOWN_KEYS
        if unknown:
            raise ValueError(f"unknown fault keys {sorted(unknown)}; known: {sorted(KNOWN_KEYS)}")
        apply_error = data.get("apply_error")
        if apply_error is True:
            apply_error = "Config apply failed (injected fault)"
        drop = data.get("drop_after_commands")
        return cls(
            refuse_auth=bool(data.get("refuse_auth", False)),
            drop_after_commands=None if drop is None else int(drop),
            apply_error=str(apply_error) if apply_error else None,
            delay=float(data.get("delay", 0.0) or 0.0),
        )


def fault_file(directory: Path, device: str) -> Path:
    return Path(directory) / "faults" / f"{device}.json"


def write_faults(directory: Path, device: str, faults: dict) -> None:
    Faults.from_dict(faults)  # refuse typos before a test silently runs without its fault
    path = fault_file(directory, device)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(faults))
    os.replace(tmp, path)


class FaultSource:
    """Cached reader: only re-parses the file when its mtime or size changes."""

    def __init__(self, path: Path):
        self.path = path
        self._stamp: tuple[int, int] | None = None
        self._faults = Faults()

    def current(self) -> Faults:
        try:
            st = self.path.stat()
        except FileNotFoundError:
            self._stamp, self._faults = None, Faults()
            return self._faults
        stamp = (st.st_mtime_ns, st.st_size)
        if stamp != self._stamp:
            try:
                self._faults = Faults.from_dict(json.loads(self.path.read_text() or "{}"))
                self._stamp = stamp
            except (ValueError, OSError):
                pass  # a half-written file: keep the previous faults until the next read
        return self._faults
