"""`fabricgen hosts discover`: ask every GPU server which RDMA NICs it has and write the discovery file.

playbooks/discover.yml runs playbooks/files/fabricgen_nics.py on each host (read-only, through
ansible-runner with strict host keys, as the deploy does): netdev -> RDMA device -> PCI, port,
link layer, state and rate from sysfs, the netdev's MAC (what lldpd announces as the LLDP port
ID by default, so `verify` can recognise the NIC on its switch port), and the GPUDirect RDMA path. The answers are written as
the discovery file the intent's `hosts.discovered` names (format below, deterministic bytes: no
timestamps, hosts and NICs sorted), and one line per host compares them with the rails the
intent renders, so a DGX whose compute NICs are mlx5_0,3,4,5,6,9,10,11 shows up before NCCL
falls back to TCP sockets.

    # Written by `fabricgen hosts discover`: ...
    version: 1
    hosts:
      gpu01:
        gpudirect: nvidia-peermem        # nvidia-peermem | dmabuf | none
        nics:                            # every netdev with an RDMA device, sorted by netdev
          - {netdev: ens1f0np0, mac: "0c:42:a1:00:00:01", rdma: mlx5_0, pci: "0000:08:00.0", port: 1, link_layer: Ethernet, state: ACTIVE, rate_gbps: 400}

`mac` is written when the host reported one (files of earlier releases have none and stay valid),
`gpus` when it reported GPUs (rail r is GPU r's nic in the plan when there is one GPU per rail):

      gpu01:
        gpudirect: nvidia-peermem
        gpus:                            # optional: NVIDIA GPUs in nvidia-smi's order (PCI bus order)
          - {pci: "0000:1b:00.0", numa_node: 0, nic: ens1f0np0}     # nic: the GPU's nearest NIC (PCIe)

A host's answer is hostile input: above MAX_PROBE_CHARS it is refused unread, the JSON goes
through device_data.parse_json (size and depth caps), the entry through the loader's own reader.
A host that cannot be read (unreachable, the task's timeout, a traceback, hostile output) is one
line `<host>: not read: <why>` (its own words capped to one printable line) and the others are
written. Exit codes: 0 every host read and the file written; 1 a host not read (the file is
still written) or nothing could be run.

A host that cannot be read keeps its entry from an existing file at -o, under a STALE comment
(so one unreachable server in 500 does not lose what was known about it: its NICs rarely change,
and without the entry its next render falls back to hosts.rails' guessed names, which pre-flight
stops). The comment marks it for the operator; the loader reads the entry as usual.
"""

from __future__ import annotations

import json
import re
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from generator.common.errors import FabricgenError
from generator.device_data import DeviceDataError, parse_json

HEADER = ("# Written by `fabricgen hosts discover`: the rail NICs each host reported "
          "(netdev -> RDMA device -> PCI).")
VERSION = 1
NIC_KEYS = ("netdev", "mac", "rdma", "pci", "port", "link_layer", "state", "rate_gbps")
GPU_KEYS = ("pci", "numa_node", "nic")
# A host's answer is ~250 bytes per NIC and ~60 per GPU: 256 NICs and 64 GPUs stay far below 1 MiB.
# Anything longer is not the probe's (a hostile or broken host) and is not parsed at all.
MAX_PROBE_CHARS = 1024 * 1024
MAX_REASON_CHARS = 200              # a host's own text quoted in its "not read" line
STALE = "# not read by the last `fabricgen hosts discover`: this entry is from the file before"
OPTIONAL_NIC_KEYS = ("mac",)        # left out of the file when the host did not report it
# YAML 1.1 reads these plain words as booleans or null: such a string is written quoted
_YAML_WORDS = {"y", "n", "yes", "no", "on", "off", "true", "false", "null", "~"}
_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*")


class DiscoveryError(FabricgenError, ValueError):
    """A host's answer is not what fabricgen_nics.py prints."""


@dataclass
class HostFinding:
    name: str
    entry: dict | None = None           # the discovery file entry (None: not read)
    error: str = ""
    notes: list[str] = field(default_factory=list)


