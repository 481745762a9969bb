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
from generator.verify.model import CHECKS, VerifyReport

FORMATS = ("table", "json", "junit", "prometheus")
MAX_ROWS = 200


def format_json(report: VerifyReport) -> str:
    doc = {"summary": report.summary(), "findings": [f.as_dict() for f in report.findings()]}
    return json.dumps(json_safe(doc), indent=1) + "\n"


def format_table(report: VerifyReport, *, width: int | None = None) -> str:
    from rich.console import Console
    from rich.table import Table

    buffer = io.StringIO()
    if width is None:
        width = shutil.get_terminal_size((160, 24)).columns if sys.stdout.isatty() else 160
    console = Console(file=buffer, width=width, no_color=True, highlight=False, emoji=False)
    table = Table(title=terminal_text(f"verify: {report.fabric}"), title_justify="left")
    for column in ("check", "passed", "failed", "unknown", "skipped"):
        table.add_column(column, justify="left" if column == "check" else "right")
    for check in CHECKS:
        mine = [o for o in report.outcomes if o.check == check]
        if not mine:
            continue
        table.add_row(check, *(str(sum(o.status == s for o in mine)) for s in ("passed", "failed", "unknown", "skipped")))
    console.print(table)
    findings = report.findings()
    if findings:
        detail = Table(title="findings", title_justify="left")
        for column in ("check", "severity", "finding"):
            detail.add_column(column, overflow="fold")
        for f in findings[:MAX_ROWS]:
            detail.add_row(f.check, f.severity, terminal_text(f.line()))
        console.print(detail)
        if len(findings) > MAX_ROWS:
            console.print(f"... {len(findings) - MAX_ROWS} more; use --format json for all")
    s = report.summary()
    console.print(f"{s['checked']} check(s): {s['passed']} passed, {s['failed']} failed, {s['unknown']} unknown",
                  markup=False)
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
    duration = f"{report.finished - report.started:.3f}"
    for check in CHECKS:
        mine = sorted((o for o in report.outcomes if o.check == check), key=lambda o: o.device)
        if not mine:
            continue
        suite = ET.SubElement(root, "testsuite", name=check, tests=str(len(mine)),
                              failures=str(sum(o.status == "failed" for o in mine)),
                              errors=str(sum(o.status == "unknown" for o in mine)),
                              skipped=str(sum(o.status == "skipped" for o in mine)), time=duration)
        for o, name in zip(mine, _unique([xml_text(o.device) for o in mine]), strict=True):
            case = ET.SubElement(suite, "testcase", classname=f"verify.{check}", name=name, time="0")
            if o.status == "failed":
                failure = ET.SubElement(case, "failure", message=xml_text(o.findings[0].line()),
                                        type=o.findings[0].severity)
                failure.text = "\n".join(xml_text(f.line()) for f in o.findings)
            elif o.status == "unknown":
                ET.SubElement(case, "error", message=xml_text(f"could not check: {o.reason}"), type="unknown")
            elif o.status == "skipped":
                ET.SubElement(case, "skipped", message=xml_text(o.reason))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def format_prometheus(report: VerifyReport) -> str:
    fabric = prometheus_label(report.fabric)
    lines = ["# HELP fabricgen_verify_checks Check x device results by status.",
             "# TYPE fabricgen_verify_checks gauge"]
    for check in CHECKS:
        mine = [o for o in report.outcomes if o.check == check]
        if not mine:
            continue
        for status in ("passed", "failed", "unknown", "skipped"):
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


def write_report(report: VerifyReport, fmt: str, output: str | None) -> None:
    from generator.common.atomic_write import write_atomic

    text = RENDERERS[fmt](report)
    if output:
        write_atomic(output, text)
    else:
        print(text, end="")
