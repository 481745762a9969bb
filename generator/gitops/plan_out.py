"""`fabricgen plan INTENT --against REF --out PLANFILE [--endpoints FILE]`: save what was reviewed.

The intent is checked and rendered as `render` does; with --endpoints every switch's running config
is read (devices/running_digest.py) so `deploy --plan` can refuse a switch someone changed since.
Any problem is one line and nothing is written (an old PLANFILE stays as it was).
"""

from __future__ import annotations

import sys

from generator import __version__
from generator.gitops.saved_plan import PlanFileError, plan_document, write_plan_file


def _error(line: str) -> int:
    print(f"error: {line}", file=sys.stderr)
    return 1


def save_plan(intent_path: str, out: str, endpoints: str | None = None) -> int:
    """0 written, 1 not (one line on stderr per problem)."""
    from generator.checks.runner import run_checks
    from generator.devices.credentials import CredentialsError
    from generator.devices.running_digest import RunningReadError, read_running_digests
    from generator.intent.loader import IntentError, load_intent
    from generator.render.output import render_files

    try:
        loaded = load_intent(intent_path)
    except IntentError as exc:
        for problem in exc.problems:
            _error(str(problem))
        return 1
    checked = run_checks(loaded)
    if checked.errors or checked.plan is None:
        for finding in checked.errors:
            print(finding.one_line(), file=sys.stderr)
        return _error(f"{intent_path} has {len(checked.errors)} error(s); no plan written to {out}")
    plan = checked.plan
    files = render_files(plan, loaded.text)
    running = None
    if endpoints is not None:
        names = [sw.name for sw in plan.switches]
        try:
            running = read_running_digests(plan, names, intent_path, endpoints, loaded.intent.deploy.concurrency)
        except (CredentialsError, RunningReadError) as exc:
            return _error(f"{exc}; no plan written to {out}")
    text = plan_document(version=__version__, fabric=plan.fabric, switch_os=plan.switch_os,
                         intent_text=loaded.text, files=files, running=running)
    try:
        write_plan_file(out, text)
    except PlanFileError as exc:
        return _error(str(exc))
    except OSError as exc:
        return _error(f"--out {out}: cannot write: {exc.strerror}")
    pinned = f", the running config of {len(running)} switch(es)" if running is not None else ""
    print(f"plan saved to {out}: {len(plan.switches)} switch(es) and {len(plan.hosts)} host(s) rendered{pinned}; "
          f"apply it with: fabricgen deploy {intent_path} --plan {out}", file=sys.stderr)
    return 0
