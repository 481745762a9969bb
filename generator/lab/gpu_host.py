"""A simulated GPU server of the lab: a sandbox directory and the tools a real server has.

A real server runs Linux with a real Python (Ansible needs one on the target), so an exec request
to a lab host runs a real command: `/bin/sh -c COMMAND` as the lab's own user (no root: nothing
here needs it), in the host's home, with PATH giving first the host's simulated tools
(DIR/hosts/<name>/bin) and then links to the lab machine's copies of what every Ubuntu server
has (SYSTEM_TOOLS: sh, python3, cat, ...). A command named by absolute path still reaches the
lab machine's file system: the sandbox is a convenience, not a jail. What belongs to the server lives below its own root,
DIR/hosts/<name>/root: the /sys tree of its rail NICs (nic_tools.write_fake_sysfs, the kernel's
device model), /etc and /run. The playbooks reach it through `fabricgen_root` (playbooks/hosts.yml
prefixes every file it installs with it) and the tools through $FABRICGEN_SYSROOT, as
roce-qos.sh already reads /sys.

The simulated tools keep their state in DIR/hosts/<name>/state (what the NIC, firmware or kernel
keeps), and the scheduler's in DIR/slurm/nodes.json: one slurmctld for every node, so a drain
made on one host is what `scontrol show node` prints everywhere.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import shutil
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import asyncssh

from generator.lab import nic_tools
from generator.lab.faults import fault_file
from generator.lab.host_ip import IP_TOOL
from generator.lab.host_kubectl import KUBECTL_TOOL
from generator.lab.host_lldp import LLDPCLI_TOOL
from generator.lab.host_netplan import netplan_tool
from generator.lab.host_rdma import RDMA_TOOL
from generator.lab.host_sysctl import SYSCTL_TOOL, write_proc_sys

HOSTS_DIR = "hosts"
# Each host's fabricgen_root, for the endpoints file's hosts.extravars (templated by Ansible per host)
ROOT_TEMPLATE = "{hosts}/{{{{ inventory_hostname }}}}/root"
# The private key the lab's hosts accept for the login user, as a deploy key in authorized_keys
# (DEVICE_STATE.md: GPU servers are reached with an SSH key, never a password).
LOGIN_KEY = "host_login_key"
SLURM_STATE = "slurm/nodes.json"
# What every Ubuntu server image has besides the tools below (dash, coreutils, grep, sed, gawk or
# mawk, findutils, python3: Ansible runs its modules with it), linked from the lab machine into
# DIR/hosts/<name>/system-bin. Only these: the machine running the lab may have kubectl, ip or
# lldpcli of its own, which a server of this plan would not have or would answer from its state.
SYSTEM_TOOLS = (
    "sh", "bash", "python3", "env", "cat", "ls", "cp", "mv", "rm", "ln", "chmod", "chown", "stat", "touch",
    "mktemp", "readlink", "realpath", "dirname", "basename", "echo", "printf", "test", "true", "false",
    "sleep", "date", "id", "whoami", "uname", "hostname", "head", "tail", "sort", "uniq", "cut", "tr", "wc",
    "tee", "xargs", "find", "grep", "sed", "awk", "sha256sum", "md5sum", "base64", "od", "timeout", "flock",
    "getent", "tar", "gzip", "dd",
)
SYSTEM_SOURCE = "/usr/bin:/bin"

# Tool name -> the script that stands in for it on every lab host; each script's header
# (nic_tools.py) cites the real tool's source for its output format. A new tool is one entry
# (e.g. a burn-in's ib_write_bw). mkdir/rmdir are nic_tools' configfs stand-ins: they act as the
# real ones except below $FABRICGEN_SYSROOT/sys/kernel/config, where the kernel would decide.
# sudo(8) as Ansible's become runs it (`sudo -H -S -n -u root /bin/sh -c '...'`, the deploy user with
# NOPASSWD, as DEVICE_STATE.md's servers have it): options up to the command, then the command itself.
# A lab host holds no privilege, its root is the sandbox: the command becomes root in a user namespace
# that maps root to the lab's own user (util-linux unshare(1) --map-root-user, user_namespaces(7)), so
# `id -u` says 0 and the playbook's `owner: root` copies succeed (the files are the lab user's already),
# while outside nothing gains a capability. A lab already running as root runs the command as it is.
SUDO = r"""#!/usr/bin/python3
import os, sys
UNSHARE = @UNSHARE@
args = sys.argv[1:]
with_value = {"-u", "-g", "-p", "-C", "-D", "-h", "-r", "-t", "-U"}
while args and args[0].startswith("-") and args[0] != "--":
    flag = args.pop(0)
    if flag in with_value and args:
        args.pop(0)
if args[:1] == ["--"]:
    args.pop(0)
