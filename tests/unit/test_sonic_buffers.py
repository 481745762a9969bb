"""SONiC buffers as NVIDIA ships them (issue 12): per-SKU tables, pools and profile layout.

Expected numbers are restated from sonic-buildimage commit 086b03bd70f9e211aaaf5f6aefe0790b508d2a94,
not from fabricgen's output:
  device/mellanox/x86_64-nvidia_sn5600-r0/ACS-SN5600/pg_profile_lookup.ini     (SN5600_ROWS)
  device/mellanox/x86_64-nvidia_sn5600-r0/ACS-SN5600/buffers_defaults_t0.j2    (SN5600_T0)
  device/mellanox/x86_64-nvidia_sn5600-r0/ACS-SN5600/buffers_defaults_t1.j2    (SN5600_T1)
  device/mellanox/x86_64-mlnx_msn2700-r0/ACS-MSN2700/buffers_defaults_objects.j2 (profiles, lists)
Mellanox-SN5600-O128 (the SKU of a 400G SN5600) links both pg_profile_lookup.ini and
buffers_defaults_t0/t1.j2 to ACS-SN5600's (git symlinks, mode 120000), so the same numbers apply.
When the sonic-buildimage mirror is present, the whole of generator/data/sonic_buffers.yaml is
also compared with the upstream files.
"""

from __future__ import annotations

import json
import posixpath
import re
import subprocess
from pathlib import Path

import pytest
import yaml

from generator.checks import sonic_rules
from generator.checks.registry import RULES, CheckContext
from generator.checks.runner import load_rules
from generator.intent.loader import load_intent
from generator.intent.model import Intent
from generator.plan.budget import switch_budgets
from generator.plan.catalog import catalog
from generator.plan.compile import compile_plan
from generator.plan.headroom import port_headroom
from generator.plan.model import (
    ROLE_LEAF,
    TIER_GLOBAL,
    TIER_HOST_LEAF,
    TIER_LEAF_SPINE,
    TIER_SPINE_SUPER,
    FabricPlan,
)
from generator.plan.sonic_catalog import (
    SkuBuffers,
    SonicDataError,
    sku_buffers,
    sonic_buffer_skus,
    sonic_models,
    sonic_platform,
)
from generator.render import sonic_yang
from generator.render.sonic import render_config_db
from generator.render.sonic_check import config_findings
from tests.cli_runner import run_cli

REPO = Path(__file__).resolve().parents[2]
YANG_DIR = (REPO / ".." / "shared" / "sonic-yang").resolve()
MEDIUM_SONIC = REPO / "inventories" / "medium-sonic" / "fabric.yaml"
BUFFERS_YAML = REPO / "generator" / "data" / "sonic_buffers.yaml"
UPSTREAM = Path("/work/.mirror/sonic-net+sonic-buildimage/repo")
UPSTREAM_COMMIT = "086b03bd70f9e211aaaf5f6aefe0790b508d2a94"

