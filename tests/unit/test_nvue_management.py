"""The management plane and the routing changes in startup.yaml, read back as NVUE reads it.

Small intents (a numbered leaf-spine of three switches, and the single-switch example) go
through the real loader, compiler and Jinja templates; the YAML is loaded with BaseLoader so
that `on` stays the string NVUE sees. Expected values come from the intent written here and
from NVIDIA's pages (cited per test), not from the renderer.
"""

from __future__ import annotations

import ipaddress

import pytest
import yaml

from generator.intent.loader import parse_yaml, validate_data
from generator.plan.compile import compile_plan
from generator.render.nvue import render_switch
from tests.conftest import example

HASH = "$6$fabricgenlab$OqKu8s1.iwmcF01KT9u5xm4I.NCIbdtaGpsXRepyozGYW04mGmSCSYv//RyMxZLJ98uk9N.Iv8BlED6PdN2T/0"
ED25519 = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOps ops@example"
RSA = "ssh-rsa AAAAB3NzaC1yc2EAAAADAQAB"
MANAGEMENT = {
    "gateway": "192.168.0.254",
    "ntp": ["192.0.2.10", "ntp.example.net"],
    "dns": ["192.0.2.53", "192.0.2.54"],
    "syslog": ["192.0.2.99"],
    "timezone": "Europe/Berlin",
    "banner": 'Authorised use only: "lab"\nsecond line # not a comment',
    "users": [
        {"name": "cumulus", "role": "system-admin", "hashed_password": HASH, "ssh_keys": [ED25519, RSA]},
        {"name": "auditor", "role": "nvue-monitor", "ssh_keys": [RSA]},
    ],
}
OLD, NEW = "5.11", "5.15"


def plan(version: str, *, management=None, routing=None, single=False):
    data, lines = parse_yaml(example("small").read_text(), "small.yaml")
    data["switch_os"]["version"] = version
    if not single:
        # three switches, numbered switch-to-switch /31s from their own pool
        data["topology"].update(kind="leaf-spine", switches={"leaf": {"model": "SN5600"}, "spine": {"model": "SN5600"}})
        data["addressing"]["fabric_links"] = "10.254.0.0/24"
    if management is not None:
        data["management"] = management
    if routing is not None:
        data["routing"] = routing
    return compile_plan(validate_data(data, lines, "small.yaml"))


def tree(p, name: str | None = None) -> dict:
    sw = p.switches[0] if name is None else p.switch(name)
    return yaml.load(render_switch(p, sw), Loader=yaml.BaseLoader)[1]["set"]


def leaf(p):
    return next(sw for sw in p.switches if sw.role == "leaf")


# eth0 -----------------------------------------------------------------------------------------

def test_eth0_static_in_mgmt_vrf_old_syntax():
    """Quick-Start-Guide / Management-VRF pages (5.14-): `interface eth0 ip address A/L`,
    `ip gateway G`, `ip vrf mgmt`."""
    p = plan(OLD, management=MANAGEMENT)
    sw = leaf(p)
    eth0 = tree(p, sw.name)["interface"]["eth0"]
    assert eth0 == {"ip": {"address": {f"{sw.mgmt_ip}/24": {}}, "gateway": {"192.168.0.254": {}}, "vrf": "mgmt"},
                    "type": "eth"}


def test_eth0_static_in_mgmt_vrf_new_syntax():
    """5.15 renames: `ipv4 address`, `ipv4 gateway`, `interface eth0 vrf mgmt`."""
    p = plan(NEW, management=MANAGEMENT)
    sw = leaf(p)
    eth0 = tree(p, sw.name)["interface"]["eth0"]
    assert eth0 == {"ipv4": {"address": {f"{sw.mgmt_ip}/24": {}}, "gateway": {"192.168.0.254": {}}},
                    "type": "eth", "vrf": "mgmt"}


def test_gateway_defaults_to_first_pool_address():
    p = plan(OLD, management={k: v for k, v in MANAGEMENT.items() if k != "gateway"})
    assert tree(p)["interface"]["eth0"]["ip"]["gateway"] == {"192.168.0.1": {}}


