"""Drift report formats: table (rich), json, markdown, prometheus (node_exporter textfile).

Device names, paths and values come from the intent and from what devices print; every
format escapes them with generator/safe_text.py (a port description can hold markup, escape
sequences or a markdown table break).

Files are written atomically (temp file in the same directory, fsync, rename) so the
node_exporter textfile collector never reads half a file.
"""

from __future__ import annotations

import io
import json
import shutil
import sys
from dataclasses import dataclass, field
from typing import Any

from generator.drift.compare import FEATURES, FeatureResult
from generator.safe_text import (
    for_terminal,
    json_safe,
    markdown_cell,
    markdown_code,
    prometheus_label,
    terminal_text,
)

FORMATS = ("table", "json", "prometheus", "markdown")
MAX_DETAIL_ROWS = 200          # a drifted 10k-device fabric must still print in a screenful or two


@dataclass
class DeviceResult:
    name: str
    kind: str                                      # switch | host
    status: str                                    # in_sync | drift | pending | unknown
    features: dict[str, FeatureResult] = field(default_factory=dict)
    error: str | None = None

    def drifted_features(self) -> list[str]:
        return [n for n, f in self.features.items() if not f.compliant]

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "status": self.status}
        if self.error:
            out["error"] = self.error
        if self.status != "unknown":
            out["features"] = {n: f.as_dict() for n, f in self.features.items()}
        return out


@dataclass
class DriftReport:
    fabric: str
    devices: list[DeviceResult]
    started: float
    finished: float
    notes: list[str] = field(default_factory=list)

    def count(self, status: str) -> int:
        return sum(1 for d in self.devices if d.status == status)

    @property
    def exit_code(self) -> int:
        if self.count("unknown"):
            return 1
        # pending: a commit waits for confirmation and may revert; like drift, never in sync
        return 3 if self.count("drift") or self.count("pending") else 0

    def summary(self) -> dict[str, int]:
        return {"devices": len(self.devices), "in_sync": self.count("in_sync"), "drift": self.count("drift"),
                "pending": self.count("pending"), "unknown": self.count("unknown")}

    def summary_line(self) -> str:
        s = self.summary()
        pending = f", {s['pending']} pending" if s["pending"] else ""
        return f"{s['devices']} device(s): {s['in_sync']} in sync, {s['drift']} drift{pending}, {s['unknown']} unknown"

    def feature_names(self) -> list[str]:
        seen = list(FEATURES)
        for d in self.devices:
            seen += [n for n in d.features if n not in seen]
        return seen

    def drift_rows(self) -> list[tuple[str, str, str, str, Any, Any]]:
        """(device, feature, kind, path, intended, actual) for every difference."""
        rows = []
        for d in self.devices:
            for name, f in d.features.items():
                rows += [(d.name, name, "missing", c["path"], c["intended"], None) for c in f.missing]
                rows += [(d.name, name, "extra", c["path"], None, c["actual"]) for c in f.extra]
                rows += [(d.name, name, "changed", c["path"], c["intended"], c["actual"]) for c in f.changed]
        return rows


def _value(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "on" if value else "off"
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)
    return text if len(text) <= 80 else text[:77] + "..."