if not args:
    print("usage: sudo -h | -K | -k | -V", file=sys.stderr)
    sys.exit(1)
if os.geteuid() != 0 and UNSHARE:
    os.execv(UNSHARE, [UNSHARE, "--user", "--map-root-user", "--", *args])
os.execvp(args[0], args)
"""

# mlnx-tools show_gids (NVIDIA "Understanding show_gids script"): every non-zero GID of every RDMA
# port from sysfs (gids/N, gid_attrs/types/N, gid_attrs/ndevs/N) in `ls` order, the IPv4 of a
# ::ffff:a.b.c.d GID, the version as grep -o "[Vv].*" leaves "IB/RoCE v1" / "RoCE v2", then the count.
SHOW_GIDS = r"""#!/usr/bin/python3
import os, sys
from pathlib import Path
ib = Path(os.environ.get("FABRICGEN_SYSROOT", "") + "/sys/class/infiniband")
print("DEV\tPORT\tINDEX\tGID\t\t\t\t\tIPv4  \t\tVER\tDEV")
print("---\t----\t-----\t---\t\t\t\t\t------------  \t---\t---")
found = 0
devs = sys.argv[1:2] or (sorted(p.name for p in ib.iterdir()) if ib.is_dir() else [])
for dev in devs:
    ports = ib / dev / "ports"
    for port in sorted(p.name for p in ports.iterdir()) if ports.is_dir() else []:
        base = ports / port
        for index in sorted(p.name for p in (base / "gids").iterdir()):
            gid = (base / "gids" / index).read_text().strip()
            if gid in ("0000:0000:0000:0000:0000:0000:0000:0000", "fe80:0000:0000:0000:0000:0000:0000:0000"):
                continue
            try:
                kind = (base / "gid_attrs/types" / index).read_text().strip()
                ndev = (base / "gid_attrs/ndevs" / index).read_text().strip()
            except OSError:
                kind, ndev = "", ""
            ver = kind[kind.lower().index("v"):] if "v" in kind.lower() else ""
            if gid.startswith("0000:"):
                g = gid.replace(":", "")
                ipv4 = ".".join(str(int(g[i:i + 2], 16)) for i in range(24, 32, 2))
                print(f"{dev}\t{port}\t{index}\t{gid}\t{ipv4}  \t{ver}\t{ndev}")
            else:
                print(f"{dev}\t{port}\t{index}\t{gid}\t\t\t{ver}\t{ndev}")
            found += 1
