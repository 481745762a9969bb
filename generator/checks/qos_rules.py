"""FG2xx: the lossless contract (PFC, ECN, DSCP/priority maps, MTU, buffer budget).

Each rule is one function; its docstring is what `fabricgen validate --explain CODE`
prints. Ranges the intent model leaves open on purpose (DSCP, priorities, ECN
probability) are judged here so each has a code and an explanation.
"""

from __future__ import annotations

import operator
from collections.abc import Iterator
from itertools import groupby

from generator.checks.registry import ERROR, WARNING, CheckContext, rule
from generator.checks.topology_rules import SWITCH_TIERS
from generator.plan.budget import Budget, switch_budgets
from generator.plan.headroom import model_pools
from generator.plan.model import ROLE_LEAF, ROLE_SPINE, ROLE_SUPER_SPINE, Port

# rdma-core/kernel iboe_get_mtu(): GRH 40 + UDP 8 + BTH 12 + XRC ext 4 + AtomicETH 28 + ICRC 4
ROCE_OVERHEAD_BYTES = 96
IB_MTUS = (256, 512, 1024, 2048, 4096)
BUDGET_WARN_PERCENT = 80
_ROLE_TIER = {ROLE_LEAF: "leaf", ROLE_SPINE: "spine", ROLE_SUPER_SPINE: "super_spine"}
_LOSSLESS_ROOM = operator.itemgetter(Port._fields.index("lossless"), Port._fields.index("headroom"))


def roce_active_mtu(host_mtu: int) -> int | None:
    """The RoCE path MTU a NIC negotiates for an interface MTU, as the kernel computes it."""
    usable = host_mtu - ROCE_OVERHEAD_BYTES
    fitting = [m for m in IB_MTUS if m <= usable]
    return fitting[-1] if fitting else None


def _lossless(ctx: CheckContext) -> bool:
    return ctx.intent.roce.mode == "lossless"


@rule("FG201", ERROR, "ECN disabled on a RoCE fabric", stage="intent")
def ecn_disabled(ctx: CheckContext) -> Iterator[tuple[str, str]]:
    """RoCE needs ECN marking (DCQCN) to slow senders down before queues overflow.

    Lossless mode: PFC is a last-resort brake, not congestion control. With ECN off, every
    incast fills the egress queue until the ingress priority groups reach XOFF; the switch
    then pauses the whole priority on the upstream link, which pauses its upstream, and so
    on: congestion spreads through the fabric as pause storms and head-of-line blocking,
    hurting flows that never went near the hot spot. NVIDIA's lossless profile always
    enables ECN on the RoCE traffic class.

    Lossy mode (no PFC): ECN is the only signal that congestion exists; without it the
    switch drops packets and RoCE's go-back-N retransmission collapses throughput.

    Set roce.ecn.enabled: true (or remove the key: it defaults to true)."""
    if not ctx.intent.roce.ecn.enabled:
        if _lossless(ctx):
            yield "roce.ecn.enabled", ("ECN is off while PFC is on: PFC alone turns every incast into pause storms "
                                       "that spread through the fabric; set roce.ecn.enabled: true")
        else:
            yield "roce.ecn.enabled", ("ECN is off in lossy mode: nothing slows senders before drops, and RoCE "
                                       "go-back-N retransmission collapses throughput; set roce.ecn.enabled: true")


@rule("FG202", ERROR, "ECN min threshold not below max threshold", stage="intent")
def ecn_min_ge_max(ctx: CheckContext) -> Iterator[tuple[str, str]]:
    """WRED/ECN marks with a probability that rises linearly from 0 at the min threshold
    (Kmin) to roce.ecn.probability at the max threshold (Kmax), and marks every packet
    above Kmax. With Kmin >= Kmax there is no ramp: marking jumps from nothing to all at
    once and DCQCN senders oscillate between full rate and a hard cut. NVIDIA's defaults
    are 150 KB and 1500 KB."""
    ecn = ctx.intent.roce.ecn
    if ecn.enabled and ecn.min_threshold >= ecn.max_threshold:
        yield "roce.ecn.min_threshold", (f"{ecn.min_threshold} B is not below max_threshold {ecn.max_threshold} B: "
                                         "marking needs a ramp; NVIDIA uses 150KB and 1500KB")


