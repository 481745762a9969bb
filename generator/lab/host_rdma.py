"""The simulated `rdma` (iproute2) of a lab GPU server: `rdma link show` and `rdma dev show`, read
from the host's own /sys ($FABRICGEN_SYSROOT/sys/class/infiniband), so a rail-port-down fault (the
port's state DOWN) shows here as on the real server.

Output as iproute2's rdma/link.c (link_one_show) and rdma/dev.c (dev_one_show) print it: text
`link mlx5_0/1 state ACTIVE physical_state LINK_UP netdev ens1f0np0`, and with -j one object per
port {"ifindex", "ifname", "port", "state", "physical_state", "netdev", "netdev_index"}; the state
names are rdma/link.c's caps_to_str tables indexed by the sysfs number ("4: ACTIVE" -> ACTIVE,
"5: LinkUp" -> LINK_UP). Anything else exits 1 naming the lab's limit.
"""

RDMA_TOOL = r'''#!/usr/bin/python3
import json, os, sys
from pathlib import Path

SYSROOT = os.environ.get("FABRICGEN_SYSROOT", "")
IB = Path(SYSROOT + "/sys/class/infiniband")
NET = Path(SYSROOT + "/sys/class/net")
STATES = ["NOP", "DOWN", "INIT", "ARMED", "ACTIVE", "ACTIVE_DEFER"]
PHYS = ["NOP", "SLEEP", "POLLING", "DISABLED", "PORT_CONFIGURATION_TRAINING", "LINK_UP",
        "LINK_ERROR_RECOVERY", "PHY_TEST"]

def number(path):
    try:
        return int(path.read_text().split(":")[0])
    except (OSError, ValueError):
        return 0

def name(table, value):
    return table[value] if 0 <= value < len(table) else "UNKNOWN"

def devices():
    return sorted(p.name for p in IB.iterdir()) if IB.is_dir() else []

def netdev_of(dev):
    # the netdevs sharing the RDMA device's PCI function (device/net/<netdev>)
    net = IB / dev / "device" / "net"
    names = sorted(p.name for p in net.iterdir()) if net.is_dir() else []
    return names[0] if names else ""

def links(only=None):
    out = []
    everyone = sorted(p.name for p in NET.iterdir()) if NET.is_dir() else []
    for index, dev in enumerate(devices()):
        ports = IB / dev / "ports"
        for port in sorted((int(p.name) for p in ports.iterdir()), key=int) if ports.is_dir() else []:
            if only and only not in (dev, f"{dev}/{port}"):
                continue
            entry = {"ifindex": index, "ifname": dev, "port": port,
                     "state": name(STATES, number(ports / str(port) / "state")),
                     "physical_state": name(PHYS, number(ports / str(port) / "phys_state"))}
            netdev = netdev_of(dev)
            if netdev:
                entry["netdev"] = netdev
                entry["netdev_index"] = everyone.index(netdev) + 2 if netdev in everyone else 0
            out.append(entry)
    return out

def main(argv):
    as_json = False
    while argv and argv[0].startswith("-"):
        flag = argv.pop(0)
        if flag in ("-j", "-json", "--json"):
            as_json = True
        elif flag in ("-p", "-pretty", "-d", "-details"):
            continue
        else:
            print(f"rdma: lab host: option {flag} is not simulated", file=sys.stderr)
            return 1
    obj = argv[0] if argv else "dev"
    cmd = argv[1] if len(argv) > 1 else "show"
    only = argv[2] if len(argv) > 2 else None
    if cmd not in ("show", "list") or obj not in ("link", "dev"):
        print(f"rdma: lab host: `rdma {' '.join(argv)}` is not simulated (link show, dev show)", file=sys.stderr)
        return 1
    if obj == "link":
        entries = links(only)
        if only and not entries:
            print(f"Wrong device name", file=sys.stderr)
            return 1
        if as_json:
            print(json.dumps(entries))
        for e in [] if as_json else entries:
            tail = f" netdev {e['netdev']}" if "netdev" in e else ""
            print(f"link {e['ifname']}/{e['port']} state {e['state']} physical_state {e['physical_state']}{tail} ")
        return 0
    entries = []
    for index, dev in enumerate(devices()):
        if only and only != dev:
            continue
        fw = (IB / dev / "fw_ver").read_text().strip() if (IB / dev / "fw_ver").exists() else ""
        entries.append({"ifindex": index, "ifname": dev, "node_type": "ca", "fw": fw})
    if as_json:
        print(json.dumps(entries))
    for e in [] if as_json else entries:
        print(f"{e['ifindex']}: {e['ifname']}: node_type {e['node_type']} fw {e['fw']} ")
    return 0

sys.exit(main(sys.argv[1:]))
'''
