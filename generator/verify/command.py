"""`fabricgen verify`: is the built fabric the planned one? (DESIGN.md: verify contract)

Switches are read through their napalm drivers (collect.py), endpoints and credentials as for
drift and deploy (devices/credentials.py); hosts through their Ansible inventory (hosts.py),
routed by the endpoints file's `hosts:` key exactly as drift routes them. Each check x device
is passed, failed, unknown (could not check) or skipped.

Exit: 0 all passed; 3 findings, every device checked; 1 something could not be checked.
`run_verify` and `run_soak` print nothing: they return what the CLI prints (VerifyRun, SoakRun).
"""

from __future__ import annotations

import io
import math
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from generator.common.atomic_write import write_atomic
from generator.safe_text import for_terminal
from generator.verify import checks as C
from generator.verify import control_plane as CP
from generator.verify import physical as P
from generator.verify.expected import PREFIX_TOLERANCE, Expectations, expectations
from generator.verify.model import HOST_CHECKS, NOT_INSTALLED, SWITCH_CHECKS, Outcome, VerifyReport, outcome
from generator.verify.report import FORMATS, RENDERERS

if TYPE_CHECKING:
    from rich.console import Console

DEFAULT_INTERVAL_S = 5.0
DEFAULT_SETTLE_S = 30.0
SSH_TIMEOUT = 20
# which getters each check needs (collect.py's error keys)
NEEDS = {"cabling": ("lldp", "interfaces"), "link": ("interfaces",), "speed": ("interfaces",),
         "mtu": ("interfaces",), "bgp": ("bgp",), "errors": ("counters",), "pfc": ("pfc",), "ecn": ("pfc",),
         "optics": ("transceivers",), "fec": ("phy",), "flaps": ("phy",), "hardware": ("environment",),
         "os-version": ("facts",), "ntp": ("ntp",), "ecmp": ("routes",)}
# the SwitchReading field each getter fills (collect.py)
READS = {"lldp": "lldp", "interfaces": "interfaces", "bgp": "bgp", "counters": "counters", "pfc": "pfc",
         "transceivers": "transceivers", "phy": "phy", "environment": "environment", "facts": "facts",
         "ntp": "ntp", "routes": "routes"}


def _unknown_all(name: str, reason: str, names=SWITCH_CHECKS) -> list[Outcome]:
    return [Outcome(check, name, "unknown", reason=reason) for check in names]


def switch_outcomes(readings: dict[str, C.SwitchReading], exp: Expectations, *, pfc_threshold: float,
                    ecn_threshold: float, prefix_tolerance: float) -> list[Outcome]:
    cabling = C.check_cabling(readings, exp)
    versions = CP.check_os_versions(readings, exp)
    out: list[Outcome] = []
    for name, reading in sorted(readings.items()):
        if "connect" in reading.errors:
            out += _unknown_all(name, reading.errors["connect"])
            continue
        link = C.check_link(reading, exp) if reading.interfaces is not None else {}
        results = {
            "cabling": lambda n=name: cabling.get(n, []),
            "link": lambda lk=link: lk["link"], "speed": lambda lk=link: lk["speed"],
            "mtu": lambda lk=link: lk["mtu"],
            "bgp": lambda r=reading: C.check_bgp(r, exp, prefix_tolerance),
            "errors": lambda r=reading: C.check_errors(r, exp),
            "pfc": lambda r=reading: C.check_pfc(r, exp, pfc_threshold),
            "ecn": lambda r=reading: C.check_ecn(r, exp, ecn_threshold),
            "optics": lambda r=reading: P.check_optics(r, exp),
            "fec": lambda r=reading: P.check_fec(r, exp),
            "flaps": lambda r=reading: P.check_flaps(r, exp),
            "hardware": lambda r=reading: P.check_hardware(r),
            "os-version": lambda n=name: versions.get(n, []),
            "ntp": lambda r=reading: CP.check_ntp(r, exp),
            "ecmp": lambda r=reading: CP.check_ecmp(r, exp),
        }
        for check in SWITCH_CHECKS:
            unsupported = [key for key in NEEDS[check] if key in reading.unsupported]
            if unsupported:
                out.append(Outcome(check, name, "skipped", reason=reading.unsupported[unsupported[0]]))
                continue
            if check == "ecmp" and not exp.ecmp.get(name):
                out.append(Outcome(check, name, "skipped", reason="the plan gives this switch no ECMP width to "
                                   "check (no other leaf, or equal-length paths that differ in AS path)"))
                continue
            missing = [key for key in NEEDS[check] if key in reading.errors]
            if not missing and any(getattr(reading, READS[key]) is None for key in NEEDS[check]):
                out.append(Outcome(check, name, "unknown", reason="not read"))
                continue
            if check == "bgp" and missing and not exp.sessions.get(name):
                missing = []       # nothing planned: no session can be missing
            if missing:
                out.append(Outcome(check, name, "unknown", reason=f"{missing[0]}: {reading.errors[missing[0]]}"))
            elif check == "flaps" and _flaps_uncounted(reading):
                out.append(Outcome(check, name, "skipped", reason="this switch OS counts no carrier changes in "
                                   "what its driver reads (SONiC's CLI tables have no such counter)"))
            elif check == "ecn" and _ecn_uncounted(reading):
                out.append(Outcome(check, name, "skipped", reason="this switch OS release counts no ECN-marked "
                                   "packets (SONiC before 202505 has no wredstat)"))
            else:
                out.append(outcome(check, name, results[check]()))
    return out


