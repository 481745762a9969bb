"""Parsers for what a SONiC switch prints, into the arguments of the napalm model builders (oper.py).

JSON where SONiC offers it (portstat -j, wredstat -j, lldpd's json0, FRR's json); the text
tables of `show interfaces status` and `show pfc counters` where the release offers nothing
else (intfutil -j arrived in 202505, pfcstat has no JSON). Those tables are tabulate's
"simple" format: a header line, a line of dash runs (one per column, two spaces apart), then
one line per row; every cell lies within its column's dash run (tabulate pads the column to
its widest cell), so the dash runs give the column spans even for cells with spaces
("QSFP-DD Double Density 8X Pluggable Transceiver"). Formats and sources: generator/lab/sonic_oper.py.
"""

from __future__ import annotations

import re

from generator import sonic_release
from generator.common.errors import FabricgenError

_DASHES = re.compile(r"-+")
_BUILD = re.compile(r"^SONiC Software Version:[ \t]*(\S+)", re.MULTILINE)


class ParseError(FabricgenError, ValueError):
    """Output that is not the format we expect; the message names the command's output part."""


def simple_tables(text: str) -> list[list[dict[str, str]]]:
    """Every tabulate "simple" table in `text`, each as a list of {header: cell}."""
    lines = text.splitlines()
    tables = []
    for i in range(1, len(lines)):
        rule = lines[i]
        if not rule.strip() or set(rule.strip()) - {"-", " "}:
            continue
        spans = [m.span() for m in _DASHES.finditer(rule)]
        header_line = lines[i - 1]
        headers = [header_line[a:b].strip() for a, b in spans]
        if not all(headers):
            continue
        rows = []
        for line in lines[i + 1:]:
            if not line.strip():
                break
            rows.append({h: line[a:b].strip() for h, (a, b) in zip(headers, spans, strict=True)})
        tables.append(rows)
    return tables


def count(text: str | int | None) -> int:
    """'1,234' (ns_diff / format_number_with_comma) -> 1234; 'N/A' or empty -> 0."""
    value = str(text or "").replace(",", "").strip()
    return int(value) if value.lstrip("-").isdigit() else 0


def interfaces_status(text: str) -> dict[str, dict[str, str]]:
    """`show interfaces status` -> {Ethernet0: {Lanes, Speed, MTU, FEC, Alias, Vlan, Oper, Admin, Type, ...}}."""
    for table in simple_tables(text):
        if table and "Interface" in table[0] and "Oper" in table[0]:
            return {row["Interface"]: row for row in table}
    if "Interface" in text:
        return {}           # a switch without ports prints the header only
    raise ParseError("show interfaces status: no Interface/Oper table in the output")


def pfc_counters(text: str) -> tuple[dict[str, dict[int, int]], dict[str, dict[int, int]]]:
    """`show pfc counters` -> (rx, tx), each {port: {priority: pause frames}}."""
    found: dict[str, dict[str, dict[int, int]]] = {}
    for table in simple_tables(text):
        for row in table:
            title = next((k for k in row if k in ("Port Rx", "Port Tx")), None)
            if title is None:
                continue
            found.setdefault(title, {})[row[title]] = {p: count(row.get(f"PFC{p}")) for p in range(8)}
    if "Port Rx" not in text or "Port Tx" not in text:
        raise ParseError("show pfc counters: expected the 'Port Rx' and 'Port Tx' tables")
    return found.get("Port Rx", {}), found.get("Port Tx", {})


def pfcwd_stats(text: str) -> dict[str, dict[int, tuple[int, int]]]:
    """`show pfcwd stats` -> {port: {queue: (storms detected, storms restored)}}; queues without a
    row saw none (pfcwd prints only non-zero rows without -e)."""
    if "STORM DETECTED/RESTORED" not in text:
        raise ParseError("show pfcwd stats: expected the QUEUE / STORM DETECTED/RESTORED table")
    out: dict[str, dict[int, tuple[int, int]]] = {}
    for table in simple_tables(text):
        for row in table:
            port, _, queue = str(row.get("QUEUE", "")).rpartition(":")
            detected, _, restored = str(row.get("STORM DETECTED/RESTORED", "")).partition("/")
            if port and queue.isdigit():
                out.setdefault(port, {})[int(queue)] = (count(detected), count(restored))
    return out


def ecn_marked(data: dict) -> dict[str, dict[int, int]]:
    """`show queue wredcounters --json` -> {port: {unicast queue: ECN-marked packets}}."""
    out: dict[str, dict[int, int]] = {}
    for port, queues in data.items():
        if not isinstance(queues, dict):
            continue
        per = out.setdefault(port, {})
        for name, entry in queues.items():
            match = re.fullmatch(r"UC(\d+)", str(name))
            if match and isinstance(entry, dict):
                per[int(match.group(1))] = count(entry.get("ecnmarkedpacket"))
    return out


def _value(node: dict, key: str, default: str = "") -> str:
    """json0 holds every leaf as [{"value": ...}]."""
    items = node.get(key) or []
    return str(items[0].get("value", default)) if items and isinstance(items[0], dict) else default


