"""Bisection bandwidth of a compiled plan.

Bisection = the least total link capacity (one direction, Gb/s) that must be cut to
separate the hosts into two halves, over all balanced splits. Hosts count as single
vertices: NVLink inside a server is never the bottleneck of a host-level cut.

`closed_form_gbps` reads the plan's structure (leaves grouped by the hosts they
serve, units/pods/groups) and is exact for uniform fabrics (every block full); when
the last unit is partial it takes the even-split figure. `maxflow_bisection_gbps`
computes the same quantity as max-flow/min-cut with networkx and is what the tests
hold the closed form to (exhaustively on tiny fabrics).
"""

from __future__ import annotations

import itertools
from collections import defaultdict

import networkx as nx

from generator.plan.model import (
    ROLE_SPINE,
    TIER_GLOBAL,
    TIER_HOST_LEAF,
    TIER_LEAF_SPINE,
    TIER_SPINE_SUPER,
    FabricPlan,
)


def _leaf_figures(plan: FabricPlan) -> tuple[dict[str, int], dict[str, int], dict[str, frozenset[str]]]:
    """Per leaf: host-facing Gb/s, uplink Gb/s, and the set of hosts it serves."""
    down: dict[str, int] = defaultdict(int)
    up: dict[str, int] = defaultdict(int)
    served: dict[str, set[str]] = defaultdict(set)
    for link in plan.links:
        if link.tier == TIER_HOST_LEAF:
            down[link.a_device] += link.speed_g
            served[link.a_device].add(link.b_device)
        elif link.tier == TIER_LEAF_SPINE:
            up[link.a_device] += link.speed_g
    return dict(down), dict(up), {k: frozenset(v) for k, v in served.items()}


def _blocks(plan: FabricPlan) -> list[tuple[frozenset[str], int]]:
    """Leaf blocks: leaves serving the same hosts (one per rail on rail-aligned fabrics).
    Each block's effective uplink capacity is what its hosts can push out of it."""
    down, up, served = _leaf_figures(plan)
    eff: dict[frozenset[str], int] = defaultdict(int)
    for leaf, hosts in served.items():
        eff[hosts] += min(down[leaf], up.get(leaf, 0))
    return sorted(eff.items(), key=lambda kv: sorted(kv[0]))


def _half_hosts(plan: FabricPlan) -> int:
    return len(plan.hosts) // 2


def _host_gbps(plan: FabricPlan) -> int:
    return plan.rails * plan.nic_speed_g


def closed_form_gbps(plan: FabricPlan) -> float:
    n_half = _half_hosts(plan)
    host_cut = n_half * _host_gbps(plan)
    if n_half == 0:
        return 0.0
    if plan.kind == "single-switch":
        return float(host_cut)
    if not is_connected(plan):
        # a tier wired so that some leaves share no spine: the halves cannot talk at all
        return 0.0
    blocks = _blocks(plan)
    if plan.kind in ("leaf-spine", "rail-optimized"):
        if len(blocks) == 1:
            # every pair of hosts shares a leaf per rail: spines carry nothing across the cut
            return float(host_cut)
        return float(min(host_cut, sum(e for _, e in blocks) / 2))
    if plan.kind == "three-tier":
        return float(min(host_cut, _three_tier_cut(plan, blocks)))
    if plan.kind == "dragonfly-plus":
        return float(min(host_cut, _dragonfly_cut(plan, blocks)))
    raise ValueError(f"no bisection model for topology kind {plan.kind!r}")


def _unit_of_host(plan: FabricPlan, attr: str) -> dict[str, int]:
    return {h.name: getattr(h, attr) for h in plan.hosts}


def _three_tier_cut(plan: FabricPlan, blocks: list[tuple[frozenset[str], int]]) -> float:
    pod_of = _unit_of_host(plan, "unit")
    pods = sorted(set(pod_of.values()))
    if len(pods) == 1:
        return sum(e for _, e in blocks) / 2 if len(blocks) > 1 else float("inf")
    leaf_eff: dict[int, int] = defaultdict(int)
    for hosts, e in blocks:
        leaf_eff[pod_of[next(iter(hosts))]] += e
    spine_pod = {s.name: s.unit for s in plan.switches if s.role == ROLE_SPINE}
    spine_up: dict[int, int] = defaultdict(int)
    for link in plan.links:
        if link.tier == TIER_SPINE_SUPER:
            spine_up[spine_pod[link.a_device]] += link.speed_g
    pod_eff = [min(leaf_eff[p], spine_up[p]) for p in pods]
    return sum(pod_eff) / 2


def _dragonfly_cut(plan: FabricPlan, blocks: list[tuple[frozenset[str], int]]) -> float:
    group_of = _unit_of_host(plan, "group")
    groups = sorted(set(group_of.values()))
    side_a = set(groups[:len(groups) // 2])
    leaf_eff_a = sum(e for hosts, e in blocks if group_of[next(iter(hosts))] in side_a)
    spine_group = {s.name: s.group for s in plan.switches if s.role == ROLE_SPINE}
    crossing = sum(link.speed_g for link in plan.links if link.tier == TIER_GLOBAL
                   and (spine_group[link.a_device] in side_a) != (spine_group[link.b_device] in side_a))
    return min(leaf_eff_a, crossing)


def is_connected(plan: FabricPlan) -> bool:
    return nx.is_weakly_connected(fabric_graph(plan)) if plan.links else True


def fabric_graph(plan: FabricPlan) -> nx.DiGraph:
    """Every device a vertex; each cable adds its speed in both directions."""
    g = nx.DiGraph()
    for link in plan.links:
        for u, v in ((link.a_device, link.b_device), (link.b_device, link.a_device)):
            if g.has_edge(u, v):
                g[u][v]["capacity"] += link.speed_g
            else:
                g.add_edge(u, v, capacity=link.speed_g)
    return g


def cut_gbps(graph: nx.DiGraph, side_a: list[str], side_b: list[str]) -> float:
    g = graph.copy()
    for h in side_a:
        g.add_edge("__source__", h)          # no capacity attribute = unbounded
    for h in side_b:
        g.add_edge(h, "__sink__")
    return float(nx.maximum_flow_value(g, "__source__", "__sink__"))


def maxflow_bisection_gbps(plan: FabricPlan, exhaustive_limit: int = 10) -> float:
    """Min over balanced host splits of the max-flow between the halves. Up to
    `exhaustive_limit` hosts every split is tried; above it the split by node number,
    which is where units, pods and groups end."""
    hosts = [h.name for h in sorted(plan.hosts, key=lambda h: h.index)]
    half = len(hosts) // 2
    if half == 0:
        return 0.0
    graph = fabric_graph(plan)
    if len(hosts) > exhaustive_limit:
        return cut_gbps(graph, hosts[:half], hosts[half:])
    best = float("inf")
    for side_a in itertools.combinations(hosts, half):
        chosen = set(side_a)
        best = min(best, cut_gbps(graph, list(side_a), [h for h in hosts if h not in chosen]))
    return best


def bisection_tbps(plan: FabricPlan) -> float:
    return closed_form_gbps(plan) / 1000.0
