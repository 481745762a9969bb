"""`fabricgen deploy` against the lab: real SSH, real napalm drivers, real confirm timers.

The fabric is rail-optimized, 64 nodes x 2 rails: 4 leaves + 2 spines. It is in service (every
switch already runs BGP, as after an earlier deploy), so the waves are
canary (su1-r0) | rail 0 (su2-r0) | rail 1 (su1-r1, su2-r1) | spine-1 | spine-2.
From the factory (nothing routes yet), with --day0, they are canary | day 0 (4 switches) | day 0 (1 switch).
"""

from __future__ import annotations

import io
import ipaddress
import json
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import paramiko
import pytest

from generator.checks.runner import run_checks
from generator.deploy.candidate import build_candidate
from generator.devices.nvue import NVUEDriver, load_nvue_document
from generator.intent.loader import load_intent
from generator.lab.control import LabDevice, set_wiring, write_device_files
from generator.lab.factory import Management
from generator.lab.flat_files import automation_files
from generator.lab.world import parse_wiring
from generator.render.cabling import render_cabling
from generator.render.managed import managed_set
from generator.render.output import render_files
from generator.render.sonic_managed import SonicManaged
from tests.deploy_cli import deploy_cli

pytestmark = pytest.mark.integration

CONFIRM_SECONDS = 30   # the intent's floor; the lab's clock runs TIME_SCALE times faster (lab up --time-scale)
TIME_SCALE = 3.75      # so the confirm timer expires after 8 s of wall time
INTENT = """\
fabric: {name: dt}
topology:
  kind: rail-optimized
  nodes: 64
  rails: 2
deploy: {confirm_timeout: 60, concurrency: 4}
"""
CANARY, RAIL0, RAIL1_A, RAIL1_B = "dt-leaf-su1-r0", "dt-leaf-su2-r0", "dt-leaf-su1-r1", "dt-leaf-su2-r1"
SPINES = ("dt-spine-1", "dt-spine-2")


@dataclass
class DeployFabric:
    intent: Path
    lab: object                 # conftest.LabHandle
    rendered: dict[str, str]
    backups: Path

    @property
    def endpoints(self) -> str:
        return str(self.lab.directory / "endpoints.yml")

    @property
    def names(self) -> list[str]:
        return sorted(self.rendered)

    def running(self, name: str) -> dict:
        device = self.lab.driver(name)
        device.open()
        try:
            return load_nvue_document(device.get_config(retrieve="running")["running"])
        finally:
            device.close()

    def snapshot(self) -> dict[str, dict]:
        return {n: self.running(n) for n in self.names}

    def deployed(self, name: str) -> bool:
        """The managed subtrees are the rendered file and the switch kept its own management
        (the intent has no `management:` section): eth0 in VRF mgmt, the cumulus user, the ACLs."""
        running = self.running(name)
        mine, theirs = managed_set(False).split(running)
        return (mine == load_nvue_document(self.rendered[name])
                and theirs["interface"]["eth0"]["ip"]["vrf"] == "mgmt"
                and "cumulus" in theirs["system"]["aaa"]["user"]
                and set(theirs["system"]["control-plane"]["acl"]) == {"acl-default-dos", "acl-default-whitelist"})

    def deploy(self, capsys, **kwargs) -> tuple[int, str, str]:
        kwargs = {"endpoints": self.endpoints, "yes": True, **kwargs}
        done = deploy_cli(self.intent, **kwargs)
        return done.returncode, done.stdout, done.stderr


# An earlier deploy's BGP, with another AS than the plan's: the switch routes, so it carries traffic
IN_SERVICE = "- set:\n    router:\n      bgp:\n        autonomous-system: 65999\n        enable: on\n"


def put_in_service(lab, name: str) -> None:
    device = lab.driver(name)
    device.open()
    try:
        device.load_merge_candidate(config=IN_SERVICE)
        device.commit_config()
    finally:
        device.close()


@pytest.fixture
def deploy_fabric(tmp_path, lab_start, monkeypatch) -> DeployFabric:
    """Every switch boots with IN_SERVICE applied (LabDevice.applied: what put_in_service leaves,
    without six SSH commits per test)."""
    return _fabric(tmp_path, lab_start, monkeypatch, applied=IN_SERVICE)


@pytest.fixture
def factory_fabric(tmp_path, lab_start, monkeypatch) -> DeployFabric:
    return _fabric(tmp_path, lab_start, monkeypatch)


