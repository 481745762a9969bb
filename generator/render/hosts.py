"""Per-host render: netplan, sysctl drop-in, NIC QoS script, its per-NIC unit and udev rule, the
reconcile timer and its service, the slurmd/kubelet drop-ins that wait for the QoS, nccl.conf and
nccl.env; with hosts.lldpd, lldpd.conf (lldpd's drop-in, portidsubtype ifname).

Pure and deterministic. Every value comes from the plan; the templates only lay it
out. Templates are compiled once per process, and files that are the same on every
host (the QoS unit, nccl.conf/nccl.env, the udev rule for one set of rail netdevs) are
rendered once per plan: a host with discovered RDMA names of its own (FabricPlan.host_nccl)
is the only one whose nccl.conf/nccl.env are rendered for it.
"""

from __future__ import annotations

from generator.checks.qos_rules import roce_active_mtu
from generator.plan.model import FabricPlan, Host
from generator.plan.nccl import gid_check_index, nic_tos
from generator.render.environment import template

# Where playbooks/hosts.yml installs each file (below fabricgen_root), and with which mode.
SCRIPT_PATH = "/usr/local/sbin/fabricgen-roce-qos"
UNIT_PREFIX = "fabricgen-roce-qos"
UNIT_NAME = f"{UNIT_PREFIX}@.service"            # a template: one instance per rail netdev
UDEV_RULES = "81-fabricgen-roce-qos.rules"
RECONCILE_SERVICE = f"{UNIT_PREFIX}-reconcile.service"
RECONCILE_TIMER = f"{UNIT_PREFIX}-reconcile.timer"
# the job schedulers held until the rails' QoS ran, each by a drop-in (rendered name -> unit)
SCHEDULER_DROPINS = {"slurmd-roce-qos.conf": "slurmd.service", "kubelet-roce-qos.conf": "kubelet.service"}
SCHEDULER_DROPIN_NAME = "fabricgen-roce-qos.conf"
NCCL_ENV_PATH = "/etc/fabricgen/nccl.env"
# lldpd reads every *.conf of /etc/lldpd.d at start, in alphabetical order (lldpd(8), lldpcli(8) -c)
LLDPD_CONF_PATH = "/etc/lldpd.d/fabricgen.conf"
# The single unit earlier releases rendered (After=network-online.target): no longer rendered;
# the playbook disables and removes an installed one.
OLD_UNIT_NAME = f"{UNIT_PREFIX}.service"
INSTALL_PATHS = {
    "netplan.yaml": "/etc/netplan/60-fabricgen.yaml",
    "sysctl.conf": "/etc/sysctl.d/90-fabricgen.conf",
    "roce-qos.sh": SCRIPT_PATH,
    UNIT_NAME: f"/etc/systemd/system/{UNIT_NAME}",
    UDEV_RULES: f"/etc/udev/rules.d/{UDEV_RULES}",
    RECONCILE_SERVICE: f"/etc/systemd/system/{RECONCILE_SERVICE}",
    RECONCILE_TIMER: f"/etc/systemd/system/{RECONCILE_TIMER}",
    **{name: f"/etc/systemd/system/{unit}.d/{SCHEDULER_DROPIN_NAME}" for name, unit in SCHEDULER_DROPINS.items()},
    "nccl.conf": "/etc/nccl.conf",
    "nccl.env": NCCL_ENV_PATH,
    "lldpd.conf": LLDPD_CONF_PATH,          # only with hosts.lldpd
}
INSTALL_MODES = {
    "netplan.yaml": 0o600,          # netplan generate warns when others can read a config (routes, keys)
    "sysctl.conf": 0o644,
    "roce-qos.sh": 0o755,
    UNIT_NAME: 0o644,
    UDEV_RULES: 0o644,
    RECONCILE_SERVICE: 0o644,
    RECONCILE_TIMER: 0o644,
    **{name: 0o644 for name in SCHEDULER_DROPINS},
    "nccl.conf": 0o644,
    "nccl.env": 0o644,
    "lldpd.conf": 0o644,
}
HOST_FILES = tuple(f for f in INSTALL_PATHS if f != "lldpd.conf")      # rendered for every host

