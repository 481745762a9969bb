"""FG340 (issue 33, item 4): a drain hook with scheduler none is taken as drained when it exits, and
`scontrol update State=DRAIN` exits while jobs run on (scontrol(1)): validate says so with the
fix, deploy refuses with one line and pushes nothing, and deploy.hosts.idle declares a fleet
that runs no jobs."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from generator.checks.runner import run_checks
from generator.cli import app
from generator.intent.loader import load_intent
from tests.unit.test_host_render_fleet import _write

SLURM_DRAIN = "scontrol update NodeName={host} State=DRAIN Reason=fabricgen:deploy"
UNDRAIN = "scontrol update NodeName={host} State=RESUME"


def _fg340(path: Path) -> list[str]:
    return [f"{f.path}: {f.message}" for f in run_checks(load_intent(path)).errors if f.code == "FG340"]


@pytest.mark.parametrize(("hosts", "found"), [
    ({"drain": SLURM_DRAIN, "undrain": UNDRAIN}, ["deploy.hosts.scheduler"]),
    ({"drain": SLURM_DRAIN, "undrain": UNDRAIN, "idle": True}, []),
    ({"drain": SLURM_DRAIN, "undrain": UNDRAIN, "scheduler": "slurm"}, []),
    ({"drain": SLURM_DRAIN, "undrain": UNDRAIN, "scheduler": "slurm", "idle": True}, ["deploy.hosts.idle"]),
    ({}, []),
    ({"idle": True}, []),
])
def test_a_drain_hook_needs_a_scheduler_or_idle_hosts(tmp_path, hosts, found):
    got = _fg340(_write(tmp_path, "medium", **{"deploy.hosts": hosts}))
    assert [line.split(":")[0] for line in got] == found, got


def test_the_finding_names_the_fix(tmp_path):
    [line] = _fg340(_write(tmp_path, "medium", **{"deploy.hosts": {"drain": SLURM_DRAIN, "undrain": UNDRAIN}}))
    assert "scheduler: slurm or kubernetes" in line and "idle: true" in line, line


def test_explain():
    r = CliRunner().invoke(app, ["validate", "--explain", "FG340"])
    assert r.exit_code == 0 and r.output.startswith("FG340 (error): ") and "idle" in r.output


def test_validate_and_deploy_refuse_with_one_line_and_push_nothing(tmp_path, monkeypatch):
    path = _write(tmp_path, "medium", **{"deploy.hosts": {"drain": SLURM_DRAIN, "undrain": UNDRAIN}})
    r = CliRunner().invoke(app, ["validate", str(path)])
    assert r.exit_code != 0 and "FG340 deploy.hosts.scheduler" in r.output, r.output

    # deploy stops before anything reaches a host: the host playbook is never run
    import generator.deploy.hosts as hosts_mod

    def never(*_a, **_kw):
        raise AssertionError("the host playbook ran")
    monkeypatch.setattr(hosts_mod, "run_hosts_playbook", never)
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(app, ["deploy", str(path), "--only", "hosts", "--yes"])
    assert r.exit_code == 1, r.output
    lines = [line for line in r.output.splitlines() if "FG340" in line]
    assert len(lines) == 1 and lines[0].startswith(f"{path}:") and "error FG340 deploy.hosts.scheduler" in lines[0]
    assert "nothing was pushed" in r.output
    assert not list(tmp_path.glob("**/inventory.yml")), "nothing rendered for the hosts"



def test_the_readme_drain_example_validates(tmp_path):
    """The README's hosts section pairs its drain example with the scheduler that runs the jobs."""
    import yaml

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    blocks = [b.split("```")[0] for b in readme.split("```yaml")[1:] if "drain:" in b.split("```")[0]]
    assert blocks, "the README shows a drain hook"
    for block in blocks:
        hosts = yaml.safe_load(block)["deploy"]["hosts"]
        path = _write(tmp_path, "medium", **{"deploy.hosts": hosts})
        errors = run_checks(load_intent(path)).errors
        assert errors == [], [f.one_line() for f in errors]
