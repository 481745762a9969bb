"""What `fabricgen deploy` returns: the run's outcome and everything it has to say, in order.

The rollout prints nothing itself (issue 35). It records each line it has for the operator in a
Recorder, and returns a DeployRun: the exit code, the per-switch results and those lines. A deploy
is live and may ask before it pushes, so what must reach the operator while it runs goes through a
Presenter the caller passes in: progress, the push question, and `show`, called at the points where
the operator waits or decides (a progress phase, a question, the host playbook) with everything said
so far. The CLI's presenter (rollout_report.ConsolePresenter) prints the lines it has not printed
yet there, which keeps the console's order; the lines after the last such point it prints from the
DeployRun. Without a presenter nothing is shown and nothing is asked (`yes` pushes).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from generator.deploy.report import DeviceResult, problems

if TYPE_CHECKING:
    from generator.deploy.hosts import HostRunResult

STDOUT = "stdout"
STDERR = "stderr"


@dataclass(frozen=True)
class RolloutTable:
    """The per-wave table of the switches (report.wave_table), at the point the run reached it."""

    results: tuple[DeviceResult, ...]
    dry_run: bool = False


@dataclass(frozen=True)
class Said:
    """One thing the run has to say: a line (or lines) of text, or the rollout table, and the stream."""

    stream: str                       # STDOUT | STDERR
    item: str | RolloutTable


@dataclass
class Recorder:
    """What the run said so far and what it found, filled in as it goes; `run` freezes it."""

    said: list[Said] = field(default_factory=list)
    results: dict[str, DeviceResult] = field(default_factory=dict)
    backup_dir: Path | None = None
    hosts: HostRunResult | None = None

    def out(self, text: str) -> None:
        self.said.append(Said(STDOUT, text))

    def err(self, text: str) -> None:
        self.said.append(Said(STDERR, text))

    def table(self, results: dict[str, DeviceResult], *, dry_run: bool = False) -> None:
        """The rollout table, then (not for a dry run, whose lines named every switch already) one
        line per switch that did not end cleanly."""
        # a copy: the table shows the switches as they were here
        rows = tuple(dataclasses.replace(r) for r in results.values())
        self.said.append(Said(STDOUT, RolloutTable(rows, dry_run)))
        if not dry_run:
            for line in problems(results):
                self.out(line)

    def run(self, exit_code: int, signal: str | None = None) -> DeployRun:
        return DeployRun(exit_code, tuple(self.said), self.results, self.backup_dir, self.hosts, signal)


@dataclass(frozen=True)
class DeployRun:
    """The outcome of one `deploy`. RESULTS: each switch read, by name (empty when none was);
    BACKUP_DIR: where this run's backups are (None when it stopped before making it); HOSTS: the host
    playbook's result when it ran; SAID: every line for the operator, in order (the CLI prints them
    on STDOUT and STDERR); SIGNAL: the stop signal's name when one ended the run."""

    exit_code: int
    said: tuple[Said, ...] = ()
    results: dict[str, DeviceResult] = field(default_factory=dict)
    backup_dir: Path | None = None
    hosts: HostRunResult | None = None
    signal: str | None = None

    def lines(self, stream: str) -> list[str]:
        """The text said on STREAM (the rollout table left out: its rows are RESULTS)."""
        return [s.item for s in self.said if s.stream == stream and isinstance(s.item, str)]


class Presenter(Protocol):
    """What a deploy shows and asks while it runs."""

    def show(self, said: Sequence[Said]) -> None:
        """SAID is everything the run said so far; the operator is about to wait or decide."""

    def progress(self) -> AbstractContextManager[Callable[[str, int], Callable[[], None]]]:
        """A block of progress phases: the value opens a phase (description, how many devices) and
        returns the function to call as each device finishes (from any thread)."""

    def ask(self, question: str) -> bool | None:
        """The operator's answer to a yes/no QUESTION; None when there is no one to ask."""


class Quiet:
    """The presenter of a caller that passes none: shows nothing, has no one to ask."""

    def show(self, said: Sequence[Said]) -> None:
        return None

    @contextmanager
    def progress(self) -> Iterator[Callable[[str, int], Callable[[], None]]]:
        yield lambda description, total: (lambda: None)

    def ask(self, question: str) -> bool | None:
        return None
