"""The two sides `fabricgen plan` compares, read and rendered in memory (never written).

The new side is the intent rendered once its checks pass. The old side is the intent at a git ref
rendered the same way (a ref without the file has none: every device is added), or an earlier
`fabricgen render` output read back through its manifest.json: only the files it lists, bounded,
never through a link, and only where the new file's sha256 differs (a 98k-GPU render is read and
diffed only where it changed). make_plan compares the two (plan_compare.py) and adds what the change
orders (plan_bom.py: both sides' compiled plans, the BOM `capacity` prints) and whether the
fabricgen.toml beside the intent changed.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from generator.common.config_name import CONFIG_NAME
from generator.gitops.gitref import config_change, show_at_ref
from generator.gitops.plan_bom import bom_change
from generator.gitops.plan_compare import (
    CABLING,
    SKIPPED_FILES,
    PlanError,
    PlanResult,
    compare_renders,
    device_of,
)

if TYPE_CHECKING:
    from generator.plan.model import FabricPlan

# One rendered file of --against DIR: the largest is a 98k-GPU fabric's cabling.csv, ~15 MB
MAX_RENDERED_FILE_BYTES = 256 * 1024 * 1024


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
