"""The plan as the Nautobot objects it should be (issue 37): pure, keyed by natural key, never by
database id, so a re-run finds its own objects again and a killed push resumes.

What goes where, and why:
- one Location (the fabric's name) and the tag `fabricgen:<fabric>` on every object fabricgen
  owns; a Namespace of the fabric's name holds its prefixes and addresses, because two fabrics
  commonly reuse the same private pools (10.255.0.0/16 loopbacks, 172.16.0.0/12 rails) and
  Nautobot keeps addresses unique per namespace;
- devices, interfaces and IP addresses of the *build-out* fabric (topology.build_out): a device
  not on the floor yet is Planned, so a later phase changes its status and nothing else;
  interfaces are owned through their device (Nautobot creates them from the device type's
  templates, untagged), so a device tagged for the fabric owns its interfaces and their IPs;
- cables of the installed fabric only (a reserved port has no cable yet), keyed by their A end
  (the plan's a_device/a_port, the lower tier): a cable moved in a plan is a changed cable;
- the shared vocabulary (manufacturers, device types with their interface templates,
  platforms, roles, the location type, the ASN custom field) is created when missing and never
  changed or removed: another fabric may use it.
- the BGP ASN of each switch: where the server runs the nautobot-bgp-models app, a BGP routing
  instance per switch (its device, the AutonomousSystem, the loopback as router ID; owned through
  the device like its interfaces; the AutonomousSystem objects are shared vocabulary, as private
  ASNs repeat across fabrics); elsewhere the device custom field `bgp_asn` (with_bgp_models);
- the RoCE contract is a config context on the Location, data only: Nautobot shows it, the
  switches get it from fabricgen's render, not from Nautobot.
"""

from __future__ import annotations

import hashlib
import ipaddress
import json
import math
from dataclasses import dataclass, field, replace
from typing import Any

from generator.plan.model import FabricPlan, QosPlan

TAG_PREFIX = "fabricgen:"
ASN_FIELD = "bgp_asn"
LOCATION_TYPE = "GPU fabric"
SWITCH_MANUFACTURER = "NVIDIA"
HOST_MANUFACTURER = "Generic"
HOST_ROLE = "gpu-server"
SWITCH_MGMT = "eth0"            # Cumulus and SONiC both call the management port eth0
LOOPBACK = "lo"
ACTIVE, PLANNED = "Active", "Planned"
CONNECTED = "Connected"
# the kinds a push writes, in the order it writes them (a cable needs its interfaces, an
# address its interface, a device's primary IPv4 its address)
OWNED_KINDS = ("context", "device", "interface", "prefix", "ip", "bgp", "cable")
BGP_MODELS_APP = "nautobot_bgp_models"

# Nautobot's InterfaceTypeChoices (nautobot/dcim/choices.py): the pluggable each speed ships in on
# Spectrum switches and ConnectX NICs (OSFP at 400/800G, QSFP56 at 200G, QSFP28 at 100G)
_INTERFACE_TYPE = {
    800: "800gbase-x-osfp", 400: "400gbase-x-osfp", 200: "200gbase-x-qsfp56", 100: "100gbase-x-qsfp28",
    50: "50gbase-x-sfp56", 25: "25gbase-x-sfp28", 10: "10gbase-x-sfpp", 1: "1000base-t",
}
# CableTypeChoices: the plan's DAC is a passive copper cable (NVIDIA's LinkX DACs are passive)
_CABLE_TYPE = {"DAC": "dac-passive", "AOC": "aoc"}


def interface_type(speed_g: int) -> str:
    return _INTERFACE_TYPE.get(speed_g, "other")


def fabric_tag(fabric: str) -> str:
    return f"{TAG_PREFIX}{fabric}"


@dataclass(frozen=True, slots=True)
class DeviceType:
    model: str                  # unique per manufacturer: the catalog model plus its port signature
    manufacturer: str
    part_number: str            # the catalog model (SN5600) or the host's GPU
    # (name, type, mgmt_only, description): Nautobot creates these on every device of the type
    templates: tuple[tuple[str, str, bool, str], ...]


