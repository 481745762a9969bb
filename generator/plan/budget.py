"""Lossless buffer budget per switch: reserved PFC headroom against the ingress lossless pool.

The figure summed is each lossless priority group's headroom `size`, not xoff + xon.
That is what the switch reserves: sonic-swss cfgmgr/buffer_pool_mellanox.lua adds
`size x (number of PGs using the profile)` to the occupied buffer, and only counts
xon + xoff - size separately when a shared headroom pool makes size smaller than
xon + xoff. fabricgen's Cumulus render never builds a shared headroom pool, so size >=
xoff + xon (it also carries the 8-lane speed overhead) and size is the whole reservation.

SONiC switches reserve what their SKU's pg_profile_lookup.ini row says for the port's cable
rounded up to the next row (what the render writes, generator/plan/sonic_catalog.py), against
the ingress_lossless_pool of the SKU's t0 (leaf) / t1 (spine) template. On a SKU with a
shared headroom pool a row's size is only its xon: the xoff parts share the pool's xoff,
which NVIDIA over-subscribes by design, so only the sizes are summed there too.

Pure function of the plan; the FG2xx budget rules and any report read it.
"""

from __future__ import annotations

from dataclasses import dataclass

from generator.plan.headroom import model_pools
from generator.plan.model import FabricPlan, Port, Switch
from generator.plan.sonic_catalog import SkuBuffers, SonicDataError, sku_buffers, switch_hwsku


@dataclass(frozen=True, slots=True)
class Budget:
    switch: str
    role: str
    model: str
    lossless_pgs: int                   # lossless priority groups holding headroom
    used_bytes: int                     # sum of their headroom size
    pool_bytes: int | None              # ingress lossless pool; None when the model has no sourced figure
    largest_tier: str | None            # link tier contributing the most headroom (what to shorten)
    largest_tier_cable_m: float | None  # longest cable of that tier on this switch

    @property
    def percent(self) -> float | None:
        if not self.pool_bytes:
            return None
        return 100.0 * self.used_bytes / self.pool_bytes

    @property
    def fits(self) -> bool | None:
        return None if self.pool_bytes is None else self.used_bytes <= self.pool_bytes


def _pool_bytes(model: str, cache: dict[str, int | None]) -> int | None:
    if model not in cache:
        try:
            cache[model] = int(model_pools(model)["ingress_lossless_pool_bytes"])
        except ValueError:
            # no sourced pool size: judging against a guess would be worse than not judging
            cache[model] = None
    return cache[model]


def _sonic_sku(plan: FabricPlan, sw: Switch) -> SkuBuffers | None:
    if plan.switch_os != "sonic":
        return None
    hwsku = switch_hwsku(plan, sw)
    try:
        return sku_buffers(hwsku) if hwsku is not None else None
    except SonicDataError:
        return None             # FG252/FG254 report the missing data


def switch_budgets(plan: FabricPlan) -> list[Budget]:
    """One Budget per switch of the plan, in plan order."""
    # every lossless port holds one PG per PFC priority; the plan has one today
    pgs_per_port = max(1, len(plan.qos.pfc_priorities))
    pools: dict[str, int | None] = {}
    out = []
    for sw in plan.switches:
        sku = _sonic_sku(plan, sw)
        used = 0
        pgs = 0
        by_tier: dict[str, int] = {}
        longest: dict[str, float] = {}
        ports: tuple[Port, ...] = plan.ports_of(sw.name)
        # ports alike in what the sum reads counted first: a switch has ~128 ports of a few kinds
        # (issue 14: ~590k ports at 98k GPUs, summed twice); integer sums, so the order is free
        alike: dict[tuple, int] = {}
        for p in ports:
            if p.lossless and p.headroom is not None:
                key = (p.tier, p.speed_g, p.cable_m, p.headroom.size)
                alike[key] = alike.get(key, 0) + 1
        for (tier, speed_g, cable_m, headroom_size), count in alike.items():
            # SONiC: the table row the render uses (a cable with no row is FG254's; the formula stands in)
            row = sku.row(speed_g, cable_m) if sku is not None else None
            size = (row.size if row is not None else headroom_size) * pgs_per_port * count
            used += size
            pgs += pgs_per_port * count
            by_tier[tier] = by_tier.get(tier, 0) + size
            longest[tier] = max(longest.get(tier, 0.0), cable_m)
        top = max(sorted(by_tier), key=lambda t: by_tier[t]) if by_tier else None
        out.append(Budget(switch=sw.name, role=sw.role, model=sw.model, lossless_pgs=pgs, used_bytes=used,
                          pool_bytes=(sku.pools(sw.role)["ingress_lossless_pool"] if sku is not None
                                      else _pool_bytes(sw.model, pools)), largest_tier=top,
                          largest_tier_cable_m=longest.get(top) if top else None))
    return out
