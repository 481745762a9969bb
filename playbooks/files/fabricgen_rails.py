#!/usr/bin/python3
"""Bring the rail NICs to the state of the rendered netplan file with iproute2, run on a GPU
server by playbooks/hosts.yml (ansible.builtin.script). Python 3.7+ standard library only.

Input: $FG_RAILS, JSON {"ethernets": <netplan network.ethernets>, "check": bool, "settle": seconds}.
Per rail NIC: MTU, link up, exactly the rendered IPv4 addresses (any other IPv4 address on a rail
takes RoCE GID entries and moves the index NCCL uses, so it is removed), the route of each
rendered route in its table and the source rule of each routing-policy entry.

State is compared field by field from `ip -j` (iproute2 JSON), never as text: systemd-networkd
installs the same rule with `proto static`, which must count as equal (issue 16). `settle` (when
networkd was just told to reconfigure the rails) waits up to that many seconds for it to get
there before anything is touched, so the two never race each other into duplicates.

Output: one `change: ...` line per change (`check`: what would change, nothing is touched),
`ok: <netdev>` per NIC in place, `error: ...` and exit 1 when an `ip` command fails.
"""

from __future__ import annotations

import ipaddress
import json
import os
import subprocess
import sys
import time

TABLE_NAMES = {"local": 255, "main": 254, "default": 253, "unspec": 0}


class IpError(RuntimeError):
    pass


def ip(*args: str) -> str:
    done = subprocess.run(["ip", *args], capture_output=True, text=True, timeout=60)
    if done.returncode != 0:
        raise IpError(f"ip {' '.join(args)}: {done.stderr.strip() or 'exit ' + str(done.returncode)}")
    return done.stdout


def ip_json(*args: str) -> list:
    out = ip("-j", *args).strip()
    return json.loads(out) if out else []


def table_id(value) -> int:
    text = str(value)
    return TABLE_NAMES[text] if text in TABLE_NAMES else int(text)


def network(value: str) -> ipaddress.IPv4Network:
    """"default" / "a.b.c.d" / "a.b.c.d/n" as iproute2 prints them, or as netplan writes them."""
    return ipaddress.ip_network("0.0.0.0/0" if value == "default" else value, strict=False)


def wanted(ethernets: dict) -> dict:
    """netdev -> {mtu, addresses {(ip, len)}, routes [(dst, via, table, metric)], rules [(src, len, table, prio)]}
    (metric 0 when netplan gives none: iproute2's default, and a JSON route without "metric")."""
    out = {}
    for netdev, conf in sorted(ethernets.items()):
        conf = conf or {}
        addresses = []
        for a in conf.get("addresses") or []:
            iface = ipaddress.ip_interface(str(a))
            if iface.version == 4:
                addresses.append((str(iface.ip), iface.network.prefixlen))
        routes = [(network(str(r["to"])), str(r["via"]), int(r.get("table", 254)), int(r.get("metric", 0)))
                  for r in conf.get("routes") or [] if ipaddress.ip_address(str(r["via"])).version == 4]
        rules = []
        for r in conf.get("routing-policy") or []:
            src = network(str(r["from"]))
            rules.append((src, int(r["table"]), int(r["priority"])))
        out[netdev] = {"mtu": conf.get("mtu"), "addresses": addresses, "routes": routes, "rules": rules}
    return out


