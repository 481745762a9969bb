"""One function per verify check: plan expectations + what the switches answered -> findings.

Inputs are napalm getter results (models of napalm.base.models) and the drivers' PFC/ECN extra
(devices/oper.py), so the checks do not know which OS answered.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from generator.verify.expected import PREFIX_TOLERANCE, Expectations
from generator.verify.model import ERROR, WARNING, Finding

PFC_THRESHOLD_PER_S = 100.0      # pause frames per second on one priority
ECN_THRESHOLD_PER_S = 1000.0     # ECN-marked packets per second on one port


@dataclass
class SwitchReading:
    """What one switch answered; a getter that failed is None with its error in `errors`."""

    name: str
    interfaces: dict | None = None
    lldp: dict | None = None
    bgp: dict | None = None
    counters: tuple[dict, dict] | None = None        # two reads of get_interfaces_counters
    pfc: tuple[dict, dict] | None = None             # two reads of get_pfc_ecn_counters
    interval_s: float = 0.0                          # time between the two reads
    facts: dict | None = None                        # get_facts (os_version)
    release: dict | None = None                      # SONiC: nos_release_reading (sonic_version.yml)
    environment: dict | None = None                  # get_environment
    transceivers: dict | None = None                 # driver extra get_transceivers (oper.py)
    phy: tuple[dict, dict] | None = None             # two reads of the driver extra get_phy_counters
    ntp: list | None = None                          # get_ntp_stats
    routes: dict | None = None                       # driver extra get_route_next_hops
    errors: dict[str, str] = field(default_factory=dict)
    unsupported: dict[str, str] = field(default_factory=dict)   # getters this OS's driver lacks


def _short(hostname: str) -> str:
    return hostname.split(".")[0]


def _end(device: str, port: str) -> str:
    return f"{device}:{port}"


# --- cabling ---------------------------------------------------------------------------
# A MAC as LLDP shows a MAC port ID: lldpd (json0, and NVUE which runs it) prints aa:bb:cc:dd:ee:ff
_MAC = re.compile(r"[0-9a-fA-F]{2}([:-])[0-9a-fA-F]{2}(\1[0-9a-fA-F]{2}){4}")


def _mac(text: str) -> str | None:
    return text.lower().replace("-", ":") if _MAC.fullmatch(text) else None


def _sees_planned_host(n: dict, planned, exp: Expectations) -> bool:
    """A host port is announced as lldpd announces it (lldpd src/daemon/interfaces.c
    interfaces_helper_port_name_desc, lldpcli(8) `configure lldp portidsubtype`): by default port
    ID = the NIC's MAC and port description = the netdev; with `portidsubtype ifname` (or an
    ifalias on the netdev) port ID = the netdev. So the planned NIC is recognised by its MAC
    from hosts.discovered, or by the planned host name with the netdev as port ID or description."""
    port_id, description = str(n.get("port") or ""), str(n.get("port_description") or "")
    mac, planned_mac = _mac(port_id), exp.host_macs.get((planned.peer_device, planned.peer_port))
    if mac is not None and mac == planned_mac:
        return True
    return _short(str(n.get("hostname") or "")) == planned.peer_device and planned.peer_port in (port_id, description)


def _observed(n: dict, switches, owners: dict[str, tuple[str, str]]) -> tuple[tuple[str, str], str]:
    """(the end an LLDP neighbour is, as (device, port); how a finding names it). A switch by its
    port ID; a host port whose ID is a MAC by the NIC hosts.discovered gives that MAC, else by its
    host name and description (the netdev, lldpd's default), the MAC named beside it."""
    host, port_id = _short(str(n.get("hostname") or "")), str(n.get("port") or "")
    mac = _mac(port_id)
    if host in switches or mac is None:
        return (host, port_id), _end(host, port_id)
    end = owners.get(mac) or (host, str(n.get("port_description") or "") or port_id)
    return end, f"{_end(*end)} (MAC {mac})"


def check_cabling(readings: dict[str, SwitchReading], exp: Expectations) -> dict[str, list[Finding]]:
    """Every planned port's LLDP neighbour is the plan's; two ports that see each other's
    expected neighbour are ONE finding ("... are crossed"). Ports that are down are left to
    the link check: a dark port shows no neighbour, and that is the link's finding. A switch
    neighbour is matched by system name and port ID; a host's as _sees_planned_host says."""
    owners = {mac: end for end, mac in exp.host_macs.items()}
    mismatches = []   # (device, port, expected (dev, port), observed (dev, port) | None, observed text)
    for name, reading in sorted(readings.items()):
        if reading.lldp is None or reading.interfaces is None:
            continue
        for port, planned in sorted(exp.ports.get(name, {}).items()):
            seen = reading.lldp.get(port) or []
            if not seen and not (reading.interfaces.get(port) or {}).get("is_up"):
                continue
            expected = (planned.peer_device, planned.peer_port)
            if planned.peer_is_switch:
                if expected in [(_short(n["hostname"]), n["port"]) for n in seen]:
                    continue
            elif any(_sees_planned_host(n, planned, exp) for n in seen):
                continue
            observed = _observed(seen[0], exp.ports, owners) if seen else (None, "no LLDP neighbour")
            mismatches.append((name, port, expected, *observed))
    findings: dict[str, list[Finding]] = {}
    used: set[int] = set()
    cables_reported: set[frozenset] = set()
    for i, (dev_a, port_a, exp_a, obs_a, seen_a) in enumerate(mismatches):
        if i in used:
            continue
        for j in range(i + 1, len(mismatches)):
            dev_b, port_b, exp_b, obs_b, _seen_b = mismatches[j]
            if j in used or obs_a != exp_b or obs_b != exp_a:
                continue
            used |= {i, j}
            cables = frozenset({frozenset({(dev_a, port_a), obs_a}), frozenset({(dev_b, port_b), obs_b})})
            if cables in cables_reported:
                break          # the same two cables seen from their other ends (switch-to-switch swap)
            cables_reported.add(cables)
            if dev_a == dev_b:
                message = f"{port_a} and {port_b} on {dev_a} are crossed"
                port = f"{port_a},{port_b}"
            else:
                message = f"{_end(dev_a, port_a)} and {_end(dev_b, port_b)} are crossed"
                port = port_a
            findings.setdefault(dev_a, []).append(Finding(
                "cabling", dev_a, port,
                f"{_end(dev_a, port_a)}->{_end(*exp_a)}, {_end(dev_b, port_b)}->{_end(*exp_b)}",
                f"{_end(dev_a, port_a)}->{_end(*obs_a)}, {_end(dev_b, port_b)}->{_end(*obs_b)} (crossed)",
                ERROR, message))
            break
        else:
            expected = _end(*exp_a)
            if exp_a in exp.host_macs:
                expected += f" (MAC {exp.host_macs[exp_a]})"
            findings.setdefault(dev_a, []).append(Finding(
                "cabling", dev_a, port_a, expected, seen_a, ERROR,
                f"{port_a} on {dev_a}: expected {expected}, LLDP shows {seen_a}"))
    return findings


# --- link, speed, MTU ------------------------------------------------------------------
def check_link(reading: SwitchReading, exp: Expectations) -> dict[str, list[Finding]]:
    """{'link': [...], 'speed': [...], 'mtu': [...]} for the planned ports of one switch."""
    out: dict[str, list[Finding]] = {"link": [], "speed": [], "mtu": []}
    name = reading.name
    for port, planned in sorted(exp.ports.get(name, {}).items()):
        iface = (reading.interfaces or {}).get(port)
        to = _end(planned.peer_device, planned.peer_port)
        if iface is None:
            out["link"].append(Finding("link", name, port, f"up to {to}", "port not configured", ERROR,
                                       f"{port} on {name}: not configured (planned to {to})"))
            continue
        if not iface["is_up"]:
            state = "down" if iface["is_enabled"] else "admin down"
            out["link"].append(Finding("link", name, port, f"up to {to}", state, ERROR,
                                       f"{port} on {name} is {state} (planned up to {to})"))
        elif iface["speed"] > 0 and iface["speed"] != planned.speed_g * 1000.0:
            observed = f"{iface['speed'] / 1000:g}G"
            out["speed"].append(Finding("speed", name, port, f"{planned.speed_g}G", observed, ERROR,
                                        f"{port} on {name} runs at {observed}, planned {planned.speed_g}G"))
        if iface["mtu"] and iface["mtu"] != exp.mtu:
            out["mtu"].append(Finding("mtu", name, port, str(exp.mtu), str(iface["mtu"]), ERROR,
                                      f"{port} on {name} has MTU {iface['mtu']}, planned {exp.mtu}"))
    return out


# --- BGP -------------------------------------------------------------------------------
def pending_sessions(reading: SwitchReading, exp: Expectations) -> list[str]:
    """Planned sessions not (yet) established: the collector re-reads them within the settle time."""
    peers = ((reading.bgp or {}).get("global") or {}).get("peers") or {}
    return [n for n in exp.sessions.get(reading.name, {}) if not (peers.get(n) or {}).get("is_up")]


def check_bgp(reading: SwitchReading, exp: Expectations, tolerance: float = PREFIX_TOLERANCE) -> list[Finding]:
    name = reading.name
    peers = ((reading.bgp or {}).get("global") or {}).get("peers") or {}
    findings = []
    for neighbor, session in sorted(exp.sessions.get(name, {}).items()):
        peer = peers.get(neighbor)
        to = f"{_end(session.peer_device, session.peer_port)} (AS {session.peer_asn})"
        where = neighbor if neighbor == session.port else f"{neighbor} ({session.port})"
        if peer is None:
            findings.append(Finding("bgp", name, session.port, f"established with {to}", "not configured", ERROR,
                                    f"BGP {where} on {name}: no such neighbor (planned with {to})"))
            continue
        if not peer["is_up"]:
            state = "not established" if peer["is_enabled"] else "shut down"
            findings.append(Finding("bgp", name, session.port, f"established with {to}", state, ERROR,
                                    f"BGP {where} on {name} is {state} (planned with {to})"))
            continue
        received = peer["address_family"].get("ipv4", {}).get("received_prefixes", -1)
        low, high = session.prefix_range(tolerance)
        if received >= 0 and not low <= received <= high:
            findings.append(Finding("bgp", name, session.port, f"{low}-{high} prefixes (plan: {session.prefixes})",
                                    f"{received} prefixes", WARNING,
                                    f"BGP {where} on {name} receives {received} prefixes, expected "
                                    f"{low}-{high} (plan: {session.prefixes})"))
    return findings


# --- counters --------------------------------------------------------------------------
def check_errors(reading: SwitchReading, exp: Expectations) -> list[Finding]:
    """Error counters that rose between the two reads, on planned ports."""
    before, after = reading.counters
    findings = []
    for port in sorted(exp.ports.get(reading.name, {})):
        if port not in before or port not in after:
            continue
        rx = after[port]["rx_errors"] - before[port]["rx_errors"]
        tx = after[port]["tx_errors"] - before[port]["tx_errors"]
        if rx > 0 or tx > 0:
            observed = f"+{rx} rx, +{tx} tx errors in {reading.interval_s:.1f}s"
            findings.append(Finding("errors", reading.name, port, "no new errors", observed, ERROR,
                                    f"{port} on {reading.name}: errors rising ({observed})"))
    return findings


def check_pfc(reading: SwitchReading, exp: Expectations, threshold_per_s: float = PFC_THRESHOLD_PER_S) -> list[Finding]:
    """Pause frames per priority beyond the threshold (a pause storm, or pauses on a lossy priority)."""
    before, after = reading.pfc
    seconds = max(reading.interval_s, 1e-3)
    findings = []
    for port in sorted(exp.ports.get(reading.name, {})):
        if port not in before or port not in after:
            continue
        for direction in ("rx_pause", "tx_pause"):
            for priority, value in sorted(after[port][direction].items()):
                rate = (value - before[port][direction].get(priority, 0)) / seconds
                if rate > threshold_per_s:
                    lossy = "" if priority in exp.lossless_priorities else " (a lossy priority)"
                    observed = f"{rate:.0f} {direction.replace('_', ' ')} frames/s on priority {priority}{lossy}"
                    findings.append(Finding("pfc", reading.name, port, f"<= {threshold_per_s:g}/s", observed, ERROR,
                                            f"{port} on {reading.name}: {observed}"))
    return findings


def check_ecn(reading: SwitchReading, exp: Expectations, threshold_per_s: float = ECN_THRESHOLD_PER_S) -> list[Finding]:
    before, after = reading.pfc
    seconds = max(reading.interval_s, 1e-3)
    findings = []
    for port in sorted(exp.ports.get(reading.name, {})):
        if port not in before or port not in after:
            continue
        rate = (after[port]["ecn_marked"] - before[port]["ecn_marked"]) / seconds
        if rate > threshold_per_s:
            by_tc = {tc: (n - before[port]["ecn_marked_by_tc"].get(tc, 0)) / seconds
                     for tc, n in after[port].get("ecn_marked_by_tc", {}).items()}
            where = ", ".join(f"tc {tc}: {r:.0f}/s" for tc, r in sorted(by_tc.items()) if r > 0)
            observed = f"{rate:.0f} ECN-marked packets/s" + (f" ({where})" if where else "")
            findings.append(Finding("ecn", reading.name, port, f"<= {threshold_per_s:g}/s", observed, WARNING,
                                    f"{port} on {reading.name}: {observed}"))
    return findings
