"""`run_verify` and `run_soak` print nothing: they return a VerifyRun / SoakRun, and the `verify`
command prints exactly its stdout text and its lines on stderr and exits with its code (issue 35).

No lab needed: every switch of the endpoints file is on a loopback port bound by the test and not
listening, so each login is refused at once (real SSH drivers, real sessions) and every switch
check is unknown; the hosts are skipped (no `hosts:` key), which puts a note on stderr."""

from __future__ import annotations

import json
import socket

import pytest
import yaml
from typer.testing import CliRunner

from generator.checks.runner import run_checks
from generator.cli import app
from generator.intent.loader import load_intent
from generator.verify.command import run_soak, run_verify, soak_stdout, verify_stdout

INTENT = "fabric: {name: t}\ntopology: {kind: leaf-spine, nodes: 2}\n"
FAST = ["--interval", "0", "--settle", "0"]


@pytest.fixture
def refused(tmp_path, monkeypatch):
    """(intent, endpoints) in TMP_PATH, the switches on a port that refuses connections."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("FABRICGEN_PASSWORD", "not-used")
    (tmp_path / "fabric.yaml").write_text(INTENT)
    plan = run_checks(load_intent(tmp_path / "fabric.yaml")).plan
    # bound and never listening: the kernel answers a SYN with RST; nobody else can take the port
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    port = closed.getsockname()[1]
    (tmp_path / "endpoints.yml").write_text(yaml.safe_dump(
        {"switches": {sw.name: {"host": "127.0.0.1", "port": port, "username": "cumulus"}
                      for sw in plan.switches}}))
    (tmp_path / "known_hosts").write_text("")
    yield plan
    closed.close()


def _cli(*args: str):
    return CliRunner().invoke(app, ["verify", "fabric.yaml", "--endpoints", "endpoints.yml", *args])


@pytest.mark.parametrize("fmt", ["table", "json"])
def test_run_verify_prints_nothing_and_the_cli_prints_its_run(refused, capfd, fmt):
    run = run_verify("fabric.yaml", endpoints="endpoints.yml", fmt=fmt, interval_s=0, settle_s=0)
    assert capfd.readouterr() == ("", "")
    assert run.exit_code == 1 and run.report is not None and run.output is None
    assert {o.status for o in run.report.outcomes if o.device in {sw.name for sw in refused.switches}} == {"unknown"}
    assert run.problems == ("note: host-roce and host-counters skipped: endpoints.yml lists no hosts",)
    if fmt == "json":
        doc = json.loads(verify_stdout(run))
        assert doc["summary"]["unknown"] == doc["summary"]["checked"] > 0 and doc["summary"]["failed"] == 0

    result = _cli("--format", fmt, *FAST)
    assert result.exit_code == run.exit_code
    assert result.stdout == verify_stdout(run)
    assert result.stderr == "".join(f"{line}\n" for line in run.problems)


def test_with_output_the_report_is_in_the_file_and_nothing_on_stdout(refused, tmp_path, capfd):
    run = run_verify("fabric.yaml", endpoints="endpoints.yml", fmt="json", interval_s=0, settle_s=0,
                     output=str(tmp_path / "verify.json"))
    assert capfd.readouterr() == ("", "")
    assert run.output == str(tmp_path / "verify.json") and verify_stdout(run) == ""
    assert json.loads((tmp_path / "verify.json").read_text())["summary"] == run.report.summary()


def test_a_report_that_cannot_be_written_is_one_line_and_exit_1(refused, tmp_path, capfd):
    (tmp_path / "a-file").write_text("")          # not a directory, even for root
    target = tmp_path / "a-file" / "verify.json"
    run = run_verify("fabric.yaml", endpoints="endpoints.yml", fmt="json", interval_s=0, settle_s=0,
                     output=str(target))
    assert capfd.readouterr() == ("", "")
    assert run.exit_code == 1 and verify_stdout(run) == "" and not target.exists()
    # the write error replaces the notes: one line, what could not be written and why
    assert len(run.problems) == 1 and run.problems[0].startswith(f"error: cannot write {target}: "), run.problems

    result = _cli("--format", "json", "-o", str(target), *FAST)
    assert (result.exit_code, result.stdout, result.stderr) == (1, "", run.problems[0] + "\n")


@pytest.mark.parametrize(("kwargs", "code", "line"), [
    ({"fmt": "yaml"}, 2, "error: --format 'yaml': use table, json, junit, prometheus"),
    ({"settle_s": -1}, 2, "error: --interval, --settle and the thresholds must be >= 0, --prefix-tolerance in [0, 1)"),
    ({"limit": "nothing*"}, 1, None),
])
def test_refusals_are_returned_not_printed(refused, capfd, kwargs, code, line):
    run = run_verify("fabric.yaml", endpoints="endpoints.yml", **kwargs)
    assert capfd.readouterr() == ("", "")
    assert run.exit_code == code and run.report is None and verify_stdout(run) == ""
    assert len(run.problems) == 1 and run.problems[0].startswith("error: ")
    if line is not None:
        assert run.problems == (line,)


def test_run_soak_prints_nothing_and_the_cli_prints_its_run(refused, capfd):
    run = run_soak("fabric.yaml", duration="1s", interval_s=1.0, endpoints="endpoints.yml", fmt="json")
    assert capfd.readouterr() == ("", "")
    doc = json.loads(soak_stdout(run))
    # every read refused: no window was watched, so the soak could not say the fabric is clean
    assert run.exit_code == 1 and doc["summary"]["findings"] == 0 and doc["unknown"]

    bad = run_soak("fabric.yaml", duration="forever", interval_s=1.0, endpoints="endpoints.yml")
    assert capfd.readouterr() == ("", "")
    assert bad.exit_code == 2 and soak_stdout(bad) == "" and bad.problems[0].startswith("error: --soak ")
    result = CliRunner().invoke(app, ["verify", "fabric.yaml", "--endpoints", "endpoints.yml", "--soak", "forever"])
    assert (result.exit_code, result.stdout, result.stderr) == (2, "", bad.problems[0] + "\n")
