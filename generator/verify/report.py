"""Verify report formats: table (rich), json (DESIGN.md contract), junit, prometheus textfile.

Findings carry what devices printed (LLDP names, port descriptions, error text); every format
escapes it with generator/safe_text.py.
"""

from __future__ import annotations

import io
import json
import shutil
import sys
from xml.etree import ElementTree as ET

from generator.safe_text import json_safe, prometheus_label, terminal_text, xml_text
from generator.verify.model import CHECKS, NOT_INSTALLED, Finding, VerifyReport

FORMATS = ("table", "json", "junit", "prometheus")
MAX_ROWS = 200


STATUSES = ("passed", "failed", "unknown", "skipped", NOT_INSTALLED)


def _by_check(consequences: list[Finding]) -> dict[str, int]:
    out: dict[str, int] = {}
    for f in consequences:
        out[f.check] = out.get(f.check, 0) + 1
    return out


def _consequence_text(consequences: list[Finding]) -> str:
    """"+6 consequences: link 1, bgp 2, optics 2, ecmp 1" (root_cause.py)."""
    counts = ", ".join(f"{check} {n}" for check, n in _by_check(consequences).items())
    return f"+{len(consequences)} consequence{'s' if len(consequences) != 1 else ''}: {counts}"


def format_json(report: VerifyReport) -> str:
    """The contract's keys; a root finding adds `id`, `root` and `consequences` (a count), each of
    its consequences `id` and `caused_by` (the root's id), and `root_causes` sums them up; switches
    and ports not installed yet are under `not_installed`. The added keys appear only when used."""
    consequences = report.consequences()
    findings = []
    for f in report.findings():
        row = f.as_dict()
        if f.id in consequences:
            row |= {"id": f.id, "root": True, "consequences": len(consequences[f.id])}
        elif f.id in report.caused_by:
            row |= {"id": f.id, "caused_by": report.caused_by[f.id]}
        findings.append(row)
    doc: dict = {"summary": report.summary(), "findings": findings}
    if consequences:
        doc["root_causes"] = [{"id": f.id, "check": f.check, "device": f.device, "port": f.port,
                               "consequences": len(consequences[f.id]), "by_check": _by_check(consequences[f.id])}
                              for f in report.findings() if f.id in consequences]
    devices = report.not_installed_devices()
    if devices or report.absent_ports:
        doc["not_installed"] = {"switches": devices,
                                "ports": [{"device": d, "port": p, "reason": why} for d, p, why in report.absent_ports]}
    return json.dumps(json_safe(doc), indent=1) + "\n"


def format_table(report: VerifyReport, *, width: int | None = None) -> str:
    from rich.console import Console
    from rich.table import Table

    buffer = io.StringIO()
    if width is None:
        width = shutil.get_terminal_size((160, 24)).columns if sys.stdout.isatty() else 160
    console = Console(file=buffer, width=width, no_color=True, highlight=False, emoji=False)
    table = Table(title=terminal_text(f"verify: {report.fabric}"), title_justify="left")
    statuses = [s for s in STATUSES if s != NOT_INSTALLED or any(o.status == s for o in report.outcomes)]
    for column in ("check", *statuses):
        table.add_column(column, justify="left" if column == "check" else "right")
    for check in CHECKS:
        mine = [o for o in report.outcomes if o.check == check]
        if not mine:
            continue
        table.add_row(check, *(str(sum(o.status == s for o in mine)) for s in statuses))
    console.print(table)
    # a consequence is not a row of its own: its root says how many follow from it (json lists them)
    consequences = report.consequences()
    findings = [f for f in report.findings() if f.id not in report.caused_by]
    if findings:
        detail = Table(title="findings", title_justify="left")
        for column in ("check", "severity", "finding"):
            detail.add_column(column, overflow="fold")
        for f in findings[:MAX_ROWS]:
            line = terminal_text(f.line())
            if f.id in consequences:
                line += f" ({_consequence_text(consequences[f.id])})"
            detail.add_row(f.check, f.severity, line)
        console.print(detail)
        if len(findings) > MAX_ROWS:
            console.print(f"... {len(findings) - MAX_ROWS} more; use --format json for all")
    devices = report.not_installed_devices()
    if devices or report.absent_ports:
        shown = ", ".join(devices[:8]) + (f" and {len(devices) - 8} more" if len(devices) > 8 else "")
        console.print(terminal_text(f"not installed (not checked): {len(devices)} device(s)"
                                    + (f" ({shown})" if devices else "")
                                    + f", {len(report.absent_ports)} dark port(s) toward them"), markup=False)
    s = report.summary()
    console.print(f"{s['checked']} check(s): {s['passed']} passed, {s['failed']} failed, {s['unknown']} unknown",
                  markup=False)
    if consequences:
        console.print(f"{len(report.findings())} finding(s) from {len(findings)} root cause(s)", markup=False)
    return buffer.getvalue()


