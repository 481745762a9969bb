"""A simulated SONiC switch's hardware, optics, NTP and routes, printed as SONiC prints them.

Values come from platform_oper.py (healthy unless `lab up --faults` says otherwise); formats,
each restated from its source (sonic-utilities unless named):
- `show platform psustatus` (scripts/psushow): tabulate "simple" table PSU, Model, Serial,
  HW Rev, Voltage (V), Current (A), Power (W), Status (OK | NOT OK | NOT PRESENT), LED;
- `show platform fan` (scripts/fanshow): Drawer, LED, FAN, Speed, Direction, Presence, Status
  (OK | Not OK), Timestamp;
- `show platform temperature` (scripts/tempershow): Sensor, Temperature, High TH, Low TH,
  Crit High TH, Crit Low TH, Warning (True | False), Timestamp;
- `show ntp` (show/main.py: `ntpstat`, then `ntpq -p -n`, in the management VRF when it is on):
  ntpstat's first line "synchronised to NTP server (A) at stratum N" or "unsynchronised"; ntpq's
  peer table, the system peer's row tallied `*`;
- `show interfaces transceiver eeprom --dom` (sfputil's CMIS/SFF-8636 dump): one block per port,
  "EthernetN: SFP EEPROM detected" (or "... SFP EEPROM Not detected"), "Media Interface
  Technology", then ChannelMonitorValues (RX<n>Power / TX<n>Power in dBm),
  ChannelThresholdValues (RxPowerHighAlarm ...), ModuleMonitorValues (Temperature) and
  ModuleThresholdValues (TempHighAlarm ...), as the dumps sonic-utilities' tests hold;
- `show interfaces counters fec-stats` (`portstat -f`, utilities_common/portstat.py
  header_fec_only): IFACE, STATE, FEC_CORR, FEC_UNCORR, FEC_SYMBOL_ERR (corrected and
  uncorrectable codewords, symbol errors; counts with thousands commas), plus FEC_PRE_BER and
  FEC_POST_BER where the release has the port FEC BER feature (SONiC doc/port_fec_ber; sonic-mgmt
  skips its BER test when the columns are absent). The lab prints them, `N/A` on a down port;
  SONiC has no carrier-change counter in this table;
- `vtysh -c "show ip route json"` (FRR zebra_vty.c): {prefix: [{protocol, selected, installed,
  nexthops: [{ip, afi, interfaceName, active, fib}]}]}.
"""

from __future__ import annotations

import time

from generator.lab import platform_oper
from generator.lab.sonic_oper import _comma, _natural, names, raw_counters, simple_table, world_name
from generator.lab.world import Fabric


def psustatus(faults) -> str:
    rows = [[name, "MTEF-PSF-AC-C", f"MT0000{i}", "A3", "12.05", "10.50", "126.50", "OK" if ok else "NOT OK",
             "green" if ok else "red"] for i, (name, ok) in enumerate(platform_oper.environment(faults)["psu"].items())]
    return simple_table(["PSU", "Model", "Serial", "HW Rev", "Voltage (V)", "Current (A)", "Power (W)", "Status",
                         "LED"], rows)


def fans(faults) -> str:
    stamp = time.strftime("%Y%m%d %H:%M:%S")
    rows = [[f"drawer{name.split('/')[0][3:]}", "green" if ok else "red", f"fan{i}", "60%" if ok else "0%",
             "intake", "Present", "OK" if ok else "Not OK", stamp]
            for i, (name, ok) in enumerate(platform_oper.environment(faults)["fan"].items(), 1)]
    return simple_table(["Drawer", "LED", "FAN", "Speed", "Direction", "Presence", "Status", "Timestamp"], rows)


def temperatures(faults) -> str:
    stamp = time.strftime("%Y%m%d %H:%M:%S")
    rows = [[name, f"{cur:.1f}", f"{high:.1f}", "N/A", f"{crit:.1f}", "N/A", str(cur >= high), stamp]
            for name, (cur, high, crit) in platform_oper.environment(faults)["temperature"].items()]
    return simple_table(["Sensor", "Temperature", "High TH", "Low TH", "Crit High TH", "Crit Low TH", "Warning",
                         "Timestamp"], rows)


