"""What a change orders or frees: the bill-of-materials delta of `fabricgen plan`.

Both sides' parts are counted by the BOM code `fabricgen capacity` prints (generator/plan/bom.py)
on each side's compiled plan, and compared item by item (plan/bom.py's bom_delta, as `advise`
does): switches by model, NIC ports, transceivers, cables and fibres by type, tier and length.
A side without an intent (a ref where the file does not exist yet) has no parts. A rendered
directory (`--against DIR`) holds no intent to compile, so the delta is not guessed from its files:
the section says so and how to get it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from generator.plan.bom import CATEGORY_ORDER, bill_of_materials, bom_delta
from generator.plan.model import FabricPlan
from generator.safe_text import markdown_text

# the words a procurement reader uses, per BOM category
CATEGORY_WORDS = {"switch": "switches", "nic-port": "NIC ports", "transceiver": "transceivers",
                  "cable": "cables", "fibre": "fibres"}


@dataclass(frozen=True)
class BomChange:
    rows: tuple[tuple[str, str, int, int], ...] = ()     # (category, item, before, after), changed only
    missing: str = ""                                       # why there is no delta; "" when there is one

    def as_json(self) -> dict[str, Any]:
        if self.missing:
            return {"delta": None, "missing": self.missing}
        return {"delta": [{"category": c, "item": i, "before": a, "after": b, "change": b - a}
                          for c, i, a, b in self.rows], "missing": None}

    def totals(self) -> list[tuple[str, int]]:
        """(category words, net change) per category that changes, in the BOM's category order."""
        net = {c: 0 for c in CATEGORY_ORDER}
        for c, _, a, b in self.rows:
            net[c] += b - a
        return [(CATEGORY_WORDS[c], n) for c, n in net.items() if n]


def bom_change(old: FabricPlan | None, new: FabricPlan, *, old_missing: bool = False) -> BomChange:
    """OLD None: no intent on the old side (every part is new); OLD_MISSING: the old side is a
    rendered directory, whose parts are not known."""
    if old_missing:
        return BomChange(missing="--against a rendered directory: it holds no intent to count parts from; "
                                 "plan against the git ref it was rendered from for the BOM delta")
    before = bill_of_materials(old) if old is not None else ()
    rows = bom_delta(before, bill_of_materials(new))
    order = {c: i for i, c in enumerate(CATEGORY_ORDER)}
    return BomChange(tuple(sorted(rows, key=lambda r: order[r[0]])))


def _signed(n: int) -> str:
    return f"{n:+,}"


def _headline(bom: BomChange) -> str:
    totals = bom.totals()
    if not totals:
        return "no part count changes"
    return ", ".join(f"{_signed(n)} {words}" for words, n in totals)


def bom_text_lines(bom: BomChange, indent: str = "    ") -> list[str]:
    if bom.missing:
        return [f"bill of materials: not compared ({bom.missing})"]
    out = [f"bill of materials: {_headline(bom)}"]
    out += [f"{indent}{_signed(b - a)} {c}: {i} ({a:,} -> {b:,})" for c, i, a, b in bom.rows]
    return out


def bom_markdown(bom: BomChange) -> list[str]:
    if bom.missing:
        return [f"**Bill of materials:** not compared: {markdown_text(bom.missing)}.", ""]
    out = [f"**Bill of materials:** {markdown_text(_headline(bom))}", ""]
    if not bom.rows:
        return out
    out += ["| part | item | before | after | change |", "|---|---|---:|---:|---:|"]
    out += [f"| {CATEGORY_WORDS[c]} | {markdown_text(i)} | {a:,} | {b:,} | {_signed(b - a)} |"
            for c, i, a, b in bom.rows]
    return out + [""]