@rule("FG203", ERROR, "ECN marking probability outside 1-100", stage="intent")
def ecn_probability(ctx: CheckContext) -> Iterator[tuple[str, str]]:
    """roce.ecn.probability is the marking probability in percent reached at the max
    threshold. 0 never marks (ECN effectively off, see FG201); above 100 is not a
    probability and both NVUE and SONiC WRED profiles refuse it. NVIDIA uses 100."""
    p = ctx.intent.roce.ecn.probability
    if ctx.intent.roce.ecn.enabled and not 1 <= p <= 100:
        yield "roce.ecn.probability", f"{p} is not a percentage in 1-100: use 100 (NVIDIA's default)"


@rule("FG204", WARNING, "ECN starts marking only after a priority group could reach XOFF", stage="plan")
def ecn_after_xoff(ctx: CheckContext) -> Iterator[tuple[str, str]]:
    """ECN (DCQCN) must react before PFC: marking has to start well before any lossless
    priority group fills to its XOFF headroom, or PFC pauses links before senders ever
    hear of congestion and the fabric runs on pause frames (see FG201). The plan computes
    each port's headroom (xoff); this warns when roce.ecn.min_threshold is not below the
    smallest xoff of any lossless port.

    Slow and short links have the smallest xoff (100G: ~73 KB on Spectrum-1, ~113 KB on
    Spectrum-4), so NVIDIA's 150 KB default trips this on 100G/200G fabrics. Lower
    roce.ecn.min_threshold below the figure in the message, or accept the warning if
    the switch vendor's tuning for that speed says otherwise."""
    if not _lossless(ctx) or not ctx.intent.roce.ecn.enabled:
        return
    ports = ctx.plan.ports
    # the few distinct (lossless, headroom) pairs first, as runs compared in C; the ports only when
    # one warns (issue 14: ~590k ports at 98k GPUs)
    rooms = [room for (lossless, room), _ in groupby(map(_LOSSLESS_ROOM, ports)) if lossless and room is not None]
    if not rooms:
        return
    xoff = min(room.xoff for room in rooms)
    ecn_min = ctx.intent.roce.ecn.min_threshold
    if ecn_min >= xoff:
        low = min((p for p in ports if p.lossless and p.headroom is not None and p.headroom.xoff == xoff),
                  key=lambda p: (p.device, p.port))
        yield "roce.ecn.min_threshold", (f"{ecn_min} B is not below the smallest PFC xoff {low.headroom.xoff} B "
                                         f"({low.device} {low.port}, {low.speed_g}G {low.cable_m:g} m): ECN would "
                                         "mark only after PFC pauses; lower the min threshold")


@rule("FG205", ERROR, "RoCE and CNP share a priority or DSCP", stage="intent")
def roce_cnp_shared(ctx: CheckContext) -> Iterator[tuple[str, str]]:
    """CNPs (congestion notification packets) tell a RoCE sender to slow down. They
    travel in their own strict-priority traffic class so they overtake the congested
    RoCE queue they report on. On the same DSCP the switch cannot tell them apart; on the
    same priority they queue behind the very data they are meant to throttle, and are
    paused by PFC with it, so DCQCN reacts late or not at all. NVIDIA: RoCE DSCP 26 ->
    priority 3, CNP DSCP 48 -> priority 6."""
    r = ctx.intent.roce
    if r.cnp_priority == r.priority:
        yield "roce.cnp_priority", (f"CNP priority {r.cnp_priority} equals the RoCE priority: CNPs would wait "
                                    "behind (and be paused with) the data they throttle; use 6")
    if r.cnp_dscp == r.dscp:
        yield "roce.cnp_dscp", (f"CNP DSCP {r.cnp_dscp} equals the RoCE DSCP: switches cannot give CNPs their "
                                "strict-priority queue; use 48")