def ntp(running: dict, faults) -> str:
    state = platform_oper.ntp(faults, sorted(running.get("NTP_SERVER") or {}))
    if state["synchronised"]:
        head = (f"synchronised to NTP server ({state['reference']}) at stratum 2\n"
                "   time correct to within 12 ms\n   polling server every 64 s\n")
    else:
        head = "unsynchronised\n  time server re-starting\n   polling server every 8 s\n"
    table = ["     remote           refid      st t when poll reach   delay   offset  jitter",
             "=" * 78]
    for server in state["servers"]:
        tally = "*" if state["synchronised"] and server == state["reference"] else " "
        table.append(f"{tally}{server:<16} .GPS.            1 u   33   64  377    0.123    0.045   0.012")
    return head + "\n".join(table) + "\n"


_MEDIA = {"DAC": "Copper cable unequalized", "AOC": "850 nm VCSEL"}


def transceivers(name: str, running: dict, fabric: Fabric | None, faults) -> str:
    world = fabric.world() if fabric else None
    blocks = []
    for eth in sorted(running.get("PORT") or {}, key=_natural):
        port = world_name(eth, ((running["PORT"][eth]) or {}).get("alias"))
        module = platform_oper.transceiver(world.cable_at(name, port) if world else None, port, faults)
        if module is None:
            blocks.append(f"{eth}: SFP EEPROM Not detected")
            continue
        lines = [f"{eth}: SFP EEPROM detected", "        Identifier: QSFP112 or later with CMIS",
                 "        Connector: No separable connector"]
        if module["media"]:
            lines.append(f"        Media Interface Technology: {_MEDIA[module['media']]}")
        if "rx_dbm" in module:
            limits = module["thresholds"]
            lines.append("        ChannelMonitorValues:")
            for lane in range(1, module["lanes"] + 1):
                lines += [f"                RX{lane}Power: {module['rx_dbm']:.4f}dBm",
                          f"                TX{lane}Power: {module['tx_dbm']:.4f}dBm"]
            lines += ["        ChannelThresholdValues:",
                      f"                RxPowerHighAlarm  : {limits['rx'][1]:.4f}dBm",
                      f"                RxPowerLowAlarm   : {limits['rx'][0]:.4f}dBm",
                      f"                TxPowerHighAlarm  : {limits['tx'][1]:.4f}dBm",
                      f"                TxPowerLowAlarm   : {limits['tx'][0]:.4f}dBm",
                      "        ModuleMonitorValues:",
                      f"                Temperature: {module['temperature_c']:.4f}C",
                      "                Vcc: 3.3000Volts",
                      "        ModuleThresholdValues:",
                      f"                TempHighAlarm  : {limits['temperature'][1]:.4f}C",
                      f"                TempLowAlarm   : {limits['temperature'][0]:.4f}C"]
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks) + "\n"


def fec_stats(name: str, running: dict, fabric: Fabric | None, faults) -> str:
    rows = []
    for eth in sorted(running.get("PORT") or {}, key=_natural):
        row = running["PORT"][eth] or {}
        port = world_name(eth, row.get("alias"))
        up = bool(fabric and fabric.link(name, port).up)
        raw = raw_counters(name, eth, port, fabric, faults)
        state = "X" if str(row.get("admin_status", "down")) != "up" else ("U" if up else "D")
        ber = f"{platform_oper.ber(faults, port, up):.2e}" if up else "N/A"
        rows.append([eth, state, _comma(raw.get("fec_corrected", 0)), _comma(raw.get("fec_uncorrected", 0)), "0",
                     ber, "0.00e+00" if up else "N/A"])
    return simple_table(["IFACE", "STATE", "FEC_CORR", "FEC_UNCORR", "FEC_SYMBOL_ERR", "FEC_PRE_BER", "FEC_POST_BER"],
                        rows)


def routes_json(name: str, running: dict, fabric: Fabric | None) -> dict:
    ethernet = {world: eth for eth, world in names(running).items()}
    out = {}
    for prefix, hops in sorted((fabric.next_hops(name) if fabric else {}).items()):
        out[prefix] = [{"prefix": prefix, "protocol": "bgp", "selected": True, "destSelected": True,
                        "installed": True, "distance": 20, "metric": 0,
                        "nexthops": [{"ip": nid, "afi": "ipv4", "interfaceName": ethernet.get(port or "", port or ""),
                                      "active": True, "fib": True} for nid, port in hops]}]
    return out
