"""How a switch rollout looks on the console: the progress bars, the push question, --diff's per-switch
changes, the one error line when switches are refused before anything is pushed, and the summary
a stop signal leaves. rollout.py decides and pushes; this module only words what it did, so the
wording can change without touching the safety path.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from generator.deploy.report import CHANGED, FAILED, REVERTING, ROLLED_BACK, SKIPPED
from generator.safe_text import for_terminal
from generator.secrets_redact import redact_text

if TYPE_CHECKING:
    from generator.deploy.rollout import Job


def progress(console: Console) -> Progress:
    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                    console=console, transient=False)


def confirm(err: Console, yes: bool, question: str) -> bool:
    if yes:
        return True
    if not sys.stdin.isatty():
        err.print("error: refusing to push without confirmation: stdin is not a terminal; "
                  "review with --dry-run, then pass --yes", markup=False)
        return False
    answer = err.input(f"{question} [y/N] ")
    return answer.strip().lower() in ("y", "yes")


def print_changes(job: Job, plan, changed: list[str], out: Console) -> None:
    """--diff: each switch's change old -> new, as drift compares (change_lines.py); the switch's own
    diff only when that finds nothing (defaults, order), secrets as their hashes either way."""
    from generator.deploy.change_lines import change_lines

    for n in changed:
        out.print(f"--- {n} ({job.results[n].diff_lines} diff lines)", markup=False)
        lines = change_lines(job.os_name, n, job.before[n], job.candidates[n], managed=job.managed,
                             version=job.os_version, sonic_management=plan.management is not None)
        lines = lines or redact_text(job.os_name, job.diffs[n]).splitlines()
        out.print("\n".join(for_terminal(line) for line in lines), markup=False)     # a device's text, escaped


def refused_before_any_change(job: Job, failed: list[str], err: Console) -> int:
    """The one error line when switches failed or were refused in backup + diff: nothing is pushed."""
    moved = [n for n in failed if n in job.moved]
    if moved:
        err.print(f"error: {len(moved)} switch(es) changed since the plan was made: {', '.join(moved[:5])}"
                  + (f" and {len(moved) - 5} more" if len(moved) > 5 else "")
                  + " (see above); make a new plan (fabricgen plan ... --out) and review it; nothing was pushed",
                  markup=False)
        return 1
    refused = [n for n in failed if n in job.refused]
    if refused:
        why = ("their change is not live on SONiC, would cut them off or is for another release"
               if job.sonic is not None else "applying their candidate would cut them off or they run another release")
        err.print(f"error: {len(refused)} switch(es) refused: {why} (see above)" + (f", {len(failed) - len(refused)} could not be backed up and diffed"
                                   if len(failed) > len(refused) else "") + "; nothing was pushed",
                  markup=False)
        return 1
    err.print(f"error: {len(failed)} switch(es) could not be backed up and diffed; nothing was pushed "
              "(fix them, or leave them out with --limit)",
              markup=False)
    return 1


def interrupt_summary(job: Job, changed: list[str], backup_dir: Path) -> str:
    """What a stop signal left on the switches, in one clause list."""
    def named(status: str) -> list[str]:
        return [n for n in changed if job.results[n].status == status]

    def listed(items: list[str]) -> str:
        return ", ".join(items[:4]) + (f" and {len(items) - 4} more" if len(items) > 4 else "")

    rolled, reverting, kept = named(ROLLED_BACK), named(REVERTING), named(CHANGED)
    failed, untouched = named(FAILED), named(SKIPPED)
    parts = []
    parts.append(f"rolled back {len(rolled)} pending commit(s)" + (f" ({listed(rolled)})" if rolled else ""))
    if reverting:
        parts.append(f"{len(reverting)} unreachable, left to their confirm timers ({job.revert_in}s): "
                     f"{listed(reverting)}")
    if failed:
        parts.append(f"{len(failed)} failed (see the report): {listed(failed)}")
    if kept:
        parts.append(f"{len(kept)} switch(es) of finished waves stay deployed")
    parts.append(f"{len(untouched)} not started; backups in {backup_dir}")
    return ", ".join(parts)
