"""OS-neutral operational getters: napalm's models (napalm.base.models) built from plain values.

Both switch drivers parse their OS's output (NVUE JSON, SONiC `show` / sonic-db-cli JSON) into
the arguments of these builders, so every getter returns exactly napalm's keys and types and
the parsing stays in the driver that knows its OS.

The driver extra `get_pfc_ecn_counters()` has no napalm model; PFC_ECN_MODEL below is ours:
    {port: {"rx_pause": {priority: frames}, "tx_pause": {priority: frames},
            "ecn_marked": packets, "ecn_marked_by_tc": {traffic class: packets}}}
`ecn_marked` is the port total; `ecn_marked_by_tc` is empty when the OS counts per port only
(NVUE's `counters qos port-stats`). `ecn_marked` is UNCOUNTED (-1) when the OS release has no
ECN-marked counter at all (SONiC before 202505: no wredstat); verify then skips the ecn check.
"""

from __future__ import annotations

import re
from typing import Any

from napalm.base import models

_SPEED = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([KMGT]?)(?:b(?:ps|/s)?)?\s*$", re.IGNORECASE)
_UNIT_MBPS = {"": 1e-6, "K": 1e-3, "M": 1.0, "G": 1e3, "T": 1e6}
UNKNOWN = -1.0      # napalm drivers report unknown speed / flap time as -1
UNCOUNTED = -1      # pfc_ecn: the OS release has no such counter


def speed_mbps(text: Any) -> float:
    """napalm reports speed in Mbit/s as a float: "400G" -> 400000.0; unknown -> -1.0."""
    if isinstance(text, int | float):
        return float(text)
    match = _SPEED.match(str(text or ""))
    if not match:
        return UNKNOWN
    return float(match.group(1)) * _UNIT_MBPS[match.group(2).upper()]


def _int(value: Any) -> int:
    try:
        return int(float(value))
    except (TypeError, ValueError):
        return 0


def interface(*, is_up: bool, is_enabled: bool, description: str = "", last_flapped: float = UNKNOWN,
              speed: float = UNKNOWN, mtu: int = 0, mac_address: str = "") -> models.InterfaceDict:
    return {"is_up": bool(is_up), "is_enabled": bool(is_enabled), "description": str(description),
            "last_flapped": float(last_flapped), "speed": float(speed), "mtu": int(mtu),
            "mac_address": str(mac_address)}


COUNTER_KEYS = tuple(models.InterfaceCounterDict.__annotations__)


def counters(**values: Any) -> models.InterfaceCounterDict:
    """Every napalm counter key, 0 where the OS has no such counter."""
    unknown = set(values) - set(COUNTER_KEYS)
    if unknown:
        raise ValueError(f"not napalm interface counters: {sorted(unknown)}")
    return {key: _int(values.get(key, 0)) for key in COUNTER_KEYS}


def lldp_neighbor(hostname: str, port: str) -> models.LLDPNeighborDict:
    return {"hostname": str(hostname), "port": str(port)}


def lldp_neighbor_detail(*, remote_port: str, remote_system_name: str, remote_chassis_id: str = "",
                         remote_port_description: str = "", remote_system_description: str = "",
                         capabilities: list[str] | tuple[str, ...] = (), enabled_capabilities=None,
                         parent_interface: str = "") -> models.LLDPNeighborDetailDict:
    return {"parent_interface": str(parent_interface), "remote_port": str(remote_port),
            "remote_port_description": str(remote_port_description),
            "remote_chassis_id": str(remote_chassis_id), "remote_system_name": str(remote_system_name),
            "remote_system_description": str(remote_system_description),
            "remote_system_capab": [str(c) for c in capabilities],
            "remote_system_enable_capab": [str(c) for c in (capabilities if enabled_capabilities is None
                                                            else enabled_capabilities)]}


def bgp_peer(*, local_as: int, remote_as: int, remote_id: str, is_up: bool, is_enabled: bool = True,
             description: str = "", uptime: int = -1, received: int = -1, accepted: int = -1,
             sent: int = -1) -> models.PeerDict:
    return {"local_as": _int(local_as), "remote_as": _int(remote_as), "remote_id": str(remote_id),
            "is_up": bool(is_up), "is_enabled": bool(is_enabled), "description": str(description),
            "uptime": int(uptime),
            "address_family": {"ipv4": {"received_prefixes": int(received), "accepted_prefixes": int(accepted),
                                        "sent_prefixes": int(sent)}}}


def bgp_neighbors(router_id: str, peers: dict[str, models.PeerDict]) -> dict:
    """get_bgp_neighbors: napalm keys VRFs, "global" being the default VRF."""
    return {"global": {"router_id": str(router_id), "peers": dict(sorted(peers.items()))}}


def pfc_watchdog(storms: dict[int, tuple[Any, Any]]) -> dict:
    """get_pfc_watchdog_counters() per port: {priority/queue: {"storm_detected": int,
    "storm_restored": int | None}} (None: the OS prints no restored count, NVUE). A queue the
    OS prints no row for has seen no storm."""
    return {int(q): {"storm_detected": _int(d), "storm_restored": None if r is None else _int(r)}
            for q, (d, r) in sorted(storms.items())}


