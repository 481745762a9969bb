"""FG114-FG116: design warnings an architect would give (issue 38); `fabricgen advise` shows
the figures of the change each one asks for."""

from __future__ import annotations

from collections.abc import Iterator

from generator.checks.registry import WARNING, CheckContext, rule
from generator.plan.catalog import get_model
from generator.plan.compile import DAC_MAX_M
from generator.plan.model import ROLE_LEAF, TIER_HOST_LEAF
from generator.plan.topology import leaf_capacity

LEAF_FILL_MIN = 0.60
UNIT_KINDS = ("rail-optimized", "three-tier")


def _leaf_host_ports(intent) -> int:
    """Host ports one leaf takes at the NIC speed and the intent's ratio (0: unknown model)."""
    t = intent.topology
    model = get_model(t.switches.leaf.model)
    if model is None:
        return 0
    return leaf_capacity(len(model.logical_ports(t.nic_speed)), t.oversubscription)


def _build_out_plan(ctx: CheckContext):
    from generator.plan.compile import compile_plan
    from generator.plan.growth import build_out_intent
    from generator.plan.topology import CompileError

    t = ctx.intent.topology
    if t.build_out is None or t.build_out.nodes == t.nodes:
        return ctx.plan
    try:
        return compile_plan(build_out_intent(ctx.intent))
    except CompileError:
        return None                 # FG104/FG112 report why the build-out does not build


@rule("FG114", WARNING, "leaves under 60 % used at the build-out because of the unit size")
def leaves_underused(ctx: CheckContext) -> Iterator[tuple[str, str]]:
    """A rail-optimized unit (a three-tier pod) gives every rail its own leaf, whatever the
    unit's size: with topology.nodes_per_unit smaller than the servers one leaf takes per rail,
    every leaf of the build-out keeps host ports it will never use, and the fabric buys more
    leaves (and leaf-spine optics stay the same: they follow the host ports). 32-node units of
    SN5600 at 400G 1:1 use 32 of its 64 host ports: the 128-node build-out needs 32 leaves
    where 16 do.

    Set topology.nodes_per_unit to the servers one leaf takes (`fabricgen advise` names the
    size and shows the switch counts both ways), unless the unit is sized by something else
    (a power or cooling domain, a job scheduler's partition) on purpose."""
    t = ctx.intent.topology
    plan = _build_out_plan(ctx) if t.kind in UNIT_KINDS and ctx.plan is not None else None
    cap = _leaf_host_ports(ctx.intent)
    if plan is None or not cap or t.nodes_per_unit >= cap or t.build_out_nodes <= t.nodes_per_unit:
        return
    leaves = sum(sw.role == ROLE_LEAF for sw in plan.switches)
    used = sum(lk.tier == TIER_HOST_LEAF for lk in plan.links)
    fill = used / (leaves * cap) if leaves else 1.0
    if fill < LEAF_FILL_MIN:
        yield "topology.nodes_per_unit", (
            f"leaves use {fill:.0%} of their host ports at the build-out ({t.build_out_nodes} nodes): "
            f"nodes_per_unit: {min(cap, t.build_out_nodes)} fills one {t.switches.leaf.model} per rail "
            "(fabricgen advise shows the switch counts)")


@rule("FG115", WARNING, "the rack layout's runs are longer than the DAC reach")
def dac_beyond_layout_reach(ctx: CheckContext) -> Iterator[tuple[str, str]]:
    """With `layout:` in the intent, fabricgen measures each NIC-to-leaf and leaf-to-spine run
    (rows, rack widths, the rise into the tray: generator/plan/layout.py). A tier the plan
    builds of passive copper (DAC) whose longest run is beyond the DAC reach at 100G-PAM4
    (3 m, NVIDIA LinkX; IEEE 802.3ck specifies 2 m for 100GBASE-CR1/400GBASE-CR4) cannot be
    cabled as ordered: the BOM's DACs do not reach the far racks.

    Set topology.cables.<tier> to the longest run (`fabricgen advise` gives it and the BOM
    difference: transceivers and fibre instead of DACs), or move the leaves closer in
    `layout:` (more servers per rack, the leaf rack in the middle of the row). Without
    `layout:` this rule stays silent: it has no floor plan to measure."""
    intent, plan = ctx.intent, ctx.plan
    if intent.layout is None or plan is None:
        return
    from generator.plan.layout import runs

    measured = runs(intent, plan)
    for tier, longest in (("host_leaf", measured.host_leaf_max), ("leaf_spine", measured.leaf_spine_max)):
        copper = any(lk.cable == "DAC" for lk in plan.links if lk.tier == tier.replace("_", "-"))
        if copper and longest > DAC_MAX_M:
            yield f"topology.cables.{tier}", (
                f"the layout's longest {tier.replace('_', '-')} run is {longest:g} m, beyond the {DAC_MAX_M:g} m "
                f"DAC reach: set topology.cables.{tier}: {longest:g} (fabricgen advise shows the BOM difference)")


@rule("FG116", WARNING, "the unit size splits a rail over several leaves", stage="intent")
def unit_splits_rails(ctx: CheckContext) -> Iterator[tuple[str, str]]:
    """In a rail-optimized unit, NIC r of every server reaches the unit's rail-r leaf in one
    hop, which is what NCCL's rail-aligned rings and PXN rely on. A unit larger than the
    servers one leaf takes per rail gets two or more leaves per rail (`-r0-1`, `-r0-2`): the
    same rail's NICs then meet only through a spine, and the unit behaves as two smaller units
    under one name.

    Set topology.nodes_per_unit to at most the servers one leaf takes (`fabricgen advise`
    names it), or choose a leaf model with more ports."""
    t = ctx.intent.topology
    cap = _leaf_host_ports(ctx.intent)
    if t.kind in UNIT_KINDS and cap and t.nodes_per_unit > cap and t.build_out_nodes > cap:
        yield "topology.nodes_per_unit", (
            f"units of {t.nodes_per_unit} nodes need {-(-min(t.nodes_per_unit, t.build_out_nodes) // cap)} leaves per "
            f"rail ({t.switches.leaf.model} takes {cap} servers per rail): set nodes_per_unit: {cap}")