def _flaps_uncounted(reading: C.SwitchReading) -> bool:
    """The driver reported no carrier-change counter (oper.py phy_counters: None)."""
    return bool(reading.phy) and all(v.get("carrier_transitions") is None for v in reading.phy[1].values())


def _ecn_uncounted(reading: C.SwitchReading) -> bool:
    """The driver reported ecn_marked -1 (devices/oper.py UNCOUNTED): nothing to compare."""
    return bool(reading.pfc) and any(v.get("ecn_marked", 0) < 0 for v in reading.pfc[1].values())


def _host_section(endpoints: str | None):
    """(section, reason): the endpoints file's `hosts:` value, or why hosts cannot be reached."""
    from generator.devices.endpoints import hosts_section

    return hosts_section(endpoints)


def host_outcomes(plan, files: dict[str, str], endpoints: str | None, only: str | None, *,
                  interval_s: float = DEFAULT_INTERVAL_S, pfc_threshold: float = C.PFC_THRESHOLD_PER_S,
                  ecn_threshold: float = C.ECN_THRESHOLD_PER_S, names: list[str] | None = None) -> tuple[list[Outcome], str]:
    """The host checks of NAMES (default: every host of PLAN)."""
    from generator.verify import hosts as H

    every = [h.name for h in plan.hosts]
    names = every if names is None else names
    if not names:
        return [], ""
    section, reason = _host_section(endpoints)
    if section is None:
        status = "unknown" if only == "hosts" else "skipped"
        return ([Outcome(c, n, status, reason=reason) for n in names for c in HOST_CHECKS],
                f"host-roce and host-counters {status}: {reason}")
    from generator.devices.credentials import CredentialsError, endpoint_host_access, endpoint_host_vars

    extravars, ssh_key = endpoint_host_access(section, endpoints)
    try:
        host_vars = endpoint_host_vars(section)
    except CredentialsError as exc:
        return ([Outcome(c, n, "unknown", reason=f"{endpoints}: {exc}") for n in names for c in HOST_CHECKS],
                f"host-roce and host-counters unknown: {endpoints}: {exc}")
    absent: list[Outcome] = []
    if host_vars:
        # a lab started with --hosts N lists where each started server listens: the others are not there
        absent = [Outcome(c, n, NOT_INSTALLED, reason="not in the endpoints file's hosts.servers")
                  for n in names if n not in host_vars for c in HOST_CHECKS]
        names = [n for n in names if n in host_vars]
        if not names:
            return absent, ""
    from generator.render.output import write_tree

    known_hosts = Path(endpoints).resolve().parent / "known_hosts"
    with tempfile.TemporaryDirectory(prefix="fabricgen-verify-") as tmp:
        render_dir = write_tree(files, Path(tmp) / "render")
        try:
            readings = H.read_hosts(render_dir, render_dir / "inventory.yml", known_hosts=known_hosts,
                                    extravars=extravars, ssh_key=ssh_key, counter_interval_s=interval_s,
                                    limit=None if names == every else ",".join(names), host_vars=host_vars)
        except Exception as exc:  # noqa: BLE001 - any ansible failure leaves the hosts unknown
            text = " ".join(str(exc).split())[:300]
            return [Outcome(c, n, "unknown", reason=f"ansible run failed: {text}")
                    for n in names for c in HOST_CHECKS], ""
    out = []
    for host in plan.hosts:
        if host.name not in names:
            continue
        reading = readings.get(host.name)
        out.append(_counters_outcome(H, host, reading, max(1, math.ceil(interval_s)), pfc_threshold, ecn_threshold))
        if reading is None or reading.error or reading.qos is None or reading.rdma is None:
            why = (reading.error if reading else "") or "not reached by the ansible run"
            out.append(Outcome("host-roce", host.name, "unknown", reason=why))
            continue
        found = H.qos_findings(host, *reading.qos)
        rc, text = reading.rdma
        if rc != 0:
            out.append(Outcome("host-roce", host.name, "unknown", reason=f"rdma -j link show failed (exit {rc})"))
            continue
        out.append(outcome("host-roce", host.name, found + H.rdma_findings(host, text)))
    return out + absent, ""


