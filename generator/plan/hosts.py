"""The host side of the plan that is not topology: the rollout (`deploy.hosts`) and the
per-host RDMA names and NCCL settings a discovery file (`hosts.discovered`) gives.

Without a discovery file nothing here runs per host: every host keeps hosts.rails' names and
the one plan-wide NcclPlan (a 98k-GPU compile must not pay for a feature it does not use).
"""

from __future__ import annotations

from collections.abc import Iterable

from generator.intent.discovery import DiscoveredHost
from generator.intent.model import HostRail, Intent
from generator.plan.model import Host, HostRollout, NcclPlan, QosPlan
from generator.plan.nccl import build_nccl


def host_rollout(intent: Intent) -> HostRollout:
    d = intent.deploy.hosts
    return HostRollout(user=d.user, canary=d.canary, batch=d.batch, max_fail_percentage=d.max_fail_percentage,
                       drain=d.drain or "", undrain=d.undrain or "", require_gpudirect=d.require_gpudirect,
                       scheduler=d.scheduler, drain_timeout=d.drain_timeout, scheduler_node=d.scheduler_node or "",
                       idle=d.idle, forks=d.forks)


def discovered_rdma(found: DiscoveredHost | None, nic: HostRail) -> str:
    """The RDMA device of rail NIC `nic` on a host: the discovered one when the host reported that
    netdev, else hosts.rails' name (FG313 warns about the host then)."""
    if found is not None:
        seen = found.nics.get(nic.netdev)
        if seen is not None:
            return seen.rdma
    return nic.rdma


def gpu_rail_nics(found: DiscoveredHost, rails: list[HostRail]) -> list[HostRail]:
    """The rail NICs of a discovered host: with one GPU per rail, each with its own NIC (the
    discovery file's `gpus`), rail r is GPU r's nearest NIC, so the cable to rail r's leaf leaves
    from the NIC beside GPU r (NCCL pairs each GPU with its nearest NIC); else hosts.rails."""
    order = found.gpu_rails(len(rails))
    if order is None:
        return rails
    return [HostRail(netdev=netdev, rdma=found.nics[netdev].rdma) for netdev in order]


def host_nccl_plans(intent: Intent, qos: QosPlan, hosts: Iterable[Host], default: NcclPlan) -> dict[str, NcclPlan]:
    """Host name -> NcclPlan for every host whose rail RDMA names differ from hosts.rails'; one
    build per distinct list of names, and none when the settings come out the same (nccl.settings
    pins NCCL_IB_HCA itself)."""
    usual = tuple(nic.rdma for nic in intent.rail_nics())
    built: dict[tuple[str, ...], NcclPlan] = {}
    out: dict[str, NcclPlan] = {}
    for host in hosts:
        names = tuple(nic.rdma for nic in host.nics)
        if names == usual:
            continue
        plan = built.get(names)
        if plan is None:
            plan = built[names] = build_nccl(intent, qos, rdma=names)
        if plan.settings != default.settings:
            out[host.name] = plan
    return out


__all__ = ["host_rollout", "discovered_rdma", "gpu_rail_nics", "host_nccl_plans"]
