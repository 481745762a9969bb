#!/usr/bin/python3
"""fabricgen's NIC probe, run on a GPU server by playbooks/hosts.yml and playbooks/discover.yml
(ansible.builtin.script, so nothing is installed). Python 3.7+ standard library only; PyYAML is
used for the netplan check when the host has it (netplan itself depends on it).

  fabricgen_nics.py discover    print JSON: the GPUDirect path and every netdev that has an RDMA
                                device (netdev -> MAC, RDMA device -> PCI, port, link layer, state, rate)
  fabricgen_nics.py preflight   check the rails of $FG_PREFLIGHT (JSON) before anything is changed:
                                prints `ok: ...`, or ONE `error: <host>: ...` line and exits 1, or
                                4 when the only problems are rail ports (DOWN, slower than planned)
  fabricgen_nics.py roce        after the apply: every rail port ACTIVE at the planned rate with the
                                planned RoCE MTU ($FG_ROCE, JSON); same output contract

FABRICGEN_SYSROOT prefixes /sys and /proc/driver (tests point it at a fake tree). A lab's simulated
server sets FABRICGEN_LAB_SANDBOX: pre-flight then refuses a fabricgen_root outside it.

Where the values come from (Linux sysfs ABI, drivers/infiniband/core/sysfs.c):
  /sys/class/net/<netdev>/address              the netdev's MAC (IFLA_ADDRESS): what lldpd announces
                                               as the LLDP port ID by default (lldpcli(8))
  /sys/class/net/<netdev>/device               -> the PCI function (its name is the PCI address)
  /sys/class/net/<netdev>/device/infiniband/<rdma>   the RDMA device on that function
  /sys/class/net/<netdev>/dev_port             0-based port of a multi-port function (mlx4)
  /sys/class/infiniband/<rdma>/ports/<p>/{link_layer,state,phys_state,rate}
"""

from __future__ import annotations

import fnmatch
import glob
import json
import os
import re
import signal
import subprocess
import sys
import time

SYSROOT = os.environ.get("FABRICGEN_SYSROOT", "")
SYS = SYSROOT + "/sys"

# The RoCE MTUs an IB port can run (enum ib_mtu) and the headers the kernel takes off the
# netdev MTU before picking one: GRH 40 + UDP 8 + BTH 12 + XRC 4 + AtomicETH 28 + ICRC 4 = 96
# (iboe_get_mtu, include/rdma/ib_addr.h, torvalds/linux master; kernels before the UDP header
# was counted take 88). mlx5_ib reports min(port max MTU, iboe_get_mtu(netdev MTU)).
IB_MTUS = (4096, 2048, 1024, 512, 256)
IBOE_HEADERS = 96


def read(path: str, default: str = "", limit: int = -1) -> str:
    """A file's text, stripped; at most `limit` characters when given (sysfs: one page)."""
    try:
        with open(path, errors="replace") as fh:
            return fh.read(limit).strip()
    except OSError:
        return default


def iboe_mtu(netdev_mtu: int) -> int:
    """The RoCE active MTU the kernel derives from a netdev MTU (0: too small for RoCE)."""
    room = netdev_mtu - IBOE_HEADERS
    return next((m for m in IB_MTUS if room >= m), 0)


def rate_gbps(text: str) -> float | None:
    """"400 Gb/sec (4X NDR)" -> 400.0; "2.5 Gb/sec (1X SDR)" -> 2.5 (sysfs `rate`)."""
    m = re.match(r"\s*([0-9.]+)\s*Gb/sec", text)
    return float(m.group(1)) if m else None


def state_name(text: str) -> str:
    """"4: ACTIVE" -> "ACTIVE" (sysfs `state`, `phys_state`)."""
    return text.split(":", 1)[-1].strip() if text else ""


def number(value: float | None):
    if value is None:
        return None
    return int(value) if value == int(value) else value


def ib_ports(rdma: str) -> list:
    try:
        return sorted(int(p) for p in os.listdir(f"{SYS}/class/infiniband/{rdma}/ports") if p.isdigit())
    except OSError:
        return []


