"""What is not installed yet (issue 36): neither a failure nor "could not check".

A fabric grows in phases. A spines-first change toward a new unit configures spine ports for
leaves that are not racked yet; until they are, those ports are dark and their sessions idle.
A switch of the plan counts as not installed when the endpoints file does not list it (the lab
and the operator list what is racked), or when `--limit` leaves it out; the build-out's later
phases are not in the plan at all (generator/plan/growth.py: their ports carry no config).

A planned port toward such a switch is not installed only while it shows no sign of the far
end: its carrier is down and LLDP shows no neighbour, read from the switch. A live port is
checked like any other (a switch racked but not listed yet, a --limit that left out a running
switch). A port whose switch could not be read is not judged here: its checks are unknown.
"""

from __future__ import annotations

from generator.verify.checks import SwitchReading


def toward(plan, absent: dict[str, str]) -> dict[str, dict[str, str]]:
    """{installed switch: {plan port: the not-installed switch it is planned to}}."""
    out: dict[str, dict[str, str]] = {}
    for p in plan.ports:
        if p.peer_device in absent and p.device not in absent:
            out.setdefault(p.device, {})[p.port] = p.peer_device
    return out


def dark(reading: SwitchReading, port: str, names: dict[str, str] | None = None) -> bool:
    """PORT (a plan name) shows no far end in READING: carrier down, no LLDP neighbour. NAMES maps
    the switch's own port names to the plan's (SONiC, verify/ports.py) when READING is not renamed."""
    if reading.interfaces is None:
        return False
    interfaces = reading.interfaces if not names else {names.get(k, k): v for k, v in reading.interfaces.items()}
    lldp = reading.lldp or {}
    if names:
        lldp = {names.get(k, k): v for k, v in lldp.items()}
    iface = interfaces.get(port)
    return not (iface or {}).get("is_up") and not lldp.get(port)


def absent_ports(readings: dict[str, SwitchReading], planned: dict[str, dict[str, str]],
                 absent: dict[str, str]) -> list[tuple[str, str, str]]:
    """(switch, port, why) of every dark planned port toward a not-installed switch, in plan order
    of READINGS' switches (already renamed to plan port names)."""
    out = []
    for name in sorted(readings):
        for port, peer in planned.get(name, {}).items():
            if dark(readings[name], port):
                out.append((name, port, f"toward {peer}: {absent[peer]}"))
    return out
