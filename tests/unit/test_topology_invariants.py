"""Topology invariants over many generated intents of every kind and size."""

from __future__ import annotations

import ipaddress
import itertools
import math
import random
from collections import Counter, defaultdict

import networkx as nx
import pytest

from generator.intent.model import Intent
from generator.plan.catalog import get_model
from generator.plan.compile import compile_plan
from generator.plan.model import ROLE_LEAF, TIER_HOST_LEAF
from generator.plan.topology import CompileError

KINDS = ("single-switch", "leaf-spine", "rail-optimized", "three-tier", "dragonfly-plus")


def make_intent(kind: str, nodes: int, rails: int, speed: str = "400G", ratio: str = "1:1",
                unit: int = 32, groups: int = 2, leaf: str = "SN5600", spine: str = "SN5600",
                numbered: bool = False) -> Intent:
    data = {
        "fabric": {"name": "inv"},
        "topology": {"kind": kind, "nodes": nodes, "rails": rails, "nic_speed": speed, "oversubscription": ratio,
                     "nodes_per_unit": unit, "groups": groups,
                     "switches": {"leaf": {"model": leaf}, "spine": {"model": spine},
                                  "super_spine": {"model": spine}}},
    }
    if numbered:
        data["addressing"] = {"fabric_links": "10.254.0.0/15"}
    return Intent.model_validate(data)


def _cases() -> list[tuple]:
    rng = random.Random(20261202)
    cases = [
        ("single-switch", 4, 2, "400G", "1:1", 32, 2, "SN4700", "SN5600", False),
        ("single-switch", 16, 8, "400G", "1:1", 32, 2, "SN5600", "SN5600", False),
        ("leaf-spine", 37, 4, "200G", "2:1", 32, 2, "SN4600", "SN4600", True),
        ("leaf-spine", 5, 1, "100G", "3:1", 32, 2, "SN2700", "SN2700", False),
        ("rail-optimized", 32, 8, "400G", "1:1", 32, 2, "SN5600", "SN5600", False),
        ("rail-optimized", 130, 8, "400G", "1:1", 32, 2, "SN5600", "SN5600", True),
        ("rail-optimized", 100, 4, "400G", "2:1", 64, 2, "SN5600", "SN5600", False),
        ("rail-optimized", 70, 2, "100G", "1:1", 40, 2, "SN4600C", "SN4600C", False),   # 2 leaves per rail per unit
        ("three-tier", 64, 8, "400G", "1:1", 32, 2, "SN5600", "SN5600", True),
        ("three-tier", 97, 4, "200G", "1:1", 16, 2, "SN5600", "SN5600", False),
        ("dragonfly-plus", 32, 4, "400G", "1:1", 32, 2, "SN5600", "SN5600", False),
        ("dragonfly-plus", 45, 2, "400G", "1:1", 32, 5, "SN5600", "SN5600", True),
        ("dragonfly-plus", 9, 8, "800G", "1:1", 32, 3, "SN5600", "SN5600", False),
        # few uplinks per leaf: must still reach every spine (used to split the fabric)
        ("leaf-spine", 4, 1, "100G", "2:1", 32, 2, "SN2201", "SN2700", False),
        ("three-tier", 4, 2, "400G", "2:1", 32, 2, "SN5600", "SN5600", False),
        ("rail-optimized", 70, 2, "100G", "3:1", 70, 2, "SN2700", "SN2700", False),
    ]
    models = {"400G": ["SN5600", "SN5400", "SN4700"], "200G": ["SN5600", "SN4600", "SN3700"],
              "100G": ["SN4600C", "SN2700", "SN5600"], "800G": ["SN5600"]}
    for _ in range(30):
        kind = rng.choice(KINDS)
        speed = rng.choice(list(models))
        leaf = rng.choice(models[speed])
        rails = rng.choice([1, 2, 4, 8])
        nodes = rng.randint(1, 24 if kind == "single-switch" else 200)
        ratio = rng.choice(["1:1", "1:1", "2:1", "3:2"])
        cases.append((kind, nodes, rails, speed, ratio, rng.choice([8, 16, 32]), rng.randint(2, 4), leaf,
                      rng.choice(models[speed]), rng.random() < 0.4))
    return cases


CASES = _cases()


