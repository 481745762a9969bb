"""Issue 15, finding 2: two operators could deploy the same fabric at once.

Original reproduction: two `fabricgen deploy` runs started from two directories both took
the lock (it lived in ./backups of each), both wrote /tmp/fabricgen-candidate.yaml on the
switches, one exited 0 while drift showed half the switches on the other intent. Here the
same two commands run against the lab: the lock lives in the state directory, the second
run fails at once naming the holder, candidates are per run and checked with sha256sum, and
a switch with someone else's pending work is refused.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess

import pytest

from generator.devices.ssh import CommandFailed
from tests.integration.small_fabric import CANARY, SWITCHES, small_fabric, wait_until

pytestmark = pytest.mark.integration


@pytest.fixture
def fab(tmp_path, lab_start):
    return small_fabric(tmp_path, lab_start)


def test_two_deploys_from_two_directories_one_waits_for_nobody(fab, tmp_path):
    first_dir, second_dir = tmp_path / "alice", tmp_path / "bob"
    first_dir.mkdir()
    second_dir.mkdir()
    env = {k: v for k, v in fab.env.items() if k != "FABRICGEN_BACKUP_DIR"}   # ./backups, as in the report
    # The first run stays in its backups, holding the lock, until the hold is lifted below: on a
    # machine of any load it is still running while the second one tries (its SSH timeout
    # outlasts the hold).
    fab.lab.set_faults(CANARY, hold="any")
    first = fab.start(fab.deploy_command(), cwd=first_dir, env={**env, "FABRICGEN_SSH_TIMEOUT": "300"})
    try:
        assert wait_until(lambda: first.poll() is not None or (fab.lock.exists() and fab.lab.holding(CANARY)),
                          120, interval=0.05), "the first deploy never took the lock and reached the canary"
        assert first.poll() is None, "the first deploy ended early"
        second = fab.run(fab.deploy_command(), cwd=second_dir, env=env)
        # the first run cannot end while its canary is held: the second one returned without it
        assert first.poll() is None, "the second deploy waited for the first"
        assert second.returncode == 1, second.stdout + second.stderr
        errors = [line for line in second.stderr.splitlines() if line.startswith("error:")]
        assert len(errors) == 1, second.stderr
        assert "another deploy of fabric 'tiny' is running" in errors[0]
        assert f"pid {first.pid}" in errors[0] and str(fab.lock) in errors[0]
        holder = json.loads(fab.lock.read_text())
        assert set(holder) == {"fabric", "user", "host", "pid", "started", "run_id"}
        assert holder["pid"] == first.pid and holder["host"] == os.uname().nodename

        status = fab.run(fab.command("lock", "status", str(fab.intent)))
        assert status.returncode == 3 and f"pid {first.pid}" in status.stdout, status.stdout + status.stderr
        # a live holder on this host is stopped, not broken
        refused = fab.run(fab.command("lock", "break", str(fab.intent), "--yes"))
        assert refused.returncode == 1 and f"kill -TERM {first.pid}" in refused.stderr
        assert fab.lock.exists()
    finally:
        fab.lab.set_faults(CANARY)
        out, err = first.communicate(timeout=180)
    assert first.returncode == 0, out + err
    assert "3 to change" in out and "switches deployed" in out
    assert not fab.lock.exists()
    assert all(fab.deployed(name) for name in SWITCHES)
    assert not (second_dir / "backups").exists(), "the refused run must not have backed anything up"


def test_stale_lock_is_reported_then_broken(fab):
    dead = subprocess.Popen(["true"])
    dead.wait()
    fab.lock.parent.mkdir(parents=True, exist_ok=True)
    fab.lock.write_text(json.dumps({"fabric": "tiny", "user": "carol", "host": os.uname().nodename,
                                    "pid": dead.pid, "started": "2024-05-01T10:00:00Z", "run_id": "r1"}))
    refused = fab.run(fab.deploy_command())
    assert refused.returncode == 1
    assert "stale deploy lock" in refused.stderr and str(dead.pid) in refused.stderr
    assert "fabricgen lock break" in refused.stderr
    assert fab.lock.exists(), "a stale lock is never taken over silently"

    status = fab.run(fab.command("lock", "status", str(fab.intent)))
    assert status.returncode == 3 and "stale" in status.stdout and "carol" in status.stdout
    asked = subprocess.run(fab.command("lock", "break", str(fab.intent)), input="", capture_output=True,
                           text=True, env=fab.env, timeout=60)
    assert asked.returncode == 1 and fab.lock.exists(), "break without --yes and no terminal breaks nothing"
    broke = fab.run(fab.command("lock", "break", str(fab.intent), "--yes"))
    assert broke.returncode == 0 and f"pid {dead.pid}" in broke.stdout and "carol" in broke.stdout
    assert not fab.lock.exists()
    assert fab.run(fab.command("lock", "status", str(fab.intent))).returncode == 0
    done = fab.run(fab.deploy_command())
    assert done.returncode == 0, done.stdout + done.stderr


def test_lock_does_not_depend_on_the_current_directory(fab, tmp_path, monkeypatch):
    """Without FABRICGEN_STATE_DIR the lock is in $XDG_STATE_HOME/fabricgen (or /var/lib/fabricgen)."""
    from generator.deploy.lock import SHARED_STATE_DIR, lock_path

    monkeypatch.delenv("FABRICGEN_STATE_DIR")
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg"))
    expected = (SHARED_STATE_DIR if SHARED_STATE_DIR.is_dir() else tmp_path / "xdg" / "fabricgen") / "tiny"
    for cwd in (tmp_path, tmp_path / "backups"):
        cwd.mkdir(exist_ok=True)
        monkeypatch.chdir(cwd)
        assert lock_path("tiny") == expected / "deploy.lock"
    monkeypatch.setenv("XDG_STATE_HOME", "relative/dir")       # the XDG spec: ignore a relative path
    assert lock_path("tiny").is_absolute()


def _lab_files(fab, name: str) -> set[str]:
    return {p.name for p in (fab.lab.directory / "devices" / name / "tmp").iterdir()}


def test_candidates_are_per_run_and_checked_on_the_switch(fab):
    first = fab.run(fab.deploy_command("--dry-run"))
    assert first.returncode == 0, first.stdout + first.stderr
    second = fab.run(fab.deploy_command("--dry-run"))
    assert second.returncode == 0
    files = _lab_files(fab, CANARY)
    candidates = sorted(f for f in files if f.endswith("-candidate.yaml"))
    assert len(candidates) == 2, files          # one per run, never the shared /tmp/fabricgen-candidate.yaml
    assert "fabricgen-candidate.yaml" not in files
    assert all(c.startswith("fabricgen-") for c in candidates)

    # The lab's sha256sum answers as coreutils does, for the same bytes.
    driver = fab.session(CANARY)
    try:
        path = "/tmp/" + candidates[0]
        local = fab.lab.directory / "devices" / CANARY / "tmp" / candidates[0]
        output = driver._send(f"sha256sum {path}")
        if shutil.which("sha256sum"):
            real = subprocess.run(["sha256sum", str(local)], capture_output=True, text=True, check=True).stdout
            assert output.split()[0] == real.split()[0]
        assert output == f"{hashlib.sha256(local.read_bytes()).hexdigest()}  {path}"
        assert driver._send("sha256sum /tmp/nope").startswith("sha256sum: /tmp/nope: No such file")

        # An upload that another writer changed (the half-written candidate of the report) is refused.
        driver._upload("- set: {}\n", "/tmp/fabricgen-test-candidate.yaml")      # verified: passes
        (local.parent / "fabricgen-test-candidate.yaml").write_text("- set: {system: {}}\n")
        with pytest.raises(CommandFailed, match="does not match what was sent"):
            driver._verify_upload("/tmp/fabricgen-test-candidate.yaml", hashlib.sha256(b"- set: {}\n").hexdigest())
    finally:
        driver.close()


def test_a_pending_revision_of_someone_else_is_refused(fab):
    """An operator's `nv set` waits unapplied: our replace would take it over and apply it."""
    before = {name: fab.running(name) for name in SWITCHES}
    driver = fab.session(CANARY)
    try:
        driver._check("nv set service lldp tx-interval 17")
    finally:
        driver.close()
    run = fab.run(fab.deploy_command())
    assert run.returncode == 1, run.stdout + run.stderr
    assert "unapplied edits in its pending revision" in run.stdout
    assert "nothing was pushed" in run.stderr
    assert {name: fab.running(name) for name in SWITCHES} == before
    driver = fab.session(CANARY)
    try:
        assert "tx-interval: 17" in driver.pending_changes().replace("'", ""), "their edits are left alone"
    finally:
        driver.close()


