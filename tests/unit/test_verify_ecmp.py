"""The ECMP width verify expects, derived from the plan's sessions (generator/verify/ecmp.py)."""

from __future__ import annotations

from collections import Counter
from types import SimpleNamespace

from generator.checks.runner import run_checks
from generator.intent.loader import load_intent
from generator.verify.ecmp import expected_widths

LEAF_SPINE = """\
fabric: {name: ls}
topology: {kind: leaf-spine, nodes: 32, rails: 2, nic_speed: 400G,
           switches: {leaf: {model: SN4700}, spine: {model: SN4700}}}
"""
RAIL_OPTIMIZED = """\
fabric: {name: ro}
topology: {kind: rail-optimized, nodes: 16, rails: 4, nic_speed: 400G, nodes_per_unit: 8,
           switches: {leaf: {model: SN4700}, spine: {model: SN4700}}}
"""


def _plan(tmp_path, text):
    path = tmp_path / "fabric.yaml"
    path.write_text(text)
    return run_checks(load_intent(path)).plan


def _uplinks(plan) -> Counter:
    return Counter((link.a_device, link.b_device) for link in plan.links if link.tier == "leaf-spine")


def test_leaf_spine_leaf_reaches_another_leaf_over_every_uplink_and_a_spine_over_its_parallel_links(tmp_path):
    plan = _plan(tmp_path, LEAF_SPINE)
    uplinks = _uplinks(plan)
    leaves = sorted(sw.name for sw in plan.switches if sw.role == "leaf")
    loopback = {sw.name: f"{sw.loopback}/32" for sw in plan.switches}
    widths = expected_widths(plan)
    # 32 nodes x 2 rails on 32-port leaves at 1:1: 4 leaves of 16 hosts ports and 16 uplinks, 8 to each of 2 spines
    assert len(leaves) == 4 and set(uplinks.values()) == {8}
    for leaf in leaves:
        others = {loopback[o]: (16, o) for o in leaves if o != leaf}      # every spine reaches every leaf
        assert widths[leaf] == others
    for spine in (sw.name for sw in plan.switches if sw.role == "spine"):
        assert widths[spine] == {loopback[leaf]: (uplinks[(leaf, spine)], leaf) for leaf in leaves}


def test_rail_optimized_leaves_reach_each_other_through_the_spines(tmp_path):
    plan = _plan(tmp_path, RAIL_OPTIMIZED)
    uplinks = _uplinks(plan)
    leaves = sorted(sw.name for sw in plan.switches if sw.role == "leaf")
    # 2 units x 4 rails: 8 rail leaves of 8 host ports, 4 uplinks to each of 2 spines
    assert len(leaves) == 8 and set(uplinks.values()) == {4}
    widths = expected_widths(plan)
    # another rail or another unit: through either spine, so all 8 uplinks, whatever the pair
    assert {w for leaf in leaves for w, _ in widths[leaf].values()} == {8}
    assert all(len(widths[leaf]) == 7 for leaf in leaves)
    assert {w for sw in plan.switches if sw.role == "spine" for w, _ in widths[sw.name].values()} == {4}


def _synthetic(asn: dict[str, int], links: list[tuple[str, str]], max_paths=None):
    switches = [SimpleNamespace(name=n, role="leaf" if n.startswith("leaf") else "spine", asn=a,
                                loopback=f"10.0.0.{i}") for i, (n, a) in enumerate(sorted(asn.items()), 1)]
    ports = [SimpleNamespace(device=a, peer_device=b, peer_asn=asn[b]) for x, y in links for a, b in ((x, y), (y, x))]
    routing = SimpleNamespace(max_paths=max_paths) if max_paths else None
    return SimpleNamespace(switches=switches, ports=ports, routing=routing)


def test_equal_length_paths_through_different_ases_are_not_guessed():
    # leaf-a reaches leaf-b through spine-x (AS 1) and spine-y (AS 2): two AS paths of one length;
    # without multipath-relax BGP installs one of them, picked by tie-breaks: not derivable
    plan = _synthetic({"leaf-a": 101, "leaf-b": 102, "spine-x": 1, "spine-y": 2},
                      [("leaf-a", "spine-x"), ("leaf-a", "spine-y"), ("leaf-b", "spine-x"), ("leaf-b", "spine-y")])
    widths = expected_widths(plan)
    assert widths["leaf-a"] == {} and widths["leaf-b"] == {}
    assert widths["spine-x"] == {"10.0.0.1/32": (1, "leaf-a"), "10.0.0.2/32": (1, "leaf-b")}


def test_the_multipath_limit_caps_the_width():
    links = [("leaf-a", "spine-x")] * 3 + [("leaf-b", "spine-x")] * 3
    plan = _synthetic({"leaf-a": 101, "leaf-b": 102, "spine-x": 1}, links, max_paths=2)
    assert expected_widths(plan)["leaf-a"] == {"10.0.0.2/32": (2, "leaf-b")}
    assert expected_widths(_synthetic({"leaf-a": 101, "leaf-b": 102, "spine-x": 1}, links))["leaf-a"] == {
        "10.0.0.2/32": (3, "leaf-b")}