def _unique(names: list[str]) -> list[str]:
    """Testcase names unique within a suite (dashboards key results by name): a repeat gets ` #2`."""
    taken: set[str] = set()
    out = []
    for name in names:
        candidate, n = name, 1
        while candidate in taken:
            n += 1
            candidate = f"{name} #{n}"
        taken.add(candidate)
        out.append(candidate)
    return out


def format_junit(report: VerifyReport) -> str:
    """One <testsuite> per check, one <testcase> per check x device (JUnit XML as CI dashboards read it).
    Every text goes through xml_text; ElementTree escapes `<`, `&`, quotes and `]]>`."""
    root = ET.Element("testsuites", name=xml_text(f"fabricgen verify {report.fabric}"))
    consequences = report.consequences()
    duration = f"{report.finished - report.started:.3f}"
    for check in CHECKS:
        mine = sorted((o for o in report.outcomes if o.check == check), key=lambda o: o.device)
        if not mine:
            continue
        suite = ET.SubElement(root, "testsuite", name=check, tests=str(len(mine)),
                              failures=str(sum(o.status == "failed" for o in mine)),
                              errors=str(sum(o.status == "unknown" for o in mine)),
                              skipped=str(sum(o.status in ("skipped", NOT_INSTALLED) for o in mine)),
                              time=duration)
        for o, name in zip(mine, _unique([xml_text(o.device) for o in mine]), strict=True):
            case = ET.SubElement(suite, "testcase", classname=f"verify.{check}", name=name, time="0")
            if o.status == "failed":
                lines = [_junit_line(report, consequences, f) for f in o.findings]
                failure = ET.SubElement(case, "failure", message=lines[0], type=o.findings[0].severity)
                failure.text = "\n".join(lines)
            elif o.status == "unknown":
                ET.SubElement(case, "error", message=xml_text(f"could not check: {o.reason}"), type="unknown")
            elif o.status == "skipped":
                ET.SubElement(case, "skipped", message=xml_text(o.reason))
            elif o.status == NOT_INSTALLED:
                ET.SubElement(case, "skipped", message=xml_text(f"not installed: {o.reason}"))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _junit_line(report: VerifyReport, consequences: dict[str, list[Finding]], f: Finding) -> str:
    """A finding's line; a root says how many follow from it, a consequence names its root."""
    line = xml_text(f.line())
    if f.id in consequences:
        return f"{line} ({_consequence_text(consequences[f.id])})"
    if f.id in report.caused_by:
        return f"{line} (consequence of {xml_text(report.caused_by[f.id])})"
    return line


def format_prometheus(report: VerifyReport) -> str:
    fabric = prometheus_label(report.fabric)
    lines = ["# HELP fabricgen_verify_checks Check x device results by status.",
             "# TYPE fabricgen_verify_checks gauge"]
    for check in CHECKS:
        mine = [o for o in report.outcomes if o.check == check]
        if not mine:
            continue
        for status in STATUSES:
            count = sum(o.status == status for o in mine)
            lines.append(f'fabricgen_verify_checks{{fabric="{fabric}",check="{check}",status="{status}"}} {count}')
    lines += ["# HELP fabricgen_verify_findings Findings by check and severity.",
              "# TYPE fabricgen_verify_findings gauge"]
    findings = report.findings()
    for check in CHECKS:
        for severity in ("error", "warning"):
            count = sum(f.check == check and f.severity == severity for f in findings)
            lines.append(f'fabricgen_verify_findings{{fabric="{fabric}",check="{check}",severity="{severity}"}} {count}')
    lines += ["# HELP fabricgen_verify_success 1 if every check could run, else 0.",
              "# TYPE fabricgen_verify_success gauge",
              f'fabricgen_verify_success{{fabric="{fabric}"}} {0 if report.summary()["unknown"] else 1}',
              "# HELP fabricgen_verify_last_run_timestamp_seconds When verify finished (Unix time).",
              "# TYPE fabricgen_verify_last_run_timestamp_seconds gauge",
              f'fabricgen_verify_last_run_timestamp_seconds{{fabric="{fabric}"}} {report.finished:.3f}',
              "# HELP fabricgen_verify_duration_seconds How long verify took.",
              "# TYPE fabricgen_verify_duration_seconds gauge",
              f'fabricgen_verify_duration_seconds{{fabric="{fabric}"}} {report.finished - report.started:.3f}']
    return "\n".join(lines) + "\n"


RENDERERS = {"table": format_table, "json": format_json, "junit": format_junit, "prometheus": format_prometheus}
