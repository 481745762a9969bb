"""SONiC config_db.json: platform mapping, the lossless path from the plan, YANG validity, CLI errors."""

from __future__ import annotations

import ipaddress
import json
import shutil
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from generator.checks import sonic_rules
from generator.checks.registry import RULES
from generator.checks.runner import load_rules
from generator.cli import app
from generator.intent.loader import load_intent
from generator.intent.model import Intent
from generator.plan.catalog import catalog
from generator.plan.compile import compile_plan
from generator.plan.model import FabricPlan
from generator.plan.sonic_catalog import sku_buffers, sonic_platform
from generator.render import sonic_yang
from generator.render.sonic import (
    classification,
    render_config_db,
    switch_config,
    switch_layout,
)
from generator.render.sonic_check import config_findings, yang_findings
from tests.cli_runner import run_cli
from tests.golden.examples import golden_dir

REPO = Path(__file__).resolve().parents[2]
YANG_DIR = (REPO / ".." / "shared" / "sonic-yang").resolve()
MEDIUM_SONIC = REPO / "inventories" / "medium-sonic" / "fabric.yaml"


def _skip_reason() -> str | None:
    if not any(YANG_DIR.glob("*.yang")):
        return f"SONiC YANG models not found in {YANG_DIR}"
    try:
        import libyang  # noqa: F401
    except Exception as exc:  # the C library can be missing even when the wheel is installed
        return f"python libyang not importable ({exc}); {sonic_yang.INSTALL_HINT}"
    return None


needs_libyang = pytest.mark.skipif(_skip_reason() is not None, reason=_skip_reason() or "")


def make_intent(kind: str, nodes: int, rails: int, speed: str, leaf: str, spine: str | None = None, *,
                unit: int = 32, groups: int = 2, ratio: str = "1:1", roce: dict | None = None) -> Intent:
    spine = spine or leaf
    return Intent.model_validate({
        "fabric": {"name": "sn"},
        "topology": {"kind": kind, "nodes": nodes, "rails": rails, "nic_speed": speed, "oversubscription": ratio,
                     "nodes_per_unit": unit, "groups": groups,
                     "switches": {"leaf": {"model": leaf}, "spine": {"model": spine}, "super_spine": {"model": spine}},
                     "cables": {"host_leaf": 2.5, "leaf_spine": 40, "spine_super_spine": 100, "global": 300}},
        "switch_os": {"name": "sonic", "version": "2024.11"},
        "addressing": {"fabric_links": "10.254.0.0/15"},
        **({"roce": roce} if roce else {}),
    })


# Every SONiC model at the speeds its ports run natively or split, every topology kind, and the
# roce variants that change which tables exist (lossy, no ECN, no watchdog).
CASES = {
    "single-SN2201-100G": ("single-switch", 2, 1, "100G", "SN2201", None, {}),
    "leafspine-SN2700-100G": ("leaf-spine", 12, 2, "100G", "SN2700", None, {}),
    "leafspine-SN3700-200G": ("leaf-spine", 20, 2, "200G", "SN3700", None, {"ratio": "2:1"}),
    "leafspine-SN3700-100G-split": ("leaf-spine", 10, 2, "100G", "SN3700", None, {}),
    "rail-SN4600C-100G": ("rail-optimized", 24, 2, "100G", "SN4600C", None, {"unit": 24}),
    "leafspine-SN4600-200G": ("leaf-spine", 16, 2, "200G", "SN4600", None, {}),
    "single-SN4700-400G-8lane": ("single-switch", 8, 2, "400G", "SN4700", None, {}),
    "leafspine-SN4700-200G-split": ("leaf-spine", 16, 2, "200G", "SN4700", None, {}),
    "rail-SN5400-400G": ("rail-optimized", 16, 4, "400G", "SN5400", None, {"unit": 16}),
    "rail-SN5600-400G": ("rail-optimized", 40, 4, "400G", "SN5600", None, {"unit": 32}),
    "threetier-SN5600-200G": ("three-tier", 40, 2, "200G", "SN5600", None, {"unit": 16}),
    "dragonfly-SN5600-800G": ("dragonfly-plus", 6, 2, "800G", "SN5600", None, {"groups": 3}),
    "leafspine-mixed-SN5400-SN5600": ("leaf-spine", 16, 2, "400G", "SN5400", "SN5600", {}),
    "lossy": ("leaf-spine", 8, 2, "400G", "SN5600", None, {"roce": {"mode": "lossy"}}),
    "no-ecn-no-watchdog": ("leaf-spine", 8, 2, "400G", "SN5600", None,
                           {"roce": {"ecn": {"enabled": False}, "pfc_watchdog": False}}),
    "custom-classes": ("leaf-spine", 8, 2, "400G", "SN5600", None,
                       {"roce": {"dscp": 10, "priority": 4, "cnp_dscp": 46, "cnp_priority": 5,
                                 "bandwidth_percent": 70}}),
}


