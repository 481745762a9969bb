"""The lab process: one asyncio loop serving every simulated device over SSH.

    python -m generator.lab.server --dir DIR

DIR/lab.json (written by control.lab_up) lists the devices; the server writes
DIR/endpoints.yml, DIR/known_hosts and finally DIR/lab.ready once every device listens.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import logging
import os
import re
import signal
from pathlib import Path

import asyncssh
import yaml

from generator.common.atomic_write import write_atomic
from generator.lab import gpu_host, host_lldp, sonic_factory
from generator.lab.device import Device
from generator.lab.factory import FACTORY_USER, Management, hash_password, lease_for
from generator.lab.faults import FaultSource, fault_file
from generator.lab.host_netplan import netplan_tool
from generator.lab.nvue import NvueDevice
from generator.lab.session import LabSSHServer, Session
from generator.lab.world import WORLD_FILE, Fabric, WorldSource
from generator.lab.ztp_channel import ZtpChannel

log = logging.getLogger("generator.lab")

CONFIG_FILE = "lab.json"
READY_FILE = "lab.ready"
SONIC_DEFAULT_VERSION = "202311"
# The hostname a switch leaves the factory with: Cumulus Linux's startup.yaml says "cumulus"
# (Quick-Start-Guide page: the default hostname is cumulus), sonic-ztp's ZTP profile "sonic"
# (sonic-ztp src/usr/lib/ztp/templates/ztp-config.j2).
CUMULUS_FACTORY_HOSTNAME = "cumulus"
SONIC_FACTORY_HOSTNAME = "sonic"


def host_key(directory: Path, name: str) -> asyncssh.SSHKey:
    """Load the device's persisted host key, creating it on first start."""
    path = directory / "hostkeys" / name
    if path.exists():
        return asyncssh.read_private_key(str(path))
    path.parent.mkdir(parents=True, exist_ok=True)
    key = asyncssh.generate_private_key("ssh-ed25519")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(key.export_private_key())
    return key


def management(spec: dict, index: int) -> Management:
    """eth0 of a lab device: static from the spec, or the lab DHCP server's lease for it."""
    mode = spec.get("mgmt_mode") or "static"
    if not spec.get("mgmt_address"):
        lease = lease_for(index)
        return Management(lease.address, spec.get("mgmt_gateway") or lease.gateway, mode)
    return Management(spec["mgmt_address"], spec.get("mgmt_gateway"), mode)


def make_device(directory: Path, spec: dict, *, index: int = 0, username: str = FACTORY_USER,
                password: str | None = None) -> Device:
    from generator.lab.sonic import SonicDevice

    classes = {"cumulus": NvueDevice, "sonic": SonicDevice}
    if spec["os"] not in classes:
        raise ValueError(f"device {spec['name']}: unknown os {spec['os']!r} (cumulus or sonic)")
    root = directory / "devices" / spec["name"]
    version = str(spec.get("version") or "5.11")
    faults = FaultSource(fault_file(directory, spec["name"]))
    if spec["os"] == "sonic":
        if version.startswith("5."):
            version = SONIC_DEFAULT_VERSION  # LabDevice's default is a Cumulus release
        elif re.fullmatch(r"\d{4}\.\d{1,2}", version):
            # `lab up` joins the plan's version tuple (2024, 11) with a dot; SONiC names it 202411
            year, month = version.split(".")
            version = f"{year}{int(month):02d}"
        version, build = sonic_factory.image(version)
        # Boots from SONiC's factory CONFIG_DB: the model's default SKU, eth0 as management() gives it.
        device = SonicDevice(spec["name"], version, root, faults, platform=spec.get("model") or "SN5600",
                             mgmt=management(spec, index), build=build,
                             **_factory_identity(spec, SONIC_FACTORY_HOSTNAME))
    else:
        # Factory accounts: `cumulus` (DEVICE_STATE.md) and the lab's login user, both with the
        # lab password's SHA-512 hash; from then on the switch's own config decides who logs in.
        users = {name: hash_password(password) for name in {FACTORY_USER, username}} if password else {}
        device = NvueDevice(spec["name"], version, root, faults, mgmt=management(spec, index), users=users,
                            **_factory_identity(spec, CUMULUS_FACTORY_HOSTNAME))
    if password is not None:
        device.set_login(username, password)
    if spec.get("applied") is not None:
        device.boot_applied(spec["applied"])
    # `lab up --ztp`: the switch waits for a DHCP answer; `lab ztp` (ztp.py) plays its NOS's ZTP
    device.ztp_booted = device.ztp_waiting = bool(spec.get("ztp"))
    if device.ztp_booted and spec["os"] == "cumulus":
        # as shipped, the factory account must change its password at the first login (User-Accounts
        # page): only the ZTP script (passwd -x, usermod -p) or a person at that dialogue ends it. A
        # switch of `lab up` without --ztp stands for one a day 0 already provisioned: not expired.
        device.expire_password(FACTORY_USER)
    return device


def _factory_identity(spec: dict, factory_hostname: str) -> dict:
    """A ZTP switch is as shipped: the image's hostname, the label's eth0 MAC and serial (the inventory)."""
    if not spec.get("ztp"):
        return {}
    return {"factory_hostname": factory_hostname, "mac": spec.get("mac"), "serial": spec.get("serial")}


