"""`host-roce`: the GPU servers' RoCE state through their Ansible inventory (ansible-runner).

Per host, two read-only tasks: the rendered `roce-qos.sh --check` (trust DSCP, PFC, ECN/CNP,
ToS and GIDs as rendered; exit 1 lists what differs, the script's own contract) and
`rdma -j link show` (iproute2: every rail's RDMA device ACTIVE / LINK_UP on the planned
netdev). Both run as the deploy playbook runs roce-qos.sh: `script` from the controller, with
`fabricgen_qos_environment` as environment, so nothing is installed or changed.

`host-counters`: the rails' RoCE counters read twice (`roce-qos.sh --counters`, a pause of the
verify interval between), as the switch counters are: RDMA hw_counters (np_cnp_sent,
rp_cnp_handled, np_ecn_marked_roce_packets, out_of_sequence, packet_seq_err) and mlx5's per-priority
PFC pause frames (`ethtool -S`). A finding is a counter that climbs faster than its threshold.
"""

from __future__ import annotations

import math
import os
import shlex
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from generator.device_data import DeviceDataError, parse_json
from generator.render.hosts import SEQ_ERR_PER_S
from generator.verify.model import ERROR, WARNING, Finding

PLAYBOOK = """\
- name: fabricgen verify host-roce (read-only)
  hosts: hosts
  gather_facts: false
  vars:
    fabricgen_qos_environment: {}
  tasks:
    - name: roce-qos --check
      ansible.builtin.script:
        cmd: "{{ fabricgen_render_dir }}/hosts/{{ inventory_hostname }}/roce-qos.sh --check"
        executable: /bin/sh
      environment: "{{ fabricgen_qos_environment }}"
      check_mode: false
      changed_when: false
      failed_when: false
    - name: rdma link
      ansible.builtin.command: rdma -j link show
      environment: "{{ fabricgen_qos_environment }}"
      check_mode: false
      changed_when: false
      failed_when: false
    - name: counters read 1
      ansible.builtin.script:
        cmd: "{{ fabricgen_render_dir }}/hosts/{{ inventory_hostname }}/roce-qos.sh --counters"
        executable: /bin/sh
      environment: "{{ fabricgen_qos_environment }}"
      check_mode: false
      changed_when: false
      failed_when: false
    - name: counters interval
      ansible.builtin.pause:
        seconds: "{{ fabricgen_counter_interval }}"
    - name: counters read 2
      ansible.builtin.script:
        cmd: "{{ fabricgen_render_dir }}/hosts/{{ inventory_hostname }}/roce-qos.sh --counters"
        executable: /bin/sh
      environment: "{{ fabricgen_qos_environment }}"
      check_mode: false
      changed_when: false
      failed_when: false
"""

# counters that climbing fast means lost or reordered RoCE packets (each a go-back-N retransmission)
SEQ_ERRORS = ("out_of_sequence", "packet_seq_err")
# DCQCN at work: CNPs sent (notification point) and handled (reaction point), ECN-marked RoCE packets
CONGESTION = ("np_cnp_sent", "rp_cnp_handled", "np_ecn_marked_roce_packets")


@dataclass
class HostReading:
    name: str
    qos: tuple[int, str] | None = None          # (rc, stdout) of roce-qos.sh --check
    rdma: tuple[int, str] | None = None         # (rc, stdout) of rdma -j link show
    counters: list[tuple[int, str]] = field(default_factory=list)   # (rc, stdout) of the two --counters
    error: str = ""
    notes: list[str] = field(default_factory=list)


