"""`fabricgen plan`'s result as people read it: in a terminal (format_text) and as a pull-request
comment (format_markdown).

Both put floor work, risk, cable counts and the BOM delta before the diffs, which come one block per
group of identical device changes (review.py). The text prints every diff up to TEXT_FULL_LINES
lines, above that each group's files and sizes (--full prints all); the comment stays within
MARKDOWN_LIMIT characters, collapsing long diffs and naming what did not fit. Values are shown as the
file types them (`9216` a number, `"9216"` a string); change_lines, one change as
`~ path: old -> new`, is deploy --diff's too (deploy/change_lines.py).
"""

from __future__ import annotations

import json
import re
from typing import Any

from generator.common.config_name import CONFIG_NAME
from generator.common.structured_diff import dump_typed, reads_as_string
from generator.gitops.plan_bom import bom_markdown, bom_text_lines
from generator.gitops.plan_compare import CableChanges, DevicePlan, End, MovedCable, PlanResult
from generator.gitops.review import RISK_LABELS, Group, Risk, abbreviate, families
from generator.safe_text import markdown_text

# a GitHub comment holds 65,536 characters; keep room for the header and the cut notice
MARKDOWN_LIMIT = 60_000
COLLAPSE_LINES = 15
# A 98k-GPU change can move 100k cables: text lists this many of each kind; the PR comment keeps
# its cable table within its own budget so the device diffs still fit MARKDOWN_LIMIT.
CABLE_TEXT_LINES = 200
CABLE_MARKDOWN_BUDGET = 12_000
# the markdown footer naming the groups left out for size
FOOTER_CHARS = 1_600
# diff lines the text format prints before it summarises each group (--full prints all)
TEXT_FULL_LINES = 400
# device names listed per risk item in markdown, and validation findings, before "... more"
RISK_NAMES_CHARS = 1_500
FINDINGS_SHOWN = 20


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


def change_lines(change: dict[str, Any], indent: str = "", *, typed: bool = True) -> list[str]:
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
                lines += change_lines(change, inner)
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