def lldp_json0(data: dict) -> dict[str, list[dict]]:
    """lldpctl -f json0 -> {local port: [{system_name, port_id, port_description, chassis_id,
    system_description, capabilities, enabled_capabilities}]}."""
    out: dict[str, list[dict]] = {}
    for block in data.get("lldp") or []:
        for entry in block.get("interface") or []:
            chassis = (entry.get("chassis") or [{}])[0]
            port = (entry.get("port") or [{}])[0]
            port_id = (port.get("id") or [{}])[0]
            chassis_id = (chassis.get("id") or [{}])[0]
            caps = [c for c in chassis.get("capability") or [] if isinstance(c, dict)]
            out.setdefault(str(entry.get("name", "")), []).append({
                "system_name": _value(chassis, "name"), "port_id": str(port_id.get("value", "")),
                "port_description": _value(port, "descr"), "chassis_id": str(chassis_id.get("value", "")),
                "system_description": _value(chassis, "descr"),
                "capabilities": [str(c.get("type", "")).lower() for c in caps],
                "enabled_capabilities": [str(c.get("type", "")).lower() for c in caps if c.get("enabled")]})
    return out


def build(show_version: str) -> str:
    """'SONiC Software Version: SONiC.202411.123-abc' -> 'SONiC.202411.123-abc' ('' when absent)."""
    match = _BUILD.search(show_version)
    return match.group(1) if match else ""


def release(show_version: str) -> str | None:
    """The release of `show version`'s build string alone (no sonic_version.yml): '202411' of
    SONiC.202411.123-abc; None for master builds and date tags (generator/sonic_release.py)."""
    return sonic_release.release_of(None, build(show_version))


def table_rows(text: str, key: str, what: str) -> list[dict[str, str]]:
    """The rows of the tabulate "simple" table whose header has KEY (psushow, fanshow, tempershow)."""
    for table in simple_tables(text):
        if table and key in table[0]:
            return table
    if key in text:
        return []           # the header alone: nothing to list
    raise ParseError(f"{what}: no table with a {key!r} column in the output")


_NTPSTAT = re.compile(r"^synchroni[sz]ed to .*?\(([^)]*)\)", re.MULTILINE)
_PEER = re.compile(r"^([ *#o+x.-])(\S+)\s+\S+\s+\d+\s+\S\s", re.MULTILINE)


def ntp(text: str) -> tuple[str | None, list[tuple[str, bool]]]:
    """`show ntp` -> (the server ntpstat says it is synchronised to, or None; [(peer, is the system
    peer)] from ntpq -p -n, whose tally code `*` marks the system peer (ntpq(1))."""
    synced = _NTPSTAT.search(text)
    peers = [(m.group(2), m.group(1) == "*") for m in _PEER.finditer(text)]
    if not synced and "unsynchronised" not in text and "unsynchronized" not in text and not peers:
        raise ParseError("show ntp: neither ntpstat's state nor ntpq's peer table in the output")
    return (synced.group(1) if synced else None), peers


_BLOCK = re.compile(r"^(Ethernet\d+): SFP EEPROM (detected|Not detected)", re.MULTILINE)
_FIELD = re.compile(r"^\s+([A-Za-z0-9 ]+?)\s*:\s*(.*?)\s*$")
_LEADING = re.compile(r"^[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")


def number(text: str | None) -> float | None:
    """'41.0' / '-1.6000dBm' / '75.0000C' / '1.00e-09' -> float; 'N/A' or empty -> None."""
    match = _LEADING.match(str(text or "").strip())
    return float(match.group(0)) if match else None


def transceivers(text: str) -> dict[str, dict]:
    """`show interfaces transceiver eeprom --dom` -> {port: {present, media_text, rx: [dBm], tx: [dBm],
    temperature, limits: {RxPowerLowAlarm: ..., TempHighAlarm: ...}}}."""
    starts = list(_BLOCK.finditer(text))
    out: dict[str, dict] = {}
    for i, match in enumerate(starts):
        body = text[match.end(): starts[i + 1].start() if i + 1 < len(starts) else len(text)]
        entry: dict = {"present": match.group(2) == "detected", "media_text": "", "rx": {}, "tx": {},
                       "temperature": None, "limits": {}}
        for line in body.splitlines():
            field = _FIELD.match(line)
            if not field:
                continue
            key, value = field.group(1).strip(), field.group(2)
            lane = re.fullmatch(r"(RX|TX)(\d+)Power", key)
            if lane and number(value) is not None:
                entry[lane.group(1).lower()][int(lane.group(2))] = number(value)
            elif key == "Media Interface Technology":
                entry["media_text"] = value
            elif key == "Temperature":
                entry["temperature"] = number(value)
            elif key.endswith("Alarm") and number(value) is not None:
                entry["limits"][key] = number(value)
        out[match.group(1)] = entry
    if not starts and "Ethernet" in text:
        raise ParseError("show interfaces transceiver eeprom --dom: no 'EthernetN: SFP EEPROM' block")
    return out