def rdma_findings(host, rdma_json: str) -> list[Finding]:
    """Every planned rail: its RDMA device exists, is ACTIVE / LINK_UP and sits on the planned netdev."""
    try:
        links = parse_json(rdma_json or "[]", "rdma -j link show")
    except DeviceDataError:
        return [Finding("host-roce", host.name, "", "rdma -j link show JSON", "unreadable output", ERROR,
                        f"{host.name}: `rdma -j link show` printed no JSON")]
    # iproute2 rdma/link.c prints one object per port: "ifname" is "<device>/<port>" (mlx5_0/1),
    # with "state" (ACTIVE...), "physical_state" (LINK_UP...) and "netdev" when one is bound.
    links = links if isinstance(links, list) else []
    by_device = {str(entry.get("ifname")).split("/")[0]: entry for entry in links if isinstance(entry, dict)}
    findings = []
    for nic in host.nics:
        entry = by_device.get(nic.rdma)
        expected = f"{nic.rdma} ACTIVE LINK_UP on {nic.netdev}"
        if entry is None:
            observed = "no such RDMA device"
        elif entry.get("state") != "ACTIVE" or entry.get("physical_state") != "LINK_UP":
            observed = f"{entry.get('state')} {entry.get('physical_state')}"
        elif entry.get("netdev") and entry.get("netdev") != nic.netdev:
            observed = f"on {entry.get('netdev')}"
        else:
            continue
        findings.append(Finding("host-roce", host.name, nic.netdev, expected, observed, ERROR,
                                f"{host.name} rail {nic.rail}: {nic.rdma} expected ACTIVE/LINK_UP on "
                                f"{nic.netdev}, observed {observed}"))
    return findings


def qos_findings(host, rc: int, stdout: str) -> list[Finding]:
    if rc == 0:
        return []
    # roce-qos.sh prints "ok: ...", "differs: WHAT: have 'X', want 'Y'" and "error: ..." lines
    lines = [line.strip() for line in stdout.splitlines() if line.strip()]
    differs = [line for line in lines if line.startswith(("differs:", "error:"))][:5] or lines[-1:]
    observed = "; ".join(differs) or f"exit {rc}"
    return [Finding("host-roce", host.name, "", "roce-qos.sh --check passes", observed, ERROR,
                    f"{host.name}: roce-qos.sh --check: {observed}")]