def _fabric(tmp_path, lab_start, monkeypatch, applied: str | None = None) -> DeployFabric:
    intent = tmp_path / "fabric.yaml"
    intent.write_text(INTENT)
    plan = run_checks(load_intent(intent)).plan
    rendered = {rel.split("/")[1]: text for rel, text in render_files(plan, INTENT).items()
                if rel.startswith("switches/")}
    lab = lab_start([LabDevice(sw.name, "cumulus", "5.11", applied=applied) for sw in plan.switches],
                    time_scale=TIME_SCALE)
    backups = tmp_path / "backups"
    monkeypatch.setenv("FABRICGEN_BACKUP_DIR", str(backups))
    monkeypatch.setenv("FABRICGEN_CONFIRM_TIMEOUT", str(CONFIRM_SECONDS))
    monkeypatch.setenv("FABRICGEN_SSH_TIMEOUT", "4")
    monkeypatch.chdir(tmp_path)
    return DeployFabric(intent, lab, rendered, backups)


def deploy_lock(fabric: str) -> Path:
    """The fabric's lock in the test's state directory (tests/conftest.py sets FABRICGEN_STATE_DIR)."""
    return Path(os.environ["FABRICGEN_STATE_DIR"]) / fabric / "deploy.lock"


def wait_until(predicate, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.3)
    return predicate()



def test_a_lab_booted_in_service_is_the_switch_a_commit_left(lab_start):
    """deploy_fabric's LabDevice.applied stands for put_in_service: the same running and startup
    config, the same applied revision, nothing pending."""
    committed = lab_start([LabDevice("sw", "cumulus", "5.11")], subdir="committed")
    put_in_service(committed, "sw")
    booted = lab_start([LabDevice("sw", "cumulus", "5.11", applied=IN_SERVICE)], subdir="booted")
    seen = []
    for lab in (committed, booted):
        driver = lab.driver("sw")
        driver.open()
        try:
            config = driver.get_config(retrieve="all")
            seen.append((_unsalted(load_nvue_document(config["running"])),
                         _unsalted(load_nvue_document(config["startup"])),
                         driver._pending_confirm(),
                         [(e["rev-id"], e["state"]) for e in json.loads(driver._check(driver.commands.history_json))]))
        finally:
            driver.close()
    assert seen[0] == seen[1]
    assert seen[1][0]["router"]["bgp"]["autonomous-system"] == "65999"


def _unsalted(config: dict) -> dict:
    """Without the password hashes: each lab salts its own."""
    for user in config["system"]["aaa"]["user"].values():
        user.pop("hashed-password", None)
    return config

def test_deploy_end_to_end_through_the_cli(deploy_fabric):
    fab = deploy_fabric
    command = [sys.executable, "-m", "generator.cli", "deploy", str(fab.intent), "--endpoints", fab.endpoints, "--yes"]
    first = subprocess.run(command, capture_output=True, text=True, timeout=120, env=os.environ)
    assert first.returncode == 0, first.stdout + first.stderr
    assert "6 to change" in first.stdout and "switches deployed" in first.stdout
    assert fab.lab.password not in first.stdout + first.stderr
    for name in fab.names:
        assert fab.deployed(name), name
    backups = sorted(p for p in (fab.backups / "dt").iterdir() if p.is_dir())
    assert sorted(p.name for p in backups[0].iterdir()) == sorted(f"{n}.yaml" for n in fab.names)
    assert not deploy_lock("dt").exists()

    second = subprocess.run(command, capture_output=True, text=True, timeout=120, env=os.environ)
    assert second.returncode == 0, second.stdout + second.stderr
    assert "0 to change, 6 unchanged" in second.stdout


