"""run_drift returns a DriftRun and prints nothing; the CLI prints it (issue 35 item 5)."""

from __future__ import annotations

import json

from generator.drift.command import drift_stdout, run_drift
from tests.cli_runner import run_cli
from tests.integration.test_drift_lab import INTENT, SWITCHES


def test_the_run_carries_the_findings_and_nothing_is_printed(tmp_path, capsys) -> None:
    intent, endpoints = tmp_path / "fabric.yaml", tmp_path / "endpoints.yml"
    intent.write_text(INTENT)
    endpoints.write_text("switches: {}\n")      # no switch reachable: each is unknown, never in sync

    run = run_drift(str(intent), endpoints=str(endpoints), only="switches", fmt="json")
    assert capsys.readouterr() == ("", "")
    assert run.exit_code == 1 and run.problems == ()
    assert [(d.name, d.status, d.error) for d in run.report.devices] == [
        (name, "unknown", f"not listed in {endpoints}") for name in SWITCHES]
    assert json.loads(drift_stdout(run))["summary"]["unknown"] == len(SWITCHES)

    done = run_cli("drift", str(intent), "--endpoints", str(endpoints), "--only", "switches", "--format", "json")
    assert (done.returncode, done.stderr) == (1, "")
    assert json.loads(done.stdout)["devices"] == json.loads(drift_stdout(run))["devices"]


def test_with_output_the_file_holds_the_report_and_stdout_nothing(tmp_path, capsys) -> None:
    intent, endpoints, textfile = tmp_path / "fabric.yaml", tmp_path / "endpoints.yml", tmp_path / "drift.prom"
    intent.write_text(INTENT)
    endpoints.write_text("switches: {}\n")
    run = run_drift(str(intent), endpoints=str(endpoints), only="switches", fmt="prometheus", output=str(textfile))
    assert capsys.readouterr() == ("", "")
    assert (run.exit_code, run.output, drift_stdout(run)) == (1, str(textfile), "")
    assert 'fabricgen_drift_check_success{fabric="tiny"} 0' in textfile.read_text()

    unwritable = run_drift(str(intent), endpoints=str(endpoints), only="switches", fmt="json",
                           output=str(intent / "x.json"))      # a file is no directory
    assert unwritable.exit_code == 1 and drift_stdout(unwritable) == ""
    assert len(unwritable.problems) == 1
    assert unwritable.problems[0].startswith(f"error: cannot write {intent / 'x.json'}: ")
