"""run_plan returns a PlanReport and prints nothing; the CLI prints it (issue 35 item 5)."""

from __future__ import annotations

import json

from generator.gitops.plan import report_errors, report_text, run_plan
from generator.intent.loader import load_intent
from generator.plan.compile import compile_plan
from generator.render.output import render_files, write_tree
from tests.conftest import example


def test_the_report_carries_the_changes_and_nothing_is_printed(tmp_path, capsys) -> None:
    loaded = load_intent(example("medium"))
    rendered = write_tree(render_files(compile_plan(loaded.intent), loaded.text), tmp_path / "r")
    intent = tmp_path / "fabric.yaml"
    intent.write_text(example("medium").read_text().replace("switch: 9216", "switch: 9000"))

    report = run_plan(str(intent), against=str(rendered), fmt="json")
    assert capsys.readouterr() == ("", "")
    assert report.exit_code == 3 and report.problems == ()
    assert report.result.devices and all(d.status == "changed" for d in report.result.devices.values())
    assert json.loads(report_text(report))["devices"].keys() == report.result.devices.keys()
    assert report_errors(report) == tuple(f.one_line() for f in report.result.findings)
    assert report_errors(run_plan(str(intent), against=str(rendered), fmt="text")) == ()


def test_a_plan_that_cannot_be_made_is_a_report_of_its_errors(tmp_path, capsys) -> None:
    report = run_plan(str(tmp_path / "nowhere.yaml"), against=str(tmp_path), fmt="text")
    bogus = run_plan(str(example("medium")), against=str(tmp_path), fmt="yaml")
    assert capsys.readouterr() == ("", "")
    assert (report.exit_code, report.result, report_text(report)) == (1, None, None)
    assert len(report.problems) == 1 and report.problems[0].startswith("error: ") and "nowhere.yaml" in report.problems[0]
    assert report_errors(report) == report.problems
    assert (bogus.exit_code, bogus.problems) == (2, ("error: --format 'yaml': use text, markdown, json",))