def port_info(rdma: str, port: int) -> dict:
    base = f"{SYS}/class/infiniband/{rdma}/ports/{port}"
    return {
        "link_layer": read(base + "/link_layer", limit=SYSFS_MAX),
        "state": state_name(read(base + "/state", limit=SYSFS_MAX)),
        "phys_state": state_name(read(base + "/phys_state", limit=SYSFS_MAX)),
        "rate_gbps": number(rate_gbps(read(base + "/rate", limit=SYSFS_MAX))),
    }


def pci_of(device_link: str) -> str:
    """The PCI address a sysfs `device` link points at ("" when there is none)."""
    if not os.path.exists(device_link):
        return ""
    name = os.path.basename(os.path.realpath(device_link))
    return name if re.fullmatch(r"[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]", name) else ""


def netdev_rdma(netdev: str) -> tuple:
    """(rdma device, ib port) of a netdev, or ("", 0). One RDMA device per PCI function on mlx5;
    mlx4 puts two ports on one function and tells them apart by dev_port."""
    try:
        devices = sorted(os.listdir(f"{SYS}/class/net/{netdev}/device/infiniband"))
    except OSError:
        return "", 0
    if not devices:
        return "", 0
    rdma = devices[0]
    if len(devices) > 1:
        # several RDMA devices on one function: the one whose GID table names this netdev
        for dev in devices:
            if glob.glob(f"{SYS}/class/infiniband/{dev}/ports/*/gid_attrs/ndevs/*") and any(
                    read(p) == netdev for p in glob.glob(f"{SYS}/class/infiniband/{dev}/ports/*/gid_attrs/ndevs/*")):
                rdma = dev
                break
    dev_port = read(f"{SYS}/class/net/{netdev}/dev_port", "0")
    port = int(dev_port) + 1 if dev_port.isdigit() else 1
    ports = ib_ports(rdma)
    if ports and port not in ports:
        port = ports[0]
    return rdma, port


def gpudirect() -> str:
    """nvidia-peermem when that module (or its predecessor nv_peer_mem) is loaded; dmabuf when the
    NVIDIA open kernel module runs on Linux >= 5.12 (GPUDirect RDMA over DMA-BUF, NVIDIA's
    GPUDirect RDMA guide); else none."""
    for module in ("nvidia_peermem", "nv_peer_mem"):
        if os.path.isdir(f"{SYS}/module/{module}"):
            return "nvidia-peermem"
    version = read(SYSROOT + "/proc/driver/nvidia/version")
    m = re.match(r"(\d+)\.(\d+)", os.uname().release)
    if "Open Kernel Module" in version and m and (int(m.group(1)), int(m.group(2))) >= (5, 12):
        return "dmabuf"
    return "none"


_MAC = re.compile(r"[0-9a-f]{2}(:[0-9a-f]{2}){5}")


def mac_of(netdev: str) -> str:
    """The netdev's current MAC, lower case ("" when unreadable or not a 6-byte Ethernet address).
    lldpd reads the same address (netlink IFLA_ADDRESS) for its default MAC port ID."""
    text = read(f"{SYS}/class/net/{netdev}/address", limit=SYSFS_MAX).lower()
    return text if _MAC.fullmatch(text) else ""


# --- GPU <-> NIC PCIe affinity ------------------------------------------------------------
#
# A GPU is a PCI function of vendor 0x10de (NVIDIA) whose class is 0x0302xx (3D controller: data
# centre GPUs) or 0x0300xx (VGA controller) (/sys/bus/pci/devices/<addr>/{vendor,class}, Linux
# Documentation/ABI/testing/sysfs-bus-pci; NVSwitches are bridges, 0x0680xx, and are left out).
# nvidia-smi numbers GPUs in PCI bus order (nvidia-smi(1): "--id ... the PCI bus ID"; CUDA with
# CUDA_DEVICE_ORDER=PCI_BUS_ID), so GPU i is the i-th GPU by PCI address. The device directory
# /sys/devices/pci<dom>:<bus>/<root port>/<switch up>/<switch down>/.../<function> is the PCIe
# path: two functions whose paths share a longer prefix meet at a deeper switch (nvidia-smi topo
# calls it PIX/PXB), a shorter one at the host bridge (PHB) or across NUMA nodes (NODE/SYS).

