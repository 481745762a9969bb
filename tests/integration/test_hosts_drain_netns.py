"""Drain for real, and a failed batch (issue 24, items 2 and 3): playbooks/hosts.yml through
ansible-runner over SSH into namespace hosts (tests/integration/netns.py), with a fake Slurm
`scontrol` on the controller (tests/fake_scontrol.py) that keeps its nodes in a file.

deploy.hosts.scheduler: slurm. `scontrol update State=DRAIN` lets jobs run on (scontrol(1)): the
node reads MIXED+DRAIN until they end, then IDLE+DRAIN (sinfo(1) "draining" / "drained"); the
playbook must not touch a host's rails before that, must stop a batch whose host does not drain
in time without changing it, and must leave a node an operator drained drained, with its reason.
"""

from __future__ import annotations

import os

import pytest

pytest.importorskip("ansible_runner", reason="the host playbook runs through ansible-runner")

from netns import netns_hosts, write_fake_nic_tools, write_fake_sysfs  # noqa: E402,F401  (fixture)
from test_hosts_netns import _apply_batches, _lab_vars, _plan  # noqa: E402

from generator.deploy.hosts import run_hosts_playbook  # noqa: E402
from tests.fake_scontrol import node, set_nodes, write_fake_kubectl, write_fake_scontrol  # noqa: E402

pytestmark = [pytest.mark.integration, pytest.mark.root, pytest.mark.timeout(900)]

DEPLOY = """deploy:
  hosts:
    canary: 1
    batch: 2
    scheduler: slurm
    drain: "scontrol update NodeName={host} State=DRAIN Reason=fabricgen:deploy"
    undrain: "scontrol update NodeName={host} State=RESUME"
"""