@pytest.fixture(scope="module")
def plans() -> dict[str, FabricPlan]:
    out = {}
    for name, (kind, nodes, rails, speed, leaf, spine, extra) in CASES.items():
        out[name] = compile_plan(make_intent(kind, nodes, rails, speed, leaf, spine, **extra))
    return out


def _configs(plan: FabricPlan):
    for sw in plan.switches:
        yield sw, json.loads(render_config_db(plan, sw))


def _pg_numbers(key_part: str) -> list[int]:
    lo, _, hi = key_part.partition("-")
    return list(range(int(lo), int(hi or lo) + 1))


def _pgs_of(config: dict, port: str) -> dict[int, str]:
    out = {}
    for key, entry in config.get("BUFFER_PG", {}).items():
        name, part = key.split("|")
        if name == port:
            out.update((pg, entry["profile"]) for pg in _pg_numbers(part))
    return out


# ----------------------------------------------------------------------------- platform data


def test_every_catalog_model_has_sonic_data():
    assert sorted(catalog()) == sorted(m for m in catalog() if sonic_platform(m) is not None)


@pytest.mark.parametrize("model", sorted(catalog()))
def test_port_layouts_have_unique_names_and_disjoint_lanes(model):
    platform = sonic_platform(model)
    for n, group in platform.front_panel():
        parent_lanes = None
        for mode in group.modes():
            ports = platform.ports(n, mode)
            lanes = [lane for p in ports for lane in p.lanes.split(",")]
            assert len(lanes) == len(set(lanes)), (model, n, mode)
            parent_lanes = parent_lanes or lanes
            assert lanes == parent_lanes, "a split must use exactly the parent's lanes"
            assert len({p.name for p in ports}) == len(ports)
            assert ports[0].name == platform.ports(n, "1x")[0].name, "the first split port keeps the parent name"
    names = [p.name for n, g in platform.front_panel() for p in platform.ports(n, "1x")]
    assert len(names) == len(set(names))


def test_port_names_follow_platform_json():
    sn5600 = sonic_platform("SN5600")
    assert [(p.name, p.lanes, p.alias, p.subport) for p in sn5600.ports(1, "2x")] == [
        ("Ethernet0", "0,1,2,3", "etp1a", 1), ("Ethernet4", "4,5,6,7", "etp1b", 2)]
    assert sn5600.ports(64, "1x")[0].name == "Ethernet504"
    # SN4600C: names step 4 while lanes step 8 (platform.json), so a name is not its first lane
    sn4600c = sonic_platform("SN4600C")
    assert [(p.name, p.lanes) for p in sn4600c.ports(2, "1x")] == [("Ethernet4", "8,9,10,11")]
    assert [(p.name, p.lanes) for p in sn4600c.ports(2, "2x")] == [("Ethernet4", "8,9"), ("Ethernet6", "10,11")]
    sn2201 = sonic_platform("SN2201")
    assert sn2201.ports(49, "1x")[0].name == "Ethernet48" and sn2201.ports(48, "1x")[0].lanes == "188"