GPU_VENDOR = "0x10de"
GPU_CLASSES = ("0x0302", "0x0300")
SYSFS_MAX = 4096            # a sysfs attribute is at most one page (Documentation/filesystems/sysfs.rst)
MAX_DEVICES = 4096          # PCI functions read; a host has a few hundred
MAX_NICS = 256              # RDMA netdevs reported
# nvidia-smi topo -m legend, nearest first (nvidia-smi(1) "topo"): PIX at most one PCIe bridge,
# PXB several bridges without the host bridge, PHB through the host bridge, NODE between host
# bridges of one NUMA node, SYS across the SMP interconnect
TOPO_RANK = {"PIX": 1, "PXB": 2, "PHB": 3, "NODE": 4, "SYS": 5}
_PCI_ADDR = re.compile(r"[0-9a-f]{4,8}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]")


def pci_path(pci: str) -> list:
    """The PCI functions from the root port down to `pci` ([] when unknown)."""
    real = os.path.realpath(f"{SYS}/bus/pci/devices/{pci}")
    parts = real.split("/")
    return [p for p in parts if _PCI_ADDR.fullmatch(p)][:32]


def numa_node(pci: str):
    text = read(f"{SYS}/bus/pci/devices/{pci}/numa_node", limit=SYSFS_MAX)
    return int(text) if re.fullmatch(r"-?\d{1,4}", text) and int(text) >= 0 else None


def gpus() -> list:
    """NVIDIA GPUs by PCI address (nvidia-smi's index order): [{pci, numa_node, path}]."""
    try:
        names = sorted(os.listdir(f"{SYS}/bus/pci/devices"))[:MAX_DEVICES]
    except OSError:
        return []
    found = []
    for pci in names:
        if not _PCI_ADDR.fullmatch(pci):
            continue
        base = f"{SYS}/bus/pci/devices/{pci}"
        if read(base + "/vendor", limit=SYSFS_MAX).lower() != GPU_VENDOR:
            continue
        if not read(base + "/class", limit=SYSFS_MAX).lower().startswith(GPU_CLASSES):
            continue
        found.append({"pci": pci, "numa_node": numa_node(pci), "path": pci_path(pci)})
    return found


def common_depth(a: list, b: list) -> int:
    """How many PCI functions two paths share from the root port down (0: only the host bridge, or none)."""
    n = 0
    while n < len(a) and n < len(b) and a[n] == b[n]:   # no zip(strict=): the probe runs on Python 3.7
        n += 1
    return n


def nearest_by_path(gpu_list: list, nics: list) -> list:
    """Per GPU (in order), the netdev of its nearest NIC: the deepest shared PCIe switch first, then the
    same host bridge (pci<dom>:<bus>), then the same NUMA node; each NIC serves one GPU, taken in GPU
    order; ties go to the lower PCI address. "" when no NIC is left."""
    taken, out = set(), []
    for gpu in gpu_list:
        best = None
        for nic in nics:
            if nic["netdev"] in taken or not nic.get("path"):
                continue
            same_bridge = nic.get("bridge") is not None and nic.get("bridge") == gpu.get("bridge")
            same_numa = gpu["numa_node"] is not None and nic.get("numa_node") == gpu["numa_node"]
            key = (-common_depth(gpu["path"], nic["path"]), not same_bridge, not same_numa, nic["pci"], nic["netdev"])
            if best is None or key < best[0]:
                best = (key, nic["netdev"])
        out.append(best[1] if best else "")
        if best:
            taken.add(best[1])
    return out


def parse_topo(text: str, nics: list) -> dict:
    """`nvidia-smi topo -m`: {gpu index: {rdma device: rank}} (TOPO_RANK). Columns are GPU<i>, NIC<j> (named
    by the "NIC Legend" lines "NIC<j>: mlx5_0", drivers since 2023) or, from older drivers, the RDMA device
    names themselves; rows start with GPU<i>. Unknown cells (NV#, X) are not NIC affinities."""
    lines = text.splitlines()[:1024]
    legend = {}
    for line in lines:
        m = re.fullmatch(r"\s*(NIC\d{1,4}):\s*(\S{1,64})\s*", line)
        if m:
            legend[m.group(1)] = m.group(2)
    rdma_names = {n["rdma"] for n in nics}
    header, out = None, {}
    for line in lines:
        cells = [c.strip() for c in re.split(r"\t|\s{2,}", line.strip())]
        if header is None:
            if cells and cells[0].startswith("GPU0"):
                header = cells
            continue
        m = re.fullmatch(r"GPU(\d{1,4})", cells[0]) if cells else None
        if not m:
            continue
        row = {}
        for col, cell in enumerate(cells[1:len(header)]):
            device = legend.get(header[col], header[col])
            if device in rdma_names and cell in TOPO_RANK:
                row[device] = TOPO_RANK[cell]
        out[int(m.group(1))] = row
    return out


