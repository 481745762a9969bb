"""Helpers of the day-0 kit tests: compiled example plans and inventories made from them."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from generator.day0.inventory import Inventory, parse_inventory
from generator.intent.loader import load_intent
from generator.plan.compile import compile_plan
from generator.plan.model import FabricPlan
from tests.conftest import REPO, example

URL = "http://192.168.0.2:8080"


def examples_with_management() -> list[str]:
    """Every example intent with a `management:` section (Cumulus and SONiC)."""
    return sorted(p.parent.name for p in (REPO / "inventories").glob("*/fabric.yaml")
                  if any(line.startswith("management:") for line in p.read_text().splitlines()))


@cache
def compiled(name: str) -> tuple[str, FabricPlan]:
    loaded = load_intent(example(name))
    return loaded.text, compile_plan(loaded.intent)


def mac_of(i: int) -> str:
    return f"44:38:39:00:{i >> 8:02x}:{i & 0xff:02x}"


def inventory_text(plan: FabricPlan, *, switches: int | None = None, hosts: int = 0) -> str:
    """name,serial,mac rows for the first SWITCHES switches (all by default) and HOSTS hosts."""
    chosen = plan.switches if switches is None else plan.switches[:switches]
    rows = ["name,serial,mac"]
    rows += [f"{sw.name},SN{i:05d},{mac_of(i).upper() if i % 2 else mac_of(i)}" for i, sw in enumerate(chosen)]
    rows += [f"{h.name},SRV{i:04d},02:00:00:00:{i >> 8:02x}:{i & 0xff:02x}" for i, h in enumerate(plan.hosts[:hosts])]
    return "\n".join(rows) + "\n"


def inventory(plan: FabricPlan, **kwargs) -> Inventory:
    return parse_inventory(inventory_text(plan, **kwargs), "inventory.csv", plan)


def write_inventory(path: Path, plan: FabricPlan, **kwargs) -> Path:
    path.write_text(inventory_text(plan, **kwargs))
    return path
