"""`deploy --day0`: the proof, read from each switch itself, that it carries no traffic yet.

Dropping the rail and spine-pair waves is safe only on a fabric where no job can run. A config tree
that looks factory is no proof: a production Cumulus switch may route with /etc/network/interfaces
and /etc/frr/frr.conf written by Ansible, or with BGP and addresses in NVUE snippets, while `nv
config show` shows a near-factory tree; a replace then rewrites those files (DEVICE_STATE.md,
NVUE-CLI and NVUE-Snippets pages). So the evidence is operational, and a read that failed is
evidence too (when unsure, assume production):

- both NOSes: the running config beyond the factory's (in_service.py) and FRR's BGP peers,
  configured or established (`vtysh -c 'show bgp summary json'`: bgpd's view, whoever gave it the
  peers: NVUE, frr.conf, a snippet, bgpcfgd);
- Cumulus: NVUE snippets; an address, carrier, an LLDP neighbour or a non-zero counter on a data
  port (`nv show interface`: the kernel's and lldpd's view, not NVUE's config); the two flat files
  other than NVUE's factory writes them (lo, the mgmt VRF and eth0 only).
- SONiC: CONFIG_DB is what every daemon reads (a routed or bridged table, BGP tables, bgp_asn:
  in_service.py) plus FRR's peers. Carrier, LLDP and counters are not evidence there: the factory
  config (`sonic-cfggen -H -k <sku> --preset t1`, sonic-buildimage `config-setup`) sets every PORT
  admin_status up and lldpd runs, so a cabled factory switch has links up, hears its neighbours
  and counts their LLDP frames while it forwards nothing (no address, no VLAN member).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from generator.deploy.in_service import traffic_evidence

INTERFACES_FILE = "/etc/network/interfaces"
FRR_CONF = "/etc/frr/frr.conf"
# What NVUE's factory /etc/network/interfaces holds (Cumulus 5: ifupdown2 stanzas NVUE renders):
# the loopback, the management VRF `mgmt` (vrf-table auto, 127.0.0.1/8, ::1/128) and eth0 in it.
FACTORY_IFACES = frozenset({"lo", "mgmt", "eth0"})
FACTORY_LO_ADDRESSES = frozenset({"127.0.0.1/8", "::1/128"})
FACTORY_SOURCE = "/etc/network/interfaces.d/*.intf"
# frr.conf: NVUE's factory file holds the frr version/defaults header, hostname, logging, the
# integrated-config line and at most the mgmt VRF's default route. What makes FRR route:
_FRR_ROUTES = re.compile(r"^\s*(router |ip route |ipv6 route |ip address |ipv6 address )")
_FRR_BLOCK = re.compile(r"^(interface|vrf)\s+(\S+)")
MGMT_NAMES = frozenset({"eth0", "mgmt", "lo"})
SHOWN = 2           # ports named per kind of evidence; the rest are counted


def evidence(os_name: str, driver, tree: object) -> list[str]:
    """Every kind of traffic evidence `driver` (an open NVUE or SONiC driver) shows, one short phrase
    each; [] only when every read succeeded and found nothing."""
    found: list[str] = []
    config = traffic_evidence(os_name, tree)
    if config:
        found.append(f"running config has {config}")
    if os_name == "cumulus" and isinstance(tree, dict):
        found += snippet_evidence(tree)
    _read(found, "FRR's BGP summary", lambda: bgp_evidence(driver.frr_bgp_summary()))
    if os_name == "cumulus":
        _read(found, "the flat files", lambda: flat_file_evidence(driver.flat_files()))
        with driver.snapshot():        # one `nv show interface -o json` for the four getters
            _read(found, "the data ports", lambda: port_evidence(
                driver.get_interfaces(), driver.get_interfaces_ip(), driver.get_lldp_neighbors(),
                driver.get_interfaces_counters(), is_data_port=lambda p: p.startswith("swp")))
    return found


def _read(found: list[str], what: str, read: Callable[[], list[str]]) -> None:
    try:
        found += read()
    except Exception as exc:  # noqa: BLE001 - a failed read is evidence, whatever failed
        text = " ".join(str(exc).split()) or type(exc).__name__
        found.append(f"could not read {what} ({text[:120]})")


def snippet_evidence(tree: dict) -> list[str]:
    """NVUE snippets (`system config snippet <name>`): flat text NVUE copies into the files it renders."""
    system = tree.get("system") if isinstance(tree.get("system"), dict) else {}
    config = system.get("config") if isinstance(system.get("config"), dict) else {}
    snippets = config.get("snippet")
    if not snippets:
        return []
    names = sorted(map(str, snippets)) if isinstance(snippets, dict) else ["(unnamed)"]
    return [f"NVUE snippet {_listed(names)}"]


def bgp_evidence(summary: object) -> list[str]:
    """FRR's peers in `show bgp summary json` ({afi: {peers: {id: {state}}}}; `{}` without BGP)."""
    if not isinstance(summary, dict):
        return ["FRR's BGP summary is not a JSON object"]
    peers: dict[str, str] = {}
    for family in summary.values():
        if isinstance(family, dict) and isinstance(family.get("peers"), dict):
            for peer, body in family["peers"].items():
                state = str((body or {}).get("state", "configured")) if isinstance(body, dict) else "configured"
                peers.setdefault(str(peer), state)
    if not peers:
        return []
    established = sorted(p for p, s in peers.items() if s.lower() == "established")
    if established:
        return [f"BGP peer(s) established in FRR: {_listed(established)}"]
    return [f"BGP peer(s) configured in FRR: {_listed(sorted(peers))}"]