def test_hwsku_follows_the_port_layout(plans):
    plan = compile_plan(load_intent(MEDIUM_SONIC).intent)
    meta = {switch_config(plan, sw)["DEVICE_METADATA"]["localhost"]["hwsku"] for sw in plan.switches}
    assert meta == {"Mellanox-SN5600-O128"}
    hwsku = {name: {switch_layout(p, sw).hwsku for sw in p.switches} for name, p in plans.items()}
    assert hwsku["rail-SN4600C-100G"] == {"Mellanox-SN4600C-C64"}
    assert hwsku["leafspine-SN2700-100G"] == {"ACS-MSN2700"}
    assert hwsku["dragonfly-SN5600-800G"] == {"ACS-SN5600"}
    assert hwsku["leafspine-SN4700-200G-split"] == {"Mellanox-SN4700-V64"}


# ----------------------------------------------------------------------------- lossless path, from the plan


@pytest.mark.parametrize("case", sorted(CASES))
def test_config_db_carries_the_plan(plans, case):
    plan = plans[case]
    cls = classification(plan)
    q = plan.qos
    for sw, config in _configs(plan):
        layout = switch_layout(plan, sw)
        sonic_of = {p.port: name for name, p in layout.used()}
        assert len(sonic_of) == len(plan.ports_of(sw.name)), "every plan port has a SONiC port"
        ports = config["PORT"]
        lanes = [lane for e in ports.values() for lane in e["lanes"].split(",")]
        assert len(lanes) == len(set(lanes)), f"{sw.name}: two PORT entries share a lane"
        for table, rows in config.items():
            for key, fields in rows.items():
                # strings, or a list of strings for the leaf-lists frrcfgd iterates (route_map_in/out)
                assert all(isinstance(v, str) or (isinstance(v, list) and all(isinstance(x, str) for x in v))
                           for v in fields.values()), (sw.name, table, key)
        meta = config["DEVICE_METADATA"]["localhost"]
        assert meta["bgp_asn"] == str(sw.asn) and meta["buffer_model"] == "traditional"
        assert meta["platform"] == sonic_platform(sw.model).platform
        sku = sku_buffers(meta["hwsku"])
        pools = sku.pools(sw.role)             # the SKU's t0 (leaf) / t1 (spines) template
        assert {k: v["size"] for k, v in config["BUFFER_POOL"].items()} == \
            {k: str(pools[k]) for k in sku.layout.pools}
        pfc_to_pg = config.get("PFC_PRIORITY_TO_PRIORITY_GROUP_MAP", {}).get("AZURE", {})
        for p in plan.ports_of(sw.name):
            name = sonic_of[p.port]
            assert ports[name]["speed"] == str(p.speed_g * 1000) and ports[name]["admin_status"] == "up"
            assert ports[name]["mtu"] == str(q.switch_mtu)
            # the cable rounded up to the next row of the SKU's pg_profile_lookup.ini
            row = sku.row(p.speed_g, p.cable_m)
            assert config["CABLE_LENGTH"]["AZURE"][name] == row.cable and row.cable_m >= p.cable_m
            assert not any(p.cable_m <= r.cable_m < row.cable_m for r in sku.rows_for(p.speed_g))
            if p.ip is not None:
                assert f"{name}|{p.ip}" in config["INTERFACE"]
            if p.peer_asn is not None:
                assert config["BGP_NEIGHBOR"][f"default|{p.peer_ip}"]["asn"] == str(p.peer_asn)
            qos_map = config["PORT_QOS_MAP"][name]
            pgs = _pgs_of(config, name)
            if not p.lossless:
                assert "pfc_enable" not in qos_map and set(pgs.values()) == {"ingress_lossy_profile"}
                continue
            enabled = [int(x) for x in qos_map["pfc_enable"].split(",")]
            assert enabled == list(q.pfc_priorities)
            for prio in enabled:
                # pfc_enable priority -> PG -> the profile buffermgrd would build from the row
                pg = int(pfc_to_pg[str(prio)])
                assert pg in pgs, f"{sw.name} {name}: no BUFFER_PG for lossless priority {prio}"
                assert pgs[pg] == row.profile_name
                profile = config["BUFFER_PROFILE"][pgs[pg]]
                assert profile == {"dynamic_th": str(row.threshold), "pool": "ingress_lossless_pool",
                                   "size": str(row.size), "xoff": str(row.xoff), "xon": str(row.xon)}
                if not sku.shared_headroom_pool:   # with one, a PG reserves only xon; xoff is shared
                    assert int(profile["size"]) >= int(profile["xoff"]) + int(profile["xon"])
                queue = config["MAP_PFC_PRIORITY_TO_QUEUE"]["AZURE"][str(prio)]
                assert config["BUFFER_QUEUE"][f"{name}|{queue}"]["profile"] == "egress_lossless_profile"
            # the RoCE DSCP lands in a TC whose PG is lossless and whose queue PFC pauses
            tc = config["DSCP_TO_TC_MAP"]["AZURE"][str(q.roce_dscp)]
            assert int(config["TC_TO_PRIORITY_GROUP_MAP"]["AZURE"][tc]) in pgs
            assert int(config["TC_TO_PRIORITY_GROUP_MAP"]["AZURE"][tc]) in {int(v) for v in pfc_to_pg.values()}
            assert config["TC_TO_QUEUE_MAP"]["AZURE"][tc] == config["MAP_PFC_PRIORITY_TO_QUEUE"]["AZURE"][
                str(q.roce_priority)]
            if q.pfc_watchdog:
                assert qos_map["pfcwd_sw_enable"] == qos_map["pfc_enable"]
                wd = config["PFC_WD"]
                assert int(wd[name]["detection_time"]) >= int(wd["GLOBAL"]["POLL_INTERVAL"])
            else:
                assert "PFC_WD" not in config and "pfcwd_sw_enable" not in qos_map
        # CNP: strict priority; RoCE: DWRR with the intent's share, ECN on its queue
        cnp_tc = config["DSCP_TO_TC_MAP"]["AZURE"][str(q.cnp_dscp)]
        roce_tc = config["DSCP_TO_TC_MAP"]["AZURE"][str(q.roce_dscp)]
        for name in sonic_of.values():
            cnp_q = config["QUEUE"][f"{name}|{cnp_tc}"]
            assert config["SCHEDULER"][cnp_q["scheduler"]] == {"type": "STRICT"}
            roce_q = config["QUEUE"][f"{name}|{roce_tc}"]
            bw = dict((tc, pct) for tc, _, pct in q.ets)[q.roce_tc]
            assert config["SCHEDULER"][roce_q["scheduler"]] == {"type": "DWRR", "weight": str(bw)}
            if q.ecn_tcs:
                wred = config["WRED_PROFILE"][roce_q["wred_profile"]]
                assert (wred["green_min_threshold"], wred["green_max_threshold"], wred["green_drop_probability"]) \
                    == (str(q.ecn_min_bytes), str(q.ecn_max_bytes), str(q.ecn_probability))
            else:
                assert "wred_profile" not in roce_q and "WRED_PROFILE" not in config
        assert cls.dscp_to_tc[q.roce_dscp] == q.roce_tc


