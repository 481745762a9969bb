"""The Cumulus ZTP script of the kit (templates/day0/cumulus-ztp.sh.j2): one script for every
switch, with a table of name, eth0 MAC and the sha256 of each switch's startup.yaml baked in.

Every switch of the plan has an entry by name (a switch whose DHCP server gives it its planned
hostname finds itself without an inventory row); inventory switches also by MAC. Every value
reaches the shell through the `shquote` filter.
"""

from __future__ import annotations

import base64
import hashlib
import ipaddress
from dataclasses import dataclass

from generator import __version__
from generator.common.crypt3 import crypt
from generator.common.errors import FabricgenError
from generator.day0.inventory import Inventory
from generator.day0.kea import gateway
from generator.devices.credentials import PASSWORD_ENV
from generator.devices.nvue import NVUE_ERROR_PREFIX
from generator.plan.model import FabricPlan
from generator.render.environment import template
from generator.render.nvue import NEW_SYNTAX

TAG = "fabricgen-ztp"


@dataclass(frozen=True, slots=True)
class Entry:
    name: str
    mac: str | None
    sha256: str
    address: str          # eth0's planned address/length (the DHCP reservation's)


def release(plan: FabricPlan) -> str:
    """switch_os.version as the intent writes it for Cumulus (major.minor)."""
    major, minor = plan.switch_os_version
    return f"{major}.{minor}"


class LoginError(FabricgenError, ValueError):
    """One line: the kit could not set the deploy user's password (nothing was written)."""


def deploy_login(plan: FabricPlan, password: str | None) -> tuple[str, str | None]:
    """(deploy.user, the crypt hash the ZTP script sets for it, or None: nothing to set).

    The factory `cumulus` account must change its password at the first login (User-Accounts
    page; DEVICE_STATE.md): an SSH client meets the change-password dialogue instead of a shell, so
    the first deploy or drift could not log in. NVIDIA's ZTP page unexpires it (`passwd -x 99999`)
    and sets a hash (`usermod -p`); the script does the same for deploy.user:
    - with `management:` (replace mode) the hash is the user's hashed_password in management.users;
      a user the intent lists without one is created by NVUE, never expired: nothing to set;
    - without it (patch mode: the factory account stays) the hash is made from the deploy password
      (FABRICGEN_PASSWORD, what `deploy` logs in with), salted from the fabric and user name so the
      same intent and password give the same kit; with no password the kit is refused.
    """
    user = plan.deploy_user
    if plan.management is not None:
        listed = next((u for u in plan.management.users if u.name == user), None)
        return user, listed.hashed_password if listed is not None else None
    if not password:
        raise LoginError(
            f"deploy.user {user}: without management.users the kit keeps the factory account, whose password "
            "must be changed at the first login (Cumulus User-Accounts page), so the ZTP script must set it: "
            f"export {PASSWORD_ENV} (the password deploy logs in with) or list {user} with a hashed_password "
            "under management.users")
    salt = base64.b64encode(hashlib.sha256(f"fabricgen-ztp:{plan.fabric}:{user}".encode()).digest(), b"./")
    hashed = crypt(password, "$6$" + salt.decode()[:16] + "$")
    if not hashed or not hashed.startswith("$6$"):
        raise LoginError("crypt(3) on this system cannot make SHA-512 hashes; install libcrypt (libxcrypt)")
    return user, hashed


def render_cumulus_script(plan: FabricPlan, inventory: Inventory, base_url: str, hashes: dict[str, str],
                          password: str | None = None) -> str:
    """HASHES: switch name -> sha256 of http/switches/<name>/startup.yaml. PASSWORD: deploy.user's
    (FABRICGEN_PASSWORD), needed without `management:` (deploy_login; LoginError without it)."""
    macs = {name: row.mac for name, row in inventory.switches.items()}
    length = ipaddress.IPv4Network(plan.mgmt_pool).prefixlen
    entries = [Entry(sw.name, macs.get(sw.name), hashes[sw.name], f"{sw.mgmt_ip}/{length}") for sw in plan.switches]
    user, hashed = deploy_login(plan, password)
    return template("day0/cumulus-ztp.sh.j2").render(
        fabric=plan.fabric, release=release(plan), base_url=base_url, tag=TAG,
        replace=plan.management is not None, entries=entries, generator=__version__,
        error_prefix=NVUE_ERROR_PREFIX, deploy_user=user, deploy_hash=hashed, gateway=gateway(plan),
        ipkey="ipv4" if plan.switch_os_version >= NEW_SYNTAX else "ip")


__all__ = ["TAG", "Entry", "LoginError", "deploy_login", "release", "render_cumulus_script"]
