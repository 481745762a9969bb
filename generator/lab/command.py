"""`fabricgen lab up`: from a checked plan and the command's options to the switches, GPU servers,
cables and faults the lab starts (control.lab_up).

Prints nothing. `prepare` refuses with one LabUpError line before anything is started, or returns
the LabUp to start with the warnings the CLI prints first; `start` starts it and returns
DIR/endpoints.yml; `started_lines` are what the CLI prints on stdout then.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from pathlib import Path

from generator.common.errors import FabricgenError
from generator.lab.control import LabDevice, LabError, LabHost
from generator.lab.world import World


class LabUpError(FabricgenError):
    """`lab up` refused or failed: one line, "lab up: ..." (the CLI prints it after "error: ")."""


@dataclass(frozen=True)
class LabUp:
    """What `lab up` starts. USERNAME is the switches' login now, ZTP_USER the one `lab ztp` leaves
    (None without --ztp); WARNINGS are lines for stderr before the lab starts."""

    switch_os: str
    devices: list[LabDevice]
    hosts: list[LabHost]
    username: str
    ztp_user: str | None
    world: World | None
    faults: dict[str, dict]
    host_user: str
    scheduler: str
    warnings: tuple[str, ...] = ()


def prepare(plan, *, password: str | None, wiring: str | None = None, nos_version: str | None = None,
            ztp: bool = False, inventory: str | None = None, faults: str | None = None, hosts: int = 0) -> LabUp:
    """The lab of PLAN (an intent that passed its checks) with `lab up`'s options, checked in the
    order the command documents them; a LabUpError names the first that does not fit."""
    if inventory is not None and not ztp:
        raise LabUpError("lab up: --inventory is for --ztp (the MACs and serials of factory switches); add --ztp")
    if ztp and inventory is None:
        raise LabUpError("lab up: --ztp needs --inventory CSV (name,serial,mac): a factory switch is known by its "
                         "eth0 MAC, which the DHCP reservations of `fabricgen day0` name")
    version = lab_version(plan, nos_version)
    world = lab_world(plan, wiring)
    if not 0 <= hosts <= len(plan.hosts):
        raise LabUpError(f"lab up: --hosts {hosts}: give 0 (switches only) up to {len(plan.hosts)} "
                         "(the plan's hosts)")
    device_faults = lab_faults(plan, faults, {h.name: {n.netdev for n in h.nics} for h in plan.hosts[:hosts]})
    world = _with_host_faults(world, device_faults)
    warnings: tuple[str, ...] = ()
    if ztp and inventory is not None:
        devices, username, ztp_user, warnings = _ztp_devices(plan, inventory, version, password)
    else:
        pool = ipaddress.IPv4Network(plan.mgmt_pool)
        # The gateway of the intent's management section, else the pool's first address (as the plan's).
        gateway = plan.management.gateway if plan.management is not None else str(pool.network_address + 1)
        devices = [LabDevice(sw.name, plan.switch_os, version, mgmt_address=f"{sw.mgmt_ip}/{pool.prefixlen}",
                             mgmt_gateway=gateway) for sw in plan.switches]
        username, ztp_user = plan.deploy_user, None
    lab_hosts = [LabHost(h.name, tuple(n.netdev for n in h.nics), tuple(n.rdma for n in h.nics),
                         {n.netdev: [n.ip.split("/")[0]] for n in h.nics}, plan.host_rollout.scheduler,
                         {n.netdev: world.host_mac(h.name, n.netdev) for n in h.nics} if world is not None else None)
                 for h in plan.hosts[:hosts]]
    return LabUp(plan.switch_os, devices, lab_hosts, username, ztp_user, world, device_faults,
                 plan.host_rollout.user, plan.host_rollout.scheduler, warnings)


def start(lab: LabUp, directory: Path, *, password: str | None, time_scale: float = 1.0) -> Path:
    """Start LAB in DIRECTORY; DIRECTORY/endpoints.yml. A LabUpError when it does not start."""
    from generator.lab.control import lab_up

    try:
        return lab_up(lab.devices, directory, username=lab.username, password=password, world=lab.world,
                      ztp_user=lab.ztp_user, time_scale=time_scale, faults=lab.faults, hosts=lab.hosts,
                      host_user=lab.host_user)
    except LabError as exc:
        raise LabUpError(f"lab up: {exc}") from None


def started_lines(lab: LabUp, directory: Path, endpoints: Path) -> list[str]:
    """What `lab up` prints once LAB answers: what runs, where its endpoints are, and where the
    scheduler's client is when its hosts have one."""
    how = " waiting for ZTP (`fabricgen lab ztp`)" if lab.ztp_user is not None else ""
    servers = f" and {len(lab.hosts)} GPU servers" if lab.hosts else ""
    lines = [f"{len(lab.devices)} simulated {lab.switch_os} switches{servers} up{how}; endpoints: {endpoints}"]
    if lab.hosts and lab.scheduler in ("slurm", "kubernetes"):
        # deploy's drain hooks run scontrol / kubectl on the controller: the lab's talks to the hosts' scheduler
        client = {"slurm": "Slurm controller client", "kubernetes": "Kubernetes client (kubectl)"}
        lines.append(f"{client[lab.scheduler]}: export PATH={Path(directory).resolve() / 'bin'}:$PATH")
    return lines


