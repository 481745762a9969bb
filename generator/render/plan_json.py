"""plan.json: the public, documented view of the compiled plan (DESIGN.md)."""

from __future__ import annotations

import json
from typing import Any

from generator.plan.model import FabricPlan


def _num(value: float) -> int | float:
    return int(value) if float(value).is_integer() else value


def plan_to_dict(plan: FabricPlan) -> dict[str, Any]:
    q = plan.qos
    return {
        "fabric": plan.fabric,
        "kind": plan.kind,
        "switch_os": {"name": plan.switch_os, "version": ".".join(map(str, plan.switch_os_version))},
        "switches": [{"name": s.name, "role": s.role, "model": s.model, "asn": s.asn, "loopback": s.loopback,
                      "mgmt_ip": s.mgmt_ip, "rail": s.rail, "unit": s.unit, "group": s.group}
                     for s in plan.switches],
        "hosts": [{"name": h.name, "mgmt_ip": h.mgmt_ip, "unit": h.unit, "group": h.group,
                   "nics": [{"rail": n.rail, "netdev": n.netdev, "rdma": n.rdma, "ip": n.ip, "gateway": n.gateway,
                             "switch": n.switch, "port": n.port} for n in h.nics]}
                  for h in plan.hosts],
        "links": [{"a": {"device": lk.a_device, "port": lk.a_port}, "b": {"device": lk.b_device, "port": lk.b_port},
                   "tier": lk.tier, "speed": f"{lk.speed_g}G", "length_m": _num(lk.length_m), "cable": lk.cable}
                  for lk in plan.links],
        "ports": [{"device": p.device, "port": p.port, "speed": f"{p.speed_g}G", "cable_m": _num(p.cable_m),
                   "lossless": p.lossless,
                   "headroom": None if p.headroom is None else
                   {"xoff": p.headroom.xoff, "xon": p.headroom.xon, "size": p.headroom.size}}
                  for p in plan.ports],
        "qos": {"mode": q.mode, "roce": {"dscp": q.roce_dscp, "priority": q.roce_priority, "tc": q.roce_tc},
                "cnp": {"dscp": q.cnp_dscp, "priority": q.cnp_priority, "tc": q.cnp_tc},
                "dscp_to_priority": {str(d): p for d, p in q.dscp_to_priority},
                "priority_to_tc": {str(p): tc for p, tc in q.priority_to_tc},
                "pfc_priorities": list(q.pfc_priorities),
                "ets": [{"tc": tc, "mode": mode, "bw_percent": bw} for tc, mode, bw in q.ets],
                "ecn": {"traffic_classes": list(q.ecn_tcs), "min_bytes": q.ecn_min_bytes,
                        "max_bytes": q.ecn_max_bytes, "probability": q.ecn_probability},
                "pfc_watchdog": q.pfc_watchdog, "mtu": {"switch": q.switch_mtu, "host": q.host_mtu},
                "tos": q.tos},
    }


def render_plan_json(plan: FabricPlan) -> str:
    return json.dumps(plan_to_dict(plan), indent=1) + "\n"
