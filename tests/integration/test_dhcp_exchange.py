"""A real DHCP exchange (issue 22, "Real components in tests"): Kea serves, dhclient asks.

Two network namespaces joined by one veth pair (tests/integration/dhcp_netns.py): the real
kea-dhcp4 on one side, the real dhclient with a switch's MAC and vendor class on the other.

First against a small hand-written Kea config shaped as the day-0 contract's section 2
(/tmp/g/day0_contract.md), checked against the Kea 2.2 ARM:
- "option-def" for code 239 type string in space dhcp4 (ARM "Custom DHCPv4 Options": name,
  code and type are required, space defaults to dhcp4);
- a client class whose test is a prefix of option 60 (ARM "Using Expressions in
  Classification": option[60].hex is the option's payload, substring(v, 0, 13) its first 13
  bytes; "Defining and Using Custom Classes" gives a class option-data);
- one subnet with routers, domain-name-servers, ntp-servers (ARM "Standard DHCPv4 Options":
  codes 3, 6, 42) and no pool: only reserved clients get an address (ARM "Address
  Reservation Types": "out-of-pool reservations" are handled like in-pool ones);
- reservations by hw-address with ip-address and hostname (ARM "Reserving a Hostname": the
  server returns it in option 12 when the client requests option 12 in its parameter request
  list), and for the SONiC switch option-data boot-file-name (option 67, ARM "Standard DHCPv4
  Options"; "Including Specific DHCPv4 Options in Reservations").
"""

from __future__ import annotations

import pytest
from dhcp_netns import CUMULUS_VENDOR_CLASS, DhcpLink, dhcp_link  # noqa: F401  (fixture)

pytestmark = [pytest.mark.integration, pytest.mark.root, pytest.mark.timeout(180)]

URL = "http://192.0.2.2:8080"
SERVER = "192.0.2.2/24"                 # TEST-NET-1 (RFC 5737): nothing real lives there
GATEWAY = "192.0.2.1"
DNS = "192.0.2.53"
NTP = ["192.0.2.123", "192.0.2.124"]
LEAF = {"mac": "44:38:39:00:00:01", "ip": "192.0.2.11", "name": "leaf01"}
SONIC = {"mac": "44:38:39:00:00:02", "ip": "192.0.2.12", "name": "sonic01"}
UNKNOWN_MAC = "44:38:39:00:00:99"
CUMULUS_SCRIPT_URL = f"{URL}/ztp/cumulus-ztp.sh"
SONIC_ZTP_URL = f"{URL}/ztp/{SONIC['name']}/ztp.json"


def handwritten_config(interface: str) -> dict:
    """Contract section 2's shape, written by hand (not by generator/day0)."""
    return {"Dhcp4": {
        "interfaces-config": {"interfaces": [interface]},
        "lease-database": {"type": "memfile", "persist": False},
        "option-def": [{"name": "cumulus-provision-url", "code": 239, "type": "string", "space": "dhcp4"}],
        "client-classes": [{
            "name": "cumulus",
            "test": "substring(option[60].hex,0,13) == 'cumulus-linux'",
            "option-data": [{"name": "cumulus-provision-url", "data": CUMULUS_SCRIPT_URL}],
        }],
        "subnet4": [{
            "id": 1,
            "subnet": "192.0.2.0/24",
            "option-data": [
                {"name": "routers", "data": GATEWAY},
                {"name": "domain-name-servers", "data": DNS},
                {"name": "ntp-servers", "data": ", ".join(NTP)},
            ],
            "reservations": [
                {"hw-address": LEAF["mac"], "ip-address": LEAF["ip"], "hostname": LEAF["name"]},
                {"hw-address": SONIC["mac"], "ip-address": SONIC["ip"], "hostname": SONIC["name"],
                 "option-data": [{"name": "boot-file-name", "data": SONIC_ZTP_URL}]},
            ],
        }],
    }}


@pytest.fixture
def served(dhcp_link: DhcpLink) -> DhcpLink:  # noqa: F811
    dhcp_link.start_kea(handwritten_config(dhcp_link.server_if), SERVER)
    return dhcp_link


