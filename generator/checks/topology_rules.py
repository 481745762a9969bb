"""FG1xx: topology rules (shape, switch models, ports, cables, oversubscription).

Each rule is one function; its docstring is what `fabricgen validate --explain CODE`
prints. Rules with stage="compile" only document a code the topology compiler raises
(generator/plan/topology.py): they yield nothing, the runner reports the CompileError.
"""

from __future__ import annotations

from collections.abc import Iterator

from generator.checks.registry import ERROR, WARNING, CheckContext, rule
from generator.plan.catalog import get_model, unknown_model
from generator.plan.compile import DAC_MAX_M

# switch tiers (topology.switches.<tier>) and cable tiers (topology.cables.<tier>) each kind builds
SWITCH_TIERS = {
    "single-switch": ("leaf",),
    "leaf-spine": ("leaf", "spine"),
    "rail-optimized": ("leaf", "spine"),
    "three-tier": ("leaf", "spine", "super_spine"),
    "dragonfly-plus": ("leaf", "spine"),
}
CABLE_TIERS = {
    "single-switch": ("host_leaf",),
    "leaf-spine": ("host_leaf", "leaf_spine"),
    "rail-optimized": ("host_leaf", "leaf_spine"),
    "three-tier": ("host_leaf", "leaf_spine", "spine_super_spine"),
    "dragonfly-plus": ("host_leaf", "leaf_spine", "global_"),
}
# topology keys that only some kinds read
KIND_ONLY_KEYS = {
    "nodes_per_unit": ("rail-optimized", "three-tier"),
    "groups": ("dragonfly-plus",),
}


def _key(field: str) -> str:
    """Intent spelling of a pydantic field name (global_ is `global` in YAML)."""
    return field.rstrip("_")


def _speeds(speeds: list[int]) -> str:
    return ", ".join(f"{s}G" for s in speeds)


@rule("FG100", ERROR, "the intent cannot be built as written", stage="compile")
def fabric_cannot_be_built(ctx: CheckContext) -> Iterator[tuple[str, str]]:
    """The topology compiler found a combination of otherwise valid keys that it cannot
    turn into a fabric. The message names the key to change and what to change it to.

    This is the generic code of generator/plan/topology.py; specific failures have their
    own codes (FG102 switch model, FG104 ports, FG401 address pools, FG402 names)."""
    return iter(())


@rule("FG101", ERROR, "unsupported topology kind", stage="compile")
def unsupported_kind(ctx: CheckContext) -> Iterator[tuple[str, str]]:
    """topology.kind must be one of single-switch, leaf-spine, rail-optimized, three-tier,
    dragonfly-plus. The intent loader refuses anything else (torus, mesh, ring, ...) before
    any rule runs, with this reason:

    Lossless RoCE over Ethernet relies on a loop-free, up/down routed Clos: every flow
    climbs to a common ancestor and comes back down, so PFC pause frames can never form a
    cyclic buffer dependency. Torus, mesh and ring fabrics route around a cycle; without
    per-hop virtual channels (which Ethernet PFC priorities cannot provide for every hop)
    a congested cycle pauses itself forever - a PFC deadlock. A BGP/ECMP underlay also has
    no notion of dimension-ordered routing. Pick the Clos-family kind closest to the
    intended shape: dragonfly-plus for groups joined by global links, three-tier for very
    large fabrics."""
    return iter(())


@rule("FG102", ERROR, "switch model unknown or without ports of the NIC speed", stage="intent")
def model_lacks_speed(ctx: CheckContext) -> Iterator[tuple[str, str]]:
    """Every link of a fabricgen fabric runs at topology.nic_speed (faster ports are split
    with breakout cables), so each switch tier the topology uses needs ports that run at
    exactly that speed, natively or as a breakout. An SN2201, for example, has 48 x 1G
    and 4 x 100G ports: it cannot carry a single 400G NIC.

    The fix is a model with such ports (`switches` in generator/data/switch_models.yaml
    lists each model's native speeds and breakout modes) or a different NIC speed.
    The topology compiler raises the same code if it meets such a model."""
    t = ctx.intent.topology
    for tier in SWITCH_TIERS.get(t.kind, ("leaf",)):
        name = getattr(t.switches, tier).model
        path = f"topology.switches.{tier}.model"
        model = get_model(name)
        if model is None:
            yield path, unknown_model(name)
            continue
        if not model.logical_ports(t.nic_speed):
            yield path, (f"{name} has no port that runs at {t.nic_speed}G (its ports: {_speeds(model.speeds())}): "
                         f"pick a {tier.replace('_', '-')} model with {t.nic_speed}G ports or change topology.nic_speed")