def test_eight_lane_ports_reserve_more_than_xon_plus_xoff(plans):
    plan = plans["single-SN4700-400G-8lane"]
    ports = [p for p in plan.ports if p.lossless]
    assert ports and all(p.lanes == 8 for p in ports)
    for _sw, config in _configs(plan):
        for name, profile in config["BUFFER_PROFILE"].items():
            if name.startswith("pg_lossless_"):
                assert int(profile["size"]) > int(profile["xoff"]) + int(profile["xon"])


def test_profile_matches_the_published_sn5600_row():
    """ROCE.md §4 / pg_profile_lookup.ini: SN5600 400G 5 m -> xoff 231424, xon 19456, size 250880."""
    intent = make_intent("single-switch", 4, 1, "400G", "SN5600")
    intent = intent.model_copy(update={"topology": intent.topology.model_copy(
        update={"cables": intent.topology.cables.model_copy(update={"host_leaf": 5})})})
    plan = compile_plan(intent)
    config = switch_config(plan, plan.switches[0])
    assert config["BUFFER_PROFILE"]["pg_lossless_400000_5m_profile"] == {
        "dynamic_th": "0", "pool": "ingress_lossless_pool", "size": "250880", "xoff": "231424", "xon": "19456"}


def test_unused_ports_are_listed_down_in_the_skus_layout(plans):
    plan = compile_plan(load_intent(MEDIUM_SONIC).intent)
    sw = plan.switches[-1]
    ports = switch_config(plan, sw)["PORT"]
    assert len(ports) == 129                     # Mellanox-SN5600-O128: 128 x 400G + 1 x 25G
    assert sum(e["admin_status"] == "up" for e in ports.values()) == len(plan.ports_of(sw.name))
    assert ports["Ethernet512"]["speed"] == "25000" and "fec" not in ports["Ethernet512"]