async def serve(directory: Path) -> None:
    config = json.loads((directory / CONFIG_FILE).read_text())
    username = config["username"]
    password = (directory / "password").read_text().strip()
    servers: list[asyncssh.SSHAcceptor] = []
    endpoints: dict[str, dict] = {}
    known_hosts: list[str] = []
    # The physical world (world.py): DIR/world.json, written by lab_up, re-read when it changes.
    fabric = Fabric(WorldSource(directory / WORLD_FILE))

    for index, spec in enumerate(config["devices"]):
        device = make_device(directory, spec, index=index, username=username, password=password)
        device.time_scale = float(config.get("time_scale") or 1.0)
        fabric.devices[device.name] = device
        device.fabric = fabric
        key = host_key(directory, device.name)
        sftp_root = str(device.root)

        async def handle(process, device=device):
            await Session(device, process.get_extra_info("username") or username, process).run()

        server = await asyncssh.create_server(
            lambda device=device: LabSSHServer(device),
            "127.0.0.1", int(spec.get("port") or 0),
            server_host_keys=[key],
            process_factory=handle,
            sftp_factory=lambda chan, root=sftp_root: asyncssh.SFTPServer(chan, chroot=root),
            allow_scp=True,
            kbdint_auth=False,
            reuse_address=True,
            # Each session ends when the client goes away; keepalives only add load at 128+ devices.
            keepalive_interval=0,
        )
        servers.append(server)
        port = server.sockets[0].getsockname()[1]
        endpoints[device.name] = {"host": "127.0.0.1", "port": port, "username": username}
        if device.ztp_waiting:
            # a factory switch answers its factory login only, and nothing of the plan yet
            endpoints[device.name]["ztp_waiting"] = True
        public = key.export_public_key("openssh").decode().split()[:2]
        known_hosts.append(f"[127.0.0.1]:{port} {' '.join(public)}\n")

    # The GPU servers (gpu_host.py): an SSH endpoint each, running real commands in its sandbox.
    host_endpoints: dict[str, dict] = {}
    host_specs = config.get("hosts") or []
    host_user = config.get("host_user") or "root"
    if host_specs:
        authorized = gpu_host.login_key(directory).convert_to_public()
    for spec in host_specs:
        gpu_host.build(directory, spec)
        key = host_key(directory, spec["name"])
        server = await asyncssh.create_server(
            lambda: gpu_host.HostSSHServer(host_user, authorized), "127.0.0.1", 0,
            server_host_keys=[key], process_factory=gpu_host.exec_handler(
                directory, spec["name"], functools.partial(
                    host_lldp.write_view, gpu_host.host_dir(directory, spec["name"]) / "state", spec["name"],
                    list(spec["netdevs"]), fabric)),
            encoding=None, kbdint_auth=False, password_auth=False, reuse_address=True, keepalive_interval=0)
        servers.append(server)
        port = server.sockets[0].getsockname()[1]
        host_endpoints[spec["name"]] = {
            "host": "127.0.0.1", "port": port,
            # Ansible's ~user/.ansible/tmp would be the lab machine's home of that user
            "remote_tmp": str(gpu_host.host_dir(directory, spec["name"]) / "home/.ansible/tmp")}
        public = key.export_public_key("openssh").decode().split()[:2]
        known_hosts.append(f"[127.0.0.1]:{port} {' '.join(public)}\n")

    def write_endpoints() -> None:
        doc = {"switches": endpoints, "password_file": str(directory / "password")}
        if host_endpoints:
            # the `hosts:` section host commands read (docs/drift.md), with where each lab host listens
            # fabricgen_root as an extra var: playbooks/hosts.yml sets it as a play var (default /), which
            # beats any inventory var, and only an extra var beats it. Ansible templates it per host, so
            # every host's files land below its own sandbox, never in the lab machine's /etc.
            root = gpu_host.ROOT_TEMPLATE.format(hosts=directory / gpu_host.HOSTS_DIR)
            extravars: dict = {"fabricgen_root": root}
            if netplan_tool() is not None:
                # a stock server has netplan and systemd, where the playbook's `auto` runs netplan per
                # rail; under a fabricgen_root `auto` would skip it, `true` generates into the root
                # with the real netplan (host_netplan.py) and leaves networkctl out
                extravars["fabricgen_netplan_apply"] = True
            doc["hosts"] = {"user": host_user, "ssh_key": gpu_host.LOGIN_KEY, "servers": host_endpoints,
                            "extravars": extravars}
        _write(directory / "endpoints.yml", yaml.safe_dump(doc, sort_keys=True))

    def provisioned(name: str) -> None:
        # After ZTP the switch is at its planned address with its rendered config: deploy and
        # drift log in as the account that config leaves (lab.json ztp_user, set by `lab up --ztp`).
        endpoints[name].pop("ztp_waiting", None)
        endpoints[name]["username"] = config.get("ztp_user") or endpoints[name]["username"]
        write_endpoints()

    channel = ZtpChannel(directory, fabric.devices, provisioned)
    if any(d.ztp_booted for d in fabric.devices.values()):
        await channel.start()
    write_endpoints()
    _write(directory / "known_hosts", "".join(known_hosts))
    _write(directory / READY_FILE, f"{os.getpid()}\n")

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    for server in servers:
        server.close()
    channel.close()
    (directory / READY_FILE).unlink(missing_ok=True)


def _write(path: Path, text: str) -> None:
    write_atomic(path, text, mode=0o600, fsync=False)        # never through a link planted in the lab directory


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="fabricgen lab SSH simulator")
    parser.add_argument("--dir", type=Path, required=True)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    asyncio.run(serve(args.dir.resolve()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
