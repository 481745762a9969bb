"""Network-namespace GPU hosts with a real OpenSSH server each, for playbook tests.

Per plan host: a namespace with the management interface (a veth whose other end
stays in the test's namespace, /32 addresses and host routes only) and one veth per
rail NIC, named as the intent says, whose peer sits in a shared "fabric" namespace
holding the leaf side of every /31. sshd runs inside each namespace with its own
config, host key and pid file in a temp dir, `UsePAM no` and key authentication
for a dedicated user.

The user is an extra uid-0 account: configuring a namespace needs CAP_NET_ADMIN in
the initial user namespace, and the alternatives (sudo, PAM) would mean writing
/etc/sudoers.d or /etc/pam.d. It is created with a locked-out password ('*', key
login only) and removed at teardown.

Everything made here is removed at teardown, also when a test fails: processes in
the namespaces (by PID, from `ip netns pids`), namespaces (taking their veths), the
user and the privilege separation directory if this module created it.
"""

from __future__ import annotations

import fcntl
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from fake_nic import ROCE_V1, ROCE_V2, write_fake_gids, write_fake_nic_tools, write_fake_sysfs  # noqa: F401  (re-exported)

from generator.plan.model import FabricPlan

SSHD = "/usr/sbin/sshd"
PRIVSEP_DIR = Path("/run/sshd")
# sshd's privilege separation directory is one for the machine: each lab registers here (one
# file per lab, holding its PID) under an flock, and the last one out removes /run/sshd if a lab
# created it ("created" marker), never if the system's sshd or someone else had it first.
PRIVSEP_USERS = Path("/run/fabricgen-tests-privsep")


def netns_missing_reason() -> str | None:
    """Why namespace hosts cannot be built here, or None."""
    if os.geteuid() != 0:
        return "network namespaces and sshd need root"
    for tool in ("ip", SSHD, "ssh-keygen", "ssh", "useradd", "userdel"):
        if shutil.which(tool) is None:
            return f"{tool} not found (apt-get install -y iproute2 openssh-server openssh-client)"
    probe = f"fgprobe{os.getpid()}"
    r = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True)
    if r.returncode != 0:
        return f"cannot create a network namespace: {r.stderr.strip()}"
    subprocess.run(["ip", "netns", "del", probe], capture_output=True)
    return None


def _run(*cmd: str, check: bool = True, input: str | None = None) -> subprocess.CompletedProcess:
    r = subprocess.run(list(cmd), capture_output=True, text=True, input=input, timeout=60)
    if check and r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({r.returncode}): {r.stderr.strip() or r.stdout.strip()}")
    return r


@dataclass
class NetnsHost:
    name: str               # inventory name
    netns: str
    mgmt_ip: str
    root: Path              # fabricgen_root for this host
    sshd: subprocess.Popen | None = None

    def sh(self, command: str, check: bool = True) -> subprocess.CompletedProcess:
        """Run a shell command inside the host namespace."""
        return _run("ip", "netns", "exec", self.netns, "sh", "-c", command, check=check)

    def stop_sshd(self) -> list[int]:
        """The host drops off the management network as a crashed or hung server does: its sshd and
        every session it forked (an open ControlMaster connection dies with them) are killed, by the
        PIDs `ip netns pids` lists for this namespace; new connections are refused. Returns them."""
        pids = [int(p) for p in _run("ip", "netns", "pids", self.netns, check=False).stdout.split()]
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if self.sshd is not None:
            self.sshd.wait(timeout=10)
        return pids

    def sysctl(self, key: str) -> str:
        return self.sh(f"cat /proc/sys/{key.replace('.', '/')}").stdout.split("\n")[0].replace("\t", " ").strip()


@dataclass
class NetnsLab:
    tag: str
    directory: Path
    user: str
    key: Path
    known_hosts: Path
    fabric_ns: str
    hosts: dict[str, NetnsHost] = field(default_factory=dict)
    namespaces: list[str] = field(default_factory=list)
    user_created: bool = False
    privsep_registered: bool = False

    def extravars(self) -> dict:
        return {"ansible_user": self.user, "ansible_python_interpreter": "/usr/bin/python3"}


def _wait_port(ip: str, port: int, proc: subprocess.Popen, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"sshd exited with {proc.returncode}: {proc.stderr.read() if proc.stderr else ''}")
        with socket.socket() as s:
            s.settimeout(0.3)
            if s.connect_ex((ip, port)) == 0:
                return
        time.sleep(0.05)
    raise RuntimeError(f"sshd on {ip}:{port} did not answer within {timeout}s")


