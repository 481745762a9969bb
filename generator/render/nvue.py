"""Cumulus Linux NVUE: structured config per switch, then templates/nvue/.

The context holds only what the templates print; every value comes from the plan.
Two syntax generations: 5.14-and-earlier (`enable: on`, `ip address`) and 5.15+
(`state: enabled`, `ipv4 address`).

The management plane (eth0, users, NTP/DNS/syslog, the factory ACLs, API and SSH server) is
rendered only when the plan has one (`plan.management`); without it the deploy carries the
switch's own. Routing (the connected-route filter, multipath width, BFD, adaptive routing)
is rendered for every switch.
"""

from __future__ import annotations

import json
import re
from functools import cache
from typing import Any

from generator.plan.compile import pfc_cable_m, port_sort_key
from generator.plan.model import FabricPlan, ManagementPlan, Switch
from generator.plan.qos import NVUE_LOSSLESS_DEFAULTS, dscp_maps_by_default
from generator.render.environment import template

NEW_SYNTAX = (5, 15)
# `service syslog <vrf>` left the object model in 5.13: from then on `system syslog server <id> vrf`
# (NVUE object model 5.13/5.14: /system/syslog/server/{server-id} with `vrf`, no /service/syslog)
SYSTEM_SYSLOG = (5, 13)
MGMT_VRF = "mgmt"
# the connected routes BGP may announce: loopbacks and host-facing /31s (Management-VRF page:
# without a route-map `redistribute connected` announces every connected subnet)
CONNECTED_ROUTE_MAP = "fabricgen-connected"
CONNECTED_PREFIX_LIST = "fabricgen-announce"
# Cumulus BFD defaults (Bidirectional-Forwarding-Detection-BFD page: 300 ms rx/tx, multiplier 3),
# written into the 5.15+ profile so that the profile says what it does
BFD_PROFILE = "fabricgen"
BFD_DEFAULTS = {"detect-multiplier": 3, "min-rx-interval": 300, "min-tx-interval": 300}
_KEY_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$")
# port names repeat on every switch (swp1..swp128): parse each once per process
_port_key = cache(port_sort_key)


def pfc_profile_name(cable_m: int) -> str:
    return f"roce-lossless-{cable_m}m"


@cache
def _pfc_profile_of(cable_m: float) -> str:
    """A port's PFC profile name from its cable length: a handful of lengths, ~500k ports at 98k GPUs."""
    return pfc_profile_name(pfc_cable_m(cable_m))


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


def _quoted(text: str) -> str:
    """A YAML double-quoted scalar (JSON's escapes are valid YAML): banners hold any text."""
    return json.dumps(text, ensure_ascii=False)


def _authorized_keys(keys: tuple[str, ...]) -> list[dict[str, str]]:
    """`ssh authorized-key <id>` entries: the key's comment as its id when usable and unique,
    else key-<n> (n = position in the intent), so the ids stay stable from render to render."""
    out, seen = [], set()
    for n, line in enumerate(keys, start=1):
        kind, blob, *comment = line.split(None, 2)
        key_id = comment[0].strip() if comment else ""
        if not _KEY_ID.match(key_id) or key_id in seen:
            key_id = f"key-{n}"
        seen.add(key_id)
        out.append({"id": key_id, "type": kind, "key": blob})
    return out


def _management(plan: FabricPlan, m: ManagementPlan, sw: Switch) -> dict[str, Any]:
    return {
        "vrf": MGMT_VRF,
        "address": f"{sw.mgmt_ip}/{m.prefix_len}",
        "gateway": m.gateway,
        "ntp": list(m.ntp),
        "dns": list(m.dns),
        "syslog": list(m.syslog),
        "system_syslog": plan.switch_os_version >= SYSTEM_SYSLOG,
        "timezone": m.timezone,
        "banner": None if m.banner is None else _quoted(m.banner),
        "users": [{"name": u.name, "role": u.role, "hashed_password": u.hashed_password,
                   "authorized_keys": _authorized_keys(u.ssh_keys)} for u in sorted(m.users, key=lambda u: u.name)],
    }


