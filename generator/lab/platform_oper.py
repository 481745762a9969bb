"""The simulated switch's hardware and time: PSUs, fans, sensors, transceivers, FEC, carrier, NTP.

OS-neutral values; nvue_oper.py prints them in NVUE's shapes. Healthy unless the switch's
faults (`lab up --faults`, fault_file.py) say otherwise:
- two PSUs and six fans, all ok; the ASIC sensor at 45 C with its max/critical limits;
- a transceiver in every port that has a cable (an unplugged port has none: a DAC or AOC is
  one part with its cable). A DAC is passive copper: no DOM (no power, no temperature). An AOC
  reports per-lane Rx/Tx power and module temperature with its own alarm thresholds (CMIS /
  SFF-8636 keep them in the module's threshold page); a wiring row without a `cable` column
  installs a module that names no media type;
- pre-FEC BER 1e-9 on an up link; corrected codewords grow at (BER x line rate) per second,
  uncorrected ones only above the RS(544,514) "KP4" FEC's correction limit of about 2.4e-4
  (IEEE 802.3 clause 119);
- carrier transitions: 1 for a link that came up, plus 2 per fault `link_flaps` (down and up);
- NTP synchronised to the first configured server.
"""

from __future__ import annotations

PSU_COUNT, FAN_COUNT = 2, 6
ASIC_TEMP_C, ASIC_MAX_C, ASIC_CRIT_C = 45.0, 105.0, 120.0
HEALTHY_BER = 1e-9
KP4_LIMIT_BER = 2.4e-4
LANES = 4
# the lab AOC's own alarm thresholds (its threshold page): (low, high)
MODULE_RX_DBM, MODULE_TX_DBM, MODULE_TEMP_C = (-10.4, 5.0), (-7.3, 5.0), (-5.0, 75.0)
HEALTHY_RX_DBM, HEALTHY_TX_DBM, HEALTHY_MODULE_C = -1.6, 1.1, 41.0
FACTORY_NTP = "0.cumulusnetworks.pool.ntp.org"


def _switch(faults) -> dict:
    return faults.switch or {}


def _port(faults, port: str) -> dict:
    return (faults.ports or {}).get(port) or {}


def os_version(faults, release: str) -> str:
    return str(_switch(faults).get("os_version") or release)


def environment(faults) -> dict:
    """{"psu": {name: ok}, "fan": {name: ok}, "temperature": {name: (current, max, crit)}}."""
    sw = _switch(faults)
    psus = sw.get("psu") or ["ok"] * PSU_COUNT
    fans = sw.get("fans") or ["ok"] * FAN_COUNT
    return {"psu": {f"PSU{i}": state == "ok" for i, state in enumerate(psus, 1)},
            "fan": {f"FAN{i}/1": state == "ok" for i, state in enumerate(fans, 1)},
            "temperature": {"ASIC": (float(sw.get("temperature_c", ASIC_TEMP_C)), ASIC_MAX_C, ASIC_CRIT_C)}}


def transceiver(cable, port: str, faults) -> dict | None:
    """The module in a port: None when no cable is plugged in; media "" when the wiring does not say."""
    if cable is None:
        return None
    media = cable.cable
    module = {"media": media, "lanes": LANES}
    if media != "DAC":                # passive copper has no DOM
        fault = _port(faults, port)
        module |= {"rx_dbm": fault.get("rx_power_dbm", HEALTHY_RX_DBM),
                   "tx_dbm": fault.get("tx_power_dbm", HEALTHY_TX_DBM),
                   "temperature_c": fault.get("module_temperature_c", HEALTHY_MODULE_C),
                   "thresholds": {"rx": MODULE_RX_DBM, "tx": MODULE_TX_DBM, "temperature": MODULE_TEMP_C}}
    return module


def ber(faults, port: str, up: bool) -> float:
    return float(_port(faults, port).get("fec_ber", HEALTHY_BER)) if up else 0.0


def phy_rates(faults, fabric, device: str, port: str) -> dict[str, float]:
    """Per-second growth of the FEC codeword counters (world.Fabric.counters integrates them)."""
    config = fabric.port_config(device, port)
    speed = str(config.speed or "") if config else ""
    speed_g = int(speed[:-1]) if speed.endswith("G") and speed[:-1].isdigit() else 0
    up = fabric.link(device, port).up
    if not up:
        return {}
    rate = ber(faults, port, up) * speed_g * 1e9
    uncorrectable = max(0.0, ber(faults, port, up) - KP4_LIMIT_BER) * speed_g * 1e9
    return {"fec_corrected": rate, "fec_uncorrected": uncorrectable}


def carrier_transitions(faults, port: str, up: bool) -> int:
    return (1 if up else 0) + 2 * int(_port(faults, port).get("link_flaps", 0))


def ntp(faults, servers: list[str]) -> dict:
    """{"synchronised": bool, "reference": str, "servers": [...]} for the configured servers."""
    servers = servers or [FACTORY_NTP]
    synced = _switch(faults).get("ntp", "synced") == "synced"
    return {"synchronised": synced, "reference": servers[0] if synced else "", "servers": servers}