@pytest.mark.parametrize("case", CASES, ids=[f"{c[0]}-{c[1]}x{c[2]}-{c[3]}-{c[4]}-{c[7]}" for c in CASES])
def test_invariants(case: tuple) -> None:
    kind, nodes, rails, speed, ratio, unit, groups, leaf, spine, numbered = case
    intent = make_intent(kind, nodes, rails, speed, ratio, unit, min(groups, nodes), leaf, spine, numbered)
    try:
        plan = compile_plan(intent)
    except CompileError as exc:
        # infeasible combinations must be refused with a key path and a reason, never half-built
        assert exc.path.startswith(("topology", "addressing")) and exc.message, exc
        pytest.skip(f"infeasible by design: {exc.message}")
    check_plan(plan, intent)


def check_plan(plan, intent: Intent) -> None:
    t = intent.topology
    switches = {s.name: s for s in plan.switches}
    assert len(switches) == len(plan.switches), "switch names unique"

    # every NIC on exactly one leaf port, all (node, rail) present
    seen = Counter()
    for h in plan.hosts:
        assert len(h.nics) == t.rails
        for nic in h.nics:
            seen[(nic.switch, nic.port)] += 1
            assert switches[nic.switch].role == ROLE_LEAF
    assert len(plan.hosts) == t.nodes
    assert all(v == 1 for v in seen.values()), "a leaf port carries two NICs"

    # no switch port used twice; split and native use of one physical port never mix
    used = Counter((p.device, p.port) for p in plan.ports)
    assert all(v == 1 for v in used.values())
    modes = defaultdict(set)
    for p in plan.ports:
        modes[(p.device, p.physical)].add(p.breakout)
    assert all(len(m) == 1 for m in modes.values())

    # per-switch bandwidth within the model
    by_dev = defaultdict(list)
    for p in plan.ports:
        by_dev[p.device].append(p)
    for name, ports in by_dev.items():
        model = get_model(switches[name].model)
        assert len(ports) <= len(model.logical_ports(t.nic_speed))
        native = sum(g.count * g.speed_g for g in model.port_groups)
        assert sum(p.speed_g for p in ports) <= native

    # measured oversubscription equals the intent (exact when divisible, never worse); a leaf
    # gets extra uplinks only to reach every switch above it
    down, up = t.oversubscription
    for sw in plan.switches:
        if sw.role != ROLE_LEAF or t.kind == "single-switch":
            continue
        hosts_n = sum(1 for p in by_dev[sw.name] if p.tier == TIER_HOST_LEAF)
        ups = sum(1 for p in by_dev[sw.name] if p.tier != TIER_HOST_LEAF)
        assert ups == max(math.ceil(hosts_n * up / down), len(_uppers(plan, sw)))
        if hosts_n * up % down == 0 and hosts_n * up // down >= len(_uppers(plan, sw)):
            assert hosts_n * up == ups * down

    # Clos: every switch reaches every switch of the tier above in its scope
    for sw in plan.switches:
        expected = {u.name for u in _uppers(plan, sw)}
        reached = {p.peer_device for p in by_dev[sw.name] if p.peer_device in expected}
        assert reached == expected, f"{sw.name} misses {sorted(expected - reached)}"

    # rail alignment
    if t.kind in ("rail-optimized", "three-tier", "dragonfly-plus"):
        for h in plan.hosts:
            for nic in h.nics:
                assert switches[nic.switch].rail == nic.rail

    # links agree with ports on both ends; graph connected
    port_index = {(p.device, p.port): p for p in plan.ports}
    g = nx.Graph()
    for lk in plan.links:
        g.add_edge(lk.a_device, lk.b_device)
        if lk.tier != TIER_HOST_LEAF:
            pa, pb = port_index[(lk.a_device, lk.a_port)], port_index[(lk.b_device, lk.b_port)]
            assert (pa.peer_device, pa.peer_port) == (lk.b_device, lk.b_port)
            assert (pb.peer_device, pb.peer_port) == (lk.a_device, lk.a_port)
        assert lk.cable == ("DAC" if lk.length_m <= 3 else "AOC")
    assert nx.is_connected(g)

    # addresses unique and inside their pools
    def inside(addrs, pool):
        net = ipaddress.IPv4Network(pool)
        ips = [ipaddress.IPv4Address(a.split("/")[0]) for a in addrs]
        assert len(set(ips)) == len(ips), f"duplicate address in {pool}"
        assert all(ip in net for ip in ips)

    inside([s.loopback for s in plan.switches], plan.loopback_pool)
    inside([s.mgmt_ip for s in plan.switches] + [h.mgmt_ip for h in plan.hosts], plan.mgmt_pool)
    inside([n.ip for h in plan.hosts for n in h.nics] + [n.gateway for h in plan.hosts for n in h.nics],
           plan.rail_pool)
    if plan.fabric_link_pool:
        inside([p.ip for p in plan.ports if p.tier != TIER_HOST_LEAF], plan.fabric_link_pool)
    for h in plan.hosts:
        for nic in h.nics:
            net = ipaddress.IPv4Network(nic.ip, strict=False)
            assert net.prefixlen == 31 and ipaddress.IPv4Address(nic.gateway) in net
            assert int(ipaddress.IPv4Address(nic.ip.split("/")[0])) % 2 == 1

    # each leaf has its own ASN; BGP peers across every fabric link have different ASNs
    leaf_asns = [s.asn for s in plan.switches if s.role == ROLE_LEAF]
    assert len(set(leaf_asns)) == len(leaf_asns)
    for p in plan.ports:
        if p.peer_asn is not None:
            assert p.peer_asn != switches[p.device].asn