# Socket buffer ceiling for NCCL bootstrap / socket transport: 64 MiB covers the
# bandwidth-delay product of a 100G management path at datacenter RTTs.
TCP_BUFFER_MAX = 64 * 1024 * 1024
# roce-qos.sh's time budgets (the script's defaults; FABRICGEN_LOCK_WAIT / FABRICGEN_WAIT override).
# Apply: wait up to APPLY_LOCK_WAIT_S for another run (the boot-time units of all rails start
# together), then up to DEVICE_WAIT_S (--interface) for mlx5_ib's RDMA device and the RoCEv2 GID
# (one budget shared by both waits); mlnx_qos/dcb/cma_roce_tos on a NIC take seconds.
APPLY_LOCK_WAIT_S = 60
DEVICE_WAIT_S = 30
TOOLS_S = 30
# The QoS unit's start timeout covers all of it, so systemd never kills a run that is still
# within its own waits; a wedged device (firmware reset in progress) still fails the unit, not
# the boot, and the kill releases the lock --health would otherwise find held.
START_TIMEOUT_S = APPLY_LOCK_WAIT_S + DEVICE_WAIT_S + TOOLS_S
# --health runs under slurmd, which kills HealthCheckProgram after 60 s (DEVICE_STATE.md, Slurm):
# it waits at most HEALTH_LOCK_WAIT_S for an apply and reads the counters twice,
# HEALTH_COUNTER_INTERVAL_S apart, which leaves the rest of the minute to the NIC tools.
HEALTH_LOCK_WAIT_S = 5
HEALTH_COUNTER_INTERVAL_S = 2
# Every NIC tool call (and the drain's scontrol) runs under timeout(1) for at most TOOL_TIMEOUT_S
# (a healthy mlnx_qos or ethtool answers in well under a second). --health gives all its NIC tool
# calls HEALTH_TOOLS_S after the lock, the counter interval included; then the lock wait, that,
# one KILL grace second and the scontrol drain stay within slurmd's 60 s: 5 + 35 + 1 + 10 + 1 = 52.
TOOL_TIMEOUT_S = 10
HEALTH_TOOLS_S = 35
# The reconcile timer: how long a QoS reset that no udev event announced (or a person's mlnx_qos)
# can last before it is re-applied; its check costs a few NIC tool calls per rail. The jitter keeps
# a fleet that booted together from running them all in the same second.
RECONCILE_INTERVAL_S = 300
RECONCILE_JITTER_S = 30
# Host counter thresholds, shared by --health (warnings) and verify host-counters: RoCE packets
# the responder saw out of sequence or the requester was NAKed for (hw_counters out_of_sequence,
# packet_seq_err). Each one is a go-back-N retransmission: in a lossless fabric without adaptive
# routing a few per second come with link flaps; a steady 10/s on one port means loss somewhere.
SEQ_ERR_PER_S = 10
# PFC pause frames per second on one priority (the switch side's verify threshold)
PAUSE_PER_S = 100

# rendered per host
_TEMPLATES = {
    "netplan.yaml": "host/netplan.yaml.j2",
    "sysctl.conf": "host/sysctl.conf.j2",
    "roce-qos.sh": "host/roce-qos.sh.j2",
}

# systemd's unit_name_escape() (src/basic/unit-name.c, do_escape): letters, digits, ':', '_'
# and '.' stay, '/' becomes '-', everything else (and a leading '.') becomes \xNN
_UNIT_SAFE = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789:_.")


def systemd_escape(name: str) -> str:
    """NAME as `systemd-escape NAME` prints it: the instance of fabricgen-roce-qos@.service, and
    the escaped netdev in the device unit sys-subsystem-net-devices-<it>.device."""
    out = []
    for i, ch in enumerate(name):
        if ch == "/":
            out.append("-")
        elif ch in _UNIT_SAFE and not (i == 0 and ch == "."):
            out.append(ch)
        else:
            out.append("".join(f"\\x{b:02x}" for b in ch.encode("utf-8")))
    return "".join(out)