def _sshd_config(d: Path, lab: NetnsLab, host: NetnsHost) -> Path:
    cfg = d / "sshd_config"
    cfg.write_text("\n".join([
        f"ListenAddress {host.mgmt_ip}",
        "Port 22",
        f"HostKey {d / 'host_ed25519'}",
        f"PidFile {d / 'sshd.pid'}",
        f"AuthorizedKeysFile {lab.directory / 'authorized_keys'}",
        "UsePAM no",
        "PasswordAuthentication no",
        "KbdInteractiveAuthentication no",
        "PubkeyAuthentication yes",
        "PermitRootLogin prohibit-password",    # the test user is uid 0
        f"AllowUsers {lab.user}",
        "StrictModes no",                       # keys live in pytest's temp dir
        "Subsystem sftp internal-sftp",
        "LogLevel ERROR",
        "",
    ]))
    return cfg


def _start(plan: FabricPlan, lab: NetnsLab, mgmt_gw: str) -> None:
    _run("ip", "netns", "add", lab.fabric_ns)
    lab.namespaces.append(lab.fabric_ns)
    _run("ip", "-n", lab.fabric_ns, "link", "set", "dev", "lo", "up")
    for i, ph in enumerate(plan.hosts):
        ns = f"fg{lab.tag}h{i}"
        _run("ip", "netns", "add", ns)
        lab.namespaces.append(ns)
        host = NetnsHost(name=ph.name, netns=ns, mgmt_ip=ph.mgmt_ip, root=lab.directory / "root" / ph.name)
        host.root.mkdir(parents=True)
        lab.hosts[ph.name] = host
        _run("ip", "-n", ns, "link", "set", "dev", "lo", "up")
        # management: veth from our namespace, /32 on each side plus host routes
        outer = f"fg{lab.tag}m{i}"
        _run("ip", "link", "add", "name", outer, "type", "veth", "peer", "name", plan.mgmt_interface, "netns", ns)
        _run("ip", "addr", "add", f"{mgmt_gw}/32", "dev", outer)
        _run("ip", "link", "set", "dev", outer, "up")
        _run("ip", "route", "add", f"{ph.mgmt_ip}/32", "dev", outer, "src", mgmt_gw)
        _run("ip", "-n", ns, "addr", "add", f"{ph.mgmt_ip}/32", "dev", plan.mgmt_interface)
        _run("ip", "-n", ns, "link", "set", "dev", plan.mgmt_interface, "up")
        _run("ip", "-n", ns, "route", "add", f"{mgmt_gw}/32", "dev", plan.mgmt_interface)
        # rails: NIC side down and unaddressed (the playbook configures it), leaf side ready
        for nic in ph.nics:
            leaf_side = f"h{i}r{nic.rail}"
            _run("ip", "-n", ns, "link", "add", "name", nic.netdev, "type", "veth", "peer", "name", leaf_side,
                 "netns", lab.fabric_ns)
            _run("ip", "-n", lab.fabric_ns, "addr", "add", f"{nic.gateway}/31", "dev", leaf_side)
            _run("ip", "-n", lab.fabric_ns, "link", "set", "dev", leaf_side, "mtu", "9216", "up")
        # sshd
        d = lab.directory / "sshd" / ph.name
        d.mkdir(parents=True)
        _run("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(d / "host_ed25519"))
        cfg = _sshd_config(d, lab, host)
        proc = subprocess.Popen(["ip", "netns", "exec", ns, SSHD, "-D", "-e", "-f", str(cfg)],
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                text=True)
        host.sshd = proc
        pub = (d / "host_ed25519.pub").read_text().split()
        with lab.known_hosts.open("a") as f:
            f.write(f"{ph.mgmt_ip} {pub[0]} {pub[1]}\n")
    for host in lab.hosts.values():
        assert host.sshd is not None
        _wait_port(host.mgmt_ip, 22, host.sshd)


def _stop(lab: NetnsLab) -> list[str]:
    problems: list[str] = []
    for host in lab.hosts.values():
        if host.sshd is not None and host.sshd.poll() is None:
            host.sshd.terminate()
            try:
                host.sshd.wait(timeout=5)
            except subprocess.TimeoutExpired:
                host.sshd.kill()
                host.sshd.wait(timeout=5)
        if host.sshd is not None and host.sshd.stderr:
            host.sshd.stderr.close()
    for ns in lab.namespaces:
        # session processes forked by sshd outlive the listener; they are ours and in our namespace
        pids = _run("ip", "netns", "pids", ns, check=False).stdout.split()
        for pid in pids:
            try:
                os.kill(int(pid), signal.SIGKILL)
            except (ProcessLookupError, ValueError):
                pass
        r = _run("ip", "netns", "del", ns, check=False)
        if r.returncode != 0:
            problems.append(f"ip netns del {ns}: {r.stderr.strip()}")
    if lab.user_created:
        r = _run("userdel", "-f", lab.user, check=False)
        if r.returncode not in (0, 6):
            problems.append(f"userdel {lab.user}: {r.stderr.strip()}")
    if lab.privsep_registered:
        _release_privsep(lab.tag)
    return problems


def _privsep_lock():
    PRIVSEP_USERS.mkdir(mode=0o700, exist_ok=True)
    fd = os.open(PRIVSEP_USERS / "lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    return fd


def _use_privsep(tag: str) -> None:
    fd = _privsep_lock()
    try:
        if not PRIVSEP_DIR.exists():
            PRIVSEP_DIR.mkdir(mode=0o755)
            (PRIVSEP_USERS / "created").write_text("")
        (PRIVSEP_USERS / f"lab-{tag}").write_text(f"{os.getpid()}\n")
    finally:
        os.close(fd)                         # closing the descriptor releases the flock


def _release_privsep(tag: str) -> None:
    fd = _privsep_lock()
    try:
        (PRIVSEP_USERS / f"lab-{tag}").unlink(missing_ok=True)
        users = [p for p in PRIVSEP_USERS.glob("lab-*") if _alive(p)]
        if not users and (PRIVSEP_USERS / "created").exists():
            shutil.rmtree(PRIVSEP_DIR, ignore_errors=True)
            (PRIVSEP_USERS / "created").unlink()
    finally:
        os.close(fd)


def _alive(registration: Path) -> bool:
    """A lab of a test process that died without teardown holds nothing."""
    try:
        pid = int(registration.read_text())
    except (OSError, ValueError):
        return False
    if Path(f"/proc/{pid}").exists():
        return True
    registration.unlink(missing_ok=True)
    return False


def free_mgmt_octet() -> int:
    """A third octet X for a test's management pool 198.18.X.0/24 that no lab on this machine uses.

    The labs' /32 host routes live in the root namespace. A random X collided (stop 41's CI: "RTNETLINK
    answers: File exists"): `ip netns del` only unmounts, the kernel frees the namespace, its veth and
    so the route later, from a work queue (network_namespaces(7)), so the next lab on the same X can
    still find the previous one's route. An X is handed out once per process (a lease file holding
    the PID, reclaimed when that process is gone) and only while no route into 198.18.X.0/24 exists.
    """
    fd = _privsep_lock()
    try:
        # any route naming 198.18.X (destination, local address or source) marks X as taken
        table = _run("ip", "-4", "-o", "route", "show", "table", "all", check=False).stdout
        routed = {int(x) for x in re.findall(r"\b198\.18\.(\d{1,3})\.", table)}
        start = secrets.randbelow(249)
        for step in range(249):
            octet = 1 + (start + step) % 249
            lease = PRIVSEP_USERS / f"mgmt-{octet}"
            if octet in routed or (lease.exists() and _alive(lease)):
                continue
            lease.write_text(f"{os.getpid()}\n")
            return octet
    finally:
        os.close(fd)
    raise RuntimeError("no free 198.18.X.0/24 management pool left for a namespace lab")


@pytest.fixture
def netns_hosts(tmp_path_factory) -> Iterator:
    """Factory fixture: netns_hosts(plan) -> NetnsLab with one namespace host per plan host.

    The plan's management pool must be a test-only range (the intent written by the
    test): the first address after the hosts' is put on our side of every mgmt veth.
    """
    reason = netns_missing_reason()
    if reason:
        pytest.skip(reason)
    labs: list[NetnsLab] = []

    def build(plan: FabricPlan, mgmt_gw: str) -> NetnsLab:
        tag = secrets.token_hex(2)
        directory = tmp_path_factory.mktemp(f"netns{tag}")
        os.chmod(directory, 0o755)
        lab = NetnsLab(tag=tag, directory=directory, user=f"fgt{tag}", key=directory / "id_ed25519",
                       known_hosts=directory / "known_hosts", fabric_ns=f"fg{tag}fab")
        labs.append(lab)
        lab.known_hosts.write_text("")
        _run("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(lab.key))
        (directory / "authorized_keys").write_text((directory / "id_ed25519.pub").read_text())
        home = directory / "home"
        home.mkdir()
        _run("useradd", "-o", "-u", "0", "-g", "0", "-M", "-d", str(home), "-s", "/bin/sh", "-p", "*", lab.user)
        lab.user_created = True
        _use_privsep(lab.tag)
        lab.privsep_registered = True
        _start(plan, lab, mgmt_gw)
        return lab

    try:
        yield build
    finally:
        problems = [p for lab in labs for p in _stop(lab)]
        if problems:
            raise RuntimeError("netns teardown: " + "; ".join(problems))
