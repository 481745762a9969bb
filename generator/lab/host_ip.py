"""The simulated `ip` (iproute2) of a lab GPU server: the rail netdevs' links, IPv4 addresses,
routes and policy rules, kept in $FAKE_NIC_STATE/ip.json; the links themselves (MTU, MAC, carrier)
in the host's /sys ($FABRICGEN_SYSROOT/sys/class/net/<netdev>/mtu, address; carrier from the RDMA
port's state, which a rail-port-down fault sets to DOWN, as mlx5 reports a port without link).

Only the JSON output (`ip -j`, iproute2 >= 4.19; ip/ipaddress.c print_linkinfo / print_addrinfo,
ip/iproute.c print_route, ip/iprule.c print_rule field names) of the commands fabricgen's host
playbooks and checks run: link show, link set (mtu, up), addr show/add/del, route show table all,
route replace, rule show/add/del. Anything else exits 1 naming the lab's limit, never a guess.
"""

IP_TOOL = r'''#!/usr/bin/python3
import ipaddress, json, os, sys
from pathlib import Path

SYSROOT = os.environ.get("FABRICGEN_SYSROOT", "")
STATE = Path(os.environ["FAKE_NIC_STATE"]) / "ip.json"
NET = Path(SYSROOT + "/sys/class/net")
TABLES = {"main": 254, "local": 255, "default": 253}
NAMES = {v: k for k, v in TABLES.items()}

def load():
    st = json.loads(STATE.read_text()) if STATE.exists() else {}
    st.setdefault("up", [])
    st.setdefault("addrs", {})
    st.setdefault("routes", [])
    st.setdefault("rules", [{"priority": 0, "src": "all", "table": "local"},
                            {"priority": 32766, "src": "all", "table": "main"},
                            {"priority": 32767, "src": "all", "table": "default"}])
    return st

def save(st):
    STATE.parent.mkdir(parents=True, exist_ok=True)
    tmp = STATE.with_suffix(".tmp")
    tmp.write_text(json.dumps(st))
    os.replace(tmp, STATE)

def die(msg, rc=1):
    print(msg, file=sys.stderr)
    sys.exit(rc)

def links():
    return sorted(p.name for p in NET.iterdir()) if NET.is_dir() else []

def need(dev):
    if dev not in links():
        die(f'Cannot find device "{dev}"')

def carrier(dev):
    # the RDMA port of the netdev (device/infiniband/<rdma>/ports/1/state): "4: ACTIVE" has link
    ib = NET / dev / "device" / "infiniband"
    for rdma in (ib.iterdir() if ib.is_dir() else []):
        return "ACTIVE" in (rdma / "ports/1/state").read_text()
    return False

def link_json(st, dev, index):
    up = dev in st["up"]
    flags = ["BROADCAST", "MULTICAST"] + (["UP"] if up else []) + (["LOWER_UP"] if up and carrier(dev) else [])
    if up and not carrier(dev):
        flags.insert(0, "NO-CARRIER")
    return {"ifindex": index, "ifname": dev, "flags": flags, "mtu": int((NET / dev / "mtu").read_text()),
            "qdisc": "mq", "operstate": "UP" if up and carrier(dev) else "DOWN", "group": "default",
            "txqlen": 1000, "link_type": "ether", "address": (NET / dev / "address").read_text().strip(),
            "broadcast": "ff:ff:ff:ff:ff:ff"}

def opt(args, key, default=None):
    return args[args.index(key) + 1] if key in args else default

def table_of(args):
    t = opt(args, "table", "main")
    return TABLES.get(t, None) if t in TABLES else int(t)

args = sys.argv[1:]
js = False
while args and args[0].startswith("-"):
    flag = args.pop(0)
    if flag in ("-j", "-json"):
        js = True
    elif flag not in ("-4", "-d", "-details"):
        die(f"lab ip: option {flag} is not simulated")
st = load()
obj, verb = (args + ["", ""])[:2]
rest = args[2:]
if obj == "link" and verb in ("show", ""):
    devs = links()
    if "dev" in rest or rest:
        dev = opt(rest, "dev", rest[0] if rest else None)
        need(dev)
        devs = [dev]
    if not js:
        die("lab ip: only JSON output (-j) is simulated")
    print(json.dumps([link_json(st, d, links().index(d) + 2) for d in devs]))
elif obj == "link" and verb == "set":
    dev = opt(rest, "dev", rest[0] if rest else None)
    need(dev)
    if "mtu" in rest:
        (NET / dev / "mtu").write_text(str(int(opt(rest, "mtu"))) + "\n")
    if "up" in rest and dev not in st["up"]:
        st["up"].append(dev)
    if "down" in rest and dev in st["up"]:
        st["up"].remove(dev)
    save(st)
elif obj in ("addr", "address") and verb in ("show", ""):
    devs = [opt(rest, "dev")] if "dev" in rest else links()
    for d in devs:
        need(d)
    if not js:
        die("lab ip: only JSON output (-j) is simulated")
    print(json.dumps([{**{k: v for k, v in link_json(st, d, links().index(d) + 2).items() if k != "broadcast"},
                       "addr_info": [{"family": "inet", "local": a.split("/")[0], "prefixlen": int(a.split("/")[1]),
                                      "scope": "global", "label": d, "valid_life_time": 4294967295,
                                      "preferred_life_time": 4294967295} for a in st["addrs"].get(d, [])]}
                      for d in devs]))
elif obj in ("addr", "address") and verb in ("add", "del"):
    dev = opt(rest, "dev")
    need(dev)
    iface = ipaddress.ip_interface(rest[0])
    have = st["addrs"].setdefault(dev, [])
    if verb == "add":
        if str(iface) in have:
            die("RTNETLINK answers: File exists", 2)
        have.append(str(iface))
    else:
        if str(iface) not in have:
            die("RTNETLINK answers: Cannot assign requested address", 2)
        have.remove(str(iface))
        # the kernel drops the routes whose gateway the address made reachable
        st["routes"] = [r for r in st["routes"] if not (r["dev"] == dev and ipaddress.ip_address(r["gateway"]) in iface.network)]
    save(st)
elif obj == "route" and verb in ("show", "list", ""):
    if not js:
        die("lab ip: only JSON output (-j) is simulated")
    want = opt(rest, "table", "main")
    out = []
    for r in st["routes"]:
        if want != "all" and r["table"] != (TABLES.get(want) if want in TABLES else int(want)):
            continue
        e = {"dst": r["dst"], "gateway": r["gateway"], "dev": r["dev"]}
        if r["table"] != 254:
            e["table"] = NAMES.get(r["table"], str(r["table"]))
        if r["metric"]:
            e["metric"] = r["metric"]
        e["flags"] = []
        out.append(e)
    print(json.dumps(out))
elif obj == "route" and verb == "replace":
    dst = rest[0]
    dst = "default" if dst in ("default", "0.0.0.0/0") else str(ipaddress.ip_network(dst, strict=False))
    dev, via, table, metric = opt(rest, "dev"), opt(rest, "via"), table_of(rest), int(opt(rest, "metric", 0))
    need(dev)
    if not any(ipaddress.ip_address(via) in ipaddress.ip_interface(a).network for a in st["addrs"].get(dev, [])):
        die("Error: Nexthop has invalid gateway.", 2)
    st["routes"] = [r for r in st["routes"] if not (r["dst"] == dst and r["table"] == table and r["metric"] == metric)]
    st["routes"].append({"dst": dst, "gateway": via, "dev": dev, "table": table, "metric": metric})
    save(st)
elif obj == "rule" and verb in ("show", "list", ""):
    if not js:
        die("lab ip: only JSON output (-j) is simulated")
    out = []
    for r in sorted(st["rules"], key=lambda r: r["priority"]):
        e = {"priority": r["priority"], "src": r["src"]}
        if "srclen" in r:
            e["srclen"] = r["srclen"]
        e["table"] = r["table"]
        if r.get("protocol"):
            e["protocol"] = r["protocol"]
        out.append(e)
    print(json.dumps(out))
elif obj == "rule" and verb in ("add", "del"):
    src = opt(rest, "from", "all")
    rule = {"priority": int(opt(rest, "priority", opt(rest, "pref", 0)))}
    if src != "all":
        net = ipaddress.ip_network(src, strict=False)
        rule["src"] = str(net.network_address)
        if net.prefixlen != 32:
            rule["srclen"] = net.prefixlen
    else:
        rule["src"] = "all"
    t = opt(rest, "table", "main")
    rule["table"] = t if t in TABLES else str(int(t))
    if verb == "add":
        rule["protocol"] = opt(rest, "protocol")
        st["rules"].append(rule)
    else:
        match = [r for r in st["rules"] if all(r.get(k) == v for k, v in rule.items())]
        if not match:
            die("RTNETLINK answers: No such file or directory", 2)
        st["rules"].remove(match[0])
    save(st)
else:
    die(f"lab ip: `ip {' '.join(sys.argv[1:])}` is not simulated")
'''
