"""Operational `nv show` answers of a simulated Cumulus switch, from its applied config and the world.

Shapes. NVUE's `-o json` prints the same tree its table shows (keys = the row names, nested
as the indentation nests them). Sources, Cumulus Linux user guide and NVUE command reference:
- `nv show interface <p> lldp [neighbor <id>]` (NVUE reference, LLDP and Interface pages,
  5.1+): `neighbor: {<system-name>: {age, chassis: {chassis-id, management-address-ipv4,
  system-description, system-name}, port: {description, name, ttl, type}}}` — as the
  documented `nv show interface swp51 lldp neighbor spine01` table nests them. The
  `capability` list under chassis is our addition (lldpd reports it; NVUE's key is unverified).
  A server running lldpd with its defaults shows its NIC's MAC as `name` (the reference's
  `nv show interface lldp` example: "swp1 ... server01 48:b0:2d:76:ee:8e"); `type` is lldpd's
  subtype name (ifname, local, mac: lldpd src/lib/atoms/port.c), assumed to pass through NVUE.
- `nv show interface <p> counters` (Monitoring-Interfaces-and-Transceivers-with-NVUE, 5.5+):
  the table shows carrier-transitions and Receive/Transmit rows (octets, unicast, multicast,
  broadcast packets; ACL/buffer/queue drops; alignment, FCS, jabber, length, oversize, symbol,
  undersize and total errors). Its JSON keys are not printed in the docs: we use the
  `in-`/`out-` names that `nv show interface <p> link stats` documents (in-bytes, in-pkts,
  in-drops, in-errors, out-...), plus `in-fcs-errors`-style names for the error rows.
- `nv show interface <p> counters qos pfc-stats` (NVUE reference QoS page, 5.5+; before 5.5
  `nv show interface <p> qos counters pfc-stats`): rows per switch-priority with
  rx-pause-frames, rx-pause-duration, tx-pause-frames, tx-pause-duration. JSON keyed by the
  switch-priority id (assumed: NVUE keys lists by their id).
- `nv show interface <p> counters qos port-stats`: rx-stats / tx-stats with
  ecn-marked-packets (transmit only), mc-buffer-discards, pause-frames (QoS page lists the
  rx-stats / tx-stats attributes). ECN marks are per port on NVUE, not per traffic class.
- `nv show interface <p> counters`: `carrier-transitions` (the Monitoring page's table row) counts
  every carrier change, down and up, since the counters were cleared.
- `nv show interface <p> qos pfc-watchdog` (Cumulus Linux user guide, Quality of Service, "PFC
  Watchdog", 5.6+; `interface <p> qos pfc-watchdog state enable|disable` is the documented set
  path): the port's watchdog state and, per switch-priority, `deadlock-count`, the PFC storms
  (deadlocks) it detected. NVUE prints no restored count. The JSON nesting ({state,
  switch-priority: {<prio>: {deadlock-count}}}) is assumed from the table, as for the others; a
  port whose config leaves the watchdog off counts nothing.
- Hardware and time (NVUE reference Show-Commands pages Platform, NTP, RIB, Router-Nexthop; the
  NVOS `nv show platform environment` table lists Name / Type / State per fan, psu, temperature
  sensor). The JSON nesting below is assumed from those tables, as for the other answers:
  `nv show platform environment -o json`: {fan: {FAN1/1: {state}}, psu: {PSU1: {state}},
  temperature: {ASIC: {current, max, crit, state}}};
  `nv show platform transceiver -o json` (every port in one read): {swp1: {status: plugged|
  unplugged, cable-type, identifier, temperature: {temperature, high-alarm-threshold,
  low-alarm-threshold}, channel: {channel-1: {rx-power: {power, high-alarm-threshold,
  low-alarm-threshold}, tx-power: {...}}}}} (powers in dBm; a DAC has no temperature or channel);
  `nv show interface <p> link phy-detail -o json`: {raw-ber, fec-corrected-codewords,
  fec-uncorrected-codewords} (key names unverified);
  `nv show system ntp -o json` (5.15+) / `nv show service ntp mgmt -o json` (5.14-): the
  documented table's status (synchronised | unsynchronised), reference, offset and [server] rows;
  `nv show vrf default router rib ipv4 route -o json`: {prefix: {route-entry: {1: {protocol,
  nexthop-group-id, flags}}}} (the documented table's NHGId column), and
  `nv show router nexthop -o json`: {rib: {id: {resolved-via: {interface or address: {flags}}}}}
  (the Router-Nexthop page's example); an ECMP group lists one resolved-via per path.
- `nv show vrf default router bgp neighbor -o json` (BGP troubleshooting page): keyed by
  neighbor; 5.11 and earlier print the detailed view, 5.12+ a summary unless
  `--view=detail`. The lab prints the detailed fields for both: `remote-as`, `state`,
  `local-as: {asn}`, `address-family: {ipv4-unicast: {rx-prefix, tx-prefix}}` (documented in
  the `--view=detail` example and the neighbor table), plus `peer-router-id`, `up-time`
  (seconds) and `admin-state` whose NVUE names are not shown in the docs we have.
"""

