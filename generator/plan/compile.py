"""intent -> FabricPlan: topology, addressing, cables, headroom, QoS, NCCL."""

from __future__ import annotations

import math
import operator
import re
from collections import Counter
from functools import cache
from itertools import chain

from generator.intent.discovery import Discovery
from generator.intent.model import Intent
from generator.plan import addressing
from generator.plan.extra import build_extras
from generator.plan.headroom import lanes_for, port_headroom
from generator.plan.hosts import discovered_rdma, gpu_rail_nics, host_nccl_plans, host_rollout
from generator.plan.management import build_management, build_routing
from generator.plan.model import (
    ROLE_LEAF,
    ROLE_SPINE,
    ROLE_SUPER_SPINE,
    TIER_GLOBAL,
    TIER_HOST_LEAF,
    TIER_LEAF_SPINE,
    TIER_SPINE_SUPER,
    FabricPlan,
    Headroom,
    Host,
    Link,
    Nic,
    Port,
    Switch,
)
from generator.plan.nccl import build_nccl
from generator.plan.qos import build_qos
from generator.plan.topology import CompileError, SwitchNode, build_topology

DAC_MAX_M = 3.0     # passive copper reach at 100G+ PAM4 lanes
_TIER_KEY = {TIER_HOST_LEAF: "host_leaf", TIER_LEAF_SPINE: "leaf_spine",
             TIER_SPINE_SUPER: "spine_super_spine", TIER_GLOBAL: "global_"}
_ROLE_ORDER = {ROLE_SUPER_SPINE: 0, ROLE_SPINE: 1, ROLE_LEAF: 2}
_PORT_RE = re.compile(r"^swp(\d+)(?:s(\d+))?$")


def port_sort_key(name: str) -> tuple[int, int]:
    m = _PORT_RE.match(name)
    return (int(m.group(1)), int(m.group(2) or -1)) if m else (1 << 30, 0)


# port names repeat on every switch: each parsed once per process
_port_key = cache(port_sort_key)
_PORT_NAME = operator.itemgetter(1)          # Port.port


def _in_port_order(rows: list[Port]) -> tuple[Port, ...]:
    """ROWS sorted by port number (stable), the keys taken in C: map over the cached parser and a
    sort of positions by key, instead of a Python key function per port (~590k at 98k GPUs)."""
    keys = list(map(_port_key, map(_PORT_NAME, rows)))
    return tuple(map(rows.__getitem__, sorted(range(len(rows)), key=keys.__getitem__)))


def cable_for(intent: Intent, tier: str) -> tuple[float, str]:
    key = _TIER_KEY[tier]
    length = getattr(intent.topology.cables, key)
    forced = getattr(intent.topology.cable_types, key)
    return length, forced or ("DAC" if length <= DAC_MAX_M else "AOC")


def pfc_cable_m(length_m: float) -> int:
    return max(1, math.ceil(length_m))


def _asns(intent: Intent, nodes: list[SwitchNode]) -> dict[str, int]:
    """RFC 7938: spines of one tier/pod/group share an ASN, every leaf has its own."""
    asn = intent.addressing.asn
    out: dict[str, int] = {}
    leaf_i = 0
    for sw in nodes:
        if sw.role == ROLE_LEAF:
            leaf_i += 1
            out[sw.name] = asn.leaf_base + leaf_i
        elif sw.role == ROLE_SUPER_SPINE:
            out[sw.name] = asn.spine
        elif sw.unit is not None:          # three-tier pod spines
            out[sw.name] = asn.spine + sw.unit
        elif sw.group is not None:         # dragonfly-plus group spines
            out[sw.name] = asn.spine + sw.group - 1
        else:
            out[sw.name] = asn.spine
    return out


