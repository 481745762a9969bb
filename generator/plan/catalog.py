"""Switch model catalog (generator/data/switch_models.yaml) as typed, cached objects."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from importlib import resources

import yaml


@dataclass(frozen=True, slots=True)
class PortGroup:
    first: int
    count: int
    speed_g: int
    breakouts: tuple[tuple[str, int], ...]     # (mode "2x", speed per split port)


@dataclass(frozen=True, slots=True)
class LogicalPort:
    name: str             # swp1 or swp1s0
    physical: str         # swp1
    breakout: str | None  # "2x" when split
    native_speed_g: int   # the physical port's speed (for lanes)


@dataclass(frozen=True, slots=True)
class SwitchModel:
    name: str
    asic: str
    description: str
    port_groups: tuple[PortGroup, ...]

    @property
    def max_speed_g(self) -> int:
        return max(g.speed_g for g in self.port_groups)

    def logical_ports(self, speed_g: int) -> tuple[LogicalPort, ...]:
        return _logical_ports(self, speed_g)

    def speeds(self) -> list[int]:
        out = set()
        for g in self.port_groups:
            out.add(g.speed_g)
            out.update(s for _, s in g.breakouts)
        return sorted(out)


@cache
def _logical_ports(model: SwitchModel, speed_g: int) -> tuple[LogicalPort, ...]:
    """Every port usable at `speed_g`, in front-panel order; split ports where the
    native speed is higher (a 400G NIC on an 800G SN5600 port uses 2x breakout)."""
    out: list[LogicalPort] = []
    for group in model.port_groups:
        for n in range(group.first, group.first + group.count):
            physical = f"swp{n}"
            if group.speed_g == speed_g:
                out.append(LogicalPort(physical, physical, None, group.speed_g))
                continue
            for mode, split_speed in group.breakouts:
                if split_speed == speed_g:
                    for k in range(int(mode.rstrip("x"))):
                        out.append(LogicalPort(f"{physical}s{k}", physical, mode, group.speed_g))
                    break
    return tuple(out)


@cache
def catalog() -> dict[str, SwitchModel]:
    raw = yaml.safe_load(resources.files("generator.data").joinpath("switch_models.yaml").read_text())
    models = {}
    for name, spec in raw.items():
        groups = tuple(
            PortGroup(g["first"], g["count"], g["speed_g"],
                      tuple(sorted(((m, int(s)) for m, s in g.get("breakouts", {}).items()),
                                   key=lambda ms: int(ms[0].rstrip("x")))))
            for g in spec["port_groups"])
        models[name] = SwitchModel(name, spec["asic"], spec.get("description", ""), groups)
    return models


def get_model(name: str) -> SwitchModel | None:
    return catalog().get(name)


def unknown_model(name: str) -> str:
    """The message for a model the catalog lacks: the closest names, else the list."""
    import difflib

    names = sorted(catalog())
    folded = {n.casefold(): n for n in names}
    close = [folded[c] for c in difflib.get_close_matches(name.casefold(), list(folded), n=2, cutoff=0.6)]
    if close:
        return f"unknown switch model {name!r}: did you mean {' or '.join(close)}? (models: {', '.join(names)})"
    return f"unknown switch model {name!r}: use one of {', '.join(names)}"
