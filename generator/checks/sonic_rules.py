"""FG25x: what the SONiC target (switch_os.name: sonic) needs from the intent.

FG250 is reserved for findings of SONiC's own YANG models (`--sonic-yang DIR`).
"""

from __future__ import annotations

from collections.abc import Iterator

from generator.checks.registry import ERROR, CheckContext, rule
from generator.plan.model import (
    ROLE_LEAF,
    ROLE_SPINE,
    ROLE_SUPER_SPINE,
    TIER_GLOBAL,
    TIER_HOST_LEAF,
    TIER_LEAF_SPINE,
    TIER_SPINE_SUPER,
)
from generator.plan.sonic_catalog import (
    SonicDataError,
    sku_buffers,
    sonic_models,
    sonic_platform,
    switch_hwsku,
)

_TIER_KEY = {ROLE_LEAF: "leaf", ROLE_SPINE: "spine", ROLE_SUPER_SPINE: "super_spine"}
_CABLE_KEY = {TIER_HOST_LEAF: "host_leaf", TIER_LEAF_SPINE: "leaf_spine", TIER_SPINE_SUPER: "spine_super_spine",
              TIER_GLOBAL: "global"}


def _sonic(ctx: CheckContext) -> bool:
    return ctx.intent.switch_os.name == "sonic"


@rule("FG251", ERROR, "SONiC needs numbered fabric links", stage="intent")
def sonic_unnumbered(ctx: CheckContext) -> Iterator[tuple[str, str]]:
    """fabricgen's SONiC render has no BGP unnumbered: switch-to-switch links need a /31 pool.

    With `switch_os.name: sonic`, BGP runs in SONiC's unified FRR mode (frrcfgd): sessions
    are BGP_NEIGHBOR entries keyed by VRF and the peer's address, and every routed port needs
    an INTERFACE address. Cumulus peers over IPv6 link-local addresses ("unnumbered"). The
    SONiC YANG models accept an interface name as a BGP_NEIGHBOR key, but have no `v6only`
    field, and an interface peer also needs IPv6 link-local on the port and IPv4 routes over
    IPv6 next hops (RFC 5549) in SONiC's route path, which fabricgen does not render or test.
    Give `addressing.fabric_links` an IPv4 pool, e.g. 10.254.0.0/16: fabricgen carves one
    /31 per switch-to-switch link from it. A single-switch fabric has no such links.
    """
    if not _sonic(ctx) or ctx.intent.topology.kind == "single-switch":
        return
    if ctx.intent.addressing.fabric_links == "unnumbered":
        yield ("addressing.fabric_links",
               "switch_os sonic has no BGP unnumbered in config_db: set a /31 pool, e.g. fabric_links: 10.254.0.0/16")


@rule("FG252", ERROR, "switch model has no SONiC platform data", stage="plan")
def sonic_model_known(ctx: CheckContext) -> Iterator[tuple[str, str]]:
    """The SONiC target needs the model's platform, HwSKU and port lanes.

    config_db.json names the ONIE platform and the HwSKU, and every PORT entry carries the
    SerDes lanes of that platform (generator/data/sonic_platforms.yaml, taken from
    sonic-buildimage device/mellanox/<platform>/platform.json). A catalog model without that
    data cannot be rendered for SONiC: choose a model that has it, or add the model to
    sonic_platforms.yaml from its platform.json.
    """
    if not _sonic(ctx) or ctx.plan is None:
        return
    seen: set[tuple[str, str]] = set()
    for sw in ctx.plan.switches:
        tier = _TIER_KEY.get(sw.role, sw.role)
        if (tier, sw.model) in seen or sonic_platform(sw.model) is not None:
            continue
        seen.add((tier, sw.model))
        yield (f"topology.switches.{tier}.model",
               f"{sw.model} has no SONiC platform data (SONiC models: {', '.join(sonic_models())}): "
               "pick one of these or use switch_os cumulus")


