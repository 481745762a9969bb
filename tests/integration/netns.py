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

import ipaddress
import os
import secrets
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from generator.plan.model import FabricPlan

SSHD = "/usr/sbin/sshd"
PRIVSEP_DIR = Path("/run/sshd")


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
    privsep_created: bool = False

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
    if lab.privsep_created:
        shutil.rmtree(PRIVSEP_DIR, ignore_errors=True)
    return problems


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
        if not PRIVSEP_DIR.exists():
            PRIVSEP_DIR.mkdir(mode=0o755)
            lab.privsep_created = True
        _start(plan, lab, mgmt_gw)
        return lab

    try:
        yield build
    finally:
        problems = [p for lab in labs for p in _stop(lab)]
        if problems:
            raise RuntimeError("netns teardown: " + "; ".join(problems))


# --- fake NIC tools --------------------------------------------------------------
# There are no ConnectX NICs here: these record their arguments (one line per call in
# $FAKE_NIC_LOG) and keep per-interface state in $FAKE_NIC_STATE so that the QoS
# script's read-compare-set logic and its --check mode run against realistic output.
# This is the one stand-in the test plan allows.

_FAKE_COMMON = r'''#!/usr/bin/python3
import json, os, sys
from pathlib import Path

def log():
    with open(os.environ["FAKE_NIC_LOG"], "a") as f:
        f.write(" ".join([Path(sys.argv[0]).name] + sys.argv[1:]) + "\n")

def state(ifc, default):
    base = Path(os.environ["FAKE_NIC_STATE"])
    base.mkdir(parents=True, exist_ok=True)
    path = base / (Path(sys.argv[0]).name + "-" + ifc + ".json")
    data = json.loads(path.read_text()) if path.exists() else default
    return path, data

def save(path, data):
    path.write_text(json.dumps(data))

log()
'''

FAKE_MLNX_QOS = _FAKE_COMMON + r'''
args = sys.argv[1:]
ifc = args[args.index("-i") + 1]
if not Path(os.environ.get("FABRICGEN_SYSROOT", "") + "/sys/class/net/" + ifc).exists():
    print(f"Netlink error: no such device {ifc}", file=sys.stderr)
    sys.exit(1)
path, st = state(ifc, {"trust": "pcp", "pfc": [0] * 8, "dscp": [d >> 3 for d in range(64)]})
changed = False
if "--trust" in args:
    st["trust"] = args[args.index("--trust") + 1]; changed = True
if "--pfc" in args:
    st["pfc"] = [int(x) for x in args[args.index("--pfc") + 1].split(",")]; changed = True
if "--dscp2prio" in args:
    op, d, p = args[args.index("--dscp2prio") + 1].split(",")
    st["dscp"][int(d)] = int(p); changed = True
if changed:
    save(path, st)
print("DCBX mode: OS controlled")
print("Priority trust state: " + st["trust"])
print("dscp2prio mapping:")
for prio in range(8):
    ds = [d for d in range(63, -1, -1) if st["dscp"][d] == prio]
    print(f"\tprio:{prio} dscp:" + "".join(f"{d:02d}," for d in ds))
print("default priority:")
print("Receive buffer size (bytes): 130944,130944,0,0,0,0,0,0,")
print("Cable len: 7")
print("PFC configuration:")
print("\tpriority    0   1   2   3   4   5   6   7")
print("\tenabled     " + "   ".join(str(v) for v in st["pfc"]))
print("\tbuffer      " + "   ".join(str(v) for v in st["pfc"]))
for tc in range(8):
    print(f"tc: {tc} ratelimit: unlimited, tsa: vendor")
    print(f"\t priority:  {tc}")
'''

FAKE_DCB = _FAKE_COMMON + r'''
args = [a for a in sys.argv[1:] if a != "-N"]
obj, cmd = args[0], args[1]
ifc = args[args.index("dev") + 1]
if not Path(os.environ.get("FABRICGEN_SYSROOT", "") + "/sys/class/net/" + ifc).exists():
    print(f"Cannot find device \"{ifc}\"", file=sys.stderr)
    sys.exit(1)
path, st = state(ifc, {"app": [], "pfc": ["off"] * 8})
if obj == "app" and cmd == "show":
    print("dscp-prio " + " ".join(f"{d}:{p}" for d, p in sorted(st["app"])))
elif obj == "app" and cmd in ("add", "replace"):
    for item in args[args.index("dscp-prio") + 1:]:
        d, p = (int(x) for x in item.split(":"))
        if cmd == "replace":
            st["app"] = [e for e in st["app"] if e[0] != d]
        st["app"].append([d, p])
    save(path, st)
elif obj == "pfc" and cmd == "show":
    print("prio-pfc " + " ".join(f"{i}:{v}" for i, v in enumerate(st["pfc"])))
elif obj == "pfc" and cmd == "set":
    for item in args[args.index("prio-pfc") + 1:]:
        k, v = item.split(":")
        for i in (range(8) if k == "all" else [int(k)]):
            st["pfc"][i] = v
    save(path, st)
else:
    print("unsupported by the fake: " + " ".join(args), file=sys.stderr)
    sys.exit(2)
'''