def test_slurm_drain_waits_times_out_and_keeps_an_operators_drain(netns_hosts, tmp_path, monkeypatch):  # noqa: F811
    _, plan, render, gateway = _plan(tmp_path, extra=DEPLOY)
    one, two, three = names = [h.name for h in plan.hosts]
    lab = netns_hosts(plan, gateway)
    fakes = write_fake_nic_tools(lab.directory / "fakebin")
    for host in plan.hosts:
        write_fake_sysfs(lab.directory / "sys" / host.name, [n.netdev for n in host.nics])
    # the controller's scontrol: the hooks and the playbook's own reads run on the controller
    slurm_bin = write_fake_scontrol(tmp_path / "slurmbin")
    state, log = tmp_path / "slurm.json", tmp_path / "slurm.log"
    monkeypatch.setenv("PATH", f"{slurm_bin}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_SLURM_STATE", str(state))
    monkeypatch.setenv("FAKE_SLURM_LOG", str(log))
    # each `show` logs whether the host's netplan file was installed at that moment
    monkeypatch.setenv("FAKE_SLURM_WATCH", f"{lab.directory}/root/{{node}}/etc/netplan/60-fabricgen.yaml")
    extravars = {**_lab_vars(lab, fakes), "fabricgen_hosts_drain_poll": 0.2}

    def run(**kw):
        return run_hosts_playbook(render, render / "inventory.yml", extravars={**extravars, **kw},
                                  ssh_key=lab.key, known_hosts=lab.known_hosts, private_data_dir=tmp_path / "runner")

    def lines(name: str) -> list[str]:
        return [line for line in log.read_text().splitlines() if f" {name} " in line + " " or f"={name} " in line]

    # 1. the canary runs jobs that end after a few reads; the third node an operator drained
    set_nodes(state, {one: {"jobs": 4}, two: {}, three: {"drain": True, "reason": "disk failure"}})
    first = run()
    assert first.ok, (first.failures, first.stdout[-4000:])
    assert _apply_batches(first) == [[one], sorted([two, three])], first.batches
    seen = lines(one)
    assert seen[0] == f"show {one} MIXED watched=False"        # read before the drain
    assert seen[1] == f"update NodeName={one} State=DRAIN Reason=fabricgen:deploy"
    draining = [s for s in seen if s.startswith(f"show {one} MIXED+DRAIN")]
    assert len(draining) == 2 and all(s.endswith("watched=False") for s in draining), seen
    # rails touched only after Slurm said DRAINED; then the undrain, once the drain is still the run's
    assert seen[-3:] == [f"show {one} IDLE+DRAIN watched=False", f"show {one} IDLE+DRAIN watched=True",
                         f"update NodeName={one} State=RESUME"], seen
    assert (lab.hosts[one].root / "etc/netplan/60-fabricgen.yaml").is_file()
    assert node(state, one)["drain"] is False and node(state, two)["drain"] is False
    # the operator's drain: not drained again (its reason kept), not resumed, still applied
    assert not any(s.startswith("update") for s in lines(three)), lines(three)
    assert node(state, three)["drain"] is True and node(state, three)["reason"] == "disk failure"
    assert (lab.hosts[three].root / "etc/netplan/60-fabricgen.yaml").is_file()
    assert first.left_drained == [] and first.not_restored == []

    # 2. a rail drifted on both hosts of the second batch; one node's jobs never end: the batch
    # stops with one line for it, neither host is changed, ours is resumed, the operator's kept
    for name in (two, three):
        lab.hosts[name].sh("ip link set dev ens1f0np0 mtu 1500")
    set_nodes(state, {two: {"jobs": -1}})
    log.write_text("")
    stopped = run(fabricgen_hosts_drain_timeout=2)
    assert not stopped.ok
    assert sorted(stopped.failures) == [
        (two, "Stop the batch when a host did not drain",
         f"{two} still runs jobs after 2 s (State=MIXED+DRAIN): nothing was changed on it; "
         "raise deploy.hosts.drain_timeout or wait for its jobs"),
        (three, "Stop the batch when a host did not drain", f"not changed: {two} of this batch did not drain in time"),
    ], stopped.failures
    for name in (two, three):
        assert " mtu 1500 " in lab.hosts[name].sh("ip -o link show dev ens1f0np0").stdout, name
    assert lines(two)[-1] == f"update NodeName={two} State=RESUME" and node(state, two)["drain"] is False
    assert node(state, three)["drain"] is True and node(state, three)["reason"] == "disk failure"
    assert not any(s.startswith("update") for s in lines(three))
    assert lines(one) == [], "the canary had nothing to change: not drained"
    assert stopped.left_drained == []

    # 3. a failed host in a batch: its mate finishes and is undrained; the failed one, half-applied,
    # stays drained and the summary names it (before, max_fail_percentage 0 marked the mate failed
    # after netplan/QoS and before its undrain)
    set_nodes(state, {two: {"jobs": 0}, three: {"drain": False, "reason": ""}})
    missing = render / "hosts" / two / "nccl.env"
    kept = missing.read_bytes()
    missing.unlink()
    try:
        failed = run()
    finally:
        missing.write_bytes(kept)
    assert not failed.ok
    assert [(h, t) for h, t, _ in failed.failures] == [(two, "Install nccl.conf and nccl.env")], failed.failures
    assert failed.left_drained == [(two, 'half-applied, failed at "Install nccl.conf and nccl.env"')]
    assert node(state, two)["drain"] is True and node(state, two)["reason"] == "fabricgen:deploy"
    assert node(state, three)["drain"] is False, lines(three)
    assert failed.hosts[three].failed == 0
    for name in (two, three):
        assert " mtu 4200 " in lab.hosts[name].sh("ip -o link show dev ens1f0np0").stdout, name
    assert (lab.hosts[three].root / "etc/fabricgen/nccl.env").is_file()
    assert names == sorted(names)


K8S = """deploy:
  hosts:
    canary: 1
    batch: 2
    scheduler: kubernetes
    drain_timeout: 10
    drain: "kubectl drain {host} --ignore-daemonsets --timeout=10s"
    undrain: "kubectl uncordon {host}"
"""


