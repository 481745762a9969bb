"""Operational answers of a simulated SONiC switch, from its running CONFIG_DB and the lab world.

Which names the world uses. The wiring file, like the plan's cabling.csv, names a cable end by
its front-panel position in the plan's spelling (swp1, swp1s0) for every switch OS: that is
what the cabling team labels. A SONiC port is Ethernet<N>; its PORT `alias` is the front-panel
label NVIDIA's SONiC gives it (etp1, or etp1a/etp1b... for the parts of a split port;
generator/plan/sonic_catalog.py derives them as sonic-buildimage's portconfig.py does). So the
switch joins the world under `world_name(alias)`: etpN -> swpN, etpN<x> -> swpNs<x - 'a'>; a
port with another alias joins under its Ethernet name (then the wiring must use that name).

What the far end hears (lldpmgrd, sonic-buildimage 086b03bd dockers/docker-lldp/lldpmgrd:
`lldpcli configure ports <Ethernet> lldp portidsubtype local <alias> [description <PORT
description>]`): the port id is the alias, the port description the PORT description or, when
there is none, lldpd's default, the interface name. The system description is
lldpdSysDescr.conf.j2's "SONiC Software Version: SONiC.<build> - HwSku: <sku> - Distribution:
Debian <n> - Kernel: <k>".

Output formats, each restated from its source (sonic-utilities @691b1bbc unless named):
- `show interfaces status` (scripts/intfutil -c status): a tabulate "simple" table, every
  column right-aligned, headers Interface, Lanes, Speed, MTU, FEC, Alias, Vlan, Oper, Admin,
  Type, Asym PFC; Speed as port_speed_parse prints it ("400G", "25G"). intfutil has -j only
  from sonic-utilities #3906 (2025-08), in 202505, not in 202411: the driver parses the text.
- `portstat -j` (utilities_common/portstat.py, header_std + netstat.table_as_json): {port:
  {STATE: U|D|X, RX_OK, RX_BPS, RX_UTIL, RX_ERR, RX_DRP, RX_OVR, TX_OK, TX_BPS, TX_UTIL,
  TX_ERR, TX_DRP, TX_OVR}}, counts as strings with thousands commas (ns_diff). RX_ERR is
  SAI_PORT_STAT_IF_IN_ERRORS, where the ASIC counts FCS errors.
- `show pfc counters` (`pfcstat -s all`; pfcstat has no JSON): two tabulate "simple" tables,
  "Port Rx PFC0..PFC7" then, after an empty line, "Port Tx PFC0..PFC7", counts with commas.
- `show pfcwd stats` (pfcwd/main.py show_stats; `show pfcwd stats` runs it): one tabulate
  "simple" table, right-aligned, headers QUEUE, STATUS, STORM DETECTED/RESTORED, TX OK/DROP,
  RX OK/DROP, TX LAST OK/DROP, RX LAST OK/DROP; QUEUE is "<port>:<queue>", each pair
  "<a>/<b>"; a queue whose counters are all 0/0 is left out unless -e (collect_stats). Only a
  port with a PFC_WD entry has watchdog counters (pfcwdorch watches the ports CONFIG_DB names).
- `show queue wredcounters --json` (scripts/wredstat, 202505+; none before, so 202411 has
  no ECN-marked counter in its CLI): {port: {"UC<q>": {wreddroppacket, wreddropbytes,
  ecnmarkedpacket, ecnmarkedbytes}}}, plus "time".
- `docker exec -i lldp lldpctl -f json0` (the command lldpshow runs with -f xml): lldpd's
  json0 writer, where every node is a list and names are `name` fields (lldpd
  tests/integration/test_lldpcli.py test_json0_output).
- `vtysh -c "show bgp vrf default neighbors json"` (FRR bgp_vty.c bgp_show_peer, as FRR's
  topotests read it): {peer: {remoteAs, localAs, nbrExternalLink, bgpVersion, remoteRouterId,
  localRouterId, bgpState, bgpTimerUpMsec, bgpTimerUpString, bgpTimerUpEstablishedEpoch,
  addressFamilyInfo: {ipv4Unicast: {acceptedPrefixCounter, sentPrefixCounter}},
  connectionsEstablished, connectionsDropped, hostForeign}}.
"""