def pfc_ecn(*, rx_pause: dict[int, int], tx_pause: dict[int, int], ecn_marked: int,
            ecn_marked_by_tc: dict[int, int] | None = None) -> dict:
    return {"rx_pause": {int(k): _int(v) for k, v in sorted(rx_pause.items())},
            "tx_pause": {int(k): _int(v) for k, v in sorted(tx_pause.items())},
            "ecn_marked": _int(ecn_marked),
            "ecn_marked_by_tc": {int(k): _int(v) for k, v in sorted((ecn_marked_by_tc or {}).items())}}


# --- hardware, optics, FEC, time, routes ---------------------------------------------------
# napalm models where napalm has one (get_environment, get_optics, get_ntp_stats); the driver
# extras below have ours:
#   get_transceivers()    {port: TRANSCEIVER}, TRANSCEIVER = {"present": bool, "media": "DAC"|"AOC"|"",
#                          "rx_power_dbm": [per lane], "tx_power_dbm": [per lane],
#                          "temperature_c": float | None, "thresholds": {"rx_power_dbm": (low, high),
#                          "tx_power_dbm": (low, high), "temperature_c": (low, high)} (alarm limits
#                          the module reports; a limit it does not report is absent)}
#   get_phy_counters()    {port: {"fec_corrected": int, "fec_uncorrected": int,
#                          "pre_fec_ber": float | None, "carrier_transitions": int | None}}
#                          (None: the OS has no such counter; pre-FEC BER on releases without it,
#                          carrier changes on SONiC, whose CLI tables hold none: verify skips flaps)
#   get_route_next_hops() {prefix: {"protocol": str, "next_hops": [interface or address]}} (IPv4 RIB)
def environment(*, fans: dict[str, bool], psus: dict[str, bool],
                temperatures: dict[str, tuple[float, bool, bool]]) -> models.EnvironmentDict:
    """temperatures: name -> (celsius, is_alert, is_critical). PSU output/capacity, CPU and memory
    are not read: -1.0 / empty, as napalm drivers report what they do not know."""
    return {"fans": {str(n): {"status": bool(ok)} for n, ok in sorted(fans.items())},
            "power": {str(n): {"status": bool(ok), "output": UNKNOWN, "capacity": UNKNOWN}
                      for n, ok in sorted(psus.items())},
            "temperature": {str(n): {"temperature": float(t), "is_alert": bool(alert), "is_critical": bool(crit)}
                            for n, (t, alert, crit) in sorted(temperatures.items())},
            "cpu": {}, "memory": {"used_ram": -1, "available_ram": -1}}


def _state(value: float) -> models.OpticsStateDict:
    return {"instant": float(value), "avg": float(value), "min": float(value), "max": float(value)}


def optics(transceivers: dict[str, dict]) -> dict[str, models.OpticsDict]:
    """get_optics from get_transceivers: modules with DOM only (napalm: dBm; bias not read: 0.0)."""
    out = {}
    for port, module in sorted(transceivers.items()):
        rx, tx = module.get("rx_power_dbm") or [], module.get("tx_power_dbm") or []
        if not module.get("present") or not (rx or tx):
            continue
        lanes = max(len(rx), len(tx))
        out[port] = {"physical_channels": {"channel": [
            {"index": i, "state": {"input_power": _state(rx[i] if i < len(rx) else UNKNOWN),
                                   "output_power": _state(tx[i] if i < len(tx) else UNKNOWN),
                                   "laser_bias_current": _state(0.0)}} for i in range(lanes)]}}
    return out


def ntp_peer(*, remote: str, synchronized: bool, referenceid: str = "", offset_ms: float = 0.0) -> models.NTPStats:
    return {"remote": str(remote), "referenceid": str(referenceid), "synchronized": bool(synchronized),
            "stratum": -1, "type": "", "when": "", "hostpoll": -1, "reachability": -1, "delay": -1.0,
            "offset": float(offset_ms), "jitter": -1.0}


def transceiver(*, present: bool, media: str = "", rx_power_dbm=(), tx_power_dbm=(), temperature_c=None,
                thresholds: dict | None = None) -> dict:
    media = str(media or "").upper()
    return {"present": bool(present), "media": media if media in ("DAC", "AOC") else "",
            "rx_power_dbm": [float(v) for v in rx_power_dbm], "tx_power_dbm": [float(v) for v in tx_power_dbm],
            "temperature_c": None if temperature_c is None else float(temperature_c),
            "thresholds": {k: (float(lo), float(hi)) for k, (lo, hi) in sorted((thresholds or {}).items())}}


def phy_counters(*, fec_corrected: Any, fec_uncorrected: Any, pre_fec_ber: float | None,
                 carrier_transitions: Any) -> dict:
    return {"fec_corrected": _int(fec_corrected), "fec_uncorrected": _int(fec_uncorrected),
            "pre_fec_ber": None if pre_fec_ber is None else float(pre_fec_ber),
            "carrier_transitions": None if carrier_transitions is None else _int(carrier_transitions)}


def route(*, protocol: str, next_hops: list[str]) -> dict:
    return {"protocol": str(protocol), "next_hops": sorted(str(h) for h in next_hops)}