@rule("FG206", ERROR, "DSCP outside 0-63", stage="intent")
def dscp_range(ctx: CheckContext) -> Iterator[tuple[str, str]]:
    """DSCP is the upper 6 bits of the IP ToS byte: 0-63. A larger value does not fit;
    hosts would put DSCP << 2 in the ToS byte (NCCL_IB_TC) and silently lose the high
    bits, so traffic lands in a different, lossy class than the switch expects."""
    r = ctx.intent.roce
    for key in ("dscp", "cnp_dscp"):
        v = getattr(r, key)
        if not 0 <= v <= 63:
            yield f"roce.{key}", f"{v} is not a DSCP (0-63): NVIDIA uses {26 if key == 'dscp' else 48}"


@rule("FG207", ERROR, "switch priority outside 0-7", stage="intent")
def priority_range(ctx: CheckContext) -> Iterator[tuple[str, str]]:
    """802.1p switch priorities, PFC priorities and traffic classes are 0-7 (three PCP
    bits; PFC frames carry an 8-bit enable vector). Any other value cannot be mapped or
    paused. NVIDIA uses 3 for RoCE and 6 for CNP."""
    r = ctx.intent.roce
    for key in ("priority", "cnp_priority"):
        v = getattr(r, key)
        if not 0 <= v <= 7:
            yield f"roce.{key}", f"{v} is not a switch priority (0-7): NVIDIA uses {3 if key == 'priority' else 6}"


@rule("FG208", WARNING, "RoCE bandwidth share below the default class", stage="intent")
def bandwidth_share(ctx: CheckContext) -> Iterator[tuple[str, str]]:
    """roce.bandwidth_percent is the DWRR (ETS) share of the RoCE traffic class; the
    default class TC0 gets the rest and CNPs are strict priority. DWRR is work-conserving,
    so the share only matters under contention - but that is exactly when a training job
    needs it. Below 50 % the lossy best-effort traffic (storage, checkpoint, TCP) wins
    contention against gradient exchange. NVIDIA's lossless profile uses 50."""
    bw = ctx.intent.roce.bandwidth_percent
    if bw < 50:
        yield "roce.bandwidth_percent", (f"RoCE gets {bw}% and best-effort TC0 {100 - bw}% under contention: "
                                         "training traffic loses to lossy traffic; use 50 or more")


@rule("FG209", ERROR, "host MTU above the switch MTU", stage="intent")
def host_mtu_above_switch(ctx: CheckContext) -> Iterator[tuple[str, str]]:
    """A host frame larger than the switch port MTU is dropped by the switch: RoCE packets
    carry DF and are never fragmented. Connections establish (small packets pass) and
    then stall on the first full-size packet. Keep roce.mtu.host at or below
    roce.mtu.switch: NVIDIA uses 9216 on switches and 4200 on hosts."""
    mtu = ctx.intent.roce.mtu
    if mtu.host > mtu.switch:
        yield "roce.mtu.host", f"{mtu.host} is above the switch MTU {mtu.switch}: full-size frames would be dropped"


@rule("FG210", WARNING, "host MTU gives a RoCE MTU below 4096", stage="intent")
def roce_mtu_below_4096(ctx: CheckContext) -> Iterator[tuple[str, str]]:
    """RoCE does not use the interface MTU directly: the NIC picks the largest InfiniBand
    MTU (256, 512, 1024, 2048, 4096) that fits in the interface MTU minus 96 bytes of
    RoCEv2 headers (kernel iboe_get_mtu). 4200 gives 4096; 4000 gives only 2048, which
    doubles the packet and header rate for the same bandwidth and lowers NCCL throughput.
    Use roce.mtu.host 4200 (or 9000; both give 4096)."""
    host = ctx.intent.roce.mtu.host
    active = roce_active_mtu(host)
    if active is None or active < 4096:
        yield "roce.mtu.host", (f"{host} gives RoCE active MTU {active} ({host} - 96 B of headers): use 4200 "
                                "or more for 4096")


@rule("FG211", WARNING, "PFC on more than one priority", stage="plan")
def pfc_multiple_priorities(ctx: CheckContext) -> Iterator[tuple[str, str]]:
    """Each lossless priority needs its own headroom on every port (doubling the buffer
    budget, see FG220) and its own pause domain; two lossless classes can pause each
    other's upstream links and form deadlock-prone dependencies. NVIDIA's RoCE profile
    makes priority 3 lossless and nothing else."""
    pfc = ctx.plan.qos.pfc_priorities
    if len(pfc) > 1:
        yield "roce.priority", (f"PFC is on priorities {', '.join(map(str, pfc))}: every lossless priority doubles "
                                "headroom and adds a pause domain; keep one")