from __future__ import annotations

import ipaddress
import time

from generator.lab import platform_oper
from generator.lab.world import BgpConfig, Fabric, NeighborConfig, PortConfig, chassis_mac

DEFAULT_MTU = 9216      # Interface page: link mtu default 9216
LLDP_TTL = 120


def _addresses(entry: dict) -> tuple[str, ...]:
    found = []
    for key in ("ip", "ipv4"):            # 5.14-: interface <p> ip address; 5.15+: ipv4 address
        for address in (entry.get(key) or {}).get("address") or {}:
            try:
                interface = ipaddress.ip_interface(address)
            except ValueError:
                continue                   # `dhcp`
            if interface.version == 4:
                found.append(address)
    return tuple(sorted(found))


def _on(value) -> bool:
    return str(value) in ("on", "enabled", "enable", "true")


def _enabled(node: dict, default: bool) -> bool:
    if "enable" in node:
        return _on(node["enable"])
    if "state" in node:
        return _on(node["state"])
    return default


def ports_of(config: dict) -> dict[str, PortConfig]:
    """Switch ports and lo of an applied NVUE tree (eth0 is management, not fabric)."""
    out = {}
    for name, entry in (config.get("interface") or {}).items():
        if name == "eth0" or not isinstance(entry, dict):
            continue
        link = entry.get("link") or {}
        if "breakout" in link and name != "lo":
            continue                       # a split front-panel port: its sub-ports carry traffic
        state = link.get("state")
        admin_up = "down" not in state if isinstance(state, dict) else str(state or "up") != "down"
        try:
            mtu = int(link.get("mtu") or DEFAULT_MTU)
        except ValueError:
            mtu = DEFAULT_MTU
        out[name] = PortConfig(admin_up, str(link["speed"]) if link.get("speed") else None, mtu,
                               _addresses(entry), str(entry.get("description") or ""))
    return out


def _prefix_list_permits(policy: dict, name: str, prefix: str) -> bool:
    plist = ((policy.get("prefix-list") or {}).get(name) or {}).get("rule") or {}
    network = ipaddress.ip_network(prefix)
    for _, rule in sorted(plist.items(), key=lambda kv: int(kv[0]) if str(kv[0]).isdigit() else 0):
        for match, bounds in (rule.get("match") or {}).items():
            entry = ipaddress.ip_network(match, strict=False)
            bounds = bounds or {}
            low = int(bounds.get("min-prefix-len") or entry.prefixlen)
            high = int(bounds.get("max-prefix-len") or (low if "min-prefix-len" not in bounds else 32))
            if network.version == entry.version and network.subnet_of(entry) and low <= network.prefixlen <= high:
                return str(rule.get("action", "permit")) == "permit"
    return False                           # an implicit deny ends every prefix list


def _route_map(policy: dict, name: str | None):
    if not name:
        return lambda prefix: True
    rules = ((policy.get("route-map") or {}).get(name) or {}).get("rule")
    if not rules:
        return lambda prefix: False        # redistribute through a missing route-map: nothing passes

    def permits(prefix: str) -> bool:
        for _, rule in sorted(rules.items(), key=lambda kv: int(kv[0]) if str(kv[0]).isdigit() else 0):
            match = rule.get("match") or {}
            plist = match.get("ip-prefix-list")
            if plist and not _prefix_list_permits(policy, str(plist), prefix):
                continue
            return "deny" not in (rule.get("action") or {"permit": {}})
        return False
    return permits