from __future__ import annotations

import ipaddress
import re
import time

from generator.lab import platform_oper
from generator.lab.world import BgpConfig, Fabric, NeighborConfig, PortConfig

DEFAULT_MTU = 9100          # sonic-swss portsorch DEFAULT_MTU; sonic-port.yang gives no default
LOOPBACK = "lo"             # the world's name for the interface that is always up (world._originated)
LLDP_TTL = 120
_ALIAS = re.compile(r"^etp(\d+)([a-z]?)$")
UNIFIED_MODES = ("unified", "split-unified")     # DEVICE_METADATA docker_routing_config_mode: frrcfgd runs
ECN_COUNTERS_FROM = "202505"                     # scripts/wredstat (sonic-utilities #2807)


def world_name(ethernet: str, alias: str | None) -> str:
    """The world's (and plan's) name of a SONiC port: its front-panel position, from the alias."""
    match = _ALIAS.match(alias or "")
    if not match:
        return ethernet
    number, part = match.groups()
    return f"swp{number}" if not part else f"swp{number}s{ord(part) - ord('a')}"


def names(running: dict) -> dict[str, str]:
    """Ethernet name -> world name, for every PORT row."""
    return {eth: world_name(eth, (row or {}).get("alias")) for eth, row in (running.get("PORT") or {}).items()}


def _prefixes(running: dict, table: str, ifname: str) -> tuple[str, ...]:
    found = []
    for key in running.get(table) or {}:
        name, sep, prefix = key.partition("|")
        if sep and name == ifname:
            try:
                if ipaddress.ip_interface(prefix).version == 4:
                    found.append(prefix)
            except ValueError:
                continue
    return tuple(sorted(found))


def speed_text(mbps: str | int | None) -> str | None:
    """config_db speed (Mb/s) as intfutil's port_speed_parse prints it: 400000 -> 400G."""
    try:
        speed = int(mbps)
    except (TypeError, ValueError):
        return None
    if speed < 1000:
        return f"{speed}M"
    return f"{speed / 1000:.1f}G" if speed % 1000 >= 100 else f"{speed / 1000:.0f}G"


def ports_of(running: dict) -> dict[str, PortConfig]:
    """Front-panel ports (world names) and the loopback of a running CONFIG_DB."""
    out = {}
    for eth, row in (running.get("PORT") or {}).items():
        row = row or {}
        try:
            mtu = int(row.get("mtu") or DEFAULT_MTU)
        except ValueError:
            mtu = DEFAULT_MTU
        out[world_name(eth, row.get("alias"))] = PortConfig(
            str(row.get("admin_status", "down")) == "up", speed_text(row.get("speed")), mtu,
            _prefixes(running, "INTERFACE", eth), str(row.get("description") or ""))
    loopbacks = tuple(p for name in sorted(running.get("LOOPBACK_INTERFACE") or {}) if "|" not in name
                      for p in _prefixes(running, "LOOPBACK_INTERFACE", name))
    out[LOOPBACK] = PortConfig(True, None, 65536, loopbacks)
    return out