def nearest_by_topo(matrix: dict, count: int, nics: list) -> list:
    """Per GPU index, the netdev of the NIC nvidia-smi puts nearest (each NIC serves one GPU, in GPU order;
    ties go to the lower PCI address); [] when the matrix does not cover every GPU."""
    if sorted(matrix) != list(range(count)):
        return []
    by_rdma = {n["rdma"]: n for n in nics}
    taken, out = set(), []
    for i in range(count):
        ranked = sorted((rank, by_rdma[rdma]["pci"], by_rdma[rdma]["netdev"]) for rdma, rank in matrix[i].items()
                        if by_rdma[rdma]["netdev"] not in taken)
        out.append(ranked[0][2] if ranked else "")
        if ranked:
            taken.add(ranked[0][2])
    return out


def nvidia_topo() -> str:
    """`nvidia-smi topo -m`'s text when nvidia-smi runs (bounded in time and size), else ""."""
    if SYSROOT and not os.environ.get("FABRICGEN_NVIDIA_SMI"):
        return ""          # a fake /sys: the host's own nvidia-smi would describe other GPUs
    cmd = os.environ.get("FABRICGEN_NVIDIA_SMI") or "nvidia-smi"
    rc, out = run([cmd, "topo", "-m"], 20)
    return out[:262144] if rc == 0 else ""


def gpu_affinity(nics: list) -> tuple:
    """([{pci, numa_node, nic}] per GPU in nvidia-smi's order, source): nvidia-smi topo -m when it answers
    for every GPU, else the sysfs PCIe paths."""
    gpu_list = gpus()
    if not gpu_list:
        return [], "none"
    for gpu in gpu_list:
        gpu["bridge"] = _bridge(gpu["pci"])
    for nic in nics:
        nic["path"] = pci_path(nic["pci"]) if nic["pci"] else []
        nic["numa_node"] = numa_node(nic["pci"]) if nic["pci"] else None
        nic["bridge"] = _bridge(nic["pci"]) if nic["pci"] else None
    nearest, source = [], "sysfs"
    text = nvidia_topo()
    if text:
        nearest = nearest_by_topo(parse_topo(text, nics), len(gpu_list), nics)
        source = "nvidia-smi" if nearest else source
    if not nearest:
        nearest = nearest_by_path(gpu_list, nics)
    for nic in nics:
        for key in ("path", "numa_node", "bridge"):
            nic.pop(key, None)
    return [{"pci": g["pci"], "numa_node": g["numa_node"], "nic": nearest[i]}
            for i, g in enumerate(gpu_list)], source


def _bridge(pci: str) -> str:
    """The host bridge (pci<domain>:<bus>) a function hangs off ("" when unknown)."""
    real = os.path.realpath(f"{SYS}/bus/pci/devices/{pci}")
    m = re.search(r"/(pci[0-9a-f]{4,8}:[0-9a-f]{2})/", real)
    return m.group(1) if m else ""


def discover() -> dict:
    nics = []
    try:
        names = sorted(os.listdir(f"{SYS}/class/net"))[:MAX_DEVICES]
    except OSError:
        names = []
    for netdev in names:
        if len(nics) >= MAX_NICS:
            break
        rdma, port = netdev_rdma(netdev)
        if not rdma:
            continue
        info = port_info(rdma, port)
        nics.append({"netdev": netdev, "mac": mac_of(netdev), "rdma": rdma,
                     "pci": pci_of(f"{SYS}/class/net/{netdev}/device"),
                     "port": port, "link_layer": info["link_layer"], "state": info["state"],
                     "rate_gbps": info["rate_gbps"]})
    gpu_list, source = gpu_affinity(nics)
    return {"gpudirect": gpudirect(), "nics": nics, "gpus": gpu_list, "affinity": source}


