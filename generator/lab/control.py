"""Start and stop a lab: one background process serving every simulated switch."""

from __future__ import annotations

import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from generator.common.atomic_write import write_atomic
from generator.common.bounded_read import read_bounded
from generator.common.errors import FabricgenError
from generator.lab.factory import Management
from generator.lab.faults import fault_file, held_file, write_faults
from generator.lab.gpu_host import (
    CONTROLLER_BIN,
    HOSTS_DIR,
    K8S_STATE,
    LOGIN_KEY,
    SLURM_STATE,
    apply_host_faults,
    controller_tools,
    own_link,
)
from generator.lab.private_file import open_log
from generator.lab.server import CONFIG_FILE, READY_FILE
from generator.lab.world import WORLD_FILE, World, with_rails_down, write_world
from generator.lab.ztp_channel import SOCKET_FILE

PID_FILE = "lab.pid"
LOG_FILE = "lab.log"
SERVER_MODULE = "generator.lab.server"
# `lab up --time-scale`: 1 is real time; 600 turns a 1 h confirm timer into 6 s.
MIN_TIME_SCALE, MAX_TIME_SCALE = 1.0, 600.0


class LabError(FabricgenError, RuntimeError):
    """The lab could not be started or stopped."""


@dataclass(frozen=True)
class LabDevice:
    name: str
    os: str  # "cumulus" | "sonic"
    version: str = "5.11"
    port: int = 0  # 0: an ephemeral port
    # eth0 (Cumulus): "static" sets `interface eth0 ip address A/L` + `ip gateway G` in the factory
    # config; "dhcp" is ZTP day 0 (eth0 a DHCP client, the lease is mgmt_address). No address: the
    # lab leases one from 192.0.2.0/24 by device index. The switch is reachable while eth0 keeps it.
    mgmt_address: str | None = None  # "192.168.0.10/20"
    mgmt_gateway: str | None = None
    mgmt_mode: str = "static"  # "static" | "dhcp"
    # `lab up --ztp`: the switch boots as shipped, waiting for ZTP (eth0 a DHCP client with only the
    # lab's own 192.0.2.x lease, the factory hostname and login), with its label's MAC and serial.
    ztp: bool = False
    mac: str | None = None
    serial: str | None = None
    model: str | None = None
    # Cumulus: an NVUE document (as `nv config patch` takes it) applied and saved before the switch
    # answers SSH, as an earlier `nv config patch` + `nv config apply` + `nv config save` leaves it
    # (revision 1 applied): a switch already in service, without a commit over SSH per lab.
    applied: str | None = None


@dataclass(frozen=True)
class LabHost:
    """A GPU server of the plan: its rail NICs as the plan names them (gpu_host.build)."""
    name: str
    netdevs: tuple[str, ...]
    rdma: tuple[str, ...]
    addresses: dict[str, list[str]]     # netdev -> its rail address(es), for the RoCE GID table
    scheduler: str = "none"             # the intent's deploy.hosts.scheduler: which client it has
    macs: dict[str, str] | None = None  # netdev -> MAC, the world's (world.host_mac: what the leaves hear)


