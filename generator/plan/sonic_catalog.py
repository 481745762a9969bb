"""SONiC platform and SKU data of the catalog: front-panel port groups, lanes, breakouts, hwskus.

Read from generator/data/sonic_platforms.yaml (which names its upstream sources). Plan-side
data, so checks (generator/checks/sonic_rules.py) and render both read it from here.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

import yaml


class SonicDataError(ValueError):
    """The plan needs something sonic_platforms.yaml does not provide (rules FG252/FG253 say so first)."""


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


__all__ = ["PortGroup", "SonicDataError", "SonicPlatform", "SonicPort", "sonic_models",
           "sonic_platform"]