@rule("FG212", WARNING, "PFC watchdog off", stage="intent")
def pfc_watchdog_off(ctx: CheckContext) -> Iterator[tuple[str, str]]:
    """A NIC or switch that keeps sending PFC pause (a stuck receive ring, a firmware bug, a
    deadlock) stops its priority on the link forever, and the pause spreads upstream until
    whole parts of the fabric are frozen. The PFC watchdog detects a queue that stays
    paused (100-5000 ms) and drops its traffic so the rest of the fabric recovers. Keep
    roce.pfc_watchdog: true on lossless fabrics. (Lossy fabrics have no PFC: not checked.)"""
    if _lossless(ctx) and not ctx.intent.roce.pfc_watchdog:
        yield "roce.pfc_watchdog", "PFC watchdog is off: one stuck receiver can pause the fabric indefinitely"


@rule("FG215", ERROR, "PFC watchdog timer the switch OS cannot take", stage="intent")
def pfc_watchdog_timers(ctx: CheckContext) -> Iterator[tuple[str, str]]:
    """The timers map onto each NOS differently. SONiC's PFC_WD table takes detection and
    restoration per port and one POLL_INTERVAL of 100-1000 ms (sonic-pfcwd.yang). NVUE has
    `qos pfc-watchdog polling-interval` and `robustness`, the polls a queue must stay paused
    (QoS page): detection is polling-interval x robustness, so it must be a whole multiple
    of the poll (default 100 ms), and there is no restoration time to set."""
    t = ctx.intent.roce.pfc_watchdog_timers
    key = "roce.pfc_watchdog_timers"
    if ctx.intent.switch_os.name == "sonic":
        if t.poll_ms is not None and t.poll_ms > 1000:
            yield f"{key}.poll_ms", f"SONiC's POLL_INTERVAL is 100-1000 ms (sonic-pfcwd.yang), not {t.poll_ms}"
        return
    if t.restoration_ms is not None:
        yield f"{key}.restoration_ms", ("NVUE has no PFC watchdog restoration time (only polling-interval and "
                                        "robustness): remove restoration_ms")
    poll = t.poll_ms or 100
    if t.detection_ms is not None and t.detection_ms % poll:
        yield f"{key}.detection_ms", (f"NVUE detects after robustness x polling-interval: {t.detection_ms} ms is "
                                      f"not a multiple of the {poll} ms poll; use {max(1, t.detection_ms // poll) * poll}")


@rule("FG213", ERROR, "RoCE or CNP on priority 0, the default class", stage="intent")
def priority_zero(ctx: CheckContext) -> Iterator[tuple[str, str]]:
    """Every switch priority other than RoCE's and CNP's maps to traffic class 0, the
    best-effort class. RoCE on priority 0 makes all untagged and best-effort traffic
    lossless with it (PFC pauses TCP and management traffic too) and leaves RoCE no
    queue of its own; CNP on priority 0 loses its strict-priority queue. Use 3 for RoCE
    and 6 for CNP."""
    r = ctx.intent.roce
    if r.priority == 0:
        yield "roce.priority", "priority 0 is the best-effort class: RoCE needs its own (NVIDIA uses 3)"
    if r.cnp_priority == 0:
        yield "roce.cnp_priority", "priority 0 is the best-effort class: CNPs need a strict-priority one (use 6)"


