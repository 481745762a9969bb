"""run_deploy is a library call: it prints nothing and returns a DeployRun, whose lines the CLI prints
(issue 35). Against the SSH lab, a dry run of the 3-switch fabric."""

from __future__ import annotations

import io
import re

import pytest
from rich.console import Console

from generator.deploy.deploy_run import STDERR, STDOUT, RolloutTable
from generator.deploy.report import WOULD_CHANGE
from generator.deploy.rollout import run_deploy
from generator.deploy.rollout_report import ConsolePresenter
from tests.deploy_cli import deploy_cli
from tests.integration.small_fabric import CANARY, SWITCHES, small_fabric

pytestmark = pytest.mark.integration


def printed(run) -> tuple[str, str]:
    """What the CLI prints for RUN on a pipe (stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    ConsolePresenter(Console(file=out, highlight=False, soft_wrap=True, width=120),
                     Console(file=err, highlight=False, soft_wrap=True)).finish(run)
    return out.getvalue(), err.getvalue()


def test_a_dry_run_prints_nothing_itself_and_returns_what_the_cli_prints(tmp_path, lab_start, capfd, monkeypatch):
    fab = small_fabric(tmp_path, lab_start)
    for key, value in fab.env.items():
        monkeypatch.setenv(key, value)
    before = {n: fab.running(n) for n in SWITCHES}
    capfd.readouterr()

    run = run_deploy(str(fab.intent), endpoints=fab.endpoints, only="switches", dry_run=True)

    assert capfd.readouterr() == ("", ""), "run_deploy printed"
    assert run.exit_code == 0, run.lines(STDERR)
    assert run.signal is None and run.hosts is None
    # the lab's switches boot without the fabric's config: every one would change, none was touched
    assert {n: r.status for n, r in run.results.items()} == dict.fromkeys(SWITCHES, WOULD_CHANGE)
    assert run.results[CANARY].label == "canary" and run.results[CANARY].wave == 1
    assert {n: fab.running(n) for n in SWITCHES} == before
    assert run.backup_dir is not None and sorted(p.name for p in run.backup_dir.iterdir()) == [
        f"{n}.yaml" for n in SWITCHES]
    said = run.lines(STDOUT)
    assert said[0] == (f"tiny: 3 switch(es): 3 to change, 0 unchanged, 0 failed before any change; "
                       f"backups in {run.backup_dir}")
    # the intent has no `management:` section: the switches keep their own
    assert said[1].startswith("kept the switches' own management (eth0, ")
    assert said[2] == "dry run: 3 switch(es) in 3 wave(s): would change 3, unchanged 0, refused 0, failed 0"
    # one line a switch in rollout order: the canary, then one spine of the pair a wave
    assert [re.search(r"tiny-\S+", ln).group() for ln in said[3:6]] == [CANARY, "tiny-spine-1", "tiny-spine-2"]
    assert said[-1] == "dry run: nothing was committed; --diff prints each switch's diff"
    assert run.lines(STDERR) == []
    assert [s.item.dry_run for s in run.said if isinstance(s.item, RolloutTable)] == [True]

    # `fabricgen deploy` prints exactly these: its own run differs only in the backup directory and
    # the progress bars (stderr)
    done = deploy_cli(fab.intent, endpoints=fab.endpoints, only="switches", dry_run=True)
    assert done.returncode == run.exit_code
    [cli_backups] = re.findall(r"backups in (\S+)", done.stdout)
    out, err = printed(run)
    assert done.stdout == out.replace(str(run.backup_dir), cli_backups)
    assert "rollout (dry run)" in out and err == ""
    assert done.stderr.startswith("backup + diff") and "3/3" in done.stderr
