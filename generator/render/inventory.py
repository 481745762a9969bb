"""Ansible inventory (inventory.yml) from the plan.

Groups: `switches` (children `leaf`, `spine`, `super_spine`, only those present),
`rail<r>` (the rail-r leaves), `unit<u>` / `group<g>` (switches and hosts of a
scalable unit or dragonfly-plus group) and `hosts` (GPU servers). Variables live on
the first group a device appears in (its role group or `hosts`); the other groups
only list names. Scalars are written as JSON, which YAML reads back unchanged, and
the text is built directly: yaml.dump costs seconds on 10k-device fabrics.

Injection (issue 15, finding 3): Ansible templates every string it reads from an
inventory, so "{{ lookup('pipe', ...) }}" in a value runs on the controller. The intent
model already limits names, users and interfaces to plain characters; here every string
is still checked once more: one made only of the characters such names use is written
as a JSON string (always quoted, so `0x10`, `1.5`, `yes` or `null` stay strings), any
other is tagged `!unsafe`, which Ansible reads verbatim and never templates
(docs.ansible.com, "Advanced playbook syntax: Unsafe or raw strings").
"""

from __future__ import annotations

import json
import re

from generator.checks.qos_rules import roce_active_mtu
from generator.plan.model import (
    ROLE_LEAF,
    ROLE_SPINE,
    ROLE_SUPER_SPINE,
    FabricPlan,
    Host,
    HostRollout,
    Switch,
)
from generator.plan.nccl import gid_check_index

ROLE_GROUPS = ((ROLE_LEAF, "leaf"), (ROLE_SPINE, "spine"), (ROLE_SUPER_SPINE, "super_spine"))


# No Jinja delimiter ({{ {% {#), no quote, space or control character: nothing Ansible templates.
# '%' alone forms no delimiter without '{' or '}' (a serial batch such as "10%").
_PLAIN = re.compile(r"[A-Za-z0-9_.:/,=+@%-]*")


def _s(value: object) -> str:
    """A scalar as YAML that Ansible reads back as the same value, never templated."""
    if isinstance(value, str) and not _PLAIN.fullmatch(value):
        return "!unsafe " + json.dumps(value)
    return json.dumps(value)


def _switch_vars(sw: Switch, pad: str) -> list[str]:
    out = [f"{pad}{_s(sw.name)}:",
           f"{pad}  ansible_host: {_s(sw.mgmt_ip)}",
           f"{pad}  fabricgen_role: {_s(sw.role)}",
           f"{pad}  fabricgen_model: {_s(sw.model)}",
           f"{pad}  fabricgen_asn: {sw.asn}",
           f"{pad}  fabricgen_loopback: {_s(sw.loopback)}"]
    for key, value in (("rail", sw.rail), ("unit", sw.unit), ("group", sw.group)):
        if value is not None:
            out.append(f"{pad}  fabricgen_{key}: {value}")
    return out


def _host_vars(host: Host, pad: str, scheduler_node: str = "") -> list[str]:
    out = [f"{pad}{_s(host.name)}:",
           f"{pad}  ansible_host: {_s(host.mgmt_ip)}",
           f"{pad}  fabricgen_index: {host.index}"]
    if scheduler_node:      # deploy.hosts.scheduler_node (left out when unset: no byte changes)
        out.append(f"{pad}  fabricgen_scheduler_node: {_s(scheduler_node.replace('{host}', host.name))}")
    for key, value in (("unit", host.unit), ("group", host.group)):
        if value is not None:
            out.append(f"{pad}  fabricgen_{key}: {value}")
    out.append(f"{pad}  fabricgen_rails:")
    for nic in host.nics:
        out.append(
            f"{pad}    - {{rail: {nic.rail}, netdev: {_s(nic.netdev)}, rdma: {_s(nic.rdma)}, "
            f"ip: {_s(nic.ip)}, gateway: {_s(nic.gateway)}, table: {100 + nic.rail}, "
            f"switch: {_s(nic.switch)}, port: {_s(nic.port)}}}")
    return out


def _gid_index(plan: FabricPlan) -> str:
    """The GID index nccl.conf pins as text, "" when NCCL auto-selects (as roce-qos.sh's GID_INDEX)."""
    index = gid_check_index(plan.nccl) if plan.nccl is not None else None
    return "" if index is None else str(index)


