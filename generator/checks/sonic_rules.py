"""FG25x: what the SONiC target (switch_os.name: sonic) needs from the intent.

FG250 is reserved for findings of SONiC's own YANG models (`--sonic-yang DIR`).
"""

from __future__ import annotations

from collections.abc import Iterator

from generator.checks.registry import ERROR, CheckContext, rule
from generator.plan.model import ROLE_LEAF, ROLE_SPINE, ROLE_SUPER_SPINE
from generator.plan.sonic_catalog import sonic_models, sonic_platform

_TIER_KEY = {ROLE_LEAF: "leaf", ROLE_SPINE: "spine", ROLE_SUPER_SPINE: "super_spine"}


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
