"""How a switch rollout looks on the console: the words of what it did (--diff's per-switch changes, the
one error line when switches are refused before anything is pushed, the summary a stop signal leaves)
and ConsolePresenter, the presenter the CLI passes to run_deploy (deploy_run.py): the progress bars,
the push question, and the run's lines printed as it reaches each of them. rollout.py decides and
pushes and records its lines in these words; it prints nothing, so the wording can change without
touching the safety path.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from generator.deploy.deploy_run import STDOUT, DeployRun, RolloutTable, Said
from generator.deploy.report import CHANGED, FAILED, REVERTING, ROLLED_BACK, SKIPPED, wave_table
from generator.safe_text import for_terminal
from generator.secrets_redact import redact_text

if TYPE_CHECKING:
    from generator.deploy.rollout import Job

NO_TERMINAL = ("error: refusing to push without confirmation: stdin is not a terminal; "
               "review with --dry-run, then pass --yes")


class ConsolePresenter:
    """`fabricgen deploy` on a terminal or in a log: the run's lines on OUT (stdout) and ERR (stderr)
    in the order it said them, progress bars and the question on ERR."""

    def __init__(self, out: Console, err: Console):
        self.out, self.err = out, err
        self.shown = 0                # how many of the run's lines are printed already

    def show(self, said: Sequence[Said]) -> None:
        for entry in said[self.shown:]:
            console = self.out if entry.stream == STDOUT else self.err
            if isinstance(entry.item, RolloutTable):
                console.print(wave_table({r.name: r for r in entry.item.results}, dry_run=entry.item.dry_run))
            else:
                console.print(entry.item, markup=False)
        self.shown = max(self.shown, len(said))

    def finish(self, run: DeployRun) -> int:
        """Print what the run said after the last point it showed; its exit code."""
        self.show(run.said)
        return run.exit_code

    @contextmanager
    def progress(self) -> Iterator[Callable[[str, int], Callable[[], None]]]:
        with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                      console=self.err, transient=False) as bars:
            def phase(description: str, total: int) -> Callable[[], None]:
                task = bars.add_task(description, total=total)
                return lambda: bars.advance(task)

            yield phase

    def ask(self, question: str) -> bool | None:
        if not sys.stdin.isatty():
            return None
        # markup=False: rich reads "[y/N]" as a style tag and prints the question without it
        answer = self.err.input(f"{question} [y/N] ", markup=False)
        return answer.strip().lower() in ("y", "yes")


def changes(job: Job, plan, changed: list[str]) -> list[str]:
    """--diff: each switch's change old -> new, as drift compares (change_lines.py); the switch's own
    diff only when that finds nothing (defaults, order), secrets as their hashes either way. Two
    entries a switch: its header line and its lines as one text."""
    from generator.deploy.change_lines import change_lines

    said = []
    for n in changed:
        said.append(f"--- {n} ({job.results[n].diff_lines} diff lines)")
        lines = change_lines(job.os_name, n, job.before[n], job.candidates[n], managed=job.managed,
                             version=job.os_version, sonic_management=plan.management is not None)
        lines = lines or redact_text(job.os_name, job.diffs[n]).splitlines()
        said.append("\n".join(for_terminal(line) for line in lines))     # a device's text, escaped
    return said


def refused_before_any_change(job: Job, failed: list[str]) -> str:
    """The one error line when switches failed or were refused in backup + diff: nothing is pushed."""
    moved = [n for n in failed if n in job.moved]
    if moved:
        return (f"error: {len(moved)} switch(es) changed since the plan was made: {', '.join(moved[:5])}"
                + (f" and {len(moved) - 5} more" if len(moved) > 5 else "")
                + " (see above); make a new plan (fabricgen plan ... --out) and review it; nothing was pushed")
    refused = [n for n in failed if n in job.refused]
    if refused:
        why = ("their change is not live on SONiC, would cut them off or is for another release"
               if job.sonic is not None else "applying their candidate would cut them off or they run another release")
        return (f"error: {len(refused)} switch(es) refused: {why} (see above)"
                + (f", {len(failed) - len(refused)} could not be backed up and diffed"
                   if len(failed) > len(refused) else "") + "; nothing was pushed")
    return (f"error: {len(failed)} switch(es) could not be backed up and diffed; nothing was pushed "
            "(fix them, or leave them out with --limit)")


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