# Rendered once per plan object; keyed by id() with the plan kept alive alongside so
# the id cannot be reused by another plan while cached.
_shared_cache: dict[int, tuple[FabricPlan, dict]] = {}


def _nccl_files(plan: FabricPlan, settings, host: Host | None) -> dict[str, str]:
    ctx = {"plan": plan, "settings": settings, "host": host, "env_path": NCCL_ENV_PATH}
    return {"nccl.conf": template("nccl/nccl.conf.j2").render(ctx),
            "nccl.env": template("nccl/nccl.env.j2").render(ctx)}


def _shared(plan: FabricPlan) -> dict:
    hit = _shared_cache.get(id(plan))
    if hit is not None and hit[0] is plan:
        return hit[1]
    if plan.nccl is None:
        raise ValueError("plan.nccl is not set: compile_plan must fill it with generator.plan.nccl.build_nccl")
    qos = plan.qos
    shared = {
        **_nccl_files(plan, plan.nccl.settings, None),
        UNIT_NAME: template("host/fabricgen-roce-qos@.service.j2").render(
            plan=plan, unit_path=INSTALL_PATHS[UNIT_NAME], udev_rules=UDEV_RULES, script_path=SCRIPT_PATH,
            start_timeout_s=START_TIMEOUT_S, reconcile_timer=RECONCILE_TIMER, scheduler_dropin=SCHEDULER_DROPIN_NAME),
        # the reconcile runs --check and then the apply, each waiting up to APPLY_LOCK_WAIT_S for the lock
        RECONCILE_SERVICE: template("host/fabricgen-roce-qos-reconcile.service.j2").render(
            plan=plan, service_path=INSTALL_PATHS[RECONCILE_SERVICE], timer_name=RECONCILE_TIMER,
            script_path=SCRIPT_PATH, start_timeout_s=2 * APPLY_LOCK_WAIT_S + 2 * TOOLS_S),
        RECONCILE_TIMER: template("host/fabricgen-roce-qos-reconcile.timer.j2").render(
            plan=plan, timer_path=INSTALL_PATHS[RECONCILE_TIMER], interval_s=RECONCILE_INTERVAL_S,
            jitter_s=RECONCILE_JITTER_S),
        "pfc_vector": ",".join("1" if p in qos.pfc_priorities else "0" for p in range(8)),
        # the GID index nccl.conf pins, which roce-qos.sh --check verifies ("" = NCCL auto-selects)
        "gid_index": "" if (index := gid_check_index(plan.nccl)) is None else str(index),
        # the ToS the NIC gives rdma_cm users and (OFED/DOCA) every QP: NCCL_IB_TC's (nic_tos)
        "tos": nic_tos(plan.nccl, qos),
        "udev": {},                 # rail (netdev, rdma) pairs (mostly the same on every host) -> rules file
    }
    if plan.host_lldpd:
        shared["lldpd.conf"] = template("host/lldpd.conf.j2").render(plan=plan, conf_path=LLDPD_CONF_PATH)
    _shared_cache.clear()
    _shared_cache[id(plan)] = (plan, shared)
    return shared


def _udev_rules(plan: FabricPlan, shared: dict, host: Host) -> str:
    rails = tuple((nic.netdev, nic.rdma) for nic in host.nics)
    text = shared["udev"].get(rails)
    if text is None:
        text = shared["udev"][rails] = template("host/81-fabricgen-roce-qos.rules.j2").render(
            plan=plan, rules_path=INSTALL_PATHS[UDEV_RULES], unit_name=UNIT_NAME, unit_prefix=UNIT_PREFIX,
            instances=[(netdev, systemd_escape(netdev)) for netdev, _ in rails],
            rdma_instances=[(rdma, systemd_escape(netdev)) for netdev, rdma in rails])
    return text


