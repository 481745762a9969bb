"""Bill of materials from the plan: switches, NIC ports, and the parts every link is built of.

A link is not one part. What is ordered is counted from the plan's switch cages (front-panel
ports, `Port.physical`) and their splits (`Port.breakout`), after NVIDIA's LinkX line for
100G-PAM4 (Spectrum-4 / NDR, "LinkX 100G-PAM4 Product Line Overview",
https://docs.nvidia.com/networking/display/400g100gpam4ovpub/linkx-100g-pam4-product-line-overview):

- copper for short runs: passive DAC up to 3 m, linear active copper (ACC/LACC) to 5 m, "in
  800G straight and 400G or 200G OSFP split ends": a host-facing cage split 2x400G to two NICs
  is ONE splitter cable, an unsplit cage one straight cable;
- optics otherwise: every used switch cage holds one transceiver; an 800G cage takes a
  twin-port OSFP (two 4-lane optical ports, MPO-12/APC; e.g. MMA4Z00-NS 2xSR4 multimode to 50 m,
  MMS4X00-NM 2xDR4 single-mode to 500 m, MMS4X50-NM 2xFR4 duplex LC to 2 km), so a cage split
  to two spines is one transceiver, not two; each NIC end takes a single-port 400G transceiver
  (ConnectX-7 OSFP/QSFP112, SR4 or DR4); the fibres are ordered separately ("Twin-Port
  transceivers require ordering two fibers", MMS4X00-NM application overview): one straight
  fibre per 400G optical port, two per unsplit 800G link, and a 1:2 splitter fibre per two
  200G NIC ends ("1:2 fiber splitters are used in both transceiver ports"); a 200G link between
  two split switch cages is a fibre path through a breakout panel (its lanes' partners sit on
  different switches at each end);
- no AOC: LinkX offers 100G-PAM4 AOCs only for links down to 200G HDR/QSFP56, so a plan link
  the intent types AOC (optical, `topology.cable_types`) is bought as transceivers plus fibre.

Part names stay generic (form factor, speed, optics type, medium); the examples above are the
LinkX order numbers they correspond to on Spectrum-4. Cages of other switch models are named by
their speed only.
"""

from __future__ import annotations

import csv
import io
import math
import re
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from generator.plan.catalog import get_model
from generator.plan.model import (
    TIER_GLOBAL,
    TIER_HOST_LEAF,
    TIER_LEAF_SPINE,
    TIER_SPINE_SUPER,
    FabricPlan,
    Port,
)

_TIER_ORDER = {t: i for i, t in enumerate((TIER_HOST_LEAF, TIER_LEAF_SPINE, TIER_SPINE_SUPER, TIER_GLOBAL))}
DAC_MAX_M = 3.0             # passive copper at 100G-PAM4 (LinkX overview)
ACC_MAX_M = 5.0             # linear active copper
MULTIMODE_MAX_M = 50.0      # 850 nm over 50 um fibre
DR_MAX_M = 500.0            # single-mode DR4 (MMS4X00-NM); beyond, 2xFR4 to 2 km
OPTICAL_PORT_G = 400        # one MPO-12/APC port of a twin-port OSFP: 4 lanes of 100G-PAM4
TWIN_PORT_CAGE_G = 800
CATEGORY_ORDER = ("switch", "nic-port", "transceiver", "cable", "fibre")


@dataclass(frozen=True, slots=True)
class BomLine:
    category: str       # switch | nic-port | transceiver | cable | fibre
    item: str
    detail: str
    quantity: int

    def as_dict(self) -> dict:
        return {"category": self.category, "item": self.item, "detail": self.detail, "quantity": self.quantity}


def _length(m: float) -> str:
    return f"{m:g} m"


def optics_type(length_m: float) -> str:
    """SR4 (multimode), DR4 or FR4 (single mode) for a run of LENGTH_M."""
    return "SR4" if length_m <= MULTIMODE_MAX_M else "DR4" if length_m <= DR_MAX_M else "FR4"


def _fibre_kind(optics: str) -> str:
    return {"SR4": "multimode MPO-12/APC", "DR4": "single-mode MPO-12/APC"}.get(optics, "single-mode duplex LC")


def _copper(length_m: float) -> str:
    return "DAC" if length_m <= DAC_MAX_M else "ACC"


_SWP = re.compile(r"(\d+)$")


def _cage_speed(model: str, physical: str, fallback: int) -> int:
    """The native speed of front-panel port PHYSICAL (swp33 -> 800 on an SN5600)."""
    spec = get_model(model)
    m = _SWP.search(physical)
    if spec is not None and m:
        n = int(m.group(1))
        for group in spec.port_groups:
            if group.first <= n < group.first + group.count:
                return group.speed_g
    return fallback


def _cage_transceiver(cage_g: int, optics: str) -> str:
    if cage_g == TWIN_PORT_CAGE_G:
        return f"800G twin-port OSFP 2x400G {optics} transceiver"
    return f"{cage_g}G {optics} switch transceiver"