def test_kubernetes_drain_is_bounded_and_keeps_a_cordon(netns_hosts, tmp_path, monkeypatch):  # noqa: F811
    """`kubectl drain` blocks until its pods are evicted (its own --timeout defaults to none): the
    hook is bounded by drain_timeout; a node cordoned before the run is drained but stays cordoned."""
    _, plan, render, gateway = _plan(tmp_path, extra=K8S)
    one, two, three = [h.name for h in plan.hosts]
    lab = netns_hosts(plan, gateway)
    fakes = write_fake_nic_tools(lab.directory / "fakebin")
    for host in plan.hosts:
        write_fake_sysfs(lab.directory / "sys" / host.name, [n.netdev for n in host.nics])
    kube_bin = write_fake_kubectl(tmp_path / "kubebin")
    state, log = tmp_path / "nodes.json", tmp_path / "kube.log"
    monkeypatch.setenv("PATH", f"{kube_bin}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_SLURM_STATE", str(state))
    monkeypatch.setenv("FAKE_SLURM_LOG", str(log))
    extravars = _lab_vars(lab, fakes)

    def run(**kw):
        return run_hosts_playbook(render, render / "inventory.yml", extravars={**extravars, **kw},
                                  ssh_key=lab.key, known_hosts=lab.known_hosts, private_data_dir=tmp_path / "runner")

    set_nodes(state, {one: {"evict": 1}, two: {"drain": True}, three: {}})
    first = run()
    assert first.ok, (first.failures, first.stdout[-4000:])
    calls = log.read_text().splitlines()
    assert f"kubectl drain {two} --ignore-daemonsets --timeout=10s" in calls    # its pods are evicted all the same
    assert f"kubectl uncordon {two}" not in calls and node(state, two)["drain"] is True
    assert f"kubectl uncordon {one}" in calls and f"kubectl uncordon {three}" in calls
    assert not node(state, one)["drain"] and not node(state, three)["drain"]
    assert first.left_drained == [], "a cordon found before the run is kept on purpose, not reported"

    # pods that never go (issue 33, item 2): kubectl's own --timeout ends the drain at its bound, exit 1
    # and the node cordoned; the canary stops unchanged, and is uncordoned only after kubectl ended
    lab.hosts[one].sh("ip link set dev ens1f0np0 mtu 1500")
    set_nodes(state, {one: {"evict": -1}})
    log.write_text("")
    stopped = run(fabricgen_hosts_drain_grace=1)
    assert not stopped.ok
    assert stopped.failures == [(one, "Drain the host before its changes (fabricgen_hosts_drain)",
                                 "error: timed out waiting for the condition")], stopped.failures
    assert " mtu 1500 " in lab.hosts[one].sh("ip -o link show dev ens1f0np0").stdout
    calls = log.read_text().splitlines()
    assert calls[-2:] == [f"drain {one} ended: timed out", f"kubectl uncordon {one}"], calls
    assert not node(state, one)["drain"] and stopped.left_drained == []
    assert _apply_batches(stopped) == [[one]], "the rollout stopped after the canary"

    # a kubectl whose --timeout is longer than drain_timeout (an inventory edited by hand; the intent
    # refuses it): before, the Ansible task timed out and the undrain uncordoned the node while kubectl
    # still evicted. Its process group is now ended at the bound, and only then is it uncordoned.
    set_nodes(state, {one: {"evict": -1}})
    log.write_text("")
    killed = run(fabricgen_hosts_drain_timeout=2, fabricgen_hosts_drain_grace=1,
                 fabricgen_hosts_drain="kubectl drain {host} --timeout=600s")
    assert not killed.ok
    assert [(h, t) for h, t, _ in killed.failures] == [(one, "Drain the host before its changes "
                                                            "(fabricgen_hosts_drain)")], killed.failures
    assert "outlived its bound of 3 s" in killed.failures[0][2], killed.failures
    calls = log.read_text().splitlines()
    assert f"uncordon {one} evicting=True" not in calls, calls
    assert calls[-1] == f"kubectl uncordon {one}" and not node(state, one)["drain"]
    assert " mtu 1500 " in lab.hosts[one].sh("ip -o link show dev ens1f0np0").stdout