def _scheduler_dropins(plan: FabricPlan, host: Host) -> dict[str, str]:
    units = [f"{UNIT_PREFIX}@{systemd_escape(nic.netdev)}.service" for nic in host.nics]
    return {name: template("host/scheduler-roce-qos.conf.j2").render(
                plan=plan, host=host, scheduler=unit, units=units, dropin_path=INSTALL_PATHS[name])
            for name, unit in SCHEDULER_DROPINS.items()}


def rail_ports(plan: FabricPlan, host: Host) -> str:
    """roce-qos.sh's RAIL_PORTS: netdev:rate_gbps:roce_mtu per rail, what --check expects of the port
    (the RoCE active MTU the host MTU gives, kernel iboe_get_mtu, as the host pre-flight expects)."""
    mtu = roce_active_mtu(plan.qos.host_mtu) or 0
    return " ".join(f"{nic.netdev}:{plan.nic_speed_g}:{mtu}" for nic in host.nics)


def render_host(plan: FabricPlan, host: Host) -> dict[str, str]:
    """Output-relative path -> file content for one host (hosts/<name>/...)."""
    shared = _shared(plan)
    ctx = {
        "plan": plan,
        "host": host,
        "qos": plan.qos,
        "pfc_vector": shared["pfc_vector"],
        "gid_index": shared["gid_index"],
        "tos": shared["tos"],
        "tcp_buffer_max": TCP_BUFFER_MAX,
        "script_path": SCRIPT_PATH,
        "script_name": SCRIPT_PATH.rsplit("/", 1)[-1],
        "unit_name": UNIT_NAME,
        "udev_rules": UDEV_RULES,
        "rail_ports": rail_ports(plan, host),
        "lock_wait_s": APPLY_LOCK_WAIT_S,
        "health_lock_wait_s": HEALTH_LOCK_WAIT_S,
        "counter_interval_s": HEALTH_COUNTER_INTERVAL_S,
        "tool_timeout_s": TOOL_TIMEOUT_S,
        "health_tools_s": HEALTH_TOOLS_S,
        "seq_err_per_s": SEQ_ERR_PER_S,
        "pause_per_s": PAUSE_PER_S,
    }
    base = f"hosts/{host.name}/"
    out = {base + name: template(tpl).render(ctx) for name, tpl in _TEMPLATES.items()}
    out[base + UNIT_NAME] = shared[UNIT_NAME]
    out[base + UDEV_RULES] = _udev_rules(plan, shared, host)
    out[base + RECONCILE_SERVICE] = shared[RECONCILE_SERVICE]
    out[base + RECONCILE_TIMER] = shared[RECONCILE_TIMER]
    out.update({base + name: text for name, text in _scheduler_dropins(plan, host).items()})
    own = plan.host_nccl.get(host.name) if plan.host_nccl else None
    nccl = shared if own is None else _nccl_files(plan, own.settings, host)
    out[base + "nccl.conf"] = nccl["nccl.conf"]
    out[base + "nccl.env"] = nccl["nccl.env"]
    if plan.host_lldpd:
        out[base + "lldpd.conf"] = shared["lldpd.conf"]
    return dict(sorted(out.items()))


def render_hosts(plan: FabricPlan) -> dict[str, str]:
    """Every host of the plan, in plan order."""
    out: dict[str, str] = {}
    for host in plan.hosts:
        out.update(render_host(plan, host))
    return out


__all__ = ["render_host", "render_hosts", "rail_ports", "systemd_escape", "HOST_FILES", "INSTALL_PATHS",
           "INSTALL_MODES", "SCRIPT_PATH", "UNIT_NAME", "UNIT_PREFIX", "OLD_UNIT_NAME", "UDEV_RULES",
           "RECONCILE_SERVICE", "RECONCILE_TIMER", "SCHEDULER_DROPINS", "NCCL_ENV_PATH", "LLDPD_CONF_PATH"]
