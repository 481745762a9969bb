"""The rollout's console wording (generator/deploy/rollout_report.py), pure: a stand-in job
holding only the fields the wording reads, no switch, no SSH."""

from __future__ import annotations

import io
from pathlib import Path
from types import SimpleNamespace

from rich.console import Console

from generator.deploy.deploy_run import Quiet, Recorder
from generator.deploy.report import CHANGED, FAILED, REVERTING, ROLLED_BACK, SKIPPED, DeviceResult
from generator.deploy.rollout import _confirmed
from generator.deploy.rollout_report import (
    NO_TERMINAL,
    ConsolePresenter,
    interrupt_summary,
    refused_before_any_change,
)


def job(statuses: dict[str, str], *, moved=(), refused=(), sonic=None):
    return SimpleNamespace(results={n: DeviceResult(n, status=s) for n, s in statuses.items()},
                           moved=set(moved), refused=set(refused), sonic=sonic, revert_in=300)


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
    assert refused_before_any_change(j, ["leaf-1", "leaf-2"]) == ("error: 1 switch(es) changed since the plan was made: leaf-2 (see above); make a new plan "
                    "(fabricgen plan ... --out) and review it; nothing was pushed")


def test_refused_and_unreadable_switches_in_one_line():
    j = job({"leaf-1": FAILED, "leaf-2": FAILED}, refused={"leaf-1"})
    assert refused_before_any_change(j, ["leaf-1", "leaf-2"]) == ("error: 1 switch(es) refused: applying their candidate would cut them off or they run another "
                    "release (see above), 1 could not be backed up and diffed; nothing was pushed")


def consoles() -> tuple[ConsolePresenter, io.StringIO, io.StringIO]:
    out, err = io.StringIO(), io.StringIO()
    return ConsolePresenter(Console(file=out, width=400), Console(file=err, width=400)), out, err


def test_no_terminal_no_push_unless_yes(monkeypatch):
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    console, _, err = consoles()
    assert console.ask("push?") is None                  # no one to ask: no prompt either
    assert err.getvalue() == ""
    for presenter in (console, Quiet()):
        said = Recorder()
        assert _confirmed(said, presenter, True, "push?") is True
        assert said.said == []
        assert _confirmed(said, presenter, False, "push?") is False
        assert said.run(1).lines("stderr") == [NO_TERMINAL]
        assert "stdin is not a terminal" in NO_TERMINAL


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_question_comes_after_what_the_run_said_so_far(monkeypatch):
    """The operator answers having read the plan: the lines said before the question are printed
    first, each once; the rest come when the CLI finishes the run."""
    monkeypatch.setattr("sys.stdin", Terminal("y\n"))
    console, out, err = consoles()
    said = Recorder()
    said.out("fab: 2 switch(es): 1 to change")
    said.err("warning: a note")
    assert _confirmed(said, console, False, "push 1 switch(es) in 1 wave(s)?") is True
    assert out.getvalue() == "fab: 2 switch(es): 1 to change\n"
    assert err.getvalue() == "warning: a note\npush 1 switch(es) in 1 wave(s)? [y/N] "
    said.out("switches deployed in 1.0s")
    assert console.finish(said.run(0)) == 0
    assert out.getvalue() == "fab: 2 switch(es): 1 to change\nswitches deployed in 1.0s\n"
    assert err.getvalue().count("warning: a note") == 1


def test_the_table_is_printed_where_the_run_put_it_and_problems_follow():
    console, out, _ = consoles()
    said = Recorder()
    results = {"leaf-1": DeviceResult("leaf-1", wave=1, label="canary", status=CHANGED),
               "leaf-2": DeviceResult("leaf-2", wave=2, label="rail 1", status=FAILED, message="post-check: x")}
    said.out("before")
    said.table(results)
    results["leaf-1"].status = FAILED           # later changes do not reach the table already said
    said.out("after")
    console.finish(said.run(1))
    lines = out.getvalue().splitlines()
    assert lines[0] == "before" and lines[-1] == "after"
    assert lines[-2] == "leaf-2 (wave 2): failed: post-check: x"
    cells = [c.strip() for c in next(ln for ln in lines if "canary" in ln).split("│")]
    assert cells[1:4] == ["1", "canary", "1"]          # wave, devices, changed: as it was when said