def test_scheduler_node_names_and_a_bad_port_on_a_host_as_rendered(netns_hosts, tmp_path, monkeypatch):  # noqa: F811
    """deploy.hosts.scheduler_node: Slurm knows the hosts only by another name (here their FQDN), so
    every read, drain, wait and undrain must use it (the fake scontrol answers "Node gpu01 not found"
    for the inventory name). Then rail ports go bad on hosts already as rendered: a DOWN port and a
    port at 200 Gb/s are reported, the hosts are not drained; a host with a DOWN port whose rail
    also drifted is stopped at pre-flight, untouched."""
    _, plan, render, gateway = _plan(tmp_path, extra=DEPLOY + '    scheduler_node: "{host}.cluster.example"\n')
    one, two, three = names = [h.name for h in plan.hosts]
    fqdn = {name: f"{name}.cluster.example" for name in names}
    lab = netns_hosts(plan, gateway)
    fakes = write_fake_nic_tools(lab.directory / "fakebin")
    for host in plan.hosts:
        write_fake_sysfs(lab.directory / "sys" / host.name, [n.netdev for n in host.nics])
    slurm_bin = write_fake_scontrol(tmp_path / "slurmbin")
    state, log = tmp_path / "slurm.json", tmp_path / "slurm.log"
    monkeypatch.setenv("PATH", f"{slurm_bin}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_SLURM_STATE", str(state))
    monkeypatch.setenv("FAKE_SLURM_LOG", str(log))
    extravars = {**_lab_vars(lab, fakes), "fabricgen_hosts_drain_poll": 0.2}

    def run():
        return run_hosts_playbook(render, render / "inventory.yml", extravars=extravars, ssh_key=lab.key,
                                  known_hosts=lab.known_hosts, private_data_dir=tmp_path / "runner")

    set_nodes(state, {fqdn[one]: {"jobs": 2}, fqdn[two]: {}, fqdn[three]: {}})
    first = run()
    assert first.ok, (first.failures, first.stdout[-4000:])
    calls = log.read_text().splitlines()
    for name in names:
        mine = [c for c in calls if f" {fqdn[name]} " in c + " " or f"={fqdn[name]} " in c + " "]
        assert mine[0] == f"show {fqdn[name]} {'MIXED' if name == one else 'IDLE'}", mine
        assert mine[1] == f"update NodeName={fqdn[name]} State=DRAIN Reason=fabricgen:deploy", mine
        assert mine[-1] == f"update NodeName={fqdn[name]} State=RESUME", mine
        assert not node(state, fqdn[name])["drain"]
    assert len(calls) == len([c for c in calls if ".cluster.example" in c]), "no call by the inventory name"

    # the ports go bad after the rollout: gpu02's second rail loses its link, gpu03's first trains
    # at 200 Gb/s; gpu01 loses a port too, and its first rail's MTU drifted (the run would change it)
    sys_root = lab.directory / "sys"
    write_fake_sysfs(sys_root / two, ["ens1f0np0", "ens2f0np0"], state={"ens2f0np0": "DOWN"})
    write_fake_sysfs(sys_root / three, ["ens1f0np0", "ens2f0np0"], rate_gbps={"ens1f0np0": 200})
    write_fake_sysfs(sys_root / one, ["ens1f0np0", "ens2f0np0"], state={"ens2f0np0": "DOWN"})
    lab.hosts[one].sh("ip link set dev ens1f0np0 mtu 1500")
    log.write_text("")
    second = run()
    down = "rail 1 ens2f0np0 (mlx5_1) port is DOWN (Disabled): check the cable and the leaf port"
    assert second.failures == [(one, "Pre-flight failed", f"{one}: {down} (and its rails or NIC QoS differ from "
                                                          "the render: not changed until the port is fixed)")]
    assert " mtu 1500 " in lab.hosts[one].sh("ip -o link show dev ens1f0np0").stdout, "gpu01 untouched"
    reported = "rail port not as planned, host not drained (this run changed nothing on its rails, and " \
               "re-applying cannot fix a port): "
    assert sorted(second.port_warnings) == [
        (two, reported + down),
        (three, reported + "rail 0 ens1f0np0 (mlx5_0) runs at 200 Gb/s, the plan needs 400: check the transceiver, "
                           "the cable and the leaf port speed")]
    assert [c for c in log.read_text().splitlines() if c.startswith("update")] == [], "nobody drained"
    assert second.hosts[two].changed == 0 and second.hosts[three].changed == 0 and second.hosts[two].failed == 0
    assert second.left_drained == []


def _wait_for(condition, what: str, timeout: float = 600.0) -> None:
    """Wait for a state the run exposes (the scheduler's state file), not for time to pass."""
    import time
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)