# ACS-SN5600/pg_profile_lookup.ini: speed (Mb/s), cable -> (size, xon, xoff, threshold)
SN5600_ROWS = {
    (10000, "5m"): (64512, 19456, 45056, 0), (25000, "5m"): (67584, 19456, 48128, 0),
    (40000, "5m"): (75776, 19456, 57344, 0), (50000, "5m"): (82944, 19456, 63488, 0),
    (100000, "5m"): (133120, 19456, 113664, 0), (200000, "5m"): (150528, 19456, 131072, 0),
    (400000, "5m"): (250880, 19456, 231424, 0), (800000, "5m"): (304128, 38912, 257024, 0),
    (10000, "40m"): (65536, 19456, 46080, 0), (25000, "40m"): (71680, 19456, 52224, 0),
    (40000, "40m"): (81920, 19456, 62464, 0), (50000, "40m"): (89088, 19456, 69632, 0),
    (100000, "40m"): (146432, 19456, 126976, 0), (200000, "40m"): (177152, 19456, 157696, 0),
    (400000, "40m"): (303104, 19456, 283648, 0), (800000, "40m"): (410624, 38912, 362496, 0),
    (10000, "300m"): (75776, 19456, 56320, 0), (25000, "300m"): (96256, 19456, 76800, 0),
    (40000, "300m"): (120832, 19456, 101376, 0), (50000, "300m"): (138240, 19456, 118784, 0),
    (100000, "300m"): (244736, 19456, 225280, 0), (200000, "300m"): (374784, 19456, 355328, 0),
    (400000, "300m"): (697344, 19456, 677888, 0), (800000, "300m"): (1198080, 38912, 1150976, 0),
}
# Rows the headroom formula does not reproduce (see the comment at the table in sonic_buffers.yaml):
# 40G 5m lists size 75776 < xoff + xon = 76800; the 800G 5m / 300m rows add 8192 B to xoff + xon
# where 800G 40m adds the 9216 B port MTU the formula adds to every 8-lane port.
SN5600_FORMULA_MISMATCH = {(40000, "5m"), (800000, "5m"), (800000, "300m")}
SN5600_T0 = {"ingress_lossless_pool": 67737959, "ingress_lossy_pool": 67737959,
             "egress_lossless_pool": 158229504, "egress_lossy_pool": 67737959}
SN5600_T1 = {"ingress_lossless_pool": 52161690, "ingress_lossy_pool": 52161690,
             "egress_lossless_pool": 158229504, "egress_lossy_pool": 52161690}
# ACS-MSN2700/buffers_defaults_objects.j2 (ACS-SN5600's buffers_defaults_objects.j2 links to it)
ACS_PROFILES = {
    "ingress_lossless_profile": {"pool": "ingress_lossless_pool", "size": "0", "dynamic_th": "7"},
    "ingress_lossy_profile": {"pool": "ingress_lossy_pool", "size": "0", "dynamic_th": "3"},
    "egress_lossless_profile": {"pool": "egress_lossless_pool", "size": "0", "dynamic_th": "7"},
    "egress_lossy_profile": {"pool": "egress_lossy_pool", "size": "9216", "dynamic_th": "7"},
    "q_lossy_profile": {"pool": "egress_lossy_pool", "size": "0", "dynamic_th": "3"},
}
ACS_INGRESS_LIST = "ingress_lossless_profile,ingress_lossy_profile"
ACS_EGRESS_LIST = "egress_lossless_profile,egress_lossy_profile"
# Cable (m) -> the SN5600 row it rounds up to: rows exist for 5m, 40m and 300m only.
ROUNDED = {3: "5m", 20: "40m", 50: "300m", 120: "300m"}


def _skip_reason() -> str | None:
    if not any(YANG_DIR.glob("*.yang")):
        return f"SONiC YANG models not found in {YANG_DIR}"
    try:
        import libyang  # noqa: F401
    except Exception as exc:  # the C library can be missing even when the wheel is installed
        return f"python libyang not importable ({exc}); {sonic_yang.INSTALL_HINT}"
    return None


needs_libyang = pytest.mark.skipif(_skip_reason() is not None, reason=_skip_reason() or "")


def _intent(kind: str, nodes: int, cables: dict, **topology) -> Intent:
    return Intent.model_validate({
        "fabric": {"name": "buf"},
        "topology": {"kind": kind, "nodes": nodes, "rails": 2, "nic_speed": "400G",
                     "switches": {"leaf": {"model": "SN5600"}, "spine": {"model": "SN5600"},
                                  "super_spine": {"model": "SN5600"}},
                     "cables": cables, **topology},
        "switch_os": {"name": "sonic", "version": "202411"},
        "addressing": {"fabric_links": "10.254.0.0/15"},
    })


