"""The dry-run report (generator/deploy/report.py): per-switch lines and counts that add up."""

from __future__ import annotations

import io

from rich.console import Console

from generator.deploy.report import FAILED, UNCHANGED, WOULD_CHANGE, DeviceResult, dry_run_lines, wave_table


def results() -> dict[str, DeviceResult]:
    rows = [DeviceResult("leaf-1", 1, "canary", WOULD_CHANGE, diff_lines=12),
            DeviceResult("spine-1", 3, "spines half 1", FAILED, "refused before apply: eth0", refused=True),
            DeviceResult("leaf-2", 2, "leaves rail 0", UNCHANGED),
            DeviceResult("leaf-3", 2, "leaves rail 0", FAILED, "cannot connect: timed out")]
    return {r.name: r for r in rows}


def test_dry_run_lines_in_wave_order_with_reasons():
    lines = dry_run_lines(results())
    assert lines[0] == "dry run: 4 switch(es) in 3 wave(s): would change 1, unchanged 1, refused 1, failed 1"
    assert [ln.split()[1] for ln in lines[1:]] == ["1", "2", "2", "3"]
    assert lines[1].endswith("leaf-1   would change (12 diff line(s))")
    assert lines[2].endswith("leaf-2   unchanged")
    assert lines[3].endswith("leaf-3   failed: cannot connect: timed out")
    assert lines[4].endswith("spine-1  refused: refused before apply: eth0")


def render(table) -> list[str]:
    out = io.StringIO()
    Console(file=out, width=120).print(table)
    return out.getvalue().splitlines()


def cells(line: str) -> list[str]:
    return [c.strip() for c in line.split("│")[1:-1]]


def test_dry_run_table_counts_what_would_happen():
    lines = render(wave_table(results(), dry_run=True))
    assert cells(next(ln for ln in lines if " total " in ln)) == ["", "total", "1", "1", "1", "1"]
    assert cells(next(ln for ln in lines if " canary " in ln)) == ["1", "canary", "1", ".", ".", "."]
    # a real run's table: a refusal is a failure, would-change is not a column
    real = render(wave_table(results()))
    assert cells(next(ln for ln in real if " total " in ln)) == ["", "total", "0", "1", "2", "0", "0", "0"]
