"""Desired against actual Nautobot objects: added / changed / unchanged / would-remove, and the
conflicts that stop a push (pure).

Ownership (issue 37 rule 3): an object fabricgen may change or remove carries the fabric's tag;
interfaces are owned through their device (see objects.py). An object on a desired key without
the tag belongs to someone else: a conflict, named, and nothing is written.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from generator.sot.objects import OWNED_KINDS, Desired

ADDED, CHANGED, UNCHANGED, REMOVE = "added", "changed", "unchanged", "would-remove"


@dataclass(frozen=True, slots=True)
class Actual:
    """One object as Nautobot holds it: FIELDS in the shape objects.py gives desired ones,
    TAGGED when it carries the fabric's tag (for an interface: its device does), ID Nautobot's."""

    fields: dict[str, Any]
    tagged: bool
    id: str = ""


@dataclass(frozen=True, slots=True)
class Change:
    kind: str
    key: Any
    op: str
    # field -> (old, new) for a change; the new fields for an addition; {} otherwise
    fields: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class Comparison:
    fabric: str
    changes: list[Change] = field(default_factory=list)
    unchanged: dict[str, int] = field(default_factory=dict)
    conflicts: list[str] = field(default_factory=list)

    def of(self, kind: str, op: str) -> list[Change]:
        return [c for c in self.changes if c.kind == kind and c.op == op]

    @property
    def writes_needed(self) -> bool:
        return any(c.op in (ADDED, CHANGED) for c in self.changes)

    @property
    def has_changes(self) -> bool:
        return bool(self.changes)


def key_text(kind: str, key: Any) -> str:
    """An object as a person names it: leaf-1, leaf-1:swp1, 10.0.0.1/32."""
    if kind in ("interface", "cable"):
        return f"{key[0]}:{key[1]}"
    return str(key)


_NOUN = {"context": "config context", "device": "device", "interface": "interface", "prefix": "prefix", "ip": "IP address", "cable": "cable"}


def _conflict(kind: str, key: Any, fabric_tag: str) -> str:
    return (f"conflict: {_NOUN[kind]} {key_text(kind, key)} exists in Nautobot without the tag {fabric_tag}: "
            f"fabricgen does not change objects it does not own; rename or remove it there, or add the tag "
            f"if it is this fabric's")


def compare(desired: Desired, actual: dict[str, dict[Any, Actual]]) -> Comparison:
    """ACTUAL[kind][key]: what the adapter read for the fabric's location, namespace and tag."""
    out = Comparison(desired.fabric)
    conflicted_devices: set[str] = set()
    for kind in OWNED_KINDS:
        want = desired.objects.get(kind, {})
        have = actual.get(kind, {})
        unchanged = 0
        for key in sorted(want, key=_sort_key):
            fields = want[key]
            if kind == "interface" and key[0] in conflicted_devices:
                continue
            got = have.get(key)
            if got is None:
                out.changes.append(Change(kind, key, ADDED, dict(fields)))
                continue
            if not got.tagged:
                out.conflicts.append(_conflict(kind, key, desired.tag))
                if kind == "device":
                    conflicted_devices.add(key)
                continue
            diff = {name: (got.fields.get(name), value) for name, value in fields.items()
                    if got.fields.get(name) != value}
            if diff:
                out.changes.append(Change(kind, key, CHANGED, diff))
            else:
                unchanged += 1
        for key in sorted(have, key=_sort_key):
            if key not in want and have[key].tagged:
                out.changes.append(Change(kind, key, REMOVE))
        out.unchanged[kind] = unchanged
    return out


def _sort_key(key: Any) -> tuple:
    from generator.gitops.review import natural

    if isinstance(key, tuple):
        return tuple(natural(str(k)) for k in key)
    return (natural(str(key)),)


__all__ = ["ADDED", "CHANGED", "REMOVE", "UNCHANGED", "Actual", "Change", "Comparison", "compare", "key_text"]
