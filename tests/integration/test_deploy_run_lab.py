"""run_deploy is a library call: it prints nothing and returns a DeployRun, whose lines the CLI prints
(issue 35). Against the SSH lab, a dry run of the 3-switch fabric."""

from __future__ import annotations

import io
import os
import pty
import re
import select
import subprocess
import time

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


def read_until(fd: int, wanted: bytes | None, timeout: float) -> bytes:
    """What the terminal shows until WANTED appears (None: until the process closes it)."""
    seen = b""
    deadline = time.monotonic() + timeout
    while wanted is None or wanted not in seen:
        left = deadline - time.monotonic()
        assert left > 0, f"timed out waiting for {wanted!r}; the terminal shows {seen.decode(errors='replace')!r}"
        ready, _, _ = select.select([fd], [], [], left)
        if not ready:
            continue
        try:
            chunk = os.read(fd, 65536)
        except OSError:              # EIO: the process closed the terminal
            chunk = b""
        if not chunk:
            assert wanted is None, f"the terminal closed before {wanted!r}: {seen.decode(errors='replace')!r}"
            return seen
        seen += chunk
    return seen


def test_on_a_terminal_the_plan_comes_before_the_question_and_yes_pushes(tmp_path, lab_start):
    """The lines said before the push question are on the screen when it is asked; `y` pushes."""
    fab = small_fabric(tmp_path, lab_start)
    master, slave = pty.openpty()
    proc = subprocess.Popen(fab.command("deploy", str(fab.intent), "--endpoints", fab.endpoints, "--only", "switches"),
                            stdin=slave, stdout=slave, stderr=slave, env=fab.env, close_fds=True)
    os.close(slave)
    try:
        screen = read_until(master, b"[y/N] ", timeout=120).decode()
        plan = screen.index("tiny: 3 switch(es): 3 to change, 0 unchanged, 0 failed before any change")
        per_switch = [screen.index(f"  {n}: ") for n in SWITCHES]
        question = screen.index("push 3 switch(es) in 3 wave(s)? [y/N] ")
        assert plan < min(per_switch) and max(per_switch) < question
        assert "rollout" not in screen                 # the table comes after the push
        os.write(master, b"y\r")
        rest = read_until(master, None, timeout=180).decode()
        assert proc.wait(timeout=30) == 0, rest
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(master)
    assert "switches deployed in" in rest and "rollout" in rest
    assert all(fab.deployed(n) for n in SWITCHES)
