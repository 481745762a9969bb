"""FG308, FG309, FG313, FG330, FG340: the host fleet as it really is, and how it is rolled out.

Rail NIC names that are guessed (hosts.rails omitted), what the discovery file says about
each host's rail NICs (hosts.discovered), rollout batches that are no batches
(deploy.hosts), and rail names the per-NIC QoS unit cannot carry through udev on most
systemd releases.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

from generator.checks.registry import ERROR, WARNING, CheckContext, rule
from generator.render.hosts import UNIT_NAME, systemd_escape

Finding = Iterator[tuple[str, str]]


@rule("FG308", WARNING, "rail NIC names are guessed (hosts.rails omitted)", stage="intent")
def rails_guessed(ctx: CheckContext) -> Finding:
    """hosts.rails is not set, so every host's rail NIC r is taken to be netdev
    ens<r+1>f0np0 with RDMA device mlx5_<r>: the ConnectX naming of a plain 8-NIC server.

    Real servers differ. On a DGX H100 the compute NICs are mlx5_0,3,4,5,6,9,10,11 (the
    others are storage and in-band ports); with the inbox kernel driver rdma-core names
    devices rocep<bus>s<slot>f<fn>. NCCL_IB_HCA==mlx5_* then selects storage ports or
    nothing, and NCCL falls back to TCP sockets without an error. List the rail NICs in
    hosts.rails (netdev and rdma per rail, in rail order), and run `fabricgen hosts
    discover` and set hosts.discovered so that each host's real RDMA names are used and
    checked (FG313)."""
    hosts = ctx.intent.hosts
    if hosts.rails is not None:
        return
    rails = ctx.intent.topology.rails
    last = rails - 1
    found = (" hosts.discovered gives the RDMA names, but the netdev names are still a guess."
             if hosts.discovered else "")
    yield "hosts.rails", (f"not set: rail NICs are assumed to be ens1f0np0..ens{rails}f0np0 / mlx5_0..mlx5_{last}, "
                          f"which real servers rarely match (DGX H100: mlx5_0,3,4,5,6,9,10,11; inbox drivers: "
                          f"rocep...).{found} List them in hosts.rails")


def _serial_first(canary: int, batch: int | str, nodes: int) -> int:
    """Hosts in the first batch Ansible runs for `serial: [canary, batch]` over NODES hosts."""
    if canary:
        return min(canary, nodes)
    return min(nodes, _batch_size(batch, nodes))


def _batch_size(batch: int | str, hosts: int) -> int:
    # Ansible's serial percentage of all the play's hosts: int(pct / 100.0 * hosts) or 1
    # (ansible.utils.helpers.pct_to_int, called by PlaybookExecutor._get_serialized_batches)
    if isinstance(batch, str):
        return int(int(batch.rstrip("%")) / 100.0 * hosts) or 1
    return batch


@rule("FG309", WARNING, "host rollout without a canary or in one batch", stage="intent")
def rollout_batches(ctx: CheckContext) -> Finding:
    """deploy.hosts decides how playbooks/hosts.yml rolls out: Ansible `serial` is
    [canary, batch] (a first batch of `canary` hosts alone, then batches of `batch` hosts
    or percent), with max_fail_percentage stopping the play when a batch fails.

    netplan changes and live NIC trust/PFC changes interrupt RDMA traffic on the host they
    touch; a batch that holds every host turns one bad setting into a fleet-wide outage,
    and a first batch of every host is no canary. drain without undrain leaves every host
    drained after the rollout (the scheduler sends it no more jobs). Keep canary small
    (1), batch a fraction of the fleet ("10%"), and give undrain with drain."""
    d = ctx.intent.deploy.hosts
    nodes = ctx.intent.topology.nodes
    first = _serial_first(d.canary, d.batch, nodes)
    if nodes > 1 and first >= nodes:
        what = f"canary {d.canary}" if d.canary else f"batch {d.batch!r} with canary 0"
        yield "deploy.hosts.canary", (f"{what} puts all {nodes} hosts in the first batch: there is no canary; "
                                      "use canary: 1")
    elif d.canary and nodes - first > 1 and _batch_size(d.batch, nodes) >= nodes - first:
        yield "deploy.hosts.batch", (f"{d.batch!r} changes all {nodes - first} hosts after the canary at once: use a "
                                     f"fraction such as \"10%\" (about {max(1, math.ceil(nodes / 10))} hosts)")
    if d.drain and not d.undrain:
        yield "deploy.hosts.undrain", "drain is set without undrain: every host stays drained after the rollout"


def _nic_problem(nic, seen, speed_g: int) -> str | None:
    where = f"rail {nic.rail} {nic.netdev} ({seen.rdma})"
    if seen.link_layer not in (None, "Ethernet"):
        return (f"{where} is {seen.link_layer}: set the port to Ethernet (mlxconfig -d {seen.pci or '<pci>'} set "
                "LINK_TYPE_P1=2) and reset the firmware (mlxfwreset or a power cycle)")
    if seen.state not in (None, "ACTIVE"):
        return f"{where} is {seen.state}, not ACTIVE: check the cable and the leaf port"
    if seen.rate_gbps is not None and seen.rate_gbps < speed_g:
        return f"{where} runs at {seen.rate_gbps:g} Gb/s, below the plan's {speed_g}G"
    return None


@rule("FG313", WARNING, "discovered rail NIC differs from the plan", stage="plan")
def discovered_mismatch(ctx: CheckContext) -> Finding:
    """The discovery file (hosts.discovered, written by `fabricgen hosts discover`) shows a
    host whose rail NICs are not what the plan needs.

    Per host, each rail netdev must be reported, with link layer Ethernet, port state
    ACTIVE and at least the plan's NIC speed, and, with deploy.hosts.require_gpudirect, a
    GPUDirect RDMA path (nvidia-peermem or DMA-BUF). A rail netdev the host does not have
    keeps hosts.rails' RDMA name, which is then wrong; an InfiniBand-mode ConnectX-7 port
    (its factory default) needs `mlxconfig set LINK_TYPE_P1=2` and a firmware reset; a
    down or slow port halves a rail. The host pre-flight stops such a host with one line;
    fix the host (or hosts.rails) and run discovery again. Hosts the file does not list are
    reported together: they keep hosts.rails' names unchecked."""
    discovery = ctx.plan.discovery
    if discovery is None:
        return
    need_gdr = ctx.intent.deploy.hosts.require_gpudirect
    speed = ctx.plan.nic_speed_g
    absent = []
    for host in ctx.plan.hosts:
        found = discovery.hosts.get(host.name)
        if found is None:
            absent.append(host.name)
            continue
        problems = []
        for nic in host.nics:
            seen = found.nics.get(nic.netdev)
            if seen is None:
                have = ", ".join(found.nics) or "no RDMA netdev at all"
                problems.append(f"rail {nic.rail} {nic.netdev} not found (the host reported {have})")
            else:
                problem = _nic_problem(nic, seen, speed)
                if problem:
                    problems.append(problem)
        if need_gdr and found.gpudirect == "none":
            problems.append("no GPUDirect RDMA path (load nvidia-peermem or use a DMA-BUF capable driver), "
                            "or set deploy.hosts.require_gpudirect: false")
        if problems:
            yield "hosts.discovered", f"{host.name}: {'; '.join(problems)}"
    if absent:
        more = f" and {len(absent) - 1} more" if len(absent) > 1 else ""
        yield "hosts.discovered", (f"{absent[0]}{more} not in {discovery.file}: their rail RDMA names are "
                                   "hosts.rails' guess; run `fabricgen hosts discover` for them")


