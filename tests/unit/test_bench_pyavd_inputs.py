"""bench/pyavd_compare.py builds pyavd's inputs from fabricgen's plan.json: the same switches,
cabling and GPU ports, so that its devices/s is measured on the fabric fabricgen rendered.
Pure logic, no pyavd import (pyavd lives in bench/.venv-pyavd only)."""

from __future__ import annotations

import importlib.util
import ipaddress
from collections import Counter

import pytest

from generator.intent.loader import load_intent
from generator.plan.compile import compile_plan
from generator.render.plan_json import plan_to_dict
from tests.conftest import REPO, example


def _bench():
    spec = importlib.util.spec_from_file_location("pyavd_compare", REPO / "bench" / "pyavd_compare.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def bench():
    return _bench()


@pytest.fixture(scope="module")
def plan() -> dict:
    # large: the three-tier (leaf, spine, super-spine) example, the kind render_scale.py renders
    return plan_to_dict(compile_plan(load_intent(example("large")).intent))


def _node(inputs: dict) -> tuple[str, dict]:
    (key, block), = ((k, v) for k, v in inputs.items() if isinstance(v, dict) and "nodes" in v)
    (node,) = block["nodes"]
    return key, {**block["defaults"], **node}


def test_eos_port_names(bench) -> None:
    # an 800G OSFP port split 2x400G: the halves are lanes 1-4 and 5-8, EthernetN/1 and EthernetN/5
    assert bench.eos_port("swp1s0") == "Ethernet1/1"
    assert bench.eos_port("swp1s1") == "Ethernet1/5"
    assert bench.eos_port("swp64") == "Ethernet64/1"
    with pytest.raises(ValueError, match="eth0"):
        bench.eos_port("eth0")


def test_every_switch_once_with_its_role(bench, plan) -> None:
    inputs = bench.avd_inputs(plan)
    assert sorted(inputs) == sorted(s["name"] for s in plan["switches"])
    want = {"leaf": ("l3leaf", "l3leaf"), "spine": ("spine", "spine"), "super-spine": ("super_spine", "super-spine")}
    for sw in plan["switches"]:
        key, node = _node(inputs[sw["name"]])
        assert (key, inputs[sw["name"]]["type"]) == want[sw["role"]]
        assert node["name"] == sw["name"]
        assert node["bgp_as"] == str(sw["asn"])
    ids = Counter((inputs[n]["type"], _node(inputs[n])[1]["id"]) for n in inputs)
    assert max(ids.values()) == 1                      # AVD needs ids unique per node type


def test_every_fabric_link_is_one_uplink_of_its_lower_end(bench, plan) -> None:
    inputs = bench.avd_inputs(plan)
    role = {s["name"]: s["role"] for s in plan["switches"]}
    rank = {"leaf": 0, "spine": 1, "super-spine": 2}
    expected = Counter()
    for link in plan["links"]:
        a, b = link["a"], link["b"]
        if a["device"] in role and b["device"] in role:
            lo, hi = (a, b) if rank[role[a["device"]]] < rank[role[b["device"]]] else (b, a)
            expected[(lo["device"], bench.eos_port(lo["port"]), hi["device"], bench.eos_port(hi["port"]))] += 1
    got = Counter()
    for name, data in inputs.items():
        _, node = _node(data)
        ups = node.get("uplink_interfaces", [])
        assert len(ups) == len(node.get("uplink_switches", [])) == len(node.get("uplink_switch_interfaces", []))
        for iface, peer, peer_iface in zip(ups, node.get("uplink_switches", []), node.get("uplink_switch_interfaces", []),
                                           strict=True):
            got[(name, iface, peer, peer_iface)] += 1
    assert expected and got == expected


def test_gpu_ports_are_the_plans_routed_ports(bench, plan) -> None:
    inputs = bench.avd_inputs(plan)
    expected = {(nic["switch"], bench.eos_port(nic["port"])): f"{nic['gateway']}/{nic['ip'].split('/')[1]}"
                for host in plan["hosts"] for nic in host["nics"]}
    got = {(name, port["name"]): port["ip_address"]
           for name, data in inputs.items() for port in _node(data)[1].get("l3_interfaces", [])}
    assert expected and got == expected


def test_avd_allocates_the_plans_loopbacks_and_disjoint_uplink_pools(bench, plan) -> None:
    """AVD's loopback is pool + offset + id (eos_designs' default ip_addressing); that must be
    the plan's, and each node type's /31s (id-1) * uplinks * 2 .. must fit its own pool."""
    inputs = bench.avd_inputs(plan)
    pools = {}
    for sw in plan["switches"]:
        _, node = _node(inputs[sw["name"]])
        pool = ipaddress.ip_network(node["loopback_ipv4_pool"])
        assert str(pool.network_address + node["loopback_ipv4_offset"] + node["id"]) == sw["loopback"]
        if "uplink_ipv4_pool" in node:
            up = ipaddress.ip_network(node["uplink_ipv4_pool"])
            assert node["id"] * len(node["uplink_interfaces"]) * 2 <= up.num_addresses
            pools[inputs[sw["name"]]["type"]] = up
    assert set(pools) == {"l3leaf", "spine"}
    assert not pools["l3leaf"].overlaps(pools["spine"])


def test_a_link_between_peers_of_one_role_is_refused(bench, plan) -> None:
    spines = [s["name"] for s in plan["switches"] if s["role"] == "spine"][:2]
    bad = {**plan, "links": [*plan["links"], {"a": {"device": spines[0], "port": "swp60s0"},
                                             "b": {"device": spines[1], "port": "swp60s0"}, "tier": "global"}]}
    with pytest.raises(ValueError, match="two spines"):
        bench.avd_inputs(bad)
