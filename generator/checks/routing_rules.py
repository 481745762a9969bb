"""FG51x: the routing knobs of `routing:` (BGP multipath width, BFD, adaptive routing) and
what the switch OS can take of the management plane.

The facts come from NVIDIA's Cumulus Linux user guide (Equal-Cost-Multipath-Load-Sharing,
Optional-BGP-Configuration, User-Account pages) and NVUE's object model; see
../shared/reference/DEVICE_STATE.md.
"""

from __future__ import annotations

from collections.abc import Iterator

from generator.checks.registry import ERROR, WARNING, CheckContext, rule

Finding = Iterator[tuple[str, str]]

AR_ASIC = "spectrum-4"
AR_SPEEDS_G = (200, 400)
# NVUE object model 5.11-5.18, `system aaa user <u> ssh authorized-key <k> type`
NVUE_KEY_TYPES = ("ecdsa-sha2-nistp256", "ecdsa-sha2-nistp384", "ecdsa-sha2-nistp521", "ssh-ed25519", "ssh-rsa")


def _cumulus(ctx: CheckContext) -> bool:
    return ctx.intent.switch_os.name == "cumulus"


def _fabric_ports(ctx: CheckContext):
    """(switch, port) for every switch-to-switch port: the ECMP members adaptive routing acts on."""
    for sw in ctx.plan.switches:
        for p in ctx.plan.ports_of(sw.name):
            if p.peer_asn is not None:
                yield sw, p


@rule("FG510", ERROR, "BGP multipath width below the widest ECMP group", stage="plan")
def max_paths_too_narrow(ctx: CheckContext) -> Finding:
    """BGP installs at most `multipaths ebgp` equal-cost next hops for one prefix (NVUE
    `vrf default router bgp address-family ipv4-unicast multipaths ebgp`, 1-128; FRR's
    `maximum-paths`, Optional-BGP-Configuration page). fabricgen renders
    `routing.max_paths` there. When a switch has more equal-cost next hops toward one
    destination than that (all its uplinks, or every parallel link into one lower switch,
    pod or remote group), BGP silently drops the rest: their links carry no traffic and the
    fabric loses bandwidth without any error. Raise `routing.max_paths` to at least the
    widest group (leave it unset for 128), or build fewer parallel links."""
    if ctx.plan is None or ctx.plan.routing is None:
        return
    r = ctx.plan.routing
    if r.max_paths < r.widest_ecmp:
        source = "routing.max_paths" if r.max_paths_set else "the default routing.max_paths"
        yield ("routing.max_paths",
               f"{source} {r.max_paths} is below the widest ECMP group the plan builds ({r.widest_ecmp} equal-cost "
               f"next hops): BGP would silently drop {r.widest_ecmp - r.max_paths} path(s); set max_paths to at "
               f"least {r.widest_ecmp}")


@rule("FG511", ERROR, "adaptive routing at a speed its ASIC cannot do it", stage="plan")
def adaptive_routing_speed(ctx: CheckContext) -> Finding:
    """Cumulus Linux supports adaptive routing on Spectrum-4 switches at 400G and 200G; "the
    Spectrum-4 switch does not support adaptive routing on 800G links"
    (Equal-Cost-Multipath-Load-Sharing page, Adaptive Routing). fabricgen enables it on every
    switch-to-switch port, so a Spectrum-4 fabric whose links run at 800G cannot use it.
    Split the ports to 400G (topology.nic_speed: 400G) or leave `routing.adaptive_routing` off."""
    if ctx.plan is None or not ctx.plan.routing or not ctx.plan.routing.adaptive_routing:
        return
    bad: dict[str, str] = {}
    for sw, p in _fabric_ports(ctx):
        if sw.asic == AR_ASIC and p.speed_g not in AR_SPEEDS_G:
            bad.setdefault(sw.name, f"{p.port} {p.speed_g}G")
    if bad:
        first = next(iter(bad))
        yield ("routing.adaptive_routing",
               f"{len(bad)} Spectrum-4 switch(es) have {bad[first].split()[1]} fabric ports (e.g. {first} "
               f"{bad[first].split()[0]}); Spectrum-4 does adaptive routing at 200G/400G only: run the links at "
               "400G or set adaptive_routing: false")


