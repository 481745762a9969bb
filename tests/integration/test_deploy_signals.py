"""Issue 15, finding 8: interrupted deploys and unconfirmed commits.

Original reproduction: SIGTERM to a running `fabricgen deploy` exited 143 and left the lock
behind and the wave's commits pending; `fabricgen drift` then called a switch with an
unconfirmed commit in sync. Here the same commands run against the lab with a long confirm
timer (600 s, so only the deploy's own rollback can undo the commit within the test) and a
`hold` fault: the lab holds the switch's next command line (after the commit, or any) until the
test lifts it, so the signal lands at that point on a machine of any load.
"""

from __future__ import annotations

import json
import os
import signal

import pytest

from generator.checks.runner import run_checks
from generator.devices.sonic import SonicDriver
from generator.intent.loader import load_intent
from generator.lab.control import LabDevice
from tests.integration.small_fabric import (
    CANARY,
    SWITCHES,
    SmallFabric,
    signal_taken,
    small_fabric,
    wait_until,
)

pytestmark = pytest.mark.integration


@pytest.fixture
def fab(tmp_path, lab_start):
    return small_fabric(tmp_path, lab_start, confirm=600)


def held_env(fab) -> dict:
    """A held command line never times out on the deploy's side, however long the machine takes to
    deliver the signal: the deploy is still at that line when the signal comes."""
    return {**fab.env, "FABRICGEN_SSH_TIMEOUT": "300"}


def _interrupt_while_held(fab, deploy, sig: int, names) -> tuple[str, str]:
    """The lab holds a command line of one of NAMES (fault `hold`): signal the deploy there, lift
    the hold once the kernel delivered the signal, and collect the deploy's output."""
    try:
        # and the deploy holds its lock: a line held before it (the `exit` of a session the test
        # closed just before) says nothing about the deploy
        assert wait_until(lambda: deploy.poll() is not None
                          or (fab.lock.exists() and any(fab.lab.holding(n) for n in names)), 120,
                          interval=0.05), "no switch held a command line of the deploy within 120 s"
        assert deploy.poll() is None, "the deploy ended before any switch held it: " + deploy.communicate()[1]
        deploy.send_signal(sig)
        assert wait_until(lambda: deploy.poll() is not None or signal_taken(deploy.pid, sig), 60, interval=0.01)
        for name in names:
            fab.lab.set_faults(name)
        return deploy.communicate(timeout=120)
    finally:
        for name in names:
            fab.lab.set_faults(name)
        if deploy.poll() is None:
            deploy.kill()
            deploy.communicate()


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_signal_mid_wave_rolls_back_and_releases_the_lock(fab, sig, code):
    before = {name: fab.running(name) for name in SWITCHES}
    # the canary holds the first line after its commit (the post-check) while that commit is
    # pending: the signal comes mid-wave, whatever the machine's load
    fab.lab.set_faults(CANARY, hold="pending")
    deploy = fab.start(fab.deploy_command(), env=held_env(fab))
    out, err = _interrupt_while_held(fab, deploy, sig, [CANARY])
    assert deploy.returncode == code, out + err
    last = err.strip().splitlines()[-1]
    assert last.startswith(f"interrupted by {sig.name}: rolled back 1 pending commit(s) ({CANARY})"), err
    assert last.endswith("the deploy lock was released"), last
    assert "2 not started" in last
    assert not fab.lock.exists()
    # rolled back by the deploy itself, not by the 600 s timer
    assert not fab.pending(CANARY)
    assert {name: fab.running(name) for name in SWITCHES} == before
    # and the next deploy runs normally
    again = fab.run(fab.deploy_command(), env={**fab.env, "FABRICGEN_CONFIRM_TIMEOUT": "30"})
    assert again.returncode == 0, again.stdout + again.stderr


def test_signal_before_any_commit_pushes_nothing(fab):
    before = {name: fab.running(name) for name in SWITCHES}
    for name in SWITCHES:
        fab.lab.set_faults(name, hold="any")       # the backups wait: no commit before the signal
    deploy = fab.start(fab.deploy_command(), env=held_env(fab))
    out, err = _interrupt_while_held(fab, deploy, signal.SIGINT, SWITCHES)
    assert deploy.returncode == 130, out + err
    last = err.strip().splitlines()[-1]
    assert last.startswith("interrupted by SIGINT: ") and "the deploy lock was released" in last, err
    assert "Traceback" not in err
    assert not fab.lock.exists()
    assert {name: fab.running(name) for name in SWITCHES} == before


def test_drift_calls_an_unconfirmed_commit_pending_not_in_sync(fab):
    deployed = fab.run(fab.deploy_command(), env={**fab.env, "FABRICGEN_CONFIRM_TIMEOUT": "30"})
    assert deployed.returncode == 0, deployed.stdout + deployed.stderr
    drift = fab.command("drift", str(fab.intent), "--endpoints", fab.endpoints, "--only", "switches",
                        "--format", "json")
    assert fab.run(drift).returncode == 0

    # the report's case: the running config is the intent, but only until the timer expires
    driver = fab.session(CANARY)
    try:
        # the deployed config applied again with a confirm timer nobody answers
        driver.load_replace_candidate(config=driver.get_config(retrieve="running")["running"])
        driver.commit_config(message="unconfirmed", revert_in=600)
        assert driver.has_pending_commit()
    finally:
        driver.close()
    run = fab.run(drift)
    assert run.returncode == 3, run.stdout + run.stderr
    doc = json.loads(run.stdout)
    assert doc["devices"][CANARY]["status"] == "pending"
    assert "pending confirmation" in doc["devices"][CANARY]["error"]
    assert doc["summary"]["pending"] == 1 and doc["summary"]["in_sync"] == 2
    table = fab.run(fab.command("drift", str(fab.intent), "--endpoints", fab.endpoints, "--only", "switches"))
    assert table.returncode == 3
    assert f"pending: {CANARY}:" in table.stdout and "1 pending" in table.stdout
    prom = fab.run(drift[:-1] + ["prometheus"])
    assert 'fabricgen_drift_devices_total{fabric="tiny",status="pending"} 1' in prom.stdout


SONIC_INTENT = """\
fabric: {name: sd}
topology: {kind: rail-optimized, nodes: 8, rails: 2}
switch_os: {name: sonic, version: "202411"}
addressing: {fabric_links: 10.254.0.0/16}
"""


def test_drift_sonic_pending_confirm_timer(tmp_path, lab_start):
    intent = tmp_path / "fabric.yaml"
    intent.write_text(SONIC_INTENT)
    plan = run_checks(load_intent(intent)).plan
    lab = lab_start([LabDevice(sw.name, "sonic", "202411") for sw in plan.switches], username=plan.deploy_user)
    name = plan.switches[0].name
    driver = SonicDriver("127.0.0.1", lab.username(name), lab.password, timeout=10,
                         optional_args=lab.optional_args(name))
    driver.open()
    try:
        driver.load_merge_candidate(config=json.dumps({"DEVICE_METADATA": {"localhost": {"bgp_asn": "65123"}}}))
        driver.commit_config(revert_in=600)
        assert driver.has_pending_commit()
    finally:
        driver.close()
    fab = SmallFabric(intent, lab, {}, dict(os.environ))
    run = fab.run(fab.command("drift", str(intent), "--endpoints", fab.endpoints, "--only", "switches",
                              "--format", "json"))
    assert run.returncode == 3, run.stdout + run.stderr
    doc = json.loads(run.stdout)
    assert doc["devices"][name]["status"] == "pending", doc["devices"][name]
    others = [d["status"] for n, d in doc["devices"].items() if n != name]
    assert "pending" not in others
