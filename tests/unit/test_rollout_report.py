"""The rollout's console wording (generator/deploy/rollout_report.py), pure: a stand-in job
holding only the fields the wording reads, no switch, no SSH."""

from __future__ import annotations

import io
from pathlib import Path
from types import SimpleNamespace

from rich.console import Console

from generator.deploy.report import CHANGED, FAILED, REVERTING, ROLLED_BACK, SKIPPED, DeviceResult
from generator.deploy.rollout_report import confirm, interrupt_summary, refused_before_any_change


def job(statuses: dict[str, str], *, moved=(), refused=(), sonic=None):
    return SimpleNamespace(results={n: DeviceResult(n, status=s) for n, s in statuses.items()},
                           moved=set(moved), refused=set(refused), sonic=sonic, revert_in=300)


def err_text(call) -> tuple[int, str]:
    buf = io.StringIO()
    rc = call(Console(file=buf, width=400))
    return rc, buf.getvalue().strip()


def test_a_stop_names_what_it_left_on_each_switch():
    j = job({"leaf-1": CHANGED, "leaf-2": ROLLED_BACK, "leaf-3": REVERTING, "leaf-4": FAILED, "spine-1": SKIPPED,
             "spine-2": SKIPPED})
    assert interrupt_summary(j, list(j.results), Path("/b")) == (
        "rolled back 1 pending commit(s) (leaf-2), 1 unreachable, left to their confirm timers (300s): leaf-3, "
        "1 failed (see the report): leaf-4, 1 switch(es) of finished waves stay deployed, "
        "2 not started; backups in /b")


def test_a_stop_lists_four_names_then_counts_the_rest():
    j = job({f"leaf-{i}": ROLLED_BACK for i in range(1, 7)})
    assert interrupt_summary(j, list(j.results), Path("/b")).startswith(
        "rolled back 6 pending commit(s) (leaf-1, leaf-2, leaf-3, leaf-4 and 2 more), 0 not started")


def test_a_switch_that_moved_since_the_plan_outranks_a_refusal():
    j = job({"leaf-1": FAILED, "leaf-2": FAILED}, moved={"leaf-2"}, refused={"leaf-1"})
    rc, text = err_text(lambda err: refused_before_any_change(j, ["leaf-1", "leaf-2"], err))
    assert rc == 1
    assert text == ("error: 1 switch(es) changed since the plan was made: leaf-2 (see above); make a new plan "
                    "(fabricgen plan ... --out) and review it; nothing was pushed")


def test_refused_and_unreadable_switches_in_one_line():
    j = job({"leaf-1": FAILED, "leaf-2": FAILED}, refused={"leaf-1"})
    rc, text = err_text(lambda err: refused_before_any_change(j, ["leaf-1", "leaf-2"], err))
    assert rc == 1
    assert text == ("error: 1 switch(es) refused: applying their candidate would cut them off or they run another "
                    "release (see above), 1 could not be backed up and diffed; nothing was pushed")


def test_no_terminal_no_push_unless_yes(monkeypatch):
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    assert confirm(Console(file=io.StringIO()), True, "push?") is True
    buf = io.StringIO()
    assert confirm(Console(file=buf, width=400), False, "push?") is False
    assert "stdin is not a terminal" in buf.getvalue()
