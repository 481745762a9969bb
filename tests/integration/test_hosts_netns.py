"""playbooks/hosts.yml through ansible-runner over real SSH into namespace hosts."""

from __future__ import annotations

import os
import random
import stat
from pathlib import Path

import pytest
from netns import netns_hosts, write_fake_nic_tools, write_fake_sysfs  # noqa: F401  (fixture)

from generator.deploy.hosts import run_hosts_playbook
from generator.intent.loader import parse_yaml, validate_data
from generator.plan.compile import compile_plan
from generator.render.hosts import render_host
from generator.render.inventory import render_inventory

pytestmark = [pytest.mark.integration, pytest.mark.root, pytest.mark.timeout(300)]

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
"""


def _render(plan, out: Path) -> None:
    for host in plan.hosts:
        for rel, text in render_host(plan, host).items():
            path = out / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
    (out / "inventory.yml").write_text(render_inventory(plan))


def test_playbook_configures_namespace_hosts_idempotently(netns_hosts, tmp_path):  # noqa: F811
    octet = random.randrange(1, 250)
    data, lines = parse_yaml(INTENT.format(octet=octet), "nstest.yaml")
    plan = compile_plan(validate_data(data, lines, "nstest.yaml"))
    render = tmp_path / "out"
    _render(plan, render)

    lab = netns_hosts(plan, f"198.18.{octet}.254")
    fakes = write_fake_nic_tools(lab.directory / "fakebin")
    for host in plan.hosts:
        write_fake_sysfs(lab.directory / "sys" / host.name, [n.netdev for n in host.nics])
    nic_log = lab.directory / "nic.log"
    extravars = {
        **lab.extravars(),
        "fabricgen_root": f"{lab.directory}/root/{{{{ inventory_hostname }}}}",
        "fabricgen_qos_environment": {
            "PATH": f"{fakes}:/usr/local/sbin:/usr/sbin:/usr/bin:/sbin:/bin",
            "FABRICGEN_SYSROOT": f"{lab.directory}/sys/{{{{ inventory_hostname }}}}",
            "FAKE_NIC_STATE": f"{lab.directory}/nicstate/{{{{ inventory_hostname }}}}",
            "FAKE_NIC_LOG": str(nic_log),
        },
    }

    def run(**kw):
        return run_hosts_playbook(render, render / "inventory.yml", extravars=extravars, ssh_key=lab.key,
                                  known_hosts=lab.known_hosts, private_data_dir=tmp_path / "runner", **kw)

    first = run()
    assert first.ok, (first.failures, first.stdout[-4000:])
    assert set(first.hosts) == {h.name for h in plan.hosts}
    assert all(s.changed > 0 for s in first.hosts.values())

    for ph in plan.hosts:
        h = lab.hosts[ph.name]
        for nic in ph.nics:
            table = 100 + nic.rail
            link = h.sh(f"ip -o link show dev {nic.netdev}").stdout
            assert " mtu 4200 " in link and "UP" in link
            assert f"inet {nic.ip} " in h.sh(f"ip -o -4 addr show dev {nic.netdev}").stdout
            rule = h.sh(f"ip -4 rule show priority {table}").stdout.split()
            assert rule == [f"{table}:", "from", nic.ip.split("/")[0], "lookup", str(table)]
            route = h.sh(f"ip -4 route show table {table}").stdout
            assert f"{plan.rail_pool} via {nic.gateway} dev {nic.netdev}" in route
            for key, want in (("arp_ignore", "1"), ("arp_announce", "2"), ("rp_filter", "2")):
                assert h.sysctl(f"net.ipv4.conf.{nic.netdev}.{key}") == want
            # the leaf side answers through the rail's own table
            assert h.sh(f"ip -4 route get {nic.gateway} from {nic.ip.split('/')[0]}").returncode == 0
        assert h.sysctl("net.ipv4.conf.all.arp_ignore") == "1"
        assert h.sysctl("net.ipv4.conf.all.rp_filter") == "2"
        assert h.sysctl("net.ipv4.tcp_rmem") == "4096 131072 67108864"
        # management interface untouched
        mgmt = h.sh("ip -o -4 addr show dev eno1").stdout
        assert f"inet {ph.mgmt_ip}/32" in mgmt and mgmt.count(" inet ") == 1
        assert " mtu 1500 " in h.sh("ip -o link show dev eno1").stdout
        # files under fabricgen_root, byte for byte, with their modes
        rendered = render / "hosts" / ph.name
        for src, dest, mode in (("netplan.yaml", "etc/netplan/60-fabricgen.yaml", 0o600),
                                ("sysctl.conf", "etc/sysctl.d/90-fabricgen.conf", 0o644),
                                ("roce-qos.sh", "usr/local/sbin/fabricgen-roce-qos", 0o755),
                                ("fabricgen-roce-qos.service", "etc/systemd/system/fabricgen-roce-qos.service", 0o644),
                                ("nccl.conf", "etc/nccl.conf", 0o644)):
            installed = h.root / dest
            assert installed.read_bytes() == (rendered / src).read_bytes()
            assert stat.S_IMODE(installed.stat().st_mode) == mode, dest
        assert (lab.directory / "sys" / ph.name / "sys/class/net/ens1f0np0/ecn/roce_np/enable/3").read_text() == "1\n"
    calls = nic_log.read_text().splitlines()
    assert "mlnx_qos -i ens1f0np0 --trust dscp" in calls
    assert "mlnx_qos -i ens2f0np0 --pfc 0,0,0,1,0,0,0,0" in calls
    assert "cma_roce_tos -d mlx5_1 -t 104" in calls

    second = run()
    assert second.ok, second.failures
    assert {n: s.changed for n, s in second.hosts.items()} == {h.name: 0 for h in plan.hosts}, second.changes

    # drift on one host: check mode reports it and changes nothing
    victim = lab.hosts[plan.hosts[0].name]
    victim.sh("ip link set dev ens1f0np0 mtu 1500 && ip rule del priority 101")
    (victim.root / "etc/nccl.conf").write_text("NCCL_IB_HCA=mlx5\n")
    checked = run(check=True, diff=True)
    assert checked.ok, checked.failures
    assert checked.hosts[victim.name].changed >= 2
    assert all(s.changed == 0 for n, s in checked.hosts.items() if n != victim.name), checked.changes
    assert " mtu 1500 " in victim.sh("ip -o link show dev ens1f0np0").stdout
    assert victim.sh("ip -4 rule show priority 101").stdout.strip() == ""
    assert "--- before" in checked.stdout or "+++ after" in checked.stdout      # --diff of nccl.conf

    repaired = run()
    assert repaired.ok and repaired.hosts[victim.name].changed >= 2
    assert " mtu 4200 " in victim.sh("ip -o link show dev ens1f0np0").stdout
    assert os.path.getsize(victim.root / "etc/nccl.conf") == (render / "hosts" / victim.name / "nccl.conf").stat().st_size
