"""playbooks/hosts.yml through ansible-runner over real SSH into namespace hosts (issue 16).

Three GPU hosts, each a network namespace with its own sshd (tests/integration/netns.py), rail
NICs as veths whose leaf side sits in a shared fabric namespace, and a fake /sys tree plus the
fake NIC tools of tests/integration/fake_nic.py (the one stand-in the test plan allows: there
are no ConnectX NICs here). The playbook runs as it does for `fabricgen deploy`: the batch
settings come from the intent's deploy.hosts through the inventory, `become: true` (sudo).
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

pytest.importorskip("ansible_runner", reason="the host playbook runs through ansible-runner")

from fake_nic import reset_nic_qos  # noqa: E402
from netns import free_mgmt_octet, netns_hosts, write_fake_nic_tools, write_fake_sysfs  # noqa: E402,F401  (fixture)

from generator.checks.runner import run_checks  # noqa: E402
from generator.deploy.hosts import APPLY_PLAY, run_hosts_playbook  # noqa: E402
from generator.intent.loader import load_intent  # noqa: E402
from generator.render.output import render_files, write_tree  # noqa: E402

pytestmark = [pytest.mark.integration, pytest.mark.root, pytest.mark.timeout(600)]

INTENT = """
fabric: {{name: nstest}}
topology:
  kind: leaf-spine
  nodes: 3
  rails: 2
  nic_speed: 400G
  switches: {{leaf: {{model: SN4700}}, spine: {{model: SN4700}}}}
roce: {{mtu: {{switch: 9216, host: 4200}}}}
addressing:
  loopbacks: 10.255.0.0/24
  rails: 172.16.0.0/24
  management: 198.18.{octet}.0/24
