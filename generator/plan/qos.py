"""The lossless contract, computed once from `roce:` for every target to render.

Model (NVIDIA's RoCE lossless profile): switch priority = traffic class for the
RoCE and CNP priorities, everything else in TC0; RoCE TC shares DWRR with TC0,
CNP is strict priority; ECN marks on the RoCE TC; PFC only on the RoCE priority.
"""

from __future__ import annotations

from generator.intent.model import Roce
from generator.plan.model import QosPlan

# What `nv set qos roce mode lossless` configures by itself (ROCE.md §2)
NVUE_LOSSLESS_DEFAULTS = {
    "roce_priority": 3, "cnp_priority": 6, "ecn_min": 150000, "ecn_max": 1500000,
    "ecn_probability": 100, "roce_bw": 50,
}
NVUE_DEFAULT_DSCP_RANGES = {3: range(24, 32), 6: range(48, 56)}


def dscp_maps_by_default(dscp: int, priority: int) -> bool:
    """True when NVUE's lossless profile already maps `dscp` to `priority`."""
    return dscp in NVUE_DEFAULT_DSCP_RANGES.get(priority, ())


def build_qos(roce: Roce) -> QosPlan:
    lossless = roce.mode == "lossless"
    roce_tc, cnp_tc = roce.priority, roce.cnp_priority
    priority_to_tc = tuple((sp, sp if sp in (roce.priority, roce.cnp_priority) else 0) for sp in range(8))
    ets = tuple(sorted([(0, "dwrr", 100 - roce.bandwidth_percent),
                        (roce_tc, "dwrr", roce.bandwidth_percent),
                        (cnp_tc, "strict", 0)]))
    d = NVUE_LOSSLESS_DEFAULTS
    differs = not (
        roce.priority == d["roce_priority"] and roce.cnp_priority == d["cnp_priority"]
        and dscp_maps_by_default(roce.dscp, roce.priority) and dscp_maps_by_default(roce.cnp_dscp, roce.cnp_priority)
        and roce.ecn.min_threshold == d["ecn_min"] and roce.ecn.max_threshold == d["ecn_max"]
        and roce.ecn.probability == d["ecn_probability"] and roce.bandwidth_percent == d["roce_bw"]
        and roce.ecn.enabled)
    return QosPlan(
        mode=roce.mode,
        roce_dscp=roce.dscp,
        roce_priority=roce.priority,
        cnp_dscp=roce.cnp_dscp,
        cnp_priority=roce.cnp_priority,
        roce_tc=roce_tc,
        cnp_tc=cnp_tc,
        dscp_to_priority=tuple(sorted({(roce.dscp, roce.priority), (roce.cnp_dscp, roce.cnp_priority)})),
        priority_to_tc=priority_to_tc,
        pfc_priorities=(roce.priority,) if lossless else (),
        ets=ets,
        ecn_tcs=(roce_tc,) if roce.ecn.enabled else (),
        ecn_min_bytes=roce.ecn.min_threshold,
        ecn_max_bytes=roce.ecn.max_threshold,
        ecn_probability=roce.ecn.probability,
        pfc_watchdog=roce.pfc_watchdog and lossless,
        pfc_watchdog_ms=(roce.pfc_watchdog_timers.detection_ms, roce.pfc_watchdog_timers.restoration_ms,
                         roce.pfc_watchdog_timers.poll_ms),
        switch_mtu=roce.mtu.switch,
        host_mtu=roce.mtu.host,
        tos=(roce.dscp << 2) & 0xFF,
        differs_from_nvue_default=differs,
    )