def redacted(report: DriftReport) -> DriftReport:
    """The report with every secret path's value (and secret key) as its hash marker; the drift
    command already compares redacted trees, this keeps any other producer of a report honest."""
    from generator.secrets_redact import redact_change

    def entries(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        out = []
        for item in items:
            new = dict(item)
            for field_name in ("intended", "actual"):
                if field_name in item:
                    new["path"], new[field_name] = redact_change(None, item["path"], item[field_name])
            out.append(new)
        return out

    devices = [DeviceResult(d.name, d.kind, d.status, error=d.error, features={
        n: FeatureResult(f.feature, entries(f.missing), entries(f.extra), entries(f.changed))
        for n, f in d.features.items()}) for d in report.devices]
    return DriftReport(report.fabric, devices, report.started, report.finished, list(report.notes))


def format_json(report: DriftReport) -> str:
    doc = {"fabric": report.fabric, "timestamp": int(report.finished), "exit_code": report.exit_code,
           "summary": report.summary(), "devices": {d.name: d.as_dict() for d in report.devices}}
    if report.notes:
        doc["notes"] = report.notes
    return json.dumps(json_safe(doc), indent=1, default=str) + "\n"


def format_table(report: DriftReport, *, width: int | None = None) -> str:
    from rich.console import Console
    from rich.table import Table

    buffer = io.StringIO()
    if width is None:
        # a terminal gets its own width; cron mail and files get a wide, stable layout
        width = shutil.get_terminal_size((160, 24)).columns if sys.stdout.isatty() else 160
    console = Console(file=buffer, width=width, no_color=True, highlight=False, emoji=False)
    features = report.feature_names()
    table = Table(title=terminal_text(f"drift: {report.fabric}"), title_justify="left")
    table.add_column("device")
    table.add_column("status")
    for name in features:
        table.add_column(terminal_text(name), justify="center")
    for d in report.devices:
        if d.status == "unknown":
            cells = ["?"] * len(features)
        else:
            cells = ["-" if n not in d.features else ("ok" if d.features[n].compliant else "DRIFT")
                     for n in features]
        table.add_row(terminal_text(d.name), d.status, *cells)
    console.print(table)
    rows = report.drift_rows()
    if rows:
        detail = Table(title="differences", title_justify="left")
        for col in ("device", "feature", "kind", "path", "intended", "actual"):
            detail.add_column(col, overflow="fold")
        for row in rows[:MAX_DETAIL_ROWS]:
            detail.add_row(*(terminal_text(c) for c in (*row[:4], _value(row[4]), _value(row[5]))))
        console.print(detail)
        if len(rows) > MAX_DETAIL_ROWS:
            console.print(f"... {len(rows) - MAX_DETAIL_ROWS} more; use --format json for all")
    for d in report.devices:
        if d.status in ("unknown", "pending"):
            console.print(for_terminal(f"{d.status}: {d.name}: {d.error}"), markup=False)
    console.print(report.summary_line(), markup=False)
    return buffer.getvalue()


def format_markdown(report: DriftReport) -> str:
    head, _, counts = report.summary_line().partition(": ")
    out = [f"### fabricgen drift: {markdown_code(report.fabric)}", "", f"**{head}:** {counts}", ""]
    problem = [d for d in report.devices if d.status != "in_sync"]
    if not problem:
        return "\n".join(out + ["All devices match the intent."]) + "\n"
    out += ["| device | status | features / reason |", "|---|---|---|"]
    for d in problem:
        why = d.error if d.status == "unknown" else ", ".join(
            ([d.error] if d.status == "pending" else []) + d.drifted_features())
        out.append(f"| {markdown_code(d.name)} | {d.status} | {markdown_cell(why or '')} |")
    rows = report.drift_rows()
    if rows:
        out += ["", "<details><summary>differences</summary>", "",
                "| device | feature | kind | path | intended | actual |", "|---|---|---|---|---|---|"]
        for row in rows[:MAX_DETAIL_ROWS]:
            cells = [*row[:4], _value(row[4]), _value(row[5])]
            out.append("| " + " | ".join(markdown_code(c) for c in cells) + " |")
        out += ["", "</details>"]
    return "\n".join(out) + "\n"


def format_prometheus(report: DriftReport) -> str:
    fabric = prometheus_label(report.fabric)
    lines = ["# HELP fabricgen_drift_devices Devices whose running config differs from the intent, per feature.",
             "# TYPE fabricgen_drift_devices gauge"]
    for feature in report.feature_names():
        n = sum(1 for d in report.devices if feature in d.features and not d.features[feature].compliant)
        lines.append(f'fabricgen_drift_devices{{fabric="{fabric}",feature="{prometheus_label(feature)}"}} {n}')
    lines += ["# HELP fabricgen_drift_devices_total Devices by drift check status.",
              "# TYPE fabricgen_drift_devices_total gauge"]
    for status in ("in_sync", "drift", "pending", "unknown"):
        lines.append(f'fabricgen_drift_devices_total{{fabric="{fabric}",status="{status}"}} {report.count(status)}')
    lines += ["# HELP fabricgen_drift_check_success 1 if every device could be checked, else 0.",
              "# TYPE fabricgen_drift_check_success gauge",
              f'fabricgen_drift_check_success{{fabric="{fabric}"}} {0 if report.count("unknown") else 1}',
              "# HELP fabricgen_drift_last_run_timestamp_seconds When the drift check finished (Unix time).",
              "# TYPE fabricgen_drift_last_run_timestamp_seconds gauge",
              f'fabricgen_drift_last_run_timestamp_seconds{{fabric="{fabric}"}} {report.finished:.3f}',
              "# HELP fabricgen_drift_duration_seconds How long the drift check took.",
              "# TYPE fabricgen_drift_duration_seconds gauge",
              f'fabricgen_drift_duration_seconds{{fabric="{fabric}"}} {report.finished - report.started:.3f}']
    return "\n".join(lines) + "\n"


RENDERERS = {"table": format_table, "json": format_json, "markdown": format_markdown,
             "prometheus": format_prometheus}


def report_text(report: DriftReport, fmt: str) -> str:
    """The report as FMT prints it, secrets redacted."""
    return RENDERERS[fmt](redacted(report))
