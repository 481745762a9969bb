"""Per-device outcome of a rollout and the final tables a person reads."""

from __future__ import annotations

from dataclasses import dataclass

from rich.console import Console
from rich.table import Table

CHANGED = "changed"
UNCHANGED = "unchanged"
FAILED = "failed"
SKIPPED = "skipped"            # never touched: later wave, or not started when its wave failed
ROLLED_BACK = "rolled back"    # committed, then rolled back explicitly because its wave failed
REVERTING = "reverting"        # committed, unreachable: its confirm timer reverts it
WOULD_CHANGE = "would change"  # --dry-run

COLUMNS = (CHANGED, UNCHANGED, FAILED, ROLLED_BACK, REVERTING, SKIPPED)


@dataclass
class DeviceResult:
    name: str
    wave: int = 0
    label: str = ""
    status: str = SKIPPED
    message: str = ""
    diff_lines: int = 0


def wave_table(results: dict[str, DeviceResult]) -> Table:
    table = Table(title="rollout", show_lines=False)
    table.add_column("wave", justify="right")
    table.add_column("devices")
    for column in COLUMNS:
        table.add_column(column, justify="right")
    waves: dict[int, list[DeviceResult]] = {}
    for r in results.values():
        waves.setdefault(r.wave, []).append(r)
    for index in sorted(waves):
        members = waves[index]
        counts = [sum(1 for r in members if r.status == c) for c in COLUMNS]
        table.add_row(str(index), members[0].label, *(str(c) if c else "." for c in counts))
    totals = [sum(1 for r in results.values() if r.status == c) for c in COLUMNS]
    table.add_row("", "total", *map(str, totals))
    return table


def problems(results: dict[str, DeviceResult]) -> list[str]:
    """One line per device that did not end cleanly, in wave order."""
    bad = (FAILED, ROLLED_BACK, REVERTING)
    rows = sorted((r for r in results.values() if r.status in bad), key=lambda r: (r.wave, r.name))
    return [f"{r.name} (wave {r.wave}): {r.status}: {r.message}" for r in rows]


def print_report(console: Console, results: dict[str, DeviceResult]) -> None:
    console.print(wave_table(results))
    for line in problems(results):
        console.print(line, markup=False, highlight=False)