def bgp_of(config: dict) -> BgpConfig | None:
    router = (config.get("router") or {}).get("bgp") or {}
    vrf = (((config.get("vrf") or {}).get("default") or {}).get("router") or {}).get("bgp") or {}
    asn = router.get("autonomous-system")
    if not router or asn is None or not str(asn).isdigit():
        return None
    neighbors = {}
    for nid, entry in (vrf.get("neighbor") or {}).items():
        entry = entry or {}
        remote = str(entry.get("remote-as", ""))
        numbered = str(entry.get("type", "numbered")) != "unnumbered"
        neighbors[str(nid)] = NeighborConfig(str(nid), numbered, int(remote) if remote.isdigit() else remote,
                                             _enabled(entry, True))
    ipv4 = (vrf.get("address-family") or {}).get("ipv4-unicast") or {}
    connected = (ipv4.get("redistribute") or {}).get("connected") or {}
    policy = (config.get("router") or {}).get("policy") or {}
    networks = tuple(sorted(str(n) for n in (ipv4.get("network") or {})))
    return BgpConfig(int(asn), str(router.get("router-id") or "0.0.0.0"),
                     _enabled(router, True) and _enabled(vrf, True), neighbors,
                     _enabled(connected, False) if connected else False,
                     _route_map(policy, connected.get("route-map")), networks)


# --- nv show answers ---------------------------------------------------------------------
def interfaces_json(name: str, config: dict, fabric: Fabric | None, faults=None,
                    qos_path: tuple[str, ...] = ("counters", "qos"), watchdog: bool = True) -> dict:
    """`nv show interface -o json`: every interface with its link state, speed and MTU, and, as the
    collection read prints each interface's whole object (NVUE-Object-Model page: a CLI path is an
    object path), each switch port's `lldp`, `counters` and `link phy-detail` subtrees with the QoS counters under
    `qos_path` (5.5+: counters qos; 5.4 and earlier: qos counters). These are the answers of the
    per-port commands below, built once from the world's state for the whole switch."""
    interfaces = config.get("interface") or {}
    ports = ports_of(config)
    out = {}
    for ifname in sorted({"eth0", "lo", *interfaces}):
        entry = interfaces.get(ifname) or {}
        kind = {"eth0": "eth", "lo": "loopback"}.get(ifname, str(entry.get("type") or "swp"))
        port = ports.get(ifname)
        if ifname in ("eth0", "lo"):
            up, admin = True, True
        elif port is None:
            up, admin = False, False
        else:
            admin = port.admin_up
            up = bool(fabric and fabric.link(name, ifname).up)
        link = {"admin-status": "up" if admin else "down", "oper-status": "up" if up else "down",
                "state": {"up" if up else "down": {}},
                "mtu": {"eth0": 1500, "lo": 65536}.get(ifname, port.mtu if port else DEFAULT_MTU),
                "mac-address": chassis_mac(f"{name}:{ifname}")}
        if port and port.speed:
            link["speed"] = port.speed
        item = {"type": kind, "link": link}
        if kind == "swp" and faults is not None:
            link["phy-detail"] = phy_detail_json(name, ifname, fabric, faults)
            item["lldp"] = lldp_json(name, ifname, fabric)
            item["counters"] = counters_json(name, ifname, fabric, faults)
            qos = item.setdefault(qos_path[0], {}).setdefault(qos_path[1], {})
            qos["pfc-stats"] = pfc_stats_json(name, ifname, fabric, faults)
            qos["port-stats"] = port_stats_json(name, ifname, fabric, faults)
            if watchdog:        # the object exists from 5.6 (QoS page)
                item.setdefault("qos", {})["pfc-watchdog"] = pfc_watchdog_json(name, ifname, config, fabric, faults)
        if port and port.description:
            item["description"] = port.description
        if port and port.addresses:
            item["ip"] = {"address": {a: {} for a in port.addresses}}
        out[ifname] = item
    return out


def lldp_json(name: str, port: str, fabric: Fabric | None) -> dict:
    """`nv show interface <p> lldp -o json`."""
    neighbor = fabric.lldp(name, port) if fabric else None
    if neighbor is None:
        return {"neighbor": {}}
    chassis = {"chassis-id": neighbor.chassis_id, "system-description": neighbor.system_description,
               "system-name": neighbor.system_name, "capability": list(neighbor.capabilities)}
    if neighbor.management_ip:
        chassis["management-address-ipv4"] = neighbor.management_ip
    return {"neighbor": {neighbor.system_name: {
        "age": int(time.time() - fabric.started), "chassis": chassis,
        "port": {"description": neighbor.port_description, "name": neighbor.port_id, "ttl": LLDP_TTL,
                 "type": neighbor.port_id_subtype}}}}


def _rates(name: str, port: str, fabric: Fabric, faults) -> dict[str, float]:
    """Every fault-driven counter rate of a port, in one dict: the world integrates whatever a read
    passes, so each read of the port passes all of them."""
    rates: dict[str, float] = {}
    for key, per in ((faults.counters or {}).get(port) or {}).items():
        for index, rate in per.items():
            rates[f"{key}:{index}"] = float(rate)
    return rates | platform_oper.phy_rates(faults, fabric, name, port)