@rule("FG103", ERROR, "NIC speed above the leaf's fastest port", stage="intent")
def nic_faster_than_leaf(ctx: CheckContext) -> Iterator[tuple[str, str]]:
    """A NIC links at the speed of the switch port it is cabled to. When
    topology.nic_speed is above the fastest port of the leaf model, no breakout can help
    (breakout only divides a port): at best the link trains down to the port's speed, and
    every bandwidth figure in the plan (oversubscription, capacity, NCCL) would be wrong.

    Lower topology.nic_speed to what the leaf offers, or choose a leaf model whose ports
    are at least as fast as the NICs. FG102 usually fires with it, naming the model."""
    t = ctx.intent.topology
    model = get_model(t.switches.leaf.model)
    if model is not None and t.nic_speed > model.max_speed_g:
        yield "topology.nic_speed", (f"{t.nic_speed}G NICs are faster than the fastest port of leaf model "
                                     f"{model.name} ({model.max_speed_g}G): lower topology.nic_speed or pick a "
                                     "faster leaf model")


@rule("FG104", ERROR, "a tier needs more links than its switches have ports", stage="compile")
def tier_out_of_ports(ctx: CheckContext) -> Iterator[tuple[str, str]]:
    """The topology compiler ran out of ports: a single switch with more NICs than ports,
    a leaf that cannot hold even one node's NICs (leaf-spine) or any host port at the
    requested oversubscription, a spine whose downlinks or uplinks are all used, or more
    dragonfly groups than nodes.

    Switch counts are derived, never asked for, so this means the chosen model is too
    small for the shape: choose a model with more ports at the NIC speed, a topology
    kind that adds a tier (rail-optimized, three-tier), or a higher oversubscription.
    The message names the switch, its model and the key to change."""
    return iter(())


@rule("FG105", ERROR, "oversubscription above 2:1 on a training fabric", stage="intent")
def oversubscription_error(ctx: CheckContext) -> Iterator[tuple[str, str]]:
    """topology.oversubscription is leaf downlink:uplink bandwidth. Collective
    operations of distributed training (all-reduce, all-gather, reduce-scatter) drive
    every NIC at line rate at the same time, so the leaf uplinks are the bottleneck of
    every step: at 3:1 each cross-leaf flow gets a third of its NIC speed. On a lossless
    fabric that congestion is not just slower, it turns into PFC pause that spreads
    upstream and slows unrelated jobs (congestion spreading, head-of-line blocking).

    Every fabric fabricgen builds is a GPU training fabric, so above 2:1 is an error.
    Use 1:1 (non-blocking, the DGX SuperPOD design) or at most 2:1. A single-switch
    fabric has no uplinks and ignores the ratio."""
    t = ctx.intent.topology
    down, up = t.oversubscription
    if t.kind != "single-switch" and down > 2 * up:
        yield "topology.oversubscription", (f"{down}:{up} is above 2:1: training collectives run every NIC at line "
                                            "rate, so leaf uplinks would congest on every step; use \"1:1\" or at "
                                            "most \"2:1\"")


@rule("FG106", WARNING, "oversubscription above 1:1", stage="intent")
def oversubscription_warning(ctx: CheckContext) -> Iterator[tuple[str, str]]:
    """A leaf with more downlink than uplink bandwidth cannot carry all its NICs across
    the fabric at once. Training collectives do exactly that, so anything above 1:1
    lengthens every step and shifts congestion into PFC pause. Up to 2:1 can be a
    deliberate cost trade-off (rail-optimized fabrics keep most traffic inside a rail
    leaf); above 2:1 is an error (FG105)."""
    t = ctx.intent.topology
    down, up = t.oversubscription
    if t.kind != "single-switch" and up < down <= 2 * up:
        yield "topology.oversubscription", (f"{down}:{up} is above 1:1: cross-leaf collectives get "
                                            f"{100 * up // down}% of NIC bandwidth; use \"1:1\" unless the "
                                            "cost trade-off is deliberate")


@rule("FG107", ERROR, "passive copper (DAC) forced on a cable longer than 3 m", stage="intent")
def dac_too_long(ctx: CheckContext) -> Iterator[tuple[str, str]]:
    """Passive copper (DAC) at 100G-per-lane PAM4 signalling reaches about 3 m. fabricgen picks DAC up to 3 m and AOC above, and never produces a
    longer DAC by itself; topology.cable_types.<tier> overrides that choice. A longer DAC
    either does not link or links with a bit error rate that FEC cannot hide: the
    resulting corrupted frames are dropped, and RoCE recovers a single lost packet with
    go-back-N retransmission of the whole window, which looks like a slow, flapping
    fabric.

    Remove the override, or set it to AOC, or shorten topology.cables.<tier> to 3 m."""
    t = ctx.intent.topology
    for tier in CABLE_TIERS.get(t.kind, ()):
        if getattr(t.cable_types, tier) == "DAC":
            length = getattr(t.cables, tier)
            if length > DAC_MAX_M:
                yield f"topology.cable_types.{_key(tier)}", (
                    f"DAC forced on {length:g} m cables (topology.cables.{_key(tier)}): passive copper reaches "
                    f"{DAC_MAX_M:g} m; use AOC or remove the override")