print(f"n_gids_found={found}")
"""

HOST_TOOLS: dict[str, str] = {**{name: text for name, text in nic_tools.FAKE_TOOLS.items() if name != "scontrol"},
                              "ip": IP_TOOL, "lldpcli": LLDPCLI_TOOL, "rdma": RDMA_TOOL, "show_gids": SHOW_GIDS,
                              "sudo": SUDO.replace("@UNSHARE@", repr(shutil.which("unshare", path=SYSTEM_SOURCE))),
                              "sysctl": SYSCTL_TOOL}
# The scheduler's client, by the intent's hosts.scheduler: a server of a Slurm cluster has
# scontrol (talking to slurmctld), one of a Kubernetes cluster kubectl; none has both.
SCHEDULER_TOOLS: dict[str, dict[str, str]] = {"slurm": {"scontrol": nic_tools.FAKE_SCONTROL},
                                               "kubernetes": {"kubectl": KUBECTL_TOOL}}
K8S_STATE = "kubernetes/nodes.json"


def host_dir(directory: Path, name: str) -> Path:
    return directory / HOSTS_DIR / name


def build(directory: Path, spec: Mapping) -> Path:
    """The host's sandbox as the server boots it (kept across `lab down`/`lab up`, as a disk is).

    spec: {name, netdevs, rdma, addresses {netdev: [ip]}, scheduler}.
    """
    base = host_dir(directory, spec["name"])
    root = base / "root"
    if not (root / "sys").is_dir():
        nic_tools.write_fake_sysfs(root, list(spec["netdevs"]), rdma=list(spec["rdma"]),
                                   addresses={k: list(v) for k, v in (spec.get("addresses") or {}).items()})
        for sub in ("etc", "run", "var/log"):
            (root / sub).mkdir(parents=True, exist_ok=True)
    (root / "tmp").mkdir(mode=0o700, exist_ok=True)
    if not (root / "proc" / "sys").is_dir():
        write_proc_sys(root, list(spec["netdevs"]))
    apply_host_faults(directory, spec["name"], list(spec["netdevs"]), _host_faults(directory, spec["name"]))
    for netdev, mac in (spec.get("macs") or {}).items():
        set_mac(root, netdev, mac)
    tools = dict(HOST_TOOLS)
    tools.update(SCHEDULER_TOOLS.get(spec.get("scheduler") or "", {}))
    netplan = netplan_tool()
    if netplan is not None:
        tools["netplan"] = netplan
    bin_dir = base / "bin"
    bin_dir.mkdir(parents=True, exist_ok=True)
    for stale in os.listdir(bin_dir):
        if stale not in tools:
            (bin_dir / stale).unlink()
    for name, text in tools.items():
        path = bin_dir / name
        path.write_text(text)
        path.chmod(0o755)
    system = base / "system-bin"
    system.mkdir(parents=True, exist_ok=True)
    for name in SYSTEM_TOOLS:
        found = shutil.which(name, path=SYSTEM_SOURCE)
        link = system / name
        if found and not link.is_symlink():
            link.symlink_to(found)
    for sub in ("home", "state"):
        (base / sub).mkdir(parents=True, exist_ok=True)
    (directory / SLURM_STATE).parent.mkdir(parents=True, exist_ok=True)
    return base


def set_mac(root: Path, netdev: str, mac: str) -> None:
    """The NIC's MAC as the world has it (world.host_mac: what the leaves hear over LLDP), and the
    default GIDs built from it: fe80:: + its EUI-64 (RFC 4291 appendix A: ff:fe in the middle, the
    universal/local bit flipped), entries 0 and 1 (roce_gid_mgmt.c)."""
    net = root / "sys" / "class" / "net" / netdev
    (net / "address").write_text(mac + "\n")
    octets = [int(o, 16) for o in mac.split(":")]
    eui = [octets[0] ^ 0x02, *octets[1:3], 0xFF, 0xFE, *octets[3:]]
    gid = "fe80:0000:0000:0000:" + ":".join(f"{eui[i]:02x}{eui[i + 1]:02x}" for i in range(0, 8, 2))
    ib = net / "device" / "infiniband"
    for rdma in sorted(ib.iterdir()) if ib.is_dir() else []:
        for index in ("0", "1"):
            path = rdma / "ports/1/gids" / index
            if path.exists() and path.read_text().startswith("fe80:"):
                path.write_text(gid + "\n")


def _host_faults(directory: Path, name: str) -> dict:
    import json

    path = fault_file(directory, name)
    return (json.loads(path.read_text() or "{}").get("host") or {}) if path.is_file() else {}


def own_link(directory: Path, path: str) -> bool:
    """A link a host's sandbox is built with (kept by `lab up` in a previous lab's directory): inside
    a host's root/ pointing within that root (the /sys device model), or in system-bin/ pointing at a
    system tool. Anything else is planted, and `lab up` refuses the directory."""
    rel = Path(path).relative_to(directory)
    if len(rel.parts) < 4 or rel.parts[0] != HOSTS_DIR or rel.parts[2] not in ("root", "system-bin"):
        return False
    top = directory / HOSTS_DIR / rel.parts[1] / rel.parts[2]
    if any(os.path.islink(p) for p in (directory / HOSTS_DIR, top.parent, top)):
        return False
    target = os.path.normpath(os.path.join(os.path.dirname(path), os.readlink(path)))
    if rel.parts[2] == "system-bin":
        return os.path.dirname(target) in SYSTEM_SOURCE.split(":") and Path(target).name in SYSTEM_TOOLS
    return target == str(top) or target.startswith(str(top) + os.sep)


CONTROLLER_BIN = "bin"


def controller_tools(directory: Path, scheduler: str) -> Path | None:
    """DIR/bin: the scheduler's client as the Ansible controller (a Slurm login node) has it, talking
    to the same simulated slurmctld as the hosts (DIR/slurm/nodes.json): deploy's drain hooks run it
    on the controller. Put DIR/bin first on PATH for a lab deploy. None: no scheduler client."""
    tools = SCHEDULER_TOOLS.get(scheduler) or {}
    if not tools:
        return None
    bin_dir = directory / CONTROLLER_BIN
    slurm = (directory / SLURM_STATE).parent
    slurm.mkdir(parents=True, exist_ok=True)
    bin_dir.mkdir(exist_ok=True)
    libexec = slurm / "libexec"
    libexec.mkdir(exist_ok=True)
    for name, text in tools.items():
        (libexec / name).write_text(text)
        wrapper = bin_dir / name
        wrapper.write_text(
            "#!/bin/sh\n"
            f"FAKE_SLURM_STATE={shlex.quote(str(directory / SLURM_STATE))} FAKE_NIC_STATE={shlex.quote(str(slurm))} "
            f"FAKE_NIC_LOG={shlex.quote(str(slurm / 'controller.log'))} "
            f"FAKE_K8S_STATE={shlex.quote(str(directory / K8S_STATE))} "
            f"exec /usr/bin/python3 {shlex.quote(str(libexec / name))} \"$@\"\n")
        wrapper.chmod(0o755)
    return bin_dir


def environment(directory: Path, name: str) -> dict[str, str]:
    """The environment a login to the host gets: its tools first on PATH, its own /sys and state."""
    base = host_dir(directory, name)
    return {
        "PATH": f"{base / 'bin'}:{base / 'system-bin'}",
        "HOME": str(base / "home"),
        "LANG": "C.UTF-8",
        "FABRICGEN_SYSROOT": str(base / "root"),
        # the server's /tmp (fabricgen_netplan.py stages netplan's output there), not the lab machine's
        "TMPDIR": str(base / "root" / "tmp"),
        # the host's whole file system: the hosts playbook's pre-flight refuses a fabricgen_root
        # outside it (playbooks/files/fabricgen_nics.py), so a run without the lab's extra vars
        # writes nothing on the lab machine
        "FABRICGEN_LAB_SANDBOX": str(base / "root"),
        "FAKE_NIC_STATE": str(base / "state"),
        "FAKE_NIC_LOG": str(base / "state" / "tools.log"),
        "FAKE_SLURM_STATE": str(directory / SLURM_STATE),
        "FAKE_NIC_FAULTS": str(fault_file(directory, name)),
        "FAKE_K8S_STATE": str(directory / K8S_STATE),
    }


def apply_host_faults(directory: Path, name: str, netdevs: Sequence[str], faults: Mapping | None) -> None:
    """The host's rail ports as its faults (`host` key of its faults JSON) say: a rail of
    `rails_down` has its RDMA port DOWN / Disabled (mlx5 reports a port without link so, and the
    netdev has no carrier: host_ip.py reads it there), every other rail ACTIVE / LinkUp. The leaf's
    end goes down through the world's cable (world.with_rails_down), which the caller writes."""
    down = set((faults or {}).get("rails_down") or [])
    net = host_dir(directory, name) / "root" / "sys" / "class" / "net"
    for netdev in netdevs:
        ib = net / netdev / "device" / "infiniband"
        for rdma in sorted(ib.iterdir()) if ib.is_dir() else []:
            state, phys = nic_tools.PORT_STATES["DOWN" if netdev in down else "ACTIVE"]
            (rdma / "ports/1/state").write_text(state + "\n")
            (rdma / "ports/1/phys_state").write_text(phys + "\n")


