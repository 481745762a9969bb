"""`fabricgen plan`: what a change to the intent does to each device.

make_plan (plan_sides.py) renders both sides in memory and compares them (plan_compare.py); run_plan
prints the result as text or a pull-request comment (plan_format.py) or as JSON, and returns the exit
code: 0 no change, 3 changes, 1 the plan could not be made, 2 an unknown --format.
"""

from __future__ import annotations

import json
import sys

from generator.gitops.gitref import GitRefError
from generator.gitops.plan_compare import PlanError
from generator.gitops.plan_format import format_markdown, format_text
from generator.gitops.plan_sides import make_plan

FORMATS = ("text", "markdown", "json")


def run_plan(intent_path: str, *, against: str, fmt: str = "text", full: bool = False) -> int:
    """FULL: the text format prints every diff line however many (else a summary above
    plan_format.TEXT_FULL_LINES)."""
    from generator.intent.loader import IntentError

    if fmt not in FORMATS:
        print(f"error: --format {fmt!r}: use {', '.join(FORMATS)}", file=sys.stderr)
        return 2
    try:
        result = make_plan(intent_path, against)
    except IntentError as exc:
        for problem in exc.problems:
            print(f"error: {problem}", file=sys.stderr)
        return 1
    except (PlanError, GitRefError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if fmt == "json":
        print(json.dumps(result.as_json(), indent=1, sort_keys=False, default=str))
        for f in result.findings:
            print(f.one_line(), file=sys.stderr)
    elif fmt == "markdown":
        print(format_markdown(result))
    else:
        print(format_text(result, full=full))
    return 3 if result.devices else 0