def test_a_host_lost_mid_batch_stops_the_rollout(netns_hosts, tmp_path, monkeypatch):  # noqa: F811
    """Issue 33, item 1: `serial: [1, 2, 2]` over five hosts; gpu03's sshd stops during batch 2, after
    the scheduler drained it and while it waits for its jobs. Ansible neither counts an unreachable
    host against max_fail_percentage nor runs its rescue (plugins/strategy/linear.py), so before,
    batch 3 ran and gpu03 stayed drained unmentioned. Now batch 3 does not start, its batch mate is
    undrained, and the run fails naming gpu03, lost and left drained."""
    import threading

    _, plan, render, gateway = _plan(tmp_path, extra=DEPLOY, nodes=5)
    names = [h.name for h in plan.hosts]
    one, two, three, four, five = names
    lab = netns_hosts(plan, gateway)
    fakes = write_fake_nic_tools(lab.directory / "fakebin")
    for host in plan.hosts:
        write_fake_sysfs(lab.directory / "sys" / host.name, [n.netdev for n in host.nics])
    slurm_bin = write_fake_scontrol(tmp_path / "slurmbin")
    state, log = tmp_path / "slurm.json", tmp_path / "slurm.log"
    monkeypatch.setenv("PATH", f"{slurm_bin}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_SLURM_STATE", str(state))
    monkeypatch.setenv("FAKE_SLURM_LOG", str(log))
    # gpu03 runs a job that does not end until the test lets it: the run waits there, drained
    set_nodes(state, {**{n: {} for n in names}, three: {"jobs": -1}})
    extravars = {**_lab_vars(lab, fakes), "fabricgen_hosts_drain_poll": 0.2, "fabricgen_hosts_serial": [1, 2, 2]}
    done: dict = {}

    def run():
        try:
            done["result"] = run_hosts_playbook(render, render / "inventory.yml", extravars=extravars,
                                                ssh_key=lab.key, known_hosts=lab.known_hosts,
                                                private_data_dir=tmp_path / "runner")
        except BaseException as exc:  # noqa: BLE001 - re-raised in the test's thread below
            done["error"] = exc

    worker = threading.Thread(target=run)
    worker.start()
    try:
        _wait_for(lambda: node(state, three)["drain"] or not worker.is_alive(), f"the drain of {three}")
        assert worker.is_alive(), done
        assert lab.hosts[three].stop_sshd(), "gpu03's sshd ran"
        set_nodes(state, {three: {"jobs": 0}})      # its job ends: the run goes on to change it
    finally:
        worker.join(timeout=900)
    assert "error" not in done, done.get("error")
    result = done["result"]

    assert not result.ok
    assert _apply_batches(result) == [[one], [two, three]], result.batches     # batch 3 never started
    assert result.lost == [three], result.failures
    assert [h for h, _, _ in result.failures] == [three], result.failures     # the mates' stop is no news
    assert result.hosts[three].unreachable == 1
    assert result.left_drained == [(three, "unreachable after its drain, state unknown: check it, then undrain "
                                           "it by hand")]
    # the scheduler: gpu03 drained by this run, gpu02 back, gpu04/05 never touched
    assert node(state, three)["drain"] and node(state, three)["reason"] == "fabricgen:deploy"
    assert not node(state, one)["drain"] and not node(state, two)["drain"]
    assert not any(f"={n} " in line + " " for line in log.read_text().splitlines() for n in (four, five)
                   if line.startswith("update")), log.read_text()
    for name in (four, five):
        assert not (lab.hosts[name].root / "etc/netplan/60-fabricgen.yaml").exists(), name
    assert (lab.hosts[two].root / "etc/netplan/60-fabricgen.yaml").is_file()


ADMIN = {"drain": True, "reason": "RMA 4711: replace the PSU", "by": "alice", "at": "2026-11-30T09:15:00"}


