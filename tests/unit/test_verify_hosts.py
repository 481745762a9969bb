"""host-roce: reading `roce-qos.sh --check` and `rdma -j link show` against the plan's rails."""

from __future__ import annotations

import json

from generator.plan.model import Host, Nic
from generator.verify.hosts import qos_findings, rdma_findings

HOST = Host("gpu01", 1, "192.168.1.1", None, None, (
    Nic(0, "ens1f0np0", "mlx5_0", "172.16.0.1/31", "172.16.0.0", "leaf-1", "swp1"),
    Nic(1, "ens2f0np0", "mlx5_1", "172.16.0.129/31", "172.16.0.128", "leaf-2", "swp1")))


def _link(ifname, netdev, state="ACTIVE", physical="LINK_UP"):
    # iproute2 rdma/link.c (JSON): ifindex = device index, port, ifname = "<device>/<port>", state,
    # physical_state, netdev, netdev_index
    return {"ifindex": 1, "port": 1, "ifname": f"{ifname}/1", "state": state, "physical_state": physical,
            "netdev": netdev, "netdev_index": 5}


def test_all_rails_active_on_their_netdev():
    text = json.dumps([_link("mlx5_0", "ens1f0np0"), _link("mlx5_1", "ens2f0np0")])
    assert rdma_findings(HOST, text) == []


def test_down_missing_and_misplaced_rails_are_named():
    text = json.dumps([_link("mlx5_0", "ens2f0np0")])
    findings = rdma_findings(HOST, text)
    assert [(f.port, f.observed) for f in findings] == [("ens1f0np0", "on ens2f0np0"),
                                                        ("ens2f0np0", "no such RDMA device")]
    down = rdma_findings(HOST, json.dumps([_link("mlx5_0", "ens1f0np0", "DOWN", "DISABLED"),
                                           _link("mlx5_1", "ens2f0np0")]))
    assert [f.observed for f in down] == ["DOWN DISABLED"]


def test_unreadable_rdma_output_is_a_finding():
    (finding,) = rdma_findings(HOST, "rdma: command not found")
    assert finding.observed == "unreadable output"


def test_roce_qos_check_exit_1_lists_what_differs():
    assert qos_findings(HOST, 0, "ok: ens1f0np0 trust = dscp\n") == []
    # the lines templates/host/roce-qos.sh.j2 prints in --check mode (settle / unknown helpers)
    out = ("ok: ens1f0np0 trust = dscp\n"
           "differs: ens2f0np0 trust: have 'pcp', want 'dscp'\n"
           "ok: ens2f0np0 pfc = 0,0,0,1,0,0,0,0\n"
           "differs: mlx5_1 cnp dscp: cannot read (no such file)\n")
    (finding,) = qos_findings(HOST, 1, out)
    assert finding.observed == ("differs: ens2f0np0 trust: have 'pcp', want 'dscp'; "
                                "differs: mlx5_1 cnp dscp: cannot read (no such file)")
