"""What a simulated Cumulus switch holds when it leaves the factory, and what keeps it reachable.

The factory `/etc/nvue.d/startup.yaml` (DEVICE_STATE.md; NVUE-CLI, Quick-Start-Guide and
Management-VRF pages; the startup.yaml listings of the Cumulus Linux 5.11 user guide's
OSPF-Configuration-Example page) holds the hostname, the `cumulus` user (role system-admin,
hashed password), the NVUE API and the SSH server (`state: enabled`), the default control-plane
ACLs (`acl-default-dos`, `acl-default-whitelist`, inbound) and eth0 as a DHCP client in the
management VRF. The tree is built here once per syntax generation, with only paths that the
NVUE object model of that generation documents (tests/unit/test_lab_factory.py checks them
against nvueschema's 5.11 and 5.15 models):

  <= 5.14: interface eth0 ip address dhcp | ip address A/L + ip gateway G, ip vrf mgmt
  >= 5.15: interface eth0 ipv4 dhcp-client state enabled | ipv4 address A/L + ipv4 gateway G,
           interface eth0 vrf mgmt                      (nvue_renames_515.tsv)
"""

from __future__ import annotations

import hmac
import ipaddress
import secrets
from dataclasses import dataclass

from generator.common import crypt3
from generator.lab.schema import version_key

MGMT_VRF = "mgmt"
FACTORY_USER = "cumulus"
FACTORY_ROLE = "system-admin"
DEFAULT_ACLS = ("acl-default-dos", "acl-default-whitelist")
LEASE_NETWORK = ipaddress.ip_network("192.0.2.0/24")  # RFC 5737: the lab's DHCP server hands these out
LEASE_GATEWAY = "192.0.2.1"
_SALT_CHARS = "./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


@dataclass(frozen=True)
class Management:
    """How eth0 gets its address. `address` is the interface prefix ("192.168.0.10/20")."""

    address: str
    gateway: str | None = None
    mode: str = "static"  # "static" | "dhcp" (ZTP day 0: the lease is `address`)

    def __post_init__(self):
        if self.mode not in ("static", "dhcp"):
            raise ValueError(f"mgmt_mode must be static or dhcp, not {self.mode!r}")
        interface = ipaddress.ip_interface(self.address)  # ValueError on a bad address
        if interface.version != 4 or interface.network.prefixlen == 32:
            raise ValueError(f"mgmt_address {self.address!r}: give an IPv4 address with its prefix length, "
                             "e.g. 192.168.0.10/20")
        if self.gateway is not None and ipaddress.ip_address(self.gateway) not in interface.network:
            raise ValueError(f"mgmt_gateway {self.gateway} is outside {interface.network}")

    @property
    def ip(self) -> str:
        return str(ipaddress.ip_interface(self.address).ip)


def lease_for(index: int) -> Management:
    """The DHCP lease of the index-th lab device (192.0.2.10, .11, ...; wraps after .254)."""
    host = 10 + index % 245
    return Management(f"{LEASE_NETWORK.network_address + host}/{LEASE_NETWORK.prefixlen}", LEASE_GATEWAY, "dhcp")


def new_syntax(version: str) -> bool:
    """Cumulus Linux 5.15 split `interface ip` into ipv4/ipv6 and moved `ip vrf` up."""
    return version_key(version) >= (5, 15)


# --- the factory tree ------------------------------------------------------------------
def eth0_tree(version: str, mgmt: Management) -> dict:
    if new_syntax(version):
        ipv4: dict = ({"dhcp-client": {"state": "enabled"}} if mgmt.mode == "dhcp"
                      else {"address": {mgmt.address: {}}})
        if mgmt.mode == "static" and mgmt.gateway:
            ipv4["gateway"] = {mgmt.gateway: {}}
        return {"ipv4": ipv4, "type": "eth", "vrf": MGMT_VRF}
    ip: dict = {"address": {"dhcp": {}} if mgmt.mode == "dhcp" else {mgmt.address: {}}}
    if mgmt.mode == "static" and mgmt.gateway:
        ip["gateway"] = {mgmt.gateway: {}}
    ip["vrf"] = MGMT_VRF
    return {"ip": ip, "type": "eth"}


def manages_users(version: str) -> bool:
    """`system aaa user` is in NVUE's object model from 5.4 on; before, accounts live outside NVUE."""
    return version_key(version) >= (5, 4)


