"""deploy.hosts.scheduler: playbooks/files/fabricgen_sched.py against a fake scontrol (issue 24, item 2).

The wait is for Slurm's DRAINED (no job left), not the DRAIN flag: scontrol(1) prints
MIXED+DRAIN / ALLOCATED+DRAIN while jobs still run (sinfo(1) "draining") and IDLE+DRAIN once
none does ("drained")."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys

import pytest
import yaml
from pydantic import ValidationError

from generator.checks.runner import run_checks
from generator.deploy.hosts import playbook_path
from generator.intent.loader import load_intent
from generator.intent.model import DeployHosts
from generator.render.inventory import render_inventory
from tests.conftest import example
from tests.fake_scontrol import node, set_nodes, write_fake_scontrol

SCRIPT = playbook_path().parent / "files" / "fabricgen_sched.py"
_spec = importlib.util.spec_from_file_location("fabricgen_sched", SCRIPT)
sched = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(sched)


def _show(state: str, alloc: int, reason: str | None = None) -> str:
    text = (f"NodeName=gpu01 Arch=x86_64 CoresPerSocket=56\n   CPUAlloc={alloc} CPUEfctv=224 CPUTot=224\n"
            f"   State={state} ThreadsPerCore=2 TmpDisk=0 Weight=1 Owner=N/A MCS_label=N/A\n   Partitions=gpu\n")
    return text + (f"   Reason={reason} [root@2026-12-04T12:00:00]\n" if reason else "")


@pytest.mark.parametrize(("state", "alloc", "drain", "drained"), [
    ("MIXED+DRAIN", 64, True, False),          # draining: jobs still run
    ("ALLOCATED+DRAIN", 224, True, False),
    ("IDLE+COMPLETING+DRAIN", 0, True, False),  # a job's epilog still runs
    ("IDLE+DRAIN", 0, True, True),              # drained
    ("DOWN+DRAIN+NOT_RESPONDING", 0, True, True),
    ("DRAIN", 0, True, True),                   # a bare DRAIN with nothing allocated
    ("DRAIN", 8, True, False),
    ("MIXED", 64, False, False),
    ("IDLE", 0, False, False),                  # idle but not drained: a job may land any moment
])
def test_slurm_states(state, alloc, drain, drained):
    got = sched.slurm_state(_show(state, alloc, "fabricgen" if drain else None))
    assert (got["state"], got["drain"], got["drained"]) == (state, drain, drained)


def test_reason_without_who_and_when():
    got = sched.slurm_state(_show("IDLE+DRAIN", 0, "disk failure"))
    assert got["reason"] == "disk failure"
    assert sched.slurm_state(_show("IDLE", 0))["reason"] == ""
    with pytest.raises(ValueError):
        sched.slurm_state("Node gpu01 not found")


@pytest.fixture
def slurm(tmp_path, monkeypatch):
    bindir = write_fake_scontrol(tmp_path / "bin")
    state = tmp_path / "slurm.json"
    log = tmp_path / "slurm.log"
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_SLURM_STATE", str(state))
    monkeypatch.setenv("FAKE_SLURM_LOG", str(log))

    def run(*args):
        return subprocess.run([sys.executable, str(SCRIPT), *map(str, args)], capture_output=True, text=True,
                              timeout=60)
    return run, state, log


def test_wait_until_drained_after_n_reads(slurm):
    run, state, log = slurm
    set_nodes(state, {"gpu01": {"jobs": 3, "drain": True, "reason": "fabricgen"}})
    r = run("wait", "slurm", "gpu01", 30, 0.1)
    assert r.returncode == 0, r.stdout
    assert r.stdout.strip() == "drained: gpu01 State=IDLE+DRAIN"
    shows = [line for line in log.read_text().splitlines() if line.startswith("show")]
    assert shows == ["show gpu01 MIXED+DRAIN", "show gpu01 MIXED+DRAIN", "show gpu01 IDLE+DRAIN"]


def test_wait_times_out_with_one_line(slurm):
    run, state, _ = slurm
    set_nodes(state, {"gpu01": {"jobs": -1, "drain": True, "reason": "fabricgen"}})
    r = run("wait", "slurm", "gpu01", 1, 0.2)
    assert r.returncode == 1
    assert r.stdout.splitlines() == ["error: gpu01 still runs jobs after 1 s (State=MIXED+DRAIN): nothing was "
                                     "changed on it; raise deploy.hosts.drain_timeout or wait for its jobs"]


def test_wait_refuses_a_node_the_hook_did_not_drain(slurm):
    run, state, _ = slurm
    set_nodes(state, {"gpu01": {"jobs": 2}})
    r = run("wait", "slurm", "gpu01", 30, 0.1)
    assert r.returncode == 1 and "is not draining (State=MIXED)" in r.stdout
    r = run("wait", "slurm", "gpu09", 30, 0.1)
    assert r.returncode == 1 and r.stdout.strip() == "" and "Node gpu09 not found" in r.stderr


def test_state_and_restore_keep_the_operators_reason(slurm):
    run, state, log = slurm
    set_nodes(state, {"gpu01": {"drain": True, "reason": "disk failure", "by": "alice", "at": "2026-11-30T09:15:00"}})
    r = run("state", "slurm", "gpu01")
    assert json.loads(r.stdout) == {"state": "IDLE+DRAIN", "drain": True, "drained": True, "reason": "disk failure",
                                    "by": "alice", "at": "2026-11-30T09:15:00", "ours": False}
    assert run("restore", "slurm", "gpu01", "disk failure", "alice", "2026-11-30T09:15:00").stdout.startswith("kept: ")
    assert not any(line.startswith("update") for line in log.read_text().splitlines())
    assert node(state, "gpu01")["by"] == "alice" and node(state, "gpu01")["at"] == "2026-11-30T09:15:00"
    # someone resumed it meanwhile: drained again with the operator's reason, and the run says that
    # Slurm now records its own user and time (scontrol cannot set them; issue 33, item 3)
    set_nodes(state, {"gpu01": {"drain": False, "reason": "", "by": "", "at": ""}})
    r = run("restore", "slurm", "gpu01", "disk failure", "alice", "2026-11-30T09:15:00")
    assert r.returncode == 3, r.stdout
    assert r.stdout.strip() == ("error: gpu01 was resumed during the run; drained again with Reason=disk failure, but "
                                "Slurm now records this run's user and time instead of alice@2026-11-30T09:15:00 "
                                "(scontrol cannot set them)")
    assert node(state, "gpu01")["drain"] and node(state, "gpu01")["reason"] == "disk failure"
    # someone drained it anew meanwhile: theirs now, not replaced by the old reason
    set_nodes(state, {"gpu01": {"drain": True, "reason": "RMA 99", "by": "bob", "at": "2026-12-05T08:00:00"}})
    log.write_text("")
    r = run("restore", "slurm", "gpu01", "disk failure", "alice", "2026-11-30T09:15:00")
    assert r.returncode == 1 and "replaced during the run by Reason=RMA 99 [bob@2026-12-05T08:00:00]" in r.stdout
    assert not log.read_text().count("update") and node(state, "gpu01")["reason"] == "RMA 99"


def test_a_drain_is_ours_only_by_its_reason_prefix(slurm):
    run, state, _ = slurm
    for reason, ours in (("fabricgen:deploy", True), ("fabricgen-roce-qos: 1 setting(s) differ", False),
                         ("fabricgen", False), ("RMA fabricgen:x", False)):
        set_nodes(state, {"gpu01": {"drain": True, "reason": reason}})
        assert json.loads(run("state", "slurm", "gpu01").stdout)["ours"] is ours, reason


def test_the_slurm_drain_hook_marks_its_reason():
    ok = "scontrol update NodeName={host} State=DRAIN Reason=fabricgen:deploy"
    assert DeployHosts(scheduler="slurm", drain=ok, undrain="x {host}").drain == ok
    DeployHosts(scheduler="slurm", drain="scontrol update nodename={host} state=drain reason='fabricgen: x'",
                undrain="x {host}")
    for bad in ("scontrol update NodeName={host} State=DRAIN Reason=fabricgen",
                "scontrol update NodeName={host} State=DRAIN Reason=maintenance"):
        with pytest.raises(ValidationError, match="must set a reason starting fabricgen:"):
            DeployHosts(scheduler="slurm", drain=bad, undrain="x {host}")


def test_scheduler_needs_the_hooks():
    assert DeployHosts().scheduler == "none"
    with pytest.raises(ValidationError, match="scheduler slurm needs the drain and undrain hooks"):
        DeployHosts(scheduler="slurm")
    with pytest.raises(ValidationError):
        DeployHosts(scheduler="pbs", drain="x {host}", undrain="y {host}")
    with pytest.raises(ValidationError):
        DeployHosts(drain_timeout=5)


def _inventory(tmp_path, deploy_hosts: dict | None = None) -> dict:
    data = yaml.safe_load(example("small").read_text())
    if deploy_hosts is not None:
        data.setdefault("deploy", {})["hosts"] = deploy_hosts
    intent = tmp_path / "fabric.yaml"
    intent.write_text(yaml.safe_dump(data, sort_keys=False))
    text = render_inventory(run_checks(load_intent(intent)).plan)
    return yaml.safe_load(text.replace("!unsafe ", ""))["all"]["children"]["hosts"]["vars"]


def test_inventory_carries_the_scheduler_only_when_set(tmp_path):
    plain = _inventory(tmp_path)
    assert "fabricgen_hosts_scheduler" not in plain and "fabricgen_hosts_drain_timeout" not in plain
    slurm = _inventory(tmp_path, {"scheduler": "slurm", "drain_timeout": 900,
                                  "drain": "scontrol update NodeName={host} State=DRAIN Reason=fabricgen:deploy",
                                  "undrain": "scontrol update NodeName={host} State=RESUME"})
    assert slurm["fabricgen_hosts_scheduler"] == "slurm" and slurm["fabricgen_hosts_drain_timeout"] == 900


def test_deploy_summary_lists_hosts_left_drained(tmp_path, monkeypatch):
    """`fabricgen deploy --only hosts` names every host the run drained and did not undrain (item 3)."""
    from generator.deploy import hosts as hosts_mod
    from generator.deploy import rollout
    from generator.deploy.deploy_run import Quiet, Recorder
    from generator.deploy.hosts import HostRunResult, HostStats

    def fake_run(render_dir, inventory, **kw):
        result = HostRunResult(status="failed", rc=2, hosts={"gpu02": HostStats(failed=1), "gpu03": HostStats()})
        result.failures = [("gpu02", "Install nccl.conf and nccl.env", "Could not find or access 'nccl.env'")]
        result.left_drained = [("gpu02", 'half-applied, failed at "Install nccl.conf and nccl.env"')]
        return result

    monkeypatch.setattr(hosts_mod, "run_hosts_playbook", fake_run)
    said = Recorder()
    rc = rollout._deploy_hosts({"hosts/gpu02/netplan.yaml": ""}, tmp_path, said, Quiet(), lambda files, d: d,
                               intent_path=str(tmp_path / "f.yaml"), endpoints=None, only="hosts", limit=None,
                               dry_run=True, yes=True)
    assert rc == 1
    assert said.run(rc).lines("stderr") == [
        "hosts: gpu02: Install nccl.conf and nccl.env: Could not find or access 'nccl.env'",
        'hosts: gpu02: left drained: half-applied, failed at "Install nccl.conf and nccl.env"']
    assert said.run(rc).lines("stdout") == ["hosts: failed: 2 host(s), 0 change(s), 1 left drained by this run: gpu02"]


def test_summary_counts_a_drained_host_that_never_got_its_undrain(tmp_path, monkeypatch):
    """Ansible runs no rescue/always block for an unreachable host: a host whose drain hook ran and
    whose undrain never came is listed as left drained all the same; a drain found before the run
    (kept on purpose) and a host undrained are not; the re-raise of a rescued failure is no new line."""
    from types import SimpleNamespace

    from generator.deploy import hosts as hosts_mod

    def ev(kind, host, task, **res):
        return {"event": kind, "event_data": {"host": host, "task": task, "res": res}}

    events = [ev("runner_on_ok", h, hosts_mod.DRAIN_TASK, changed=True) for h in ("gpu01", "gpu02", "gpu03", "gpu04")]
    events += [
        ev("runner_on_ok", "gpu04", hosts_mod.PRE_DRAIN_TASK, ansible_facts={"fg_we_drained": False}),
        ev("runner_on_unreachable", "gpu01", "Install the netplan file", msg="ssh: connect timed out"),
        ev("runner_on_failed", "gpu02", "Install the netplan file", msg="boom"),
        ev("runner_on_ok", "gpu02", hosts_mod.LEFT_DRAINED_TASK,
           msg='gpu02: left drained: half-applied, failed at "Install the netplan file"'),
        ev("runner_on_failed", "gpu02", hosts_mod.REFAIL_TASK, msg="gpu02 failed at Install the netplan file"),
        ev("runner_on_ok", "gpu03", hosts_mod.UNDRAIN_TASK, changed=True, rc=0),
    ]
    fake = SimpleNamespace(status="failed", rc=2, stats={}, events=events, stdout=None)
    monkeypatch.setattr(hosts_mod.ansible_runner, "run", lambda **kw: fake)
    inventory = tmp_path / "inventory.yml"
    inventory.write_text("all: {}\n")
    result = hosts_mod.run_playbook(tmp_path / "hosts.yml", inventory, private_data_dir=tmp_path / "pdd")
    assert result.failures == [("gpu01", "Install the netplan file", "ssh: connect timed out"),
                               ("gpu02", "Install the netplan file", "boom")]
    assert result.left_drained == [
        ("gpu02", 'half-applied, failed at "Install the netplan file"'),
        ("gpu01", "drained, the run stopped before its undrain (unreachable or interrupted)")]


# --- the scheduler's node name (issue 24, second pass) -----------------------------------

def test_scheduler_node_is_a_host_name_template():
    assert DeployHosts().scheduler_node is None
    assert DeployHosts(scheduler_node="{host}.cluster.example").scheduler_node == "{host}.cluster.example"
    assert DeployHosts(scheduler_node="node-{host}").scheduler_node == "node-{host}"
    with pytest.raises(ValidationError, match=r"must contain \{host\}"):
        DeployHosts(scheduler_node="gpu01.cluster.example")
    # it replaces {host} in the hooks, which are shell command lines: a host name only
    for bad in ("{host}; reboot", "{host} x", "$(id){host}", "{host}.", "{{host}}"):
        with pytest.raises(ValidationError, match="must give a host name"):
            DeployHosts(scheduler_node=bad)


def _host_vars(tmp_path, deploy_hosts: dict | None = None) -> dict:
    data = yaml.safe_load(example("small").read_text())
    if deploy_hosts is not None:
        data.setdefault("deploy", {})["hosts"] = deploy_hosts
    intent = tmp_path / "fabric.yaml"
    intent.write_text(yaml.safe_dump(data, sort_keys=False))
    text = render_inventory(run_checks(load_intent(intent)).plan)
    return yaml.safe_load(text.replace("!unsafe ", ""))["all"]["children"]["hosts"]["hosts"]


def test_inventory_names_each_host_in_the_scheduler_only_when_set(tmp_path):
    assert all("fabricgen_scheduler_node" not in v for v in _host_vars(tmp_path).values())
    hosts = _host_vars(tmp_path, {"scheduler_node": "{host}.cluster.example"})
    # the small example names its hosts gpu01, gpu02, ... (hosts.name "gpu{n:02d}")
    assert hosts["gpu01"]["fabricgen_scheduler_node"] == "gpu01.cluster.example"
    assert {name: v["fabricgen_scheduler_node"] for name, v in hosts.items()} == {
        name: f"{name}.cluster.example" for name in hosts}


def test_playbook_addresses_the_scheduler_by_the_node_name():
    """Every scheduler call of playbooks/hosts.yml (the hooks' {host}, fabricgen_sched.py state /
    wait / restore) takes fg_sched_node, which is fabricgen_scheduler_node or the inventory name."""
    plays = yaml.safe_load(playbook_path().read_text())
    apply = next(p for p in plays if p["name"] == "Install and apply the fabricgen host files, in batches")
    assert apply["vars"]["fg_sched_node"] == "{{ fabricgen_scheduler_node | default(inventory_hostname, true) }}"
    tasks = [t for t in apply["tasks"][0]["block"] + apply["tasks"][0]["always"]]
    sched = [t for t in tasks if "fabricgen_sched.py" in json.dumps(t) or "{host}" in json.dumps(t)]
    assert len(sched) == 6, [t["name"] for t in sched]   # state, drain, wait, state before undrain, undrain, restore
    for task in sched:
        text = json.dumps(task)
        assert "fg_sched_node" in text and "inventory_hostname" not in text, task["name"]


def test_deploy_summary_warns_about_a_bad_rail_port(tmp_path, monkeypatch):
    """A rail port DOWN on a host already as rendered: a warning line, and the run still succeeds."""
    from generator.deploy import hosts as hosts_mod
    from generator.deploy import rollout
    from generator.deploy.deploy_run import Quiet, Recorder
    from generator.deploy.hosts import HostRunResult, HostStats

    def fake_run(render_dir, inventory, **kw):
        result = HostRunResult(status="successful", rc=0, hosts={"gpu02": HostStats(ok=30)})
        result.port_warnings = [("gpu02", "rail port not as planned: rail 1 ens2f0np0 (mlx5_1) port is DOWN")]
        return result

    monkeypatch.setattr(hosts_mod, "run_hosts_playbook", fake_run)
    said = Recorder()
    rc = rollout._deploy_hosts({"hosts/gpu02/netplan.yaml": ""}, tmp_path, said, Quiet(), lambda files, d: d,
                               intent_path=str(tmp_path / "f.yaml"), endpoints=None, only="hosts", limit=None,
                               dry_run=True, yes=True)
    assert rc == 0
    assert said.run(rc).lines("stderr") == [
        "hosts: gpu02: warning: rail port not as planned: rail 1 ens2f0np0 (mlx5_1) port is DOWN"]


def test_deploy_summary_names_a_lost_host_and_a_drain_someone_else_took(tmp_path, monkeypatch):
    """Issue 33, items 1 and 3: the run fails naming the host lost mid-batch and what it left drained;
    a drain someone set during the run is a warning, not resumed."""
    from generator.deploy import hosts as hosts_mod
    from generator.deploy import rollout
    from generator.deploy.deploy_run import Quiet, Recorder
    from generator.deploy.hosts import HostRunResult, HostStats

    def fake_run(render_dir, inventory, **kw):
        result = HostRunResult(status="failed", rc=2, hosts={"gpu02": HostStats(failed=1),
                                                              "gpu03": HostStats(unreachable=1)})
        result.failures = [("gpu03", "Create destination directories", "Failed to connect to the host via ssh")]
        result.left_drained = [("gpu03", "unreachable after its drain, state unknown: check it, then undrain it "
                                         "by hand")]
        result.lost = ["gpu03"]
        result.drain_notes = [("gpu02", "not undrained: its drain now has Reason=RMA [bob@t], not set by this run: "
                                        "left to whoever set it")]
        return result

    monkeypatch.setattr(hosts_mod, "run_hosts_playbook", fake_run)
    said = Recorder()
    rc = rollout._deploy_hosts({"hosts/gpu02/netplan.yaml": ""}, tmp_path, said, Quiet(), lambda files, d: d,
                               intent_path=str(tmp_path / "f.yaml"), endpoints=None, only="hosts", limit=None,
                               dry_run=True, yes=True)
    assert rc == 1
    assert said.run(rc).lines("stderr") == [
        "hosts: gpu03: Create destination directories: Failed to connect to the host via ssh",
        "hosts: gpu03: left drained: unreachable after its drain, state unknown: check it, then undrain it by hand",
        "hosts: rollout stopped after the batch that lost gpu03 (unreachable): no later batch started",
        "hosts: gpu02: warning: not undrained: its drain now has Reason=RMA [bob@t], not set by this run: left to "
        "whoever set it"]
    assert said.run(rc).lines("stdout") == ["hosts: failed: 2 host(s), 0 change(s), 1 left drained by this run: gpu03"]


def test_a_kubectl_drain_hook_needs_a_timeout_within_drain_timeout():
    ok = "kubectl drain {host} --ignore-daemonsets --timeout=3600s"
    assert DeployHosts(scheduler="kubernetes", drain=ok, undrain="kubectl uncordon {host}").drain == ok
    DeployHosts(scheduler="kubernetes", drain="kubectl drain {host} --timeout 10m", undrain="kubectl uncordon {host}",
                drain_timeout=600)
    for bad, words in (("kubectl drain {host} --ignore-daemonsets", "it has no --timeout"),
                       ("kubectl drain {host} --timeout=0", "is no bound"),
                       ("kubectl drain {host} --timeout=2h", "longer than drain_timeout 3600 s")):
        with pytest.raises(ValidationError, match=words):
            DeployHosts(scheduler="kubernetes", drain=bad, undrain="kubectl uncordon {host}")
