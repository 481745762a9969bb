"""NCCL settings for /etc/nccl.conf, computed once from the intent and the QoS plan.

Choices (ROCE.md §1, §6):
- `NCCL_IB_HCA==mlx5_0:1,...`: the leading `=` asks for exact names; without it
  `mlx5_1` also selects mlx5_10..mlx5_19 on 16-NIC servers. Port 1 of every rail NIC.
- `NCCL_IB_TC` is the ToS byte (DSCP << 2) from the QoS plan, so NCCL marks exactly
  the DSCP the switches classify into the lossless priority.
- `NCCL_SOCKET_IFNAME==<mgmt>`: bootstrap stays on the management interface instead
  of whichever interface NCCL finds first (often a rail /31 that cannot reach peers).
- `NCCL_CROSS_NIC=0` wherever leaves are rail-aligned (rail-optimized, three-tier
  pods and dragonfly-plus groups are all built from per-rail leaves): a ring that
  hops rails would cross the spine tier for traffic that one leaf could carry.
  Single-switch and leaf-spine put all NICs of a node on one leaf, so NCCL's
  default (2: cross rails when it helps) stays.
- `NCCL_IB_QPS_PER_CONNECTION=4` wherever traffic can cross an ECMP tier (every
  kind but single-switch): one QP is one 5-tuple, which ECMP pins to one uplink;
  four give the hash four chances while keeping the QP count per peer small.
- GID: left to NCCL (>= 2.21 picks the RoCEv2 IPv4 GID by itself). A fixed
  `NCCL_IB_GID_INDEX=3` is wrong on hosts whose GID table differs (extra VLAN or
  IPv6 addresses), so it is only written when the user sets it in `nccl.settings`.
- `nccl.settings` is merged last, in place: NCCL keeps the first value of a key it
  reads (setenv without overwrite), so a key must appear only once in the file.

Nothing here raises on bad user input: FG3xx rules report unknown keys and values.
"""

from __future__ import annotations

from functools import cache
from importlib import resources

from generator.intent.model import Intent
from generator.plan.model import NcclPlan, QosPlan

RAIL_ALIGNED_KINDS = frozenset({"rail-optimized", "three-tier", "dragonfly-plus"})
ECMP_QPS_PER_CONNECTION = 4


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


def build_nccl(intent: Intent, qos: QosPlan) -> NcclPlan:
    nics = intent.rail_nics()
    kind = intent.topology.kind
    out: dict[str, str] = {
        "NCCL_IB_HCA": "=" + ",".join(f"{nic.rdma}:1" for nic in nics),
        "NCCL_IB_TC": str(qos.tos),
        "NCCL_SOCKET_IFNAME": "=" + intent.hosts.mgmt_interface,
    }
    if kind in RAIL_ALIGNED_KINDS:
        out["NCCL_CROSS_NIC"] = "0"
    if kind != "single-switch":
        out["NCCL_IB_QPS_PER_CONNECTION"] = str(ECMP_QPS_PER_CONNECTION)
    for key, value in intent.nccl.settings.items():
        out[str(key)] = setting_text(value)
    return NcclPlan(settings=tuple(out.items()))


__all__ = ["build_nccl", "nccl_param_names", "setting_text", "RAIL_ALIGNED_KINDS", "ECMP_QPS_PER_CONNECTION"]