def compile_plan(intent: Intent, discovery: Discovery | None = None) -> FabricPlan:
    """The plan of INTENT; DISCOVERY (hosts.discovered, read by the loader: LoadedIntent.discovered)
    gives each host's rail NICs their discovered RDMA device names."""
    topo = build_topology(intent)
    t = intent.topology
    qos = build_qos(intent.roce)
    lossless = qos.mode == "lossless"
    port_mtu = intent.roce.mtu.switch

    # every position (ASN, loopback, management IP, fabric /31) is the build-out's, so a phase
    # that installs more never renumbers what is there (generator/plan/growth.py)
    nodes = sorted(topo.switches, key=lambda s: _ROLE_ORDER[s.role])   # stable within a role
    asns = _asns(intent, nodes)
    lo_pool = addressing.Pool.parse("addressing.loopbacks", intent.addressing.loopbacks)
    mgmt_pool = addressing.Pool.parse("addressing.management", intent.addressing.management)
    rail_pool = addressing.Pool.parse("addressing.rails", intent.addressing.rails)
    fabric_pool = None
    if intent.addressing.fabric_links != "unnumbered":
        fabric_pool = addressing.Pool.parse("addressing.fabric_links", intent.addressing.fabric_links)
        fabric_pool.need(2 * len(topo.links), f"{len(topo.links)} switch-to-switch /31 links")
    loopbacks = addressing.loopbacks(lo_pool, len(nodes))
    sw_mgmt, host_mgmt = addressing.management(mgmt_pool, len(nodes), topo.build_out_nodes)
    addressing.check_host_pool(rail_pool, t.rails, topo.build_out_nodes)

    installed = topo.installed
    switches = tuple(
        Switch(name=sw.name, role=sw.role, model=sw.model.name, asic=sw.model.asic, asn=asns[sw.name],
               loopback=loopbacks[i], mgmt_ip=sw_mgmt[i], rail=sw.rail, unit=sw.unit, group=sw.group)
        for i, sw in enumerate(nodes) if installed is None or sw.name in installed)
    if installed is not None:
        nodes = [sw for sw in nodes if sw.name in installed]
    by_name = {sw.name: sw for sw in nodes}

    asic_of = {sw.name: sw.model.asic for sw in nodes}
    speed = t.nic_speed

    @cache
    def port_kind(asic: str, cable_m: float) -> tuple[int, Headroom | None]:
        """(lanes, headroom) of a port at the NIC speed: a handful of distinct arguments, ~590k
        ports at 98k GPUs, so each computed once."""
        if not lossless:
            return lanes_for(asic, speed), None
        # switches take whole metres (NVUE cable-length, SONiC CABLE_LENGTH): round up, never under-provision
        return lanes_for(asic, speed), port_headroom(asic, speed, pfc_cable_m(cable_m), port_mtu)

    ports: dict[str, list[Port]] = {sw.name: [] for sw in nodes}
    links: list[Link] = []
    # Port and Link rows built by tuple.__new__ itself: a NamedTuple's __new__ is a Python function
    # around this same call, ~0.2 us per row of ~885k at 98k GPUs (issue 14)
    row = tuple.__new__

    # host-facing ports, in node then rail order
    rail_nics = intent.rail_nics()
    # every rail's /31s in one run each (addressing.host_link: node n's leaf 2(n-1), its host 2(n-1)+1)
    rail_ips = [addressing.ipv4_run(addressing.rail_base(rail_pool, t.rails, r), 2 * t.nodes) for r in range(t.rails)]
    host_len, host_cable = cable_for(intent, TIER_HOST_LEAF)
    discovered = discovery.hosts if discovery is not None else None
    attachments = topo.attachments
    name_format = intent.hosts.name
    hosts = []
    for h_i, slot in enumerate(topo.hosts):
        node = slot.index
        name = name_format.format(n=node)
        found = discovered.get(name) if discovered is not None else None
        host_rails = rail_nics if found is None else gpu_rail_nics(found, rail_nics)
        nics = []
        at = 2 * (node - 1)
        for r in range(t.rails):
            leaf_name, lport = attachments[(node, r)]
            leaf_ip, host_ip = rail_ips[r][at], rail_ips[r][at + 1]
            nic = host_rails[r]
            rdma = nic.rdma if found is None else discovered_rdma(found, nic)
            nics.append(Nic(r, nic.netdev, rdma, f"{host_ip}/31", leaf_ip, leaf_name, lport.name))
            lanes, room = port_kind(asic_of[leaf_name], host_len)
            ports[leaf_name].append(row(Port, (
                leaf_name, lport.name, lport.physical, lport.breakout, speed, lanes, host_len, lossless, room,
                name, nic.netdev, TIER_HOST_LEAF, f"{leaf_ip}/31", host_ip, None)))
            links.append(row(Link, (leaf_name, lport.name, name, nic.netdev, TIER_HOST_LEAF, speed, host_len,
                                    host_cable)))
        hosts.append(Host(name, node, host_mgmt[h_i], slot.unit, slot.group, tuple(nics)))

    # addressing.fabric_link: link i's a end 2i, its b end 2i+1 of the pool, all in one run
    fabric_ips = [] if fabric_pool is None else addressing.ipv4_run(fabric_pool.network, 2 * len(topo.links))
    fabric_cidrs = [f"{ip}/31" for ip in fabric_ips]
    cables: dict[str, tuple[float, str]] = {}           # per tier: ~200k links, 4 tiers
    for i, raw in enumerate(topo.links):
        if installed is not None and (raw.a not in installed or raw.b not in installed):
            continue                # a reserved port: cabled in a later phase
        length, cable = cables.get(raw.tier) or cables.setdefault(raw.tier, cable_for(intent, raw.tier))
        a_ip = b_ip = a_cidr = b_cidr = None
        if fabric_ips:
            a_ip, b_ip = fabric_ips[2 * i], fabric_ips[2 * i + 1]
            a_cidr, b_cidr = fabric_cidrs[2 * i], fabric_cidrs[2 * i + 1]
        a, b, a_port, b_port, tier = raw.a, raw.b, raw.a_port, raw.b_port, raw.tier
        a_lanes, a_room = port_kind(asic_of[a], length)
        b_lanes, b_room = port_kind(asic_of[b], length)
        ports[a].append(row(Port, (a, a_port.name, a_port.physical, a_port.breakout, speed, a_lanes, length,
                                   lossless, a_room, b, b_port.name, tier, a_cidr, b_ip, asns[b])))
        ports[b].append(row(Port, (b, b_port.name, b_port.physical, b_port.breakout, speed, b_lanes, length,
                                   lossless, b_room, a, a_port.name, tier, b_cidr, a_ip, asns[a])))
        links.append(row(Link, (a, a_port.name, b, b_port.name, tier, speed, length, cable)))

    del rail_ips, fabric_ips, fabric_cidrs          # ~800k list slots at 98k GPUs: not kept to the end
    ports_by_device = {name: _in_port_order(ports.pop(name)) for name in list(ports)}
    all_ports = tuple(chain.from_iterable(ports_by_device[sw.name] for sw in switches))

    names = [h.name for h in hosts]
    clash = set(names) & set(by_name)
    if clash:
        raise CompileError("hosts.name", f"host name {sorted(clash)[0]!r} equals a switch name: change hosts.name",
                           "FG402")

    nccl = build_nccl(intent, qos)
    plan = FabricPlan(
        fabric=intent.fabric.name, description=intent.fabric.description, kind=t.kind,
        switch_os=intent.switch_os.name, switch_os_version=intent.switch_os.version_tuple(),
        nic_speed_g=speed, rails=t.rails, oversubscription=t.oversubscription,
        switches=switches, hosts=tuple(hosts), links=tuple(links), ports=all_ports, qos=qos,
        loopback_pool=intent.addressing.loopbacks, rail_pool=intent.addressing.rails,
        fabric_link_pool=None if fabric_pool is None else intent.addressing.fabric_links,
        mgmt_pool=intent.addressing.management, mgmt_interface=intent.hosts.mgmt_interface,
        nic_tooling=intent.hosts.nic_tooling, deploy_user=intent.deploy.user, host_lldpd=intent.hosts.lldpd,
        nic_firmware_min=intent.hosts.nic_firmware_min, nccl=nccl,
        management=build_management(intent),
        routing=build_routing(intent, switches, ports_by_device),
        host_rollout=host_rollout(intent),
        # DESIGN: build_out equal to nodes changes no output byte
        build_out_nodes=None if t.build_out_nodes == t.nodes else t.build_out_nodes,
        build_out_fabric_links={} if installed is None else
        {name: n for name, n in Counter(chain.from_iterable((raw.a, raw.b) for raw in topo.links)).items()
         if name in installed},
        discovery=discovery,
        host_nccl={} if discovery is None else host_nccl_plans(intent, qos, hosts, nccl),
        _ports_by_device=ports_by_device,
        extra=build_extras(intent),
    )
    return plan


__all__ = ["compile_plan", "CompileError", "cable_for", "port_sort_key"]