def _counters_outcome(H, host, reading, interval_s: float, pfc_threshold: float, ecn_threshold: float) -> Outcome:
    if reading is None or reading.error:
        return Outcome("host-counters", host.name, "unknown",
                       reason=(reading.error if reading else "") or "not reached by the ansible run")
    if len(reading.counters) != 2 or any(rc != 0 for rc, _ in reading.counters):
        rcs = ", ".join(f"exit {rc}" for rc, _ in reading.counters) or "not run"
        return Outcome("host-counters", host.name, "unknown", reason=f"roce-qos.sh --counters: {rcs}")
    (_, first), (_, second) = reading.counters
    if not H.parse_counters(first)[1]:
        return Outcome("host-counters", host.name, "unknown", reason="roce-qos.sh --counters read no RoCE counter "
                       "(no hw_counters on the rails' RDMA devices)")
    return outcome("host-counters", host.name, H.counter_findings(
        host, first, second, interval_s, pfc_threshold=pfc_threshold, ecn_threshold=ecn_threshold))


def _switch_readings(plan, intent_path: str, endpoints: str | None, exp: Expectations, *, interval_s: float,
                     settle_s: float, concurrency: int, reachable: list[str],
                     planned_absent: dict[str, dict[str, str]],
                     streamed=None, progress=None) -> tuple[dict[str, C.SwitchReading], list[Outcome]]:
    from generator.devices.credentials import CredentialsError
    from generator.devices.opener import switch_logins

    unknown: list[Outcome] = []
    try:
        access, workers, make_driver = switch_logins(plan, reachable, intent_path, endpoints, concurrency,
                                                     SSH_TIMEOUT)
    except CredentialsError as exc:
        return {}, unknown + [o for n in reachable for o in _unknown_all(n, str(exc))]

    from rich.console import Console

    from generator.verify.collect import read_switches
    from generator.verify.ports import to_plan_names

    # the checks compare plan port names; a SONiC switch answers with Ethernet names (ports.py)
    # (BGP peers of SONiC fabrics are numbered: the settle loop's neighbor ids need no renaming)
    readings = read_switches(reachable, make_driver, access.password, interval_s=interval_s, settle_s=settle_s,
                             pending=_pending(plan, exp, planned_absent), workers=workers, streamed=streamed,
                             # without a terminal to show progress on, a console on a buffer: it is no
                             # terminal, so read_switches shows no bar and streams nothing
                             console=progress or Console(file=io.StringIO()))
    return to_plan_names(readings, plan), unknown


