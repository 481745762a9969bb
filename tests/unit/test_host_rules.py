"""FG3xx host and NCCL rules, through the real loader and rule runner."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import yaml

from generator.checks.registry import RULES, CheckContext
from generator.checks.runner import load_rules, run_checks
from generator.intent.loader import load_intent
from generator.plan.compile import compile_plan

REPO = Path(__file__).resolve().parents[2]


def _check(tmp_path, **changes):
    data = yaml.safe_load((REPO / "inventories/small/fabric.yaml").read_text())
    for path, value in changes.items():
        node = data
        *parents, last = path.split(".")
        for p in parents:
            node = node.setdefault(p, {})
        node[last] = value
    f = tmp_path / "fabric.yaml"
    f.write_text(yaml.safe_dump(data, sort_keys=False))
    return run_checks(load_intent(f))


def _fg3(result):
    return {(f.code, f.path) for f in result.findings if f.code.startswith("FG3")}


def test_examples_have_no_host_findings():
    for name in ("small", "medium", "large"):
        result = run_checks(load_intent(REPO / "inventories" / name / "fabric.yaml"))
        # large leaves hosts.rails out: its rail names are the ConnectX guess (FG308)
        expected = {("FG308", "hosts.rails")} if name == "large" else set()
        assert _fg3(result) == expected, [f.one_line() for f in result.findings]


def test_every_rule_has_a_code_title_and_explanation():
    load_rules()
    ours = [r for c, r in RULES.items() if c.startswith("FG3")]
    assert len(ours) >= 10
    for r in ours:
        assert r.title and len(r.explanation) > 80, r.code
        assert r.stage in ("intent", "plan")


def test_unknown_nccl_key_is_an_error_with_its_path(tmp_path):
    result = _check(tmp_path, **{"nccl.settings": {"NCCL_IB_GID_IDX": 3}})
    assert ("FG301", "nccl.settings.NCCL_IB_GID_IDX") in _fg3(result)
    finding = next(f for f in result.errors if f.code == "FG301")
    assert finding.line is not None and "NCCL_IB_GID_INDEX" in finding.message


@pytest.mark.parametrize(("key", "value"), [
    ("NCCL_IB_RETRY_CNT", 8),
    ("NCCL_IB_QPS_PER_CONNECTION", 0),
    ("NCCL_IB_QPS_PER_CONNECTION", 129),
    ("NCCL_IB_TIMEOUT", 32),
    ("NCCL_IB_TIMEOUT", 0),
    ("NCCL_IB_TIMEOUT", "20x"),
    ("NCCL_IB_TC", "high"),
    ("NCCL_IB_SL", 16),
    ("NCCL_NTHREADS", 100),
    ("NCCL_DEBUG", "LOUD"),
    ("NCCL_IB_HCA", "mlx5_0 mlx5_1"),
    ("NCCL_SOCKET_IFNAME", True),
    ("NCCL_DEBUG", "WARN\nNCCL_IB_TC=0"),
    ("NCCL_DEBUG", " WARN"),
])
def test_invalid_values_are_errors(tmp_path, key, value):
    result = _check(tmp_path, **{"nccl.settings": {key: value}})
    assert ("FG302", f"nccl.settings.{key}") in {(f.code, f.path) for f in result.errors}


@pytest.mark.parametrize(("key", "value"), [
    ("NCCL_IB_RETRY_CNT", 7), ("NCCL_IB_TIMEOUT", 22), ("NCCL_IB_QPS_PER_CONNECTION", 128),
    ("NCCL_IB_TIMEOUT", "0x14"), ("NCCL_DEBUG", "info"), ("NCCL_IB_DISABLE", False),
    ("NCCL_NET_GDR_LEVEL", "PHB"), ("NCCL_IB_HCA", "=mlx5_0:1,mlx5_1:1"),
])
def test_valid_values_pass(tmp_path, key, value):
    result = _check(tmp_path, **{"nccl.settings": {key: value}})
    assert not [f for f in result.errors if f.code in ("FG301", "FG302")]


@pytest.mark.parametrize("key", ["NCCL_ALGO", "NCCL_PROTO", "NCCL_BUFFSIZE", "NCCL_NTHREADS"])
def test_tuning_keys_warn_with_the_risk(tmp_path, key):
    value = {"NCCL_ALGO": "Ring", "NCCL_PROTO": "LL", "NCCL_BUFFSIZE": 8388608, "NCCL_NTHREADS": 256}[key]
    result = _check(tmp_path, **{"nccl.settings": {key: value}})
    warn = [f for f in result.warnings if f.code == "FG303"]
    assert warn and warn[0].path == f"nccl.settings.{key}" and len(warn[0].message) > 60
    assert not [f for f in result.errors if f.code.startswith("FG3")]


def test_rail_list_must_match_topology(tmp_path):
    result = _check(tmp_path, **{"hosts.rails": [{"netdev": "ens1f0np0", "rdma": "mlx5_0"}]})
    assert ("FG304", "hosts.rails") in {(f.code, f.path) for f in result.errors}


def test_duplicate_netdev_rdma_and_mgmt_clash(tmp_path):
    rails = [{"netdev": "ens1f0np0", "rdma": "mlx5_0"}, {"netdev": "ens1f0np0", "rdma": "mlx5_0"}]
    errors = {(f.code, f.path) for f in _check(tmp_path, **{"hosts.rails": rails}).errors}
    assert ("FG305", "hosts.rails[1].netdev") in errors
    assert ("FG306", "hosts.rails[1].rdma") in errors
    rails = [{"netdev": "eno1", "rdma": "mlx5_0"}, {"netdev": "ens2f0np0", "rdma": "mlx5_1"}]
    assert ("FG307", "hosts.rails[0].netdev") in {(f.code, f.path) for f in _check(tmp_path, **{"hosts.rails": rails}).errors}


def test_nccl_overrides_that_break_the_contract(tmp_path):
    result = _check(tmp_path, **{"topology.kind": "leaf-spine", "nccl.settings": {
        "NCCL_IB_TC": 96, "NCCL_IB_HCA": "mlx5_0", "NCCL_IB_GID_INDEX": 5, "NCCL_SOCKET_IFNAME": "=ens1f0np0"}})
    codes = {f.code for f in result.findings}
    assert {"FG310", "FG315", "FG317", "FG318"} <= codes
    assert any(f.code == "FG310" and f.severity == "error" for f in result.findings)
    ok = _check(tmp_path, **{"nccl.settings": {"NCCL_IB_TC": 106}})      # DSCP 26 with ECT(0)
    assert "FG310" not in {f.code for f in ok.findings}


@pytest.mark.parametrize(("tc", "why"), [
    (107, "ECN bits to 11 (Congestion Experienced)"),       # DSCP 26, but every packet marked CE
    (0x1A << 2 | 3, "ECN bits to 11"),                      # the same, written as DSCP 26 << 2 | CE
    (40, "marks DSCP 10 but the switches carry RoCE on DSCP 26"),
])
def test_nccl_tc_the_switches_cannot_honour_is_refused_with_a_reason(tmp_path, tc, why):
    result = _check(tmp_path, **{"nccl.settings": {"NCCL_IB_TC": tc}})
    fg310 = [f for f in result.errors if f.code == "FG310"]
    assert [f.path for f in fg310] == ["nccl.settings.NCCL_IB_TC"]
    assert why in fg310[0].message and "use 104 (or 106 with ECT(0))" in fg310[0].message


@pytest.mark.parametrize(("settings", "tos"), [
    ({}, 104),                              # fabricgen's default: DSCP 26 << 2
    ({"NCCL_IB_TC": 106}, 106),             # NVIDIA's usual value: DSCP 26 with ECT(0)
    ({"NCCL_IB_TC": "0x69"}, 105),          # ECT(1), as NCCL's strtoll reads hex
    ({"NCCL_IB_TC": 107}, 104),             # refused by FG310 (CE): never given to the NIC
    ({"NCCL_IB_TC": 96}, 104),              # refused by FG310 (DSCP 24)
])
def test_nic_tos_follows_nccl_ib_tc(tmp_path, settings, tos):
    """The NIC's default ToS and OFED/DOCA global traffic class override NCCL's per-QP class,
    so roce-qos.sh must set what nccl.conf asks for (issue 24, item 6)."""
    from generator.plan.nccl import nic_tos
    from generator.render.hosts import render_host

    data = yaml.safe_load((REPO / "inventories/small/fabric.yaml").read_text())
    data.setdefault("nccl", {})["settings"] = settings
    f = tmp_path / "fabric.yaml"
    f.write_text(yaml.safe_dump(data, sort_keys=False))
    plan = compile_plan(load_intent(f).intent)
    assert nic_tos(plan.nccl, plan.qos) == tos
    host = plan.hosts[0]
    files = render_host(plan, host)
    assert f"\nTOS={tos}\n" in files[f"hosts/{host.name}/roce-qos.sh"]
    conf = dict(line.split("=", 1) for line in files[f"hosts/{host.name}/nccl.conf"].splitlines()
                if line and not line.startswith("#"))
    assert conf["NCCL_IB_TC"] == str(settings.get("NCCL_IB_TC", 104))


def test_cross_nic_override_on_rail_optimized(tmp_path):
    result = _check(tmp_path, **{"topology.kind": "rail-optimized", "nccl.settings": {"NCCL_CROSS_NIC": 1}})
    assert "FG316" in {f.code for f in result.warnings}


def _ctx(plan, intent):
    return CheckContext(intent, plan)


def test_plan_rules_see_a_port_that_is_not_lossless():
    load_rules()
    intent = load_intent(REPO / "inventories/small/fabric.yaml").intent
    plan = compile_plan(intent)
    nic = plan.hosts[0].nics[0]
    ports = tuple(p._replace(lossless=False, headroom=None) if p.port == nic.port else p     # a tuple row
                  for p in plan.ports_of(nic.switch))
    broken = dataclasses.replace(plan, _ports_by_device={**plan._ports_by_device, nic.switch: ports})
    found = list(RULES["FG314"].func(_ctx(broken, intent)))
    assert found and found[0][0] == "roce.mode" and nic.port in found[0][1]
    assert not list(RULES["FG314"].func(_ctx(plan, intent)))


def test_plan_rules_see_host_mtu_above_switch_and_pfc_mismatch():
    load_rules()
    intent = load_intent(REPO / "inventories/small/fabric.yaml").intent
    plan = compile_plan(intent)
    high = dataclasses.replace(plan, qos=dataclasses.replace(plan.qos, host_mtu=9216, switch_mtu=9000))
    assert list(RULES["FG312"].func(_ctx(high, intent)))[0][0] == "roce.mtu.host"
    pfc = dataclasses.replace(plan, qos=dataclasses.replace(plan.qos, pfc_priorities=(4,)))
    assert list(RULES["FG311"].func(_ctx(pfc, intent)))[0][0] == "roce.priority"


GID = "nccl.settings.NCCL_IB_GID_INDEX"


def _gid_findings(tmp_path, value, min_version=None):
    changes = {"nccl.settings": {"NCCL_IB_GID_INDEX": value}}
    if min_version:
        changes["nccl.min_version"] = min_version
    result = _check(tmp_path, **changes)
    return {f.code: f for f in result.findings if f.code in ("FG317", "FG319") and f.path == GID}


@pytest.mark.parametrize(("value", "min_version"), [
    (3, None),              # what fabricgen writes anyway below 2.21
    (3, "2.18.3"),
    ("0x3", "2.20"),
    (-1, "2.21"),           # NCCL's own default from 2.21
    (-1, "2.23.4"),
])
def test_gid_index_that_matches_the_default_is_quiet(tmp_path, value, min_version):
    assert _gid_findings(tmp_path, value, min_version) == {}


def test_other_fixed_gid_index_warns_with_what_it_replaces(tmp_path):
    old = _gid_findings(tmp_path, 5, "2.18.3")
    assert set(old) == {"FG317"} and old["FG317"].severity == "warning"
    assert old["FG317"].line is not None
    assert "5 replaces fabricgen's 3" in old["FG317"].message and "show_gids" in old["FG317"].message
    new = _gid_findings(tmp_path, 3, "2.23.4")
    assert set(new) == {"FG317"}
    assert "NCCL >= 2.21 (nccl.min_version 2.23.4) selects the RoCEv2 IPv4 GID itself" in new["FG317"].message


@pytest.mark.parametrize(("value", "min_version"), [(0, None), (1, "2.23.4"), ("0", "2.18.3")])
def test_link_local_gid_index_is_an_error(tmp_path, value, min_version):
    found = _gid_findings(tmp_path, value, min_version)
    assert set(found) == {"FG319"} and found["FG319"].severity == "error"
    assert f"{int(value)} is a link-local fe80:: GID" in found["FG319"].message


@pytest.mark.parametrize(("min_version", "why"), [(None, "nccl.min_version is unset"),
                                                  ("2.20.5", "nccl.min_version 2.20.5 is older")])
def test_auto_gid_index_on_old_nccl_is_an_error(tmp_path, min_version, why):
    found = _gid_findings(tmp_path, -1, min_version)
    assert set(found) == {"FG319"}
    assert found["FG319"].message.startswith(f"-1 (auto-select) needs NCCL >= 2.21 and {why}")
    assert found["FG319"].line is not None


def test_gid_index_that_is_not_an_integer_is_left_to_fg302(tmp_path):
    result = _check(tmp_path, **{"nccl.settings": {"NCCL_IB_GID_INDEX": "auto"}})
    assert {c for c, p in _fg3(result) if p == GID} == {"FG302"}
