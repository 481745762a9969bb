"""SONiC platform and SKU data of the catalog: front-panel port groups, lanes, breakouts, hwskus,
and each SKU's static buffer configuration as NVIDIA ships it.

Read from generator/data/sonic_platforms.yaml and generator/data/sonic_buffers.yaml (both name
their upstream sources). Plan-side data, so checks (generator/checks/sonic_rules.py), the
buffer budget (generator/plan/budget.py) and render all read it from here.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

import yaml

from generator.common.errors import FabricgenError
from generator.plan.model import FabricPlan, Port, Switch


class SonicDataError(FabricgenError, ValueError):
    """The plan needs something sonic_platforms.yaml / sonic_buffers.yaml do not provide (rules FG252,
    FG253 and FG254 say so first)."""


# ----------------------------------------------------------------------------- platform data


@dataclass(frozen=True, slots=True)
class SonicPort:
    name: str           # Ethernet8
    alias: str          # etp2a
    lanes: str          # "8,9,10,11"
    index: int          # front-panel number
    speed_g: int
    subport: int        # 0 unsplit, else 1-based position in the split


@dataclass(frozen=True, slots=True)
class PortGroup:
    first: int
    count: int
    speed_g: int
    lanes: int
    name_base: int
    name_step: int
    lane_base: int
    lane_step: int
    breakouts: tuple[tuple[str, int], ...]     # ("2x", 400)

    def modes(self) -> dict[str, int]:
        return {"1x": self.speed_g, **dict(self.breakouts)}


@dataclass(frozen=True, slots=True)
class SonicPlatform:
    model: str
    platform: str
    hwskus: tuple[tuple[str, str], ...]        # (speed in Gb/s or "default", SKU)
    groups: tuple[PortGroup, ...]

    def hwsku_for(self, speed_g: int | None) -> str:
        skus = dict(self.hwskus)
        return skus.get(str(speed_g), skus["default"])

    def hwsku_for_speeds(self, speeds: Iterable[int]) -> str:
        """The SKU of a switch whose ports run these speeds: the one laid out natively for a
        single speed, else the default SKU."""
        distinct = set(speeds)
        return self.hwsku_for(distinct.pop() if len(distinct) == 1 else None)

    def group_of(self, number: int) -> PortGroup | None:
        return next((g for g in self.groups if g.first <= number < g.first + g.count), None)

    def front_panel(self) -> Iterable[tuple[int, PortGroup]]:
        for g in self.groups:
            for n in range(g.first, g.first + g.count):
                yield n, g

    def ports(self, number: int, mode: str) -> tuple[SonicPort, ...]:
        return _split(self, number, mode)


@cache
def _split(platform: SonicPlatform, number: int, mode: str) -> tuple[SonicPort, ...]:
    """The SONiC ports of front-panel port `number` in breakout `mode`, as portconfig.py derives them."""
    group = platform.group_of(number)
    if group is None:
        raise SonicDataError(f"{platform.model}: no front-panel port {number} in sonic_platforms.yaml")
    speed = group.modes().get(mode)
    if speed is None:
        raise SonicDataError(f"{platform.model} port {number}: SONiC platform {platform.platform} has no {mode} "
                             f"breakout (it offers {', '.join(sorted(group.modes()))})")
    parts = int(mode.rstrip("x"))
    offset = number - group.first
    first_lane = group.lane_base + offset * group.lane_step
    base = group.name_base + offset * group.name_step
    per_port = group.lanes // parts
    out = []
    for k in range(parts):
        lane_id = k * per_port
        lanes = ",".join(str(first_lane + lane_id + i) for i in range(per_port))
        alias = f"etp{number}" if parts == 1 else f"etp{number}{chr(ord('a') + k)}"
        out.append(SonicPort(f"Ethernet{base + lane_id}", alias, lanes, number, speed, 0 if parts == 1 else k + 1))
    return tuple(out)


@cache
def _data() -> dict[str, Any]:
    text = resources.files("generator.data").joinpath("sonic_platforms.yaml").read_text(encoding="utf-8")
    return yaml.safe_load(text)


@cache
def sonic_platform(model: str) -> SonicPlatform | None:
    """The SONiC data of a catalog model, None when sonic_platforms.yaml has none."""
    spec = _data()["models"].get(model)
    if spec is None:
        return None
    groups = tuple(
        PortGroup(g["first"], g["count"], g["speed_g"], g["lanes"], g["name_base"], g["name_step"],
                  g["lane_base"], g["lane_step"],
                  tuple(sorted(((m, int(s)) for m, s in (g.get("breakouts") or {}).items()),
                               key=lambda ms: int(ms[0].rstrip("x")))))
        for g in spec["port_groups"])
    return SonicPlatform(model, spec["platform"], tuple(sorted((str(k), v) for k, v in spec["hwsku"].items())),
                         groups)


def sonic_models() -> list[str]:
    return sorted(_data()["models"])


def switch_hwsku(plan: FabricPlan, sw: Switch) -> str | None:
    """DEVICE_METADATA.hwsku of a plan switch, None when its model has no SONiC data (FG252)."""
    platform = sonic_platform(sw.model)
    if platform is None:
        return None
    return platform.hwsku_for_speeds(p.speed_g for p in plan.ports_of(sw.name))


# ----------------------------------------------------------------------------- buffer data


@dataclass(frozen=True, slots=True)
class PgRow:
    """One row of a SKU's pg_profile_lookup.ini: the lossless PG profile buffermgrd builds."""

    speed_mbps: int
    cable: str          # "5m", exactly as CABLE_LENGTH must spell it
    size: int
    xon: int
    xoff: int
    threshold: int      # becomes the profile's dynamic_th

    @property
    def cable_m(self) -> int:
        return int(self.cable.removesuffix("m"))

    @property
    def profile_name(self) -> str:
        # buffermgrd's key: "pg_lossless_" + speed + "_" + cable + "_profile" (cfgmgr/buffermgr.cpp)
        return f"pg_lossless_{self.speed_mbps}_{self.cable}_profile"


