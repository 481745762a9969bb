"""`fabricgen plan`: what a change to the intent does to each device.

make_plan (plan_sides.py) renders both sides in memory and compares them (plan_compare.py); run_plan
returns a PlanReport and prints nothing: the CLI prints report_text (text, a pull-request comment
from plan_format.py, or JSON) to stdout and report_errors to stderr, and exits with exit_code:
0 no change, 3 changes, 1 the plan could not be made, 2 an unknown --format.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from generator.gitops.gitref import GitRefError
from generator.gitops.plan_compare import PlanError, PlanResult
from generator.gitops.plan_format import format_markdown, format_text
from generator.gitops.plan_sides import make_plan

FORMATS = ("text", "markdown", "json")


@dataclass(frozen=True)
class PlanReport:
    """RESULT is None when the plan could not be made; PROBLEMS are then its one-line errors, in
    the order the user reads them on stderr."""

    fmt: str
    full: bool
    exit_code: int
    result: PlanResult | None = None
    problems: tuple[str, ...] = ()


def run_plan(intent_path: str, *, against: str, fmt: str = "text", full: bool = False) -> PlanReport:
    """FULL: the text format prints every diff line however many (else a summary above
    plan_format.TEXT_FULL_LINES)."""
    from generator.intent.loader import IntentError

    if fmt not in FORMATS:
        return PlanReport(fmt, full, 2, problems=(f"error: --format {fmt!r}: use {', '.join(FORMATS)}",))
    try:
        result = make_plan(intent_path, against)
    except IntentError as exc:
        return PlanReport(fmt, full, 1, problems=tuple(f"error: {problem}" for problem in exc.problems))
    except (PlanError, GitRefError) as exc:
        return PlanReport(fmt, full, 1, problems=(f"error: {exc}",))
    return PlanReport(fmt, full, 3 if result.devices else 0, result=result)


def report_text(report: PlanReport) -> str | None:
    """What `plan` prints on stdout (a line, without its final newline); None: nothing."""
    if report.result is None:
        return None
    if report.fmt == "json":
        return json.dumps(report.result.as_json(), indent=1, sort_keys=False, default=str)
    if report.fmt == "markdown":
        return format_markdown(report.result)
    return format_text(report.result, full=report.full)


def report_errors(report: PlanReport) -> tuple[str, ...]:
    """What `plan` prints on stderr, a line each: the problems, or with --format json the intent's
    findings (the text formats carry them in their body)."""
    if report.result is None:
        return report.problems
    if report.fmt == "json":
        return tuple(f.one_line() for f in report.result.findings)
    return ()