def test_render_is_byte_stable_and_sorted(plans):
    plan = plans["rail-SN5600-400G"]
    again = compile_plan(make_intent("rail-optimized", 40, 4, "400G", "SN5600", unit=32))
    for sw in plan.switches:
        text = render_config_db(plan, sw)
        assert text == render_config_db(again, sw)
        assert text == json.dumps(json.loads(text), indent=4, sort_keys=True) + "\n"


# ----------------------------------------------------------------------------- routing (frrcfgd, unified mode)


@pytest.mark.parametrize("case", sorted(CASES))
def test_every_switch_advertises_its_host_subnets_and_loopback(plans, case):
    """bgpcfgd would announce only Loopback0: host /31s must be explicit BGP_GLOBALS_AF_NETWORK entries."""
    plan = plans[case]
    for sw, config in _configs(plan):
        meta = config["DEVICE_METADATA"]["localhost"]
        assert meta["docker_routing_config_mode"] == "unified" and meta["frr_mgmt_framework_config"] == "true"
        assert config["BGP_GLOBALS"]["default"]["local_asn"] == str(sw.asn)
        assert config["BGP_GLOBALS"]["default"]["router_id"] == sw.loopback
        networks = set(config["BGP_GLOBALS_AF_NETWORK"])
        host_ports = [p for p in plan.ports_of(sw.name) if p.peer_asn is None]
        wanted = {f"default|ipv4_unicast|{ipaddress.ip_interface(p.ip).network}" for p in host_ports}
        wanted.add(f"default|ipv4_unicast|{sw.loopback}/32")
        assert networks == wanted, sw.name
        for p in host_ports:
            # the NIC's gateway is the leaf end of an advertised /31 that holds the host address
            nic = next(n for h in plan.hosts for n in h.nics if n.switch == sw.name and n.port == p.port)
            assert ipaddress.ip_interface(nic.ip).network == ipaddress.ip_interface(p.ip).network
        assert "ROUTE_REDISTRIBUTE" not in config, "no YANG model in the shared set: explicit networks instead"
        if sw.role == "leaf" and len(plan.switches) > 1:
            assert host_ports, f"{sw.name}: a leaf without hosts"