def parse_counters(text: str) -> tuple[int | None, dict[tuple[str, str], int]]:
    """(host clock in s or None, {(netdev, counter): value}) from `roce-qos.sh --counters`:
    "at: <epoch s>", then "counter: <netdev> <name> <value>" lines."""
    at, values = None, {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == "at:" and parts[1].isdigit():
            at = int(parts[1])
        elif len(parts) == 4 and parts[0] == "counter:" and parts[3].isdigit():
            values[(parts[1], parts[2])] = int(parts[3])
    return at, values


def counter_findings(host, first: str, second: str, interval_s: float, *, pfc_threshold: float,
                     ecn_threshold: float, seq_threshold: float = SEQ_ERR_PER_S) -> list[Finding]:
    """Counters that climbed between the two reads faster than their threshold, per rail netdev.

    Sequence errors are errors (RoCE packets lost or reordered in a fabric meant to be lossless),
    pause frames on a priority beyond the switch side's PFC threshold are errors (a pause storm,
    or a host that cannot take traffic at line rate), CNPs and ECN marks beyond the switch side's
    ECN threshold are warnings (congestion control doing its work, but a lot of it). The interval
    is the hosts' own clock between the reads when longer than the verify interval."""
    at1, before = parse_counters(first)
    at2, after = parse_counters(second)
    seconds = max(interval_s, float(at2 - at1) if at1 is not None and at2 is not None else 0.0, 1e-3)
    findings = []
    for nic in host.nics:
        for (netdev, name), value in sorted(after.items()):
            if netdev != nic.netdev or (netdev, name) not in before:
                continue
            delta = value - before[(netdev, name)]
            if delta <= 0:                  # flat, or reset by a driver reload between the reads
                continue
            rate = delta / seconds
            if name in SEQ_ERRORS:
                limit, severity, what = seq_threshold, ERROR, "RoCE packets lost or reordered"
            elif name.endswith("_pause"):
                limit, severity = pfc_threshold, ERROR
                what = "the leaf pauses this rail" if name.startswith("rx") else "the host pauses the leaf"
            elif name in CONGESTION:
                limit, severity, what = ecn_threshold, WARNING, "congestion control at work"
            else:
                continue
            if rate <= limit:
                continue
            observed = f"{name} +{delta} in {seconds:.1f}s ({rate:.0f}/s)"
            findings.append(Finding("host-counters", host.name, netdev, f"{name} <= {limit:g}/s", observed, severity,
                                    f"{netdev} on {host.name} (rail {nic.rail}): {observed}: {what}"))
    return findings


def read_hosts(render_dir: Path, inventory: Path, *, known_hosts: Path | None, extravars: dict,
               ssh_key: Path | None, counter_interval_s: float = 5.0, limit: str | None = None,
               host_vars: dict[str, dict] | None = None) -> dict[str, HostReading]:
    """host_vars: {host: vars} laid over the inventory's, as deploy/hosts.py run_playbook does: where
    each of a lab's GPU servers listens (devices/credentials.py endpoint_host_vars)."""
    import ansible_runner
    import yaml

    from generator.devices.credentials import endpoint_overlay, servers_only

    work = Path(tempfile.mkdtemp(prefix="fabricgen-verify-"))
    try:
        playbook = work / "verify-hosts.yml"
        playbook.write_text(PLAYBOOK)
        (work / "runner").mkdir()              # ansible-runner's private_data_dir must exist
        ssh_args = ["-o StrictHostKeyChecking=yes"]
        if known_hosts is not None:
            ssh_args.append(f"-o UserKnownHostsFile={known_hosts.resolve()}")
        cmdline = f"--private-key {ssh_key.resolve()}" if ssh_key else None
        sources: str | None = str(inventory)
        if host_vars:
            # the overlay is read last, so its ansible_host/port win (ansible-runner would put its own -i after ours)
            overlay = work / "endpoint-hosts.yml"
            overlay.write_text(yaml.safe_dump(endpoint_overlay(host_vars), sort_keys=True), encoding="utf-8")
            limit = servers_only(limit)
            sources_args = f"-i {shlex.quote(str(Path(inventory).resolve()))} -i {shlex.quote(str(overlay))}"
            cmdline = " ".join(filter(None, [cmdline, sources_args]))
            sources = None
        runner = ansible_runner.run(
            private_data_dir=str(work / "runner"), playbook=str(playbook), inventory=sources,
            extravars={"fabricgen_render_dir": str(render_dir),
                       "fabricgen_counter_interval": max(1, math.ceil(counter_interval_s)), **extravars},
            cmdline=cmdline, quiet=True, limit=limit,
            envvars={"ANSIBLE_HOST_KEY_CHECKING": "True", "ANSIBLE_SSH_COMMON_ARGS": " ".join(ssh_args),
                     "ANSIBLE_RETRY_FILES_ENABLED": "False", "ANSIBLE_NOCOLOR": "1",
                     # short (a socket path is at most 108 bytes, unix(7)) and this run's own, as deploy's
                     "ANSIBLE_SSH_CONTROL_PATH_DIR": str(work / "cp"),
                     "LC_ALL": os.environ.get("LC_ALL") or "C.UTF-8",
                     "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", os.defpath)])})
        readings: dict[str, HostReading] = {}
        for event in runner.events:
            data = event.get("event_data") or {}
            host, task, res = data.get("host"), data.get("task", ""), data.get("res") or {}
            if not host:
                continue
            reading = readings.setdefault(host, HostReading(host))
            if event.get("event") == "runner_on_unreachable":
                reading.error = f"unreachable: {str(res.get('msg') or '').strip()[:200]}"
            elif event.get("event") == "runner_on_failed":
                reading.error = f"{task}: {str(res.get('msg') or '').strip()[:200]}"
            elif event.get("event") == "runner_on_ok":
                result = (int(res.get("rc", 0) or 0), str(res.get("stdout") or ""))
                if task.startswith("roce-qos"):
                    reading.qos = result
                elif task.startswith("rdma"):
                    reading.rdma = result
                elif task.startswith("counters read"):
                    reading.counters.append(result)
        return readings
    finally:
        shutil.rmtree(work, ignore_errors=True)