def lab_up(devices: list[LabDevice], directory: Path, *, username: str = "cumulus",
           password: str | None = None, faults: dict[str, dict] | None = None,
           timeout: float = 60, world: World | None = None, ztp_user: str | None = None,
           time_scale: float = 1.0, hosts: list[LabHost] | None = None,
           host_user: str = "root") -> Path:
    """Start the lab process, wait until every device answers SSH, return DIR/endpoints.yml.

    world: the cables (world.py); None: no cable is plugged in, every switch port is down.
    ztp_user: the login endpoints.yml names for a switch once `lab ztp` provisioned it.
    time_scale: the switches' own timers (confirm, systemd --on-active) run this many times
    faster than the wall clock: a deploy's 30 s confirm timer expires in 30/N s. The product
    keeps its floors (deploy/overrides.py) and never asks whether it talks to a lab.
    hosts: GPU servers (gpu_host.py), listed in the `hosts:` section of endpoints.yml; host_user is
    the login they accept (the intent's deploy.hosts.user).
    """
    if not MIN_TIME_SCALE <= time_scale <= MAX_TIME_SCALE:
        raise LabError(f"--time-scale {time_scale:g}: give {MIN_TIME_SCALE:g}-{MAX_TIME_SCALE:g}")
    directory = Path(directory).resolve()
    _make_private_dir(directory)
    if _running_pid(directory) is not None:
        raise LabError(f"a lab is already running in {directory}; run `fabricgen lab down --dir {directory}` first")
    _admit(directory)
    hosts = list(hosts or [])
    names = [d.name for d in devices]
    if len(set(names + [h.name for h in hosts])) != len(names) + len(hosts):
        raise LabError("device and host names must be unique")
    for device in devices:
        if device.os not in ("cumulus", "sonic"):
            raise LabError(f"device {device.name}: os must be cumulus or sonic, not {device.os!r}")
        if device.mgmt_mode not in ("static", "dhcp"):
            raise LabError(f"device {device.name}: mgmt_mode must be static or dhcp, not {device.mgmt_mode!r}")
        if device.applied is not None and (device.os != "cumulus" or device.ztp):
            raise LabError(f"device {device.name}: an applied config at boot is for a Cumulus switch out of ZTP")
        if device.ztp and device.mgmt_mode != "dhcp":
            raise LabError(f"device {device.name}: a ZTP switch boots with eth0 on DHCP (mgmt_mode dhcp)")
        if device.mgmt_address:
            try:
                Management(device.mgmt_address, device.mgmt_gateway, device.mgmt_mode)
            except ValueError as exc:
                raise LabError(f"device {device.name}: {exc}") from None
    for stale in (READY_FILE, "endpoints.yml", PID_FILE, WORLD_FILE, SOCKET_FILE):
        (directory / stale).unlink(missing_ok=True)
    if world is not None:
        write_world(directory, world)

    _write_secret(directory / "password", password if password is not None else secrets.token_urlsafe(18))
    for name, fault in (faults or {}).items():
        if name not in names + [h.name for h in hosts]:
            raise LabError(f"faults given for unknown device {name!r}")
        write_faults(directory, name, fault)
    write_atomic(directory / CONFIG_FILE, mode=0o600, fsync=False, data=json.dumps(
        {"username": username, "devices": [asdict(d) for d in devices], "ztp_user": ztp_user,
         "time_scale": time_scale,
         "hosts": [asdict(h) for h in hosts], "host_user": host_user}, indent=2))

    if hosts:
        controller_tools(directory, hosts[0].scheduler)
    with open_log(directory / LOG_FILE) as log:
        process = subprocess.Popen(
            [sys.executable, "-m", SERVER_MODULE, "--dir", str(directory)],
            stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True,
            cwd=str(directory), env=_child_env())
    write_atomic(directory / PID_FILE, f"{process.pid}\n", mode=0o600, fsync=False)
    try:
        _wait_ready(directory, process, timeout)
    except BaseException:
        lab_down(directory)
        raise
    return directory / "endpoints.yml"


def lab_down(directory: Path, timeout: float = 10) -> bool:
    """Stop the lab process of DIR (only if it really is ours); True if one was stopped."""
    directory = Path(directory).resolve()
    pid = _running_pid(directory)
    if pid is None:
        (directory / PID_FILE).unlink(missing_ok=True)
        return False
    os.kill(pid, signal.SIGTERM)
    if not _wait_exit(pid, timeout):
        os.kill(pid, signal.SIGKILL)
        _wait_exit(pid, 5)
    (directory / PID_FILE).unlink(missing_ok=True)
    (directory / READY_FILE).unlink(missing_ok=True)
    return True


def set_faults(directory: Path, device: str, faults: dict) -> None:
    """Change a running device's faults; it re-reads them before the next login or command."""
    write_faults(Path(directory).resolve(), device, faults)


def write_device_files(directory: Path, device: str, files: dict[str, str]) -> None:
    """Write {path: text} into a running switch's file system as an operator's automation would
    (e.g. flat_files.automation_files: a Cumulus switch that routes outside NVUE); the switch reads
    them at its next command. Each file is replaced whole, never seen half written."""
    root = Path(directory).resolve() / "devices" / device
    for path, text in files.items():
        local = root / os.path.normpath("/" + path).lstrip("/")
        local.parent.mkdir(parents=True, exist_ok=True)
        partial = local.with_name(local.name + ".partial")
        partial.write_text(text)
        partial.replace(local)


