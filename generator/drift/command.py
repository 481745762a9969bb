"""`fabricgen drift`: does every device still match the rendered intent?

Switches: `get_config(retrieve="running")` through the napalm drivers, in a thread
pool of `deploy.concurrency`, normalised and compared per feature. Hosts (best
effort): playbooks/hosts.yml in ansible check + diff mode. A device that cannot be
reached, authenticated or read is `unknown`: never counted as in sync. A switch with a
commit waiting for confirmation (NVUE: a revision in state "confirm" in `nv config revision`, SONiC
`systemctl show fabricgen-confirm.timer`: waiting, or its revert running) is `pending`: its
running config may still revert on its own,
so it is never in sync, whatever it holds now (issue 15, finding 8).

The endpoints file's `hosts:` key routes the host check; its value may be a mapping

    hosts:
      user: fabricgen                 # ansible_user
      ssh_key: id_ed25519             # private key; relative to the endpoints file
      extravars: {fabricgen_root: /srv/stage}   # any playbook variable

(all optional). Host keys come from `known_hosts` next to the endpoints file.

Exit: 0 all in sync; 3 drift or pending, only when every device was checked; 1 otherwise.
"""

from __future__ import annotations

import io
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from generator.common.atomic_write import write_atomic
from generator.drift.compare import FeatureResult, compare_device
from generator.drift.host_state import ITEM_TASKS, host_items
from generator.drift.normalize import (
    ConfigParseError,
    nvue_managed_set,
    parse_config,
    sonic_managed_set,
    strip_unmanaged,
)
from generator.drift.report import FORMATS, DeviceResult, DriftReport, report_text
from generator.render.managed import ManagedSet
from generator.safe_text import for_terminal
from generator.secrets_redact import redact_tree

SSH_TIMEOUT = 20


def _one_line(exc: BaseException, password: str | None) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    if password:
        text = text.replace(password, "***")
    return text if len(text) < 500 else text[:497] + "..."      # room for a path and what to do


def _switch_file(plan, name: str, files: dict[str, str]) -> str:
    rel = f"switches/{name}/startup.yaml" if plan.switch_os == "cumulus" else f"switches/{name}/config_db.json"
    return files[rel]


def _driver(plan, target, access):
    from generator.devices.factory import switch_driver

    return switch_driver(plan.switch_os, plan.switch_os_version, target.host, target.port, target.username,
                         access.password, access.known_hosts, timeout=SSH_TIMEOUT,
                         password_hint=access.password_source)


def fetch_running(plan, target, access) -> str:
    return fetch_state(plan, target, access)[0]


def fetch_state(plan, target, access) -> tuple[str, bool]:
    """(running config, a commit is pending confirmation) from one login; a read that did not
    complete is retried once on a new session (devices/sessions.py) before the switch is unknown."""
    from generator.devices.sessions import Session

    session = Session(lambda: _driver(plan, target, access))
    try:
        session.open()
        return session.call(lambda d: (d.get_config(retrieve="running")["running"], bool(d.has_pending_commit())))
    finally:
        session.close()


def check_switch(plan, name: str, intended_text: str, target, access) -> DeviceResult:
    try:
        running, pending = fetch_state(plan, target, access)
    except Exception as exc:  # noqa: BLE001 - any failure to read a device makes it unknown, never in sync
        return DeviceResult(name, "switch", "unknown", error=_one_line(exc, access.password))
    from generator.render.managed import for_switch

    try:
        result = compare_texts(plan.switch_os, name, intended_text, running, managed=for_switch(plan, name),
                               version=".".join(map(str, plan.switch_os_version)),
                               sonic_management=plan.management is not None,
                               sonic_extra=_sonic_extra(plan, name))
    except Exception as exc:  # noqa: BLE001 - a running config no parser foresaw: this switch is unknown, the run goes on
        return DeviceResult(name, "switch", "unknown",
                            error=f"running config could not be compared: {_one_line(exc, access.password)}")
    if pending and result.status != "unknown":
        # The features still show what the switch runs now; the status says it is not settled.
        result.status = "pending"
        result.error = ("a commit is pending confirmation: the running config reverts when its timer "
                        "expires unless it is confirmed")
    return result


def _sonic_extra(plan, name: str) -> tuple[tuple[str, str], ...]:
    """config_db rows the intent's `extra:` sets on switch NAME (render/extra.py)."""
    if not plan.extra or plan.switch_os != "sonic":
        return ()
    from generator.render.extra import sonic_owned

    sw = next((s for s in plan.switches if s.name == name), None)
    return () if sw is None else sonic_owned(plan, sw)