def _scalar(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return json.dumps(value)
    text = str(value)
    if _PLAIN.fullmatch(text) and text.lower() not in _YAML_WORDS:
        return text
    return json.dumps(text)


def parse_probe(stdout: str) -> dict:
    """The discovery entry from fabricgen_nics.py's JSON (its last line), in the file's key order;
    generator/intent/discovery.py judges the values (check_entry). The answer is a host's, so hostile:
    longer than MAX_PROBE_CHARS is refused unread, the JSON is size- and depth-capped (device_data)."""
    stdout = stdout or ""
    if len(stdout) > MAX_PROBE_CHARS:
        raise DiscoveryError(f"the NIC probe printed {len(stdout):,} characters, above the {MAX_PROBE_CHARS:,} "
                             "its answer can be: refused unread")
    try:
        data = parse_json(stdout.strip().splitlines()[-1], "the NIC probe's JSON")
    except IndexError:
        raise DiscoveryError("the NIC probe printed no JSON") from None
    except DeviceDataError as exc:       # a host's answer: capped like a switch's
        raise DiscoveryError("the NIC probe printed no JSON" if ": not JSON" in str(exc) else str(exc)) from None
    if not isinstance(data, dict) or not isinstance(data.get("nics"), list):
        raise DiscoveryError("the NIC probe's JSON has no `nics` list")
    nics = []
    for nic in data["nics"]:
        if not isinstance(nic, dict) or not isinstance(nic.get("netdev"), str):
            raise DiscoveryError("a NIC entry without a netdev name")
        nics.append({key: nic.get(key) for key in NIC_KEYS})
        nics[-1]["pci"] = str(nic.get("pci") or "")
        nics[-1]["mac"] = nic.get("mac") or None      # "" from the probe: the address was unreadable
    gpus = data.get("gpus") or []
    if not isinstance(gpus, list) or not all(isinstance(g, dict) for g in gpus):
        raise DiscoveryError("the NIC probe's `gpus` is not a list of GPUs")
    # GPU order is the probe's (nvidia-smi's index order): kept as reported
    return {"gpudirect": data.get("gpudirect"), "nics": sorted(nics, key=lambda n: n["netdev"]),
            "gpus": [{"pci": str(g.get("pci") or ""), "numa_node": g.get("numa_node"), "nic": g.get("nic") or None}
                     for g in gpus]}


def check_entry(name: str, entry: dict) -> None:
    """Raise DiscoveryError unless the reader of the file (generator/intent/discovery.py) accepts
    `entry` for host `name`: the file never holds what the intent loader would refuse."""
    from generator.intent.discovery import parse_discovery
    from generator.intent.loader import IntentError

    try:
        text = discovery_text({name: entry})
    except (KeyError, TypeError) as exc:
        raise DiscoveryError(f"the NIC probe's answer lacks {exc}") from None
    try:
        parse_discovery(text, "(reply)")
    except IntentError as exc:
        problem = exc.problems[0]
        where = problem.path.removeprefix(f"hosts.{name}.") if problem.path else ""
        raise DiscoveryError(f"the host reported {where + ': ' if where else ''}{problem.message}") from None


def discovery_text(hosts: dict[str, dict], stale: frozenset[str] | set[str] = frozenset()) -> str:
    """The discovery file for `hosts` (name -> entry): same input, same bytes. Hosts in `stale` (not read
    by this run, entry kept from the file before) carry a comment saying so."""
    lines = [HEADER, f"version: {VERSION}", "hosts:" if hosts else "hosts: {}"]
    for name in sorted(hosts):
        entry = hosts[name]
        if name in stale:
            lines.append(f"  {STALE}")
        lines += [f"  {_scalar(name)}:", f"    gpudirect: {_scalar(entry['gpudirect'])}"]
        if entry.get("gpus"):
            lines.append("    gpus:                 # nvidia-smi's order; nic: the GPU's nearest NIC (PCIe)")
            for gpu in entry["gpus"]:
                fields = ", ".join(f"{key}: {json.dumps(gpu[key]) if key == 'pci' else _scalar(gpu[key])}"
                                   for key in GPU_KEYS)
                lines.append(f"      - {{{fields}}}")
        if not entry["nics"]:
            lines.append("    nics: []")
            continue
        lines.append("    nics:")
        for nic in sorted(entry["nics"], key=lambda n: n["netdev"]):
            fields = ", ".join(f"{key}: {json.dumps(nic[key]) if key in ('pci', 'mac') else _scalar(nic[key])}"
                               for key in NIC_KEYS
                               if key not in OPTIONAL_NIC_KEYS or nic.get(key) is not None)
            lines.append(f"      - {{{fields}}}")
    return "\n".join(lines) + "\n"


def previous_entries(path: Path) -> dict[str, dict]:
    """Entries of an existing discovery file at `path` ({} when there is none or it is not one)."""
    from generator.common.bounded_read import read_bounded_text
    from generator.intent.discovery import DiscoveryFormatError, max_discovered_bytes, plain_document
    from generator.intent.loader import IntentError

    try:
        # the file -o names, read as the intent reads it: bounded, no aliases; a FIFO or a bomb there is "none"
        data = plain_document(read_bounded_text(path, max_discovered_bytes()))
    except (OSError, DiscoveryFormatError, IntentError):
        return {}
    if not isinstance(data, dict) or data.get("version") != VERSION or not isinstance(data.get("hosts"), dict):
        return {}
    kept = {}
    for name, entry in data["hosts"].items():
        try:
            kept[str(name)] = parse_probe(json.dumps(entry))
            check_entry(str(name), kept[str(name)])
        except (DiscoveryError, TypeError, ValueError):
            kept.pop(str(name), None)
    return kept


def compare(host, entry: dict) -> list[str]:
    """What differs between the rails the plan renders for `host` and what it reported. With one GPU
    per rail the rails are the GPUs' nearest NICs in GPU order (what the next render takes)."""
    by_netdev = {n["netdev"]: n for n in entry["nics"]}
    notes = []
    rendered = [nic.netdev for nic in host.nics]
    order = gpu_order(host, entry)
    rails = [(nic.rail, nic.netdev, nic.rdma) for nic in host.nics]
    if order is not None and order != rendered:
        notes.append(f"rails by GPU (rail r = GPU r's nearest NIC) are {','.join(order)}, the render has "
                     f"{','.join(rendered)}")
        rails = [(r, netdev, by_netdev[netdev]["rdma"]) for r, netdev in enumerate(order)]
    for rail, netdev, rdma in rails:
        found = by_netdev.get(netdev)
        label = f"rail {rail} {netdev}"
        if found is None:
            notes.append(f"{label} not found")
            continue
        if found["rdma"] != rdma:
            notes.append(f"{label} is {found['rdma']}, the render says {rdma}")
        if found["link_layer"] != "Ethernet":
            notes.append(f"{label} runs {found['link_layer'] or 'an unknown link layer'}")
        elif found["state"] != "ACTIVE":
            notes.append(f"{label} is {found['state'] or 'in an unknown state'}")
    if entry["gpudirect"] == "none":
        notes.append("no GPUDirect RDMA path")
    gpus = entry.get("gpus") or []
    if gpus and len(gpus) != len(host.nics):
        notes.append(f"{len(gpus)} GPU(s) for {len(host.nics)} rail(s): the rails keep hosts.rails' order, "
                     "not one NIC per GPU")
    elif gpus and any(g["nic"] is None for g in gpus):
        notes.append("a GPU has no NIC of its own: the rails keep hosts.rails' order")
    return notes


def gpu_order(host, entry: dict) -> list[str] | None:
    """The rail netdevs in GPU order when the host reported one GPU per rail, each with its own reported
    NIC (as DiscoveredHost.gpu_rails decides for the plan); else None."""
    gpus = entry.get("gpus") or []
    netdevs = {n["netdev"] for n in entry["nics"]}
    if not gpus or len(gpus) != len(host.nics) or any(g["nic"] not in netdevs for g in gpus):
        return None
    return [g["nic"] for g in gpus]


def _reason(text: str) -> str:
    """A host's own words for its "not read" line: one line, printable, capped."""
    line = " ".join(str(text).split())
    line = "".join(c if c.isprintable() else "?" for c in line[:MAX_REASON_CHARS * 4])
    return line if len(line) <= MAX_REASON_CHARS else line[:MAX_REASON_CHARS] + "... (cut)"


def _host_line(finding: HostFinding, kept: bool) -> str:
    if finding.entry is None or finding.error:
        tail = ("; its entry from the previous file is kept, marked as not read" if kept
                else "; it is not in the file")
        return f"{finding.name}: not read: {_reason(finding.error)}{tail}"
    rails = ", ".join(finding.notes) if finding.notes else "rails as the render says"
    gpus = finding.entry.get("gpus") or []
    gpu_part = f", {len(gpus)} GPU(s)" if gpus else ""
    return (f"{finding.name}: {len(finding.entry['nics'])} RDMA netdev(s){gpu_part}, GPUDirect "
            f"{finding.entry['gpudirect']}: {rails}")


def _plan(intent_path: str, err):
    """The plan to discover for, or None after one line per problem. An intent whose hosts.discovered
    file is missing or unreadable (the first discovery; or the file this run replaces) is planned with
    its own rails instead, with a note: the file's own error tells the operator to run this command."""
    from generator.checks.runner import checked_plan
    from generator.intent.loader import IntentError, LoadedIntent, load_intent, parse_yaml, validate_data

    try:
        loaded = load_intent(intent_path)
    except IntentError as exc:
        try:
            text = Path(intent_path).read_text(encoding="utf-8")
            data, lines = parse_yaml(text, intent_path)
            intent = validate_data(data, lines, intent_path)
        except (IntentError, OSError, UnicodeDecodeError):
            intent = None
        if intent is None or intent.hosts.discovered is None:
            for problem in exc.problems:
                print(f"error: {problem}", file=err)
            return None
        print(f"note: {exc.problems[0]}; discovering against the intent's own rails", file=err)
        loaded = LoadedIntent(intent=intent, file=intent_path, lines=lines, text=text, discovered=None)
    return checked_plan(loaded, "discovering the hosts", err)


def run_discover(intent_path: str, *, out: str, endpoints: str | None = None, limit: str | None = None,
                 stdout=None, stderr=None) -> int:
    """Exit 0: every host read and the file written; 1: a host could not be read (the file is still
    written with what was read and kept), or nothing could be run."""
    from generator.common.atomic_write import write_atomic
    from generator.devices.credentials import CredentialsError, endpoint_host_access, endpoint_host_vars
    from generator.render.inventory import render_inventory

    out_stream = stdout or sys.stdout
    err = stderr or sys.stderr
    plan = _plan(intent_path, err)
    if plan is None:
        return 1
    if not plan.hosts:
        print(f"error: {intent_path}: the plan has no hosts to discover", file=err)
        return 1
    section = None
    if endpoints is not None:
        from generator.devices.endpoints import EndpointsError, load_endpoints

        try:
            data = load_endpoints(endpoints) or {}
        except EndpointsError as exc:
            print(f"error: {exc}", file=err)
            return 1
        if not isinstance(data, dict) or "hosts" not in data:
            print(f"error: {endpoints} lists no hosts: add a `hosts:` section (user, ssh_key, extravars)", file=err)
            return 1
        section = data["hosts"]
    extravars, ssh_key = endpoint_host_access(section, endpoints)
    try:
        host_vars = endpoint_host_vars(section)
    except CredentialsError as exc:
        print(f"error: {endpoints}: {exc}", file=err)
        return 1
    known_hosts = (Path(endpoints) if endpoints else Path(intent_path)).resolve().parent / "known_hosts"
    try:
        from generator.deploy.hosts import DISCOVER_TASK, run_discover_playbook
    except ImportError as exc:
        print(f"error: host discovery needs ansible-runner ({exc.name} is not installed)", file=err)
        return 1

    with tempfile.TemporaryDirectory(prefix="fabricgen-discover-") as tmp:
        inventory = Path(tmp) / "inventory.yml"
        inventory.write_text(render_inventory(plan), encoding="utf-8")
        try:
            run = run_discover_playbook(inventory, limit=limit, extravars=extravars, ssh_key=ssh_key,
                                        known_hosts=known_hosts if known_hosts.is_file() else None,
                                        private_data_dir=Path(tmp) / "runner", host_vars=host_vars)
        except (OSError, RuntimeError) as exc:
            print(f"error: discovery run failed: {exc}", file=err)
            return 1

    failures: dict[str, str] = {}
    for host, _task, message in run.failures:
        failures.setdefault(host, message)
    reached = set(run.hosts)
    findings = []
    absent = [h.name for h in plan.hosts if host_vars and h.name not in host_vars]
    if absent:
        # a lab started with --hosts N: the others are not installed, their entries kept as they are
        print(f"{len(absent)} host(s) not in the endpoints file's hosts.servers (not installed), skipped: "
              f"{', '.join(absent[:8])}{' ...' if len(absent) > 8 else ''}", file=out_stream)
    for host in plan.hosts:
        if (limit is not None and host.name not in reached) or host.name in absent:
            continue            # outside --limit or not installed: its entry is kept as it is
        finding = HostFinding(host.name)
        res = run.results.get(host.name, {}).get(DISCOVER_TASK)
        if host.name in failures:
            finding.error = failures[host.name]
        elif res is None:
            finding.error = "not reached by the playbook run"
        else:
            try:
                finding.entry = parse_probe(str(res.get("stdout") or ""))
                check_entry(host.name, finding.entry)
                finding.notes = compare(host, finding.entry)
            except DiscoveryError as exc:
                finding.error = str(exc)
        findings.append(finding)

    target = Path(out)
    previous = previous_entries(target) if target.exists() else {}
    names = {h.name for h in plan.hosts}
    entries = {name: entry for name, entry in previous.items() if name in names}
    for finding in findings:
        if finding.entry is not None and not finding.error:
            entries[finding.name] = finding.entry
    stale = {f.name for f in findings if f.error and f.name in entries}
    for finding in findings:
        line = _host_line(finding, kept=finding.name in entries)
        print(line, file=err if finding.error else out_stream)
    try:
        write_atomic(target, discovery_text(entries, stale))
    except OSError as exc:
        print(f"error: cannot write {out}: {exc.strerror}", file=err)
        return 1
    unread = sum(1 for f in findings if f.error)
    differs = sum(1 for f in findings if f.notes)
    print(f"wrote {out}: {len(entries)} host(s); {unread} not read, {differs} differ from the render"
          + (" (name it in the intent as hosts.discovered and re-render)" if differs else ""), file=out_stream)
    return 1 if unread else 0


__all__ = ["run_discover", "discovery_text", "parse_probe", "check_entry", "compare", "gpu_order", "previous_entries",
           "DiscoveryError"]
