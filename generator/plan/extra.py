"""The intent's `extra:` entries (the escape hatch, issue 36): which switches each applies to.

An entry holds config the model does not know (SNMP, an extra ACL, a local route-map) as an NVUE
subtree (Cumulus) and/or config_db tables (SONiC), for the switches its `match` selects: every
key given (role, unit, group, rail, device glob) must match; an empty match is every switch.
Entries apply in intent order, merged last into the rendered config (generator/render/extra.py).
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field


@dataclass(frozen=True)
class ExtraPlan:
    index: int                                  # position in the intent's `extra:` list (key path extra[i])
    role: str | None = None
    unit: int | None = None
    group: int | None = None
    rail: int | None = None
    device: str | None = None
    nvue: dict | None = field(default=None, hash=False, compare=False)
    sonic: dict | None = field(default=None, hash=False, compare=False)
    override: bool = False

    def matches(self, sw) -> bool:
        return ((self.role is None or sw.role == self.role) and (self.unit is None or sw.unit == self.unit)
                and (self.group is None or sw.group == self.group) and (self.rail is None or sw.rail == self.rail)
                and (self.device is None or fnmatch.fnmatchcase(sw.name, self.device)))


def build_extras(intent) -> tuple[ExtraPlan, ...]:
    return tuple(ExtraPlan(i, e.match.role, e.match.unit, e.match.group, e.match.rail, e.match.device,
                           e.nvue, e.sonic, e.override) for i, e in enumerate(intent.extra))


def extras_for(plan, sw) -> list[ExtraPlan]:
    """The entries that apply to switch SW, in intent order."""
    return [e for e in plan.extra if e.matches(sw)]