def test_every_switch_gets_its_own_eth0_address():
    p = plan(NEW, management=MANAGEMENT)
    addresses = {sw.name: next(iter(tree(p, sw.name)["interface"]["eth0"]["ipv4"]["address"])) for sw in p.switches}
    assert addresses == {sw.name: f"{sw.mgmt_ip}/24" for sw in p.switches}
    assert len(set(addresses.values())) == len(p.switches)


# users, ACLs, API, SSH ------------------------------------------------------------------------

@pytest.mark.parametrize("version", [OLD, NEW])
def test_users_with_hash_role_and_keys(version):
    users = tree(plan(version, management=MANAGEMENT))["system"]["aaa"]["user"]
    assert set(users) == {"cumulus", "auditor"}
    assert users["cumulus"]["hashed-password"] == HASH
    assert users["cumulus"]["role"] == "system-admin"
    # key ids: the comment when there is one, else key-<n> (its position in the intent)
    assert users["cumulus"]["ssh"]["authorized-key"] == {
        "ops@example": {"key": "AAAAC3NzaC1lZDI1NTE5AAAAIOps", "type": "ssh-ed25519"},
        "key-2": {"key": "AAAAB3NzaC1yc2EAAAADAQAB", "type": "ssh-rsa"},
    }
    assert "hashed-password" not in users["auditor"] and users["auditor"]["role"] == "nvue-monitor"


def test_duplicate_key_comments_get_distinct_ids():
    m = dict(MANAGEMENT, users=[{"name": "cumulus", "role": "system-admin", "hashed_password": HASH,
                                 "ssh_keys": [ED25519, "ssh-ed25519 AAAAC3Nzb ops@example"]}])
    keys = tree(plan(OLD, management=m))["system"]["aaa"]["user"]["cumulus"]["ssh"]["authorized-key"]
    assert set(keys) == {"ops@example", "key-2"}


@pytest.mark.parametrize("version", [OLD, NEW])
def test_factory_acls_api_and_ssh_server_kept(version):
    """DEVICE_STATE.md: the factory startup.yaml has both default control-plane ACLs inbound,
    `system api state enabled` and `system ssh-server state enabled`."""
    system = tree(plan(version, management=MANAGEMENT))["system"]
    assert system["control-plane"] == {"acl": {"acl-default-dos": {"inbound": {}},
                                               "acl-default-whitelist": {"inbound": {}}}}
    assert system["api"] == {"state": "enabled"}
    assert system["ssh-server"] == {"state": "enabled"}


@pytest.mark.parametrize("version", [OLD, NEW])
def test_banner_survives_quotes_newlines_and_hashes(version):
    system = tree(plan(version, management=MANAGEMENT))["system"]
    assert system["message"] == {"pre-login": MANAGEMENT["banner"]}


def test_no_banner_no_message():
    m = {k: v for k, v in MANAGEMENT.items() if k != "banner"}
    assert "message" not in tree(plan(NEW, management=m))["system"]


# NTP / DNS / syslog / time zone ---------------------------------------------------------------

def test_services_through_mgmt_vrf_old_syntax():
    """5.14 and earlier: `service ntp|dns mgmt server X`; before 5.13 `service syslog mgmt server X`;
    the time zone is `system timezone`."""
    t = tree(plan(OLD, management=MANAGEMENT))
    assert t["service"] == {
        "dns": {"mgmt": {"server": {"192.0.2.53": {}, "192.0.2.54": {}}}},
        "ntp": {"mgmt": {"server": {"192.0.2.10": {}, "ntp.example.net": {}}}},
        "syslog": {"mgmt": {"server": {"192.0.2.99": {}}}},
    }
    assert t["system"]["timezone"] == "Europe/Berlin"
    assert not {"ntp", "dns", "syslog", "date-time"} & set(t["system"])


def test_syslog_moves_to_system_in_513():
    """Syslog.md: "Cumulus 5.13 and later does not provide" `service syslog`; use
    `system syslog server <id> vrf <vrf>`. NTP and DNS stay services until 5.15."""
    t = tree(plan("5.14", management=MANAGEMENT))
    assert "syslog" not in t["service"] and set(t["service"]) == {"dns", "ntp"}
    assert t["system"]["syslog"] == {"server": {"192.0.2.99": {"vrf": "mgmt"}}}


