"""Which switches an endpoints file lists: a switch it does not list cannot be reached, and is
`unknown` in drift, `not installed` in verify (verify/installed.py), while the others are still
checked."""

from __future__ import annotations

from pathlib import Path

import yaml


def listed_switches(endpoints: str | None) -> set[str] | None:
    """The switch names of the endpoints file's `switches:` mapping; None: no file, or one that
    cannot be read (credentials.resolve_access then reports the problem in one line)."""
    if endpoints is None:
        return None
    try:
        data = yaml.safe_load(Path(endpoints).read_text()) or {}
    except (OSError, yaml.YAMLError):
        return None
    switches = data.get("switches") if isinstance(data, dict) else None
    return set(switches) if isinstance(switches, dict) else None


def split_listed(names: list[str], endpoints: str | None) -> tuple[list[str], list[str]]:
    """(switches the endpoints file lists, those it does not), each in the order of `names`."""
    listed = listed_switches(endpoints)
    reachable = [n for n in names if listed is None or n in listed]
    return reachable, [n for n in names if n not in reachable]