def test_kea_accepts_the_handwritten_config(dhcp_link: DhcpLink) -> None:  # noqa: F811
    r = dhcp_link.check_kea(handwritten_config(dhcp_link.server_if))
    assert r.returncode == 0, r.stdout + r.stderr
    # the check can fail: option 239 used without its option-def is refused, naming the option
    broken = handwritten_config(dhcp_link.server_if)
    del broken["Dhcp4"]["option-def"]
    r = dhcp_link.check_kea(broken)
    assert r.returncode != 0 and "cumulus-provision-url" in r.stdout + r.stderr, r.stdout + r.stderr


def test_cumulus_switch_gets_its_reservation_and_option_239(served: DhcpLink) -> None:
    lease = served.request(LEAF["mac"], CUMULUS_VENDOR_CLASS)
    assert lease is not None, served.kea_log_text()
    assert lease.ip == LEAF["ip"]
    assert lease.subnet_mask == "255.255.255.0"
    assert lease.routers == [GATEWAY]
    assert lease.hostname == LEAF["name"]
    assert lease.dns == [DNS]
    assert lease.ntp == NTP
    assert lease.provision_url == CUMULUS_SCRIPT_URL
    assert lease.bootfile is None


@pytest.mark.parametrize("vendor_class", [None, "cumulus", "Cumulus-Linux x86_64", "linux cumulus-linux"],
                         ids=["no-option-60", "too-short", "other-case", "not-a-prefix"])
def test_same_mac_without_cumulus_vendor_class_gets_no_option_239(served: DhcpLink, vendor_class) -> None:
    lease = served.request(LEAF["mac"], vendor_class)
    assert lease is not None, served.kea_log_text()
    assert lease.ip == LEAF["ip"] and lease.hostname == LEAF["name"]     # the reservation still answers
    assert lease.env.get("requested_cumulus_provision_url") == "1"      # asked for 239 ...
    assert lease.provision_url is None                                  # ... and did not get it


def test_sonic_switch_gets_its_reservation_and_option_67(served: DhcpLink) -> None:
    lease = served.request(SONIC["mac"], None)
    assert lease is not None, served.kea_log_text()
    assert (lease.ip, lease.routers, lease.hostname) == (SONIC["ip"], [GATEWAY], SONIC["name"])
    assert lease.bootfile == SONIC_ZTP_URL
    assert lease.provision_url is None


def test_mac_without_reservation_gets_no_lease(served: DhcpLink) -> None:
    assert served.request(UNKNOWN_MAC, CUMULUS_VENDOR_CLASS, client_timeout=5) is None
    log = served.kea_log_text()
    # Kea saw the client and declined to allocate (no pool): the silence is Kea's answer, not a broken link
    assert f"ALLOC_ENGINE_V4_ALLOC_FAIL_NO_POOLS [hwtype=1 {UNKNOWN_MAC}]" in log, log
    # the same server, a moment later, answers a reserved MAC
    lease = served.request(LEAF["mac"], CUMULUS_VENDOR_CLASS)
    assert lease is not None and lease.ip == LEAF["ip"], log


def test_subnet_option_data_wins_over_class_option_data(dhcp_link: DhcpLink) -> None:  # noqa: F811
    """Kea 2.2's option precedence (ARM "Standard DHCPv4 Options": host reservation, pool, subnet,
    shared network, class, global; "Required Classification": subnet option-data takes precedence
    over a class's): a class option that the subnet also sets never reaches the client. Contract
    section 2's "subnet, overridden by matching client-class" is the other way round; the day-0
    config never sets one option at both levels, which this keeps honest."""
    config = handwritten_config(dhcp_link.server_if)
    config["Dhcp4"]["client-classes"][0]["option-data"].append({"name": "domain-name-servers", "data": "192.0.2.54"})
    dhcp_link.start_kea(config, SERVER)
    lease = dhcp_link.request(LEAF["mac"], CUMULUS_VENDOR_CLASS)
    assert lease is not None, dhcp_link.kea_log_text()
    assert lease.provision_url == CUMULUS_SCRIPT_URL     # the class matched ...
    assert lease.dns == [DNS]                            # ... and the subnet's DNS won