def flat_file_evidence(files: dict[str, str]) -> list[str]:
    found = []
    extra = interfaces_file_extra(files.get(INTERFACES_FILE, ""))
    if extra:
        found.append(f"{INTERFACES_FILE} has {_listed(extra)}")
    extra = frr_conf_extra(files.get(FRR_CONF, ""))
    if extra:
        found.append(f"{FRR_CONF} has {_listed(extra)}")
    return found


def interfaces_file_extra(text: str) -> list[str]:
    """What /etc/network/interfaces holds beyond NVUE's factory stanzas (lo, mgmt, eth0)."""
    extra: list[str] = []
    current = None
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        words = line.split()
        if not words:
            continue
        if words[0] == "iface" and len(words) > 1:
            current = words[1]
            if current not in FACTORY_IFACES:
                extra.append(f"iface {current}")
        elif words[0] in ("source", "source-directory"):
            if words[0] == "source-directory" or words[1:] != [FACTORY_SOURCE]:
                extra.append(" ".join(words[:2]))
        elif words[0] in ("auto", "allow-hotplug") or words[0].startswith("allow-"):
            extra += [f"iface {w}" for w in words[1:] if w not in FACTORY_IFACES and f"iface {w}" not in extra]
        elif current == "lo" and words[0] == "address" and words[1:2] and words[1] not in FACTORY_LO_ADDRESSES:
            extra.append(f"lo address {words[1]}")
    return list(dict.fromkeys(extra))


def frr_conf_extra(text: str) -> list[str]:
    """Lines of frr.conf that make FRR route, outside the management VRF and management ports."""
    extra: list[str] = []
    block: tuple[str, str] | None = None
    for raw in text.splitlines():
        if raw.strip().startswith(("!", "#")) or not raw.strip():
            continue
        indented = raw[:1].isspace()
        match = _FRR_BLOCK.match(raw) if not indented else None
        if match:
            block = (match.group(1), match.group(2))
            if block[1] not in MGMT_NAMES:
                extra.append(f"{block[0]} {block[1]}")
            continue
        if raw.strip() in ("exit", "exit-vrf", "end"):
            block = None
            continue
        if not indented:
            block = None
        if block is not None and block[1] in MGMT_NAMES:
            continue          # the mgmt VRF's default route, eth0's settings
        if _FRR_ROUTES.match(raw):
            extra.append(" ".join(raw.split()[:3]))
    return list(dict.fromkeys(extra))


def port_evidence(interfaces: dict, ips: dict, lldp: dict, counters: dict, *,
                  is_data_port: Callable[[str], bool]) -> list[str]:
    """Carrier, addresses, LLDP neighbours and counters on data ports (napalm getters' shapes);
    a routed loopback (an address on lo beyond 127/8 and ::1) too."""
    found = []
    addressed = sorted(p for p, fams in ips.items()
                       if (is_data_port(p) and any(fams.values()))
                       or (p == "lo" and any(f"{a}/{v.get('prefix_length')}" not in FACTORY_LO_ADDRESSES
                                             for fam in fams.values() for a, v in fam.items())))
    if addressed:
        found.append(f"address on {_listed(addressed)}")
    up = sorted(p for p, i in interfaces.items() if is_data_port(p) and i.get("is_up"))
    if up:
        found.append(f"carrier on {_listed(up)}")
    heard = sorted(p for p, n in lldp.items() if is_data_port(p) and n)
    if heard:
        first = lldp[heard[0]][0].get("hostname", "?")
        found.append(f"LLDP neighbour on {_listed(heard)} ({heard[0]}: {first})")
    counted = sorted(p for p, c in counters.items() if is_data_port(p)
                     and any(int(v or 0) for k, v in c.items() if k.endswith(("octets", "packets"))))
    if counted:
        found.append(f"non-zero counters on {_listed(counted)}")
    return found


def _listed(items: list[str]) -> str:
    more = len(items) - SHOWN
    return ", ".join(items[:SHOWN]) + (f" and {more} more" if more > 0 else "")
