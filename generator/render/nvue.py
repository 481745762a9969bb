"""Cumulus Linux NVUE: structured config per switch, then templates/nvue/.

The context holds only what the templates print; every value comes from the plan.
Two syntax generations: 5.14-and-earlier (`enable: on`, `ip address`) and 5.15+
(`state: enabled`, `ipv4 address`).
"""

from __future__ import annotations

from typing import Any

from generator.plan.compile import pfc_cable_m, port_sort_key
from generator.plan.model import FabricPlan, Switch
from generator.plan.qos import NVUE_LOSSLESS_DEFAULTS, dscp_maps_by_default
from generator.render.environment import template

NEW_SYNTAX = (5, 15)


def pfc_profile_name(cable_m: int) -> str:
    return f"roce-lossless-{cable_m}m"


def _qos_overrides(plan: FabricPlan) -> dict[str, Any]:
    """Explicit keys only where the intent departs from what `qos roce mode lossless` sets."""
    q = plan.qos
    d = NVUE_LOSSLESS_DEFAULTS
    dscp_map = [(dscp, prio) for dscp, prio in q.dscp_to_priority if not dscp_maps_by_default(dscp, prio)]
    ecn = None
    thresholds = (q.ecn_min_bytes, q.ecn_max_bytes, q.ecn_probability)
    if q.ecn_tcs and (thresholds != (d["ecn_min"], d["ecn_max"], d["ecn_probability"])
                      or q.roce_tc != d["roce_priority"]):
        ecn = {"tcs": q.ecn_tcs, "min": q.ecn_min_bytes, "max": q.ecn_max_bytes, "probability": q.ecn_probability}
    ets = None
    bw = {tc: pct for tc, mode, pct in q.ets if mode == "dwrr"}
    if bw.get(q.roce_tc) != d["roce_bw"] or q.roce_tc != d["roce_priority"] or q.cnp_tc != d["cnp_priority"]:
        ets = [{"tc": tc, "mode": mode, "bw": pct} for tc, mode, pct in q.ets]
    return {"dscp_map": dscp_map, "ecn": ecn, "ets": ets}


def switch_context(plan: FabricPlan, sw: Switch) -> dict[str, Any]:
    ports = plan.ports_of(sw.name)
    lossless = plan.qos.mode == "lossless"
    # split parents (swp1 with breakout 2x) sort just before their split ports (swp1s0)
    interfaces = [{"name": phys, "breakout": mode}
                  for phys, mode in sorted({(p.physical, p.breakout) for p in ports if p.breakout})]
    neighbors = []
    for p in ports:
        cable = pfc_cable_m(p.cable_m)
        interfaces.append({
            "name": p.port,
            "breakout": None,
            "description": f"{p.peer_device}:{p.peer_port}",
            "speed": f"{p.speed_g}G",
            "address": p.ip,
            "pfc_profile": pfc_profile_name(cable) if p.lossless else None,
            "watchdog": plan.qos.pfc_watchdog and p.lossless,
        })
        if p.peer_asn is not None:
            if p.ip is None:
                neighbors.append({"id": p.port, "remote_as": "external", "type": "unnumbered"})
            else:
                neighbors.append({"id": p.peer_ip, "remote_as": p.peer_asn, "type": "numbered"})
    profiles = sorted({pfc_cable_m(p.cable_m) for p in ports if p.lossless})
    return {
        "new_syntax": plan.switch_os_version >= NEW_SYNTAX,
        "version": ".".join(str(v) for v in plan.switch_os_version),
        "hostname": sw.name,
        "asn": sw.asn,
        "loopback": sw.loopback,
        "mtu": plan.qos.switch_mtu,
        "interfaces": sorted(interfaces, key=lambda i: port_sort_key(i["name"])),
        "neighbors": sorted(neighbors, key=lambda n: port_sort_key(n["id"]) if n["type"] == "unnumbered"
                            else (0, tuple(int(x) for x in n["id"].split(".")))),
        "qos": {
            "mode": plan.qos.mode,
            "lossless": lossless,
            "pfc_priorities": plan.qos.pfc_priorities,
            "pfc_profiles": [{"name": pfc_profile_name(c), "cable_m": c} for c in profiles],
            **_qos_overrides(plan),
        },
    }


def render_switch(plan: FabricPlan, sw: Switch) -> str:
    return template("nvue/startup.yaml.j2").render(switch_context(plan, sw))