def _pending(plan, exp: Expectations, planned_absent: dict[str, dict[str, str]]):
    """The settle loop's planned sessions not yet established, without those on dark ports toward
    switches not installed (installed.py): they stay idle however long verify waits."""
    from generator.verify.installed import dark
    from generator.verify.ports import sonic_names

    names = sonic_names(plan) if planned_absent else {}

    def pending(reading: C.SwitchReading) -> list[str]:
        waiting = C.pending_sessions(reading, exp)
        toward = planned_absent.get(reading.name)
        if not waiting or not toward:
            return waiting
        sessions = exp.sessions.get(reading.name, {})
        return [n for n in waiting if not (sessions[n].port in toward
                                           and dark(reading, sessions[n].port, names.get(reading.name)))]

    return pending


def _installed_expectations(plan, exp: Expectations, absent_ports: list[tuple[str, str, str]],
                            absent: dict[str, str]) -> Expectations:
    """The expectations of the fabric as installed: without the dark ports toward switches not
    installed (both ends), and without ECMP toward a not-installed leaf none of whose ports is live."""
    ends: set[tuple[str, str]] = set()
    for device, port, _why in absent_ports:
        planned = exp.peer_port(device, port)
        ends.add((device, port))
        if planned is not None:
            ends.add((planned.peer_device, planned.peer_port))
    live = {p.peer_device for p in plan.ports
            if p.peer_device in absent and p.device not in absent and (p.device, p.port) not in ends}
    present = {sw.name for sw in plan.switches if sw.name not in absent or sw.name in live}
    return expectations(plan, frozenset(ends), present=present)


def _not_installed(plan, switches: list[str], endpoints: str | None, limit: str | None) -> dict[str, str]:
    """{switch of the plan: why it counts as not installed}: not listed in the endpoints file, or
    left out by --limit (installed.py)."""
    from generator.devices.endpoints import split_listed

    _listed, unlisted = split_listed([sw.name for sw in plan.switches], endpoints)
    out = {name: f"not listed in {endpoints}" for name in unlisted}
    if limit:
        out |= {sw.name: f"left out by --limit {limit}" for sw in plan.switches
                if sw.name not in switches and sw.name not in out}
    return out


# checks that compare switches with each other (both ends of a cable, one release across the
# fabric) wait for every reading; the others can be judged as soon as their switch is read
FABRIC_WIDE = ("cabling", "os-version")


def streamed_failures(plan, exp: Expectations, absent: dict[str, str] | None = None,
                      **thresholds) -> Callable[[str, C.SwitchReading], list[str]]:
    """The failed per-switch checks of one switch's reading, one line each, shown on a terminal
    while verify still reads the others (collect.read_switches); the report repeats them. Ports
    toward switches not installed, and ECMP toward them, are left to the report (installed.py)."""
    from generator.verify.ports import to_plan_names

    absent = absent or {}
    planned_absent: dict[str, dict[str, str]] = {}
    if absent:
        from generator.verify.installed import toward

        planned_absent = toward(plan, absent)

    def shown(name: str, check: str, finding) -> bool:
        if check == "ecmp":
            return exp.ecmp.get(name, {}).get(finding.port, (0, ""))[1] not in absent
        return finding.port not in planned_absent.get(name, {})

    def lines(name: str, reading: C.SwitchReading) -> list[str]:
        try:
            outcomes = switch_outcomes(to_plan_names({name: reading}, plan), exp, **thresholds)
        except Exception:  # noqa: BLE001 - a preview never stops the run; the report judges again
            return []
        return [for_terminal(f"{o.check}: {finding.line()}") for o in outcomes
                if o.status == "failed" and o.check not in FABRIC_WIDE for finding in o.findings
                if shown(name, o.check, finding)]

    return lines