FAKE_CMA_ROCE_TOS = _FAKE_COMMON + r'''
args = sys.argv[1:]
dev, tos = args[args.index("-d") + 1], args[args.index("-t") + 1]
port = Path(os.environ.get("FABRICGEN_SYSROOT", "") + f"/sys/kernel/config/rdma_cm/{dev}/ports/1")
port.mkdir(parents=True, exist_ok=True)
(port / "default_roce_tos").write_text(tos + "\n")
'''


def write_fake_nic_tools(bin_dir: Path) -> Path:
    bin_dir.mkdir(parents=True, exist_ok=True)
    for name, text in (("mlnx_qos", FAKE_MLNX_QOS), ("dcb", FAKE_DCB), ("cma_roce_tos", FAKE_CMA_ROCE_TOS)):
        path = bin_dir / name
        path.write_text(text)
        path.chmod(0o755)
    return bin_dir


GID_TABLE_LEN = 16      # a real ConnectX port has 256 entries; the unused tail looks the same
ZERO_GID = ":".join(["0000"] * 8)
ROCE_V1, ROCE_V2 = "IB/RoCE v1", "RoCE v2"


def write_fake_gids(root: Path, rdma: str, netdev: str, nic: int, addresses: Sequence[str],
                    types: tuple[str, ...] = (ROCE_V1, ROCE_V2)) -> None:
    """The RoCE GID table of port 1 of `rdma` as a ConnectX port shows it.

    The kernel fills 0 and 1 with the default GIDs (fe80:: from the MAC, RoCE v1 and
    v2), then one v1/v2 pair per address of the netdev in the order they were added:
    2 and 3 for the first one, IPv4 as ::ffff:a.b.c.d. gids/N is printed with %pI6,
    types/N reads "IB/RoCE v1" or "RoCE v2", ndevs/N the netdev; an unused entry reads
    as zeros and its type and ndev cannot be read (EINVAL), modelled by leaving them
    out (drivers/infiniband/core/sysfs.c, roce_gid_mgmt.c; show_gids in mlnx-tools
    reads the same files). `types` ("IB/RoCE v1",) is a port that runs RoCE v1 only."""
    port = root / "sys/class/infiniband" / rdma / "ports/1"
    for sub in ("gids", "gid_attrs/types", "gid_attrs/ndevs"):
        d = port / sub
        if d.is_dir():
            shutil.rmtree(d)
        d.mkdir(parents=True)
    gids = [f"fe80::e42:a1ff:fe00:{nic:x}"] + list(addresses)     # MAC 0c:42:a1:00:00:<nic> as EUI-64
    entries = []
    for address in gids:
        ip = ipaddress.ip_address(address)
        mapped = ipaddress.IPv6Address(b"\0" * 10 + b"\xff\xff" + ip.packed) if ip.version == 4 else ip
        entries += [(t, mapped.exploded) for t in types]
    for n in range(GID_TABLE_LEN):
        if n < len(entries):
            (port / "gid_attrs/types" / str(n)).write_text(entries[n][0] + "\n")
            (port / "gid_attrs/ndevs" / str(n)).write_text(netdev + "\n")
            (port / "gids" / str(n)).write_text(entries[n][1] + "\n")
        else:
            (port / "gids" / str(n)).write_text(ZERO_GID + "\n")


def write_fake_sysfs(root: Path, netdevs: list[str], *, ofed: bool = True, ecn_prios: tuple[int, ...] = (3,),
                     rdma: list[str] | None = None) -> Path:
    """A /sys tree for roce-qos.sh: OFED ecn/ files, or an upstream debugfs cc_params,
    and the GID table of each RDMA device (`rdma`, default the ConnectX names mlx5_<i>)
    with one IPv4 address per netdev, 192.0.2.<i+1> (write_fake_gids changes it)."""
    for i, ifc in enumerate(netdevs):
        write_fake_gids(root, rdma[i] if rdma else f"mlx5_{i}", ifc, i, [f"192.0.2.{i + 1}"])
        net = root / "sys/class/net" / ifc
        net.mkdir(parents=True, exist_ok=True)
        if ofed:
            for point in ("roce_np", "roce_rp"):
                enable = net / "ecn" / point / "enable"
                enable.mkdir(parents=True, exist_ok=True)
                for prio in range(8):
                    (enable / str(prio)).write_text("0\n")
            (net / "ecn/roce_np/cnp_dscp").write_text("0\n")
            (net / "ecn/roce_np/cnp_802p_prio").write_text("0\n")
        else:
            pci = f"0000:{8 + i:02x}:00.0"
            dev = root / "sys/devices/pci0000:00" / pci
            dev.mkdir(parents=True, exist_ok=True)
            link = net / "device"
            if not link.is_symlink():
                link.symlink_to(os.path.relpath(dev, net))
            cc = root / "sys/kernel/debug/mlx5" / pci / "cc_params"
            cc.mkdir(parents=True, exist_ok=True)
            (cc / "np_cnp_dscp").write_text("0\n")
    return root