def counters_json(name: str, port: str, fabric: Fabric | None, faults) -> dict:
    """`nv show interface <p> counters -o json` (key names: see the module docstring)."""
    raw = fabric.counters(name, port, _rates(name, port, fabric, faults)) if fabric else {}
    fcs = raw.get("rx_fcs_errors", 0)
    return {
        "carrier-transitions": platform_oper.carrier_transitions(faults, port, bool(fabric and fabric.link(name, port).up)),
        "in-bytes": raw.get("rx_octets", 0), "in-pkts": raw.get("rx_packets", 0),
        "in-ucast-pkts": raw.get("rx_packets", 0), "in-mcast-pkts": 0, "in-bcast-pkts": 0,
        "in-drops": 0, "in-acl-drops": 0, "in-buffer-drops": 0,
        "in-errors": fcs, "in-fcs-errors": fcs, "in-alignment-errors": 0, "in-jabber-errors": 0,
        "in-length-errors": 0, "in-oversize-errors": 0, "in-symbol-errors": 0, "in-undersize-errors": 0,
        "out-bytes": raw.get("tx_octets", 0), "out-pkts": raw.get("tx_packets", 0),
        "out-ucast-pkts": raw.get("tx_packets", 0), "out-mcast-pkts": 0, "out-bcast-pkts": 0,
        "out-drops": 0, "out-queue-drops": 0, "out-non-queue-drops": 0, "out-errors": 0,
    }


def pfc_stats_json(name: str, port: str, fabric: Fabric | None, faults) -> dict:
    """`nv show interface <p> counters qos pfc-stats -o json`: per switch-priority."""
    raw = fabric.counters(name, port, _rates(name, port, fabric, faults)) if fabric else {}
    return {str(prio): {"rx-pause-frames": raw.get(f"pfc_rx_pause:{prio}", 0), "rx-pause-duration": 0,
                        "tx-pause-frames": raw.get(f"pfc_tx_pause:{prio}", 0), "tx-pause-duration": 0}
            for prio in range(8)}


def watchdog_enabled(config: dict, port: str) -> bool:
    """The applied config's `interface <p> qos pfc-watchdog state` (default disable, QoS page)."""
    entry = ((config.get("interface") or {}).get(port) or {})
    state = (((entry.get("qos") or {}).get("pfc-watchdog") or {}).get("state"))
    return str(state) in ("enable", "enabled", "on")


def pfc_watchdog_json(name: str, port: str, config: dict, fabric: Fabric | None, faults) -> dict:
    """`nv show interface <p> qos pfc-watchdog -o json` (module docstring): the storms the watchdog
    detected per switch-priority; only a port whose config enables it detects any."""
    if not watchdog_enabled(config, port):
        return {"state": "disable"}
    raw = fabric.counters(name, port, _rates(name, port, fabric, faults)) if fabric else {}
    storms = {k.split(":", 1)[1]: v for k, v in raw.items() if k.startswith("pfc_wd_storm:")}
    return {"state": "enable",
            "switch-priority": {prio: {"deadlock-count": count} for prio, count in sorted(storms.items())}}


def port_stats_json(name: str, port: str, fabric: Fabric | None, faults) -> dict:
    """`nv show interface <p> counters qos port-stats -o json`: ECN marks are transmit-side, per port."""
    raw = fabric.counters(name, port, _rates(name, port, fabric, faults)) if fabric else {}
    ecn = sum(v for k, v in raw.items() if k.startswith("ecn_marked:"))
    rx_pause = sum(v for k, v in raw.items() if k.startswith("pfc_rx_pause:"))
    tx_pause = sum(v for k, v in raw.items() if k.startswith("pfc_tx_pause:"))
    return {"rx-stats": {"pause-frames": rx_pause},
            "tx-stats": {"ecn-marked-packets": ecn, "mc-buffer-discards": 0, "pause-frames": tx_pause}}


def bgp_neighbors_json(name: str, fabric: Fabric | None) -> dict:
    """`nv show vrf default router bgp neighbor [--view=detail] -o json`."""
    if fabric is None:
        return {}
    now = time.time()
    out = {}
    for nid, session in fabric.sessions(name).items():
        out[nid] = {
            "remote-as": session.remote_as, "state": session.state,
            "local-as": {"asn": session.local_as}, "peer-router-id": session.peer_router_id,
            "admin-state": "enabled" if session.enabled else "disabled",
            "up-time": int(now - session.up_since) if session.up_since else 0,
            "address-family": {"ipv4-unicast": {"rx-prefix": session.rx_prefixes, "tx-prefix": session.tx_prefixes}},
        }
    return out


