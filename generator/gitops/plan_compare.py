"""What a change to the intent does to each device: two renders compared, and the cables it moves.

Both sides are rendered files (path -> text, as make_plan reads them) compared per device:
switches/<name>/ and hosts/<name>/ are devices; the fabric-wide files (plan.json, cabling.csv,
inventory.yml) are the pseudo-device `fabric`, counted like a device so a cabling-only change still
exits 3. manifest.json is left out: it records the intent's hash and changes on every commit, even
a comment edit. Values in the diffs are typed as the rendered file writes them (structured_diff
typed=True); secrets in them are shown as hashes (secrets_redact).

Cable accounting (what the change means on the floor) compares the old and new cabling.csv.
A cable is its two ends, (device, port) each, in either order. Every old cable is exactly one of

- kept: its two ends are still cabled to each other in the new cabling;
- moved: not kept, but at least one of its ends is still cabled in the new cabling, so somebody
  re-plugs that end (its far side changes, or it is freed while the other end is re-used);
- removed: not kept, and neither end is cabled in the new cabling;

so kept + moved + removed = old cables. A new cable is *added* when it is not kept and none of
its ends was cabled before; a new cable that takes an end of a moved cable is where that cable
moved to and is not counted again. An unchanged cabling.csv that `--against DIR` left out of both
sides (same sha256 as the old manifest) counts every cable as kept; no old cabling.csv at all
(first render, a ref without the intent) counts every cable as added. JSON carries the counts in
summary.cables and the moved/removed cables in `cables`, at most CABLE_LIST_LIMIT of each.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field
from typing import Any

from generator.common.errors import FabricgenError
from generator.common.structured_diff import diff_file
from generator.gitops.plan_bom import BomChange
from generator.gitops.review import PLAN_JSON, Group, Risk, group_devices, risk_of
from generator.secrets_redact import redact_change, redact_text

FABRIC = "fabric"
SKIPPED_FILES = {"manifest.json"}
CABLING = "cabling.csv"
CABLE_ENDS = ("a_device", "a_port", "b_device", "b_port")
# A 98k-GPU change can move 100k cables: JSON lists this many of each kind (the counts stay exact)
CABLE_LIST_LIMIT = 1000


class PlanError(FabricgenError):
    """A one-line reason the plan could not be made."""


@dataclass
class DevicePlan:
    name: str
    status: str                                           # added | removed | changed
    files: dict[str, dict[str, Any]] = field(default_factory=dict)
    # an added or removed device: each file's lines (its whole text is new or gone; a key count
    # or "changes" would read as edits)
    lines: dict[str, int] = field(default_factory=dict)

    @property
    def line_count(self) -> int:
        return sum(self.lines.values())

    @property
    def change_count(self) -> int:
        n = 0
        for f in self.files.values():
            if "changes" in f:
                n += len(f["changes"])
            else:
                n += sum(1 for ln in f["unified"].splitlines()
                         if ln[:1] in "+-" and not ln.startswith(("+++", "---")))
        return n


End = tuple[str, str]                                     # (device, port)


@dataclass
class MovedCable:
    a: End
    b: End
    now: tuple[End | None, End | None]                    # far side of a and of b now; None: free


@dataclass
class CableChanges:
    kept: int = 0
    added: int = 0
    moved: list[MovedCable] = field(default_factory=list)
    removed: list[tuple[End, End]] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        return {"kept": self.kept, "added": self.added, "moved": len(self.moved), "removed": len(self.removed)}

    @property
    def floor_work(self) -> bool:
        return bool(self.moved or self.removed)

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "moved": [{"a": _end_json(m.a), "b": _end_json(m.b), "now": [_end_json(e) for e in m.now]}
                      for m in self.moved[:CABLE_LIST_LIMIT]],
            "removed": [{"a": _end_json(a), "b": _end_json(b)} for a, b in self.removed[:CABLE_LIST_LIMIT]]}
        cut = {kind: len(items) - CABLE_LIST_LIMIT for kind, items in (("moved", self.moved), ("removed", self.removed))
               if len(items) > CABLE_LIST_LIMIT}
        if cut:
            out["truncated"] = cut
        return out


def _end_json(end: End | None) -> dict[str, str] | None:
    return None if end is None else {"device": end[0], "port": end[1]}


@dataclass
class PlanResult:
    fabric: str
    against: str
    devices: dict[str, DevicePlan]
    unchanged: int
    findings: list = field(default_factory=list)
    cables: CableChanges = field(default_factory=CableChanges)
    risk: Risk = field(default_factory=Risk)
    bom: BomChange | None = None        # make_plan's (it compiles both sides); compare_renders has no plans

    def groups(self) -> list[Group]:
        return group_devices(self.devices, FABRIC)

    def summary(self) -> dict[str, int]:
        counts = {"added": 0, "removed": 0, "changed": 0, "unchanged": self.unchanged}
        for d in self.devices.values():
            counts[d.status] += 1
        return counts

    def as_json(self) -> dict[str, Any]:
        # risk and groups were added after summary/cables/devices: readers of those keep working
        # bom and a group's lines (added/removed) came later still
        return {"summary": {**self.summary(), "cables": self.cables.counts()},
                "risk": self.risk.as_json(),
                "bom": self.bom.as_json() if self.bom is not None else None,
                "cables": self.cables.as_json(),
                "groups": [{"status": g.status, "changes": g.change_count, "devices": g.devices,
                            **({"lines": g.sample.line_count} if g.status != "changed" else {})}
                           for g in self.groups()],
                "devices": {name: {"status": d.status, "diff": d.files} for name, d in self.devices.items()}}


def device_of(relpath: str) -> tuple[str, str]:
    """(device name, path inside the device directory)."""
    parts = relpath.split("/", 2)
    if len(parts) == 3 and parts[0] in ("switches", "hosts"):
        return parts[1], parts[2]
    return FABRIC, relpath


def _group(files: dict[str, str]) -> dict[str, dict[str, str]]:
    out: dict[str, dict[str, str]] = {}
    for rel, text in files.items():
        if rel in SKIPPED_FILES:
            continue
        name, inner = device_of(rel)
        out.setdefault(name, {})[rel] = text
    return out


def compare_renders(old: dict[str, str], new: dict[str, str], *, fabric: str = "",
                    against: str = "", same_cabling: str | None = None) -> PlanResult:
    """SAME_CABLING: the new cabling.csv when it was left out of both sides as unchanged."""
    cables = cable_changes(old.get(CABLING), new.get(CABLING), unchanged=same_cabling,
                           old_label=f"{CABLING} of {against or 'the old render'}")
    old_dev, new_dev = _group(old), _group(new)
    devices: dict[str, DevicePlan] = {}
    unchanged = 0
    # fabric first, then switches and hosts in the order a person scans a list
    for name in sorted(set(old_dev) | set(new_dev), key=lambda n: (n != FABRIC, n)):
        before, after = old_dev.get(name), new_dev.get(name)
        status = "added" if before is None else "removed" if after is None else "changed"
        before, after = before or {}, after or {}
        files = {}
        for rel in sorted(set(before) | set(after)):
            d = diff_file(rel, before.get(rel), after.get(rel), typed=True)
            if d is not None:
                files[device_of(rel)[1]] = _redacted(rel, d)
        whole = after if status == "added" else before if status == "removed" else {}
        lines = {device_of(rel)[1]: _line_count(text) for rel, text in whole.items()}
        if files:
            devices[name] = DevicePlan(name, status, files, lines)
        else:
            unchanged += 1
    risk = risk_of(old.get(PLAN_JSON), new.get(PLAN_JSON), devices, cables)
    return PlanResult(fabric, against, devices, unchanged, cables=cables, risk=risk)


def _line_count(text: str) -> int:
    return text.count("\n") + (1 if text and not text.endswith("\n") else 0)


def _os_of(relpath: str) -> str | None:
    if relpath.startswith("switches/"):
        return "cumulus" if relpath.endswith("startup.yaml") else "sonic" if relpath.endswith(".json") else None
    return None


def _redacted(relpath: str, diff: dict[str, Any]) -> dict[str, Any]:
    """Secrets (hashed passwords, keys: generator/secrets_redact.py) as hashes, never in full."""
    os_name = _os_of(relpath)
    if "unified" in diff:
        return {**diff, "unified": redact_text(os_name, diff["unified"])}
    changes = []
    for change in diff["changes"]:
        new = dict(change)
        for side in ("old", "new"):
            if side in change:
                new["path"], new[side] = redact_change(os_name, change["path"], change[side])
        changes.append(new)
    return {**diff, "changes": changes}


# --- cables ---------------------------------------------------------------
def _cell(value: str) -> str:
    """A value from a file for a one-line error: quoted, control characters escaped, bounded."""
    return repr(value if len(value) <= 60 else value[:60] + "...")


def parse_cabling(text: str, label: str) -> dict[frozenset[End], tuple[End, End]]:
    """cable (its two ends, unordered) -> its ends in file order. The old side may come from a
    directory anybody could edit: every fault is a one-line PlanError naming LABEL and the line."""
    reader = csv.reader(io.StringIO(text, newline=""))
    line = 1                    # where the record being read starts: a quoted field may span lines
    try:
        header = next(reader, None)
        where = _end_columns(header, label)
        cables: dict[frozenset[End], tuple[End, End]] = {}
        used: dict[End, int] = {}
        line = reader.line_num + 1
        for row in reader:
            if row:
                a, b = _row_ends(row, header, where, f"{label}: line {line}")
                _claim(used, (a, b), line, label)
                cables[frozenset((a, b))] = (a, b)
            line = reader.line_num + 1
    except csv.Error as exc:
        raise PlanError(f"{label}: line {line}: not CSV ({exc})") from None
    return cables


def _end_columns(header: list[str] | None, label: str) -> list[int]:
    if header is None:
        raise PlanError(f"{label}: empty file; the header is {','.join(CABLE_ENDS)},...")
    missing = [c for c in CABLE_ENDS if c not in header]
    if missing:
        raise PlanError(f"{label}: line 1: missing column(s) {', '.join(missing)}")
    return [header.index(c) for c in CABLE_ENDS]


def _claim(used: dict[End, int], ends: tuple[End, End], line: int, label: str) -> None:
    # a port with two cables has no single far side: the accounting would be a guess
    for end in ends:
        if end in used:
            raise PlanError(f"{label}: line {line}: {_cell(':'.join(end))} already has a cable "
                            f"(line {used[end]}); a port takes one cable")
        used[end] = line


def _row_ends(row: list[str], header: list[str], where: list[int], at: str) -> tuple[End, End]:
    if len(row) != len(header):
        raise PlanError(f"{at}: {len(row)} field(s) where the header has {len(header)}")
    values = [row[i] for i in where]
    for column, value in zip(CABLE_ENDS, values, strict=True):
        # printable only: a newline or escape from the file must not reach a terminal or a PR comment
        if not value or not value.isprintable():
            raise PlanError(f"{at}: {column} is empty or not printable: {_cell(value)}")
    a, b = (values[0], values[1]), (values[2], values[3])
    if a == b:
        raise PlanError(f"{at}: {_cell(':'.join(a))} is cabled to itself")
    return a, b


def _far_sides(cables: dict[frozenset[End], tuple[End, End]]) -> dict[End, End]:
    far = {}
    for a, b in cables.values():
        far[a], far[b] = b, a
    return far


def cable_changes(old: str | None, new: str | None, *, unchanged: str | None = None,
                  old_label: str = f"old {CABLING}", new_label: str = f"new {CABLING}") -> CableChanges:
    """Kept/added/moved/removed cables (definitions: the module docstring) between two cabling.csv
    texts; None is a side without the file. UNCHANGED: the text when both sides left it out as
    unchanged, so all of its cables are kept."""
    if old is None and new is None:
        return CableChanges(kept=len(parse_cabling(unchanged, new_label))) if unchanged is not None else CableChanges()
    before = parse_cabling(old, old_label) if old is not None else {}
    after = parse_cabling(new, new_label) if new is not None else {}
    far_before, far_after = _far_sides(before), _far_sides(after)
    result = CableChanges()
    for key, (a, b) in before.items():
        if key in after:
            result.kept += 1
        elif a in far_after or b in far_after:
            # an end still in use: one re-plug on the floor, not a removal plus an addition
            result.moved.append(MovedCable(a, b, (far_after.get(a), far_after.get(b))))
        else:
            result.removed.append((a, b))
    # a new cable on an end that was cabled before is the far side of a moved cable, counted there
    result.added = sum(1 for key, (a, b) in after.items()
                       if key not in before and a not in far_before and b not in far_before)
    return result