# --- netplan: does another file configure a rail NIC? ----------------------------------

NETPLAN_DIRS = ("/lib/netplan", "/etc/netplan", "/run/netplan")   # netplan reads all three


def _load_yaml(text: str):
    try:
        import yaml
    except ImportError:
        return None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError:
        return None


def netplan_claims(path: str, netdev: str, mac: str, driver: str) -> list:
    """Ids in netplan file `path` that configure `netdev`: an `ethernets` entry named after it
    without `match`, or whose `match` (name / macaddress / driver, all must hold; netplan.io
    doc "Properties for device type ethernets") selects it; or any device id equal to its name."""
    text = read(path)
    if netdev not in text and (not mac or mac.lower() not in text.lower()) and "match" not in text:
        return []
    data = _load_yaml(text)
    if data is None:
        # no PyYAML, or a file netplan itself would reject: a whole-word mention is enough to stop
        return [f"mentions {netdev}"] if re.search(rf"(?<![\w.-]){re.escape(netdev)}(?![\w.-])", text) else []
    network = data.get("network") if isinstance(data, dict) else None
    if not isinstance(network, dict):
        return []
    claims = []
    for section, devices in network.items():
        if not isinstance(devices, dict):
            continue
        for dev_id, conf in devices.items():
            conf = conf if isinstance(conf, dict) else {}
            match = conf.get("match") if section == "ethernets" else None
            if isinstance(match, dict) and match:
                ok = True
                if "name" in match:
                    ok = ok and fnmatch.fnmatchcase(netdev, str(match["name"]))
                if "macaddress" in match:
                    ok = ok and bool(mac) and str(match["macaddress"]).lower() == mac.lower()
                if "driver" in match:
                    drivers = match["driver"] if isinstance(match["driver"], list) else [match["driver"]]
                    ok = ok and bool(driver) and any(fnmatch.fnmatchcase(driver, str(d)) for d in drivers)
                if ok:
                    claims.append(f"{section}.{dev_id}")
            elif str(dev_id) == netdev:
                claims.append(f"{section}.{dev_id}")
    return claims


def other_netplan(root: str, ours: str, netdev: str) -> list:
    """(file, ids) of every netplan file besides `ours` that configures `netdev`."""
    mac = read(f"{SYS}/class/net/{netdev}/address")
    drv = f"{SYS}/class/net/{netdev}/device/driver"
    driver = os.path.basename(os.path.realpath(drv)) if os.path.exists(drv) else ""
    found = []
    for directory in NETPLAN_DIRS:
        for path in sorted(glob.glob(root + directory + "/*.yaml")):
            if os.path.realpath(path) == os.path.realpath(root + ours):
                continue
            claims = netplan_claims(path, netdev, mac, driver)
            if claims:
                found.append((path[len(root):], claims))
    return found


# --- pre-flight --------------------------------------------------------------------------

def run(cmd: list, timeout: int) -> tuple:
    """(exit code, stdout+stderr) of a command; (127, why) when it cannot start."""
    try:
        done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout)
    except (OSError, subprocess.SubprocessError) as exc:
        return 127, str(exc)
    return done.returncode, done.stdout


def ip_link(netdev: str) -> dict:
    """The kernel's own view of a netdev (`ip -j link show`), {} when it cannot be read."""
    rc, out = run(["ip", "-j", "link", "show", "dev", netdev], 30)
    try:
        links = json.loads(out or "[]") if rc == 0 else []
    except ValueError:
        links = []
    return links[0] if links and isinstance(links[0], dict) else {}


def admin_up(netdev: str) -> bool:
    """IFF_UP on the netdev: ip -j link, else sysfs flags."""
    link = ip_link(netdev)
    if link:
        return "UP" in link.get("flags", [])
    flags = read(f"{SYS}/class/net/{netdev}/flags")
    return bool(flags) and int(flags, 16) & 0x1 == 1


def mlxconfig_port(pci: str, ib_port: int) -> tuple:
    """(PCI address to give mlxconfig, N of LINK_TYPE_P<N>). The adapter's settings are read and
    written through its function 0; on a ConnectX with one function per port the port number is
    the function number + 1 (mlx4: one function, its IB port numbers the ports)."""
    base, fn = pci[:-1], int(pci[-1])
    return base + "0", fn + ib_port


