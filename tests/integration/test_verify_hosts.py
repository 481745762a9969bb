"""`fabricgen verify --only hosts` (host-roce) against namespace hosts with a real sshd each.

The hosts are put in place by the host playbook first; then roce-qos.sh --check passes and
every rail's RDMA port is ACTIVE on its netdev: exit 0. One rail reported DOWN is exactly one
host-roce finding on that host and netdev: exit 3. There are no ConnectX NICs here: mlnx_qos &
co. are the suite's fake NIC tools, and `rdma` prints a per-host JSON file in iproute2's
`rdma -j link show` shape (rdma/link.c), the same stand-in rule.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

pytest.importorskip("ansible_runner", reason="host-roce runs through ansible-runner")

from generator.checks.runner import run_checks
from generator.deploy.hosts import run_hosts_playbook
from generator.intent.loader import load_intent
from generator.render.output import render_files, write_tree
from generator.verify.command import run_verify
from tests.integration.netns import free_mgmt_octet, netns_hosts, write_fake_nic_tools, write_fake_sysfs  # noqa: F401  (fixture)
from tests.integration.test_drift_hosts import INTENT

pytestmark = [pytest.mark.integration, pytest.mark.root, pytest.mark.timeout(300)]

FAKE_RDMA = """#!/bin/sh
cat "$FABRICGEN_SYSROOT/rdma-link.json"
"""

# ethtool on the host whose sysroot holds a "pause-storm" file: each `ethtool -S NETDEV` first adds
# 10000 transmitted pause frames on priority 3 (the host pausing its leaf), then the fake answers.
PAUSE_STORM = """#!/bin/sh
if [ -e "$FABRICGEN_SYSROOT/pause-storm" ] && [ "$1" = -S ]; then
    /usr/bin/python3 -c "import sys; sys.path.insert(0, '{here}'); from pathlib import Path; \\
from generator.lab.nic_tools import add_pause_frames; add_pause_frames(Path(sys.argv[1]), sys.argv[2], 3, tx=10000)" \\
        "$FAKE_NIC_STATE" "$2"
fi
exec {fake} "$@"
"""


def _rdma_links(host, down: str | None = None) -> str:
    return json.dumps([{"ifindex": i, "port": 1, "ifname": f"{nic.rdma}/1",
                        "state": "DOWN" if nic.netdev == down else "ACTIVE",
                        "physical_state": "DISABLED" if nic.netdev == down else "LINK_UP",
                        "netdev": nic.netdev, "netdev_index": 10 + i} for i, nic in enumerate(host.nics)])


def test_host_roce_on_namespace_hosts(netns_hosts, tmp_path, capsys):  # noqa: F811
    octet = free_mgmt_octet()
    intent = tmp_path / "fabric.yaml"
    intent.write_text(INTENT.format(octet=octet))
    loaded = load_intent(intent)
    plan = run_checks(loaded).plan
    render = write_tree(render_files(plan, loaded.text), tmp_path / "render")

    lab = netns_hosts(plan, f"198.18.{octet}.254")
    fakes = write_fake_nic_tools(lab.directory / "fakebin")
    (fakes / "rdma").write_text(FAKE_RDMA)
    (fakes / "rdma").chmod(0o755)
    (fakes / "ethtool").rename(fakes / "ethtool.fake")
    (fakes / "ethtool").write_text(PAUSE_STORM.format(here=Path(__file__).parents[2], fake=fakes / "ethtool.fake"))
    (fakes / "ethtool").chmod(0o755)
    for host in plan.hosts:
        sysroot = lab.directory / "sys" / host.name
        write_fake_sysfs(sysroot, [n.netdev for n in host.nics])
        (sysroot / "rdma-link.json").write_text(_rdma_links(host))
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
    endpoints = lab.directory / "endpoints.yml"
    endpoints.write_text(yaml.safe_dump({"hosts": {"user": lab.user, "ssh_key": lab.key.name,
                                                    "extravars": extravars}}))
    applied = run_hosts_playbook(render, render / "inventory.yml", extravars={**lab.extravars(), **extravars},
                                 ssh_key=lab.key, known_hosts=lab.known_hosts, private_data_dir=tmp_path / "runner")
    assert applied.ok, (applied.failures, applied.stdout[-4000:])

    out = tmp_path / "ok.json"
    assert run_verify(str(intent), endpoints=str(endpoints), only="hosts", fmt="json", output=str(out)).exit_code == 0, \
        out.read_text()
    assert json.loads(out.read_text()) == {"summary": {"checked": 6, "passed": 6, "failed": 0, "unknown": 0},
                                           "findings": []}

    # a rail port down on one host; on another, a NIC that lost its DSCP trust (a driver reload resets it)
    victim, rebooted = plan.hosts[1], plan.hosts[0]
    (lab.directory / "sys" / victim.name / "rdma-link.json").write_text(_rdma_links(victim, down="ens2f0np0"))
    nic_state = lab.directory / "nicstate" / rebooted.name / "mlnx_qos-ens1f0np0.json"
    nic_state.write_text(json.dumps({**json.loads(nic_state.read_text()), "trust": "pcp"}))
    # and on the third, the host pausing its leaf: tx pause frames climb between verify's two reads
    stormy = plan.hosts[2]
    (lab.directory / "sys" / stormy.name / "pause-storm").write_text("")
    out = tmp_path / "down.json"
    assert run_verify(str(intent), endpoints=str(endpoints), only="hosts", fmt="json", output=str(out),
                      interval_s=1).exit_code == 3
    doc = json.loads(out.read_text())
    assert [(f["check"], f["device"], f["port"]) for f in doc["findings"]] == [
        ("host-roce", rebooted.name, ""), ("host-roce", victim.name, "ens2f0np0"),
        ("host-counters", stormy.name, "ens1f0np0"), ("host-counters", stormy.name, "ens2f0np0")]
    assert doc["findings"][1]["observed"] == "DOWN DISABLED"
    assert "differs:" in doc["findings"][0]["observed"] and "trust" in doc["findings"][0]["observed"]
    for finding in doc["findings"][2:]:
        assert finding["expected"] == "tx_prio3_pause <= 100/s" and finding["severity"] == "error"
        assert finding["observed"].startswith("tx_prio3_pause +10000 in ")
    assert doc["summary"] == {"checked": 6, "passed": 3, "failed": 3, "unknown": 0}

    # --limit: only the matching host is read; its two checks, nothing about the others
    out = tmp_path / "limit.json"
    assert run_verify(str(intent), endpoints=str(endpoints), only="hosts", fmt="json", output=str(out),
                      interval_s=1, limit=victim.name).exit_code == 3
    doc = json.loads(out.read_text())
    assert [(f["check"], f["device"], f["port"]) for f in doc["findings"]] == [("host-roce", victim.name, "ens2f0np0")]
    assert doc["summary"] == {"checked": 2, "passed": 1, "failed": 1, "unknown": 0}