@dataclass(frozen=True, slots=True)
class Desired:
    """What Nautobot should hold for one fabric. `objects[kind][key]` is the compared fields of an
    owned object (kinds: OWNED_KINDS); keys are names or tuples of names."""

    fabric: str
    tag: str
    location: str
    namespace: str
    manufacturers: tuple[str, ...]
    device_types: dict[str, DeviceType]
    platforms: tuple[str, ...]
    roles: tuple[str, ...]
    objects: dict[str, dict[Any, dict[str, Any]]] = field(default_factory=dict)
    config_context: dict[str, Any] = field(default_factory=dict)

    @property
    def config_context_name(self) -> str:
        return f"fabricgen {self.fabric} RoCE contract"

    def count(self, kind: str) -> int:
        return len(self.objects.get(kind, {}))


def _platform(plan: FabricPlan) -> str:
    return "cumulus-linux" if plan.switch_os == "cumulus" else "sonic"


def _prefix_len(pool: str) -> int:
    return ipaddress.ip_network(pool, strict=False).prefixlen


def _cable_length(metres: float) -> int:
    # Nautobot stores a cable's length as a whole number (Cable.length, a PositiveSmallIntegerField):
    # round up, a cable ordered shorter than the run does not reach
    return max(1, math.ceil(metres))


def roce_context(qos: QosPlan) -> dict[str, Any]:
    """The lossless contract as the README's ROCE reference states it, for people reading the DCIM."""
    return {"fabricgen_roce": {
        "mode": qos.mode, "roce_dscp": qos.roce_dscp, "roce_priority": qos.roce_priority,
        "cnp_dscp": qos.cnp_dscp, "cnp_priority": qos.cnp_priority,
        "pfc_priorities": list(qos.pfc_priorities), "ecn_min_bytes": qos.ecn_min_bytes,
        "ecn_max_bytes": qos.ecn_max_bytes, "ecn_probability": qos.ecn_probability,
        "pfc_watchdog": qos.pfc_watchdog, "switch_mtu": qos.switch_mtu, "host_mtu": qos.host_mtu,
    }}


def _iface(itype: str, mtu: int | None, mgmt_only: bool = False, description: str = "") -> dict[str, Any]:
    return {"type": itype, "mtu": mtu, "mgmt_only": mgmt_only, "description": description}


def _device_type(manufacturer: str, part: str, label: str, ifaces: dict[str, dict[str, Any]]) -> DeviceType:
    """The type whose templates are exactly IFACES (MTU is not a template field: set per interface).
    Devices of one catalog model whose ports differ get different types, named by a digest of their
    templates, so the same ports always give the same type and two fabrics share it."""
    templates = tuple((name, f["type"], f["mgmt_only"], f["description"]) for name, f in ifaces.items())
    digest = hashlib.sha256(json.dumps(templates).encode()).hexdigest()[:8]
    return DeviceType(f"{part} {label} {digest}", manufacturer, part, templates)