def test_services_through_mgmt_vrf_new_syntax():
    """5.15: `system ntp server X` + `system ntp vrf mgmt`, `system dns server X vrf mgmt`,
    `system syslog server X vrf mgmt`, `system date-time timezone`."""
    t = tree(plan(NEW, management=MANAGEMENT))
    assert "service" not in t
    system = t["system"]
    assert system["ntp"] == {"server": {"192.0.2.10": {}, "ntp.example.net": {}}, "vrf": "mgmt"}
    assert system["dns"] == {"server": {"192.0.2.53": {"vrf": "mgmt"}, "192.0.2.54": {"vrf": "mgmt"}}}
    assert system["syslog"] == {"server": {"192.0.2.99": {"vrf": "mgmt"}}}
    assert system["date-time"] == {"timezone": "Europe/Berlin"}
    assert "timezone" not in system


def test_empty_service_lists_render_nothing():
    m = {"users": MANAGEMENT["users"]}
    for version in (OLD, NEW):
        t = tree(plan(version, management=m))
        assert "service" not in t
        assert not {"ntp", "dns", "syslog"} & set(t["system"])


# no management section ------------------------------------------------------------------------

@pytest.mark.parametrize("version", [OLD, NEW])
def test_without_management_nothing_of_it_is_rendered(version):
    """plan.management None: the deploy carries the switch's own management subtrees."""
    t = tree(plan(version))
    assert "eth0" not in t["interface"]
    assert "service" not in t
    assert set(t["system"]) == {"hostname"}


# routing: the connected-route filter ----------------------------------------------------------

def _permitted(policy: dict, prefix: str) -> bool:
    """Evaluate the rendered prefix-list as FRR does: a rule matches a prefix inside its network
    whose length lies between min-prefix-len (ge; else the network's own length) and
    max-prefix-len (le; else exactly the network's length)."""
    net = ipaddress.ip_network(prefix, strict=False)
    plist = policy["prefix-list"]["fabricgen-announce"]
    for _rule_id, r in sorted(plist["rule"].items(), key=lambda kv: int(kv[0])):
        for match, limits in r["match"].items():
            m = ipaddress.ip_network(match)
            low = int(limits.get("min-prefix-len", m.prefixlen))
            high = int(limits.get("max-prefix-len", m.prefixlen if "min-prefix-len" not in limits else 32))
            if net.subnet_of(m) and low <= net.prefixlen <= high:
                return r["action"] == "permit"
    return False                               # implicit deny


@pytest.mark.parametrize("version", [OLD, NEW])
def test_redistribute_connected_uses_the_route_map(version):
    t = tree(plan(version, management=MANAGEMENT))
    af = t["vrf"]["default"]["router"]["bgp"]["address-family"]["ipv4-unicast"]
    assert af["redistribute"]["connected"]["route-map"] == "fabricgen-connected"
    rm = t["router"]["policy"]["route-map"]["fabricgen-connected"]
    assert rm == {"rule": {"10": {"action": {"permit": {}},
                                  "match": {"ip-prefix-list": "fabricgen-announce", "type": "ipv4"}}}}
    assert t["router"]["policy"]["prefix-list"]["fabricgen-announce"]["type"] == "ipv4"


@pytest.mark.parametrize("version", [OLD, NEW])
def test_route_map_announces_loopback_and_host_links_only(version):
    """Management-VRF page: without a route-map, redistribute connected announces eth0's subnet
    (and on a numbered fabric every switch-to-switch /31)."""
    p = plan(version, management=MANAGEMENT)
    ipkey = "ipv4" if version == NEW else "ip"
    for sw in p.switches:
        t = tree(p, sw.name)
        policy = t["router"]["policy"]
        assert _permitted(policy, f"{sw.loopback}/32"), sw.name
        eth0 = next(iter(t["interface"]["eth0"][ipkey]["address"]))
        assert not _permitted(policy, eth0), sw.name
        for port in p.ports_of(sw.name):
            assert port.ip is not None        # numbered fabric: every port has a /31
            # host-facing /31s are announced, switch-to-switch /31s never
            assert _permitted(policy, port.ip) == (port.peer_asn is None), (sw.name, port.port)
    assert any(pt.peer_asn is None for pt in p.ports_of(leaf(p).name))
    # the prefix-list is no blanket permit
    assert not _permitted(tree(p)["router"]["policy"], "0.0.0.0/0")
    assert not _permitted(tree(p)["router"]["policy"], "172.16.0.0/30")      # only /31s from the rails
    assert not _permitted(tree(p)["router"]["policy"], "10.255.0.0/24")      # only /32s from the loopbacks