def test_deploy_dry_run_changes_nothing(deploy_fabric, capsys, monkeypatch, tmp_path):
    import yaml

    before = deploy_fabric.snapshot()
    # The password from the environment this time (password_env), not from the lab's file.
    endpoints = yaml.safe_load(Path(deploy_fabric.endpoints).read_text())
    del endpoints["password_file"]
    endpoints["password_env"] = "FABRICGEN_DT_SWITCH_PASSWORD"
    by_env = deploy_fabric.lab.directory / "endpoints-env.yml"
    by_env.write_text(yaml.safe_dump(endpoints))
    monkeypatch.setenv("FABRICGEN_DT_SWITCH_PASSWORD", deploy_fabric.lab.password)
    code, out, _ = deploy_fabric.deploy(capsys, dry_run=True, yes=False, endpoints=str(by_env))
    assert code == 0, out
    assert "6 to change" in out and "nothing was committed; --diff prints each switch's diff" in out
    # one line per switch in rollout order, counts that add up, no diff body
    lines = out.splitlines()
    start = lines.index("dry run: 6 switch(es) in 5 wave(s): would change 6, unchanged 0, refused 0, failed 0")
    rows = [ln.split() for ln in lines[start + 1:start + 7]]
    assert [(r[1], r[-6]) for r in rows] == [("1", CANARY), ("2", RAIL0), ("3", RAIL1_A), ("3", RAIL1_B),
                                             ("4", SPINES[0]), ("5", SPINES[1])]
    assert all(" ".join(r[-5:-3]) == "would change" and r[-3].startswith("(") for r in rows)
    total = next(ln for ln in lines if " total " in ln)
    assert [c.strip() for c in total.split("│")[3:-1]] == ["6", "0", "0", "0"]
    assert f"--- {CANARY}" not in out and len(lines) < 40
    assert deploy_fabric.snapshot() == before

    code, out, _ = deploy_fabric.deploy(capsys, dry_run=True, show_diff=True)
    assert code == 0, out
    assert f"--- {CANARY} (" in out and len(out.splitlines()) > len(lines) + 6
    assert deploy_fabric.snapshot() == before


def test_deploy_connection_dropped_mid_wave(deploy_fabric, capsys, monkeypatch):
    fab = deploy_fabric
    before = fab.snapshot()
    victim_port = fab.lab.port(RAIL1_B)
    real_commit = NVUEDriver.commit_config

    def commit_then_cut(self, message="", revert_in=None):
        real_commit(self, message, revert_in)
        if self.port == victim_port:
            # The switch has applied our commit; now it vanishes from the management network.
            fab.lab.set_faults(RAIL1_B, refuse_auth=True, drop_after_commands=0)

    monkeypatch.setattr(NVUEDriver, "commit_config", commit_then_cut)
    code, out, err = fab.deploy(capsys)
    assert code == 1, out + err
    assert "wave 3 (leaves rail 1) failed" in err
    assert f"{RAIL1_B} (wave 3): failed: post-check after the commit" in out
    assert "confirm timer reverts it" in out
    for name in (CANARY, RAIL0):
        assert fab.deployed(name), name
    for name in (RAIL1_A, *SPINES):
        assert fab.running(name) == before[name], f"{name} must be untouched or rolled back"
    fab.lab.set_faults(RAIL1_B)
    assert wait_until(lambda: fab.running(RAIL1_B) == before[RAIL1_B], CONFIRM_SECONDS / TIME_SCALE + 15), \
        "the confirm timer did not revert the unreachable switch"


def test_deploy_apply_error_stops_the_rollout(deploy_fabric, capsys):
    fab = deploy_fabric
    before = fab.snapshot()
    fab.lab.set_faults(RAIL0, apply_error="Switchd failed to program the ASIC")
    code, out, err = fab.deploy(capsys)
    assert code == 1
    assert "Switchd failed to program the ASIC" in out
    assert fab.deployed(CANARY)
    for name in (RAIL0, RAIL1_A, RAIL1_B, *SPINES):
        assert fab.running(name) == before[name], name
    assert "wave 2 (leaves rail 0) failed" in err


def test_deploy_auth_failure_pushes_nothing(deploy_fabric, capsys):
    fab = deploy_fabric
    before = fab.snapshot()
    fab.lab.set_faults(SPINES[1], refuse_auth=True)
    code, out, err = fab.deploy(capsys)
    assert code == 1
    assert f"{SPINES[1]}" in out and "authentication failed" in out
    assert "nothing was pushed" in err
    assert fab.lab.password not in out + err
    fab.lab.set_faults(SPINES[1])
    assert fab.snapshot() == before


def test_deploy_host_key_mismatch_refused(deploy_fabric, capsys):
    fab = deploy_fabric
    before = fab.snapshot()
    port = fab.lab.port(SPINES[0])
    entry = f"[127.0.0.1]:{port}"
    known = paramiko.HostKeys(str(fab.lab.known_hosts))
    assert entry in known
    impostor = paramiko.Ed25519Key.from_private_key(io.StringIO(_new_ed25519_pem()))
    for key_type in list(known[entry].keys()):
        del known[entry][key_type]
    known.add(entry, impostor.get_name(), impostor)
    known.save(str(fab.lab.known_hosts))
    code, out, err = fab.deploy(capsys)
    assert code == 1
    assert "host key does not match" in out
    assert "nothing was pushed" in err
    for name in fab.names:
        if name != SPINES[0]:
            assert fab.running(name) == before[name], name


