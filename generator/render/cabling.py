"""cabling.csv: what the cabling team pulls, one row per link."""

from __future__ import annotations

import csv
import io

from generator.plan.model import FabricPlan
from generator.render.plan_json import _num

HEADER = ["a_device", "a_port", "b_device", "b_port", "speed", "length_m", "cable"]


def render_cabling(plan: FabricPlan) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(HEADER)
    for lk in plan.links:
        w.writerow([lk.a_device, lk.a_port, lk.b_device, lk.b_port, f"{lk.speed_g}G", _num(lk.length_m), lk.cable])
    return buf.getvalue()