@dataclass(frozen=True)
class VerifyRun:
    """What `fabricgen verify` found, for the CLI to print. REPORT is None when nothing was checked
    (a usage error, an intent that does not load); PROBLEMS are the lines it prints on stderr, in
    order (the intent's refusals or warnings, a write error, the notes); OUTPUT is the -o file the
    report was written to, not printed."""

    exit_code: int
    fmt: str
    report: VerifyReport | None = None
    output: str | None = None
    problems: tuple[str, ...] = ()


def verify_stdout(run: VerifyRun) -> str:
    """What `verify` prints on stdout: the report, unless -o took it or nothing was checked."""
    if run.report is None or run.output:
        return ""
    return RENDERERS[run.fmt](run.report)


def run_verify(intent_path: str, *, endpoints: str | None = None, only: str | None = None, fmt: str = "table",
               output: str | None = None, interval_s: float = DEFAULT_INTERVAL_S, settle_s: float = DEFAULT_SETTLE_S,
               pfc_threshold: float = C.PFC_THRESHOLD_PER_S, ecn_threshold: float = C.ECN_THRESHOLD_PER_S,
               prefix_tolerance: float = PREFIX_TOLERANCE, limit: str | None = None,
               progress: Console | None = None) -> VerifyRun:
    """Check, and with OUTPUT write the report there atomically (a Prometheus textfile must hold a
    whole run or the last good one). PROGRESS is the terminal that shows the reads and each
    switch's failures while the others are still read (collect.read_switches); None shows nothing."""
    from generator.checks.runner import load_selected
    from generator.render.output import render_files

    if fmt not in FORMATS:
        return VerifyRun(2, fmt, problems=(f"error: --format {fmt!r}: use {', '.join(FORMATS)}",))
    if interval_s < 0 or settle_s < 0 or pfc_threshold < 0 or ecn_threshold < 0 or not 0 <= prefix_tolerance < 1:
        return VerifyRun(2, fmt, problems=("error: --interval, --settle and the thresholds must be >= 0, "
                                           "--prefix-tolerance in [0, 1)",))
    started = time.time()
    err = io.StringIO()
    selected = load_selected(intent_path, "verifying", only, limit, err)
    said = tuple(err.getvalue().splitlines())
    if selected is None:
        return VerifyRun(1, fmt, problems=said)
    loaded, plan, switches, hosts = selected
    exp = expectations(plan)
    outcomes: list[Outcome] = []
    notes: list[str] = []
    absent_ports: list[tuple[str, str, str]] = []
    if switches:
        from generator.verify import installed

        absent = _not_installed(plan, switches, endpoints, limit)
        planned_absent = installed.toward(plan, absent)
        reachable = [n for n in switches if n not in absent]
        outcomes += [Outcome(c, n, NOT_INSTALLED, reason=absent[n]) for n in switches if n in absent
                     for c in SWITCH_CHECKS]
        readings, unknown = _switch_readings(plan, intent_path, endpoints, exp, interval_s=interval_s,
                                             settle_s=settle_s, concurrency=loaded.intent.deploy.concurrency,
                                             reachable=reachable, planned_absent=planned_absent,
                                             streamed=streamed_failures(plan, exp, absent,
                                                                        pfc_threshold=pfc_threshold,
                                                                        ecn_threshold=ecn_threshold,
                                                                        prefix_tolerance=prefix_tolerance),
                                             progress=progress)
        absent_ports = installed.absent_ports(readings, planned_absent, absent)
        if absent_ports:
            # nothing is expected of a dark port toward a switch not racked yet, and no prefix or
            # ECMP path runs over it: the expectations are those of the fabric as installed
            exp = _installed_expectations(plan, exp, absent_ports, absent)
        outcomes += unknown + switch_outcomes(readings, exp, pfc_threshold=pfc_threshold,
                                              ecn_threshold=ecn_threshold, prefix_tolerance=prefix_tolerance)
    if hosts:
        host_results, note = host_outcomes(plan, render_files(plan, loaded.text), endpoints, only,
                                           interval_s=interval_s, pfc_threshold=pfc_threshold,
                                           ecn_threshold=ecn_threshold, names=hosts)
        outcomes += host_results
        if note:
            notes.append(note)
    order = {c: i for i, c in enumerate(SWITCH_CHECKS + HOST_CHECKS)}
    outcomes.sort(key=lambda o: (order[o.check], o.device))
    report = VerifyReport(plan.fabric, outcomes, started, time.time(), notes, absent_ports=absent_ports)
    from generator.verify.root_cause import root_causes

    report.caused_by = root_causes(report.findings(), exp)
    if not report.counted():
        notes.append("nothing was checked: no device of the selection is installed (listed in the endpoints "
                     "file and inside --limit); exit 1")
    if output:
        try:
            write_atomic(output, RENDERERS[fmt](report))
        except OSError as exc:
            return VerifyRun(1, fmt, report, output, (*said, f"error: cannot write {output}: {exc.strerror}"))
    return VerifyRun(report.exit_code, fmt, report, output,
                     (*said, *(for_terminal(f"note: {note}") for note in notes)))