RESET = "`mlxfwreset -d {pci} reset -y` or a reboot"


def next_link_type(pci: str, n: int) -> tuple:
    """(rc, LINK_TYPE_P<n> the firmware loads next, e.g. "ETH(2)" / "IB(1)", or ""), read-only
    (`mlxconfig -d <pci> q` prints the next-boot value; NVIDIA MFT mlxconfig docs)."""
    rc, out = run(["mlxconfig", "-d", pci, "q", f"LINK_TYPE_P{n}"], 120)
    m = re.search(rf"LINK_TYPE_P{n}\s+(\S+)", out)
    return rc, (m.group(1) if m else "")


def link_type(pci: str, n: int, allowed: bool) -> tuple:
    """(pending, text) for a port in InfiniBand mode, read-only: pre-flight runs on every host at once.
    pending: the apply play sets LINK_TYPE_P<n>=2 in the host's batch, drained (link_type_set)."""
    reset = RESET.format(pci=pci)
    setting = f"LINK_TYPE_P{n}=2"
    if not allowed:
        return False, (f"the port runs InfiniBand, the fabric needs Ethernet: run the playbook with "
                       f"-e fabricgen_set_link_type=true (mlxconfig -y -d {pci} set {setting}), then {reset}")
    rc, value = next_link_type(pci, n)
    if rc == 127:
        return False, "the port runs InfiniBand and mlxconfig cannot run (install NVIDIA MFT), then run again"
    if value.upper().startswith("ETH"):
        return False, (f"the port runs InfiniBand; {setting} (Ethernet) is already set for the next firmware "
                       f"load: {reset}, then run the playbook again")
    return True, f"the port runs InfiniBand: its batch sets {setting} (mlxconfig), which then needs {reset}"


def link_type_set(args: dict) -> tuple:
    """(lines, failed): in the host's batch, drained: LINK_TYPE_P<n>=2 on each pending port whose
    next-boot value is not Ethernet yet (read again: idempotent across runs and ports sharing a
    device). mlxconfig only changes what the firmware loads next (NVIDIA MFT mlxconfig / VPI docs)."""
    lines, failed = [], False
    for port in args.get("ports") or []:
        label, pci, n = str(port["label"]), str(port["pci"]), int(port["n"])
        setting = f"LINK_TYPE_P{n}=2"
        rc, value = next_link_type(pci, n)
        if rc == 127:
            lines.append(f"error: {label}: mlxconfig cannot run (install NVIDIA MFT), then run again")
            failed = True
        elif value.upper().startswith("ETH"):
            lines.append(f"ok: {label}: {setting} already set for the next firmware load")
        elif args.get("check"):
            lines.append(f"changed: {label}: would run mlxconfig -y -d {pci} set {setting}")
        else:
            rc, out = run(["mlxconfig", "-y", "-d", pci, "set", setting], 300)
            if rc != 0:
                last = (out.strip().splitlines() or ["no output"])[-1]
                lines.append(f"error: {label}: `mlxconfig -y -d {pci} set {setting}` failed: {last}")
                failed = True
            else:
                lines.append(f"changed: {label}: mlxconfig -y -d {pci} set {setting}")
    return lines, failed