def test_route_map_rendered_without_management_too():
    t = tree(plan(OLD))
    assert t["vrf"]["default"]["router"]["bgp"]["address-family"]["ipv4-unicast"]["redistribute"]["connected"] == {
        "enable": "on", "route-map": "fabricgen-connected"}


# multipaths, BFD, adaptive routing ------------------------------------------------------------

@pytest.mark.parametrize(("routing", "expected"), [(None, "128"), ({"max_paths": 16}, "16")])
def test_multipaths_is_explicit(routing, expected):
    af = tree(plan(NEW, routing=routing))["vrf"]["default"]["router"]["bgp"]["address-family"]["ipv4-unicast"]
    assert af["multipaths"] == {"ebgp": expected}


def test_bfd_per_neighbor_old_syntax():
    p = plan(OLD, routing={"bfd": True})
    for sw in p.switches:
        neighbors = tree(p, sw.name)["vrf"]["default"]["router"]["bgp"]["neighbor"]
        assert neighbors and all(n["bfd"] == {"enable": "on"} for n in neighbors.values())


def test_bfd_per_neighbor_new_syntax_uses_a_profile():
    """5.15 deprecates neighbor `bfd enable` and timers; the object model has `bfd profile`
    and `router bfd profile <name>` (BFD page defaults: 300 ms, multiplier 3)."""
    p = plan(NEW, routing={"bfd": True})
    t = tree(p, leaf(p).name)
    assert t["router"]["bfd"] == {"profile": {"fabricgen": {"detect-multiplier": "3", "min-rx-interval": "300",
                                                            "min-tx-interval": "300"}}, "state": "enabled"}
    neighbors = t["vrf"]["default"]["router"]["bgp"]["neighbor"]
    assert len(neighbors) == 8 and all(n["bfd"] == {"profile": "fabricgen"} for n in neighbors.values())


@pytest.mark.parametrize("version", [OLD, NEW])
def test_no_bfd_by_default(version):
    t = tree(plan(version))
    assert "bfd" not in t["router"]
    assert all("bfd" not in n for n in t["vrf"]["default"]["router"]["bgp"]["neighbor"].values())


@pytest.mark.parametrize(("version", "on"), [(OLD, {"enable": "on"}), (NEW, {"state": "enabled"})])
def test_adaptive_routing_global_and_on_fabric_ports(version, on):
    """Equal-Cost-Multipath-Load-Sharing page: global switch plus every port of the ECMP route."""
    p = plan(version, routing={"adaptive_routing": True})
    sw = leaf(p)
    t = tree(p, sw.name)
    assert t["router"]["adaptive-routing"] == on
    for port in p.ports_of(sw.name):
        ar = t["interface"][port.port].get("router", {}).get("adaptive-routing")
        assert ar == (on if port.peer_asn is not None else None), port.port


def test_no_adaptive_routing_by_default():
    t = tree(plan(NEW))
    assert "adaptive-routing" not in t["router"]
    assert all("router" not in i for i in t["interface"].values())


# byte stability -------------------------------------------------------------------------------

def test_same_intent_same_bytes():
    kwargs = {"management": MANAGEMENT, "routing": {"bfd": True, "adaptive_routing": True}}
    for version in (OLD, NEW):
        a, b = plan(version, **kwargs), plan(version, **kwargs)
        for sw in a.switches:
            assert render_switch(a, sw) == render_switch(b, b.switch(sw.name))