@rule("FG110", WARNING, "a key the topology kind does not use", stage="intent")
def unused_keys(ctx: CheckContext) -> Iterator[tuple[str, str]]:
    """Some topology keys only apply to some kinds: nodes_per_unit to rail-optimized and
    three-tier, groups to dragonfly-plus, switches.spine to every kind but single-switch,
    switches.super_spine and cables.spine_super_spine to three-tier, cables.global to
    dragonfly-plus. A key set for a kind that ignores it is usually a sign that the kind
    is not the one intended (or a leftover from an earlier design): remove it, or change
    topology.kind. Defaults never trigger this; only keys written in the file do."""
    t = ctx.intent.topology
    kind = t.kind
    for key, kinds in KIND_ONLY_KEYS.items():
        if key in t.model_fields_set and kind not in kinds:
            yield f"topology.{key}", f"{kind} fabrics ignore {key} (used by {', '.join(kinds)}): remove it"
    for tier in t.switches.model_fields_set:
        if tier not in SWITCH_TIERS.get(kind, ()):
            yield f"topology.switches.{tier}", f"{kind} fabrics have no {tier.replace('_', '-')} tier: remove it"
    for group in ("cables", "cable_types"):
        section = getattr(t, group)
        for tier in section.model_fields_set:
            if tier not in CABLE_TIERS.get(kind, ()) and getattr(section, tier) is not None:
                yield f"topology.{group}.{_key(tier)}", f"{kind} fabrics have no {_key(tier)} links: remove it"


@rule("FG111", WARNING, "more than two GPUs per rail NIC", stage="intent")
def gpus_per_nic(ctx: CheckContext) -> Iterator[tuple[str, str]]:
    """GPU servers built for training pair every GPU with its own NIC under the same PCIe
    switch (DGX H100: 8 GPUs, 8 x 400G compute NICs), so GPUDirect RDMA moves data
    GPU -> NIC without crossing the CPU. With more than two GPUs per NIC, some GPUs reach
    their NIC through the CPU root complex or share it, which halves or quarters each
    GPU's network bandwidth and makes inter-node collectives the bottleneck.

    Check topology.rails (compute NIC ports per node) against topology.gpus_per_node; if
    the servers really have fewer NICs, expect inter-node bandwidth per GPU to be
    nic_speed x rails / gpus_per_node."""
    t = ctx.intent.topology
    if t.gpus_per_node > 2 * t.rails:
        share = t.nic_speed * t.rails / t.gpus_per_node
        yield "topology.rails", (f"{t.gpus_per_node} GPUs share {t.rails} NIC(s) ({share:g}G per GPU): GPUDirect "
                                 "RDMA crosses the CPU for some GPUs; one NIC per GPU (or per two) is the norm")


@rule("FG112", ERROR, "more nodes than the build-out", stage="compile")
def beyond_build_out(ctx: CheckContext) -> Iterator[tuple[str, str]]:
    """topology.build_out.nodes is the size the fabric is built toward: the spine tier (and a
    three-tier fabric's super-spines) is racked for it from the first phase, and every name,
    port, cable and address of the installed nodes is the one the build-out fabric gives them.
    topology.nodes above it would need a larger top tier, which re-deals every uplink over more
    spines: hundreds of cables move and every switch is renumbered.

    Lower topology.nodes, or raise topology.build_out.nodes when the floor plan really grows
    (that is a re-cabling project: `fabricgen plan --against` counts the moved cables)."""
    return iter(())


@rule("FG113", WARNING, "the next node re-cables the fabric (no topology.build_out)")
def growth_recables(ctx: CheckContext) -> Iterator[tuple[str, str]]:
    """Without topology.build_out every switch count follows from topology.nodes alone, so the
    fabric is sized for exactly today's nodes. When adding one more node changes the spine
    (or super-spine) count, re-deals a leaf's uplinks, moves nodes between dragonfly groups or
    shifts the switch and management address blocks, growing the fabric means re-plugging
    cables that carry traffic today and renumbering switches (DHCP reservations, monitoring):
    an outage, and often a week of floor work. A top tier with no free port always does this.

    Set `topology.build_out: {nodes: N}` to the size the fabric will grow to (the spine tier
    is then racked for N nodes in the first phase and later units plug into reserved ports:
    `fabricgen plan` shows 0 moved cables when nodes grow up to N). If the fabric will never
    grow, say so with build_out equal to nodes: the output does not change."""
    t = ctx.intent.topology
    plan = ctx.plan
    if t.build_out is not None or t.kind == "single-switch" or plan is None:
        return
    from generator.plan.growth import next_node_cost
    from generator.plan.topology import CompileError

    try:
        cost = next_node_cost(ctx.intent, plan)
    except CompileError:
        return                          # one more node does not fit at all: FG104 says why when it happens
    if not cost.forces_recabling:
        return
    parts = []
    if cost.moved_links:
        parts.append(f"moves {cost.moved_links} of {cost.links} switch-to-switch cables")
    if cost.hosts_regrouped:
        parts.append(f"moves {cost.hosts_regrouped} node(s) to another group's leaves")
    if cost.renumbered:
        parts.append(f"renumbers {cost.renumbered} switch(es) (loopback, management IP, ASN)")
    if cost.host_mgmt_moved:
        parts.append("shifts every host's management IP")
    yield "topology.nodes", (f"adding node {t.nodes + 1} {', '.join(parts)}: set topology.build_out: "
                             "{nodes: N} to the size this fabric grows to (see --explain FG113)")
