"""The Cumulus ZTP script of the kit (templates/day0/cumulus-ztp.sh.j2): one script for every
switch, with a table of name, eth0 MAC and the sha256 of each switch's startup.yaml baked in.

Every switch of the plan has an entry by name (a switch whose DHCP server gives it its planned
hostname finds itself without an inventory row); inventory switches also by MAC. Every value
reaches the shell through the `shquote` filter.
"""

from __future__ import annotations

from dataclasses import dataclass

from generator import __version__
from generator.day0.inventory import Inventory
from generator.deploy.drivers.nvue import NVUE_ERROR_PREFIX
from generator.plan.model import FabricPlan
from generator.render.environment import template

TAG = "fabricgen-ztp"


@dataclass(frozen=True, slots=True)
class Entry:
    name: str
    mac: str | None
    sha256: str


def release(plan: FabricPlan) -> str:
    """switch_os.version as the intent writes it for Cumulus (major.minor)."""
    major, minor = plan.switch_os_version
    return f"{major}.{minor}"


def render_cumulus_script(plan: FabricPlan, inventory: Inventory, base_url: str, hashes: dict[str, str]) -> str:
    """HASHES: switch name -> sha256 of http/switches/<name>/startup.yaml."""
    macs = {name: row.mac for name, row in inventory.switches.items()}
    entries = [Entry(sw.name, macs.get(sw.name), hashes[sw.name]) for sw in plan.switches]
    return template("day0/cumulus-ztp.sh.j2").render(
        fabric=plan.fabric, release=release(plan), base_url=base_url, tag=TAG,
        replace=plan.management is not None, entries=entries, generator=__version__,
        error_prefix=NVUE_ERROR_PREFIX)


__all__ = ["TAG", "Entry", "release", "render_cumulus_script"]