def preflight(args: dict) -> tuple:
    """(changed lines, problems, port problems) for the rails in `args`. A port problem (an up rail
    DOWN or slower than planned) is kept apart: a cable, optic or leaf port, which stops a host the
    run would change but not one already as rendered (playbooks/hosts.yml)."""
    problems, changed, bad_ports = [], [], []
    speed = args.get("speed_gbps")
    root = (args.get("root") or "").rstrip("/")
    outside = outside_sandbox(root)
    if outside:
        return changed, [outside], bad_ports
    seen = ", ".join(n["netdev"] + "=" + n["rdma"] for n in discover()["nics"]) or "none"
    for rail in args.get("rails", []):
        r, netdev, want = rail.get("rail"), rail["netdev"], rail["rdma"]
        label = f"rail {r} {netdev}"
        exists = os.path.isdir(f"{SYS}/class/net/{netdev}")
        rdma, port = netdev_rdma(netdev) if exists else ("", 0)
        if not exists:
            # an InfiniBand-mode port has an IPoIB netdev instead: recognise it by its RDMA device
            ports = ib_ports(want)
            if ports and port_info(want, ports[0])["link_layer"] == "InfiniBand":
                rdma, port = want, ports[0]
            else:
                problems.append(f"{label} does not exist (RDMA netdevs here: {seen}): set hosts.rails "
                                f"or run `fabricgen hosts discover` and re-render")
                continue
        if not rdma:
            problems.append(f"{label} has no RDMA device (mlx5_ib not loaded, or not a ConnectX port): "
                            f"load the RDMA driver or fix hosts.rails")
            continue
        if rdma != want:
            problems.append(f"{label} is RDMA device {rdma}, the render says {want}: run `fabricgen hosts "
                            f"discover` and re-render")
            continue
        info = port_info(rdma, port)
        if info["link_layer"] == "InfiniBand":
            device = f"{SYS}/class/net/{netdev}/device" if exists else f"{SYS}/class/infiniband/{rdma}/device"
            pci = pci_of(device)
            if not pci:
                problems.append(f"{label} ({rdma}) port runs InfiniBand and its PCI address is unknown: "
                                f"set LINK_TYPE to ETH with mlxconfig and reset the firmware")
                continue
            target, n = mlxconfig_port(pci, port)
            pending, text = link_type(target, n, bool(args.get("set_link_type")))
            if pending:
                changed.append("linktype: " + json.dumps({"label": f"{label} ({rdma}, {pci})", "pci": target,
                                                          "n": n}, sort_keys=True))
            else:
                problems.append(f"{label} ({rdma}, {pci}): {text}")
            continue
        if info["link_layer"] != "Ethernet":
            problems.append(f"{label} ({rdma}) link layer is {info['link_layer'] or 'unknown'}, not Ethernet: "
                            f"check the NIC's mode with mlxconfig")
            continue
        # a rail the playbook has yet to bring up is down by definition: its port is checked after the apply
        if admin_up(netdev):
            problem = port_problem(label, rdma, info, speed)
            if problem:
                bad_ports.append(problem)
                continue
        for path, claims in other_netplan(root, args.get("netplan_ours", "/etc/netplan/60-fabricgen.yaml"),
                                          netdev):
            problems.append(f"{label} is also configured by {path} ({', '.join(claims)}): remove it there "
                            f"(netplan merges the files, and another address moves the RoCE GID)")
    if args.get("require_gpudirect", True) and gpudirect() == "none":
        problems.append("no GPUDirect RDMA path (nvidia_peermem not loaded, and no NVIDIA open kernel module on "
                        "Linux >= 5.12 for DMA-BUF): `modprobe nvidia-peermem`, or set "
                        "deploy.hosts.require_gpudirect: false")
    return changed, problems, bad_ports


def outside_sandbox(root: str) -> str:
    """A problem when this host is a lab's simulated server ($FABRICGEN_LAB_SANDBOX, set by its SSH
    server: generator/lab/gpu_host.py) and the files would go outside its sandbox: its commands run
    on the lab machine, as root on CI, and a fabricgen_root of / would install into that machine's /etc."""
    sandbox = os.environ.get("FABRICGEN_LAB_SANDBOX", "")
    if not sandbox:
        return ""
    real, box = os.path.realpath(root or "/"), os.path.realpath(sandbox)
    if real == box or real.startswith(box + os.sep):
        return ""
    return (f"a lab host, whose files live under {sandbox}, but fabricgen_root is {root or '/'}: nothing "
            f"written; pass the lab endpoints file's hosts.extravars (fabricgen deploy --endpoints does), "
            f"or -e fabricgen_root={sandbox}")


def port_problem(label: str, rdma: str, info: dict, speed) -> str:
    if info["state"] != "ACTIVE":
        return (f"{label} ({rdma}) port is {info['state'] or 'unknown'} ({info['phys_state'] or 'no phys_state'}): "
                f"check the cable and the leaf port")
    if speed and (info["rate_gbps"] or 0) < float(speed):
        return (f"{label} ({rdma}) runs at {info['rate_gbps']} Gb/s, the plan needs {speed}: check the "
                f"transceiver, the cable and the leaf port speed")
    return ""


