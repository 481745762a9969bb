"""`fabricgen drift --only hosts` against namespace hosts (issue 7).

Three GPU hosts with a real sshd each in a network namespace (tests/integration/netns.py):
the host playbook puts them in sync, drift reports them in sync (exit 0); a net.*
sysctl changed by hand inside one namespace is drift in its `sysctl` feature (exit 3);
a host whose sshd is stopped is unknown (exit 1).

The endpoints file's `hosts:` section carries what the namespace hosts need (user,
key, fabricgen_root, the fake NIC tools' environment); known_hosts sits next to it.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess

import pytest
import yaml

pytest.importorskip("ansible_runner", reason="host drift runs the playbook through ansible-runner")

from generator.checks.runner import run_checks
from generator.deploy.hosts import run_hosts_playbook
from generator.drift.command import run_drift
from generator.intent.loader import load_intent
from generator.render.output import render_files, write_tree
from tests.integration.netns import free_mgmt_octet, netns_hosts, write_fake_nic_tools, write_fake_sysfs  # noqa: F401  (fixture)

pytestmark = [pytest.mark.integration, pytest.mark.root, pytest.mark.timeout(480)]

INTENT = """
fabric: {{name: nsdrift}}
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
SYSCTL = "net.ipv4.conf.all.arp_ignore"


def _drift(intent, endpoints, out) -> tuple[int, dict]:
    rc = run_drift(str(intent), endpoints=str(endpoints), only="hosts", fmt="json", output=str(out)).exit_code
    return rc, json.loads(out.read_text())


def test_drift_on_namespace_hosts(netns_hosts, tmp_path):  # noqa: F811
    octet = free_mgmt_octet()
    intent = tmp_path / "fabric.yaml"
    intent.write_text(INTENT.format(octet=octet))
    loaded = load_intent(intent)
    plan = run_checks(loaded).plan
    assert plan is not None
    files = render_files(plan, loaded.text)
    render = write_tree(files, tmp_path / "render")

    lab = netns_hosts(plan, f"198.18.{octet}.254")
    fakes = write_fake_nic_tools(lab.directory / "fakebin")
    for host in plan.hosts:
        write_fake_sysfs(lab.directory / "sys" / host.name, [n.netdev for n in host.nics])
    extravars = {
        "ansible_python_interpreter": "/usr/bin/python3",
        "fabricgen_root": f"{lab.directory}/root/{{{{ inventory_hostname }}}}",
        "fabricgen_qos_environment": {
            "PATH": f"{fakes}:/usr/local/sbin:/usr/sbin:/usr/bin:/sbin:/bin",
            "FABRICGEN_SYSROOT": f"{lab.directory}/sys/{{{{ inventory_hostname }}}}",
            "FAKE_NIC_STATE": f"{lab.directory}/nicstate/{{{{ inventory_hostname }}}}",
            "FAKE_NIC_LOG": str(lab.directory / "nic.log"),
        },
    }
    # known_hosts is looked up next to the endpoints file: lab.directory holds both
    endpoints = lab.directory / "endpoints.yml"
    endpoints.write_text(yaml.safe_dump({"hosts": {"user": lab.user, "ssh_key": lab.key.name,
                                                    "extravars": extravars}}))

    applied = run_hosts_playbook(render, render / "inventory.yml", extravars={**lab.extravars(), **extravars},
                                 ssh_key=lab.key, known_hosts=lab.known_hosts, private_data_dir=tmp_path / "runner")
    assert applied.ok, (applied.failures, applied.stdout[-4000:])
    names = {h.name for h in plan.hosts}
    assert set(applied.hosts) == names

    # 1. in sync
    rc, report = _drift(intent, endpoints, tmp_path / "sync.json")
    assert rc == 0, report
    assert report["summary"] == {"devices": 3, "in_sync": 3, "drift": 0, "pending": 0, "unknown": 0}
    assert {n: d["status"] for n, d in report["devices"].items()} == {n: "in_sync" for n in names}

    # 2. a sysctl changed by hand in one namespace: drift there, nowhere else, nothing repaired
    victim = lab.hosts[plan.hosts[1].name]
    assert victim.sysctl(SYSCTL) == "1"
    subprocess.run(["ip", "netns", "exec", victim.netns, "sysctl", "-q", "-w", f"{SYSCTL}=0"], check=True,
                   timeout=30)
    rc, report = _drift(intent, endpoints, tmp_path / "drift.json")
    assert rc == 3, report
    assert report["summary"] == {"devices": 3, "in_sync": 2, "drift": 1, "pending": 0, "unknown": 0}
    entry = report["devices"][victim.name]
    assert entry["kind"] == "host" and entry["status"] == "drift"
    assert list(entry["features"]) == ["sysctl"], entry
    # named key by key: the sysctl, with what the host has and what the render wants
    assert entry["features"]["sysctl"]["changed"] == [{"path": SYSCTL, "intended": "1", "actual": "0"}]
    assert all(report["devices"][n]["status"] == "in_sync" for n in names - {victim.name})
    assert victim.sysctl(SYSCTL) == "0", "check mode must not repair"

    # 2a. a rail's source rule and its route to the rail pool removed by hand: drift in `rules` and
    #     `routes`, each named (before, only the task "Rail interfaces (...)" was)
    other = lab.hosts[plan.hosts[0].name]
    nic = plan.hosts[0].nics[1]
    table = 100 + nic.rail
    other.sh(f"ip rule del priority {table} && ip route del {plan.rail_pool} table {table}")
    rc, report = _drift(intent, endpoints, tmp_path / "routes.json")
    assert rc == 3, report
    features = report["devices"][other.name]["features"]
    assert sorted(features) == ["routes", "rules"], features
    assert features["routes"]["changed"] == [{"path": f"{plan.rail_pool} table {table} dev {nic.netdev}",
                                              "intended": f"via {nic.gateway}", "actual": "missing or different"}]
    assert features["rules"]["changed"] == [{"path": f"priority {table} from {nic.ip.split('/')[0]}/32",
                                             "intended": f"lookup {table}", "actual": "missing"}]
    other.sh(f"ip rule add from {nic.ip.split('/')[0]} table {table} priority {table} protocol static && "
             f"ip route add {plan.rail_pool} via {nic.gateway} dev {nic.netdev} table {table}")

    # 2b. --limit: the playbook runs on the matching host only, the others are not reported at all
    out = tmp_path / "limit.json"
    rc = run_drift(str(intent), endpoints=str(endpoints), only="hosts", fmt="json", output=str(out),
                   limit=victim.name).exit_code
    report = json.loads(out.read_text())
    assert rc == 3, report
    assert {n: d["status"] for n, d in report["devices"].items()} == {victim.name: "drift"}

    # 3. one host unreachable: stop the sshd our fixture started, and its sessions (ansible's
    #    ControlPersist master would otherwise still get through)
    gone = lab.hosts[plan.hosts[2].name]
    assert gone.sshd is not None
    gone.sshd.send_signal(signal.SIGTERM)
    gone.sshd.wait(timeout=10)
    for pid in subprocess.run(["ip", "netns", "pids", gone.netns], capture_output=True, text=True,
                              timeout=30).stdout.split():
        try:
            os.kill(int(pid), signal.SIGKILL)
        except ProcessLookupError:
            pass
    rc, report = _drift(intent, endpoints, tmp_path / "unknown.json")
    assert rc == 1, report
    assert report["devices"][gone.name]["status"] == "unknown"
    assert report["devices"][gone.name].get("error"), report["devices"][gone.name]
    assert report["devices"][victim.name]["status"] == "drift"
    assert report["summary"]["unknown"] == 1
