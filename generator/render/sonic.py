"""SONiC config_db.json per switch, from the plan and generator/data/sonic_platforms.yaml.

Why Python and not templates/sonic/*.j2: config_db.json is one JSON object whose tables
must come out key-sorted, so tables of different features interleave (BUFFER_* sits
between BGP_NEIGHBOR and CABLE_LENGTH); a Jinja partial per feature would have to
manage commas and escaping and could still emit invalid JSON. Instead each feature is
one small function below that returns its tables as plain dicts (the structured
context, pyavd style), and json.dumps(sort_keys=True) makes the bytes. Every value is
a string, as config_db stores them, except leaf-lists that frrcfgd iterates (a JSON
list of strings, as config_db.json spells them).

Routing uses SONiC's unified FRR mode (frrcfgd, sonic-frr-mgmt-framework), not bgpcfgd:
bgpcfgd's bgpd.main.conf.j2 announces only Loopback0 and VLAN prefixes, so a leaf's
host-facing /31s (INTERFACE entries) would never reach the other leaves. frrcfgd builds
FRR from the generic BGP_* tables, where every advertised prefix is an explicit
BGP_GLOBALS_AF_NETWORK entry.

Every number comes from the plan (ECN, ETS, MTU, addresses, ASNs) or from SONiC's own
defaults recorded, with sources, in sonic_platforms.yaml and, for buffers (pools, PG
headroom rows), sonic_buffers.yaml: NVIDIA's per-SKU templates, not the plan's formula
headroom, so buffermgrd finds a row for every port. Port names:
the plan speaks Cumulus (swp1, swp1s0); SONiC names are derived from platform.json lanes.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

import yaml

from generator.common.json_text import config_db_text
from generator.plan.model import ROLE_LEAF, FabricPlan, Port, Switch
from generator.plan.qos import NVUE_DEFAULT_DSCP_RANGES
from generator.plan.sonic_catalog import (  # noqa: F401  (re-exported: generator.render.sonic API)
    PortGroup,
    SonicDataError,
    SonicPlatform,
    SonicPort,
    _data,
    sku_buffers,
    sonic_models,
    sonic_platform,
)

# SONiC tables reference the QoS maps by name; AZURE is the name SONiC's own qos templates and
# tools (ecnconfig, `config qos reload`) use, so operators find the usual objects.
MAP_NAME = "AZURE"
WRED_NAME = "AZURE_LOSSLESS"
LOOPBACK = "Loopback0"
# DEVICE_METADATA.type is what SONiC's buffers_config.j2 reads to pick the SKU's buffer
# template (sonic-buildimage files/build_templates/buffers_config.j2: ToRRouter -> t0,
# LeafRouter -> t1, SpineRouter -> t2), so it must name the template whose pools the render
# uses (generator/data/sonic_buffers.yaml topology_by_role) or `config qos reload` would size
# the pools differently. A fabric leaf faces servers like a SONiC ToR; Mellanox SKUs ship no
# t2 template, so both spine tiers are LeafRouter.
DEVICE_TYPE = {ROLE_LEAF: "ToRRouter"}
SPINE_TYPE = "LeafRouter"
# FRR's datacenter profile timers, the ones the Cumulus target runs with, so both targets
# detect a dead fabric link equally fast.
BGP_TIMERS = {"keepalive": "3", "holdtime": "9"}
# frrcfgd (unified FRR mode) reads BGP_* tables of a VRF; the fabric lives in the default one.
VRF = "default"
AFI_SAFI = "ipv4_unicast"
# SONiC's FRR is built with the traditional defaults, so `bgp ebgp-requires-policy` is on and an
# eBGP session without a policy exchanges no routes (bgpcfgd writes `no bgp ebgp-requires-policy`,
# frrcfgd has no field for it): every fabric session gets this permit-all route-map both ways.
ROUTE_MAP = "FABRIC_PERMIT_ALL"
# frrcfgd understands the YANG's admin_status up/down for BGP_NEIGHBOR_AF only from 202505
# (sonic-buildimage #21697); earlier its template turns "up" into `no neighbor X activate`.
# Before that, `bgp default ipv4-unicast` (BGP_GLOBALS default_ipv4_unicast) activates peers.
FRRCFGD_UP_DOWN = (2025, 5)
# BGP_GLOBALS_AF max_ebgp_paths range in sonic-bgp-global.yang
MAX_ECMP = 256

_SWP_RE = re.compile(r"^swp(\d+)(?:s(\d+))?$")


def _physical_number(port: Port) -> int:
    m = _SWP_RE.match(port.physical)
    if m is None:
        raise SonicDataError(f"{port.device}: cannot map port {port.physical!r} to a front-panel number")
    return int(m.group(1))


def _split_index(port: Port) -> int:
    m = _SWP_RE.match(port.port)
    return int(m.group(2)) if m and m.group(2) is not None else 0


# ----------------------------------------------------------------------------- per-switch context


@dataclass(frozen=True, slots=True)
class SwitchLayout:
    """Every SONiC port of a switch in front-panel order, with the plan port it carries (or None)."""

    platform: SonicPlatform
    hwsku: str
    ports: tuple[tuple[SonicPort, Port | None], ...]

    def used(self) -> list[tuple[str, Port]]:
        return [(sp.name, p) for sp, p in self.ports if p is not None]


def switch_layout(plan: FabricPlan, sw: Switch) -> SwitchLayout:
    platform = sonic_platform(sw.model)
    if platform is None:
        raise SonicDataError(f"{sw.name}: switch model {sw.model} has no SONiC platform data "
                             f"(known: {', '.join(sonic_models())})")
    plan_ports = plan.ports_of(sw.name)
    wanted: dict[int, str] = {}            # front-panel number -> breakout mode the plan uses
    carried: dict[tuple[int, int], Port] = {}
    for p in plan_ports:
        n = _physical_number(p)
        wanted[n] = p.breakout or "1x"
        carried[(n, _split_index(p))] = p
    # An unused port takes the layout its group already runs, so the switch matches one SKU's layout.
    group_mode: dict[int, str] = {}
    for n, mode in sorted(wanted.items()):
        group = platform.group_of(n)
        if group is None:
            raise SonicDataError(f"{sw.name}: {sw.model} has no front-panel port {n} in sonic_platforms.yaml")
        group_mode.setdefault(group.first, mode)
    ports: list[tuple[SonicPort, Port | None]] = []
    for n, group in platform.front_panel():
        mode = wanted.get(n) or group_mode.get(group.first, "1x")
        if mode not in group.modes():
            mode = "1x"
        for k, sp in enumerate(platform.ports(n, mode)):
            ports.append((sp, carried.pop((n, k), None)))
    if carried:
        (n, k), p = next(iter(carried.items()))
        raise SonicDataError(f"{sw.name}: plan port {p.port} has no SONiC port in the {wanted[n]} layout of "
                             f"front-panel port {n}")
    hwsku = platform.hwsku_for_speeds(p.speed_g for p in plan_ports)
    return SwitchLayout(platform, hwsku, tuple(ports))


def lossless_profile_name(speed_g: int, cable_m: int) -> str:
    return f"pg_lossless_{speed_g * 1000}_{cable_m}m_profile"


def _ranges(values: Iterable[int]) -> list[str]:
    """[0, 1, 2, 4, 5] -> ["0-2", "4-5"]: SONiC keys accept a queue range."""
    out: list[str] = []
    run: list[int] = []
    for v in sorted(values):
        if run and v != run[-1] + 1:
            out.append(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]))
            run = []
        run.append(v)
    if run:
        out.append(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]))
    return out


# ----------------------------------------------------------------------------- QoS classification


@dataclass(frozen=True, slots=True)
class Classification:
    """The plan's DSCP -> priority -> TC contract, spelled as SONiC's maps."""

    dscp_to_tc: dict[int, int]
    tc_to_pg: dict[int, int]
    lossless_pgs: tuple[int, ...]
    pfc_to_pg: dict[int, int]
    pfc_to_queue: dict[int, int]


def classification(plan: FabricPlan) -> Classification:
    q = plan.qos
    prio_tc = dict(q.priority_to_tc)
    explicit = dict(q.dscp_to_priority)
    dscp_to_tc = {}
    for dscp in range(64):
        # The Cumulus target's RoCE profile also maps DSCP 24-31 / 48-55 to SP3 / SP6; mirroring it
        # keeps a packet's class the same whichever OS the fabric runs.
        prio = explicit.get(dscp)
        if prio is None:
            prio = next((p for p, dscps in NVUE_DEFAULT_DSCP_RANGES.items() if dscp in dscps), 0)
        dscp_to_tc[dscp] = prio_tc[prio]
    lossless_tcs = {prio_tc[p] for p in q.pfc_priorities}
    # A lossless TC gets a PG of its own (numbered like the TC); everything lossy shares PG 0.
    tc_to_pg = {tc: tc if tc in lossless_tcs else 0 for tc in range(8)}
    pfc_to_pg = {p: tc_to_pg[prio_tc[p]] for p in q.pfc_priorities}
    pfc_to_queue = {p: prio_tc[p] for p in q.pfc_priorities}     # queue n serves TC n
    return Classification(dscp_to_tc, tc_to_pg, tuple(sorted(set(pfc_to_pg.values()))), pfc_to_pg, pfc_to_queue)


def _strmap(mapping: dict[int, int]) -> dict[str, str]:
    return {str(k): str(v) for k, v in mapping.items()}


# ----------------------------------------------------------------------------- features


@cache
def _day0() -> dict[str, Any]:
    text = resources.files("generator.data").joinpath("sonic_day0.yaml").read_text(encoding="utf-8")
    return yaml.safe_load(text)


def _metadata(plan: FabricPlan, sw: Switch, layout: SwitchLayout) -> dict[str, Any]:
    # No `mac`: DEVICE_METADATA.localhost.mac is the switch's burned-in base MAC, which only the
    # device knows (DEVICE_STATE.md); provisioning reads it from the switch and merges it in
    # (generator/render/sonic_managed.py provision_config). hwsku, platform, buffer_model and
    # the routing mode are reload-only: a day-2 deploy refuses to change them.
    meta = {
        "bgp_asn": str(sw.asn),
        "buffer_model": "traditional",
        "default_pfcwd_status": "enable" if plan.qos.pfc_watchdog else "disable",
        # unified + frr_mgmt_framework_config: frrcfgd builds FRR from the BGP_* tables (see _routing)
        "docker_routing_config_mode": "unified",
        "frr_mgmt_framework_config": "true",
        "hostname": sw.name,
        "hwsku": layout.hwsku,
        "platform": layout.platform.platform,
        "type": DEVICE_TYPE.get(sw.role, SPINE_TYPE),
        **_day0()["metadata"],
    }
    if plan.management is not None and plan.management.timezone:
        meta["timezone"] = plan.management.timezone
    return {"DEVICE_METADATA": {"localhost": meta}}


def _management(plan: FabricPlan, sw: Switch) -> dict[str, Any]:
    """eth0 in the management VRF (sonic-yang-models doc/Configuration.md MGMT_* examples), and
    with `management:` NTP, syslog and DNS through it. Always rendered: `config reload` of a file
    without MGMT_INTERFACE leaves eth0 without its address (DEVICE_STATE.md). A day-2 deploy
    never changes MGMT_* (sonic_managed.py); it is day-0 material."""
    m = plan.management
    if m is not None:
        prefix_len, gateway = m.prefix_len, m.gateway
    else:
        pool = ipaddress.IPv4Network(plan.mgmt_pool)
        prefix_len, gateway = pool.prefixlen, str(pool.network_address + 1)
    tables: dict[str, Any] = {
        "MGMT_INTERFACE": {f"eth0|{sw.mgmt_ip}/{prefix_len}": {"gwaddr": gateway}},
        "MGMT_PORT": {"eth0": {"admin_status": "up", "alias": "eth0"}},
        "MGMT_VRF_CONFIG": {"vrf_global": {"mgmtVrfEnabled": "true"}},
    }
    if m is None:
        return tables
    if m.ntp:
        # sonic-ntp.yang: NTP runs in one VRF; `mgmt` needs mgmtVrfEnabled (its must statement).
        # src_intf is a one-interface string, as init_cfg.json and Configuration.md write it.
        tables["NTP"] = {"global": {"src_intf": "eth0", "vrf": "mgmt"}}
        tables["NTP_SERVER"] = {s: {"association_type": "server", "iburst": "on"} for s in m.ntp}
    tables["SYSLOG_SERVER"] = {s: {"vrf": "mgmt"} for s in m.syslog}
    tables["DNS_NAMESERVER"] = {s: {} for s in m.dns}
    if m.banner:
        tables["BANNER_MESSAGE"] = {"global": {"login": m.banner, "state": "enabled"}}
    return tables


def _system() -> dict[str, Any]:
    """FEATURE rows of the services the fabric needs and the counters verify reads (sonic_day0.yaml)."""
    data = _day0()
    features = {}
    for name, spec in data["features"].items():
        features[name] = {**spec, **data["feature_common"]}
    return {"FEATURE": features, "FLEX_COUNTER_TABLE": {k: dict(v) for k, v in data["flex_counters"].items()}}


def _ports(plan: FabricPlan, sw: Switch, layout: SwitchLayout) -> dict[str, Any]:
    fec = _data()["fec_by_speed_g"]
    port_table: dict[str, dict[str, str]] = {}
    neighbors: dict[str, dict[str, str]] = {}
    for sp, p in layout.ports:
        entry = {
            "admin_status": "up" if p is not None else "down",
            "alias": sp.alias,
            "index": str(sp.index),
            "lanes": sp.lanes,
            "mtu": str(plan.qos.switch_mtu),
            "speed": str(sp.speed_g * 1000),
            "subport": str(sp.subport),
        }
        if sp.speed_g in fec:
            entry["fec"] = fec[sp.speed_g]
        if p is not None:
            entry["description"] = f"{p.peer_device}:{p.peer_port}"
            neighbors[sp.name] = {"name": p.peer_device, "port": p.peer_port, "local_port": sp.name}
        port_table[sp.name] = entry
    return {"PORT": port_table, "DEVICE_NEIGHBOR": neighbors}


def _routing(plan: FabricPlan, sw: Switch, layout: SwitchLayout) -> dict[str, Any]:
    interfaces: dict[str, dict[str, str]] = {}
    neighbors: dict[str, dict[str, str]] = {}
    neighbor_afs: dict[str, dict[str, Any]] = {}
    loopback = f"{sw.loopback}/32"
    networks = {f"{VRF}|{AFI_SAFI}|{loopback}": {}}
    explicit_activate = plan.switch_os_version >= FRRCFGD_UP_DOWN
    for name, p in layout.used():
        if p.ip is None:
            raise SonicDataError(f"{sw.name} {p.port}: unnumbered link to {p.peer_device}; SONiC config_db needs "
                                 "a /31 pool in addressing.fabric_links")
        interfaces[name] = {}
        interfaces[f"{name}|{p.ip}"] = {}
        if p.peer_asn is None:
            # a host's /31: announced explicitly, so GPUs on other leaves can reach it
            networks[f"{VRF}|{AFI_SAFI}|{ipaddress.ip_interface(p.ip).network}"] = {}
            continue
        neighbors[f"{VRF}|{p.peer_ip}"] = {"admin_status": "up", "asn": str(p.peer_asn),
                                           "local_addr": p.ip.split("/")[0], "name": p.peer_device, **BGP_TIMERS}
        af: dict[str, Any] = {"route_map_in": [ROUTE_MAP], "route_map_out": [ROUTE_MAP]}
        if explicit_activate:
            af["admin_status"] = "up"
        neighbor_afs[f"{VRF}|{p.peer_ip}|{AFI_SAFI}"] = af
    bgp_global = {"load_balance_mp_relax": "true", "local_asn": str(sw.asn), "router_id": sw.loopback}
    if not explicit_activate:
        bgp_global["default_ipv4_unicast"] = "true"
    # every ECMP set is at most as wide as the switch's number of eBGP peers; with a build-out, as
    # its peers there (reserved ports included), so a later phase never changes it
    peers = max(len(neighbors), plan.build_out_fabric_links.get(sw.name, 0))
    max_paths = min(max(peers, 1), MAX_ECMP)
    return {
        "LOOPBACK_INTERFACE": {LOOPBACK: {}, f"{LOOPBACK}|{loopback}": {}},
        "INTERFACE": interfaces,
        "BGP_GLOBALS": {VRF: bgp_global},
        "BGP_GLOBALS_AF": {f"{VRF}|{AFI_SAFI}": {"max_ebgp_paths": str(max_paths)}},
        "BGP_GLOBALS_AF_NETWORK": networks,
        "BGP_NEIGHBOR": neighbors,
        "BGP_NEIGHBOR_AF": neighbor_afs,
        "ROUTE_MAP_SET": {ROUTE_MAP: {}} if neighbors else {},
        "ROUTE_MAP": {f"{ROUTE_MAP}|10": {"route_operation": "permit"}} if neighbors else {},
    }


def _buffers(plan: FabricPlan, sw: Switch, layout: SwitchLayout, cls: Classification) -> dict[str, Any]:
    """BUFFER_* and CABLE_LENGTH as NVIDIA's static templates lay them out for the switch's SKU
    (generator/data/sonic_buffers.yaml: buffers_defaults_objects.j2, the t0/t1 pool sizes and
    pg_profile_lookup.ini). Lossy traffic and CNPs get the lossy pools; every lossless PG profile
    is the lookup row of the port's speed and its cable rounded up to the next row, named as
    buffermgrd names it, with the row's numbers, so buffermgrd finds a row for every port and the
    rendered profile equals the one it would build. (The plan's formula headroom serves Cumulus.)"""
    sku = sku_buffers(layout.hwsku)
    lay = sku.layout
    sizes = sku.pools(sw.role)
    pools: dict[str, dict[str, str]] = {}
    for pool, kind in lay.pools.items():
        entry = {"mode": "dynamic", "size": str(sizes[pool]), "type": kind}
        if f"{pool}_xoff" in sizes:
            entry["xoff"] = str(sizes[f"{pool}_xoff"])      # the shared headroom pool
        pools[pool] = entry
    profiles = {name: {k: str(v) for k, v in spec.items()} for name, spec in lay.profiles.items()}
    cable: dict[str, str] = {}
    pgs: dict[str, dict[str, str]] = {}
    queues: dict[str, dict[str, str]] = {}
    ingress: dict[str, dict[str, str]] = {}
    egress: dict[str, dict[str, str]] = {}
    lossless_queues = set(cls.pfc_to_queue.values())
    lossy_queues = _ranges(q for q in range(7) if q not in lossless_queues)
    for name, p in layout.used():
        row = sku.row(p.speed_g, p.cable_m)
        if row is None:
            raise SonicDataError(f"{sw.name} {p.port}: {layout.hwsku}'s pg_profile_lookup.ini has no row for "
                                 f"{p.speed_g}G with a {p.cable_m:g} m cable (rule FG254)")
        cable[name] = row.cable
        # config_db keeps a profile_list leaf-list as one comma-joined string
        ingress[name] = {"profile_list": ",".join(lay.ingress_profile_list)}
        egress[name] = {"profile_list": ",".join(lay.egress_profile_list)}
        pgs[f"{name}|0"] = {"profile": lay.pg_lossy}
        for rng in lossy_queues:
            queues[f"{name}|{rng}"] = {"profile": lay.queue_lossy}
        if not p.lossless:
            continue
        profiles[row.profile_name] = {"dynamic_th": str(row.threshold), "pool": "ingress_lossless_pool",
                                      "size": str(row.size), "xoff": str(row.xoff), "xon": str(row.xon)}
        for pg in cls.lossless_pgs:
            pgs[f"{name}|{pg}"] = {"profile": row.profile_name}
        for q in sorted(lossless_queues):
            queues[f"{name}|{q}"] = {"profile": lay.queue_lossless}
    return {
        "CABLE_LENGTH": {MAP_NAME: cable} if cable else {},
        "BUFFER_POOL": pools,
        "BUFFER_PROFILE": profiles,
        "BUFFER_PG": pgs,
        "BUFFER_QUEUE": queues,
        "BUFFER_PORT_INGRESS_PROFILE_LIST": ingress,
        "BUFFER_PORT_EGRESS_PROFILE_LIST": egress,
    }


def _qos_maps(plan: FabricPlan, layout: SwitchLayout, cls: Classification) -> dict[str, Any]:
    q = plan.qos
    tables: dict[str, Any] = {
        "DSCP_TO_TC_MAP": {MAP_NAME: _strmap(cls.dscp_to_tc)},
        "TC_TO_QUEUE_MAP": {MAP_NAME: {str(tc): str(tc) for tc in range(8)}},
        "TC_TO_PRIORITY_GROUP_MAP": {MAP_NAME: _strmap(cls.tc_to_pg)},
    }
    if cls.pfc_to_pg:
        tables["MAP_PFC_PRIORITY_TO_QUEUE"] = {MAP_NAME: _strmap(cls.pfc_to_queue)}
        tables["PFC_PRIORITY_TO_PRIORITY_GROUP_MAP"] = {MAP_NAME: _strmap(cls.pfc_to_pg)}
    port_maps = {}
    pfc = ",".join(str(p) for p in q.pfc_priorities)
    for name, p in layout.used():
        entry = {"dscp_to_tc_map": MAP_NAME, "tc_to_pg_map": MAP_NAME, "tc_to_queue_map": MAP_NAME}
        if p.lossless and pfc:
            entry.update(pfc_enable=pfc, pfc_to_pg_map=MAP_NAME, pfc_to_queue_map=MAP_NAME)
            if q.pfc_watchdog:
                entry["pfcwd_sw_enable"] = pfc
        port_maps[name] = entry
    tables["PORT_QOS_MAP"] = port_maps
    return tables


def scheduler_name(tc: int) -> str:
    return f"scheduler.{tc}"


def _scheduling(plan: FabricPlan, layout: SwitchLayout) -> dict[str, Any]:
    q = plan.qos
    schedulers = {}
    for tc, mode, percent in q.ets:
        schedulers[scheduler_name(tc)] = {"type": "DWRR", "weight": str(percent)} if mode == "dwrr" \
            else {"type": "STRICT"}
    wred = {}
    if q.ecn_tcs:
        wred[WRED_NAME] = {
            "ecn": "ecn_all",
            "green_drop_probability": str(q.ecn_probability),
            "green_max_threshold": str(q.ecn_max_bytes),
            "green_min_threshold": str(q.ecn_min_bytes),
            "wred_green_enable": "true",
        }
    queues = {}
    ecn = set(q.ecn_tcs)
    for name, _ in layout.used():
        for tc, _mode, _pct in q.ets:
            entry = {"scheduler": scheduler_name(tc)}
            if tc in ecn:
                entry["wred_profile"] = WRED_NAME
            queues[f"{name}|{tc}"] = entry      # queue n serves TC n (TC_TO_QUEUE_MAP)
    return {"SCHEDULER": schedulers, "WRED_PROFILE": wred, "QUEUE": queues}


def _pfc_watchdog(plan: FabricPlan, layout: SwitchLayout) -> dict[str, Any]:
    if not plan.qos.pfc_watchdog:
        return {}
    wd = _data()["pfc_watchdog"]
    detection, restoration, poll = plan.qos.pfc_watchdog_ms
    # SONiC's defaults unless the intent sets a timer (sonic_platforms.yaml says why not start_default's)
    table = {"GLOBAL": {"POLL_INTERVAL": str(poll or wd["poll_ms"])}}
    for name, p in layout.used():
        if p.lossless:
            table[name] = {"action": wd["action"], "detection_time": str(detection or wd["detection_ms"]),
                           "restoration_time": str(restoration or wd["restoration_ms"])}
    return {"PFC_WD": table}


# ----------------------------------------------------------------------------- document


def switch_config(plan: FabricPlan, sw: Switch) -> dict[str, dict[str, dict[str, Any]]]:
    """config_db of one switch as nested dicts: table -> key -> field -> string."""
    layout = switch_layout(plan, sw)
    cls = classification(plan)
    config: dict[str, Any] = {}
    for tables in (
        _metadata(plan, sw, layout),
        _management(plan, sw),
        _system(),
        _ports(plan, sw, layout),
        _routing(plan, sw, layout),
        _buffers(plan, sw, layout, cls),
        _qos_maps(plan, layout, cls),
        _scheduling(plan, layout),
        _pfc_watchdog(plan, layout),
    ):
        for table, rows in tables.items():
            if rows:                    # an empty table says nothing and config replace would churn on it
                config[table] = rows
    return config


def render_config_db(plan: FabricPlan, sw: Switch) -> str:
    config = switch_config(plan, sw)
    if plan.extra:
        from generator.render.extra import merge_sonic

        merge_sonic(config, plan, sw)          # the intent's `extra:`, merged last
    return config_db_text(config) + "\n"


__all__ = ["SonicDataError", "classification", "lossless_profile_name", "render_config_db", "sonic_models",
           "sonic_platform", "switch_config", "switch_layout"]
