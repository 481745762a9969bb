"""Per-device outcome of a rollout and the final tables a person reads."""

from __future__ import annotations

from dataclasses import dataclass

from rich.table import Table

from generator.safe_text import for_terminal

CHANGED = "changed"
UNCHANGED = "unchanged"
FAILED = "failed"
SKIPPED = "skipped"            # never touched: later wave, or not started when its wave failed
ROLLED_BACK = "rolled back"    # committed, then rolled back explicitly because its wave failed
REVERTING = "reverting"        # committed, unreachable: its confirm timer reverts it
WOULD_CHANGE = "would change"  # --dry-run
REFUSED = "refused"            # --dry-run: a failure of the guard or the release gate, not of the switch

COLUMNS = (CHANGED, UNCHANGED, FAILED, ROLLED_BACK, REVERTING, SKIPPED)
DRY_RUN_COLUMNS = (WOULD_CHANGE, UNCHANGED, REFUSED, FAILED)


@dataclass
class DeviceResult:
    name: str
    wave: int = 0
    label: str = ""
    status: str = SKIPPED
    message: str = ""
    diff_lines: int = 0
    refused: bool = False      # FAILED because the guard or the release gate refused its candidate

    @property
    def dry_run_outcome(self) -> str:
        return REFUSED if self.status == FAILED and self.refused else self.status


def wave_table(results: dict[str, DeviceResult], *, dry_run: bool = False) -> Table:
    """Devices per wave and outcome; a dry run counts what would happen (would change, unchanged,
    refused, failed), so its total row adds up to the switches it read."""
    columns = DRY_RUN_COLUMNS if dry_run else COLUMNS

    def outcome(r: DeviceResult) -> str:
        return r.dry_run_outcome if dry_run else r.status

    table = Table(title="rollout (dry run)" if dry_run else "rollout", show_lines=False)
    table.add_column("wave", justify="right")
    table.add_column("devices")
    for column in columns:
        table.add_column(column, justify="right")
    waves: dict[int, list[DeviceResult]] = {}
    for r in results.values():
        waves.setdefault(r.wave, []).append(r)
    for index in sorted(waves):
        members = waves[index]
        counts = [sum(1 for r in members if outcome(r) == c) for c in columns]
        table.add_row(str(index), members[0].label, *(str(c) if c else "." for c in counts))
    totals = [sum(1 for r in results.values() if outcome(r) == c) for c in columns]
    table.add_row("", "total", *map(str, totals))
    return table


def dry_run_lines(results: dict[str, DeviceResult]) -> list[str]:
    """What a dry run found, one line per switch in rollout order (wave, then name as the waves
    list them), after a count line that adds up: would change N, unchanged N, refused N, failed N."""
    rows = sorted(results.values(), key=lambda r: r.wave)
    counts = {c: sum(1 for r in rows if r.dry_run_outcome == c) for c in DRY_RUN_COLUMNS}
    waves = len({r.wave for r in rows})
    out = [f"dry run: {len(rows)} switch(es) in {waves} wave(s): "
           + ", ".join(f"{c} {n}" for c, n in counts.items())]
    width = max((len(r.name) for r in rows), default=0)
    label_width = max((len(r.label) for r in rows), default=0)
    for r in rows:
        outcome = r.dry_run_outcome
        detail = (f" ({r.diff_lines} diff line(s))" if outcome == WOULD_CHANGE
                  else f": {for_terminal(r.message)}" if r.message else "")
        out.append(f"  wave {r.wave:>3}  {r.label:<{label_width}}  {r.name:<{width}}  {outcome}{detail}")
    return out


def problems(results: dict[str, DeviceResult]) -> list[str]:
    """One line per device that did not end cleanly, in wave order."""
    bad = (FAILED, ROLLED_BACK, REVERTING)
    rows = sorted((r for r in results.values() if r.status in bad), key=lambda r: (r.wave, r.name))
    # a message may quote the device's own words (an apply error): shown, never interpreted
    return [f"{r.name} (wave {r.wave}): {r.status}: {for_terminal(r.message)}" for r in rows]