def plan(netdev: str, want: dict) -> list:
    """The `ip` commands (argument lists) that take `netdev` to `want`, in order."""
    links = ip_json("link", "show", "dev", netdev)
    if not links:
        raise IpError(f"{netdev}: no such link")
    link = links[0]
    steps = []
    if want["mtu"] and int(link.get("mtu", 0)) != int(want["mtu"]):
        steps.append(["link", "set", "dev", netdev, "mtu", str(want["mtu"])])
    if "UP" not in link.get("flags", []):
        steps.append(["link", "set", "dev", netdev, "up"])

    have = [(a["local"], int(a["prefixlen"])) for entry in ip_json("-4", "addr", "show", "dev", netdev)
            for a in entry.get("addr_info", []) if a.get("family") == "inet"]
    extra = [a for a in have if a not in want["addresses"]]
    if extra:
        # The kernel gives each IPv4 address a RoCE GID pair in the order the addresses came, and a
        # freed entry keeps its index: drop every IPv4 address, then add ours, so it takes 2/3 again.
        steps += [["addr", "del", f"{a}/{n}", "dev", netdev] for a, n in have]
        steps += [["addr", "add", f"{a}/{n}", "dev", netdev] for a, n in want["addresses"]]
    else:
        steps += [["addr", "add", f"{a}/{n}", "dev", netdev] for a, n in want["addresses"] if (a, n) not in have]

    # `table all`: asking for one table that holds no route yet is an error ("FIB table does not exist")
    routes = ip_json("-4", "route", "show", "table", "all") if want["routes"] else []
    for dst, via, table, metric in want["routes"]:
        # the metric keeps each rail's main-table route to the rail pool apart: `replace` matches a
        # route by destination, table and metric, so without it the rails would replace each other
        present = any(network(r["dst"]) == dst and r.get("gateway") == via and r.get("dev") == netdev
                      and table_id(r.get("table", "main")) == table and int(r.get("metric", 0)) == metric
                      for r in routes if r.get("dst"))
        if not present:
            steps.append(["route", "replace", str(dst), "via", via, "dev", netdev, "table", str(table)]
                         + (["metric", str(metric)] if metric else []))

    rules = ip_json("-4", "rule", "show")
    for src, table, prio in want["rules"]:
        at = [r for r in rules if int(r.get("priority", -1)) == prio]

        def same(r, src=src, table=table) -> bool:
            # src "all" or a prefix (srclen left out for a host address); protocol is not compared
            if r.get("src") in (None, "all"):
                return False
            have_src = network(f"{r['src']}/{r['srclen']}" if "srclen" in r else r["src"])
            return have_src == src and table_id(r.get("table", "main")) == table and "dst" not in r \
                and "iif" not in r and "oif" not in r and "fwmark" not in r and r.get("action") in (None, "to_tbl")
        ours = [r for r in at if same(r)]
        for r in at:
            if not same(r):
                steps.append(rule_del(r))
        # The kernel keeps two otherwise equal rules whose protocols differ: the duplicates an
        # earlier release left beside networkd's go, and the one rule left is added as networkd
        # adds it (protocol static), so a later `networkctl reconfigure` finds it and adds none
        add = ["rule", "add", "from", str(src), "table", str(table), "priority", str(prio), "protocol", "static"]
        if len(ours) > 1:
            steps += [["rule", "del", "priority", str(prio), "from", str(src), "table", str(table)] for _ in ours]
        if len(ours) != 1:
            steps.append(add)
    return steps


def rule_del(r: dict) -> list:
    """`ip rule del` selecting exactly rule `r` (as `ip -j rule show` printed it)."""
    cmd = ["rule", "del", "priority", str(r["priority"])]
    if r.get("src") not in (None, "all"):
        cmd += ["from", f"{r['src']}/{r['srclen']}" if "srclen" in r else r["src"]]
    if r.get("dst") not in (None, "all"):
        cmd += ["to", f"{r['dst']}/{r['dstlen']}" if "dstlen" in r else r["dst"]]
    if "table" in r:
        cmd += ["table", str(r["table"])]
    return cmd


def main() -> int:
    try:
        args = json.loads(os.environ.get("FG_RAILS") or "{}")
        want = wanted(args.get("ethernets") or {})
    except (ValueError, KeyError, TypeError) as exc:
        print(f"error: $FG_RAILS is not the rendered netplan ethernets: {exc}")
        return 2
    check = bool(args.get("check"))
    deadline = time.monotonic() + float(args.get("settle") or 0)
    failed = False
    for netdev, target in want.items():
        try:
            steps = plan(netdev, target)
            while steps and not check and time.monotonic() < deadline:
                time.sleep(0.5)         # networkd is configuring the rail: let it finish first
                steps = plan(netdev, target)
            if not steps:
                print(f"ok: {netdev}")
            # Dropping an address takes the routes through it along: plan again after each pass
            for _ in range(1 if check else 3):
                for step in steps:
                    if not check:
                        ip(*step)
                    print("change: ip " + " ".join(step))
                steps = [] if check else plan(netdev, target)
                if not steps:
                    break
            if steps:
                print(f"error: {netdev}: still differs after three passes: ip " + " ".join(steps[0]))
                failed = True
        except (IpError, subprocess.SubprocessError, ValueError) as exc:
            print(f"error: {netdev}: {exc}")
            failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