def bgp_of(running: dict) -> BgpConfig | None:
    """BGP as FRR runs it from CONFIG_DB.

    Unified mode (frrcfgd, what fabricgen renders): BGP_GLOBALS|default (local_asn, router_id),
    BGP_NEIGHBOR|default|<peer> (asn, admin_status), BGP_GLOBALS_AF_NETWORK|default|ipv4_unicast|<p>
    as `network` statements, ROUTE_REDISTRIBUTE|default|connected|bgp|ipv4 as redistribute.
    Otherwise bgpcfgd: DEVICE_METADATA bgp_asn, BGP_NEIGHBOR|<peer>, Loopback0 announced.
    FRR (7.4+, both profiles) announces a `network` only while the prefix is in the RIB (`bgp
    network import-check`): a connected /31 counts while its port is up, like a redistributed one.
    """
    meta = (running.get("DEVICE_METADATA") or {}).get("localhost") or {}
    unified = str(meta.get("docker_routing_config_mode", "separated")) in UNIFIED_MODES
    neighbors: dict[str, NeighborConfig] = {}
    port_names = names(running)
    if unified:
        glob = (running.get("BGP_GLOBALS") or {}).get("default") or {}
        asn, router_id = str(glob.get("local_asn", "")), str(glob.get("router_id") or "0.0.0.0")
        rows = {k.split("|", 1)[1]: v for k, v in (running.get("BGP_NEIGHBOR") or {}).items()
                if k.startswith("default|")}
        networks = {k.split("|")[2] for k in running.get("BGP_GLOBALS_AF_NETWORK") or {}
                    if k.startswith("default|ipv4_unicast|") and k.count("|") == 2}
        redistribute = any(k.startswith("default|connected|bgp|ipv4") for k in running.get("ROUTE_REDISTRIBUTE") or {})
    else:
        asn, router_id = str(meta.get("bgp_asn", "")), "0.0.0.0"
        rows = {k: v for k, v in (running.get("BGP_NEIGHBOR") or {}).items() if "|" not in k}
        networks = set(_prefixes(running, "LOOPBACK_INTERFACE", "Loopback0"))
        networks = {str(ipaddress.ip_interface(p).network) for p in networks}
        router_id = next((str(ipaddress.ip_interface(p).ip) for p in networks), router_id)
        redistribute = False
    if not asn.isdigit():
        return None
    for peer, row in sorted(rows.items()):
        row = row or {}
        remote = str(row.get("asn", ""))
        numbered = peer not in port_names
        nid = peer if numbered else port_names[peer]
        neighbors[nid] = NeighborConfig(nid, numbered, int(remote) if remote.isdigit() else remote,
                                        str(row.get("admin_status", "up")) != "down")
    return BgpConfig(int(asn), router_id, True, neighbors, True,
                     (lambda prefix: True) if redistribute else (lambda prefix: prefix in networks), ())


# --- text tables as tabulate(tablefmt="simple", stralign="right") prints them -----------------
def simple_table(headers: list[str], rows: list[list[str]]) -> str:
    """tabulate's "simple" format, all columns right-aligned; headers get 2 characters of padding."""
    widths = [max([len(h) + 2] + [len(str(r[i])) for r in rows]) for i, h in enumerate(headers)]
    lines = ["  ".join(h.rjust(w) for h, w in zip(headers, widths, strict=True)),
             "  ".join("-" * w for w in widths)]
    lines += ["  ".join(str(v).rjust(w) for v, w in zip(row, widths, strict=True)) for row in rows]
    return "\n".join(lines)


def _natural(name: str) -> tuple:
    return tuple(int(t) if t.isdigit() else t for t in re.split(r"(\d+)", name))


def _comma(value: int) -> str:
    return f"{int(value):,}"


STATUS_HEADERS = ["Interface", "Lanes", "Speed", "MTU", "FEC", "Alias", "Vlan", "Oper", "Admin", "Type", "Asym PFC"]


def interfaces_status(name: str, running: dict, fabric: Fabric | None) -> str:
    """`show interfaces status`."""
    rows = []
    for eth in sorted(running.get("PORT") or {}, key=_natural):
        row = running["PORT"][eth] or {}
        world = world_name(eth, row.get("alias"))
        up = bool(fabric and fabric.link(name, world).up)
        cabled = bool(fabric and fabric.world().cable_at(name, world))
        rows.append([eth, str(row.get("lanes", "N/A")), speed_text(row.get("speed")) or "N/A",
                     str(row.get("mtu") or DEFAULT_MTU), str(row.get("fec") or "N/A"), str(row.get("alias") or "N/A"),
                     "routed" if any(k.startswith(f"{eth}|") for k in running.get("INTERFACE") or {}) else "trunk",
                     "up" if up else "down", str(row.get("admin_status", "down")),
                     "QSFP-DD Double Density 8X Pluggable Transceiver" if cabled else "N/A", "off"])
    return simple_table(STATUS_HEADERS, rows)


def _fault_rates(faults, *ports: str) -> dict[str, float]:
    rates: dict[str, float] = {}
    for port in ports:
        for key, per in ((faults.counters or {}).get(port) or {}).items():
            for index, rate in per.items():
                rates[f"{key}:{index}"] = float(rate)
    return rates