@rule("FG214", ERROR, "ECN threshold larger than the switch's packet buffer", stage="intent")
def ecn_above_buffer(ctx: CheckContext) -> Iterator[tuple[str, str]]:
    """WRED/ECN compares roce.ecn.min_threshold and max_threshold with the depth of the
    egress queue, and no queue grows past the switch's shared packet buffer: the egress
    lossless pool of the model's SONiC SKU (generator/data/asics.yaml, from
    buffers_defaults_t1.j2; about 158 MB on an SN5600, 14 MB on an SN2700). A threshold
    above it is never reached, so ECN never marks (or, for max_threshold, never reaches
    its full probability) and DCQCN never slows senders: the fabric runs on PFC pauses
    (see FG201). Switches may also refuse the value outright (SONiC's WRED_PROFILE
    thresholds are uint32). NVIDIA uses 150 KB and 1500 KB; keep both well below the
    smallest buffer of the switch models the topology uses."""
    t = ctx.intent.topology
    smallest = None
    for tier in SWITCH_TIERS.get(t.kind, ("leaf",)):
        model = getattr(t.switches, tier).model
        try:
            pool = int(model_pools(model)["egress_lossless_pool_bytes"])
        except ValueError:
            continue                # an unknown model is FG102's
        if smallest is None or pool < smallest[0]:
            smallest = (pool, model)
    if smallest is None:
        return
    pool, model = smallest
    for key in ("min_threshold", "max_threshold"):
        value = getattr(ctx.intent.roce.ecn, key)
        if value > pool:
            yield f"roce.ecn.{key}", (f"{value} B is more than the {pool} B packet buffer of the {model}: the "
                                      "queue never gets that deep, so ECN would never mark; NVIDIA uses 150KB "
                                      "and 1500KB")


def _budget_findings(ctx: CheckContext, over: bool) -> Iterator[tuple[str, str]]:
    if ctx.plan is None or ctx.plan.qos.mode != "lossless":
        return
    hits: dict[str, list[Budget]] = {}
    for b in switch_budgets(ctx.plan):
        pct = b.percent
        if pct is None:
            continue
        if (pct > 100) if over else (BUDGET_WARN_PERCENT < pct <= 100):
            hits.setdefault(b.role, []).append(b)
    # one line per tier: a 512-spine fabric must not print 512 identical findings
    for role in sorted(hits):
        group = sorted(hits[role], key=lambda b: (-b.used_bytes, b.switch))
        worst = group[0]
        more = f"; {len(group) - 1} more {role} switch(es) alike" if len(group) > 1 else ""
        cause = (f" (largest share: {worst.largest_tier} links, {worst.largest_tier_cable_m:g} m)"
                 if worst.largest_tier else "")
        yield f"topology.switches.{_ROLE_TIER.get(role, 'leaf')}.model", (
            f"{worst.switch} ({worst.model}): {worst.lossless_pgs} lossless PGs reserve "
            f"{worst.used_bytes / 1e6:.1f} MB of PFC headroom, {worst.percent:.1f}% of the "
            f"{worst.pool_bytes / 1e6:.1f} MB ingress lossless pool{cause}{more}")


@rule("FG220", ERROR, "PFC headroom does not fit the switch's lossless pool", stage="plan")
def budget_over(ctx: CheckContext) -> Iterator[tuple[str, str]]:
    """Every lossless port reserves PFC headroom (the `size` of its lossless priority
    group: xoff + xon, computed from speed, cable length and MTU, see plan.json
    ports[].headroom) so the frames in flight after a pause still have room. The sum over
    a switch's ports must fit its ingress lossless buffer pool (per model, from the
    SONiC SKU's buffers_defaults_t1.j2; for switch_os sonic the SKU's own pool, t0 for
    leaves and t1 for spines, summed over its pg_profile_lookup.ini rows). If it does not, the switch either refuses the
    profile or the guarantee is fiction: under load the PG overflows and frames are
    dropped on a fabric that is supposed to be lossless - the hardest failure to find.

    Fixes, in order of effect: shorter cables on the tier the message names (headroom
    grows with cable length x speed), fewer lossless ports per switch (a model with a
    larger buffer, or more switches of the tier), or one lossless priority only (FG211)."""
    return _budget_findings(ctx, over=True)


@rule("FG221", WARNING, "PFC headroom above 80 % of the switch's lossless pool", stage="plan")
def budget_high(ctx: CheckContext) -> Iterator[tuple[str, str]]:
    """The PFC headroom of a switch's lossless ports (see FG220) takes more than 80 % of
    its ingress lossless pool. It fits, but the shared buffer left for absorbing bursts
    before PFC triggers is small, so the switch pauses earlier and more often; adding
    ports or longer cables later will not fit. Long spine and super-spine cables at
    400G/800G are the usual cause (a 100 m 400G port reserves about 394 KB)."""
    return _budget_findings(ctx, over=False)