hosts:
  name: "gpu{{n:02d}}"
  mgmt_interface: eno1
  rails:
    - {{netdev: ens1f0np0, rdma: mlx5_0}}
    - {{netdev: ens2f0np0, rdma: mlx5_1}}
  nic_tooling: mlnx_qos
{extra}
"""

HOOK = """#!/bin/sh
echo "$*" >> {log}
"""


def _plan(tmp_path: Path, extra: str = "", nodes: int = 3):
    octet = free_mgmt_octet()
    intent = tmp_path / "fabric.yaml"
    intent.write_text(INTENT.format(octet=octet, extra=extra).replace("  nodes: 3\n", f"  nodes: {nodes}\n"))
    loaded = load_intent(intent)
    plan = run_checks(loaded).plan
    assert plan is not None
    render = write_tree(render_files(plan, loaded.text), tmp_path / "render")
    return intent, plan, render, f"198.18.{octet}.254"


def _lab_vars(lab, fakes: Path) -> dict:
    """What the namespace hosts need: files under a per-host root, the fake /sys and NIC tools."""
    return {
        **lab.extravars(),
        "fabricgen_root": f"{lab.directory}/root/{{{{ inventory_hostname }}}}",
        "fabricgen_qos_environment": {
            "PATH": f"{fakes}:/usr/local/sbin:/usr/sbin:/usr/bin:/sbin:/bin",
            "FABRICGEN_SYSROOT": f"{lab.directory}/sys/{{{{ inventory_hostname }}}}",
            "FAKE_NIC_STATE": f"{lab.directory}/nicstate/{{{{ inventory_hostname }}}}",
            "FAKE_NIC_LOG": str(lab.directory / "nic.log"),
        },
    }


def _host_env(lab, fakes: Path, name: str) -> str:
    """The same environment for a command run by hand inside a host namespace."""
    env = {"PATH": f"{fakes}:/usr/local/sbin:/usr/sbin:/usr/bin:/sbin:/bin",
           "FABRICGEN_SYSROOT": f"{lab.directory}/sys/{name}",
           "FAKE_NIC_STATE": f"{lab.directory}/nicstate/{name}",
           "FAKE_NIC_LOG": str(lab.directory / "nic.log")}
    return " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())


def _apply_batches(result) -> list[list[str]]:
    """The hosts of each run of the apply play, in run order (within a batch hosts run in parallel)."""
    return [sorted(hosts) for play, hosts in result.batches if play == APPLY_PLAY]


def test_batched_rollout_idempotent_check_mode_and_qos_reset(netns_hosts, tmp_path):  # noqa: F811
    hook_log = tmp_path / "hooks.log"
    hook = tmp_path / "hook.sh"
    hook.write_text(HOOK.format(log=hook_log))
    hook.chmod(0o755)
    intent, plan, render, gateway = _plan(tmp_path, extra=(
        "deploy:\n  hosts:\n    canary: 1\n    batch: 2\n    idle: true\n"
        f"    drain: \"{hook} drain {{host}}\"\n    undrain: \"{hook} undrain {{host}}\"\n"))
    names = [h.name for h in plan.hosts]
    lab = netns_hosts(plan, gateway)
    fakes = write_fake_nic_tools(lab.directory / "fakebin")
    for host in plan.hosts:
        write_fake_sysfs(lab.directory / "sys" / host.name, [n.netdev for n in host.nics])
    nic_log = lab.directory / "nic.log"
    extravars = _lab_vars(lab, fakes)

    def run(**kw):
        return run_hosts_playbook(render, render / "inventory.yml", extravars=extravars, ssh_key=lab.key,
                                  known_hosts=lab.known_hosts, private_data_dir=tmp_path / "runner", **kw)

    first = run()
    assert first.ok, (first.failures, first.stdout[-4000:])
    assert set(first.hosts) == set(names)
    assert all(s.changed > 0 for s in first.hosts.values())
    # deploy.hosts canary 1, batch 2: the apply play ran on one host, then on the other two
    assert _apply_batches(first) == [names[:1], names[1:]], first.batches
    # the hooks ran on the controller around each host's changes, batch after batch
    hooks = hook_log.read_text().splitlines()
    assert hooks[:2] == [f"drain {names[0]}", f"undrain {names[0]}"], hooks
    assert sorted(hooks[2:4]) == [f"drain {n}" for n in names[1:]] and \
        sorted(hooks[4:]) == [f"undrain {n}" for n in names[1:]], hooks

    for ph in plan.hosts:
        h = lab.hosts[ph.name]
        for nic in ph.nics:
            table = 100 + nic.rail
            link = h.sh(f"ip -o link show dev {nic.netdev}").stdout
            assert " mtu 4200 " in link and "UP" in link
            addrs = h.sh(f"ip -o -4 addr show dev {nic.netdev}").stdout
            assert f"inet {nic.ip} " in addrs and addrs.count(" inet ") == 1
            rule = h.sh(f"ip -4 rule show priority {table}").stdout.split()
            # added as systemd-networkd adds it (proto static): one rule whoever comes second
            assert rule == [f"{table}:", "from", nic.ip.split("/")[0], "lookup", str(table), "proto", "static"]
            route = h.sh(f"ip -4 route show table {table}").stdout
            assert f"{plan.rail_pool} via {nic.gateway} dev {nic.netdev}" in route
            main = h.sh(f"ip -4 route show {plan.rail_pool}").stdout
            assert f"{plan.rail_pool} via {nic.gateway} dev {nic.netdev} metric {table}" in main, main
            for key, want in (("arp_ignore", "1"), ("arp_announce", "2"), ("rp_filter", "2")):
                assert h.sysctl(f"net.ipv4.conf.{nic.netdev}.{key}") == want
            # the leaf side answers through the rail's own table
            assert h.sh(f"ip -4 route get {nic.gateway} from {nic.ip.split('/')[0]}").returncode == 0
        assert h.sysctl("net.ipv4.tcp_rmem") == "4096 131072 67108864"
        # management interface untouched
        mgmt = h.sh("ip -o -4 addr show dev eno1").stdout
        assert f"inet {ph.mgmt_ip}/32" in mgmt and mgmt.count(" inet ") == 1
        assert " mtu 1500 " in h.sh("ip -o link show dev eno1").stdout
        # files under fabricgen_root, byte for byte, with their modes (the contract's table)
        rendered = render / "hosts" / ph.name
        for src, dest, mode in (("netplan.yaml", "etc/netplan/60-fabricgen.yaml", 0o600),
                                ("sysctl.conf", "etc/sysctl.d/90-fabricgen.conf", 0o644),
                                ("roce-qos.sh", "usr/local/sbin/fabricgen-roce-qos", 0o755),
                                ("fabricgen-roce-qos@.service", "etc/systemd/system/fabricgen-roce-qos@.service",
                                 0o644),
                                ("81-fabricgen-roce-qos.rules", "etc/udev/rules.d/81-fabricgen-roce-qos.rules", 0o644),
                                ("fabricgen-roce-qos-reconcile.service",
                                 "etc/systemd/system/fabricgen-roce-qos-reconcile.service", 0o644),
                                ("fabricgen-roce-qos-reconcile.timer",
                                 "etc/systemd/system/fabricgen-roce-qos-reconcile.timer", 0o644),
                                ("slurmd-roce-qos.conf", "etc/systemd/system/slurmd.service.d/fabricgen-roce-qos.conf",
                                 0o644),
                                ("kubelet-roce-qos.conf",
                                 "etc/systemd/system/kubelet.service.d/fabricgen-roce-qos.conf", 0o644),
                                ("nccl.conf", "etc/nccl.conf", 0o644),
                                ("nccl.env", "etc/fabricgen/nccl.env", 0o644)):
            installed = h.root / dest
            assert installed.read_bytes() == (rendered / src).read_bytes(), dest
            assert stat.S_IMODE(installed.stat().st_mode) == mode, dest
        assert (lab.directory / "sys" / ph.name / "sys/class/net/ens1f0np0/ecn/roce_np/enable/3").read_text() == "1\n"
    calls = nic_log.read_text().splitlines()
    assert "mlnx_qos -i ens1f0np0 --trust dscp" in calls
    assert "mlnx_qos -i ens2f0np0 --pfc 0,0,0,1,0,0,0,0" in calls
    assert "cma_roce_tos -d mlx5_1 -t 104" in calls

    hook_log.write_text("")
    second = run()
    assert second.ok, second.failures
    assert {n: s.changed for n, s in second.hosts.items()} == {n: 0 for n in names}, second.changes
    assert hook_log.read_text() == "", "a host with nothing to change is not drained"

    # a check run: nothing to change, everything read at once; verbose, to see the privilege escalation
    hook_log.write_text("")
    checked = run(check=True, diff=True, verbosity=3)
    assert checked.ok, checked.failures
    assert {n: s.changed for n, s in checked.hosts.items()} == {n: 0 for n in names}, checked.changes
    assert _apply_batches(checked) == [names]
    assert hook_log.read_text() == "", "no drain in check mode"
    # become: true with the default become_method: every task on the hosts runs through sudo as root
    assert "sudo -H -S -n  -u root" in checked.stdout or "sudo -H -S -n -u root" in checked.stdout

    # drift on one host: check mode reports it and changes nothing; a real run repairs it
    victim = lab.hosts[names[0]]
    victim.sh("ip link set dev ens1f0np0 mtu 1500 && ip rule del priority 101")
    (victim.root / "etc/nccl.conf").write_text("NCCL_IB_HCA=mlx5\n")
    drifted = run(check=True, diff=True)
    assert drifted.ok, drifted.failures
    assert drifted.hosts[victim.name].changed >= 2
    assert all(s.changed == 0 for n, s in drifted.hosts.items() if n != victim.name), drifted.changes
    assert " mtu 1500 " in victim.sh("ip -o link show dev ens1f0np0").stdout
    assert victim.sh("ip -4 rule show priority 101").stdout.strip() == ""
    assert "--- before" in drifted.stdout or "+++ after" in drifted.stdout      # --diff of nccl.conf
    hook_log.write_text("")
    repaired = run()
    assert repaired.ok and repaired.hosts[victim.name].changed >= 2
    # its rail was about to change: that host alone was drained, and undrained once it got through
    assert hook_log.read_text().splitlines() == [f"drain {victim.name}", f"undrain {victim.name}"]
    assert " mtu 4200 " in victim.sh("ip -o link show dev ens1f0np0").stdout
    assert (victim.root / "etc/nccl.conf").read_bytes() == (render / "hosts" / victim.name / "nccl.conf").read_bytes()

    # a driver reload on one NIC of another host puts its QoS back to the defaults (PCP trust):
    # the installed script's --check sees it; the unit's own command, as udev would start it
    # for the re-added netdev, repairs it
    reset = lab.hosts[names[1]]
    sysroot = lab.directory / "sys" / reset.name
    reset_nic_qos(sysroot, lab.directory / "nicstate" / reset.name, "ens2f0np0")
    env = _host_env(lab, fakes, reset.name)
    script = reset.root / "usr/local/sbin/fabricgen-roce-qos"
    found = reset.sh(f"{env} {script} --check", check=False)
    assert found.returncode == 1, found.stdout
    assert any(line.startswith("differs: ens2f0np0 trust") for line in found.stdout.splitlines()), found.stdout
    unit = (reset.root / "etc/systemd/system/fabricgen-roce-qos@.service").read_text()
    exec_start = next(line.split("=", 1)[1] for line in unit.splitlines() if line.startswith("ExecStart="))
    argv = shlex.split(exec_start.replace("%I", "ens2f0np0"))
    assert argv[0] == "/usr/local/sbin/fabricgen-roce-qos"      # the installed script, below fabricgen_root here
    argv[0] = str(reset.root) + argv[0]
    fixed = reset.sh(f"{env} {shlex.join(argv)}", check=False)
    assert fixed.returncode == 0, fixed.stdout
    assert "changed: ens2f0np0 trust" in fixed.stdout, fixed.stdout
    assert reset.sh(f"{env} {script} --check", check=False).returncode == 0
    state = json.loads((lab.directory / "nicstate" / reset.name / "mlnx_qos-ens2f0np0.json").read_text())
    assert state["trust"] == "dscp"
    assert os.path.exists(sysroot / "sys/class/net/ens2f0np0")


def test_lldpd_is_an_optional_tagged_feature(netns_hosts, tmp_path):  # noqa: F811
    """hosts.lldpd: the render holds lldpd's drop-in (`configure lldp portidsubtype ifname`,
    lldpcli(8)) and the playbook's `lldpd` tag installs it; off again, the tag removes it. Under a
    fabricgen_root the package and the service are left out (no package database, no systemd)."""
    _, plan, render, gateway = _plan(tmp_path, extra="  lldpd: true\n")
    one = plan.hosts[0].name
    rendered = (render / "hosts" / one / "lldpd.conf").read_text()
    assert rendered.splitlines()[-1] == "configure lldp portidsubtype ifname"
    assert "fabricgen_lldpd: true" in (render / "inventory.yml").read_text()
    lab = netns_hosts(plan, gateway)
    fakes = write_fake_nic_tools(lab.directory / "fakebin")
    for host in plan.hosts:
        write_fake_sysfs(lab.directory / "sys" / host.name, [n.netdev for n in host.nics])
    extravars = _lab_vars(lab, fakes)
    conf = lab.hosts[one].root / "etc/lldpd.d/fabricgen.conf"

    def run(directory: Path, **kw):
        return run_hosts_playbook(directory, directory / "inventory.yml", extravars=extravars, ssh_key=lab.key,
                                  known_hosts=lab.known_hosts, private_data_dir=tmp_path / "runner", limit=one,
                                  tags="lldpd", **kw)

    checked = run(render, check=True)
    assert checked.ok and checked.hosts[one].changed > 0 and not conf.exists(), checked.failures
    first = run(render)
    assert first.ok, (first.failures, first.stdout[-4000:])
    assert conf.read_text() == rendered and stat.S_IMODE(conf.stat().st_mode) == 0o644
    # only the lldpd tag ran: no other host file was installed
    assert not (lab.hosts[one].root / "etc/nccl.conf").exists()
    again = run(render)
    assert again.ok and again.hosts[one].changed == 0, again.changes

    # hosts.lldpd off: nothing is rendered for lldpd, and the tag removes the drop-in of the earlier run
    off_intent = tmp_path / "off" / "fabric.yaml"
    off_intent.parent.mkdir()
    off_intent.write_text((tmp_path / "fabric.yaml").read_text().replace("  lldpd: true\n", ""))
    off_loaded = load_intent(off_intent)
    off = write_tree(render_files(run_checks(off_loaded).plan, off_loaded.text), tmp_path / "off" / "render")
    assert not (off / "hosts" / one / "lldpd.conf").exists()
    assert "fabricgen_lldpd" not in (off / "inventory.yml").read_text()
    removed = run(off)
    assert removed.ok and removed.hosts[one].changed > 0 and not conf.exists(), removed.failures
    assert run(off).hosts[one].changed == 0


def test_netplan_per_rail_leaves_another_files_pending_edit(netns_hosts, tmp_path):  # noqa: F811
    """Issue 33 item 7: with netplan applying (fabricgen_netplan_apply true; under a fabricgen_root the
    real `netplan generate` writes into it and networkctl is left out), the rails' networkd files are
    installed while the management file's edit that nobody applied keeps its old networkd file; the run
    says so, and a second run changes nothing. The old apply ran a global `netplan generate` (on /,
    whatever fabricgen_root said) that rewrote every netplan output."""
    netplan = shutil.which("netplan") or "/usr/sbin/netplan"
    if not Path(netplan).exists():
        pytest.skip("netplan not found: apt-get install -y netplan.io")
    _, plan, render, gateway = _plan(tmp_path)
    one = plan.hosts[0].name
    lab = netns_hosts(plan, gateway)
    fakes = write_fake_nic_tools(lab.directory / "fakebin")
    for host in plan.hosts:
        write_fake_sysfs(lab.directory / "sys" / host.name, [n.netdev for n in host.nics])
    root = lab.hosts[one].root
    cloud = root / "etc/netplan/50-cloud-init.yaml"
    cloud.parent.mkdir(parents=True)
    cloud.write_text("network:\n  version: 2\n  ethernets:\n    eno1:\n      dhcp4: true\n")
    cloud.chmod(0o600)
    subprocess.run([netplan, "generate", "--root-dir", str(root)], check=True, capture_output=True, timeout=60)
    cloud.write_text("network:\n  version: 2\n  ethernets:\n    eno1:\n      addresses: [10.9.9.9/24]\n")
    mgmt = root / "run/systemd/network/10-netplan-eno1.network"
    before = mgmt.read_bytes()
    extravars = {**_lab_vars(lab, fakes), "fabricgen_netplan_apply": True}

    def run():
        return run_hosts_playbook(render, render / "inventory.yml", extravars=extravars, ssh_key=lab.key,
                                  known_hosts=lab.known_hosts, private_data_dir=tmp_path / "runner", limit=one,
                                  tags="netplan")

    first = run()
    assert first.ok, (first.failures, first.stdout[-4000:])
    for nic in plan.hosts[0].nics:
        network = (root / f"run/systemd/network/10-netplan-{nic.netdev}.network").read_text()
        assert f"Address={nic.ip}" in network and "ConfigureWithoutCarrier=yes" in network
    assert mgmt.read_bytes() == before
    assert "other netplan configuration is not applied yet" in first.stdout
    again = run()
    assert again.ok and again.hosts[one].changed == 0, again.changes
    assert mgmt.read_bytes() == before