def holding(directory: Path, device: str) -> bool:
    """The device holds a command line right now (fault `hold`)."""
    return held_file(Path(directory).resolve(), device).exists()


def set_wiring(directory: Path, world: World) -> None:
    """Re-cable a running lab (unplug, swap, CRC errors); the switches see it at their next command."""
    write_world(Path(directory).resolve(), world)


def set_host_faults(directory: Path, host: str, *, rails_down: list[str] = (), pcp_trust: list[str] = ()) -> None:
    """A running lab host's faults, now (fault_file.py `hosts:`): its `rails_down` lose link at both
    ends (the NIC's port and, through the world, the leaf's), the others get it back; its `pcp_trust`
    NICs fall back to PCP trust at every read. Its other faults stay."""
    directory = Path(directory).resolve()
    config = json.loads((directory / CONFIG_FILE).read_text())
    spec = next((h for h in config.get("hosts") or [] if h["name"] == host), None)
    if spec is None:
        raise LabError(f"{host} is not a GPU server of this lab")
    path = fault_file(directory, host)
    try:
        current = json.loads(path.read_text() or "{}")
    except (FileNotFoundError, ValueError):
        current = {}
    current["host"] = {"rails_down": sorted(rails_down), "pcp_trust": sorted(pcp_trust)}
    write_faults(directory, host, current)
    apply_host_faults(directory, host, spec["netdevs"], current["host"])
    world = World.from_dict(json.loads((directory / WORLD_FILE).read_text() or "{}"))
    write_world(directory, with_rails_down(world, host, set(rails_down), set(spec["netdevs"])))


def add_flows(directory: Path, flows) -> None:
    """Put traffic through switch ports for a window (world.py Flow: device, port, tx/rx Gb/s, start,
    end in epoch seconds): the ports' counters move with it, as a simulated host's ib_write_bw would
    move them. The cables and the flows already there stay."""
    directory = Path(directory).resolve()
    current = World.from_dict(json.loads((directory / WORLD_FILE).read_text() or "{}"))
    write_world(directory, World(current.cables, current.host_macs, current.flows + tuple(flows)))


def raise_counters(directory: Path, device: str, port: str, *, priority: int, pfc_rx_pause: float = 0,
                   pfc_tx_pause: float = 0, ecn_marked: float = 0) -> None:
    """Make a port's PFC pause / ECN-marked counters of one priority grow at these rates (per second).

    The device's other faults stay; a rate of 0 stops that counter (it keeps its total).
    """
    directory = Path(directory).resolve()
    current = _device_faults(directory, device)
    per_port = current.setdefault("counters", {}).setdefault(port, {})
    for kind, rate in (("pfc_rx_pause", pfc_rx_pause), ("pfc_tx_pause", pfc_tx_pause), ("ecn_marked", ecn_marked)):
        per_port.setdefault(kind, {})[str(priority)] = rate
    write_faults(directory, device, current)


def _device_faults(directory: Path, device: str) -> dict:
    """The device's faults file as it is now ({} when absent or unreadable): a change keeps the rest."""
    try:
        return json.loads(fault_file(directory, device).read_text() or "{}")
    except (FileNotFoundError, ValueError):
        return {}


def pfc_storms(directory: Path, device: str, port: str, *, priority: int, per_second: float) -> None:
    """Make the PFC watchdog of a port's PRIORITY detect (and restore) storms at this rate: what a
    NIC stuck sending pause frames looks like to the switch. Only a port whose config enables the
    watchdog counts them (nvue_oper / sonic_oper). A rate of 0 stops them (the count stays)."""
    directory = Path(directory).resolve()
    current = _device_faults(directory, device)
    current.setdefault("counters", {}).setdefault(port, {}).setdefault("pfc_wd_storm", {})[str(priority)] = per_second
    write_faults(directory, device, current)


def _child_env() -> dict[str, str]:
    # The server must import this very `generator` package, installed or not.
    env = dict(os.environ)
    root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def _write_secret(path: Path, text: str) -> None:
    write_atomic(path, text + "\n", mode=0o600, fsync=False)


