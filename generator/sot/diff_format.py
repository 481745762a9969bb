"""`fabricgen sot diff` as people read it: the shape of `fabricgen plan` (gitops/plan_format.py),
one line per group of identical changes with the objects' devices as ranges (`x 4 devices
leaf-[1-4]`), as text, JSON or a Markdown pull-request comment. Same input, same bytes."""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Any

from generator.gitops.review import abbreviate
from generator.sot.compare import ADDED, CHANGED, REMOVE, Comparison, key_text
from generator.sot.objects import OWNED_KINDS

_PLURAL = {"context": "config contexts", "device": "devices", "interface": "interfaces", "prefix": "prefixes", "ip": "IP addresses",
           "bgp": "BGP routing instances", "cable": "cables"}
_SINGULAR = {"context": "config context", "device": "device", "interface": "interface", "prefix": "prefix",
             "ip": "IP address", "bgp": "BGP routing instance", "cable": "cable"}
_SIGN = {ADDED: "+", CHANGED: "~", REMOVE: "-"}
NAMES_SHOWN = 12


def _device_of(kind: str, key: Any, fields: dict[str, Any]) -> str:
    """The device an object belongs to, for the `x N devices` ranges."""
    if kind in ("device", "bgp"):
        return str(key)
    if kind in ("interface", "cable"):
        return str(key[0])
    if kind == "ip" and isinstance(fields.get("device"), str):
        return fields["device"]
    return key_text(kind, key)


def _names(names: list[str]) -> str:
    short = abbreviate(names)
    more = f" and {len(short) - NAMES_SHOWN} more" if len(short) > NAMES_SHOWN else ""
    return ", ".join(short[:NAMES_SHOWN]) + more


def _value(value: Any) -> str:
    return json.dumps(value) if not isinstance(value, str) or not value else value


def _groups(result: Comparison) -> list[tuple[str, str, str, list[str], int]]:
    """(kind, op, what changed, the devices, object count) in kind order, adds, changes, removals."""
    groups: dict[tuple[str, str, str], tuple[list[str], list[int]]] = {}
    for c in result.changes:
        if c.op == CHANGED:
            what = "; ".join(f"{name}: {_value(old)} -> {_value(new)}" for name, (old, new) in sorted(c.fields.items()))
            owner = _device_of(c.kind, c.key, {name: new for name, (_, new) in c.fields.items()})
        else:
            what = ""
            owner = _device_of(c.kind, c.key, c.fields)
        entry = groups.setdefault((c.kind, c.op, what), ([], [0]))
        entry[0].append(owner)
        entry[1][0] += 1
    order = {k: i for i, k in enumerate(OWNED_KINDS)}
    ops = {ADDED: 0, CHANGED: 1, REMOVE: 2}
    out = []
    for (kind, op, what), (owners, count) in sorted(groups.items(), key=lambda kv: (order[kv[0][0]], ops[kv[0][1]], kv[0][2])):
        out.append((kind, op, what, sorted(set(owners)), count[0]))
    return out


def counts(result: Comparison) -> dict[str, dict[str, int]]:
    table: dict[str, dict[str, int]] = {}
    by: dict[tuple[str, str], int] = defaultdict(int)
    for c in result.changes:
        by[(c.kind, c.op)] += 1
    for kind in result.kinds:
        table[kind] = {"added": by[(kind, ADDED)], "changed": by[(kind, CHANGED)],
                       "unchanged": result.unchanged.get(kind, 0), "would_remove": by[(kind, REMOVE)]}
    return table


def _group_line(kind: str, op: str, what: str, owners: list[str], count: int) -> str:
    noun = _PLURAL[kind] if count != 1 else _SINGULAR[kind]
    where = f"{len(owners)} device{'s' if len(owners) != 1 else ''} {_names(owners)}"
    if kind in ("device", "prefix", "context"):
        where = _names(owners)
    head = f"{_SIGN[op]} {count} {noun}"
    if what:
        return f"{head}: {what}  x {where}"
    return f"{head}: {where}" if kind in ("device", "prefix", "context") else f"{head} x {where}"


def summary_line(result: Comparison) -> str:
    t = counts(result)
    total = {k: sum(row[k] for row in t.values()) for k in ("added", "changed", "unchanged", "would_remove")}
    return (f"{result.fabric}: {total['added']} to add, {total['changed']} to change, {total['unchanged']} unchanged, "
            f"{total['would_remove']} would be removed")


def replaced_lines(result: Comparison) -> list[str]:
    """The removals a push makes whatever --prune says: this fabric's cables on an end the plan
    now cables from another A end (compare._cable_ends)."""
    return [f"cable {key_text('cable', old)} is replaced by {key_text('cable', new)}: a push deletes it first"
            for old, new in sorted(result.replaced.items(), key=lambda kv: key_text("cable", kv[0]))]


def format_text(result: Comparison) -> str:
    lines = [line for line in result.conflicts] + replaced_lines(result)
    for kind, op, what, owners, count in _groups(result):
        lines.append(_group_line(kind, op, what, owners, count))
    verdict = f" - {len(result.conflicts)} conflict(s)" if result.conflicts else (
        "" if result.has_changes else " - Nautobot matches the plan")
    lines.append(summary_line(result) + verdict)
    return "\n".join(lines) + "\n"


def format_json(result: Comparison) -> str:
    changes = []
    for c in result.changes:
        entry: dict[str, Any] = {"kind": c.kind, "key": key_text(c.kind, c.key), "op": c.op}
        if c.op == CHANGED:
            entry["fields"] = {name: {"old": old, "new": new} for name, (old, new) in sorted(c.fields.items())}
        elif c.op == ADDED:
            entry["fields"] = dict(sorted(c.fields.items()))
        changes.append(entry)
    doc = {"fabric": result.fabric, "counts": counts(result), "conflicts": result.conflicts, "changes": changes}
    if result.replaced:
        doc["replaced"] = {key_text("cable", old): key_text("cable", new) for old, new in sorted(result.replaced.items())}
    return json.dumps(doc, indent=1, sort_keys=False) + "\n"


def format_markdown(result: Comparison) -> str:
    from generator.safe_text import markdown_text

    t = counts(result)
    lines = [f"### fabricgen sot diff: {markdown_text(result.fabric)}", "",
             "| object | added | changed | unchanged | would remove |", "|---|---:|---:|---:|---:|"]
    for kind in result.kinds:
        row = t[kind]
        lines.append(f"| {_PLURAL[kind]} | {row['added']} | {row['changed']} | {row['unchanged']} | {row['would_remove']} |")
    body = result.conflicts + replaced_lines(result) + [_group_line(*g) for g in _groups(result)]
    if body:
        lines += ["", "```"] + [ln.replace("```", "'''") for ln in body] + ["```"]
    return "\n".join(lines) + "\n"


FORMATS = {"table": format_text, "json": format_json, "markdown": format_markdown}

__all__ = ["FORMATS", "counts", "format_json", "format_markdown", "format_text", "summary_line"]
