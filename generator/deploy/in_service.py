"""Does a switch's running config go beyond the factory's? One part of `deploy --day0`'s proof (pure logic).

Rail waves and spine halves (waves.py) exist so that a failed change never takes more than one
rail, or both spines of a pair, away from jobs that run. `deploy --day0` drops them (the canary,
then waves of `deploy.concurrency`) only when every switch shows no traffic evidence read from the
device (day0_evidence.py, issue 32); this module judges the config tree part of that: a switch that
still holds its factory config forwards nothing between GPUs by its config (no BGP, no address on a
front-panel port or a loopback, no bridge). A factory-looking tree alone proves nothing: flat
files and snippets configure a Cumulus switch outside it (DEVICE_STATE.md).

Conservative by design: anything in the running config beyond the factory's management and
system settings counts as carrying traffic, even the demo peers of a SONiC image's t1 preset
(config_samples.py) or the VLAN of its l2 preset; a switch that could not be read counts too.
"""

from __future__ import annotations

# Cumulus Linux NVUE: the factory startup.yaml holds `interface eth0` (DHCP or a static address in
# VRF mgmt) and `system` (hostname, accounts, control-plane ACLs, API/SSH server); NTP, DNS and
# syslog live under `service` (Cumulus Linux user guide, Quick Start Guide / NVUE); the default
# control-plane ACLs it references may be listed under `acl` (they filter, they forward nothing).
# Anything else at the top level (router, bridge, qos, evpn, nve...) is a configured switch.
NVUE_FACTORY_KEYS = frozenset({"header", "system", "service", "interface", "vrf", "acl"})
# SONiC CONFIG_DB tables that make the switch route or bridge (sonic-yang-models doc/Configuration.md).
SONIC_FORWARDING_TABLES = ("INTERFACE", "LOOPBACK_INTERFACE", "PORTCHANNEL", "PORTCHANNEL_INTERFACE",
                           "VLAN", "VLAN_MEMBER", "VLAN_INTERFACE", "VLAN_SUB_INTERFACE", "STATIC_ROUTE",
                           "VXLAN_TUNNEL", "VRF")
# Every image's init_cfg.json.j2 has BGP_DEVICE_GLOBAL (the TSA state), configured or not.
SONIC_FACTORY_BGP_TABLES = frozenset({"BGP_DEVICE_GLOBAL"})


def traffic_evidence(os_name: str, running: object) -> str | None:
    """What in `running` (the NVUE `set` tree, or config_db as tables) shows the switch may carry
    traffic, as one short phrase; None for a config no richer than the factory's."""
    if not isinstance(running, dict):
        return "running config not read"
    return _nvue(running) if os_name == "cumulus" else _sonic(running)


def _nvue(tree: dict) -> str | None:
    extra = sorted(str(k) for k in tree if k not in NVUE_FACTORY_KEYS)
    if extra:
        return extra[0]
    interfaces = tree.get("interface") or {}
    for name in sorted(interfaces if isinstance(interfaces, dict) else ()):
        if name != "eth0" and not (name == "lo" and _bare_loopback(interfaces[name])):
            return f"interface {name}"
    vrfs = tree.get("vrf") or {}
    for name in sorted(vrfs if isinstance(vrfs, dict) else ()):
        body = vrfs[name]
        if name != "mgmt" or (isinstance(body, dict) and body.get("router")):
            return f"vrf {name}"
    return None


def _bare_loopback(body: object) -> bool:
    """`lo` with nothing but its type: some releases list it in the factory file."""
    return body is None or (isinstance(body, dict) and set(body) <= {"type"})


def _sonic(config: dict) -> str | None:
    for table in sorted(config):
        bgp = table.startswith("BGP_") and table not in SONIC_FACTORY_BGP_TABLES
        if (bgp or table in SONIC_FORWARDING_TABLES) and config[table]:
            return table
    metadata = (config.get("DEVICE_METADATA") or {}).get("localhost") or {}
    if isinstance(metadata, dict) and metadata.get("bgp_asn"):
        return "DEVICE_METADATA bgp_asn"
    return None