# --- hardware, optics, FEC, NTP, RIB -------------------------------------------------------
def environment_json(faults) -> dict:
    env = platform_oper.environment(faults)
    return {"fan": {n: {"state": "ok" if ok else "failed"} for n, ok in env["fan"].items()},
            "psu": {n: {"state": "ok" if ok else "failed"} for n, ok in env["psu"].items()},
            "temperature": {n: {"current": cur, "max": high, "crit": crit,
                                "state": "ok" if cur < high else ("critical" if cur >= crit else "high")}
                            for n, (cur, high, crit) in env["temperature"].items()}}


_MEDIA = {"DAC": "Passive copper cable", "AOC": "Active optical cable"}


def transceivers_json(name: str, config: dict, fabric: Fabric | None, faults) -> dict:
    out = {}
    world = fabric.world() if fabric else None
    # a module sits in its cage whatever the config: the configured ports and every cabled one
    cabled = {end for c in (world.cables if world else ()) for end in ((c.a_device, c.a_port), (c.b_device, c.b_port))}
    for port in sorted((set(ports_of(config)) - {"lo"}) | {p for d, p in cabled if d == name}):
        module = platform_oper.transceiver(world.cable_at(name, port) if world else None, port, faults)
        if module is None:
            out[port] = {"status": "unplugged"}
            continue
        entry = {"status": "plugged", "identifier": "QSFP112"}
        if module["media"]:
            entry["cable-type"] = _MEDIA[module["media"]]
        if "rx_dbm" in module:
            limits = module["thresholds"]
            entry["temperature"] = {"temperature": module["temperature_c"],
                                    "low-alarm-threshold": limits["temperature"][0],
                                    "high-alarm-threshold": limits["temperature"][1]}
            entry["channel"] = {f"channel-{lane}": {
                kind: {"power": module[f"{kind[:2]}_dbm"], "low-alarm-threshold": limits[kind[:2]][0],
                       "high-alarm-threshold": limits[kind[:2]][1]} for kind in ("rx-power", "tx-power")}
                for lane in range(1, module["lanes"] + 1)}
        out[port] = entry
    return out


def phy_detail_json(name: str, port: str, fabric: Fabric | None, faults) -> dict:
    raw = fabric.counters(name, port, _rates(name, port, fabric, faults)) if fabric else {}
    up = bool(fabric and fabric.link(name, port).up)
    return {"raw-ber": f"{platform_oper.ber(faults, port, up):.2e}",
            "fec-corrected-codewords": raw.get("fec_corrected", 0),
            "fec-uncorrected-codewords": raw.get("fec_uncorrected", 0)}


def ntp_servers(config: dict) -> list[str]:
    """The NTP servers of an applied tree: 5.15+ `system ntp server`, 5.14- `service ntp <vrf> server`."""
    found = list(((config.get("system") or {}).get("ntp") or {}).get("server") or {})
    for vrf in ((config.get("service") or {}).get("ntp") or {}).values():
        found += list((vrf or {}).get("server") or {})
    return sorted(set(map(str, found)))


def ntp_json(config: dict, faults) -> dict:
    state = platform_oper.ntp(faults, ntp_servers(config))
    out = {"status": "synchronised" if state["synchronised"] else "unsynchronised", "state": "enabled",
           "vrf": "mgmt", "server": {s: {} for s in state["servers"]}}
    if state["synchronised"]:
        out |= {"reference": state["reference"], "offset": "1 ms"}
    return out


def rib_json(name: str, fabric: Fabric | None) -> tuple[dict, dict]:
    """(`nv show vrf default router rib ipv4 route -o json`, `nv show router nexthop -o json`)."""
    routes, groups = {}, {}
    for index, (prefix, hops) in enumerate(sorted((fabric.next_hops(name) if fabric else {}).items())):
        group = 100 + index
        routes[prefix] = {"route-entry": {"1": {"protocol": "bgp", "distance": 20, "nexthop-group-id": group,
                                                "flags": {"selected": {}, "installed": {}}}}}
        groups[str(group)] = {"address-family": "ipv4", "installed": "on", "valid": "on", "vrf": "default",
                              "resolved-via": {(port or nid): {"flags": {"active": {}, "installed": {}},
                                                               "type": "interface"} for nid, port in hops}}
    return routes, {"rib": groups}