@pytest.mark.parametrize("case", sorted(CASES))
def test_neighbors_are_default_vrf_and_activated(plans, case):
    plan = plans[case]
    for sw, config in _configs(plan):
        peers = [p for p in plan.ports_of(sw.name) if p.peer_asn is not None]
        neighbors = config.get("BGP_NEIGHBOR", {})
        afs = config.get("BGP_NEIGHBOR_AF", {})
        assert set(neighbors) == {f"default|{p.peer_ip}" for p in peers}
        assert set(afs) == {f"default|{p.peer_ip}|ipv4_unicast" for p in peers}
        for p in peers:
            n = neighbors[f"default|{p.peer_ip}"]
            assert (n["asn"], n["local_addr"], n["name"], n["admin_status"]) == \
                (str(p.peer_asn), p.ip.split("/")[0], p.peer_device, "up")
            af = afs[f"default|{p.peer_ip}|ipv4_unicast"]
            # SONiC's FRR runs with ebgp-requires-policy: no policy, no routes
            assert af["route_map_in"] == af["route_map_out"] == ["FABRIC_PERMIT_ALL"]
            assert config["ROUTE_MAP"]["FABRIC_PERMIT_ALL|10"] == {"route_operation": "permit"}
        paths = int(config["BGP_GLOBALS_AF"]["default|ipv4_unicast"]["max_ebgp_paths"])
        assert paths == max(len(peers), 1)
        if not peers:
            assert "ROUTE_MAP" not in config and "ROUTE_MAP_SET" not in config


@needs_libyang
def test_neighbor_activation_follows_the_frrcfgd_release():
    """frrcfgd before 202505 reads BGP_NEIGHBOR_AF admin_status as true/false only (YANG says up/down)."""
    old = compile_plan(load_intent(MEDIUM_SONIC).intent)
    assert old.switch_os_version == (2024, 11)
    config = switch_config(old, old.switches[-1])
    assert config["BGP_GLOBALS"]["default"]["default_ipv4_unicast"] == "true"
    assert all("admin_status" not in af for af in config["BGP_NEIGHBOR_AF"].values())
    base = load_intent(MEDIUM_SONIC).intent
    intent = base.model_copy(update={"switch_os": base.switch_os.model_copy(update={"version": "202505"})})
    new = compile_plan(intent)
    config = switch_config(new, new.switches[-1])
    assert "default_ipv4_unicast" not in config["BGP_GLOBALS"]["default"]
    assert {af["admin_status"] for af in config["BGP_NEIGHBOR_AF"].values()} == {"up"}
    assert config_findings(config, "leaf", YANG_DIR) == []


# ----------------------------------------------------------------------------- YANG validation


@needs_libyang
@pytest.mark.parametrize("case", sorted(CASES))
def test_generated_intents_pass_sonic_yang(plans, case):
    assert yang_findings(plans[case], YANG_DIR) == []


@needs_libyang
def test_golden_sonic_files_pass_sonic_yang():
    files = sorted(golden_dir("medium-sonic").glob("switches/*/config_db.json"))
    if not files:
        pytest.skip("tests/golden/medium-sonic not generated yet: make golden")
    for path in files:
        assert config_findings(json.loads(path.read_text()), path.parent.name, YANG_DIR) == [], path


def _leaf_config() -> dict:
    plan = compile_plan(load_intent(MEDIUM_SONIC).intent)
    return switch_config(plan, plan.switches[-1])


@needs_libyang
@pytest.mark.parametrize("breakage, table, key_part, reason", [
    (lambda c: c["BUFFER_PG"]["Ethernet0|3"].update(profile="pg_lossless_400000_9m_profile"),
     "BUFFER_PG", "Ethernet0|3", "profile"),
    (lambda c: c["PORT_QOS_MAP"]["Ethernet0"].update(pfc_enable="3,9"), "PORT_QOS_MAP", "Ethernet0", "pfc_enable"),
    (lambda c: c["PORT"]["Ethernet0"].update(mtu="9300"), "PORT", "Ethernet0", "mtu"),
    (lambda c: c["WRED_PROFILE"]["AZURE_LOSSLESS"].update(green_max_threshold="1000"),
     "WRED_PROFILE", "AZURE_LOSSLESS", "min threshold"),
    (lambda c: c.setdefault("NOT_A_TABLE", {"x": {"a": "b"}}), "NOT_A_TABLE", "-", "no YANG model"),
    (lambda c: c.setdefault("ROUTE_REDISTRIBUTE", {"default|connected|bgp|ipv4": {}}),
     "ROUTE_REDISTRIBUTE", "-", "no YANG model"),
    (lambda c: c["BGP_NEIGHBOR"]["default|10.254.0.225"].update(admin_status="true"),
     "BGP_NEIGHBOR", "default|10.254.0.225", "admin_status"),
    (lambda c: c["BGP_NEIGHBOR_AF"]["default|10.254.0.225|ipv4_unicast"].update(route_map_in=["NOPE"]),
     "BGP_NEIGHBOR_AF", "default|10.254.0.225|ipv4_unicast", "route_map_in"),
])
def test_sonic_check_reports_device_table_key_and_reason(breakage, table, key_part, reason):
    config = _leaf_config()
    assert config_findings(config, "leaf", YANG_DIR) == []
    breakage(config)
    lines = config_findings(config, "leaf", YANG_DIR)
    assert lines, "the broken config_db passed"
    hit = [line for line in lines if line.startswith(f"leaf: table {table}, key {key_part}")]
    assert hit and reason in hit[0], lines


