"""Fabric figures read off the plan: switches, ports, injection, oversubscription, hops."""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass

import networkx as nx

from generator.intent.model import Intent
from generator.plan.catalog import get_model
from generator.plan.model import (
    ROLE_LEAF,
    ROLE_SPINE,
    ROLE_SUPER_SPINE,
    TIER_GLOBAL,
    TIER_HOST_LEAF,
    TIER_LEAF_SPINE,
    TIER_SPINE_SUPER,
    FabricPlan,
)

ROLE_ORDER = (ROLE_LEAF, ROLE_SPINE, ROLE_SUPER_SPINE)


@dataclass(frozen=True, slots=True)
class SwitchTier:
    role: str
    model: str
    count: int
    ports_total: int      # logical ports at the NIC speed (after breakout)
    ports_used: int

    @property
    def ports_free(self) -> int:
        return self.ports_total - self.ports_used

    def as_dict(self) -> dict:
        return {"role": self.role, "model": self.model, "count": self.count, "ports_total": self.ports_total,
                "ports_used": self.ports_used, "ports_free": self.ports_free}


@dataclass(frozen=True, slots=True)
class Figures:
    nodes: int
    gpus: int
    gpus_per_node: int
    rails: int
    nic_speed_g: int
    per_node_gbps: int
    per_gpu_gbps: float
    switches: tuple[SwitchTier, ...]
    oversubscription: dict[str, float]     # role -> worst downlink:uplink ratio (x in x:1)
    hops_min: int
    hops_max: int


def switch_tiers(plan: FabricPlan) -> tuple[SwitchTier, ...]:
    count: Counter[tuple[str, str]] = Counter()
    used: Counter[tuple[str, str]] = Counter()
    for sw in plan.switches:
        key = (sw.role, sw.model)
        count[key] += 1
        used[key] += len(plan.ports_of(sw.name))
    out = []
    for (role, model), n in sorted(count.items(), key=lambda kv: (ROLE_ORDER.index(kv[0][0]), kv[0][1])):
        spec = get_model(model)
        per_switch = len(spec.logical_ports(plan.nic_speed_g)) if spec else 0
        out.append(SwitchTier(role, model, n, per_switch * n, used[(role, model)]))
    return tuple(out)


def oversubscription(plan: FabricPlan) -> dict[str, float]:
    """Worst ratio of downward to upward capacity per role; the top tier has none."""
    down: dict[str, int] = defaultdict(int)
    up: dict[str, int] = defaultdict(int)
    for link in plan.links:
        if link.tier == TIER_HOST_LEAF:
            down[link.a_device] += link.speed_g
        elif link.tier in (TIER_LEAF_SPINE, TIER_SPINE_SUPER):
            up[link.a_device] += link.speed_g
            down[link.b_device] += link.speed_g
        elif link.tier == TIER_GLOBAL:
            up[link.a_device] += link.speed_g
            up[link.b_device] += link.speed_g
    worst: dict[str, float] = {}
    for sw in plan.switches:
        if up.get(sw.name, 0) == 0:
            continue
        ratio = down.get(sw.name, 0) / up[sw.name]
        worst[sw.role] = max(worst.get(sw.role, 0.0), ratio)
    return {role: worst[role] for role in ROLE_ORDER if role in worst}


def switch_hops(plan: FabricPlan) -> tuple[int, int]:
    """Fewest and most switches a same-rail packet crosses from the first host to any
    other (fabrics are symmetric, so one source is representative)."""
    hosts = sorted(plan.hosts, key=lambda h: h.index)
    if len(hosts) < 2:
        return 0, 0
    graph = nx.Graph()
    for link in plan.links:
        if link.tier != TIER_HOST_LEAF:
            graph.add_edge(link.a_device, link.b_device)
    first = hosts[0]
    dist_by_rail = {}
    for nic in first.nics:
        graph.add_node(nic.switch)
        dist_by_rail[nic.rail] = nx.single_source_shortest_path_length(graph, nic.switch)
    hops = []
    for other in hosts[1:]:
        best = min((dist_by_rail[nic.rail].get(nic.switch, 10**6) for nic in other.nics), default=10**6)
        hops.append(best + 1)
    return min(hops), max(hops)


def fabric_figures(intent: Intent, plan: FabricPlan) -> Figures:
    t = intent.topology
    per_node = t.rails * t.nic_speed
    lo, hi = switch_hops(plan)
    return Figures(nodes=t.nodes, gpus=t.nodes * t.gpus_per_node, gpus_per_node=t.gpus_per_node, rails=t.rails,
                   nic_speed_g=t.nic_speed, per_node_gbps=per_node, per_gpu_gbps=per_node / t.gpus_per_node,
                   switches=switch_tiers(plan), oversubscription=oversubscription(plan), hops_min=lo, hops_max=hi)
