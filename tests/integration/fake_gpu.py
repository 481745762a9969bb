"""A fake /sys of a DGX H100's PCIe tree: eight GPUs, each behind a PCIe switch it shares with one
ConnectX-7 compute NIC, and two dual-port storage NICs on root ports of their own.

The layout follows the kernel's: /sys/devices/pci<dom>:<bus>/<root port>/<switch upstream>/
<switch downstream>/<function>, with /sys/bus/pci/devices/<addr> a symlink to the function and
vendor/class/numa_node attributes as Documentation/ABI/testing/sysfs-bus-pci prints them
("0x10de", "0x030200", "0"). The compute NICs are mlx5_0,3,4,5,6,9,10,11 (DGX H100 user guide;
../shared/reference/DEVICE_STATE.md); their bus numbers follow a DGX H100 (GPU0 at 1b:00.0 beside
its NIC at 18:00.0) but are illustrative. The RDMA side (netdev -> RDMA device -> ports/1) is
fake_nic.write_fake_sysfs's; this module moves each function under its switch.
"""

from __future__ import annotations

import os
from pathlib import Path

from fake_nic import write_fake_sysfs

# (host bridge bus, NUMA node) per GPU: GPU at bus+6, its compute NIC at bus+3 (00.0 of each)
DGX_H100_SWITCHES = ((0x15, 0), (0x3d, 0), (0x4c, 0), (0x5b, 0), (0x97, 1), (0xbd, 1), (0xcb, 1), (0xd9, 1))
DGX_H100_COMPUTE = ("mlx5_0", "mlx5_3", "mlx5_4", "mlx5_5", "mlx5_6", "mlx5_9", "mlx5_10", "mlx5_11")
# storage / in-band NICs: dual-port ConnectX-7 on a root port, one per CPU socket
DGX_H100_STORAGE = ((0x28, 0, ("mlx5_1", "mlx5_2")), (0xa8, 1, ("mlx5_7", "mlx5_8")))


def _netdev(pci: str) -> str:
    """udev's predictable name of a ConnectX port: enp<bus>s<slot>f<fn>np0 (systemd.net-naming-scheme(7);
    udev leaves f0 out on a single-function device, kept here for every NIC for simplicity)."""
    bus, rest = pci.split(":")[1:]
    slot, fn = rest.split(".")
    return f"enp{int(bus, 16)}s{int(slot, 16)}f{fn}np0"


def _hops(sys_dir: Path, path: list[str], numa: int) -> Path:
    """/sys/devices/<host bridge>/<hop>/...: every hop a PCIe switch or root port (a PCI-to-PCI bridge)
    with its attributes and its /sys/bus/pci/devices link; returns the last hop's directory."""
    where = sys_dir / "devices" / path[0]
    for hop in path[1:]:
        where = where / hop
        if not where.is_dir():
            where.mkdir(parents=True)
            (where / "vendor").write_text("0x10b5\n")      # PCIe switch / root port
            (where / "class").write_text("0x060400\n")     # PCI-to-PCI bridge
            (where / "numa_node").write_text(f"{numa}\n")
            _link(sys_dir / "bus/pci/devices" / hop, where)
    return where


def _link(link: Path, target: Path) -> None:
    link.parent.mkdir(parents=True, exist_ok=True)
    if link.is_symlink():
        link.unlink()
    link.symlink_to(os.path.relpath(target, link.parent))


def _function(sys_dir: Path, path: list[str], *, vendor: str, klass: str, numa: int) -> Path:
    where = _hops(sys_dir, path[:-1], numa) / path[-1]
    where.mkdir(parents=True, exist_ok=True)
    (where / "vendor").write_text(vendor + "\n")
    (where / "class").write_text(klass + "\n")
    (where / "numa_node").write_text(f"{numa}\n")
    _link(sys_dir / "bus/pci/devices" / path[-1], where)
    return where


def write_fake_dgx_h100(root: Path, *, gpus: int = 8) -> dict[str, str]:
    """The tree above under ROOT/sys; returns {netdev: rdma} of every NIC. `gpus` < 8 leaves the last
    GPUs out (a GPU fallen off the bus), their NICs stay."""
    sys_dir = root / "sys"
    nics: list[tuple[str, str, list[str], int]] = []          # (pci, rdma, path, numa)
    for i, (bus, numa) in enumerate(DGX_H100_SWITCHES):
        bridge, rp = f"pci0000:{bus:02x}", f"0000:{bus:02x}:01.0"
        up, down = f"0000:{bus + 1:02x}:00.0", f"0000:{bus + 2:02x}"
        nic_pci, gpu_pci = f"0000:{bus + 3:02x}:00.0", f"0000:{bus + 6:02x}:00.0"
        nics.append((nic_pci, DGX_H100_COMPUTE[i], [bridge, rp, up, f"{down}:00.0", nic_pci], numa))
        if i < gpus:
            _function(sys_dir, [bridge, rp, up, f"{down}:03.0", gpu_pci], vendor="0x10de", klass="0x030200",
                      numa=numa)       # H100 SXM: a 3D controller
    for bus, numa, names in DGX_H100_STORAGE:
        bridge, rp = f"pci0000:{bus:02x}", f"0000:{bus:02x}:01.0"
        for fn, name in enumerate(names):
            pci = f"0000:{bus + 1:02x}:00.{fn}"
            nics.append((pci, name, [bridge, rp, pci], numa))
    # an NVSwitch (NVIDIA, class bridge 0x0680): not a GPU
    _function(sys_dir, ["pci0000:e0", "0000:e0:01.0", "0000:e1:00.0"], vendor="0x10de", klass="0x068000", numa=1)
    nics.sort()
    netdevs = [_netdev(pci) for pci, *_ in nics]
    write_fake_sysfs(root, netdevs, rdma=[n[1] for n in nics], pci=[n[0] for n in nics])
    # move each NIC function from fake_nic's flat pci0000:00 under its PCIe path
    for (pci, rdma, path, numa), netdev in zip(nics, netdevs, strict=True):
        target = _hops(sys_dir, path[:-1], numa) / pci
        (sys_dir / "devices/pci0000:00" / pci).rename(target)
        (target / "vendor").write_text("0x15b3\n")      # Mellanox
        (target / "class").write_text("0x020000\n")     # Ethernet controller
        (target / "numa_node").write_text(f"{numa}\n")
        _link(sys_dir / "class/net" / netdev, target / "net" / netdev)
        _link(sys_dir / "class/infiniband" / rdma, target / "infiniband" / rdma)
        _link(sys_dir / "bus/pci/devices" / pci, target)
    return dict(zip(netdevs, (n[1] for n in nics), strict=True))
