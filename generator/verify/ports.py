"""Plan port names on switches that name their ports otherwise: the one place verify maps them.

The plan, its cabling.csv and every verify finding speak the plan's port names (swp1, swp1s0).
A SONiC switch answers with its own: Ethernet<N> for its ports, and over LLDP a SONiC
neighbour announces its port alias (etp1, etp1a; lldpmgrd: `portidsubtype local <alias>`).
The render's switch layout (generator/render/sonic.py switch_layout) holds both for every plan
port, so the readings of a SONiC fabric are renamed here, right after they are read, and the
checks stay OS-neutral.
"""

from __future__ import annotations

from dataclasses import replace


def sonic_names(plan) -> dict[str, dict[str, str]]:
    """switch -> {Ethernet name or alias: plan port} for every planned port of a SONiC fabric."""
    if plan.switch_os != "sonic":
        return {}
    from generator.render.sonic import switch_layout

    out: dict[str, dict[str, str]] = {}
    for sw in plan.switches:
        names: dict[str, str] = {}
        for sonic_port, plan_port in switch_layout(plan, sw).ports:
            if plan_port is not None:
                names[sonic_port.name] = plan_port.port
                names[sonic_port.alias] = plan_port.port
        out[sw.name] = names
    return out


def _keys(data: dict | None, names: dict[str, str]) -> dict | None:
    return None if data is None else {names.get(k, k): v for k, v in data.items()}


def _pair(reads: tuple | None, names: dict[str, str]) -> tuple | None:
    return None if reads is None else (_keys(reads[0], names), _keys(reads[1], names))


def to_plan_names(readings: dict, plan) -> dict:
    """The readings (verify.checks.SwitchReading) with SONiC port names replaced by the plan's."""
    all_names = sonic_names(plan)
    if not all_names:
        return readings
    out = {}
    for name, reading in readings.items():
        names = all_names.get(name, {})
        lldp = None
        if reading.lldp is not None:
            lldp = {}
            for port, seen in reading.lldp.items():
                lldp[names.get(port, port)] = [
                    {**n, "port": all_names.get(n["hostname"].split(".")[0], {}).get(n["port"], n["port"])}
                    for n in seen]
        bgp = reading.bgp
        if bgp is not None:
            bgp = {vrf: {**data, "peers": _keys(data.get("peers") or {}, names)} for vrf, data in bgp.items()}
        out[name] = replace(reading, interfaces=_keys(reading.interfaces, names), lldp=lldp, bgp=bgp,
                            counters=_pair(reading.counters, names), pfc=_pair(reading.pfc, names),
                            transceivers=_keys(reading.transceivers, names), phy=_pair(reading.phy, names))
    return out