def lab_version(plan, nos_version: str | None) -> str:
    """The release the lab's switches run: --nos-version, checked for the NOS, else the intent's."""
    if nos_version is None:
        return ".".join(map(str, plan.switch_os_version))
    if plan.switch_os == "cumulus":
        from generator.lab.schema import schema_for

        ok = re.fullmatch(r"5\.\d{1,2}(\.\d{1,2})?", nos_version) is not None
        if ok:
            try:
                schema_for(nos_version)
            except (ValueError, KeyError):
                ok = False
        example = "5.9 or 5.11"
    else:
        from generator.lab.sonic_factory import image

        ok = re.fullmatch(r"\d{4}\.\d{1,2}", nos_version) is not None
        if not ok:
            try:
                image(nos_version)     # a release, or a build string as `show version` prints it
                ok = True
            except ValueError:
                ok = False
        example = "202411, SONiC.20241211.21 or SONiC.202405c.38617-int-0a1b2c3"
    if not ok:
        raise LabUpError(f"lab up: --nos-version {nos_version!r} is not a {plan.switch_os} release the lab runs; "
                         f"give e.g. {example}")
    return nos_version


def _ztp_devices(plan, inventory: str, version: str, password: str | None):
    """(LabDevice per inventory switch, factory login, the login after ZTP, warnings) for `lab up --ztp`."""
    from generator.day0.inventory import InventoryError, load_inventory
    from generator.lab.factory import check_password

    try:
        inv = load_inventory(inventory, plan)
    except InventoryError as exc:
        raise LabUpError(f"lab up: {exc}") from None
    rows = inv.switches
    # A switch without a row is racked too, but nobody wrote its MAC down: it boots with one from
    # its name, and the kit's Kea has no reservation for it (`lab ztp`: no DHCP answer).
    from generator.lab.world import chassis_mac
    from generator.plan.sonic_catalog import sonic_platform

    # a SONiC switch boots its model's default SKU when the lab has that platform's data (else SN5600's)
    models = {sw.name: sw.model if plan.switch_os == "sonic" and sonic_platform(sw.model) else None
              for sw in plan.switches}
    devices = [LabDevice(sw.name, plan.switch_os, version, mgmt_mode="dhcp", ztp=True,
                         mac=rows[sw.name].mac if sw.name in rows else chassis_mac(sw.name),
                         serial=rows[sw.name].serial if sw.name in rows else None,
                         model=models[sw.name])
               for sw in plan.switches]
    warnings: list[str] = []
    missing = [sw.name for sw in plan.switches if sw.name not in rows]
    if missing:
        warnings.append(f"warning: {inventory}: {len(missing)} switch(es) without a row boot with a MAC nobody "
                        f"wrote down and get no DHCP answer: {', '.join(missing[:8])}"
                        f"{' ...' if len(missing) > 8 else ''}")
    factory = "cumulus" if plan.switch_os == "cumulus" else "admin"
    users = plan.management.users if plan.management is not None else ()
    if plan.switch_os == "cumulus" and users:
        # the kit replaces the config: afterwards only the intent's accounts exist
        after = plan.deploy_user
        user = next((u for u in users if u.name == after), None)
        if user is None or not user.hashed_password:
            warnings.append(f"warning: after `lab ztp` the switches know only management.users; deploy.user {after} "
                            f"{'is not one of them' if user is None else 'has no hashed_password'}: drift cannot "
                            "log in with a password")
        elif password is None or not check_password(password, user.hashed_password):
            warnings.append(f"warning: after `lab ztp` {after} logs in with the password behind its hashed_password "
                            "in the intent; export FABRICGEN_PASSWORD=<that password> before `lab up` so "
                            "DIR/password holds it")
    else:
        # SONiC keeps its Linux accounts outside config_db; a Cumulus patch keeps the factory's
        after = factory
    return devices, factory, after, tuple(warnings)


def lab_faults(plan, faults: str | None, hosts: dict[str, set[str]] | None = None) -> dict[str, dict]:
    """{switch or host: its faults} from `lab up --faults FILE`, checked against the plan and the
    hosts the lab starts (lab/fault_file.py)."""
    if faults is None:
        return {}
    from generator.lab.fault_file import FaultFileError, load_fault_file

    ports: dict[str, set[str]] = {sw.name: set() for sw in plan.switches}
    for port in plan.ports:
        if port.device in ports:
            ports[port.device].add(port.port)
    try:
        return load_fault_file(faults, ports, hosts)
    except FaultFileError as exc:
        raise LabUpError(f"lab up: {exc}") from None


def _with_host_faults(world: World | None, faults: dict[str, dict]) -> World | None:
    """The world with the cables of the hosts' `rails_down` unplugged at the leaf's end too."""
    from generator.lab.world import with_rails_down

    for name, fault in sorted(faults.items()):
        down = set((fault.get("host") or {}).get("rails_down") or [])
        if down and world is not None:
            world = with_rails_down(world, name, down, down)
    return world


def lab_world(plan, wiring: str | None) -> World:
    """The lab's cables: the wiring file (devices checked against the plan) or the plan's cabling,
    with the MACs of the host NICs the discovery file (hosts.discovered) recorded."""
    from generator.lab.world import WiringError, check_devices, load_wiring, parse_wiring, with_host_macs
    from generator.render.cabling import render_cabling

    found = plan.discovery.hosts if plan.discovery is not None else {}
    macs = {(name, nic.netdev): nic.mac for name, host in found.items() for nic in host.nics.values() if nic.mac}
    try:
        if wiring is None:
            return with_host_macs(parse_wiring(render_cabling(plan), "cabling.csv"), macs)
        world = load_wiring(wiring)
        hosts = {h.name for h in plan.hosts}
        check_devices(world, {sw.name for sw in plan.switches} | hosts, wiring, hosts)
        return with_host_macs(world, macs)
    except WiringError as exc:
        raise LabUpError(f"lab up: {exc}") from None
