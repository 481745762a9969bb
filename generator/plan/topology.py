"""Topology compiler: derive switches, port assignments and links from the intent.

Switch counts are never asked for; they follow from node count, rails, NIC speed,
the switch model's ports and the oversubscription ratio. All ordering is
deterministic so the same intent yields the same names and ports, and a node
added at the end only touches the leaves it lands on.

Sizing rules (documented in the README):
- every link runs at the NIC speed; ports faster than that are split (breakout);
- a leaf with n host ports gets ceil(n * up / down) uplinks, so the ratio is exact
  whenever n * up is a multiple of down;
- spines of a two-tier fabric use all ports downwards; spines of three-tier pods and
  dragonfly groups split their ports half down, half up (non-blocking above the leaf);
- at least two spines (and two super-spines) so no single box carries a tier, and
  every lower switch links to every switch of the tier above (Clos: any two leaves
  share all spines), even when its ratio alone would ask for fewer uplinks.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import NamedTuple

from generator.common.errors import FabricgenError
from generator.intent.model import Intent
from generator.plan.catalog import LogicalPort, SwitchModel, get_model
from generator.plan.growth import installed_switches
from generator.plan.model import (
    ROLE_LEAF,
    ROLE_SPINE,
    ROLE_SUPER_SPINE,
    TIER_GLOBAL,
    TIER_LEAF_SPINE,
    TIER_SPINE_SUPER,
)


class CompileError(FabricgenError):
    """The intent is well-formed but cannot be built; `path` names the key to change."""

    def __init__(self, path: str, message: str, code: str = "FG100"):
        super().__init__(message)
        self.path = path
        self.message = message
        self.code = code


@dataclass(slots=True)
class SwitchNode:
    name: str
    role: str
    model: SwitchModel
    rail: int | None = None
    unit: int | None = None
    group: int | None = None
    down: list[LogicalPort] = field(default_factory=list)   # ports reserved for the tier below
    up: list[LogicalPort] = field(default_factory=list)     # ports reserved for the tier above
    down_used: int = 0
    up_used: int = 0
    unit_index: int = 0     # position among the spines of its pod (spine planes)

    # WHAT (for the error) is a format string with {0} and {1} filled from ARGS only when the
    # port is missing: ~500k calls at 98k GPUs would otherwise each format a message (issue 14)
    def take_down(self, what: str, *args: object) -> LogicalPort:
        if self.down_used >= len(self.down):
            raise CompileError("topology", f"{self.name} ({self.model.name}) has no free port left for "
                               f"{what.format(*args)}: {len(self.down)} ports of this tier are used; choose a "
                               "larger switch model or a higher oversubscription", "FG104")
        port = self.down[self.down_used]
        self.down_used += 1
        return port

    def take_up(self, what: str, *args: object) -> LogicalPort:
        if self.up_used >= len(self.up):
            raise CompileError("topology", f"{self.name} ({self.model.name}) has no free uplink port for "
                               f"{what.format(*args)}: all {len(self.up)} are used; choose a larger switch model",
                               "FG104")
        port = self.up[self.up_used]
        self.up_used += 1
        return port


@dataclass(frozen=True, slots=True)
class HostSlot:
    index: int            # 1-based node number
    unit: int | None
    group: int | None


class RawLink(NamedTuple):
    """A switch-to-switch link before addressing: a tuple row (~200k at 98k GPUs, issue 14)."""

    a: str
    a_port: LogicalPort
    b: str
    b_port: LogicalPort
    tier: str


@dataclass(slots=True)
class Topology:
    """The build-out fabric (generator/plan/growth.py): switches and links in full, so their
    positions (addresses, ASNs) never depend on how much is installed; hosts and attachments
    of the installed nodes only; `installed` names the switches on the floor (None: all)."""

    switches: list[SwitchNode]
    hosts: list[HostSlot]
    attachments: dict[tuple[int, int], tuple[str, LogicalPort]]   # (node, rail) -> (leaf, port)
    links: list[RawLink]                                          # switch-switch links
    build_out_nodes: int = 0
    installed: frozenset[str] | None = None


def _model(intent: Intent, tier: str) -> SwitchModel:
    name = getattr(intent.topology.switches, tier).model
    model = get_model(name)
    if model is None:
        from generator.plan.catalog import unknown_model

        raise CompileError(f"topology.switches.{tier}.model", unknown_model(name), "FG102")
    return model


def _ports(model: SwitchModel, speed_g: int, tier: str) -> tuple[LogicalPort, ...]:
    ports = model.logical_ports(speed_g)
    if not ports:
        raise CompileError(
            f"topology.switches.{tier}.model",
            f"{model.name} has no port that runs at {speed_g}G (its ports: "
            f"{', '.join(f'{s}G' for s in model.speeds())}): pick a model with {speed_g}G ports or change "
            "topology.nic_speed", "FG102")
    return ports


def leaf_capacity(n_ports: int, ratio: tuple[int, int]) -> int:
    """Most host ports a leaf can take while keeping ceil(n*up/down) uplinks."""
    down, up = ratio
    n = n_ports * down // (down + up)
    while n > 0 and n + math.ceil(n * up / down) > n_ports:
        n -= 1
    return n


def uplinks_for(n_host_ports: int, ratio: tuple[int, int]) -> int:
    down, up = ratio
    return math.ceil(n_host_ports * up / down)


class _Builder:
    def __init__(self, intent: Intent, keep_attachments: bool = True):
        self.keep_attachments = keep_attachments
        self.intent = intent
        self.fabric = intent.fabric.name
        self.speed = intent.topology.nic_speed
        self.ratio = intent.topology.oversubscription
        self.rails = intent.topology.rails
        self.switches: list[SwitchNode] = []
        self.attachments: dict[tuple[int, int], tuple[str, LogicalPort]] = {}
        self.links: list[RawLink] = []
        self.hosts: list[HostSlot] = []

    # -- switch construction -------------------------------------------------
    def leaf(self, name: str, rail: int | None, unit: int | None, group: int | None, n_hosts: int) -> SwitchNode:
        model = _model(self.intent, "leaf")
        ports = _ports(model, self.speed, "leaf")
        cap = leaf_capacity(len(ports), self.ratio)
        up = uplinks_for(cap, self.ratio)
        node = SwitchNode(name, ROLE_LEAF, model, rail, unit, group,
                          down=list(ports[:cap]), up=list(ports[cap:cap + up]))
        self.switches.append(node)
        return node

    def spine(self, name: str, role: str, unit: int | None, group: int | None, split: bool, tier: str) -> SwitchNode:
        model = _model(self.intent, tier)
        ports = _ports(model, self.speed, tier)
        half = len(ports) // 2 if split else len(ports)
        node = SwitchNode(name, role, model, None, unit, group, down=list(ports[:half]), up=list(ports[half:]))
        self.switches.append(node)
        return node

    def leaf_down_capacity(self) -> int:
        model = _model(self.intent, "leaf")
        cap = leaf_capacity(len(_ports(model, self.speed, "leaf")), self.ratio)
        if cap < 1:
            raise CompileError("topology.oversubscription",
                               f"{model.name} cannot keep a {self.ratio[0]}:{self.ratio[1]} ratio with any host port",
                               "FG104")
        return cap

    def spine_half(self, tier: str) -> int:
        return len(_ports(_model(self.intent, tier), self.speed, tier)) // 2

    def spine_all(self, tier: str) -> int:
        return len(_ports(_model(self.intent, tier), self.speed, tier))

    # -- wiring ---------------------------------------------------------------
    def attach(self, node: int, rail: int, leaf: SwitchNode) -> None:
        port = leaf.take_down("node {0} rail {1}", node, rail)
        if self.keep_attachments:
            self.attachments[(node, rail)] = (leaf.name, port)

    def natural_uplinks(self, low: SwitchNode) -> int:
        """Uplinks the ratio asks for: leaves by the oversubscription, spines 1:1."""
        return uplinks_for(low.down_used, self.ratio) if low.role == ROLE_LEAF else low.down_used

    def connect_up(self, lower: list[SwitchNode], upper: list[SwitchNode], tier: str) -> None:
        """Spread every uplink of `lower` round-robin over `upper`. Each lower switch gets
        at least one link to every upper switch (a lightly loaded leaf gets more uplinks
        than its ratio asks for, never fewer), so any two leaves share every spine and
        ECMP sees all paths; the uppers end up with the same link count within one."""
        k = 0
        for low in lower:
            for _ in range(max(self.natural_uplinks(low), len(upper))):
                high = upper[k % len(upper)]
                k += 1
                a_port = low.take_up("a link to {0}", high.name)
                b_port = high.take_down("a link from {0}", low.name)
                self.links.append(RawLink(low.name, a_port, high.name, b_port, tier))

    def rail_leaves(self, nodes: list[int], label: str, unit: int | None, group: int | None) -> list[SwitchNode]:
        """Rail-aligned leaves for a block of nodes: NIC r of every node goes to a rail-r
        leaf; a block larger than one leaf's host ports gets several leaves per rail."""
        cap = self.leaf_down_capacity()
        chunks = [nodes[i:i + cap] for i in range(0, len(nodes), cap)]
        leaves = []
        for rail in range(self.rails):
            for c, chunk in enumerate(chunks):
                suffix = f"-{c + 1}" if len(chunks) > 1 else ""
                leaf = self.leaf(f"{self.fabric}-leaf-{label}-r{rail}{suffix}", rail, unit, group, len(chunk))
                for node in chunk:
                    self.attach(node, rail, leaf)
                leaves.append(leaf)
        return leaves

    def n_uppers(self, lower: list[SwitchNode], ports_per_upper: int, minimum: int = 2) -> int:
        """Fewest upper switches (at least `minimum`) whose ports take every uplink, counting
        the extra uplinks that connect_up adds so each lower switch reaches all of them."""
        if len(lower) > ports_per_upper:
            raise CompileError("topology.kind",
                               f"{len(lower)} {lower[0].role} switches must each reach every switch above them, "
                               f"but those have only {ports_per_upper} ports for them: use three-tier, or fewer and fuller "
                               "leaves (a larger nodes_per_unit), so each tier stays within one switch's radix", "FG104")
        naturals = [self.natural_uplinks(low) for low in lower]
        # a leaf with a single uplink port can reach only one switch: then one it is
        n = max(1, min(minimum, min(len(low.up) for low in lower)))
        for _ in range(10000):
            needed = math.ceil(sum(max(u, n) for u in naturals) / ports_per_upper)
            if needed <= n:
                break
            n = needed
        short = [low for low in lower if len(low.up) < n]
        if short:
            low = short[0]
            raise CompileError("topology.oversubscription",
                               f"{low.name} has {len(low.up)} uplink port(s) but the tier above needs {n} switches "
                               "to take every uplink and each lower switch must reach all of them: lower the "
                               "oversubscription or choose a larger switch model", "FG104")
        return n


