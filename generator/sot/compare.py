"""Desired against actual Nautobot objects: added / changed / unchanged / would-remove, and the
conflicts that stop a push (pure).

Ownership (issue 37 rule 3): an object fabricgen may change or remove carries the fabric's tag;
interfaces are owned through their device (see objects.py). An object on a desired key without
the tag belongs to someone else: a conflict, named, and nothing is written.

Cables are also checked end by end (_cable_ends), because Nautobot refuses a second cable on an
interface (Cable.clean: "already has a cable") and would do so in the middle of a push, after its
devices and addresses were written: a planned cable end held by a cable fabricgen does not own is
a conflict up front, and one held by this fabric's cable that the plan no longer has (the plan
moved the cable to another A end, so its key changed) is replaced: deleted before the new one.
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
    # cable key the plan no longer has -> the planned cable key that needs one of its ends
    replaced: dict[Any, Any] = field(default_factory=dict)
    # the kinds compared: OWNED_KINDS but "bgp" where neither side has routing instances (a server
    # without the nautobot-bgp-models app), so its reports do not grow an empty row
    kinds: tuple[str, ...] = OWNED_KINDS

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


_NOUN = {"context": "config context", "device": "device", "interface": "interface", "prefix": "prefix", "ip": "IP address",
         "bgp": "BGP routing instance", "cable": "cable"}


def _conflict(kind: str, key: Any, fabric_tag: str) -> str:
    return (f"conflict: {_NOUN[kind]} {key_text(kind, key)} exists in Nautobot without the tag {fabric_tag}: "
            f"fabricgen does not change objects it does not own; rename or remove it there, or add the tag "
            f"if it is this fabric's")


def compare(desired: Desired, actual: dict[str, dict[Any, Actual]],
            held: dict[tuple[str, str], str] | None = None) -> Comparison:
    """ACTUAL[kind][key]: what the adapter read for the fabric's location, namespace and tag;
    HELD: (device, interface) -> the id of the cable on it, for every cabled interface of the
    fabric's devices (None: not read, the cable ends are not checked)."""
    kinds = tuple(k for k in OWNED_KINDS if k != "bgp" or "bgp" in desired.objects or actual.get("bgp"))
    out = Comparison(desired.fabric, kinds=kinds)
    conflicted_devices: set[str] = set()
    for kind in kinds:
        want = desired.objects.get(kind, {})
        have = actual.get(kind, {})
        unchanged = 0
        for key in sorted(want, key=_sort_key):
            fields = want[key]
            if (kind == "interface" and key[0] in conflicted_devices) or (kind == "bgp" and key in conflicted_devices):
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
    if held is not None:
        _cable_ends(desired, actual.get("cable", {}), held, out)
    return out


def _cable_ends(desired: Desired, have: dict[Any, Actual], held: dict[tuple[str, str], str], out: Comparison) -> None:
    """Every end of a cable the push will create (added, or moved: replaced on its key) must be
    free by then: free now, or held by a cable the push deletes first (one of ours that moves, or
    one of ours the plan no longer has). Anything else is a conflict named by the cable."""
    want = desired.objects.get("cable", {})
    key_of = {got.id: key for key, got in have.items() if got.id}
    moving = {c.key for c in out.changes if c.kind == "cable" and c.op == CHANGED and {"b_device", "b_port"} & set(c.fields)}
    cabling = [c.key for c in out.changes if c.kind == "cable" and (c.op == ADDED or c.key in moving)]
    reported: set[str] = set()
    for key in cabling:
        f = want[key]
        for end in (key, (f["b_device"], f["b_port"])):
            cable_id = held.get(end)
            other = key_of.get(cable_id) if cable_id else None
            if cable_id is None or other == key or other in moving:
                continue
            planned = f"{key_text('cable', key)} -> {f['b_device']}:{f['b_port']}"
            if other is not None and have[other].tagged and other not in want:
                out.replaced.setdefault(other, key)
                continue
            if cable_id in reported:
                continue
            reported.add(cable_id)
            if other is None:
                what = "a cable whose A end is outside the fabric's location"
            elif not have[other].tagged:
                what = f"cable {key_text('cable', other)} (without the tag {desired.tag})"
            else:                       # one of ours the plan still has on another key: not a consistent plan
                what = f"this fabric's cable {key_text('cable', other)}"
            out.conflicts.append(
                f"conflict: {what} holds {end[0]}:{end[1]}, which the plan cables as {planned}: "
                "fabricgen does not change cables it does not own; remove that cable in Nautobot, or add the tag "
                "if it is this fabric's")


def _sort_key(key: Any) -> tuple:
    from generator.gitops.review import natural

    if isinstance(key, tuple):
        return tuple(natural(str(k)) for k in key)
    return (natural(str(key)),)


__all__ = ["ADDED", "CHANGED", "REMOVE", "UNCHANGED", "Actual", "Change", "Comparison", "compare", "key_text"]
