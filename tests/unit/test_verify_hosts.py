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


# --- host-counters: two reads of `roce-qos.sh --counters` -----------------------------------

def _counters(at: int, **values: int) -> str:
    """What roce-qos.sh --counters prints: "at:", "counter: NETDEV NAME VALUE" lines, "summary:"."""
    lines = [f"at: {at}"] + [f"counter: {key.replace('__', ' ')} {v}" for key, v in values.items()]
    return "\n".join(lines + ["summary: counters read"]) + "\n"


def _findings(first: str, second: str, interval: float = 5.0):
    from generator.verify.hosts import counter_findings

    return counter_findings(HOST, first, second, interval, pfc_threshold=100.0, ecn_threshold=1000.0)


def test_flat_and_slow_counters_pass():
    before = _counters(1000, ens1f0np0__np_cnp_sent=10, ens1f0np0__out_of_sequence=0, ens2f0np0__tx_prio3_pause=5)
    assert _findings(before, before) == []
    # below every threshold: 4000 CNPs, 40 out-of-sequence packets, 400 pause frames in 5 s
    after = _counters(1005, ens1f0np0__np_cnp_sent=4010, ens1f0np0__out_of_sequence=40, ens2f0np0__tx_prio3_pause=405)
    assert _findings(before, after) == []


def test_climbing_counters_are_findings_with_their_severity():
    from generator.verify.model import ERROR, WARNING

    before = _counters(1000, ens1f0np0__np_cnp_sent=0, ens1f0np0__packet_seq_err=7, ens2f0np0__rx_prio3_pause=0,
                       ens2f0np0__out_of_sequence=100)
    after = _counters(1005, ens1f0np0__np_cnp_sent=50000, ens1f0np0__packet_seq_err=1007,
                      ens2f0np0__rx_prio3_pause=2500, ens2f0np0__out_of_sequence=90)      # reset: ignored
    found = _findings(before, after)
    assert [(f.check, f.port, f.expected, f.observed, f.severity) for f in found] == [
        ("host-counters", "ens1f0np0", "np_cnp_sent <= 1000/s", "np_cnp_sent +50000 in 5.0s (10000/s)", WARNING),
        ("host-counters", "ens1f0np0", "packet_seq_err <= 10/s", "packet_seq_err +1000 in 5.0s (200/s)", ERROR),
        ("host-counters", "ens2f0np0", "rx_prio3_pause <= 100/s", "rx_prio3_pause +2500 in 5.0s (500/s)", ERROR)]
    assert found[1].line() == ("ens1f0np0 on gpu01 (rail 0): packet_seq_err +1000 in 5.0s (200/s): "
                               "RoCE packets lost or reordered")


def test_the_hosts_own_interval_counts_when_longer():
    before = _counters(1000, ens1f0np0__out_of_sequence=0)
    after = _counters(1100, ens1f0np0__out_of_sequence=900)            # 9/s over the 100 s the host saw
    assert _findings(before, after, interval=5.0) == []
    assert [f.observed for f in _findings(before, after.replace("at: 1100", "at: 1001"))] == [
        "out_of_sequence +900 in 5.0s (180/s)"]


def test_without_a_hosts_section_both_host_checks_are_skipped_or_unknown(tmp_path):
    from types import SimpleNamespace

    from generator.verify.command import host_outcomes

    plan = SimpleNamespace(hosts=(HOST,))
    endpoints = tmp_path / "endpoints.yml"
    endpoints.write_text("switches: {}\n")
    outcomes, note = host_outcomes(plan, {}, str(endpoints), None)
    assert [(o.check, o.device, o.status) for o in outcomes] == [("host-roce", "gpu01", "skipped"),
                                                                 ("host-counters", "gpu01", "skipped")]
    assert note == f"host-roce and host-counters skipped: {endpoints} lists no hosts"
    outcomes, _ = host_outcomes(plan, {}, str(endpoints), "hosts")
    assert {o.status for o in outcomes} == {"unknown"}


def test_counters_that_cannot_be_read_leave_host_counters_unknown():
    from generator.verify import hosts as H
    from generator.verify.command import _counters_outcome

    def judge(counters, error=""):
        reading = H.HostReading("gpu01", counters=counters, error=error)
        o = _counters_outcome(H, HOST, reading, 5, 100.0, 1000.0)
        return o.status, o.reason

    good = _counters(1000, ens1f0np0__packet_seq_err=0)
    assert judge([(0, good), (0, good)]) == ("passed", "")
    assert judge([(0, good), (0, good.replace("err 0", "err 900"))])[0] == "failed"
    assert judge([(0, good), (1, "")]) == ("unknown", "roce-qos.sh --counters: exit 0, exit 1")
    assert judge([]) == ("unknown", "roce-qos.sh --counters: not run")
    assert judge([(0, "at: 1\nsummary: counters read\n")] * 2)[1].startswith("roce-qos.sh --counters read no RoCE")
    assert judge([], error="unreachable: timeout") == ("unknown", "unreachable: timeout")