# 3 m host cables, 20 m leaf-spine, 120 m spine-super-spine, 50 m between dragonfly groups
SMALL = {
    "three-tier": _intent("three-tier", 40, {"host_leaf": 3, "leaf_spine": 20, "spine_super_spine": 120},
                          nodes_per_unit=16),
    "dragonfly": _intent("dragonfly-plus", 6, {"host_leaf": 3, "leaf_spine": 20, "global": 50}, groups=3),
}
CABLE_OF_TIER = {TIER_HOST_LEAF: 3, TIER_LEAF_SPINE: 20, TIER_SPINE_SUPER: 120, TIER_GLOBAL: 50}


@pytest.fixture(scope="module")
def plans() -> dict[str, FabricPlan]:
    out = {name: compile_plan(intent) for name, intent in SMALL.items()}
    out["medium-sonic"] = compile_plan(load_intent(MEDIUM_SONIC).intent)
    return out


def _configs(plan: FabricPlan):
    for sw in plan.switches:
        yield sw, json.loads(render_config_db(plan, sw))


# ----------------------------------------------------------------------------- data vs upstream


def test_sn5600_tables_restate_upstream():
    for hwsku in ("ACS-SN5600", "Mellanox-SN5600-O128"):
        sku = sku_buffers(hwsku)
        assert {(r.speed_mbps, r.cable): (r.size, r.xon, r.xoff, r.threshold) for r in sku.rows} == SN5600_ROWS
        assert dict(sku.pools("leaf")) == SN5600_T0
        assert dict(sku.pools("spine")) == SN5600_T1 == dict(sku.pools("super-spine"))
        assert {k: {f: str(v) for f, v in p.items()} for k, p in sku.layout.profiles.items()} == ACS_PROFILES
    # Mellanox-SN5600-V256/buffers_defaults_t0.j2: a shared headroom pool (pool xoff), no ingress_lossy_pool
    v256 = sku_buffers("Mellanox-SN5600-V256")
    assert dict(v256.pools("leaf")) == {"ingress_lossless_pool": 73684992, "ingress_lossless_pool_xoff": 60293120,
                                        "egress_lossless_pool": 158229504, "egress_lossy_pool": 73684992}
    assert v256.shared_headroom_pool and v256.layout.ingress_profile_list == ("ingress_lossless_profile",)
    # Mellanox-SN5600-V256/pg_profile_lookup.ini: 400000 5m 19456 19456 157696 0
    assert v256.row(400, 5) is not None and (v256.row(400, 5).size, v256.row(400, 5).xoff) == (19456, 157696)


def test_every_choosable_hwsku_has_buffer_data():
    chosen = {sku for m in sonic_models() for _, sku in sonic_platform(m).hwskus}
    assert chosen == set(sonic_buffer_skus())
    for hwsku in chosen:
        sku = sku_buffers(hwsku)
        assert sku.rows and set(sku.pools_by_topology) == {"t0", "t1"}
        for topo in ("t0", "t1"):
            assert set(sku.layout.pools) <= set(sku.pools_by_topology[topo])
        for profile in sku.layout.profiles.values():
            assert profile["pool"] in sku.layout.pools
        assert sku.layout.egress_profile_list == ("egress_lossless_profile", "egress_lossy_profile")


def test_unknown_hwsku_is_one_actionable_line():
    with pytest.raises(SonicDataError, match=r"^HwSKU Foo has no buffer data in sonic_buffers\.yaml \(known: "):
        sku_buffers("Foo")


def _git(*args: str) -> str:
    return subprocess.run(["git", "-C", str(UPSTREAM), *args], capture_output=True, text=True, check=True).stdout


def _upstream(path: str) -> tuple[str, str]:
    """(resolved path, text) of a file at UPSTREAM_COMMIT; a git symlink is a blob holding its target."""
    for _ in range(8):
        mode, _, sha = _git("ls-tree", UPSTREAM_COMMIT, path).split("\t")[0].split()
        text = _git("cat-file", "-p", sha)
        if mode != "120000":
            return path, text
        path = posixpath.normpath(posixpath.join(posixpath.dirname(path), text.strip()))
    raise AssertionError(f"symlink loop at {path}")