def _blocks(nodes: int, size: int) -> list[list[int]]:
    """Nodes 1..nodes in consecutive blocks of `size` (the last may be short)."""
    return [list(range(s, min(s + size, nodes + 1))) for s in range(1, nodes + 1, size)]


def _split_even(nodes: int, parts: int) -> list[list[int]]:
    base, extra = divmod(nodes, parts)
    out, start = [], 1
    for p in range(parts):
        n = base + (1 if p < extra else 0)
        out.append(list(range(start, start + n)))
        start += n
    return out


def build_topology(intent: Intent) -> Topology:
    """The build-out fabric of INTENT with the installed part marked (generator/plan/growth.py)."""
    t = intent.topology
    total = t.build_out_nodes
    if t.nodes > total:
        raise CompileError("topology.build_out.nodes",
                           f"{t.nodes} nodes are more than the build-out of {total}: raise "
                           "topology.build_out.nodes to the size the spine tier is planned for (growing past it "
                           "re-cables the fabric), or lower topology.nodes", "FG112")
    topo = _build(intent, total)
    if total == t.nodes:
        return topo
    topo.installed = installed_switches(topo.switches, topo.attachments, t.nodes)
    topo.hosts = [h for h in topo.hosts if h.index <= t.nodes]
    topo.attachments = {k: v for k, v in topo.attachments.items() if k[0] <= t.nodes}
    return topo


