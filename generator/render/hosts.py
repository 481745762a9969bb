"""Per-host render: netplan, sysctl drop-in, NIC QoS script and its unit, nccl.conf.

Pure and deterministic. Every value comes from the plan; the templates only lay it
out. Templates are compiled once per process, and files that are the same on every
host (nccl.conf) are rendered once per plan.
"""

from __future__ import annotations

from generator.plan.model import FabricPlan, Host
from generator.plan.nccl import gid_check_index
from generator.render.environment import template

# Where playbooks/hosts.yml installs each file (below fabricgen_root).
SCRIPT_PATH = "/usr/local/sbin/fabricgen-roce-qos"
UNIT_NAME = "fabricgen-roce-qos.service"
INSTALL_PATHS = {
    "netplan.yaml": "/etc/netplan/60-fabricgen.yaml",
    "sysctl.conf": "/etc/sysctl.d/90-fabricgen.conf",
    "roce-qos.sh": SCRIPT_PATH,
    UNIT_NAME: f"/etc/systemd/system/{UNIT_NAME}",
    "nccl.conf": "/etc/nccl.conf",
}
HOST_FILES = tuple(INSTALL_PATHS)

# Socket buffer ceiling for NCCL bootstrap / socket transport: 64 MiB covers the
# bandwidth-delay product of a 100G management path at datacenter RTTs.
TCP_BUFFER_MAX = 64 * 1024 * 1024

_TEMPLATES = {
    "netplan.yaml": "host/netplan.yaml.j2",
    "sysctl.conf": "host/sysctl.conf.j2",
    "roce-qos.sh": "host/roce-qos.sh.j2",
    UNIT_NAME: "host/fabricgen-roce-qos.service.j2",
}

# Rendered once per plan object; keyed by id() with the plan kept alive alongside so
# the id cannot be reused by another plan while cached.
_shared_cache: dict[int, tuple[FabricPlan, dict[str, str]]] = {}


def _shared(plan: FabricPlan) -> dict[str, str]:
    hit = _shared_cache.get(id(plan))
    if hit is not None and hit[0] is plan:
        return hit[1]
    if plan.nccl is None:
        raise ValueError("plan.nccl is not set: compile_plan must fill it with generator.plan.nccl.build_nccl")
    qos = plan.qos
    shared = {
        "nccl.conf": template("nccl/nccl.conf.j2").render(plan=plan, settings=plan.nccl.settings),
        "pfc_vector": ",".join("1" if p in qos.pfc_priorities else "0" for p in range(8)),
        # the GID index nccl.conf pins, which roce-qos.sh --check verifies ("" = NCCL auto-selects)
        "gid_index": "" if (index := gid_check_index(plan.nccl)) is None else str(index),
    }
    _shared_cache.clear()
    _shared_cache[id(plan)] = (plan, shared)
    return shared


def render_host(plan: FabricPlan, host: Host) -> dict[str, str]:
    """Output-relative path -> file content for one host (hosts/<name>/...)."""
    shared = _shared(plan)
    ctx = {
        "plan": plan,
        "host": host,
        "qos": plan.qos,
        "pfc_vector": shared["pfc_vector"],
        "gid_index": shared["gid_index"],
        "tcp_buffer_max": TCP_BUFFER_MAX,
        "script_path": SCRIPT_PATH,
        "script_name": SCRIPT_PATH.rsplit("/", 1)[-1],
        "unit_name": UNIT_NAME,
    }
    base = f"hosts/{host.name}/"
    out = {base + name: template(tpl).render(ctx) for name, tpl in _TEMPLATES.items()}
    out[base + "nccl.conf"] = shared["nccl.conf"]
    return dict(sorted(out.items()))


def render_hosts(plan: FabricPlan) -> dict[str, str]:
    """Every host of the plan, in plan order."""
    out: dict[str, str] = {}
    for host in plan.hosts:
        out.update(render_host(plan, host))
    return out


__all__ = ["render_host", "render_hosts", "HOST_FILES", "INSTALL_PATHS", "SCRIPT_PATH", "UNIT_NAME"]