@pytest.mark.skipif(not (UPSTREAM / "HEAD").exists(), reason=f"sonic-buildimage mirror not at {UPSTREAM}")
def test_whole_yaml_matches_upstream_files():
    data = yaml.safe_load(BUFFERS_YAML.read_text())
    layout_files = {"separate_ingress_pools": "x86_64-mlnx_msn2700-r0/ACS-MSN2700",
                    "shared_headroom_pool": "x86_64-mlnx_msn2700-r0/Mellanox-SN2700-D48C8"}
    for hwsku in sonic_buffer_skus():
        spec = data["skus"][hwsku]
        base = f"device/mellanox/{sonic_platform(spec['model']).platform}/{hwsku}"
        path, ini = _upstream(f"{base}/pg_profile_lookup.ini")
        assert path == f"device/mellanox/{spec['pg_profile_lookup']}/pg_profile_lookup.ini", hwsku
        rows = sorted(tuple(int(f) if f[-1] != "m" else f for f in line.split())
                      for line in ini.splitlines() if line.strip() and not line.lstrip().startswith("#"))
        assert rows == sorted(tuple(r) for r in data["tables"][spec["pg_profile_lookup"]]["rows"]), hwsku
        path, _ = _upstream(f"{base}/buffers_defaults_objects.j2")
        assert path == f"device/mellanox/{layout_files[spec['layout']]}/buffers_defaults_objects.j2", hwsku
        for topo in ("t0", "t1"):
            _, text = _upstream(f"{base}/buffers_defaults_{topo}.j2")
            sets = {k.removesuffix("_size"): int(v)
                    for k, v in re.findall(r"set\s+(\w+_pool_(?:size|xoff))\s*=\s*'(\d+)'", text)}
            assert sets == spec["pools"][topo], (hwsku, topo)


# ----------------------------------------------------------------------------- formula vs rows