def compare_texts(os_name: str, name: str, intended_text: str, running_text: str, *,
                  managed: ManagedSet | None = None, version: str | None = None,
                  sonic_management: bool | None = None, sonic_extra: tuple = ()) -> DeviceResult:
    """NVUE: `managed` is the plan's managed set (default: the one the rendered file implies),
    `version` the intent's release (keys it does not document are not compared). SONiC:
    `sonic_management`: the intent has `management:` (default: inferred from the rendered config_db)."""
    sonic = None
    try:
        intended = parse_config(os_name, intended_text)
        if os_name == "cumulus":
            managed = managed or nvue_managed_set(intended)
            intended = managed.managed(intended)
        else:
            sonic = sonic_managed_set(intended, sonic_management, sonic_extra)
            intended = sonic.owned(intended)
        actual = strip_unmanaged(os_name, intended, parse_config(os_name, running_text), managed=managed,
                                 version=version, sonic=sonic)
    except ConfigParseError as exc:
        return DeviceResult(name, "switch", "unknown", error=f"running config unreadable: {exc}")
    # Secrets (generator/secrets_redact.py) are compared as hashes: a changed one still drifts,
    # none is ever printed in a report.
    features = compare_device(os_name, redact_tree(os_name, intended), redact_tree(os_name, actual))
    status = "in_sync" if all(f.compliant for f in features.values()) else "drift"
    return DeviceResult(name, "switch", status, features=features)


def check_switches(plan, files: dict[str, str], intent_path: str, endpoints: str | None,
                   concurrency: int, names: list[str] | None = None) -> list[DeviceResult]:
    """NAMES (default: every switch of PLAN) against their rendered files."""
    from generator.devices.credentials import CredentialsError, resolve_access
    from generator.devices.endpoints import split_listed
    from generator.devices.sessions import for_each, pool_size

    names = [sw.name for sw in plan.switches] if names is None else names
    # a switch the endpoints file does not list cannot be checked: unknown, the others still are
    reachable, unlisted = split_listed(names, endpoints)
    results = [DeviceResult(n, "switch", "unknown", error=f"not listed in {endpoints}") for n in unlisted]
    try:
        access = resolve_access(plan, reachable, intent_path, endpoints)
        workers = pool_size(len(reachable), concurrency)
    except CredentialsError as exc:
        return results + [DeviceResult(n, "switch", "unknown", error=str(exc)) for n in reachable]
    checked = for_each(reachable, lambda n: check_switch(plan, n, _switch_file(plan, n, files), access.targets[n],
                                                         access), workers)
    return results + list(checked.values())


_HOST_FEATURES = (("lldpd", "lldpd"), ("netplan", "netplan"), ("sysctl", "sysctl"), ("nccl", "nccl"), ("roce", "qos"),
                  ("qos", "qos"))


def _host_feature(task: str) -> str:
    low = task.lower()
    return next((feature for word, feature in _HOST_FEATURES if word in low), "host")