@dataclass(frozen=True, slots=True)
class BufferLayout:
    """What a buffers_defaults_objects.j2 variant names: pools, fixed profiles, their use."""

    name: str
    pools: Mapping[str, str]                        # pool -> "ingress" | "egress"
    profiles: Mapping[str, Mapping[str, str | int]]
    ingress_profile_list: tuple[str, ...]
    egress_profile_list: tuple[str, ...]
    pg_lossy: str
    queue_lossless: str
    queue_lossy: str


@dataclass(frozen=True, slots=True)
class SkuBuffers:
    hwsku: str
    layout: BufferLayout
    table: str                                      # <platform>/<SKU> the lookup file resolves to
    rows: tuple[PgRow, ...]
    pools_by_topology: Mapping[str, Mapping[str, int]]

    @property
    def shared_headroom_pool(self) -> bool:
        return any("ingress_lossless_pool_xoff" in pools for pools in self.pools_by_topology.values())

    def rows_for(self, speed_g: int) -> tuple[PgRow, ...]:
        """The rows of one port speed, shortest cable first."""
        return tuple(sorted((r for r in self.rows if r.speed_mbps == speed_g * 1000), key=lambda r: r.cable_m))

    def row(self, speed_g: int, cable_m: float) -> PgRow | None:
        """The row a port of this speed and cable length uses: the next row up, never a shorter
        one (a shorter row's xoff cannot hold the data in flight on the longer cable). None when
        the speed has no row or the cable is longer than the longest row (rule FG254)."""
        need = math.ceil(cable_m)
        return next((r for r in self.rows_for(speed_g) if r.cable_m >= need), None)

    def pools(self, role: str) -> Mapping[str, int]:
        """Pool sizes (and the shared headroom xoff, if any) of the template a switch of this plan
        role gets (topology_by_role in sonic_buffers.yaml)."""
        return self.pools_by_topology[buffer_topology(role)]


@cache
def _buffer_data() -> dict[str, Any]:
    text = resources.files("generator.data").joinpath("sonic_buffers.yaml").read_text(encoding="utf-8")
    return yaml.safe_load(text)


def buffer_topology(role: str) -> str:
    """"t0" or "t1": which buffers_defaults_<topology>.j2 sizes a switch of this plan role."""
    by_role = _buffer_data()["topology_by_role"]
    if role not in by_role:
        raise SonicDataError(f"sonic_buffers.yaml: no buffer template for switch role {role!r}")
    return by_role[role]


@cache
def _layout(name: str) -> BufferLayout:
    spec = _buffer_data()["layouts"][name]
    return BufferLayout(name, dict(spec["pools"]), {k: dict(v) for k, v in spec["profiles"].items()},
                        tuple(spec["ingress_profile_list"]), tuple(spec["egress_profile_list"]),
                        spec["pg_lossy"], spec["queue_lossless"], spec["queue_lossy"])


@cache
def sku_buffers(hwsku: str) -> SkuBuffers:
    """The static buffer configuration NVIDIA ships for a SKU (sonic_buffers.yaml)."""
    data = _buffer_data()
    spec = data["skus"].get(hwsku)
    if spec is None:
        raise SonicDataError(f"HwSKU {hwsku} has no buffer data in sonic_buffers.yaml "
                             f"(known: {', '.join(sorted(data['skus']))})")
    table = spec["pg_profile_lookup"]
    rows = tuple(PgRow(int(sp), str(cable), int(size), int(xon), int(xoff), int(th))
                 for sp, cable, size, xon, xoff, th in data["tables"][table]["rows"])
    pools = {topo: {k: int(v) for k, v in sizes.items()} for topo, sizes in spec["pools"].items()}
    return SkuBuffers(hwsku, _layout(spec["layout"]), table, rows, pools)


def sonic_buffer_skus() -> list[str]:
    return sorted(_buffer_data()["skus"])


def port_pg_row(plan: FabricPlan, sw: Switch, port: Port) -> PgRow | None:
    """The pg_profile_lookup.ini row a SONiC switch uses for one of its ports, None when there
    is none (no platform data, FG252; no row long enough or no row for the speed, FG254)."""
    hwsku = switch_hwsku(plan, sw)
    if hwsku is None:
        return None
    return sku_buffers(hwsku).row(port.speed_g, port.cable_m)


__all__ = ["BufferLayout", "PgRow", "PortGroup", "SkuBuffers", "SonicDataError", "SonicPlatform", "SonicPort",
           "buffer_topology", "port_pg_row", "sku_buffers", "sonic_buffer_skus", "sonic_models",
           "sonic_platform", "switch_hwsku"]
