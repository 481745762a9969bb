"""plan.json: the public, documented view of the compiled plan (DESIGN.md).

`plan_to_dict` is the documented shape. The file itself is streamed record by record
(`iter_plan_json`) instead of going through `json.dumps(indent=...)`, whose indenting
encoder is pure Python and took over half of a large render (issue 14). The stream is
byte for byte what `json.dumps(plan_to_dict(plan), indent=1) + "\\n"` prints: ASCII
escapes for strings (encode_basestring_ascii is json's own C escaper), `repr` for
floats, the same separators; tests/unit/test_plan_json.py holds the two together.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from json.encoder import encode_basestring_ascii as _s
from typing import Any

from generator.plan.model import FabricPlan

# records per yielded chunk: large enough to amortise the join, small enough to stream
_CHUNK = 2048


def _num(value: float) -> int | float:
    return int(value) if float(value).is_integer() else value


def plan_to_dict(plan: FabricPlan) -> dict[str, Any]:
    return {
        "fabric": plan.fabric,
        "kind": plan.kind,
        "switch_os": {"name": plan.switch_os, "version": ".".join(map(str, plan.switch_os_version))},
        **_build_out(plan),
        **_extra(plan),
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
        "qos": _qos_dict(plan),
    }


def _build_out(plan: FabricPlan) -> dict[str, Any]:
    """{"build_out": {...}} for an intent whose topology.build_out is above its nodes (absent
    otherwise: DESIGN, build_out equal to nodes changes no byte): installed and planned nodes."""
    if plan.build_out_nodes is None:
        return {}
    return {"build_out": {"nodes": plan.build_out_nodes, "installed_nodes": len(plan.hosts)}}


def _extra(plan: FabricPlan) -> dict[str, Any]:
    """{"extra": [...]} for an intent with `extra:` entries (absent otherwise: no byte changes):
    each entry's position, whether it overrides what the plan derives, and the switches it
    applies to, for the plan's review (gitops/review.py) and anyone auditing the escape hatch."""
    if not plan.extra:
        return {}
    from generator.plan.extra import ExtraPlan

    def switches(entry: ExtraPlan) -> list[str]:
        return [s.name for s in plan.switches if entry.matches(s)]

    return {"extra": [{"entry": e.index, "override": e.override, "switches": switches(e)} for e in plan.extra]}


def _qos_dict(plan: FabricPlan) -> dict[str, Any]:
    q = plan.qos
    return {"mode": q.mode, "roce": {"dscp": q.roce_dscp, "priority": q.roce_priority, "tc": q.roce_tc},
            "cnp": {"dscp": q.cnp_dscp, "priority": q.cnp_priority, "tc": q.cnp_tc},
            "dscp_to_priority": {str(d): p for d, p in q.dscp_to_priority},
            "priority_to_tc": {str(p): tc for p, tc in q.priority_to_tc},
            "pfc_priorities": list(q.pfc_priorities),
            "ets": [{"tc": tc, "mode": mode, "bw_percent": bw} for tc, mode, bw in q.ets],
            "ecn": {"traffic_classes": list(q.ecn_tcs), "min_bytes": q.ecn_min_bytes,
                    "max_bytes": q.ecn_max_bytes, "probability": q.ecn_probability},
            "pfc_watchdog": q.pfc_watchdog, "mtu": {"switch": q.switch_mtu, "host": q.host_mtu},
            "tos": q.tos}