def factory_config(version: str, hostname: str, mgmt: Management, users: dict[str, str]) -> dict:
    """The applied revision 0 / factory startup.yaml `set` tree; users: name -> hashed password.

    Each subtree only from the release whose object model has it (data/nvue_paths_model.tsv).
    """
    release = version_key(version)
    system: dict = {}
    if manages_users(version) and users:
        system["aaa"] = {"user": {name: {"hashed-password": hashed, "role": FACTORY_ROLE}
                                  for name, hashed in sorted(users.items())}}
    if release >= (5, 6):
        system["api"] = {"state": "enabled"}
    if release >= (5, 5):
        system["control-plane"] = {"acl": {acl: {"inbound": {}} for acl in DEFAULT_ACLS}}
    system["hostname"] = hostname
    if release >= (5, 6):
        system["ssh-server"] = {"state": "enabled"}
    return {"interface": {"eth0": eth0_tree(version, mgmt)}, "system": system}


# --- reachability ----------------------------------------------------------------------
def management_loss(config: dict, version: str, mgmt: Management) -> str | None:
    """Why this config leaves the switch unreachable at `mgmt.address`, or None if it does not.

    The lab reaches a switch at its eth0 address in the management VRF. The mgmt VRF itself is
    implicit in NVUE (the factory file has no `vrf mgmt` entry; Management-VRF page: "Cumulus
    Linux enables Management VRF by default"), so it is lost when eth0 leaves it.
    """
    eth0 = (config.get("interface") or {}).get("eth0")
    if not isinstance(eth0, dict):
        return "interface eth0 is not configured"
    new = new_syntax(version)
    ipv4 = eth0.get("ipv4") if new else eth0.get("ip")
    ipv4 = ipv4 if isinstance(ipv4, dict) else {}
    vrf = eth0.get("vrf") if new else ipv4.get("vrf")
    if vrf != MGMT_VRF:
        return f"eth0 is not in the {MGMT_VRF} VRF" + (f" (vrf {vrf})" if vrf else "")
    addresses = ipv4.get("address") if isinstance(ipv4.get("address"), dict) else {}
    if mgmt.address in addresses:
        return None
    if mgmt.mode == "dhcp":
        dhcp_on = ((ipv4.get("dhcp-client") or {}).get("state") == "enabled" if new
                   else "dhcp" in addresses)
        if dhcp_on:
            return None  # the DHCP server hands the same lease out again
        return f"eth0 has no DHCP client and not its address {mgmt.address}"
    if not addresses:
        return f"eth0 has no address (was {mgmt.address})"
    return f"eth0 address changed from {mgmt.address} to {', '.join(sorted(addresses))}"


def users_of(config: dict) -> dict[str, dict]:
    users = ((config.get("system") or {}).get("aaa") or {}).get("user")
    return {str(k): (v if isinstance(v, dict) else {}) for k, v in (users or {}).items()}


def authorized_keys(user: dict) -> set[tuple[str, str]]:
    """(type, base64) of every `ssh authorized-key` of an NVUE user entry."""
    keys = ((user.get("ssh") or {}).get("authorized-key")) or {}
    out = set()
    for entry in keys.values():
        if isinstance(entry, dict) and entry.get("key"):
            out.add((str(entry.get("type") or ""), str(entry["key"])))
    return out


# --- crypt(3) ----------------------------------------------------------------------------
def crypt(word: str, salt: str) -> str | None:
    if not crypt3.available():
        raise RuntimeError("no crypt(3): install libcrypt (libxcrypt) for the lab's password hashes")
    return crypt3.crypt(word, salt)


def hash_password(password: str) -> str:
    """SHA-512 crypt ($6$), the hash format of NVUE's `hashed-password` (`openssl passwd -6`)."""
    salt = "".join(secrets.choice(_SALT_CHARS) for _ in range(16))
    hashed = crypt(password, f"$6${salt}$")
    if not hashed or not hashed.startswith("$6$"):
        raise RuntimeError("crypt(3) on this system cannot make SHA-512 hashes")
    return hashed


def check_password(password: str, hashed: str) -> bool:
    """crypt(3) the password with the stored hash as salt; `*`, `!...` or empty never match."""
    if not hashed or not hashed.startswith("$"):
        return False
    result = crypt(password, hashed)
    return bool(result) and hmac.compare_digest(result.encode(), hashed.encode())