def test_a_pending_confirm_of_someone_else_is_refused(fab):
    driver = fab.session(CANARY)
    try:
        driver._check("nv set service lldp tx-interval 18")
        driver.commit_config(message="another bastion", revert_in=300)
    finally:
        driver.close()
    run = fab.run(fab.deploy_command())
    assert run.returncode == 1
    assert "already pending confirmation" in run.stdout
    assert fab.pending(CANARY), "the other run's commit is neither confirmed nor rolled back by us"


@pytest.mark.parametrize(("variable", "value", "expected"), [
    # the report's command: FABRICGEN_CONFIRM_TIMEOUT=1 was accepted although the intent refuses < 30
    ("FABRICGEN_CONFIRM_TIMEOUT", "1", "FABRICGEN_CONFIRM_TIMEOUT=1: deploy.confirm_timeout: Input should be "
                                       "greater than or equal to 30 (got 1)"),
    ("FABRICGEN_CONFIRM_TIMEOUT", "3601", "FABRICGEN_CONFIRM_TIMEOUT=3601: deploy.confirm_timeout: Input should "
                                          "be less than or equal to 3600"),
    ("FABRICGEN_CONFIRM_TIMEOUT", "20s", "is not a whole number of seconds"),
    ("FABRICGEN_SSH_TIMEOUT", "0", "FABRICGEN_SSH_TIMEOUT=0: give 1-600 seconds"),
    ("FABRICGEN_SSH_TIMEOUT", "-5", "is not a whole number of seconds"),
])
def test_environment_overrides_are_validated(fab, variable, value, expected):
    before = fab.running(CANARY)
    run = fab.run(fab.deploy_command(), env={**fab.env, variable: value})
    assert run.returncode == 1
    errors = [line for line in run.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and expected in errors[0] and "nothing was pushed" in errors[0], run.stderr
    assert fab.running(CANARY) == before
    assert not fab.lock.exists()


def test_the_intent_floor_holds_for_the_lab_too(fab):
    """The product does not know the lab (issue 26, item 6): below the intent's 30 s floor is refused
    on loopback, in the running lab's own directory, exactly as for a real switch."""
    command = fab.deploy_command()
    run = fab.run(command, env={**fab.env, "FABRICGEN_CONFIRM_TIMEOUT": "20"})
    assert run.returncode == 1
    assert ("error: FABRICGEN_CONFIRM_TIMEOUT=20: deploy.confirm_timeout: Input should be greater than or "
            "equal to 30 (got 20)") in run.stderr
    ok = fab.run(command, env={**fab.env, "FABRICGEN_CONFIRM_TIMEOUT": "30"})
    assert ok.returncode == 0, ok.stdout + ok.stderr
