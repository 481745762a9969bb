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

import hashlib
import ipaddress
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from dhcp_netns import CUMULUS_VENDOR_CLASS, DhcpLink, Lease, dhcp_link  # noqa: F401  (fixture)

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


# -- the kit: the real `fabricgen day0` -------------------------------------------------------------
# Kea serves the kea-dhcp4.json that `fabricgen day0 --dhcp-interface <server veth>` wrote, changed only
# in "lease-database" (dhcp_netns.py: a non-persistent memfile instead of /var/lib/kea). What a switch
# must get is read from elsewhere: its rendered config (a separate `fabricgen render`: eth0's address,
# prefix and gateway, the hostname), the rendered Ansible inventory for a GPU server's address, the
# intent for DNS and NTP, and DIR/http/ for the files the ZTP URLs name. The examples are the ones with
# `management:` (day0's subject): medium (Cumulus; small has no management:) and medium-sonic.

REPO = Path(__file__).resolve().parents[2]


def fabricgen(*args: str) -> subprocess.CompletedProcess:
    # this worktree's generator, whatever the venv has installed
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH")) if p)}
    return subprocess.run([sys.executable, "-m", "generator.cli", *args], capture_output=True, text=True,
                          timeout=300, env=env)


@dataclass
class Planned:
    """What the rendered config says a device's eth0 gets."""
    ip: str
    mask: str
    gateway: str
    hostname: str


@dataclass
class Kit:
    intent: dict
    rendered: Path            # `fabricgen render -o` output
    directory: Path           # `fabricgen day0 -o` output
    url: str
    macs: dict[str, str]      # inventory: name -> MAC as written in the CSV
    link: DhcpLink

    @property
    def switches(self) -> list[str]:
        return sorted(p.name for p in (self.rendered / "switches").iterdir())

    def planned(self, name: str) -> Planned:
        if (self.rendered / "switches" / name / "startup.yaml").exists():
            document = yaml.safe_load((self.rendered / "switches" / name / "startup.yaml").read_text())
            conf = next(d["set"] for d in document if "set" in d)
            eth0 = conf["interface"]["eth0"]["ip"]
            (address,) = eth0["address"]
            (gateway,) = eth0["gateway"]
            hostname = conf["system"]["hostname"]
        elif (self.rendered / "switches" / name / "config_db.json").exists():
            db = json.loads((self.rendered / "switches" / name / "config_db.json").read_text())
            ((key, row),) = db["MGMT_INTERFACE"].items()         # "eth0|A.B.C.D/P": {"gwaddr": G}
            address, gateway = key.split("|")[1], row["gwaddr"]
            hostname = db["DEVICE_METADATA"]["localhost"]["hostname"]
        else:                                                     # a GPU server: the Ansible inventory
            inventory = yaml.safe_load((self.rendered / "inventory.yml").read_text())
            address = f"{inventory['all']['children']['hosts']['hosts'][name]['ansible_host']}/" \
                      f"{ipaddress.IPv4Network(self.intent['addressing']['management']).prefixlen}"
            gateway, hostname = self.gateway, name
        interface = ipaddress.IPv4Interface(address)
        return Planned(str(interface.ip), str(interface.netmask), gateway, hostname)

    @property
    def gateway(self) -> str:
        return self.planned(self.switches[0]).gateway

    def served_file(self, url: str | None) -> Path:
        """The file under DIR/http/ that URL names (contract section 1: URL/<path relative to http/>),
        checked against http/manifest.json's sha256."""
        assert url is not None and url.startswith(self.url + "/"), url
        relpath = url[len(self.url) + 1:]
        path = self.directory / "http" / relpath
        assert path.is_file(), f"{url} names {path}, which the kit did not write"
        manifest = json.loads((self.directory / "http" / "manifest.json").read_text())["files"]
        assert manifest.get(relpath) == hashlib.sha256(path.read_bytes()).hexdigest(), relpath
        return path


def serve_kit(link: DhcpLink, example: str, tmp_path: Path, hosts: int = 2) -> Kit:
    intent_path = REPO / "inventories" / example / "fabric.yaml"
    intent = yaml.safe_load(intent_path.read_text())
    assert "management" in intent, f"{example} has no management: section"
    rendered = tmp_path / "render"
    r = fabricgen("render", str(intent_path), "-o", str(rendered))
    assert r.returncode == 0, r.stderr
    subnet = ipaddress.IPv4Network(intent["addressing"]["management"])
    # the bring-up host: the subnet's last address (Kea picks the subnet by the interface's address)
    server = subnet.broadcast_address - 1
    url = f"http://{server}:8080"
    switches = sorted(p.name for p in (rendered / "switches").iterdir())
    servers = sorted(p.name for p in (rendered / "hosts").iterdir())[:hosts]
    # every switch and HOSTS GPU servers; odd rows upper-case, as a vendor's packing list may be
    macs = {name: f"44:38:39:00:01:{i:02x}" for i, name in enumerate(switches)}
    macs |= {name: f"02:00:5e:00:01:{i:02x}" for i, name in enumerate(servers)}
    macs = {name: mac.upper() if i % 2 else mac for i, (name, mac) in enumerate(macs.items())}
    inventory = tmp_path / "inventory.csv"
    inventory.write_text("name,serial,mac\n" + "".join(f"{n},SN{i:04d},{m}\n" for i, (n, m) in enumerate(macs.items())))
    directory = tmp_path / "kit"
    r = fabricgen("day0", str(intent_path), "-o", str(directory), "--url", url, "--inventory", str(inventory),
                  "--dhcp-interface", link.server_if)
    assert r.returncode == 0, r.stderr
    kit = Kit(intent, rendered, directory, url, macs, link)
    assert str(server) not in {kit.planned(name).ip for name in macs} | {kit.gateway}
    config = json.loads((directory / "kea-dhcp4.json").read_text())
    (subnet4,) = config["Dhcp4"]["subnet4"]
    # Done when (issue 22): one reservation per inventory row, by that row's MAC
    assert sorted(h["hw-address"].lower() for h in subnet4["reservations"]) == sorted(m.lower() for m in macs.values())
    check = link.check_kea(config)
    assert check.returncode == 0, check.stdout + check.stderr
    link.start_kea(config, f"{server}/{subnet.prefixlen}")
    return kit