def _build(intent: Intent, nodes: int, keep_attachments: bool = True) -> Topology:
    """The fabric of INTENT at NODES nodes (without the host attachments when not KEEP_ATTACHMENTS:
    a growth check needs only the switches and their links, ~45 MB less at 98k GPUs)."""
    b = _Builder(intent, keep_attachments)
    t = intent.topology
    kind = t.kind
    fabric = intent.fabric.name

    if kind == "single-switch":
        model = _model(intent, "leaf")
        ports = _ports(model, t.nic_speed, "leaf")
        need = nodes * t.rails
        if need > len(ports):
            raise CompileError("topology.nodes" if nodes == t.nodes else "topology.build_out.nodes",
                               f"{need} NIC ports ({nodes} nodes x {t.rails} rails) do not fit one {model.name} "
                               f"({len(ports)} ports at {t.nic_speed}G): use leaf-spine or rail-optimized", "FG104")
        leaf = SwitchNode(f"{fabric}-leaf-1", ROLE_LEAF, model, None, None, None, down=list(ports))
        b.switches.append(leaf)
        for n in range(1, nodes + 1):
            b.hosts.append(HostSlot(n, None, None))
            for r in range(t.rails):
                b.attach(n, r, leaf)

    elif kind == "leaf-spine":
        cap = b.leaf_down_capacity()
        per_leaf = cap // t.rails
        if per_leaf < 1:
            raise CompileError("topology.rails",
                               f"a node's {t.rails} NICs do not fit one leaf ({cap} host ports at "
                               f"{t.oversubscription[0]}:{t.oversubscription[1]}): use rail-optimized", "FG104")
        leaves = []
        for i, chunk in enumerate(_blocks(nodes, per_leaf)):
            leaf = b.leaf(f"{fabric}-leaf-{i + 1}", None, None, None, len(chunk) * t.rails)
            for n in chunk:
                b.hosts.append(HostSlot(n, None, None))
                for r in range(t.rails):
                    b.attach(n, r, leaf)
            leaves.append(leaf)
        n_sp = b.n_uppers(leaves, b.spine_all("spine"))
        spines = [b.spine(f"{fabric}-spine-{k + 1}", ROLE_SPINE, None, None, False, "spine") for k in range(n_sp)]
        b.connect_up(leaves, spines, TIER_LEAF_SPINE)

    elif kind == "rail-optimized":
        leaves = []
        for u, unit_nodes in enumerate(_blocks(nodes, t.nodes_per_unit), start=1):
            b.hosts.extend(HostSlot(n, u, None) for n in unit_nodes)
            leaves += b.rail_leaves(unit_nodes, f"su{u}", u, None)
        n_sp = b.n_uppers(leaves, b.spine_all("spine"))
        spines = [b.spine(f"{fabric}-spine-{k + 1}", ROLE_SPINE, None, None, False, "spine") for k in range(n_sp)]
        b.connect_up(leaves, spines, TIER_LEAF_SPINE)

    elif kind == "three-tier":
        all_spines = []
        for p, pod_nodes in enumerate(_blocks(nodes, t.nodes_per_unit), start=1):
            b.hosts.extend(HostSlot(n, p, None) for n in pod_nodes)
            leaves = b.rail_leaves(pod_nodes, f"pod{p}", p, None)
            n_sp = b.n_uppers(leaves, b.spine_half("spine"))
            spines = [b.spine(f"{fabric}-spine-pod{p}-{k + 1}", ROLE_SPINE, p, None, True, "spine")
                      for k in range(n_sp)]
            for k, sp in enumerate(spines, start=1):
                sp.unit_index = k
            b.connect_up(leaves, spines, TIER_LEAF_SPINE)
            all_spines += spines
        # spine planes (DGX SuperPOD style): spine k of every pod connects to the
        # super-spines of plane k only, so a super-spine needs one port group per pod,
        # not per spine, and the core scales with the pod count
        planes = max(s.unit_index for s in all_spines)
        per_plane_min = 1 if planes > 1 else 2
        numbered = 0
        for k in range(1, planes + 1):
            members = [s for s in all_spines if s.unit_index == k]
            n_ss = b.n_uppers(members, b.spine_all("super_spine"), per_plane_min)
            supers = [b.spine(f"{fabric}-super-spine-{numbered + j + 1}", ROLE_SUPER_SPINE, None, None, False,
                              "super_spine") for j in range(n_ss)]
            numbered += n_ss
            b.connect_up(members, supers, TIER_SPINE_SUPER)

    elif kind == "dragonfly-plus":
        if t.groups > nodes:
            raise CompileError("topology.groups", f"{t.groups} groups for {nodes} nodes leaves groups empty: "
                               "use at most one group per node", "FG104")
        groups = []
        for g, group_nodes in enumerate(_split_even(nodes, t.groups), start=1):
            b.hosts.extend(HostSlot(n, None, g) for n in group_nodes)
            leaves = b.rail_leaves(group_nodes, f"g{g}", None, g)
            groups.append(leaves)
        # every group gets the same spine count so spine i of each group pairs with spine i elsewhere
        n_sp = max(b.n_uppers(lv, b.spine_half("spine")) for lv in groups)
        group_spines = []
        for g, leaves in enumerate(groups, start=1):
            # leaf-facing half down, global half up
            spines = [b.spine(f"{fabric}-spine-g{g}-{k + 1}", ROLE_SPINE, None, g, True, "spine")
                      for k in range(n_sp)]
            b.connect_up(leaves, spines, TIER_LEAF_SPINE)
            group_spines.append(spines)
        least_down = min(sp.down_used for spines in group_spines for sp in spines)
        per_pair = max(1, least_down // (t.groups - 1))
        for g in range(len(group_spines)):
            for h in range(g + 1, len(group_spines)):
                for i in range(n_sp):
                    a, z = group_spines[g][i], group_spines[h][i]
                    for _ in range(per_pair):
                        b.links.append(RawLink(a.name, a.take_up("a global link to {0}", z.name),
                                               z.name, z.take_up("a global link to {0}", a.name), TIER_GLOBAL))
    else:  # pragma: no cover - the intent model rejects other kinds
        raise CompileError("topology.kind", f"unsupported kind {kind!r}")

    b.hosts.sort(key=lambda h: h.index)
    return Topology(b.switches, b.hosts, b.attachments, b.links, nodes)