def raw_counters(name: str, eth: str, world: str, fabric: Fabric | None, faults) -> dict[str, int]:
    # raise_counters may name the port as the switch does (Ethernet0) or as the plan does (swp1)
    # every read passes every rate: the world integrates only what a read passes (nvue_oper._rates)
    rates = _fault_rates(faults, world, eth) | platform_oper.phy_rates(faults, fabric, name, world) if fabric else {}
    return fabric.counters(name, world, rates) if fabric else {}


def portstat_json(name: str, running: dict, fabric: Fabric | None, faults) -> dict:
    """`portstat -j` (what `show interfaces counters` prints, as JSON)."""
    out = {}
    for eth in sorted(running.get("PORT") or {}, key=_natural):
        row = running["PORT"][eth] or {}
        world = world_name(eth, row.get("alias"))
        raw = raw_counters(name, eth, world, fabric, faults)
        if str(row.get("admin_status", "down")) != "up":
            state = "X"
        else:
            state = "U" if fabric and fabric.link(name, world).up else "D"
        out[eth] = {"STATE": state, "RX_OK": _comma(raw.get("rx_packets", 0)), "RX_BPS": "0.00 B/s",
                    "RX_UTIL": "0.00%", "RX_ERR": _comma(raw.get("rx_fcs_errors", 0)), "RX_DRP": "0", "RX_OVR": "0",
                    "TX_OK": _comma(raw.get("tx_packets", 0)), "TX_BPS": "0.00 B/s", "TX_UTIL": "0.00%",
                    "TX_ERR": "0", "TX_DRP": "0", "TX_OVR": "0"}
    return out


def pfc_counters(name: str, running: dict, fabric: Fabric | None, faults) -> str:
    """`show pfc counters` (pfcstat -s all)."""
    tables = []
    counts = {}
    for eth in sorted(running.get("PORT") or {}, key=_natural):
        world = world_name(eth, (running["PORT"][eth] or {}).get("alias"))
        counts[eth] = raw_counters(name, eth, world, fabric, faults)
    for direction, title in (("rx", "Port Rx"), ("tx", "Port Tx")):
        rows = [[eth] + [_comma(raw.get(f"pfc_{direction}_pause:{p}", 0)) for p in range(8)]
                for eth, raw in counts.items()]
        tables.append(simple_table([title] + [f"PFC{p}" for p in range(8)], rows))
    return tables[0] + "\n\n" + tables[1]


PFCWD_HEADERS = ["QUEUE", "STATUS", "STORM DETECTED/RESTORED", "TX OK/DROP", "RX OK/DROP", "TX LAST OK/DROP",
                 "RX LAST OK/DROP"]


def pfcwd_stats(name: str, running: dict, fabric: Fabric | None, faults, empty: bool = False) -> str:
    """`show pfcwd stats [-e]`: the storms each watched queue's watchdog detected and restored (the
    lab's storms are restored within the restoration time: detected = restored, status operational)."""
    watched = running.get("PFC_WD") or {}
    rows = []
    for eth in sorted(running.get("PORT") or {}, key=_natural):
        if eth not in watched:
            continue
        world = world_name(eth, (running["PORT"][eth] or {}).get("alias"))
        raw = raw_counters(name, eth, world, fabric, faults)
        for q in range(8):
            storms = raw.get(f"pfc_wd_storm:{q}", 0)
            if storms or empty:
                rows.append([f"{eth}:{q}", "operational", f"{storms}/{storms}", "0/0", "0/0", "0/0", "0/0"])
    return simple_table(PFCWD_HEADERS, rows)


def wred_counters_json(name: str, running: dict, fabric: Fabric | None, faults) -> dict:
    """`show queue wredcounters --json` (wredstat -j): per unicast queue; ECN marks per traffic class."""
    out: dict = {}
    for eth in sorted(running.get("PORT") or {}, key=_natural):
        world = world_name(eth, (running["PORT"][eth] or {}).get("alias"))
        raw = raw_counters(name, eth, world, fabric, faults)
        out[eth] = {f"UC{q}": {"wreddroppacket": "0", "wreddropbytes": "0",
                               "ecnmarkedpacket": str(raw.get(f"ecn_marked:{q}", 0)),
                               "ecnmarkedbytes": str(raw.get(f"ecn_marked:{q}", 0) * 1024)} for q in range(8)}
    return out