def test_formula_reproduces_the_sn5600_rows_but_three():
    """generator/plan/headroom.py fed the row's cable length (ROCE.md §4: Spectrum-4, port MTU 9216)."""
    mismatch = set()
    for (speed_mbps, cable), (size, xon, xoff, _th) in SN5600_ROWS.items():
        h = port_headroom("spectrum-4", speed_mbps // 1000, int(cable.removesuffix("m")), 9216)
        if (h.size, h.xon, h.xoff) != (size, xon, xoff):
            mismatch.add((speed_mbps, cable))
            assert (h.xon, h.xoff) == (xon, xoff), "only the size of the odd rows differs"
    assert mismatch == SN5600_FORMULA_MISMATCH
    # ROCE.md §4 check values
    assert (port_headroom("spectrum-4", 400, 5, 9216).size, port_headroom("spectrum-4", 100, 40, 9216).xoff,
            port_headroom("spectrum-4", 200, 300, 9216).size) == (250880, 126976, 374784)


def test_formula_mismatch_is_declared_for_every_table():
    """sonic_buffers.yaml writes down, per table, which rows the formula does not reproduce."""
    data = yaml.safe_load(BUFFERS_YAML.read_text())
    for key, table in data["tables"].items():
        users = [sku_buffers(s) for s in sonic_buffer_skus() if data["skus"][s]["pg_profile_lookup"] == key]
        asics = {catalog()[data["skus"][s.hwsku]["model"]].asic for s in users}
        assert len(asics) == 1, key
        asic = asics.pop()
        shp = users[0].shared_headroom_pool
        off = set()
        for r in users[0].rows:
            try:
                h = port_headroom(asic, r.speed_mbps // 1000, r.cable_m, 9216, shared_headroom_pool=shp)
            except ValueError:                      # 100 Mb/s rows: below the model's 1 Gb/s unit
                off.add((r.speed_mbps, r.cable))
                continue
            if (h.size, h.xon, h.xoff) != (r.size, r.xon, r.xoff):
                off.add((r.speed_mbps, r.cable))
        declared = table["formula_mismatch"]
        expected = {(r.speed_mbps, r.cable) for r in users[0].rows} if declared == "all" \
            else {(s, c) for s, c in declared}
        assert off == expected, key


# ----------------------------------------------------------------------------- rendered tables


@pytest.mark.parametrize("case", ["medium-sonic", "three-tier", "dragonfly"])
def test_cable_lengths_are_rows_and_profiles_equal_them(plans, case):
    plan = plans[case]
    for sw, config in _configs(plan):
        assert config["DEVICE_METADATA"]["localhost"]["hwsku"] == "Mellanox-SN5600-O128"
        cables = config["CABLE_LENGTH"]["AZURE"]
        assert cables and set(cables.values()) <= {c for _, c in SN5600_ROWS}
        ports = {p.port: p for p in plan.ports_of(sw.name)}
        by_name = {f"{e['description']}": name for name, e in config["PORT"].items() if "description" in e}
        for p in ports.values():
            name = by_name[f"{p.peer_device}:{p.peer_port}"]
            if case != "medium-sonic":
                assert p.cable_m == CABLE_OF_TIER[p.tier]
            assert cables[name] == ROUNDED[p.cable_m]       # medium-sonic: 3 / 20 / 50 m too
            profile_name = f"pg_lossless_400000_{cables[name]}_profile"
            assert config["BUFFER_PG"][f"{name}|3"] == {"profile": profile_name}
        for name, profile in config["BUFFER_PROFILE"].items():
            m = re.fullmatch(r"pg_lossless_(\d+)_(\d+m)_profile", name)
            if m is None:
                assert profile == ACS_PROFILES[name]
                continue
            size, xon, xoff, th = SN5600_ROWS[(int(m.group(1)), m.group(2))]
            assert profile == {"pool": "ingress_lossless_pool", "size": str(size), "xon": str(xon),
                               "xoff": str(xoff), "dynamic_th": str(th)}


def test_medium_sonic_cables_round_up(plans):
    # inventories/medium-sonic: host_leaf 3 m, leaf_spine 20 m, global 50 m
    plan = plans["medium-sonic"]
    seen = set()
    for sw, config in _configs(plan):
        cables = config["CABLE_LENGTH"]["AZURE"]
        by_peer = {e["description"]: n for n, e in config["PORT"].items() if "description" in e}
        for p in plan.ports_of(sw.name):
            assert cables[by_peer[f"{p.peer_device}:{p.peer_port}"]] == ROUNDED[int(p.cable_m)]
            seen.add(int(p.cable_m))
    assert seen == {3, 20, 50}


@pytest.mark.parametrize("case", ["medium-sonic", "three-tier", "dragonfly"])
def test_pools_and_lossy_profiles_as_nvidia_ships_them(plans, case):
    plan = plans[case]
    for sw, config in _configs(plan):
        sizes = SN5600_T0 if sw.role == ROLE_LEAF else SN5600_T1
        assert config["BUFFER_POOL"] == {
            pool: {"mode": "dynamic", "size": str(size), "type": pool.split("_")[0]} for pool, size in sizes.items()}
        profiles = config["BUFFER_PROFILE"]
        assert profiles["q_lossy_profile"]["pool"] == "egress_lossy_pool"
        assert profiles["egress_lossy_profile"]["pool"] == "egress_lossy_pool"
        used = [n for n, e in config["PORT"].items() if e["admin_status"] == "up"]
        assert used and set(config["BUFFER_PORT_EGRESS_PROFILE_LIST"]) == set(used)
        for name in used:
            assert config["BUFFER_PORT_EGRESS_PROFILE_LIST"][name] == {"profile_list": ACS_EGRESS_LIST}
            assert config["BUFFER_PORT_INGRESS_PROFILE_LIST"][name] == {"profile_list": ACS_INGRESS_LIST}
            assert config["BUFFER_PG"][f"{name}|0"] == {"profile": "ingress_lossy_profile"}
        lossy_queues = {k: v for k, v in config["BUFFER_QUEUE"].items() if v["profile"] == "q_lossy_profile"}
        lossless_queues = {k: v for k, v in config["BUFFER_QUEUE"].items() if v["profile"] != "q_lossy_profile"}
        assert lossy_queues and {v["profile"] for v in lossless_queues.values()} == {"egress_lossless_profile"}
        # GCU's allow-list is keyed on the WRED profile name
        assert set(config["WRED_PROFILE"]) == {"AZURE_LOSSLESS"}


@needs_libyang
@pytest.mark.parametrize("case", ["medium-sonic", "three-tier", "dragonfly"])
def test_rendered_buffers_pass_sonic_yang(plans, case):
    for sw, config in _configs(plans[case]):
        assert config_findings(config, sw.name, YANG_DIR) == [], sw.name


# ----------------------------------------------------------------------------- checks


def test_budget_sums_the_rows_against_the_sku_pool(plans):
    plan = plans["medium-sonic"]
    for b in switch_budgets(plan):
        sw = next(s for s in plan.switches if s.name == b.switch)
        expected = sum(SN5600_ROWS[(400000, ROUNDED[int(p.cable_m)])][0] for p in plan.ports_of(sw.name)
                       if p.lossless)
        assert b.used_bytes == expected
        assert b.pool_bytes == (SN5600_T0 if sw.role == ROLE_LEAF else SN5600_T1)["ingress_lossless_pool"]


def _fg254(plan: FabricPlan, intent: Intent) -> list[tuple[str, str]]:
    return list(sonic_rules.sonic_cable_row(CheckContext(intent, plan)))


def test_fg254_cable_longer_than_the_longest_row():
    intent = _intent("dragonfly-plus", 6, {"host_leaf": 3, "leaf_spine": 20, "global": 301}, groups=3)
    findings = _fg254(compile_plan(intent), intent)
    assert len(findings) == 1
    path, message = findings[0]
    assert path == "topology.cables.global" and "\n" not in message
    assert "301 m" in message and "5m, 40m, 300m" in message and "at most 300 m" in message
    with pytest.raises(SonicDataError, match="FG254"):
        plan = compile_plan(intent)
        for sw in plan.switches:
            render_config_db(plan, sw)
    ok = SMALL["dragonfly"]
    assert _fg254(compile_plan(ok), ok) == []


def test_fg254_speed_without_a_row(monkeypatch):
    real = sku_buffers("Mellanox-SN5600-O128")
    no_400g = SkuBuffers(real.hwsku, real.layout, real.table, tuple(r for r in real.rows if r.speed_mbps != 400000),
                         real.pools_by_topology)
    monkeypatch.setattr(sonic_rules, "sku_buffers", lambda hwsku: no_400g)
    intent = SMALL["dragonfly"]
    findings = _fg254(compile_plan(intent), intent)
    assert len(findings) == 1
    path, message = findings[0]
    assert path == "topology.nic_speed" and "\n" not in message
    assert "no 400G row" in message and "SN5600" in message and "800G" in message


def test_fg254_is_documented():
    load_rules()
    assert RULES["FG254"].severity == "error" and "pg_profile_lookup.ini" in RULES["FG254"].explanation


def test_cli_refuses_a_cable_without_a_row_and_writes_nothing(tmp_path):
    text = MEDIUM_SONIC.read_text()
    assert "global: 50 " in text
    intent = tmp_path / "fabric.yaml"
    intent.write_text(text.replace("global: 50 ", "global: 500 "))
    out = tmp_path / "out"
    result = run_cli("render", str(intent), "-o", str(out), cwd=REPO)
    assert result.returncode != 0
    lines = [line for line in (result.stdout + result.stderr).splitlines() if "FG254" in line]
    assert len(lines) == 1 and "topology.cables.global" in lines[0], result.stdout + result.stderr
    assert not out.exists() or not any(out.rglob("config_db.json"))
