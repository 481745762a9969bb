"""Which running configs carry traffic (generator/deploy/in_service.py): the lab's factory configs,
which model the real factory files (DEVICE_STATE.md), do not; a rendered fabric config does; and
anything in between counts as in service."""

from __future__ import annotations

import json

import pytest

from generator.checks.runner import run_checks
from generator.deploy.in_service import traffic_evidence
from generator.intent.loader import load_intent
from generator.lab import factory, sonic_factory
from generator.lab.factory import lease_for
from generator.render.nvue_document import load_tree
from generator.render.output import render_files


@pytest.mark.parametrize("version", ["5.4", "5.9", "5.11", "5.14", "5.15"])
def test_cumulus_factory_config_carries_nothing(version):
    mgmt = lease_for(3)
    assert traffic_evidence("cumulus", factory.factory_config(version, "sw1", mgmt, {"cumulus": "$6$x"})) is None


@pytest.mark.parametrize("version", ["202311", "202411", "202505"])
def test_sonic_factory_config_db_carries_nothing(version):
    config = sonic_factory.factory_config_db("SN5600", "sw1", version, lease_for(3))
    assert "BGP_DEVICE_GLOBAL" in config, "the image's init_cfg table, there on every switch"
    assert traffic_evidence("sonic", config) is None


@pytest.mark.parametrize("os_line,suffix", [("", "startup.yaml"),
                                            ('switch_os: {name: sonic, version: "202411"}\naddressing: {fabric_links: 10.254.0.0/16}\n',
                                             "config_db.json")])
def test_rendered_configs_carry_traffic(tmp_path, os_line, suffix):
    text = f"fabric: {{name: s}}\ntopology: {{kind: rail-optimized, nodes: 64, rails: 2}}\n{os_line}"
    (tmp_path / "fabric.yaml").write_text(text)
    plan = run_checks(load_intent(tmp_path / "fabric.yaml")).plan
    files = render_files(plan, text)
    rendered = [body for rel, body in sorted(files.items()) if rel.endswith(suffix)]
    assert len(rendered) == len(plan.switches)
    for body in rendered:
        running = json.loads(body) if suffix.endswith(".json") else load_tree(body)[1]
        assert traffic_evidence(plan.switch_os, running) is not None


@pytest.mark.parametrize("extra,evidence", [
    ({"router": {"bgp": {"autonomous-system": 65001}}}, "router"),
    ({"interface": {"swp1": {"type": "swp"}}}, "interface swp1"),
    ({"interface": {"lo": {"ip": {"address": {"10.0.0.1/32": {}}}}}}, "interface lo"),
    ({"vrf": {"default": {"router": {"bgp": {}}}}}, "vrf default"),
    ({"vrf": {"mgmt": {"router": {"static": {}}}}}, "vrf mgmt"),
    ({"bridge": {"domain": {"br_default": {}}}}, "bridge"),
])
def test_cumulus_anything_beyond_the_factory_counts(extra, evidence):
    tree = factory.factory_config("5.11", "sw1", lease_for(3), {})
    for key, value in extra.items():
        tree[key] = {**tree.get(key, {}), **value}
    assert traffic_evidence("cumulus", tree) == evidence


def test_cumulus_bare_loopback_mgmt_vrf_and_the_default_acls_are_factory():
    tree = factory.factory_config("5.11", "sw1", lease_for(3), {})
    tree["interface"]["lo"] = {"type": "loopback"}
    tree["vrf"] = {"mgmt": {}}
    tree["acl"] = {"acl-default-dos": {"type": "ipv4"}, "acl-default-whitelist": {"type": "ipv4"}}
    assert traffic_evidence("cumulus", tree) is None


@pytest.mark.parametrize("table,rows,evidence", [
    # config_samples.py's t1 preset: demo peers and /31s (the lab leaves them out, a real image may not)
    ("BGP_NEIGHBOR", {"10.0.0.1": {"asn": "64600", "name": "ARISTA01T2"}}, "BGP_NEIGHBOR"),
    ("INTERFACE", {"Ethernet0|10.0.0.0/31": {}}, "INTERFACE"),
    # the l2 preset bridges every port
    ("VLAN", {"Vlan1000": {"vlanid": "1000"}}, "VLAN"),
    ("LOOPBACK_INTERFACE", {"Loopback0|10.1.0.1/32": {}}, "LOOPBACK_INTERFACE"),
])
def test_sonic_forwarding_tables_count(table, rows, evidence):
    config = sonic_factory.factory_config_db("SN5600", "sw1", "202411", lease_for(3))
    config[table] = rows
    assert traffic_evidence("sonic", config) == evidence
    config[table] = {}
    assert traffic_evidence("sonic", config) is None, "an empty table configures nothing"


def test_sonic_bgp_asn_alone_counts():
    config = sonic_factory.factory_config_db("SN5600", "sw1", "202411", lease_for(3))
    config["DEVICE_METADATA"]["localhost"]["bgp_asn"] = "65100"
    assert traffic_evidence("sonic", config) == "DEVICE_METADATA bgp_asn"


def test_unread_config_counts():
    assert traffic_evidence("sonic", None) == "running config not read"
    assert traffic_evidence("cumulus", json.loads("[]")) == "running config not read"