def desired_objects(plan: FabricPlan, build_out: FabricPlan | None = None) -> Desired:
    """The objects of PLAN (the installed fabric). BUILD_OUT: the same intent compiled at its
    topology.build_out size (generator/plan/growth.py build_out_intent); its extra devices are Planned."""
    full = build_out or plan
    installed = {sw.name for sw in plan.switches} | {h.name for h in plan.hosts}
    tag = fabric_tag(plan.fabric)
    mgmt_len = plan.management.prefix_len if plan.management else _prefix_len(plan.mgmt_pool)
    switch_mtu, host_mtu = plan.qos.switch_mtu, plan.qos.host_mtu
    platform = _platform(plan)
    devices: dict[Any, dict[str, Any]] = {}
    interfaces: dict[Any, dict[str, Any]] = {}
    ips: dict[Any, dict[str, Any]] = {}
    types: dict[str, DeviceType] = {}
    ports_of: dict[str, list] = {}
    for port in full.ports:
        ports_of.setdefault(port.device, []).append(port)

    for sw in full.switches:
        ifaces: dict[str, dict[str, Any]] = {SWITCH_MGMT: _iface("1000base-t", None, True, "management"),
                                             LOOPBACK: _iface("virtual", None, False, "loopback")}
        for port in ports_of.get(sw.name, ()):
            note = f"{port.breakout} breakout of {port.physical}" if port.breakout else ""
            ifaces[port.port] = _iface(interface_type(port.speed_g), switch_mtu, False, note)
            if port.ip:
                ips[port.ip] = {"device": sw.name, "interface": port.port}
        dtype = _device_type(SWITCH_MANUFACTURER, sw.model, sw.role, ifaces)
        types[dtype.model] = dtype
        mgmt = f"{sw.mgmt_ip}/{mgmt_len}"
        ips[mgmt] = {"device": sw.name, "interface": SWITCH_MGMT}
        ips[f"{sw.loopback}/32"] = {"device": sw.name, "interface": LOOPBACK}
        devices[sw.name] = {"role": sw.role, "device_type": dtype.model, "platform": platform,
                            "status": ACTIVE if sw.name in installed else PLANNED,
                            "asn": sw.asn, "primary_ip4": mgmt}
        for name, f in ifaces.items():
            interfaces[(sw.name, name)] = f

    for host in full.hosts:
        ifaces = {plan.mgmt_interface: _iface("1000base-t", None, True, "management")}
        for nic in host.nics:
            ifaces[nic.netdev] = _iface(interface_type(plan.nic_speed_g), host_mtu, False,
                                        f"rail {nic.rail} ({nic.rdma})")
            ips[nic.ip] = {"device": host.name, "interface": nic.netdev}
        dtype = _device_type(HOST_MANUFACTURER, "GPU server", f"{len(host.nics)}x{plan.nic_speed_g}G", ifaces)
        types[dtype.model] = dtype
        mgmt = f"{host.mgmt_ip}/{mgmt_len}"
        ips[mgmt] = {"device": host.name, "interface": plan.mgmt_interface}
        devices[host.name] = {"role": HOST_ROLE, "device_type": dtype.model, "platform": None,
                              "status": ACTIVE if host.name in installed else PLANNED,
                              "asn": None, "primary_ip4": mgmt}
        for name, f in ifaces.items():
            interfaces[(host.name, name)] = f

    pools = [plan.loopback_pool, plan.rail_pool, plan.mgmt_pool]
    if plan.fabric_link_pool:
        pools.append(plan.fabric_link_pool)
    prefixes = {str(ipaddress.ip_network(p, strict=False)): {"status": ACTIVE} for p in pools}

    cables: dict[Any, dict[str, Any]] = {}
    for lk in plan.links:
        cables[(lk.a_device, lk.a_port)] = {
            "b_device": lk.b_device, "b_port": lk.b_port, "type": _CABLE_TYPE.get(lk.cable, "other"),
            "length": _cable_length(lk.length_m), "length_unit": "m", "status": CONNECTED,
            "label": f"{lk.a_device}:{lk.a_port} - {lk.b_device}:{lk.b_port}"}

    roles = tuple(sorted({sw.role for sw in full.switches} | ({HOST_ROLE} if full.hosts else set())))
    manufacturers = tuple(sorted({t.manufacturer for t in types.values()}))
    desired = Desired(
        fabric=plan.fabric, tag=tag, location=plan.fabric, namespace=plan.fabric,
        manufacturers=manufacturers, device_types=dict(sorted(types.items())), platforms=(platform,),
        roles=roles,
        objects={"device": devices, "interface": interfaces, "prefix": prefixes, "ip": ips, "cable": cables},
        config_context=roce_context(plan.qos))
    desired.objects["context"] = {desired.config_context_name: {"data": desired.config_context}}
    return desired


def with_bgp_models(desired: Desired) -> Desired:
    """DESIRED for a server with the nautobot-bgp-models app: each switch's ASN leaves the device
    custom field for a routing instance `bgp[device] = {asn, router_id, status}` (the router ID is
    the loopback the plan gives the switch, the status the device's)."""
    devices, bgp = {}, {}
    loopbacks = {f["device"]: ip for ip, f in desired.objects["ip"].items()
                 if f["interface"] == LOOPBACK and ip.endswith("/32")}
    for name, f in desired.objects["device"].items():
        devices[name] = {k: v for k, v in f.items() if k != "asn"}
        if f.get("asn") is not None:
            bgp[name] = {"asn": f["asn"], "router_id": loopbacks.get(name), "status": f["status"]}
    return replace(desired, objects={**desired.objects, "device": devices, "bgp": bgp})


__all__ = ["ACTIVE", "ASN_FIELD", "BGP_MODELS_APP", "CONNECTED", "DeviceType", "Desired", "LOCATION_TYPE", "OWNED_KINDS", "PLANNED",
           "TAG_PREFIX", "desired_objects", "fabric_tag", "interface_type", "roce_context", "with_bgp_models"]