def _age(seconds: float) -> str:
    days, rest = divmod(int(seconds), 86400)
    return f"{days} day, {rest // 3600:02d}:{rest % 3600 // 60:02d}:{rest % 60:02d}"


def lldp_json0(name: str, running: dict, fabric: Fabric | None) -> dict:
    """`lldpctl -f json0` (= `lldpcli show neighbors details`): one entry per port with a neighbour."""
    interfaces = []
    for eth in sorted(running.get("PORT") or {}, key=_natural):
        world = world_name(eth, (running["PORT"][eth] or {}).get("alias"))
        neighbor = fabric.lldp(name, world) if fabric else None
        if neighbor is None:
            continue
        chassis = {"id": [{"type": "mac", "value": neighbor.chassis_id}],
                   "name": [{"value": neighbor.system_name}],
                   "descr": [{"value": neighbor.system_description}]}
        if neighbor.management_ip:
            chassis["mgmt-ip"] = [{"value": neighbor.management_ip}]
        chassis["capability"] = [{"type": cap, "enabled": cap.lower() in neighbor.capabilities}
                                 for cap in ("Bridge", "Router", "Wlan", "Station")]
        # a SONiC switch announces a locally assigned port id (its alias), a Cumulus one its ifname, a
        # host's lldpd its MAC (default) or its ifname (portidsubtype ifname); json0 names the subtype
        # as lldpd's port_id_subtype_map does (src/lib/atoms/port.c)
        interfaces.append({"name": eth, "via": "LLDP", "rid": str(len(interfaces) + 1),
                           "age": _age(time.time() - fabric.started),
                           "chassis": [chassis],
                           "port": [{"id": [{"type": neighbor.port_id_subtype, "value": neighbor.port_id}],
                                     "descr": [{"value": neighbor.port_description}],
                                     "ttl": [{"value": str(LLDP_TTL)}]}]})
    return {"lldp": [{"interface": interfaces}]}


_FRR_STATE = {"established": "Established", "connect": "Connect", "active": "Active", "idle": "Idle"}


def _uptime(seconds: float) -> str:
    days, rest = divmod(int(seconds), 86400)
    clock = f"{rest // 3600:02d}:{rest % 3600 // 60:02d}:{rest % 60:02d}"
    return f"{days}d{clock}" if days else clock


def bgp_neighbors_json(name: str, running: dict, fabric: Fabric | None) -> dict:
    """`vtysh -c "show bgp vrf default neighbors json"`: keyed by peer address (or interface)."""
    bgp = bgp_of(running)
    if bgp is None or fabric is None:
        return {}
    eth_of = {world: eth for eth, world in names(running).items()}
    now = time.time()
    out = {}
    for nid, session in fabric.sessions(name).items():
        up = session.state == "established"
        key = nid if bgp.neighbors[nid].numbered else eth_of.get(nid, nid)
        entry = {"remoteAs": session.remote_as, "localAs": session.local_as,
                 "nbrExternalLink": session.remote_as != session.local_as, "bgpVersion": 4,
                 "remoteRouterId": session.peer_router_id, "localRouterId": bgp.router_id,
                 "bgpState": _FRR_STATE.get(session.state, "Idle")}
        if up:
            seconds = now - (session.up_since or now)
            entry |= {"bgpTimerUpMsec": int(seconds * 1000), "bgpTimerUpString": _uptime(seconds),
                      "bgpTimerUpEstablishedEpoch": int(session.up_since or now)}
        elif not session.enabled:
            entry["lastResetDueTo"] = "Admin. shutdown"
        entry |= {"addressFamilyInfo": {"ipv4Unicast": {"acceptedPrefixCounter": session.rx_prefixes,
                                                        "sentPrefixCounter": session.tx_prefixes}},
                  "connectionsEstablished": 1 if up else 0, "connectionsDropped": 0}
        if bgp.neighbors[nid].numbered:
            entry["hostForeign"] = nid
        out[key] = entry
    return out