def test_drains_belong_to_whoever_set_them(netns_hosts, tmp_path, monkeypatch):  # noqa: F811
    """Issue 33, item 3: `scontrol update State=DRAIN` replaces a drain's reason, user and time
    (node_mgr.c update_node). An operator's drain keeps all three through the deploy, --health and
    the undrain; a drain someone put over the run's own during the run is not resumed; a drain the
    rollout left ("fabricgen:") is the rollout's to take up and resume."""
    import shlex
    import threading

    from fake_nic import reset_nic_qos
    from test_hosts_netns import _host_env

    _, plan, render, gateway = _plan(tmp_path, extra=DEPLOY)
    one, two, three = [h.name for h in plan.hosts]
    lab = netns_hosts(plan, gateway)
    fakes = write_fake_nic_tools(lab.directory / "fakebin")
    for host in plan.hosts:
        write_fake_sysfs(lab.directory / "sys" / host.name, [n.netdev for n in host.nics])
    slurm_bin = write_fake_scontrol(tmp_path / "slurmbin")
    state, log = tmp_path / "slurm.json", tmp_path / "slurm.log"
    monkeypatch.setenv("PATH", f"{slurm_bin}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_SLURM_STATE", str(state))
    monkeypatch.setenv("FAKE_SLURM_LOG", str(log))
    extravars = {**_lab_vars(lab, fakes), "fabricgen_hosts_drain_poll": 0.2}

    def run():
        return run_hosts_playbook(render, render / "inventory.yml", extravars=extravars, ssh_key=lab.key,
                                  known_hosts=lab.known_hosts, private_data_dir=tmp_path / "runner")

    def updates(name: str) -> list[str]:
        return [c for c in log.read_text().splitlines() if c.startswith(f"update NodeName={name} ")]

    # 1. gpu03 an operator drained; gpu02 runs a job while the run drains it, and an operator drains
    # it for an RMA before the job ends: the run goes on, and leaves the RMA drain alone
    set_nodes(state, {one: {}, two: {"jobs": -1}, three: ADMIN})
    done: dict = {}
    worker = threading.Thread(target=lambda: done.update(result=run()))
    worker.start()
    try:
        _wait_for(lambda: node(state, two)["drain"] or not worker.is_alive(), f"the drain of {two}")
        rma = {"reason": "RMA 99: fan", "by": "bob", "at": "2026-12-05T08:00:00"}
        set_nodes(state, {two: {**rma, "jobs": 0}})
    finally:
        worker.join(timeout=900)
    first = done["result"]
    assert first.ok, (first.failures, first.stdout[-4000:])
    assert first.drain_notes == [(two, f"not undrained: its drain now has Reason={rma['reason']} "
                                       f"[{rma['by']}@{rma['at']}], not set by this run: left to whoever set it")]
    assert updates(two) == [f"update NodeName={two} State=DRAIN Reason=fabricgen:deploy"], "never resumed"
    assert {k: node(state, two)[k] for k in rma} == rma and node(state, two)["drain"]
    assert updates(three) == [] and {k: node(state, three)[k] for k in ADMIN} == ADMIN
    assert (lab.hosts[three].root / "etc/netplan/60-fabricgen.yaml").is_file()
    assert first.left_drained == []

    # 2. --health on gpu03 with its QoS reset: the operator's drain is kept, not replaced
    host = lab.hosts[three]
    reset_nic_qos(lab.directory / "sys" / three, lab.directory / "nicstate" / three, "ens2f0np0")
    env = f"{_host_env(lab, fakes, three)} FAKE_SLURM_STATE={shlex.quote(str(state))} SLURMD_NODENAME={three}"
    health = host.sh(f"{env} {host.root}/usr/local/sbin/fabricgen-roce-qos --health", check=False)
    assert health.returncode == 1, health.stdout
    assert f"kept: slurm node {three} is drained or down already (Reason={ADMIN['reason']})" in health.stdout
    assert updates(three) == [] and {k: node(state, three)[k] for k in ADMIN} == ADMIN

    # 3. deploy again: gpu03 (QoS drifted) is changed under the operator's drain, which stays as it
    # was; gpu01 has a drain an earlier run left ("fabricgen:", e.g. a run that lost it) and a
    # drifted rail: the run takes it up, re-applies and resumes it
    set_nodes(state, {one: {"drain": True, "reason": "fabricgen:deploy", "by": "root"}})
    lab.hosts[one].sh("ip link set dev ens1f0np0 mtu 1500")
    log.write_text("")
    second = run()
    assert second.ok, (second.failures, second.stdout[-4000:])
    assert updates(three) == [] and {k: node(state, three)[k] for k in ADMIN} == ADMIN
    assert host.sh(f"{_host_env(lab, fakes, three)} {host.root}/usr/local/sbin/fabricgen-roce-qos --check",
                   check=False).returncode == 0, "applied under the operator's drain"
    assert updates(one)[-1] == f"update NodeName={one} State=RESUME" and not node(state, one)["drain"]
    assert " mtu 4200 " in lab.hosts[one].sh("ip -o link show dev ens1f0np0").stdout
    assert second.left_drained == [] and second.drain_notes == [] and second.not_restored == []