def check_hosts(plan, files: dict[str, str], endpoints: str | None, only: str | None,
                names: list[str] | None = None) -> tuple[list[DeviceResult], str]:
    """(results, note) for NAMES (default: every host of PLAN). Without a way to reach the hosts they
    are unknown when asked for, else skipped."""
    every = [h.name for h in plan.hosts]
    names = every if names is None else names
    if not names:
        return [], ""

    def all_unknown(reason: str) -> tuple[list[DeviceResult], str]:
        if only == "hosts":
            return [DeviceResult(n, "host", "unknown", error=reason) for n in names], ""
        return [], f"hosts not checked: {reason}"

    section = None
    if endpoints is not None:
        from generator.devices.endpoints import hosts_section

        section, reason = hosts_section(endpoints)
        if section is None:
            return all_unknown(reason)
    from generator.devices.credentials import endpoint_host_access

    extravars, ssh_key = endpoint_host_access(section, endpoints)
    try:
        from generator.deploy.hosts import run_hosts_playbook
        from generator.render.output import write_tree
    except ImportError as exc:
        return all_unknown(f"host checks unavailable ({exc.name} is not installed)")
    known_hosts = Path(endpoints).resolve().parent / "known_hosts" if endpoints else None
    with tempfile.TemporaryDirectory(prefix="fabricgen-drift-") as tmp:
        render_dir = write_tree(files, Path(tmp) / "render")
        try:
            run = run_hosts_playbook(render_dir, render_dir / "inventory.yml", check=True, diff=True,
                                     limit=None if names == every else ",".join(names), known_hosts=known_hosts, extravars=extravars, ssh_key=ssh_key,
                                     collect=ITEM_TASKS)
        except Exception as exc:  # noqa: BLE001 - best effort: any failure leaves the hosts unknown
            return all_unknown(f"ansible check run failed: {_one_line(exc, None)}")
    failures: dict[str, str] = {}
    for host, task, message in run.failures:
        failures.setdefault(host, f"{task}: {message}")
    results = []
    for name in names:
        stats = run.hosts.get(name)
        if stats is None or stats.unreachable or name in failures:
            reason = failures.get(name) or ("unreachable" if stats else "not reached by the playbook run")
            results.append(DeviceResult(name, "host", "unknown", error=reason))
            continue
        features: dict[str, FeatureResult] = {}
        for host, task in run.changes:
            if host != name:
                continue
            # the probes that name each route, rule, interface setting and sysctl that differs
            items = host_items(task, str((run.results.get(name, {}).get(task) or {}).get("stdout") or ""))
            for feature_name, change in items:
                features.setdefault(feature_name, FeatureResult(feature_name)).changed.append(change)
            if not items:
                feature = features.setdefault(_host_feature(task), FeatureResult(_host_feature(task)))
                feature.changed.append({"path": task, "intended": "rendered", "actual": "differs"})
        results.append(DeviceResult(name, "host", "drift" if features else "in_sync", features=features))
    return results, ""


def _all_unknown(names: list[str], kind: str, exc: BaseException) -> list[DeviceResult]:
    reason = f"drift could not check: {_one_line(exc, None)}"
    return [DeviceResult(name, kind, "unknown", error=reason) for name in names]


@dataclass(frozen=True)
class DriftRun:
    """What `fabricgen drift` found, for the CLI to print. REPORT is None when nothing was checked;
    PROBLEMS are the lines it prints on stderr, in order (the intent's refusals or warnings, a
    write error, the notes); OUTPUT is the -o file the report was written to, not printed."""

    exit_code: int
    fmt: str
    report: DriftReport | None = None
    output: str | None = None
    problems: tuple[str, ...] = ()


def drift_stdout(run: DriftRun) -> str:
    """What `drift` prints on stdout: the report, unless -o took it or nothing was checked."""
    if run.report is None or run.output:
        return ""
    return report_text(run.report, run.fmt)


def run_drift(intent_path: str, *, endpoints: str | None = None, only: str | None = None,
              fmt: str = "table", output: str | None = None, limit: str | None = None) -> DriftRun:
    """Check, and with OUTPUT write the report there atomically: -o is the Prometheus textfile
    collector's file, which must hold a whole run or the last good one whoever calls this."""
    from generator.checks.runner import load_selected
    from generator.render.output import render_files

    if fmt not in FORMATS:
        return DriftRun(2, fmt, problems=(f"error: --format {fmt!r}: use {', '.join(FORMATS)}",))
    started = time.time()
    err = io.StringIO()
    selected = load_selected(intent_path, "checking drift", only, limit, err)
    said = tuple(err.getvalue().splitlines())
    if selected is None:
        return DriftRun(1, fmt, problems=said)
    loaded, plan, switches, hosts = selected
    files = render_files(plan, loaded.text)
    devices: list[DeviceResult] = []
    notes: list[str] = []
    if switches:
        try:
            devices += check_switches(plan, files, intent_path, endpoints, loaded.intent.deploy.concurrency,
                                      switches)
        except Exception as exc:  # noqa: BLE001 - the report (and the Prometheus textfile) must say so, not keep the last success
            devices += _all_unknown(switches, "switch", exc)
    if hosts:
        try:
            host_results, note = check_hosts(plan, files, endpoints, only, hosts)
        except Exception as exc:  # noqa: BLE001 - as above
            host_results, note = _all_unknown(hosts, "host", exc), None
        devices += host_results
        if note:
            notes.append(note)
    report = DriftReport(fabric=plan.fabric, devices=sorted(devices, key=lambda d: (d.kind != "switch", d.name)),
                         started=started, finished=time.time(), notes=notes)
    if output:
        try:
            write_atomic(output, report_text(report, fmt))
        except OSError as exc:
            return DriftRun(1, fmt, report, output, (*said, f"error: cannot write {output}: {exc.strerror}"))
    return DriftRun(report.exit_code, fmt, report, output,
                    (*said, *(for_terminal(f"note: {note}") for note in notes)))
