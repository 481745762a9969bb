"""`fabricgen plan`: what a change to the intent does to each device.

Both sides are rendered in memory (never written) and compared per device:
switches/<name>/ and hosts/<name>/ are devices; the fabric-wide files (plan.json,
cabling.csv, inventory.yml) are the pseudo-device `fabric`, counted like a device
so a cabling-only change still exits 3. manifest.json is left out: it records the
intent's hash and changes on every commit, even a comment edit.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from generator.gitops.gitref import GitRefError, show_at_ref
from generator.gitops.structured_diff import diff_file
from generator.secrets_redact import redact_change, redact_text

FABRIC = "fabric"
SKIPPED_FILES = {"manifest.json"}
FORMATS = ("text", "markdown", "json")
# a GitHub comment holds 65,536 characters; keep room for the header and the cut notice
MARKDOWN_LIMIT = 60_000
COLLAPSE_LINES = 15


class PlanError(Exception):
    """A one-line reason the plan could not be made."""


@dataclass
class DevicePlan:
    name: str
    status: str                                           # added | removed | changed
    files: dict[str, dict[str, Any]] = field(default_factory=dict)

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


@dataclass
class PlanResult:
    fabric: str
    against: str
    devices: dict[str, DevicePlan]
    unchanged: int
    findings: list = field(default_factory=list)

    def summary(self) -> dict[str, int]:
        counts = {"added": 0, "removed": 0, "changed": 0, "unchanged": self.unchanged}
        for d in self.devices.values():
            counts[d.status] += 1
        return counts

    def as_json(self) -> dict[str, Any]:
        return {"summary": self.summary(),
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
                    against: str = "") -> PlanResult:
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
            d = diff_file(rel, before.get(rel), after.get(rel))
            if d is not None:
                files[device_of(rel)[1]] = _redacted(rel, d)
        if files:
            devices[name] = DevicePlan(name, status, files)
        else:
            unchanged += 1
    return PlanResult(fabric, against, devices, unchanged)


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


# --- the two sides --------------------------------------------------------
def _render_loaded(loaded, what: str) -> tuple[str, dict[str, str], list]:
    from generator.checks.runner import run_checks
    from generator.render.output import render_files

    result = run_checks(loaded)
    if result.errors or result.plan is None:
        first = result.errors[0].one_line() if result.errors else "did not compile"
        raise PlanError(f"{what} has {len(result.errors)} error(s), first: {first}")
    return result.plan.fabric, render_files(result.plan, loaded.text), result.findings


def _render_text(text: str, label: str) -> dict[str, str]:
    from generator.intent.loader import IntentError, LoadedIntent, parse_yaml, validate_data

    try:
        data, lines = parse_yaml(text, label)
        intent = validate_data(data, lines, label)
    except IntentError as exc:
        raise PlanError(f"the intent at {label} is invalid ({exc.problems[0]}); "
                        "compare against a rendered directory instead") from None
    loaded = LoadedIntent(intent=intent, file=label, lines=lines, text=text)
    return _render_loaded(loaded, f"the intent at {label}")[1]


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
    import stat

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
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
            with os.fdopen(fd, "rb") as fh:
                if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
                    raise OSError(f"{rel} is not a regular file")
                files[rel] = fh.read().decode("utf-8")
        except FileNotFoundError:
            continue                # deleted since: the device reads as removed, as before
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
    same = {}
    for rel, text in new_files.items():
        digest = listed.get(rel)
        data = text.encode()
        if digest is None or rel == MANIFEST or hashlib.sha256(data).hexdigest() != digest:
            continue
        # Trust the manifest only for a plain file of the recorded size: a link planted in its
        # place is read (and refused) by read_tree, and a hand edit that changed the size shows.
        try:
            st = os.lstat(directory / rel)
        except OSError:
            continue
        if stat.S_ISREG(st.st_mode) and st.st_size == len(data):
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
    fabric, new_files, findings = _render_loaded(loaded, intent_path)
    skipped = 0
    if Path(against).is_dir():
        old_files, new_files, skipped = _against_render(Path(against), new_files)
        label = against
    else:
        text, label = show_at_ref(intent_path, against)
        old_files = _render_text(text, label) if text is not None else {}
    result = compare_renders(old_files, new_files, fabric=fabric, against=label)
    result.unchanged += skipped
    result.findings = findings
    return result


def run_plan(intent_path: str, *, against: str, fmt: str = "text") -> int:
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
        print(format_text(result))
    return 3 if result.devices else 0


# --- formats --------------------------------------------------------------
def _scalar(value: Any) -> str:
    if isinstance(value, str):
        return value if value and value.strip() == value and "\n" not in value else json.dumps(value)
    if value == {}:
        return "{}"
    return json.dumps(value, default=str)


def _block(value: Any, indent: str) -> list[str]:
    dumped = yaml.safe_dump(value, sort_keys=False, default_flow_style=False, width=200).rstrip("\n")
    return [indent + ln for ln in dumped.splitlines()]


def _change_lines(change: dict[str, Any], indent: str = "") -> list[str]:
    op, path = change["op"], change["path"]
    if op == "changed":
        old, new = change["old"], change["new"]
        if isinstance(old, dict | list) or isinstance(new, dict | list):
            return ([f"{indent}- {path}:"] + _block(old, indent + "    ")
                    + [f"{indent}+ {path}:"] + _block(new, indent + "    "))
        return [f"{indent}~ {path}: {_scalar(old)} -> {_scalar(new)}"]
    sign = "+" if op == "added" else "-"
    value = change["new"] if op == "added" else change["old"]
    if isinstance(value, dict | list) and value:
        return [f"{indent}{sign} {path}:"] + _block(value, indent + "    ")
    return [f"{indent}{sign} {path}: {_scalar(value)}"]


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


def format_text(result: PlanResult) -> str:
    marks = {"added": "+", "removed": "-", "changed": "~"}
    out = [f"plan: {result.fabric} against {result.against}"]
    for device in result.devices.values():
        out.append(f"{marks[device.status]} {device.name} ({device.status}, {device.change_count} change(s))")
        out += device_lines(device, "    ")
    out.append(f"devices: {_summary_line(result)}")
    if not result.devices:
        out.append("no changes")
    for f in result.findings:
        out.append(f.one_line())
    return "\n".join(out)


def format_markdown(result: PlanResult) -> str:
    head = [f"### fabricgen plan: `{result.fabric}` against `{result.against}`", "",
            f"**Devices:** {_summary_line(result)}", ""]
    if result.findings:
        head += ["**Validation findings:**", ""] + [f"- `{f.code}` {f.severity}: `{f.path}` {f.message}"
                                                     for f in result.findings] + [""]
    if not result.devices:
        return "\n".join(head + ["No device changes."])
    head += ["| device | status | changes |", "|---|---|---:|"]
    head += [f"| `{d.name}` | {d.status} | {d.change_count} |" for d in result.devices.values()]
    head.append("")
    body: list[str] = []
    size = sum(len(x) + 1 for x in head)
    shown = 0
    for device in result.devices.values():
        lines = device_lines(device, flat=True)
        fence = "````" if any("```" in ln for ln in lines) else "```"
        block = [fence + "diff", *lines, fence]
        if len(lines) > COLLAPSE_LINES:
            block = [f"<details><summary><code>{device.name}</code>: {device.status}, "
                     f"{device.change_count} change(s)</summary>", "", *block, "", "</details>", ""]
        else:
            block = [f"**`{device.name}`** ({device.status})", "", *block, ""]
        cost = sum(len(x) + 1 for x in block)
        if size + cost > MARKDOWN_LIMIT:
            break
        body += block
        size += cost
        shown += 1
    rest = len(result.devices) - shown
    if rest:
        body.append(f"_{rest} more device(s) not shown (comment size limit): run "
                    f"`fabricgen plan INTENT --against {result.against.split(':')[0]}` locally._")
    return "\n".join(head + body)