def test_yang_findings_without_models_is_one_actionable_line(tmp_path):
    plan = compile_plan(make_intent("single-switch", 2, 1, "400G", "SN5600"))
    lines = yang_findings(plan, tmp_path)
    assert len(lines) == 1 and "unavailable" in lines[0]


# ----------------------------------------------------------------------------- rules and CLI


def _run(*args: str) -> subprocess.CompletedProcess:
    """`fabricgen ARGS` from the checkout, in this process (tests/cli_runner.py)."""
    return run_cli(*args, cwd=REPO)


def _variant(tmp_path: Path, old: str, new: str) -> Path:
    text = MEDIUM_SONIC.read_text()
    assert old in text
    path = tmp_path / "fabric.yaml"
    path.write_text(text.replace(old, new))
    return path


def test_rules_are_documented():
    load_rules()
    for code in ("FG251", "FG252", "FG253"):
        assert RULES[code].explanation and RULES[code].severity == "error"


def test_cli_unnumbered_with_sonic_names_fabric_links(tmp_path):
    path = _variant(tmp_path, "fabric_links: 10.254.0.0/16", "fabric_links: unnumbered")
    result = _run("validate", str(path), "--sonic-yang", str(YANG_DIR))
    assert result.returncode == 1
    assert "FG251 addressing.fabric_links" in result.stdout


def test_cli_breakout_sonic_does_not_offer(tmp_path):
    path = _variant(tmp_path, "nic_speed: 400G", "nic_speed: 100G")     # SN5600 would need 8x100G
    result = _run("validate", str(path))
    assert result.returncode == 1 and "FG253 topology.nic_speed" in result.stdout


def test_cli_model_without_sonic_data(tmp_path, monkeypatch):
    # every catalog model has SONiC data today; take SN5600's away to see the rule fire
    monkeypatch.setattr(sonic_rules, "sonic_platform", lambda model: None if model == "SN5600" else sonic_platform(model))
    result = CliRunner().invoke(app, ["validate", str(MEDIUM_SONIC)])
    assert result.exit_code == 1
    assert "FG252 topology.switches.leaf.model" in result.output
    assert "FG252 topology.switches.spine.model" in result.output


@needs_libyang
def test_cli_render_with_sonic_yang(tmp_path):
    out = tmp_path / "out"
    ok = _run("render", str(MEDIUM_SONIC), "-o", str(out), "--sonic-yang", str(YANG_DIR))
    assert ok.returncode == 0, ok.stderr
    assert len(list(out.glob("switches/*/config_db.json"))) == 12
    # models without PFC_WD: the watchdog table cannot be validated, so nothing may be written
    partial = tmp_path / "yang"
    partial.mkdir()
    for f in YANG_DIR.glob("*.yang"):
        if f.name != "sonic-pfcwd.yang":
            shutil.copy(f, partial / f.name)
    target = tmp_path / "never"
    bad = _run("render", str(MEDIUM_SONIC), "-o", str(target), "--sonic-yang", str(partial))
    assert bad.returncode == 1
    assert "table PFC_WD" in bad.stderr and "nothing written" in bad.stderr
    assert not target.exists()