@rule("FG330", WARNING, "rail netdev name the QoS unit cannot carry through udev", stage="intent")
def netdev_needs_escaping(ctx: CheckContext) -> Finding:
    """A rail netdev name with '-' or a leading '.' is escaped in a systemd unit name
    (systemd-escape: '-' -> \\x2d): its QoS instance is fabricgen-roce-qos@<escaped>.service,
    and the unit binds to sys-subsystem-net-devices-<escaped>.device.

    The udev rule names that instance in SYSTEMD_WANTS. systemd 233 up to 257 parse
    SYSTEMD_WANTS with backslashes dropped (systemd issue 16735, fixed by pull request
    35869), so udev asks for an instance of another name, whose BindsTo= device does not
    exist, and the NIC QoS is not re-applied after a driver reload. Rename the rail
    interface (a systemd.link Name= or netplan set-name without '-') or check the host's
    systemd version."""
    for i, nic in enumerate(ctx.intent.rail_nics()):
        escaped = systemd_escape(nic.netdev)
        if escaped != nic.netdev:
            path = f"hosts.rails[{i}].netdev" if ctx.intent.hosts.rails is not None else "hosts.rails"
            yield path, (f"{nic.netdev} becomes {UNIT_NAME.replace('@', '@' + escaped)}: systemd 233-257 drop the "
                         "backslash from udev's SYSTEMD_WANTS and start a wrongly named instance; rename the "
                         "interface without '-'")


@rule("FG340", ERROR, "drain hook with no scheduler to wait for", stage="intent")
def drain_without_scheduler(ctx: CheckContext) -> Finding:
    """deploy.hosts.drain is set and deploy.hosts.scheduler is none: the playbook takes the
    hook's exit as the end of the drain and changes the host's rails and NIC QoS right after.

    `scontrol update NodeName=... State=DRAIN` exits at once: it only stops new jobs, and the
    running ones go on (scontrol(1)); Slurm says the node is DRAINED only once they end. So
    with scheduler none a Slurm drain hook reconfigures the rails under running jobs. Name
    the scheduler (scheduler: slurm waits until `scontrol show node` says DRAINED;
    scheduler: kubernetes bounds `kubectl drain`), or, for hosts that run no jobs at all,
    say so with deploy.hosts.idle: true. idle with a scheduler contradicts itself."""
    d = ctx.intent.deploy.hosts
    if d.idle and d.scheduler != "none":
        yield "deploy.hosts.idle", (f"idle: true says no jobs run, but scheduler is {d.scheduler}: remove idle "
                                    "(the drain waits for the scheduler) or set scheduler: none")
    elif d.drain and d.scheduler == "none" and not d.idle:
        yield "deploy.hosts.scheduler", ("none with a drain hook: the hook's exit is taken as the drain, and "
                                         "`scontrol update State=DRAIN` returns while jobs still run; set "
                                         "scheduler: slurm or kubernetes, or idle: true if the hosts run no jobs")