def _v(value: Any) -> str:
    """One scalar as json.dumps writes it (str, int, float, bool, None)."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, str):
        return _s(value)
    if isinstance(value, int):
        return int.__repr__(value)
    return json.dumps(value)          # floats: repr, and json's spelling of the non-finite ones


def _nested(value: Any, level: int) -> str:
    """A small value (qos, switch_os) as json.dumps(indent=1) writes it LEVEL levels deep."""
    return json.dumps(value, indent=1).replace("\n", "\n" + " " * level)


def _switch(s) -> str:
    return (f'  {{\n   "name": {_s(s.name)},\n   "role": {_s(s.role)},\n   "model": {_s(s.model)},\n'
            f'   "asn": {_v(s.asn)},\n   "loopback": {_s(s.loopback)},\n   "mgmt_ip": {_s(s.mgmt_ip)},\n'
            f'   "rail": {_v(s.rail)},\n   "unit": {_v(s.unit)},\n   "group": {_v(s.group)}\n  }}')


def _nic(n) -> str:
    return (f'    {{\n     "rail": {_v(n.rail)},\n     "netdev": {_s(n.netdev)},\n     "rdma": {_s(n.rdma)},\n'
            f'     "ip": {_s(n.ip)},\n     "gateway": {_s(n.gateway)},\n     "switch": {_s(n.switch)},\n'
            f'     "port": {_s(n.port)}\n    }}')


def _host(h) -> str:
    nics = "[\n" + ",\n".join(map(_nic, h.nics)) + "\n   ]" if h.nics else "[]"
    return (f'  {{\n   "name": {_s(h.name)},\n   "mgmt_ip": {_s(h.mgmt_ip)},\n   "unit": {_v(h.unit)},\n'
            f'   "group": {_v(h.group)},\n   "nics": {nics}\n  }}')


def _link(lk) -> str:
    return (f'  {{\n   "a": {{\n    "device": {_s(lk.a_device)},\n    "port": {_s(lk.a_port)}\n   }},\n'
            f'   "b": {{\n    "device": {_s(lk.b_device)},\n    "port": {_s(lk.b_port)}\n   }},\n'
            f'   "tier": {_s(lk.tier)},\n   "speed": {_s(f"{lk.speed_g}G")},\n'
            f'   "length_m": {_v(_num(lk.length_m))},\n   "cable": {_s(lk.cable)}\n  }}')


def _port(p) -> str:
    h = p.headroom
    room = "null" if h is None else (f'{{\n    "xoff": {_v(h.xoff)},\n    "xon": {_v(h.xon)},\n'
                                     f'    "size": {_v(h.size)}\n   }}')
    return (f'  {{\n   "device": {_s(p.device)},\n   "port": {_s(p.port)},\n   "speed": {_s(f"{p.speed_g}G")},\n'
            f'   "cable_m": {_v(_num(p.cable_m))},\n   "lossless": {_v(p.lossless)},\n   "headroom": {room}\n  }}')


def _records(key: str, items, fmt) -> Iterator[str]:
    """ ` "key": [ ... ]` at the top level, CHUNK records per piece."""
    if not items:
        yield f" {_s(key)}: []"
        return
    yield f" {_s(key)}: [\n"
    for start in range(0, len(items), _CHUNK):
        piece = ",\n".join(map(fmt, items[start:start + _CHUNK]))
        yield piece if start == 0 else ",\n" + piece
    yield "\n ]"


def iter_plan_json(plan: FabricPlan) -> Iterator[str]:
    """plan.json in pieces: the same text as render_plan_json, never whole in memory."""
    version = ".".join(map(str, plan.switch_os_version))
    yield (f'{{\n "fabric": {_s(plan.fabric)},\n "kind": {_s(plan.kind)},\n "switch_os": '
           + _nested({"name": plan.switch_os, "version": version}, 1) + ",\n")
    for key, value in (_build_out(plan) | _extra(plan)).items():
        yield f" {_s(key)}: " + _nested(value, 1) + ",\n"
    yield from _records("switches", plan.switches, _switch)
    yield ",\n"
    yield from _records("hosts", plan.hosts, _host)
    yield ",\n"
    yield from _records("links", plan.links, _link)
    yield ",\n"
    yield from _records("ports", plan.ports, _port)
    yield ',\n "qos": ' + _nested(_qos_dict(plan), 1) + "\n}\n"


def render_plan_json(plan: FabricPlan) -> str:
    return "".join(iter_plan_json(plan))
