"""`fabricgen plan`: what a change to the intent does to each device.

Both sides are rendered in memory (never written) and compared per device:
switches/<name>/ and hosts/<name>/ are devices; the fabric-wide files (plan.json,
cabling.csv, inventory.yml) are the pseudo-device `fabric`, counted like a device
so a cabling-only change still exits 3. manifest.json is left out: it records the
intent's hash and changes on every commit, even a comment edit.

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

What the change orders is plan_bom.py's (both sides' compiled plans, the BOM `capacity` prints).
Values in the diffs are typed as the rendered file writes them (structured_diff typed=True).
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from generator.cli_config import CONFIG_NAME
from generator.common.errors import FabricgenError
from generator.common.structured_diff import diff_file, dump_typed, reads_as_string
from generator.gitops.gitref import GitRefError, config_change, show_at_ref
from generator.gitops.plan_bom import BomChange, bom_change, bom_markdown, bom_text_lines
from generator.gitops.review import (
    PLAN_JSON,
    RISK_LABELS,
    Group,
    Risk,
    abbreviate,
    families,
    group_devices,
    risk_of,
)
from generator.safe_text import markdown_text
from generator.secrets_redact import redact_change, redact_text

if TYPE_CHECKING:
    from generator.plan.model import FabricPlan

FABRIC = "fabric"
SKIPPED_FILES = {"manifest.json"}
# One rendered file of --against DIR: the largest is a 98k-GPU fabric's cabling.csv, ~15 MB
MAX_RENDERED_FILE_BYTES = 256 * 1024 * 1024
FORMATS = ("text", "markdown", "json")
# a GitHub comment holds 65,536 characters; keep room for the header and the cut notice
MARKDOWN_LIMIT = 60_000
COLLAPSE_LINES = 15
CABLING = "cabling.csv"
CABLE_ENDS = ("a_device", "a_port", "b_device", "b_port")
# A 98k-GPU change can move 100k cables: JSON lists this many of each kind (the counts stay
# exact), text this many lines; the PR comment keeps its cable table within its own budget so
# the device diffs still fit MARKDOWN_LIMIT.
CABLE_LIST_LIMIT = 1000
CABLE_TEXT_LINES = 200
CABLE_MARKDOWN_BUDGET = 12_000
# the markdown footer naming the groups left out for size
FOOTER_CHARS = 1_600
# diff lines the text format prints before it summarises each group (--full prints all)
TEXT_FULL_LINES = 400
# device names listed per risk item in markdown, and validation findings, before "... more"
RISK_NAMES_CHARS = 1_500
FINDINGS_SHOWN = 20


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


# --- the two sides --------------------------------------------------------
def _render_loaded(loaded, what: str) -> tuple[FabricPlan, dict[str, str], list]:
    from generator.checks.runner import run_checks
    from generator.render.output import render_files

    result = run_checks(loaded)
    if result.errors or result.plan is None:
        first = result.errors[0].one_line() if result.errors else "did not compile"
        raise PlanError(f"{what} has {len(result.errors)} error(s), first: {first}")
    return result.plan, render_files(result.plan, loaded.text), result.findings


def _render_text(text: str, label: str) -> tuple[dict[str, str], FabricPlan]:
    from generator.intent.loader import IntentError, LoadedIntent, parse_yaml, validate_data

    try:
        data, lines = parse_yaml(text, label)
        intent = validate_data(data, lines, label)
    except IntentError as exc:
        raise PlanError(f"the intent at {label} is invalid ({exc.problems[0]}); "
                        "compare against a rendered directory instead") from None
    loaded = LoadedIntent(intent=intent, file=label, lines=lines, text=text)
    plan, files, _ = _render_loaded(loaded, f"the intent at {label}")
    return files, plan


def _render_manifest(directory: Path) -> dict:
    from generator.render.output import MANIFEST, read_manifest

    manifest = read_manifest(directory)
    if manifest is None:
        raise PlanError(f"--against {directory}: not a `fabricgen render` output (no fabricgen {MANIFEST}); "
                        "give a rendered directory or a git ref")
    return manifest


def read_tree(directory: Path, skip: dict[str, str] | None = None) -> dict[str, str]:
    """The files of an earlier `fabricgen render` output: only a directory whose manifest.json
    render_files wrote, and only the files that manifest lists (no links), so --against can never
    print a file that is not a render's. SKIP: path -> sha256 of files not to read when the
    manifest records that same hash (they are unchanged)."""
    from generator.common.bounded_read import ReadRefused, read_bounded

    manifest = _render_manifest(directory)
    skip = skip or {}
    files = {}
    listed = manifest["files"]
    for rel in sorted(listed):
        if skip.get(rel) == listed[rel]:
            continue
        path = directory / rel
        try:
            if any((directory / Path(*Path(rel).parts[:i])).is_symlink() for i in range(1, len(Path(rel).parts))):
                raise OSError(f"{rel} lies under a link")
            # a FIFO planted at a listed path hung forever, a 3 GB sparse file was read whole
            # (issue 34 finding 8): both refused from fstat, before a byte is read
            files[rel] = read_bounded(path, MAX_RENDERED_FILE_BYTES, follow_symlinks=False).decode("utf-8")
        except FileNotFoundError:
            continue                # deleted since: the device reads as removed, as before
        except ReadRefused as exc:
            raise PlanError(f"--against {directory}: cannot read {rel}: {exc.message}") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise PlanError(f"--against {directory}: cannot read {rel}: {exc}") from None
    if not files and not skip:
        raise PlanError(f"--against {directory}: the render's files are missing; give a `fabricgen render` output")
    return files


def _against_render(directory: Path, new_files: dict[str, str]) -> tuple[dict[str, str], dict[str, str], int]:
    """Both sides without the files the old manifest records with the new file's sha256, and the
    number of devices left out that way (every file the same): a 98k-GPU render is read and diffed
    only where it changed (issue 14)."""
    import hashlib
    import stat

    from generator.render.output import MANIFEST

    listed = _render_manifest(directory)["files"]
    try:
        written_ns = os.lstat(directory / MANIFEST).st_mtime_ns
    except OSError:
        written_ns = -1
    same = {}
    for rel, text in new_files.items():
        digest = listed.get(rel)
        data = text.encode()
        if digest is None or rel == MANIFEST or hashlib.sha256(data).hexdigest() != digest:
            continue
        # Trust the manifest only for a plain file of the recorded size that is still read-only and
        # no newer than the manifest (render writes it last): a link planted in its place is read
        # (and refused) by read_tree, and a hand edit (chmod +w first, render's files are 0444) shows.
        try:
            st = os.lstat(directory / rel)
        except OSError:
            continue
        if (stat.S_ISREG(st.st_mode) and st.st_size == len(data) and not st.st_mode & 0o222
                and st.st_mtime_ns <= written_ns):
            same[rel] = digest
    old_files = read_tree(directory, skip=same)
    if not old_files and not same:
        raise PlanError(f"--against {directory}: the render's files are missing; give a `fabricgen render` output")
    new_left = {rel: text for rel, text in new_files.items() if rel not in same}
    touched = {device_of(rel)[0] for rel in (*old_files, *new_left) if rel not in SKIPPED_FILES}
    untouched = {device_of(rel)[0] for rel in same} - touched
    return old_files, new_left, len(untouched)


def make_plan(intent_path: str, against: str) -> PlanResult:
    from generator.intent.loader import load_intent

    loaded = load_intent(intent_path)          # IntentError goes to the caller: one line per problem
    new_plan, new_files, findings = _render_loaded(loaded, intent_path)
    skipped = 0
    all_new = new_files
    if Path(against).is_dir():
        old_files, new_files, skipped = _against_render(Path(against), new_files)
        label = against
        config = None           # a render directory does not record the config file it was made with
        bom = bom_change(None, new_plan, old_missing=True)
    else:
        text, label = show_at_ref(intent_path, against)
        old_files, old_plan = _render_text(text, label) if text is not None else ({}, None)
        config = config_change(intent_path, against, CONFIG_NAME)
        bom = bom_change(old_plan, new_plan)
    # _against_render drops a cabling.csv the old manifest records unchanged: its cables are all kept
    same_cabling = all_new.get(CABLING) if CABLING not in old_files and CABLING not in new_files else None
    result = compare_renders(old_files, new_files, fabric=new_plan.fabric, against=label, same_cabling=same_cabling)
    result.unchanged += skipped
    result.findings = findings
    result.risk.config = config
    result.bom = bom
    return result


def run_plan(intent_path: str, *, against: str, fmt: str = "text", full: bool = False) -> int:
    """FULL: the text format prints every diff line however many (else a summary above TEXT_FULL_LINES)."""
    from generator.intent.loader import IntentError

    if fmt not in FORMATS:
        print(f"error: --format {fmt!r}: use {', '.join(FORMATS)}", file=sys.stderr)
        return 2
    try:
        result = make_plan(intent_path, against)
    except IntentError as exc:
        for problem in exc.problems:
            print(f"error: {problem}", file=sys.stderr)
        return 1
    except (PlanError, GitRefError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if fmt == "json":
        print(json.dumps(result.as_json(), indent=1, sort_keys=False, default=str))
        for f in result.findings:
            print(f.one_line(), file=sys.stderr)
    elif fmt == "markdown":
        print(format_markdown(result))
    else:
        print(format_text(result, full=full))
    return 3 if result.devices else 0


# --- formats --------------------------------------------------------------
def _scalar(value: Any, typed: bool = True) -> str:
    """A value as the file types it: `9216` a number, `"9216"` a string (structured_diff typed);
    not TYPED (every value a string, as drift reads a running config): strings bare."""
    if isinstance(value, str):
        plain = bool(value) and value.strip() == value and "\n" not in value and (reads_as_string(value) or not typed)
        return value if plain else json.dumps(value)
    if value == {}:
        return "{}"
    return json.dumps(value, default=str)


def _block(value: Any, indent: str, typed: bool = True) -> list[str]:
    return [indent + ln for ln in dump_typed(value, typed=typed).rstrip("\n").splitlines()]


def _change_lines(change: dict[str, Any], indent: str = "", *, typed: bool = True) -> list[str]:
    """TYPED: the change's values are structured_diff's typed ones (False: all strings, deploy's)."""
    op, path = change["op"], change["path"]
    if op == "changed":
        old, new = change["old"], change["new"]
        if isinstance(old, dict | list) or isinstance(new, dict | list):
            return ([f"{indent}- {path}:"] + _block(old, indent + "    ", typed)
                    + [f"{indent}+ {path}:"] + _block(new, indent + "    ", typed))
        return [f"{indent}~ {path}: {_scalar(old, typed)} -> {_scalar(new, typed)}"]
    sign = "+" if op == "added" else "-"
    value = change["new"] if op == "added" else change["old"]
    if isinstance(value, dict | list) and value:
        return [f"{indent}{sign} {path}:"] + _block(value, indent + "    ", typed)
    return [f"{indent}{sign} {path}: {_scalar(value, typed)}"]


def device_lines(device: DevicePlan, indent: str = "", *, flat: bool = False) -> list[str]:
    """flat: no nesting indent, so a ```diff block colours the +/- lines (markdown)."""
    lines = []
    inner = indent if flat else indent + "  "
    for name, f in device.files.items():
        lines.append(f"{indent}@@ {name} ({f['status']}) @@" if flat else f"{indent}{name} ({f['status']})")
        if "changes" in f:
            for change in f["changes"]:
                lines += _change_lines(change, inner)
        else:
            lines += [inner + ln for ln in f["unified"].splitlines()]
    return lines


def _summary_line(result: PlanResult) -> str:
    s = result.summary()
    return (f"{s['added']} added, {s['removed']} removed, {s['changed']} changed, "
            f"{s['unchanged']} unchanged")


def _cables_line(cables: CableChanges) -> str:
    c = cables.counts()
    return f"{c['kept']} kept, {c['added']} added, {c['moved']} moved, {c['removed']} removed"


def _floor_work(cables: CableChanges) -> str:
    return (f"this change moves {len(cables.moved)} and removes {len(cables.removed)} existing cables; "
            "they must be re-plugged on the floor")


def _end_text(end: End | None) -> str:
    return "free" if end is None else f"{end[0]}:{end[1]}"


def _moved_text(m: MovedCable) -> str:
    return (f"{_end_text(m.a)} <-> {_end_text(m.b)}, now: {_end_text(m.a)} -> {_end_text(m.now[0])}, "
            f"{_end_text(m.b)} -> {_end_text(m.now[1])}")


def cable_text_lines(cables: CableChanges, indent: str = "    ") -> list[str]:
    """The counts, then every moved and removed cable up to CABLE_TEXT_LINES of each."""
    out = [f"cables: {_cables_line(cables)}"]
    for kind, items in (("moved", [_moved_text(m) for m in cables.moved]),
                        ("removed", [f"{_end_text(a)} <-> {_end_text(b)}" for a, b in cables.removed])):
        if items:
            out.append(f"{kind} cables:")
            out += [indent + item for item in items[:CABLE_TEXT_LINES]]
            if len(items) > CABLE_TEXT_LINES:
                out.append(f"{indent}... and {len(items) - CABLE_TEXT_LINES} more")
    return out


def _names_text(names: list[str], limit: int = RISK_NAMES_CHARS) -> str:
    """Device names as lossless ranges (review.abbreviate), cut at about LIMIT characters."""
    parts, size = [], 0
    ranges = abbreviate(names)
    for n, part in enumerate(ranges):
        if parts and size + len(part) > limit:
            return ", ".join(parts) + f", ... ({len(ranges) - n} more range(s))"
        parts.append(part)
        size += len(part) + 2
    return ", ".join(parts)


def risk_lines(risk: Risk) -> list[tuple[str, list[str]]]:
    """(what changes, device names) of every risk item that is not zero, in the order of risk.RISK_LABELS."""
    out = []
    for item, label in RISK_LABELS.items():
        names = risk.devices[item]
        if names:
            what = f"{len(names)} {label}"
            if item == "users" and risk.users:
                what += f" (account(s): {', '.join(risk.users)})"
            out.append((what, names))
    if risk.cables_moved or risk.cables_removed:
        out.append((f"{risk.cables_moved} cable(s) moved, {risk.cables_removed} removed", []))
    if risk.devices_removed:
        out.append((f"{risk.devices_removed} device(s) removed", []))
    if risk.config:
        out.append((f"{CONFIG_NAME} {risk.config}: it chooses endpoints, password sources, state and backup "
                    "directories and command defaults; review it", []))
    return out


def _risk_head(risk: Risk) -> str:
    return "risk: " + ("; ".join(what for what, _ in risk_lines(risk)) if risk.any else
                       "no management address, loopback/router-id, ASN, user account or cable moves")


def _group_size(group: Group) -> str:
    """An added or removed device is its whole files: their lines, never "changes"."""
    if group.status == "changed":
        return f"{group.change_count:,} change(s)"
    return f"{group.sample.line_count:,} line(s)"


def _group_title(group: Group) -> str:
    if len(group.devices) == 1:
        return f"{group.devices[0]} ({group.status}, {_group_size(group)})"
    return f"{_names_text(group.devices)} ({group.status}, {_group_size(group)} x {len(group.devices)} devices)"


def _file_sizes(device: DevicePlan) -> list[tuple[str, str]]:
    """(file, its size in words) of one device: lines of an added or removed device's files, else
    the changed keys or diff lines of each file."""
    if device.status != "changed":
        return [(name, f"{device.lines.get(name, 0):,} line(s)") for name in device.files]
    return [(name, _file_size(f)) for name, f in device.files.items()]


def format_text(result: PlanResult, *, full: bool = False, limit: int = TEXT_FULL_LINES) -> str:
    """Every group's diff, or above LIMIT diff lines (and not FULL) each group's files and sizes:
    one unit of growth is tens of thousands of lines nobody reads in a terminal."""
    marks = {"added": "+", "removed": "-", "changed": "~"}
    out = [f"plan: {result.fabric} against {result.against}"]
    if result.cables.floor_work:
        out.append(f"floor work: {_floor_work(result.cables)}")
    counts, *cable_lists = cable_text_lines(result.cables)
    # the counts, then what can cut a device off, then the long lists
    out += [counts, _risk_head(result.risk)]
    out += [f"    {what}: {_names_text(names, 10**9)}" for what, names in risk_lines(result.risk) if names]
    out += bom_text_lines(result.bom) if result.bom is not None else []
    out += cable_lists
    groups = result.groups()
    diffs = [device_lines(group.sample, "    ") for group in groups]
    total = sum(len(d) for d in diffs)
    summarised = total > limit and not full
    if summarised:
        # groups of one shape as one entry (review.families), as in the PR comment
        for family in families(groups):
            devices = [name for g in family for name in g.devices]
            variants = f", {len(family)} variants" if len(family) > 1 else ""
            many = f" x {len(devices)} devices" if len(devices) > 1 else ""
            out.append(f"{marks[family[0].status]} {_names_text(devices, 10**9)} ({family[0].status}, "
                       f"{_group_size(family[0])}{many}{variants})")
            out += [f"    {name}: {size}" for name, size in _file_sizes(family[0].sample)]
    else:
        for group, diff in zip(groups, diffs, strict=True):
            out.append(f"{marks[group.status]} {_group_title(group)}")
            out += diff
    out.append(f"devices: {_summary_line(result)}")
    if summarised:
        out.append(f"summary: the diff is {total:,} lines (over {limit:,}); --full prints it, "
                   "--format json has every change")
    if not result.devices:
        out.append("no changes")
    for f in result.findings:
        out.append(f.one_line())
    return "\n".join(out)


def _code(value: str) -> str:
    return f"<code>{markdown_text(value)}</code>"


def _end_md(end: End | None) -> str:
    return "free" if end is None else _code(f"{end[0]}:{end[1]}")


def _rerun(against: str) -> str:
    return _code(f"fabricgen plan INTENT --against {against.split(':')[0]} --format json")


def cable_markdown(cables: CableChanges, against: str) -> list[str]:
    """Counts, then moved and removed cables in a collapsed table of at most CABLE_MARKDOWN_BUDGET
    characters, so the device diffs still get most of the comment."""
    out = [f"**Cables:** {_cables_line(cables)}", ""]
    if not cables.floor_work:
        return out
    rows = [f"| moved | {_end_md(m.a)} | {_end_md(m.b)} | {_end_md(m.a)} → {_end_md(m.now[0])}, "
            f"{_end_md(m.b)} → {_end_md(m.now[1])} |" for m in cables.moved]
    rows += [f"| removed | {_end_md(a)} | {_end_md(b)} | |" for a, b in cables.removed]
    table = ["| change | old a-end | old b-end | now |", "|---|---|---|---|"]
    size = 0
    for row in rows:
        if size + len(row) + 1 > CABLE_MARKDOWN_BUDGET:
            break
        table.append(row)
        size += len(row) + 1
    rest = len(rows) - (len(table) - 2)
    if rest:
        table += ["", f"_{rest} more not shown (comment size limit): run {_rerun(against)} locally._"]
    return out + [f"<details><summary>{len(cables.moved)} moved, {len(cables.removed)} removed cable(s)</summary>",
                  "", *table, "", "</details>", ""]


def _fence(lines: list[str]) -> str:
    """A code fence longer than any backtick run in LINES, so no diff line can close it (CommonMark:
    a closing fence is at least as long as the opening one)."""
    longest = max((len(run) for ln in lines for run in re.findall(r"`+", ln)), default=0)
    return "`" * max(3, longest + 1)


def _family_block(family: list[Group]) -> list[str]:
    """One diff for groups of one shape (review.families), with every member named; an added
    device's files by name and size only (its whole new config is no review: `--format text` and
    `json` have it)."""
    group = family[0]
    title = _family_title(family)
    if group.status == "added":
        return _files_block(title, group.sample)
    lines = device_lines(group.sample, flat=True)
    fence = _fence(lines)
    block = [fence + "diff", *lines, fence]
    if len(lines) > COLLAPSE_LINES or len(family) > 1 or len(group.devices) > 1:
        return [f"<details><summary>{title}</summary>", "", *block, "", "</details>", ""]
    return [f"**{title}**", "", *block, ""]


def _family_title(family: list[Group]) -> str:
    group = family[0]
    devices = [name for g in family for name in g.devices]
    title = f"<code>{markdown_text(_names_text(devices))}</code>: {group.status}, {_group_size(group)}"
    if len(devices) > 1:
        title += f" x {len(devices)} devices"
    if len(family) > 1:
        title += (f"; the same keys in {len(family)} variants, values differ: shown for "
                  f"<code>{markdown_text(group.devices[0])}</code>")
    return title


def _files_block(title: str, device: DevicePlan, why: str = "") -> list[str]:
    """A device's files by name and size, collapsed under TITLE; WHY: the diff is not shown."""
    files = [f"- {_code(name)}: {size}" for name, size in _file_sizes(device)]
    return [f"<details><summary>{title}</summary>", "", *([f"_{why}_", ""] if why else []), *files, "",
            "</details>", ""]


def _file_size(f: dict[str, Any]) -> str:
    """A changed file's changed keys, or its changed lines when diffed as text."""
    if "changes" in f:
        return f"{len(f['changes']):,} changed key(s)"
    return f"{sum(1 for ln in f['unified'].splitlines() if ln[:1] in '+-' and not ln.startswith(('+++', '---'))):,} " \
        "changed line(s)"


def _size(lines: list[str]) -> int:
    return sum(len(x) + 1 for x in lines)


def format_markdown(result: PlanResult, limit: int = MARKDOWN_LIMIT) -> str:
    """A pull-request comment of at most LIMIT characters: the title, floor work, risk summary,
    cable and device counts always; then the groups table and the group diffs while they fit,
    and where the rest is."""
    head = [f"### fabricgen plan: {_code(result.fabric)} against {_code(result.against)}", ""]
    if result.cables.floor_work:
        head += [f"> **Floor work:** {_floor_work(result.cables)}.", ""]
    if result.risk.any:
        head += ["**Risk:**", ""] + [f"- {markdown_text(what)}" + (f": {_code(_names_text(names))}" if names else "")
                                     for what, names in risk_lines(result.risk)] + [""]
    else:
        head += [f"**Risk:** {markdown_text(_risk_head(result.risk)[len('risk: '):])}", ""]
    head += cable_markdown(result.cables, result.against)
    head += bom_markdown(result.bom) if result.bom is not None else []
    head += [f"**Devices:** {_summary_line(result)}", ""]
    if result.findings:
        head += ["**Validation findings:**", ""]
        head += [f"- {_code(f.code)} {markdown_text(f.severity)}: {_code(f.path)} {markdown_text(f.message)}"
                 for f in result.findings[:FINDINGS_SHOWN]]
        rest = len(result.findings) - FINDINGS_SHOWN
        head += ([f"- ... and {rest} more (`fabricgen validate`)"] if rest > 0 else []) + [""]
    if not result.devices:
        return "\n".join(head + ["No device changes."])
    fams = families(result.groups())
    notice_room = FOOTER_CHARS + 400        # the cut notice below, with a long --against
    table = ["| devices | status | size |", "|---|---|---:|"]
    size = _size(head) + _size(table) + notice_room
    rows_cut = 0
    for family in fams:
        devices = [name for g in family for name in g.devices]
        count = _group_size(family[0]) + (f" x {len(devices)}" if len(devices) > 1 else "")
        if len(family) > 1:
            count += f" ({len(family)} variants)"
        row = f"| {_code(_names_text(devices))} | {family[0].status} | {count} |"
        if rows_cut or size + len(row) + 1 > limit:
            rows_cut += 1
            continue
        table.append(row)
        size += len(row) + 1
    if rows_cut:
        table.append(f"| _{rows_cut} more row(s): no room in the comment_ | | |")
    body = table + [""]
    dropped: list[list[Group]] = []
    for family in fams:
        block = _family_block(family)
        if size + _size(block) > limit:
            # the diff does not fit what is left: its files and sizes, and why, in its place
            why = (f"its diff ({_size(block):,} characters) does not fit the {max(0, limit - size):,} "
                   f"characters left of this {limit:,}-character comment")
            block = _files_block(_family_title(family), family[0].sample, why)
        if size + _size(block) > limit:
            dropped.append(family)
            continue
        body += block
        size += _size(block)
    if dropped:
        body.append(_dropped_notice(dropped, limit, result.against))
    return "\n".join(head + body)


def _dropped_notice(dropped: list[list[Group]], limit: int, against: str) -> str:
    """What was left out of the comment, by name and size, within FOOTER_CHARS."""
    named, size = [], 0
    for family in dropped:
        devices = [name for g in family for name in g.devices]
        part = f"{_code(_names_text(devices, 200))} ({family[0].status}, {_group_size(family[0])})"
        if named and size + len(part) > FOOTER_CHARS - 200:
            named.append(f"{len(dropped) - len(named)} more group(s)")
            break
        named.append(part)
        size += len(part) + 2
    return (f"_Not shown, no room left in the {limit:,}-character comment: {'; '.join(named)}. Run "
            f"{_rerun(against)} or read the plan artifact of this run; the JSON has every change._")