def _new_ed25519_pem() -> str:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    return Ed25519PrivateKey.generate().private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.OpenSSH, serialization.NoEncryption()).decode()


def test_deploy_lock_refuses_a_second_deploy(deploy_fabric, capsys):
    fab = deploy_fabric
    # the switches hold the first run's commands (lab fault `hold`) until the second one has
    # tried: the first holds the lock meanwhile on a machine of any load
    for name in fab.names:
        fab.lab.set_faults(name, hold="any")
    first = subprocess.Popen([sys.executable, "-m", "generator.cli", "deploy", str(fab.intent), "--endpoints",
                              fab.endpoints, "--yes"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env={**os.environ, "FABRICGEN_SSH_TIMEOUT": "300"})
    try:
        lock = deploy_lock("dt")
        assert wait_until(lambda: first.poll() is not None
                          or (lock.exists() and any(fab.lab.holding(n) for n in fab.names)), 120), \
            "the first deploy never took the lock and reached a switch"
        assert first.poll() is None, "the first deploy ended early"
        code, _, err = fab.deploy(capsys)
        assert code == 1
        assert "another deploy of fabric 'dt' is running" in err
        assert str(first.pid) in err
    finally:
        for name in fab.names:
            fab.lab.set_faults(name)
        out, errors = first.communicate(timeout=300)
    assert first.returncode == 0, out + errors
    assert not lock.exists()


def test_deploy_stale_lock_is_reported_not_stolen(deploy_fabric, capsys):
    fab = deploy_fabric
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    lock = deploy_lock("dt")
    lock.parent.mkdir(parents=True)
    lock.write_text(json.dumps({"pid": dead.pid, "host": os.uname().nodename, "started": "then"}) + "\n")
    code, _, err = fab.deploy(capsys)
    assert code == 1
    assert "stale deploy lock" in err and str(dead.pid) in err
    assert lock.exists()


def test_deploy_without_yes_needs_a_terminal(deploy_fabric, capsys, monkeypatch):
    before = deploy_fabric.snapshot()
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    code, out, err = deploy_fabric.deploy(capsys, yes=False)
    assert code == 1
    assert "pass --yes" in err
    assert deploy_fabric.snapshot() == before


def test_deploy_limit_and_invalid_intent(deploy_fabric, capsys):
    fab = deploy_fabric
    before = fab.snapshot()
    code, out, _ = fab.deploy(capsys, limit="*spine*", only="switches")
    assert code == 0, out
    assert "2 switch(es): 2 to change" in out
    assert fab.deployed(SPINES[0])
    assert fab.running(CANARY) == before[CANARY]

    fab.intent.write_text(INTENT.replace("rails: 2", "rails: 0"))
    code, _, err = fab.deploy(capsys)
    assert code == 1 and "error" in err
    assert fab.running(CANARY) == before[CANARY]


def test_deploy_hosts_need_hosts_in_the_endpoints(deploy_fabric, capsys):
    code, _, err = deploy_fabric.deploy(capsys, only="hosts")
    assert code == 1
    assert "lists no hosts" in err


def test_deploy_sonic_then_unchanged(tmp_path, lab_start, monkeypatch, capsys):
    text = INTENT.replace("fabric: {name: dt}", "fabric: {name: ds}\nswitch_os: {name: sonic, version: \"202411\"}\n"
                          "addressing: {fabric_links: 10.254.0.0/16}")
    intent = tmp_path / "fabric.yaml"
    intent.write_text(text)
    plan = run_checks(load_intent(intent)).plan
    # ZTP day 0: eth0 is a DHCP client whose reservation is the plan's address
    prefix = plan.mgmt_pool.split("/")[1]
    lab = lab_start([LabDevice(sw.name, "sonic", "202411", mgmt_address=f"{sw.mgmt_ip}/{prefix}", mgmt_mode="dhcp")
                     for sw in plan.switches], username=plan.deploy_user, time_scale=TIME_SCALE)
    monkeypatch.setenv("FABRICGEN_BACKUP_DIR", str(tmp_path / "backups"))
    monkeypatch.setenv("FABRICGEN_CONFIRM_TIMEOUT", str(CONFIRM_SECONDS))
    endpoints = str(lab.directory / "endpoints.yml")
    # a factory SONiC switch needs day 0 (its SKU and routing mode change only with a reload)
    done = deploy_cli(intent, endpoints=endpoints, yes=True)
    assert done.returncode == 1 and "fabricgen deploy --provision" in done.stdout
    done = deploy_cli(intent, endpoints=endpoints, yes=True, provision=True)
    assert done.returncode == 0 and "6 to change" in done.stdout
    rendered = json.loads(render_files(plan, text)["switches/ds-spine-1/config_db.json"])
    device = lab.driver("ds-spine-1", "sonic_fabric")
    device.open()
    try:
        running = json.loads(device.get_config(retrieve="running")["running"])
    finally:
        device.close()
    managed = SonicManaged.of(rendered, management=False)
    assert managed.owned(running) == managed.owned(rendered)
    assert running["DEVICE_METADATA"]["localhost"]["mac"], "the switch keeps its own base MAC"
    done = deploy_cli(intent, endpoints=endpoints, yes=True)
    assert done.returncode == 0 and "0 to change, 6 unchanged" in done.stdout


def test_deploy_refuses_a_switch_with_a_pending_commit(deploy_fabric, capsys):
    fab = deploy_fabric
    before = fab.snapshot()
    device = fab.lab.driver(SPINES[1])
    device.open()
    try:
        # someone else's commit; built as the deploy builds it (the bare rendered file would delete
        # the logged-in cumulus user, which NVUE refuses)
        running = device.get_config(retrieve="running")["running"]
        device.load_replace_candidate(config=build_candidate(fab.rendered[SPINES[1]], running,
                                                             managed_set(False)).text)
        device.commit_config(revert_in=60)
        code, out, err = fab.deploy(capsys)
        assert code == 1
        assert "already pending confirmation" in out and "nothing was pushed" in err
        device.rollback()
    finally:
        device.close()
    assert fab.snapshot() == before


def test_deploy_first_contact_needs_accept_new_host_keys(deploy_fabric, capsys):
    fab = deploy_fabric
    fab.lab.known_hosts.unlink()
    code, out, err = fab.deploy(capsys, dry_run=True)
    assert code == 1 and "known_hosts" in out and "nothing was pushed" in err
    code, out, _ = fab.deploy(capsys, dry_run=True, accept_new_host_keys=True)
    assert code == 0, out
    recorded = paramiko.HostKeys(str(fab.lab.known_hosts))
    assert {f"[127.0.0.1]:{fab.lab.port(n)}" for n in fab.names} <= set(recorded.keys())
    code, out, _ = fab.deploy(capsys, dry_run=True)
    assert code == 0, out


def test_deploy_refuses_a_switch_on_another_release(tmp_path, lab_start, monkeypatch, capsys):
    """Issue 23, item 5: the release is read before anything else; a 5.9 switch never gets the
    5.11 document, and with one switch refused nothing is pushed anywhere."""
    intent = tmp_path / "fabric.yaml"
    intent.write_text(INTENT)
    plan = run_checks(load_intent(intent)).plan
    odd = plan.switches[-1].name
    lab = lab_start([LabDevice(sw.name, "cumulus", "5.9" if sw.name == odd else "5.11") for sw in plan.switches])
    monkeypatch.setenv("FABRICGEN_BACKUP_DIR", str(tmp_path / "backups"))
    monkeypatch.setenv("FABRICGEN_SSH_TIMEOUT", "4")
    before = {}
    for sw in plan.switches:
        device = lab.driver(sw.name)
        device.open()
        try:
            before[sw.name] = device.get_config(retrieve="running")["running"]
        finally:
            device.close()
    done = deploy_cli(intent, endpoints=str(lab.directory / "endpoints.yml"), yes=True)
    assert done.returncode == 1
    [line] = [ln for ln in done.stdout.splitlines() if odd in ln and "refused" in ln]
    assert "runs Cumulus Linux 5.9" in line and "renders 5.11" in line, line
    assert "nothing was pushed" in done.stderr
    for sw in plan.switches:                     # no switch changed, the odd one was not even backed up
        device = lab.driver(sw.name)
        device.open()
        try:
            assert device.get_config(retrieve="running")["running"] == before[sw.name], sw.name
        finally:
            device.close()
    assert not (tmp_path / "backups" / "dt" ).exists() or not list((tmp_path / "backups" / "dt").rglob(f"{odd}.*"))


def test_deploy_refuses_a_sonic_switch_on_another_release(tmp_path, lab_start, monkeypatch, capsys):
    """The SONiC side of the release gate: `show version` says SONiC.202405..., the intent renders
    202411; refused before backup or provisioning, the factory config_db untouched."""
    text = INTENT.replace("fabric: {name: dt}", "fabric: {name: ds}\nswitch_os: {name: sonic, version: \"202411\"}\n"
                          "addressing: {fabric_links: 10.254.0.0/16}")
    intent = tmp_path / "fabric.yaml"
    intent.write_text(text)
    plan = run_checks(load_intent(intent)).plan
    prefix = plan.mgmt_pool.split("/")[1]
    lab = lab_start([LabDevice(sw.name, "sonic", "202405", mgmt_address=f"{sw.mgmt_ip}/{prefix}", mgmt_mode="dhcp")
                     for sw in plan.switches], username=plan.deploy_user)
    monkeypatch.setenv("FABRICGEN_BACKUP_DIR", str(tmp_path / "backups"))

    def running(name: str) -> str:
        device = lab.driver(name, "sonic_fabric")
        device.open()
        try:
            return device.get_config(retrieve="running")["running"]
        finally:
            device.close()

    before = {sw.name: running(sw.name) for sw in plan.switches}
    done = deploy_cli(intent, endpoints=str(lab.directory / "endpoints.yml"), yes=True, provision=True)
    assert done.returncode == 1
    out = done.stdout
    for sw in plan.switches:
        [line] = [ln for ln in out.splitlines() if sw.name in ln and "refused" in ln]
        assert "runs SONiC 202405, the intent renders 202411" in line, line
        assert running(sw.name) == before[sw.name]


def _dry_run_waves(out: str) -> dict[int, tuple[str, set[str]]]:
    """wave number -> (label, switches) from the dry run's one line per switch."""
    waves: dict[int, tuple[str, set[str]]] = {}
    for line in out.splitlines():
        match = re.match(r"\s+wave\s+(\d+)\s+(.+?)\s{2,}(dt-\S+)\s", line)
        if match:
            waves.setdefault(int(match[1]), (match[2], set()))[1].add(match[3])
    return waves


RAIL_SAFE = ["canary", "leaves rail 0", "leaves rail 1", "spines half 1", "spines half 2"]


def test_a_factory_fabric_without_day0_keeps_the_rails(factory_fabric, capsys):
    """No automatic day 0: a fabric that looks factory still goes rail by rail unless --day0 asks."""
    code, out, _ = factory_fabric.deploy(capsys, dry_run=True)
    assert code == 0, out
    assert "day 0" not in out
    assert [label for label, _ in _dry_run_waves(out).values()] == RAIL_SAFE, out


def test_day0_from_the_factory_is_the_canary_then_waves_of_the_concurrency(factory_fabric, capsys):
    """--day0 on a fabric that shows no traffic evidence: after the canary the rest goes in waves of
    deploy.concurrency (4), spines with leaves. Once deployed the fabric routes: --day0 is refused
    then, and a later change goes rail by rail."""
    fab = factory_fabric
    code, out, err = fab.deploy(capsys, dry_run=True, day0=True)
    assert code == 0, out + err
    assert "day 0 (--day0): no switch shows traffic evidence" in out
    assert "the canary, then up to 4 switch(es) per wave" in out
    assert _dry_run_waves(out) == {1: ("canary", {CANARY}),
                                   2: ("day 0", {RAIL0, RAIL1_A, RAIL1_B, SPINES[0]}),
                                   3: ("day 0", {SPINES[1]})}
    code, out, err = fab.deploy(capsys, day0=True)
    assert code == 0, out + err
    assert all(fab.deployed(n) for n in fab.names)

    code, out, err = fab.deploy(capsys, dry_run=True, day0=True)
    assert code == 1
    for n in fab.names:
        [line] = [ln for ln in err.splitlines() if ln.startswith(f"error: {n}: not day 0: ")]
        assert "running config has qos" in line and "BGP peer(s) configured in FRR" in line, line
        assert "/etc/network/interfaces has lo address" in line, line       # NVUE wrote them so
    code, out, _ = fab.deploy(capsys, dry_run=True)      # every switch listed in its wave, unchanged
    assert code == 0, out
    assert [label for label, _ in _dry_run_waves(out).values()] == RAIL_SAFE, out


def test_day0_refused_naming_the_one_switch_in_service(factory_fabric, capsys):
    """A fabric partly in service (a retried day 0, a growth) is not day 0: the run stops before
    anything is pushed, one line for the switch that routes and what it shows."""
    fab = factory_fabric
    put_in_service(fab.lab, SPINES[1])
    before = fab.snapshot()
    code, out, err = fab.deploy(capsys, day0=True)
    assert code == 1, out + err
    lines = [ln for ln in err.splitlines() if ": not day 0: " in ln]
    assert lines == [f"error: {SPINES[1]}: not day 0: running config has router; "
                     "/etc/frr/frr.conf has router bgp 65999"], err
    assert "error: --day0 refused: 1 of 6 switch(es) show traffic evidence" in err
    assert "nothing was pushed" in err
    assert fab.snapshot() == before


def test_day0_with_limit_is_refused(factory_fabric, capsys):
    """A partial fabric cannot prove day 0: the switches --limit leaves out are not read."""
    before = factory_fabric.snapshot()
    code, out, err = factory_fabric.deploy(capsys, day0=True, limit="dt-leaf-*")
    assert code == 1
    assert "error: --day0 with --limit 'dt-leaf-*': day 0 is proven for the whole fabric only" in err
    assert factory_fabric.snapshot() == before
    code, out, _ = factory_fabric.deploy(capsys, dry_run=True, limit="dt-leaf-*")
    assert code == 0, out
    assert [label for label, _ in _dry_run_waves(out).values()] == ["canary", "leaves rail 0", "leaves rail 1"]


def test_a_fabric_routing_through_flat_files_is_not_day0(factory_fabric, capsys):
    """Issue 32's blocker: every switch routes by /etc/network/interfaces + frr.conf written by
    automation while NVUE's tree is factory. --day0 is refused naming each switch and what it shows
    (FRR's peers, the files, addresses, carrier, LLDP); a plain deploy goes rail by rail, and its
    apply rewrites the files as NVUE does."""
    fab = factory_fabric
    plan = run_checks(load_intent(fab.intent)).plan
    set_wiring(fab.lab.directory, parse_wiring(render_cabling(plan), "cabling.csv"))
    prefix = ipaddress.IPv4Network(plan.mgmt_pool).prefixlen
    for sw in plan.switches:
        tree = load_nvue_document(fab.rendered[sw.name])
        files = automation_files(tree, Management(f"{sw.mgmt_ip}/{prefix}"), sw.name)
        write_device_files(fab.lab.directory, sw.name, files)
    assert all("router" not in fab.running(n) and "swp1" not in fab.running(n).get("interface", {})
               for n in fab.names), "NVUE's tree stays factory"
    assert wait_until(lambda: all(_frr_established(fab, n) for n in fab.names), 60), "the sessions come up"

    before = fab.snapshot()
    code, out, err = fab.deploy(capsys, day0=True)
    assert code == 1, out + err
    for n in fab.names:
        [line] = [ln for ln in err.splitlines() if ln.startswith(f"error: {n}: not day 0: ")]
        for evidence in ("BGP peer(s) established in FRR", "/etc/network/interfaces has lo address", "iface swp",
                         "/etc/frr/frr.conf has router bgp", "address on lo", "carrier on swp",
                         "LLDP neighbour on swp"):
            assert evidence in line, line
    assert "running config has" not in err
    assert "error: --day0 refused: 6 of 6 switch(es)" in err
    assert fab.snapshot() == before

    code, out, err = fab.deploy(capsys, dry_run=True)
    assert code == 0, out + err
    assert [label for label, _ in _dry_run_waves(out).values()] == RAIL_SAFE, out
    code, out, err = fab.deploy(capsys)
    assert code == 0, out + err
    assert all(fab.deployed(n) for n in fab.names)
    etc = fab.lab.directory / "devices" / CANARY / "etc"
    assert (etc / "network" / "interfaces").read_text().startswith("# Auto-generated by NVUE!")



def _frr_established(fab: DeployFabric, name: str) -> bool:
    device = fab.lab.driver(name)
    device.open()
    try:
        peers = device.frr_bgp_summary().get("ipv4Unicast", {}).get("peers", {})
        return bool(peers) and all(p["state"] == "Established" for p in peers.values())
    finally:
        device.close()