@rule("FG512", WARNING, "adaptive routing reorders packets and restarts switchd", stage="intent")
def adaptive_routing_reorder(ctx: CheckContext) -> Finding:
    """Adaptive routing sends each packet of a flow to the least loaded ECMP member, so
    RoCEv2 packets arrive out of order (Equal-Cost-Multipath-Load-Sharing page). NVIDIA
    pairs it with NICs that place out-of-order packets directly (BlueField-3 SuperNICs in
    Spectrum-X); with ConnectX-7 or older hosts, confirm with NVIDIA that the NIC firmware
    and the workload handle reordering, or go-back-N retransmissions can cost more than
    adaptive routing gains. Enabling or disabling it globally or on an interface reloads
    switchd, which interrupts traffic: do it in a maintenance window."""
    if not ctx.intent.routing.adaptive_routing or not _cumulus(ctx):
        return
    yield ("routing.adaptive_routing",
           "adaptive routing delivers RoCE packets out of order: the NICs must place them (BlueField-3 "
           "SuperNIC / Spectrum-X); confirm it for ConnectX-7 hosts; switching it on or off reloads switchd")


@rule("FG513", ERROR, "adaptive routing on a switch ASIC that does not support it", stage="plan")
def adaptive_routing_asic(ctx: CheckContext) -> Finding:
    """Cumulus Linux supports adaptive routing with switches with the Spectrum-4 ASIC
    (Equal-Cost-Multipath-Load-Sharing page, Adaptive Routing); other Spectrum generations
    are not on the list. Leave `routing.adaptive_routing` off, or use Spectrum-4 switches
    (SN5600, SN5400)."""
    if ctx.plan is None or not ctx.plan.routing or not ctx.plan.routing.adaptive_routing or not _cumulus(ctx):
        return
    others = sorted({(sw.model, sw.asic) for sw in ctx.plan.switches if sw.asic != AR_ASIC})
    if others:
        names = ", ".join(f"{model} ({asic})" for model, asic in others)
        yield ("routing.adaptive_routing",
               f"{names}: Cumulus supports adaptive routing on Spectrum-4 only; set adaptive_routing: false "
               "or use Spectrum-4 switches")


@rule("FG514", ERROR, "routing option the SONiC render does not carry", stage="intent")
def sonic_routing_options(ctx: CheckContext) -> Finding:
    """fabricgen renders BFD and adaptive routing for Cumulus NVUE only; its SONiC
    config_db.json has neither (no BFD in the BGP_NEIGHBOR entries, no adaptive-routing
    tables). Rather than drop what the intent asks for, the intent is refused: set the
    option to false for `switch_os.name: sonic`, or configure it on the switches by hand."""
    if ctx.intent.switch_os.name != "sonic":
        return
    for key in ("bfd", "adaptive_routing"):
        if getattr(ctx.intent.routing, key):
            yield (f"routing.{key}", f"switch_os sonic: fabricgen does not render routing.{key} into config_db.json; "
                   f"set {key}: false")


@rule("FG515", ERROR, "SSH key type NVUE cannot store", stage="intent")
def ssh_key_type(ctx: CheckContext) -> Finding:
    """NVUE stores a user's public keys as `system aaa user <u> ssh authorized-key <id>`
    with `key` and `type`; the object model (5.11-5.18) takes the types ecdsa-sha2-nistp256,
    -nistp384, -nistp521, ssh-ed25519 and ssh-rsa only. A FIDO key (sk-ssh-ed25519@openssh.com,
    sk-ecdsa-sha2-nistp256@openssh.com) makes NVUE refuse the whole config. Use one of those
    types for the switch accounts."""
    m = ctx.intent.management
    if m is None or not _cumulus(ctx):
        return
    for i, user in enumerate(m.users):
        for key in user.ssh_keys:
            kind = key.split(None, 1)[0]
            if kind not in NVUE_KEY_TYPES:
                yield (f"management.users[{i}].ssh_keys",
                       f"user {user.name!r}: NVUE takes no {kind} keys (only {', '.join(NVUE_KEY_TYPES)}): "
                       "use an ed25519, ecdsa or rsa key")