def login_key(directory: Path) -> asyncssh.SSHKey:
    """DIR/host_login_key (0600), created on the first start with hosts; its public half is what
    every lab host's authorized_keys holds."""
    path = directory / LOGIN_KEY
    if path.exists():
        return asyncssh.read_private_key(str(path))
    key = asyncssh.generate_private_key("ssh-ed25519")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(key.export_private_key())
    return key


class HostSSHServer(asyncssh.SSHServer):
    """sshd of a lab host: public-key login of the lab user only (PasswordAuthentication no, as a
    server hardened for automation is)."""

    def __init__(self, user: str, authorized: asyncssh.SSHKey):
        self.user = user
        self.authorized = authorized.export_public_key("openssh").split()[:2]

    def begin_auth(self, username: str) -> bool:
        return True

    def public_key_auth_supported(self) -> bool:
        return True

    def validate_public_key(self, username: str, key: asyncssh.SSHKey) -> bool:
        return username == self.user and key.export_public_key("openssh").split()[:2] == self.authorized


def exec_handler(directory: Path, name: str, before: Callable[[], None] | None = None) -> Callable:
    """asyncssh process_factory: run the exec request's command (a login shell without one).
    before: run first, on the lab's loop (the host's LLDP view of the world, host_lldp.write_view)."""
    env = environment(directory, name)
    home = env["HOME"]

    async def handle(process) -> None:
        if before is not None:
            before()
        command = process.command
        argv = ["/bin/sh", "-c", command] if command else ["/bin/sh"]
        child = await asyncio.create_subprocess_exec(
            *argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, env=env, cwd=home, start_new_session=True)
        pumps = [asyncio.create_task(_copy(child.stdout, process.stdout)),
                 asyncio.create_task(_copy(child.stderr, process.stderr))]
        feeding = asyncio.create_task(_feed(process.stdin, child.stdin))
        # the exit status goes after every byte of output (a client reads until the status)
        await asyncio.gather(*pumps)
        status = await child.wait()
        feeding.cancel()
        process.exit(status if status >= 0 else 128 - status)

    return handle


async def _copy(source: asyncio.StreamReader, target) -> None:
    while chunk := await source.read(65536):
        target.write(chunk)
        await target.drain()


async def _feed(source, target: asyncio.StreamWriter) -> None:
    try:
        while chunk := await source.read(65536):
            target.write(chunk)
            await target.drain()
    except (BrokenPipeError, ConnectionResetError):
        return                  # the command ended without reading all its input, as over real SSH
    finally:
        if not target.is_closing():
            target.close()
