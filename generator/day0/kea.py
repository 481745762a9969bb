"""The Kea DHCPv4 server config of the bring-up kit: a pure function of plan, inventory, URL and
interface (no clock, no host state), so two runs write the same bytes.

What it encodes (Kea ARM, "The DHCPv4 Server"; contract section 2):
- one subnet = addressing.management, with no pool: Kea leases only reserved addresses then
  ("Host Reservations in DHCPv4": reservations outside any pool are allowed), so an unknown
  box on the management LAN gets no answer instead of a random address;
- a reservation per inventory row (hw-address = eth0's MAC) with the planned address and
  hostname; host-name (option 12) is also sent explicitly, because the Cumulus ZTP script finds
  its entry by hostname first;
- subnet options: routers (the management gateway), domain-name-servers, ntp-servers;
- Cumulus: option 239 `cumulus-provision-url` (the Cumulus ZTP page: the switch asks for it
  with vendor class "cumulus-linux ...", option 60) defined in `option-def` and given by a
  client class whose test matches option 60;
- SONiC: option 67 `boot-file-name` per reservation = that switch's ztp.json (sonic-ztp reads
  the ZTP JSON URL from option 67);
- `always-send` on the ZTP options and the hostname: a client gets them even when its
  parameter request list omits them (Kea ARM, "DHCPv4 Option Configuration").
- leases in a memfile at Debian's kea-dhcp4-server path /var/lib/kea/kea-leases4.csv (Kea ARM,
  "Memfile - Basic Storage for Leases"): no database server needed on the bring-up host, and
  leases survive a restart; recent Kea releases accept lease files only in that directory.
"""

from __future__ import annotations

import ipaddress
import json

from generator.common.errors import FabricgenError
from generator.day0.inventory import Inventory
from generator.day0.urls import check_option_length, file_url
from generator.plan.model import FabricPlan

LEASE_FILE = "/var/lib/kea/kea-leases4.csv"
CUMULUS_OPTION = {"name": "cumulus-provision-url", "code": 239, "type": "string", "space": "dhcp4"}
CUMULUS_CLASS = "cumulus"
# The vendor class a Cumulus switch sends in option 60 starts with "cumulus-linux" (e.g.
# "cumulus-linux x86_64"): the Cumulus ZTP page's ISC dhcpd example matches its first 13 bytes.
CUMULUS_TEST = "substring(option[60].hex,0,13) == 'cumulus-linux'"
CUMULUS_SCRIPT = "ztp/cumulus-ztp.sh"


class KeaError(FabricgenError, ValueError):
    """One line: why no Kea config can be written for this plan and inventory."""


def sonic_ztp_path(name: str) -> str:
    return f"ztp/{name}/ztp.json"


def gateway(plan: FabricPlan) -> str:
    """management.gateway, else the pool's first address (as the plan and `lab up` use)."""
    if plan.management is not None:
        return plan.management.gateway
    return str(ipaddress.IPv4Network(plan.mgmt_pool).network_address + 1)


def _ntp_addresses(plan: FabricPlan) -> tuple[list[str], list[str]]:
    """(IPv4 addresses, names) of management.ntp: option 42 carries addresses only (RFC 2132 §8.3)."""
    if plan.management is None:
        return [], []
    addresses, names = [], []
    for server in plan.management.ntp:
        try:
            ipaddress.IPv4Address(server)
            addresses.append(server)
        except ValueError:
            names.append(server)
    return addresses, names


def kea_config(plan: FabricPlan, inventory: Inventory, base_url: str, interface: str) -> tuple[dict, list[str]]:
    """({"Dhcp4": ...}, warning lines). BASE_URL is checked (urls.check_base_url)."""
    warnings: list[str] = []
    options = [{"name": "routers", "data": gateway(plan)}]
    if plan.management is not None and plan.management.dns:
        options.append({"name": "domain-name-servers", "data": ", ".join(plan.management.dns)})
    ntp, ntp_names = _ntp_addresses(plan)
    if ntp:
        options.append({"name": "ntp-servers", "data": ", ".join(ntp)})
    if ntp_names:
        warnings.append(f"warning: management.ntp: {', '.join(ntp_names)} left out of DHCP option 42 "
                        "(ntp-servers carries IPv4 addresses only); the switch config still names them")
    pool = ipaddress.IPv4Network(plan.mgmt_pool)
    cumulus = plan.switch_os == "cumulus"
    reservations = []
    by_name = {sw.name: sw for sw in plan.switches}
    hosts = {h.name: h for h in plan.hosts}
    for row in sorted(inventory.rows, key=lambda r: r.line):
        if row.kind == "switch":
            address = by_name[row.name].mgmt_ip
        else:
            address = hosts[row.name].mgmt_ip
        if ipaddress.IPv4Address(address) not in pool:
            # Kea refuses a reservation outside its subnet; a compiled plan never makes one
            raise KeaError(f"{inventory.path}:{row.line}: {row.name}'s management address {address} is outside "
                           f"addressing.management {plan.mgmt_pool}; fix the intent's addressing")
        reservation: dict = {"hw-address": row.mac, "ip-address": address, "hostname": row.name}
        data = [{"name": "host-name", "data": row.name, "always-send": True}]
        if row.kind == "switch" and not cumulus:
            url = file_url(base_url, sonic_ztp_path(row.name))
            check_option_length(url, f"{row.name}'s ztp.json")
            data.append({"name": "boot-file-name", "data": url, "always-send": True})
        reservation["option-data"] = data
        reservations.append(reservation)
    subnet = {"id": 1, "subnet": str(pool), "option-data": options, "reservations": reservations}
    dhcp4: dict = {
        "interfaces-config": {"interfaces": [interface]},
        "lease-database": {"type": "memfile", "persist": True, "name": LEASE_FILE, "lfc-interval": 3600},
        # reservations are keyed by eth0's MAC only: the inventory has nothing else
        "host-reservation-identifiers": ["hw-address"],
        "subnet4": [subnet],
    }
    if cumulus:
        url = file_url(base_url, CUMULUS_SCRIPT)
        check_option_length(url, "the Cumulus ZTP script")
        dhcp4["option-def"] = [dict(CUMULUS_OPTION)]
        dhcp4["client-classes"] = [{"name": CUMULUS_CLASS, "test": CUMULUS_TEST, "option-data": [
            {"name": "cumulus-provision-url", "data": url, "always-send": True}]}]
    return {"Dhcp4": dhcp4}, warnings


def kea_text(config: dict) -> str:
    return json.dumps(config, indent=2, sort_keys=True) + "\n"


__all__ = ["KeaError", "CUMULUS_CLASS", "CUMULUS_OPTION", "CUMULUS_SCRIPT", "CUMULUS_TEST", "LEASE_FILE", "gateway",
           "kea_config", "kea_text", "sonic_ztp_path"]