def roce(args: dict) -> list:
    """Problems after the apply: port ACTIVE (waiting up to `wait` s for a rail just brought up to
    train), at the planned rate, with a RoCE active MTU of at least `roce_mtu`."""
    problems = []
    deadline = time.monotonic() + float(args.get("wait", 30))
    speed, want_mtu = args.get("speed_gbps"), args.get("roce_mtu")
    for rail in args.get("rails", []):
        label, netdev = f"rail {rail.get('rail')} {rail['netdev']}", rail["netdev"]
        rdma, port = netdev_rdma(netdev)
        if not rdma:
            problems.append(f"{label} has no RDMA device any more: check the NIC driver")
            continue
        info = port_info(rdma, port)
        while info["state"] != "ACTIVE" and time.monotonic() < deadline:
            time.sleep(1)
            info = port_info(rdma, port)
        problem = port_problem(label, rdma, info, speed)
        if problem:
            problems.append(problem)
            continue
        if want_mtu:
            mtu, source = active_mtu(rdma, port, netdev)
            if mtu is not None and mtu < int(want_mtu):
                problems.append(f"{label} ({rdma}) RoCE active MTU is {mtu} ({source}), the plan needs {want_mtu}: "
                                f"give the rail the rendered MTU (roce.mtu.host; the playbook's netplan tag sets it)")
    return problems


def active_mtu(rdma: str, port: int, netdev: str) -> tuple:
    """(RoCE active MTU, where it was read): ibv_devinfo (rdma-core) when installed, else derived from
    the netdev MTU as the kernel does."""
    rc, out = run(["ibv_devinfo", "-d", rdma, "-i", str(port)], 60)
    m = re.search(r"active_mtu:\s*(\d+)", out) if rc == 0 else None
    if m:
        return int(m.group(1)), "ibv_devinfo"
    mtu = ip_link(netdev).get("mtu")
    if mtu is None:
        text = read(f"{SYS}/class/net/{netdev}/mtu")
        mtu = int(text) if text.isdigit() else None
    if mtu is None:
        return None, "netdev MTU unreadable"
    return iboe_mtu(int(mtu)), f"netdev MTU {mtu}"


def _args(var: str) -> dict:
    try:
        data = json.loads(os.environ.get(var) or "{}")
    except ValueError:
        data = None
    if not isinstance(data, dict):
        print(f"error: ${var} is not a JSON object (the playbook passes it)")
        sys.exit(2)
    return data


DISCOVER_SECONDS = 60


def _timed_out(signum, frame):
    raise TimeoutError(f"discovery took longer than {DISCOVER_SECONDS} s")


def main(argv: list) -> int:
    mode = argv[1] if len(argv) > 1 else ""
    if mode == "discover":
        # bounded in time: a wedged device can stall a sysfs read; the playbook's task timeout is the backstop
        signal.signal(signal.SIGALRM, _timed_out)
        signal.alarm(DISCOVER_SECONDS)
        print(json.dumps(discover(), sort_keys=True))
        signal.alarm(0)
        return 0
    if mode == "linktype":
        lines, failed = link_type_set(_args("FG_LINKTYPE"))
        print("\n".join(lines))
        return 1 if failed else 0
    if mode in ("preflight", "roce"):
        args = _args("FG_PREFLIGHT" if mode == "preflight" else "FG_ROCE")
        host = args.get("host") or os.uname().nodename
        if mode == "preflight":
            changed, problems, ports = preflight(args)
        else:
            changed, problems, ports = [], roce(args), []
        for line in changed:
            print(line)
        if problems or ports:
            # one line per host, whatever the count: the operator reads one line per host
            print(f"error: {host}: " + "; ".join(problems + ports))
            return 1 if problems else 4
        print(f"ok: {host}: {len(args.get('rails', []))} rail(s) {'ready' if mode == 'preflight' else 'up'}")
        return 0
    print(f"usage: {os.path.basename(argv[0])} discover|preflight|roce|linktype", file=sys.stderr)
    return 2


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv))
    except Exception as exc:  # noqa: BLE001 - a probe that breaks must not read as a NIC problem (exit 1)
        print(f"probe failed: {type(exc).__name__}: {exc}", file=sys.stderr)
        sys.exit(3)
