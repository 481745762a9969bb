"""Which devices a command acts on: `--only switches|hosts` and `--limit GLOB` (shell-style,
matched case-sensitively against the device's name), the same for deploy, drift and verify."""

from __future__ import annotations

import fnmatch


def matching(names, limit: str | None) -> list[str]:
    """NAMES that --limit LIMIT keeps (all of them without one), in their order."""
    return [name for name in names if not limit or fnmatch.fnmatchcase(name, limit)]


def limited(plan, only: str | None, limit: str | None) -> tuple[list[str], list[str]]:
    """(switch names, host names) that --only and --limit leave to act on."""
    return (matching((sw.name for sw in plan.switches), limit) if only in (None, "switches") else [],
            matching((h.name for h in plan.hosts), limit) if only in (None, "hosts") else [])


def no_match(plan, only: str | None, limit: str | None, switches: list[str], hosts: list[str]) -> str | None:
    """The error when --limit leaves nothing to act on, else None."""
    if limit and not switches and not hosts:
        return f"error: --limit {limit!r} matches no {only or 'device'} of fabric {plan.fabric}"
    return None


__all__ = ["limited", "matching", "no_match"]