@rule("FG253", ERROR, "SONiC platform cannot split ports this way", stage="plan")
def sonic_breakout_supported(ctx: CheckContext) -> Iterator[tuple[str, str]]:
    """Every breakout the plan uses must be one the SONiC platform offers.

    SONiC only creates split ports in the modes the platform's platform.json lists (for
    example SN5600 offers 2x400G and 4x200G, not 8x100G; SN2700 offers 2x50G, not 4x25G),
    although the hardware data sheet may list more. A port speed that needs another split
    cannot be rendered: pick a NIC speed or switch model whose split SONiC supports.
    """
    if not _sonic(ctx) or ctx.plan is None:
        return
    found: dict[tuple[str, str, int], tuple[str, str, list[str]]] = {}
    models = {sw.name: sw for sw in ctx.plan.switches}
    for p in ctx.plan.ports:
        sw = models[p.device]
        platform = sonic_platform(sw.model)
        mode = p.breakout or "1x"
        if platform is None:
            continue
        group = platform.group_of(int(p.physical.removeprefix("swp")))
        if group is not None and mode in group.modes():
            continue
        offered = ", ".join(f"{m} ({s}G)" for m, s in sorted(group.modes().items())) if group else "none"
        _, _, tiers = found.setdefault((sw.model, mode, p.speed_g), (platform.platform, offered, []))
        tier = f"topology.switches.{_TIER_KEY.get(sw.role, sw.role)}.model"
        if tier not in tiers:
            tiers.append(tier)
    for (model, mode, speed), (platform_name, offered, tiers) in sorted(found.items()):
        yield ("topology.nic_speed",
               f"{speed}G on {model} needs {mode} breakout, which SONiC platform {platform_name} does not offer "
               f"(it offers {offered}): change topology.nic_speed or {' / '.join(sorted(tiers))}")


@rule("FG254", ERROR, "no SONiC buffer profile row for a port's speed and cable length", stage="plan")
def sonic_cable_row(ctx: CheckContext) -> Iterator[tuple[str, str]]:
    """SONiC's static buffer model only knows the (speed, cable length) rows of the SKU's table.

    With the traditional buffer model, buffermgrd (sonic-swss cfgmgr/buffermgr.cpp) builds a
    port's lossless PG profile from the row of the SKU's pg_profile_lookup.ini that matches
    the port's speed and its CABLE_LENGTH exactly; without one it logs "No PG profile
    configured for speed ... and cable length ..." and the port gets no lossless PG at all.
    NVIDIA ships few rows (SN5600: 5m, 40m and 300m per speed; generator/data/sonic_buffers.yaml
    lists every SKU's), so fabricgen rounds each cable up to the next row: a shorter row would
    under-provision headroom. A cable longer than the SKU's longest row, or a port speed the
    table has no row for, cannot be rendered. Shorten the cable of that tier (or route it via
    a closer switch), pick a speed or switch model whose SKU has the row, or use switch_os
    cumulus, whose headroom is computed per metre.
    """
    if not _sonic(ctx) or ctx.plan is None:
        return
    plan = ctx.plan
    longest: dict[tuple[str, str, int, str], float] = {}
    missing_speed: dict[tuple[str, str, int], set[str]] = {}     # -> intent keys that set the speed
    for sw in plan.switches:
        hwsku = switch_hwsku(plan, sw)
        if hwsku is None:
            continue                                  # FG252 says so
        try:
            sku = sku_buffers(hwsku)
        except SonicDataError as exc:
            yield f"topology.switches.{_TIER_KEY.get(sw.role, sw.role)}.model", str(exc)
            continue
        for p in plan.ports_of(sw.name):
            if sku.row(p.speed_g, p.cable_m) is not None:
                continue
            if not sku.rows_for(p.speed_g):
                missing_speed.setdefault((sw.model, hwsku, p.speed_g), set()).add(
                    "topology.nic_speed" if p.tier == TIER_HOST_LEAF
                    else f"topology.switches.{_TIER_KEY.get(sw.role, sw.role)}.model")
            else:
                key = (sw.model, hwsku, p.speed_g, p.tier)
                longest[key] = max(longest.get(key, 0.0), p.cable_m)
    for (model, hwsku, speed, tier), cable_m in sorted(longest.items()):
        rows = sku_buffers(hwsku).rows_for(speed)
        top = rows[-1]
        cable_key = _CABLE_KEY.get(tier, tier)
        yield (f"topology.cables.{cable_key}",
               f"{cable_m:g} m {tier} cables at {speed}G on {model}: SKU {hwsku}'s buffer table has rows up to "
               f"{top.cable} only ({', '.join(r.cable for r in rows)}): shorten topology.cables.{cable_key} "
               f"to at most {top.cable_m} m or use switch_os cumulus")
    for (model, hwsku, speed), keys in sorted(missing_speed.items()):
        speeds = sorted({r.speed_mbps // 1000 for r in sku_buffers(hwsku).rows if r.speed_mbps >= 1000})
        # one line per model and speed; the NIC speed decides it whenever host ports are affected
        yield ("topology.nic_speed" if "topology.nic_speed" in keys else min(keys),
               f"{speed}G ports on {model}: SKU {hwsku}'s buffer table has no {speed}G row "
               f"(it has {', '.join(f'{s}G' for s in speeds)}): pick one of these speeds or another model")