@dataclass(frozen=True)
class SoakRun:
    """What `verify --soak` found, for the CLI to print: TEXT is the report (None when nothing was
    watched), written to OUTPUT when given; PROBLEMS are the lines it prints on stderr, in order."""

    exit_code: int
    fmt: str
    text: str | None = None
    output: str | None = None
    problems: tuple[str, ...] = ()


def soak_stdout(run: SoakRun) -> str:
    """What `verify --soak` prints on stdout: the report, unless -o took it or nothing was watched."""
    if run.text is None or run.output:
        return ""
    return run.text                 # the table's lines are escaped where they are made (soak.report)


def run_soak(intent_path: str, *, duration: str, interval_s: float, endpoints: str | None = None,
             limit: str | None = None, fmt: str = "table", output: str | None = None,
             after_read=None) -> SoakRun:
    """`verify --soak`: the switches' error counters read every INTERVAL over DURATION (soak.py)."""
    from generator.checks.runner import load_selected
    from generator.devices.credentials import CredentialsError
    from generator.devices.opener import switch_logins
    from generator.verify import soak as S

    try:
        duration_s = S.parse_duration(duration)
    except ValueError as exc:
        return SoakRun(2, fmt, problems=(f"error: --soak {exc}",))
    if not 0 < interval_s <= duration_s or fmt not in ("table", "json"):
        return SoakRun(2, fmt, problems=("error: --soak takes --interval above 0 and at most the duration, "
                                         "--format table or json",))
    err = io.StringIO()
    selected = load_selected(intent_path, "verifying", "switches", limit, err)
    said = tuple(err.getvalue().splitlines())
    if selected is None:
        return SoakRun(1, fmt, problems=said)
    loaded, plan, switches, _hosts = selected
    absent = _not_installed(plan, switches, endpoints, limit)
    names = [n for n in switches if n not in absent]
    if not names:
        return SoakRun(1, fmt, problems=(*said, f"error: no switch of fabric {plan.fabric} to soak: none is listed "
                                         "in the endpoints file and inside --limit"))
    try:
        _access, workers, make_driver = switch_logins(plan, names, intent_path, endpoints,
                                                      loaded.intent.deploy.concurrency, SSH_TIMEOUT)
    except CredentialsError as exc:
        return SoakRun(1, fmt, problems=(*said, f"error: {exc}"))

    samples = S.soak(names, make_driver, duration_s=duration_s, interval_s=interval_s, workers=workers,
                     after_read=after_read)
    text, code = S.report(plan.fabric, samples, fmt)
    if output:
        try:
            write_atomic(Path(output), text)
        except OSError as exc:
            return SoakRun(1, fmt, text, output, (*said, f"error: cannot write {output}: {exc.strerror}"))
    return SoakRun(code, fmt, text, output, said)
