"""LLDP on a lab GPU server: what its lldpd hears on each rail (the switch at the far end of the
cable, from the same world the switches answer from) and the simulated `lldpcli` that prints it.

The lab process writes the host's view to $FAKE_NIC_STATE/lldp.json before every command it runs
on the host (write_view), so lldpcli reads the world as it is at that moment: a cable unplugged, a
rail port down or a leaf port not configured yet (admin down) is no neighbour, as on the real host.
The host's own side agrees with the switches': its NICs' MACs are world.host_mac() (gpu_host.build
writes them to /sys/class/net/<netdev>/address), its port ID is that MAC, or the netdev where the
cable's lldp_portid says lldpd runs `configure lldp portidsubtype ifname`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

VIEW_FILE = "lldp.json"


def write_view(state_dir: Path, host: str, netdevs: Sequence[str], fabric) -> None:
    """state_dir/lldp.json: {netdev: {"local": {id, subtype}, "neighbor": {...} | None}}."""
    world = fabric.world()
    view = {}
    with fabric.frozen():
        for netdev in netdevs:
            cable = world.cable_at(host, netdev)
            ifname = cable is not None and cable.lldp_portid == "ifname"
            local = {"id": netdev if ifname else world.host_mac(host, netdev), "subtype": "ifname" if ifname else "mac",
                     "mac": world.host_mac(host, netdev)}
            found = fabric.host_lldp(host, netdev)
            neighbor = None if found is None else {
                "name": found.system_name, "chassis_id": found.chassis_id, "descr": found.system_description,
                "mgmt_ip": found.management_ip, "port_id": found.port_id, "port_subtype": found.port_id_subtype,
                "port_descr": found.port_description, "capabilities": list(found.capabilities)}
            view[netdev] = {"local": local, "neighbor": neighbor}
    path = state_dir / VIEW_FILE
    tmp = path.with_name(f".{VIEW_FILE}.tmp")
    tmp.write_text(json.dumps(view, sort_keys=True))
    tmp.replace(path)


# lldpcli(8) of lldpd 1.0: `show neighbors [ports IF[,IF]] [summary|details]` and `show interfaces`,
# each with -f plain (default), json or keyvalue, as src/client/display.c and its writers
# (text_writer.c, json_writer.c, kv_writer.c) print them. lldpd's JSON writer makes "interface" an
# object for one interface and a list of one-key objects for several (json_writer.c merges
# same-named keys into a list). Anything else exits 1 naming the lab's limit.
LLDPCLI_TOOL = r'''#!/usr/bin/python3
import json, os, sys
from pathlib import Path

VIEW = Path(os.environ["FAKE_NIC_STATE"]) / "lldp.json"
CAPS = {"bridge": "Bridge", "router": "Router", "station": "Station"}
RULE = "-" * 79

def load():
    return json.loads(VIEW.read_text()) if VIEW.exists() else {}

def neighbor_tree(netdev, n):
    caps = [{"type": CAPS.get(c, c.title()), "enabled": True} for c in n["capabilities"]]
    chassis = {"id": {"type": "mac", "value": n["chassis_id"]}, "descr": n["descr"], "capability": caps}
    if n["mgmt_ip"]:
        chassis["mgmt-ip"] = n["mgmt_ip"]
    return {"via": "LLDP", "rid": "1", "age": "0 day, 00:00:30",
            "chassis": {n["name"]: chassis},
            "port": {"id": {"type": n["port_subtype"], "value": n["port_id"]}, "descr": n["port_descr"],
                     "ttl": "120"}}

def local_tree(netdev, local):
    return {"chassis": {}, "port": {"id": {"type": local["subtype"], "value": local["id"]}, "descr": netdev},
            "ttl": "120"}

def as_json(items):
    if not items:
        return {"lldp": {}}
    entries = [{name: tree} for name, tree in items]
    return {"lldp": {"interface": entries[0] if len(entries) == 1 else entries}}

def keyvalue(prefix, tree, out):
    for key, value in tree.items():
        if isinstance(value, dict):
            keyvalue(f"{prefix}.{key}", value, out)
        elif isinstance(value, list):
            for item in value:
                keyvalue(f"{prefix}.{key}", item, out)
        else:
            out.append(f"{prefix}.{key}={'on' if value is True else value}")

def plain_neighbors(items, title):
    print(RULE)
    print(title)
    print(RULE)
    for netdev, n in items:
        print(f"Interface:    {netdev}, via: LLDP, RID: 1, Time: 0 day, 00:00:30")
        print("  Chassis:     ")
        print(f"    ChassisID:    mac {n['chassis_id']}")
        print(f"    SysName:      {n['name']}")
        print(f"    SysDescr:     {n['descr']}")
        if n["mgmt_ip"]:
            print(f"    MgmtIP:       {n['mgmt_ip']}")
        for c in n["capabilities"]:
            print(f"    Capability:   {CAPS.get(c, c.title())}, on")
        print("  Port:        ")
        print(f"    PortID:       {n['port_subtype']} {n['port_id']}")
        print(f"    PortDescr:    {n['port_descr']}")
        print("    TTL:          120")
        print(RULE)

def main(argv):
    fmt = "plain"
    args = []
    while argv:
        a = argv.pop(0)
        if a == "-f" and argv:
            fmt = argv.pop(0)
        elif a.startswith("-f") and len(a) > 2:
            fmt = a[2:]
        else:
            args.append(a)
    if fmt not in ("plain", "json", "keyvalue"):
        print(f"lldpcli: lab host: format {fmt} is not simulated (plain, json, keyvalue)", file=sys.stderr)
        return 1
    view = load()
    ports = sorted(view)
    if "ports" in args:
        wanted = args[args.index("ports") + 1].split(",")
        ports = [p for p in ports if p in wanted]
        args = [a for a in args if a not in ("ports", ",".join(wanted))]
    words = [a for a in args if a not in ("summary", "details")]
    if words == ["show", "neighbors"] or words == ["show", "neighbours"]:
        items = [(p, view[p]["neighbor"]) for p in ports if view[p]["neighbor"]]
        if fmt == "json":
            print(json.dumps(as_json([(p, neighbor_tree(p, n)) for p, n in items]), indent=2))
        elif fmt == "keyvalue":
            out = []
            for p, n in items:
                keyvalue(f"lldp.{p}", neighbor_tree(p, n), out)
            print("\n".join(out))
        else:
            plain_neighbors(items, "LLDP neighbors:")
        return 0
    if words == ["show", "interfaces"]:
        items = [(p, local_tree(p, view[p]["local"])) for p in ports]
        if fmt == "json":
            print(json.dumps(as_json(items), indent=2))
        elif fmt == "keyvalue":
            out = []
            for p, tree in items:
                keyvalue(f"lldp.{p}", tree, out)
            print("\n".join(out))
        else:
            print(RULE)
            print("LLDP interfaces:")
            print(RULE)
            for p in ports:
                local = view[p]["local"]
                print(f"Interface:    {p}")
                print(f"  Port:        ")
                print(f"    PortID:       {local['subtype']} {local['id']}")
                print(f"    PortDescr:    {p}")
                print("  TTL:          120")
                print(RULE)
        return 0
    print(f"lldpcli: lab host: `{' '.join(args)}` is not simulated (show neighbors, show interfaces)", file=sys.stderr)
    return 1

sys.exit(main(sys.argv[1:]))
'''
