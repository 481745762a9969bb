"""NCCL settings for /etc/nccl.conf, computed once from the intent and the QoS plan.

Choices (ROCE.md §1, §6):
- `NCCL_IB_HCA==mlx5_0:1,...`: the leading `=` asks for exact names; without it
  `mlx5_1` also selects mlx5_10..mlx5_19 on 16-NIC servers. Port 1 of every rail NIC.
- `NCCL_IB_TC` is the ToS byte (DSCP << 2) from the QoS plan, so NCCL marks exactly
  the DSCP the switches classify into the lossless priority. nccl.settings may set it with
  ECN bits (106 = DSCP 26 + ECT(0), as NVIDIA's pages do); the NIC's default ToS and
  global traffic class then follow it (`nic_tos`), since the global class overrides NCCL's.
- `NCCL_IB_HCA` per host when `hosts.discovered` gives that host other RDMA names than
  hosts.rails (inbox drivers name devices rocep..., a DGX H100's compute NICs are
  mlx5_0,3,4,5,6,9,10,11): `build_nccl(..., rdma=...)`, kept in FabricPlan.host_nccl.
- `NCCL_SOCKET_IFNAME==<mgmt>,eth0`: bootstrap stays on the management interface instead
  of whichever interface NCCL finds first (often a rail /31 that cannot reach peers), and
  the same file works inside a container, whose network namespace has eth0 and no <mgmt>.
  NCCL splits the list at ',' (parseStringList) and, with the leading '=', matches each
  entry exactly (matchIfList with matchExact; src/misc/utils.cc, called from
  ncclFindInterfaces in src/misc/socket.cc), so `eth0` never also selects eth01 and an
  interface missing from one namespace is simply not found there.
- `NCCL_CROSS_NIC=0` wherever leaves are rail-aligned (rail-optimized, three-tier
  pods and dragonfly-plus groups are all built from per-rail leaves): a ring that
  hops rails would cross the spine tier for traffic that one leaf could carry.
  Single-switch and leaf-spine put all NICs of a node on one leaf, so NCCL's
  default (2: cross rails when it helps) stays.
- `NCCL_IB_QPS_PER_CONNECTION=4` wherever traffic can cross an ECMP tier (every
  kind but single-switch): one QP is one 5-tuple, which ECMP pins to one uplink;
  four give the hash four chances while keeping the QP count per peer small.
- `NCCL_IB_GID_INDEX=3` unless `nccl.min_version` is 2.21 or newer. NCCL before 2.21
  reads GID index 0 by default: on a ConnectX port indexes 0 and 1 are the kernel's
  default link-local GIDs (fe80::, RoCEv1 and RoCEv2), which cannot cross the routed
  /31s of the fabric. Index 3 is where the kernel puts the RoCEv2 GID of the port's
  first IPv4 address (2 is its RoCEv1 twin; `show_gids`, mlnx-tools). NCCL 2.21 and
  later default to -1 and pick the RoCEv2 IPv4 GID themselves (src/transport/net_ib,
  NCCL_IB_GID_INDEX), which also survives GID tables that differ (extra VLAN or IPv6
  addresses), so nothing is written then. roce-qos.sh --check verifies the index on
  every rail NIC (see `gid_check_index`).
- `nccl.settings` is merged last, in place: NCCL keeps the first value of a key it
  reads (setenv without overwrite), so a key must appear only once in the file.

Nothing here raises on bad user input: FG3xx rules report unknown keys and values.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cache
from importlib import resources

from generator.intent.model import Intent
from generator.plan.model import NcclPlan, QosPlan

RAIL_ALIGNED_KINDS = frozenset({"rail-optimized", "three-tier", "dragonfly-plus"})
ECMP_QPS_PER_CONNECTION = 4
# strtoll(value, NULL, 0) as NCCL's param.cc calls it: decimal, 0x hex or 0 octal.
# Anything else is read as its longest valid prefix (often 0) without a warning.
_C_INT = re.compile(r"^[+-]?(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)$")
# First NCCL whose NCCL_IB_GID_INDEX defaults to -1 (auto-select RoCEv2, IPv4 first)
AUTO_GID_NCCL = (2, 21)
# The RoCEv2 GID of the first IPv4 address on a ConnectX port (0/1: link-local v1/v2, 2: IPv4 v1)
ROCE_V2_IPV4_GID_INDEX = 3
# Kernel default GIDs (fe80:: from the MAC) on every RoCE port: never routable
LINK_LOCAL_GID_INDEXES = frozenset({0, 1})


@cache
def nccl_param_names() -> frozenset[str]:
    """Every parameter name NCCL 2.30.7 reads (generator/data/nccl_params.txt)."""
    text = resources.files("generator.data").joinpath("nccl_params.txt").read_text(encoding="utf-8")
    return frozenset(line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#"))


def setting_text(value: object) -> str:
    """How an intent value is written after `=` (YAML booleans become NCCL's 1/0)."""
    if isinstance(value, bool):
        return "1" if value else "0"
    return str(value)


def nccl_auto_selects_gid(intent: Intent) -> bool:
    """True when every job runs an NCCL that picks the RoCEv2 GID itself (min_version >= 2.21)."""
    version = intent.nccl.min_version_tuple()
    return version is not None and version >= AUTO_GID_NCCL


def c_int(text: str | None) -> int | None:
    """`text` as NCCL's strtoll(value, NULL, 0) reads it when it is a whole C integer, else None."""
    if text is None or not _C_INT.match(text):
        return None
    try:
        return int(text, 0)
    except ValueError:          # "017": C octal, which int(..., 0) refuses
        return int(text, 8)


# The ToS byte is DSCP << 2 | ECN (RFC 3168 §5): 0b10 ECT(0), 0b01 ECT(1), 0b11 Congestion Experienced
ECN_MASK = 0b11
ECN_CE = 0b11


def nic_tos(nccl: NcclPlan, qos: QosPlan) -> int:
    """The ToS byte roce-qos.sh gives every rail NIC: rdma_cm's default ToS (cma_roce_tos or
    configfs) and MLNX_OFED/DOCA's global tc/1/traffic_class. That global class overrides the
    traffic class of every QP on the port, NCCL's included (mlx5_ib tclass_get_tclass_locked;
    DEVICE_STATE.md), so it must be exactly what nccl.conf's NCCL_IB_TC asks for: NVIDIA's RoCE
    pages use 106 (DSCP 26 with ECT(0)) where fabricgen's default is 104 (DSCP 26 << 2). A value
    FG310 refuses (another DSCP than roce.dscp, or the CE bits) falls back to qos.tos."""
    tc = c_int(dict(nccl.settings).get("NCCL_IB_TC"))
    if tc is None or not 0 <= tc <= 0xFF or tc >> 2 != qos.roce_dscp or tc & ECN_MASK == ECN_CE:
        return qos.tos
    return tc


def gid_check_index(nccl: NcclPlan) -> int | None:
    """The GID index roce-qos.sh --check must find RoCEv2/IPv4 on every rail NIC, or None
    when NCCL auto-selects (no key, -1, or a value NCCL would not read as an index; FG302
    reports the latter) and the check looks for any RoCEv2/IPv4 GID instead."""
    value = c_int(dict(nccl.settings).get("NCCL_IB_GID_INDEX"))
    return value if value is not None and value >= 0 else None


# The interface a container (Kubernetes pod, Docker bridge) sees as its own: NCCL bootstrap
# inside the pod's network namespace, where the host's management interface does not exist
CONTAINER_IFNAME = "eth0"


def socket_ifname(mgmt_interface: str) -> str:
    """NCCL_SOCKET_IFNAME: exactly the management interface, or a container's eth0."""
    names = [mgmt_interface] if mgmt_interface == CONTAINER_IFNAME else [mgmt_interface, CONTAINER_IFNAME]
    return "=" + ",".join(names)


def build_nccl(intent: Intent, qos: QosPlan, rdma: Sequence[str] | None = None) -> NcclPlan:
    """nccl.conf's settings; RDMA, the RDMA device of each rail on one host (discovered), replaces
    the hosts.rails names in NCCL_IB_HCA."""
    names = [nic.rdma for nic in intent.rail_nics()] if rdma is None else list(rdma)
    kind = intent.topology.kind
    out: dict[str, str] = {
        "NCCL_IB_HCA": "=" + ",".join(f"{name}:1" for name in names),
        "NCCL_IB_TC": str(qos.tos),
        "NCCL_SOCKET_IFNAME": socket_ifname(intent.hosts.mgmt_interface),
    }
    if kind in RAIL_ALIGNED_KINDS:
        out["NCCL_CROSS_NIC"] = "0"
    if kind != "single-switch":
        out["NCCL_IB_QPS_PER_CONNECTION"] = str(ECMP_QPS_PER_CONNECTION)
    if not nccl_auto_selects_gid(intent):
        out["NCCL_IB_GID_INDEX"] = str(ROCE_V2_IPV4_GID_INDEX)
    for key, value in intent.nccl.settings.items():
        out[str(key)] = setting_text(value)
    return NcclPlan(settings=tuple(out.items()))


__all__ = ["build_nccl", "nic_tos", "ECN_MASK", "ECN_CE", "socket_ifname", "CONTAINER_IFNAME", "nccl_param_names", "setting_text", "nccl_auto_selects_gid", "gid_check_index", "c_int",
           "RAIL_ALIGNED_KINDS", "ECMP_QPS_PER_CONNECTION", "AUTO_GID_NCCL", "ROCE_V2_IPV4_GID_INDEX",
           "LINK_LOCAL_GID_INDEXES"]