def _routing(plan: FabricPlan) -> dict[str, Any]:
    r = plan.routing
    return {
        "max_paths": r.max_paths,
        "bfd": r.bfd,
        "bfd_profile": BFD_PROFILE,
        "bfd_defaults": BFD_DEFAULTS,
        "adaptive_routing": r.adaptive_routing,
        "route_map": CONNECTED_ROUTE_MAP,
        "prefix_list": CONNECTED_PREFIX_LIST,
        # loopbacks are /32s, host links /31s; eth0's subnet (mgmt VRF) and numbered
        # switch-to-switch /31s (addressing.fabric_links, disjoint by FG403) never match
        # exactly /32 and exactly /31 (ge = le): nothing wider from these pools either
        "announce": [{"prefix": plan.loopback_pool, "len": 32}, {"prefix": plan.rail_pool, "len": 31}],
    }


NVUE_WATCHDOG_POLL_MS = 100      # `qos pfc-watchdog polling-interval` default (QoS page)


def switch_context(plan: FabricPlan, sw: Switch) -> dict[str, Any]:
    ports = plan.ports_of(sw.name)
    lossless = plan.qos.mode == "lossless"
    # split parents (swp1 with breakout 2x) sort just before their split ports (swp1s0)
    interfaces = [{"name": phys, "breakout": mode}
                  for phys, mode in sorted({(p.physical, p.breakout) for p in ports if p.breakout})]
    neighbors = []
    watchdog, adaptive = plan.qos.pfc_watchdog, plan.routing.adaptive_routing
    for p in ports:
        interfaces.append({
            "name": p.port,
            "breakout": None,
            "description": f"{p.peer_device}:{p.peer_port}",
            "speed": f"{p.speed_g}G",
            "address": p.ip,
            "pfc_profile": _pfc_profile_of(p.cable_m) if p.lossless else None,
            "watchdog": watchdog and p.lossless,
            # Equal-Cost-Multipath-Load-Sharing page: enable AR on every port of the ECMP
            # route, i.e. the switch-to-switch ports (host ports are single next hops)
            "adaptive_routing": adaptive and p.peer_asn is not None,
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
        "mgmt": None if plan.management is None else _management(plan, plan.management, sw),
        "routing": _routing(plan),
        "mtu": plan.qos.switch_mtu,
        "interfaces": sorted(interfaces, key=lambda i: _port_key(i["name"])),
        "neighbors": sorted(neighbors, key=lambda n: _port_key(n["id"]) if n["type"] == "unnumbered"
                            else (0, tuple(map(int, n["id"].split("."))))),
        "qos": {
            "mode": plan.qos.mode,
            "lossless": lossless,
            "pfc_priorities": plan.qos.pfc_priorities,
            "pfc_profiles": [{"name": pfc_profile_name(c), "cable_m": c} for c in profiles],
            "watchdog_timers": _watchdog_timers(plan) if watchdog else None,
            **_qos_overrides(plan),
        },
    }


def _watchdog_timers(plan: FabricPlan) -> dict[str, int] | None:
    """`qos pfc-watchdog polling-interval` / `robustness` (QoS page, 5.6+) where the intent sets
    them; detection = polling-interval x robustness (FG215 keeps it a whole multiple)."""
    detection, _restoration, poll = plan.qos.pfc_watchdog_ms
    timers = {}
    if poll is not None:
        timers["polling_interval"] = poll
    if detection is not None:
        timers["robustness"] = max(1, detection // (poll or NVUE_WATCHDOG_POLL_MS))
    return timers or None


def render_switch(plan: FabricPlan, sw: Switch) -> str:
    text = template("nvue/startup.yaml.j2").render(switch_context(plan, sw))
    if plan.extra:
        from generator.render.extra import nvue_item

        text += nvue_item(plan, sw)            # the intent's `extra:`, merged last
    return text