def assert_planned(kit: Kit, name: str, lease: Lease | None) -> None:
    assert lease is not None, f"{name} ({kit.macs[name]}) got no lease\n{kit.link.kea_log_text()}"
    planned = kit.planned(name)
    assert (lease.ip, lease.subnet_mask, lease.routers, lease.hostname) == \
        (planned.ip, planned.mask, [planned.gateway], planned.hostname)
    assert lease.dns == [a for a in kit.intent["management"].get("dns", [])]
    assert lease.ntp == [a for a in kit.intent["management"].get("ntp", [])]


@pytest.mark.parametrize("example", ["medium"])
def test_day0_kit_gives_a_cumulus_switch_its_plan_and_the_ztp_script(dhcp_link: DhcpLink, tmp_path: Path,  # noqa: F811
                                                                       example: str) -> None:
    kit = serve_kit(dhcp_link, example, tmp_path)
    assert kit.intent["switch_os"]["name"] == "cumulus"
    # a leaf and a spine (the first and last switch by name), each with its inventory MAC
    for name in (kit.switches[0], kit.switches[-1]):
        lease = dhcp_link.request(kit.macs[name].lower(), CUMULUS_VENDOR_CLASS)
        assert_planned(kit, name, lease)
        assert lease.bootfile is None
        script = kit.served_file(lease.provision_url)
        # Cumulus ZTP runs only a script carrying this marker (issue 22, "What to build")
        assert "CUMULUS-AUTOPROVISIONING" in script.read_text()
        # the script finds its startup.yaml by the DHCP hostname: the kit serves render's file under it
        served = kit.directory / "http" / "switches" / lease.hostname / "startup.yaml"
        assert served.read_bytes() == (kit.rendered / "switches" / name / "startup.yaml").read_bytes()
    # option 239 follows the vendor class, not the MAC
    lease = dhcp_link.request(kit.macs[kit.switches[0]], None)
    assert lease is not None and lease.ip == kit.planned(kit.switches[0]).ip
    assert lease.provision_url is None


@pytest.mark.parametrize("example", ["medium-sonic"])
def test_day0_kit_gives_a_sonic_switch_its_plan_and_its_ztp_json(dhcp_link: DhcpLink, tmp_path: Path,  # noqa: F811
                                                                  example: str) -> None:
    kit = serve_kit(dhcp_link, example, tmp_path)
    assert kit.intent["switch_os"]["name"] == "sonic"
    # sonic-ztp reads its ZTP JSON URL from option 67; the kit's answer does not depend on option 60
    for name in (kit.switches[0], kit.switches[-1]):
        lease = dhcp_link.request(kit.macs[name].lower(), None)
        assert_planned(kit, name, lease)
        assert lease.provision_url is None
        ztp = json.loads(kit.served_file(lease.bootfile).read_text())
        config_url = ztp["ztp"]["02-provision"]["plugin"]["args"].split()[0]
        served = kit.served_file(config_url)
        assert served.read_bytes() == (kit.rendered / "switches" / name / "config_db.json").read_bytes()
        plugins = [section["plugin"]["url"] for section in ztp["ztp"].values()
                   if isinstance(section, dict) and "plugin" in section]
        assert len(plugins) == 2
        for url in plugins:                          # user-defined plugins: files of the kit
            kit.served_file(url)


@pytest.mark.parametrize("example", ["medium", "medium-sonic"])
def test_day0_kit_gives_a_gpu_server_its_address_and_nothing_to_an_unknown_mac(dhcp_link: DhcpLink,  # noqa: F811
                                                                               tmp_path: Path, example: str) -> None:
    kit = serve_kit(dhcp_link, example, tmp_path)
    server = next(n for n in kit.macs if n not in kit.switches)
    lease = dhcp_link.request(kit.macs[server].lower(), None)
    assert_planned(kit, server, lease)
    assert (lease.provision_url, lease.bootfile) == (None, None)
    # no pool in the kit's subnet: a MAC outside the inventory gets no address, and Kea says why
    assert dhcp_link.request("02:00:5e:00:02:01", CUMULUS_VENDOR_CLASS, client_timeout=5) is None
    assert "ALLOC_ENGINE_V4_ALLOC_FAIL_NO_POOLS [hwtype=1 02:00:5e:00:02:01]" in dhcp_link.kea_log_text()