def _uppers(plan, sw) -> list:
    """The switches `sw` must link to: its spines (same pod / group), or super-spines."""
    if sw.role == ROLE_LEAF:
        return [s for s in plan.switches if s.role == "spine"
                and (plan.kind != "three-tier" or s.unit == sw.unit)
                and (plan.kind != "dragonfly-plus" or s.group == sw.group)]
    if sw.role == "spine" and plan.kind == "three-tier":
        # spine planes: spine k of every pod reaches the super-spines of plane k
        plane = [s for s in plan.switches if s.role == "spine" and s.name.rsplit("-", 1)[1] == sw.name.rsplit("-", 1)[1]]
        supers = {p.peer_device for p in plan.ports if p.device in {s.name for s in plane}
                  and p.peer_device.startswith(f"{plan.fabric}-super-spine-")}
        return [s for s in plan.switches if s.name in supers]
    return []


@pytest.mark.parametrize("kind", KINDS)
def test_adding_a_node_keeps_existing_hosts(kind: str) -> None:
    """Stable allocation: node n keeps its leaf port and addresses when node n+1 is added."""
    a = compile_plan(make_intent(kind, 12, 4, unit=8, groups=2))
    b = compile_plan(make_intent(kind, 13, 4, unit=8, groups=2))
    for ha, hb in zip(a.hosts, b.hosts, strict=False):
        if kind != "dragonfly-plus":   # dragonfly re-balances nodes across groups by design
            assert ha == hb


def test_reference_counts() -> None:
    """The field guide's medium and large figures come out of the derivation."""
    medium = compile_plan(make_intent("dragonfly-plus", 32, 4, groups=2))
    assert Counter(s.role for s in medium.switches) == {"leaf": 8, "spine": 4}
    large = compile_plan(make_intent("three-tier", 64, 8, unit=32))
    assert Counter(s.role for s in large.switches) == {"leaf": 16, "spine": 8, "super-spine": 4}


def test_spine_planes_partition_the_core() -> None:
    plan = compile_plan(make_intent("three-tier", 256, 8, unit=32))
    planes = {}
    for sw in plan.switches:
        if sw.role == "spine":
            peers = frozenset(p.peer_device for p in plan.ports_of(sw.name) if "super-spine" in p.peer_device)
            planes.setdefault(sw.name.rsplit("-", 1)[1], set()).add(peers)
    assert all(len(v) == 1 for v in planes.values()), "spines of one plane reach different super-spines"
    sets = [next(iter(v)) for v in planes.values()]
    assert sum(len(x) for x in sets) == len(frozenset().union(*sets)), "planes overlap"


def test_two_tier_beyond_spine_radix_is_refused() -> None:
    with pytest.raises(CompileError, match="three-tier"):
        compile_plan(make_intent("rail-optimized", 2048, 8))


def test_breakout_on_sn5600_gives_128_ports() -> None:
    assert len(get_model("SN5600").logical_ports(400)) == 128
    assert len(get_model("SN5600").logical_ports(800)) == 64
    assert get_model("SN2201").logical_ports(400) == ()


@pytest.mark.parametrize("kind,nodes", list(itertools.product(KINDS, [1, 2, 3])))
def test_tiny_fabrics(kind: str, nodes: int) -> None:
    intent = make_intent(kind, nodes, 2, groups=min(2, nodes) if nodes > 1 else 2)
    if kind == "dragonfly-plus" and nodes < 2:
        with pytest.raises(CompileError):
            compile_plan(intent)
        return
    check_plan(compile_plan(intent), intent)