def bill_of_materials(plan: FabricPlan) -> tuple[BomLine, ...]:
    counts: Counter[tuple[str, str, str]] = Counter()

    def add(category: str, item: str, detail: str, n: int = 1) -> None:
        counts[(category, item, detail)] += n

    for model, n in Counter(sw.model for sw in plan.switches).items():
        roles = sorted({sw.role for sw in plan.switches if sw.model == model})
        add("switch", model, ", ".join(roles), n)
    nic_ports = Counter(link.speed_g for link in plan.links if link.tier == TIER_HOST_LEAF)
    for speed, n in nic_ports.items():
        add("nic-port", f"{speed}G", f"{len(plan.hosts)} hosts x {plan.rails} rails", n)

    # the intent types each tier's cables (DAC: copper, AOC: optical); a tier has one type
    medium = {link.tier: link.cable for link in plan.links}
    models = {sw.name: sw.model for sw in plan.switches}
    cages: dict[tuple[str, str], list[Port]] = defaultdict(list)
    for port in plan.ports:
        cages[(port.device, port.physical)].append(port)
    for (device, physical), ports in cages.items():
        first = ports[0]
        tier, speed, length = first.tier, first.speed_g, max(p.cable_m for p in ports)
        cage_g = _cage_speed(models.get(device, ""), physical, speed * len(ports))
        where = f"{tier}, {_length(length)}"
        if medium.get(tier) == "DAC":
            if tier == TIER_HOST_LEAF:
                # one cable from the cage to all of its NICs; switch-to-switch copper: per link, below
                kind = _copper(length)
                add("cable", f"{cage_g}G to {len(ports)}x{speed}G splitter {kind}" if len(ports) > 1
                    else f"{speed}G {kind}", where)
            continue
        optics = optics_type(length)
        add("transceiver", _cage_transceiver(cage_g, optics), f"{tier}, switch cage")
        if tier != TIER_HOST_LEAF:
            continue
        # a 200G end is a 400G transceiver on two lanes (LinkX: "automatically creates 200Gb/s")
        nic_g = max(speed, OPTICAL_PORT_G)
        add("transceiver", f"{nic_g}G {optics} NIC transceiver" + (f", at {speed}G" if speed < nic_g else ""),
            f"{tier}, host end", len(ports))
        if speed < OPTICAL_PORT_G and optics != "FR4":
            # two 200G ends share one 4-lane optical port of the cage through a 1:2 splitter fibre
            add("fibre", f"{_fibre_kind(optics)} 1:2 splitter fibre", where, math.ceil(len(ports) / 2))
        else:
            add("fibre", f"{_fibre_kind(optics)} fibre", where, len(ports) * max(1, speed // OPTICAL_PORT_G))
    # switch-to-switch cables and fibres: once per link, whatever the cages at its ends
    for link in plan.links:
        if link.tier == TIER_HOST_LEAF:
            continue
        where = f"{link.tier}, {_length(link.length_m)}"
        if link.cable == "DAC":
            add("cable", f"{link.speed_g}G {_copper(link.length_m)}", where)
        elif link.speed_g < OPTICAL_PORT_G:
            # two lanes of a 4-lane optical port at each end, the ends' partners on different
            # switches: no straight fibre pairs them, a breakout panel or cassette does
            kind = _fibre_kind(optics_type(link.length_m))
            add("fibre", f"{kind} fibre path via breakout panel, {link.speed_g}G", where)
        else:
            kind = _fibre_kind(optics_type(link.length_m))
            add("fibre", f"{kind} fibre", where, link.speed_g // OPTICAL_PORT_G)

    def order(item: tuple[tuple[str, str, str], int]) -> tuple:
        (category, name, detail), _ = item
        tier = detail.split(",")[0]
        return CATEGORY_ORDER.index(category), _TIER_ORDER.get(tier, -1), name, detail

    return tuple(BomLine(c, i, d, n) for (c, i, d), n in sorted(counts.items(), key=order))


def bom_csv(lines: tuple[BomLine, ...]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["category", "item", "detail", "quantity"])
    for line in lines:
        w.writerow([line.category, line.item, line.detail, line.quantity])
    return buf.getvalue()


def bom_delta(before: Iterable[BomLine], after: Iterable[BomLine]) -> tuple[tuple[str, str, int, int], ...]:
    """(category, item, before, after) per BOM item whose quantity differs, BEFORE's order then
    AFTER's new items: an item is the line's name with its detail (`SN5600, leaf, spine`,
    `400G DAC, host-leaf, 3 m`), a NIC port's by speed alone (its detail names the host count)."""
    def by_item(lines: Iterable[BomLine]) -> Counter[tuple[str, str]]:
        c: Counter[tuple[str, str]] = Counter()
        for line in lines:
            c[(line.category, f"{line.item}, {line.detail}" if line.category != "nic-port" else line.item)] += \
                line.quantity
        return c

    a, b = by_item(before), by_item(after)
    keys = list(a) + [k for k in b if k not in a]
    return tuple((cat, item, a[(cat, item)], b[(cat, item)]) for cat, item in keys if a[(cat, item)] != b[(cat, item)])