# What a lab leaves in its directory (this module, server.py, faults.py, world.py); temp files end
# in .tmp. A directory holding anything else is someone's, and lab up refuses it.
LAB_ENTRIES = {CONFIG_FILE, "password", PID_FILE, LOG_FILE, "endpoints.yml", "known_hosts", READY_FILE,
               WORLD_FILE, "faults", "hostkeys", "devices", SOCKET_FILE, HOSTS_DIR, LOGIN_KEY, CONTROLLER_BIN,
               SLURM_STATE.split("/")[0], K8S_STATE.split("/")[0]}


def _make_private_dir(directory: Path) -> None:
    """A missing lab directory is created 0700: it holds the password and the SSH host keys."""
    if directory.exists():
        if not directory.is_dir():
            raise LabError(f"--dir {directory} is a file, not a directory")
        return
    directory.parent.mkdir(parents=True, exist_ok=True)
    try:
        directory.mkdir(mode=0o700)
    except FileExistsError:
        raise LabError(f"--dir {directory} appeared while starting; start again") from None
    os.chmod(directory, 0o700)


def _admit(directory: Path) -> None:
    """An existing directory is used only when empty or a previous lab's own: its lab.json a regular
    file in the lab's shape, every name one a lab writes, and no link anywhere (a planted link would
    redirect a write or a read of the password)."""
    entries = sorted(os.listdir(directory))
    if not entries:
        return
    config = directory / CONFIG_FILE
    try:
        doc = json.loads(read_bounded(config, 1 << 20, follow_symlinks=False))
    except (OSError, ValueError):           # ReadRefused is an OSError: a link, no file, too large
        doc = None
    if not (isinstance(doc, dict) and isinstance(doc.get("username"), str) and isinstance(doc.get("devices"), list)):
        raise LabError(f"--dir {directory} is not empty and not a previous lab's directory (no {CONFIG_FILE} "
                       f"of a lab): give a new or empty directory")
    for name in entries:
        if name not in LAB_ENTRIES and not name.endswith(".tmp"):
            raise LabError(f"--dir {directory}: {name} is not a lab file; move it away or give another directory")
    for root, dirs, files in os.walk(directory):
        for name in dirs + files:
            if os.path.islink(os.path.join(root, name)) and not own_link(directory, os.path.join(root, name)):
                raise LabError(f"--dir {directory}: {os.path.join(root, name)} is a link; a lab directory "
                               "holds none: remove it or give another directory")


def _running_pid(directory: Path) -> int | None:
    """The PID in DIR/lab.pid if that process is alive and is this directory's lab server."""
    try:
        pid = int((directory / PID_FILE).read_text().strip())
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except (FileNotFoundError, ValueError, ProcessLookupError, PermissionError):
        return None
    args = [a.decode(errors="replace") for a in cmdline]
    if SERVER_MODULE in args and str(directory) in args:
        return pid
    return None


def _wait_ready(directory: Path, process: subprocess.Popen, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not (directory / READY_FILE).exists():
        if process.poll() is not None:
            tail = (directory / LOG_FILE).read_text(errors="replace").strip().splitlines()[-5:]
            raise LabError(f"lab server exited with status {process.returncode}: {' | '.join(tail)}")
        if time.monotonic() > deadline:
            raise LabError(f"lab did not start within {timeout:.0f}s; see {directory / LOG_FILE}")
        time.sleep(0.05)
    import yaml

    doc = yaml.safe_load((directory / "endpoints.yml").read_text())
    endpoints = {**doc["switches"], **((doc.get("hosts") or {}).get("servers") or {})}
    for name, endpoint in endpoints.items():
        while not _answers_ssh(endpoint["host"], endpoint["port"]):
            if time.monotonic() > deadline:
                raise LabError(f"lab device {name} does not answer SSH on port {endpoint['port']}")
            time.sleep(0.05)


def _answers_ssh(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=2) as sock:
            return sock.recv(8).startswith(b"SSH-")
    except OSError:
        return False


def _wait_exit(pid: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            waited, _ = os.waitpid(pid, os.WNOHANG)
            if waited == pid:
                return True
        except ChildProcessError:
            # Not our child (another process started the lab): poll /proc instead.
            if not Path(f"/proc/{pid}").exists():
                return True
            if _is_zombie(pid):
                return True
        time.sleep(0.05)
    return False


def _is_zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] == "Z"
    except (FileNotFoundError, IndexError):
        return True