def _rollout_vars(rollout: HostRollout, pad: str) -> list[str]:
    """deploy.hosts as the `hosts` group's vars: the deploy user and what playbooks/hosts.yml
    reads for serial, max_fail_percentage, the drain hooks and the GPUDirect pre-flight."""
    serial = ", ".join(_s(v) for v in rollout.serial())
    # the scheduler keys only when set: an inventory without them drains as before
    scheduler = [f"{pad}  fabricgen_hosts_scheduler: {_s(rollout.scheduler)}",
                 f"{pad}  fabricgen_hosts_drain_timeout: {rollout.drain_timeout}"] \
        if rollout.scheduler != "none" else []
    # written only when set: an inventory without it takes forks from its largest batch
    forks = [f"{pad}  fabricgen_hosts_forks: {rollout.forks}"] if rollout.forks is not None else []
    return [f"{pad}vars:",
            f"{pad}  ansible_user: {_s(rollout.user)}",
            f"{pad}  fabricgen_hosts_serial: [{serial}]",
            f"{pad}  fabricgen_hosts_max_fail_percentage: {rollout.max_fail_percentage}",
            # shell command templates run on the controller, {host} = the inventory name
            f"{pad}  fabricgen_hosts_drain: {_s(rollout.drain)}",
            f"{pad}  fabricgen_hosts_undrain: {_s(rollout.undrain)}",
            f"{pad}  fabricgen_require_gpudirect: {_s(rollout.require_gpudirect)}", *scheduler, *forks]


def _names(names: list[str], pad: str) -> list[str]:
    return [f"{pad}{_s(n)}: {{}}" for n in names]


def render_inventory(plan: FabricPlan) -> str:
    # a comment ends at a line break: the name goes in as JSON unless it is plain
    label = plan.fabric if _PLAIN.fullmatch(plan.fabric) else json.dumps(plan.fabric)
    lines = [f"# Generated by fabricgen for fabric {label}: Ansible inventory (ansible-inventory -i).",
             "all:",
             "  vars:",
             f"    fabricgen_fabric: {_s(plan.fabric)}",
             f"    fabricgen_mgmt_interface: {_s(plan.mgmt_interface)}",
             f"    fabricgen_rail_pool: {_s(plan.rail_pool)}",
             f"    fabricgen_host_mtu: {plan.qos.host_mtu}",
             f"    fabricgen_nic_tooling: {_s(plan.nic_tooling)}",
             # what the host pre-flight expects of every rail port: its speed, the RoCE active
             # MTU the host MTU gives (kernel iboe_get_mtu) and the GID index nccl.conf pins
             f"    fabricgen_nic_speed_gbps: {plan.nic_speed_g}",
             f"    fabricgen_roce_mtu: {roce_active_mtu(plan.qos.host_mtu) or 0}",
             f"    fabricgen_gid_index: {_s(_gid_index(plan))}",
             "  children:"]

    by_role = {role: [sw for sw in plan.switches if sw.role == role] for role, _ in ROLE_GROUPS}
    if plan.switches:
        lines += ["    switches:",
                  "      vars:",
                  f"        ansible_user: {_s(plan.deploy_user)}",
                  f"        fabricgen_switch_os: {_s(plan.switch_os)}",
                  "      children:"]
        for role, group in ROLE_GROUPS:
            if by_role[role]:
                lines += [f"        {group}:", "          hosts:"]
                for sw in by_role[role]:
                    lines += _switch_vars(sw, "            ")

    rails = sorted({sw.rail for sw in plan.switches if sw.rail is not None})
    for r in rails:
        lines += [f"    rail{r}:", "      hosts:"]
        lines += _names([sw.name for sw in by_role[ROLE_LEAF] if sw.rail == r], "        ")

    for attr, prefix in (("unit", "unit"), ("group", "group")):
        members: dict[int, list[str]] = {}
        for dev in (*plan.switches, *plan.hosts):
            value = getattr(dev, attr)
            if value is not None:
                members.setdefault(value, []).append(dev.name)
        for value in sorted(members):
            lines += [f"    {prefix}{value}:", "      hosts:"]
            lines += _names(members[value], "        ")

    if plan.hosts:
        lines += ["    hosts:"] + _rollout_vars(plan.host_rollout, "      ")
        if plan.host_lldpd:         # playbooks/hosts.yml, tag lldpd (left out when off: no byte changes)
            lines.append("        fabricgen_lldpd: true")
        lines += ["      hosts:"]
        for host in plan.hosts:
            lines += _host_vars(host, "        ", plan.host_rollout.scheduler_node)
    return "\n".join(lines) + "\n"


__all__ = ["render_inventory"]
