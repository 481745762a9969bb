"""`fabricgen sot pull`: the physical facts back from the DCIM as the `name,serial,mac` CSV that
`fabricgen day0 --inventory` reads (DESIGN.md, "The inventory CSV") (issue 37).

One row per device of the installed plan that Nautobot gives both a serial and a management MAC:
a switch's eth0, a GPU server's management NIC (day 0 reserves its address by that MAC). A device
without either is left out (day0 names the switches it cannot provision). The rows pass day0's own
parser before anything is written, so a pulled file is one day0 accepts; two devices with one
serial or one MAC are refused naming both. Against the file a previous pull wrote, every serial or
MAC that changed is reported.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field
from pathlib import Path

from generator.day0.inventory import InventoryError, parse_inventory
from generator.plan.model import FabricPlan
from generator.sot.nautobot import SotError, State
from generator.sot.objects import SWITCH_MGMT


@dataclass(slots=True)
class Pulled:
    text: str
    rows: int
    missing: list[str] = field(default_factory=list)       # installed devices without serial or MAC
    changed: list[str] = field(default_factory=list)       # one line per value changed since the last pull


def inventory_rows(plan: FabricPlan, state: State) -> tuple[list[tuple[str, str, str]], list[str]]:
    wanted = [(sw.name, SWITCH_MGMT) for sw in plan.switches] + [(h.name, plan.mgmt_interface) for h in plan.hosts]
    rows, missing = [], []
    by_serial: dict[str, str] = {}
    by_mac: dict[str, str] = {}
    for name, iface in wanted:
        serial, mac = state.serials.get(name, "").strip(), state.macs.get((name, iface), "").strip().lower()
        if not serial or not mac:
            missing.append(name)
            continue
        if serial in by_serial:
            raise SotError(f"Nautobot gives devices {by_serial[serial]} and {name} the same serial {serial}; "
                           "correct the serial of the wrong one in Nautobot (check the labels), then pull again")
        if mac in by_mac:
            raise SotError(f"Nautobot gives {by_mac[mac]} and {name}:{iface} the same MAC {mac}; "
                           "correct the wrong interface's MAC in Nautobot, then pull again")
        by_serial[serial], by_mac[mac] = name, f"{name}:{iface}"
        rows.append((name, serial, mac))
    return rows, missing


def _csv(rows: list[tuple[str, str, str]]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(("name", "serial", "mac"))
    w.writerows(rows)
    return buf.getvalue()


def _previous(path: Path) -> dict[str, tuple[str, str]]:
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError):
        return {}
    out = {}
    for row in list(csv.reader(io.StringIO(text)))[1:]:
        if len(row) == 3:
            out[row[0].strip()] = (row[1].strip(), row[2].strip().lower())
    return out


def pull(plan: FabricPlan, state: State, output: str | Path) -> Pulled:
    rows, missing = inventory_rows(plan, state)
    text = _csv(rows)
    try:
        parse_inventory(text, f"Nautobot's data for {plan.fabric}", plan)
    except InventoryError as exc:
        raise SotError(f"{exc}; correct it in Nautobot, then pull again") from None
    before = _previous(Path(output))
    changed = []
    for name, serial, mac in rows:
        old = before.get(name)
        if old is None:
            continue
        if old[0] != serial:
            changed.append(f"changed: {name} serial {old[0]} -> {serial} since the last pull")
        if old[1] != mac:
            changed.append(f"changed: {name} mac {old[1]} -> {mac} since the last pull")
    return Pulled(text, len(rows), missing, changed)


__all__ = ["Pulled", "inventory_rows", "pull"]
