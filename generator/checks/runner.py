"""Run the rule catalog: intent rules, then compile, then plan rules."""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass, field

from generator.checks.registry import ERROR, RULES, CheckContext, Finding
from generator.gc_pause import gc_paused
from generator.intent.loader import LoadedIntent
from generator.plan.compile import compile_plan
from generator.plan.model import FabricPlan
from generator.plan.topology import CompileError

_SEVERITY_ORDER = {ERROR: 0, "warning": 1}


def load_rules() -> None:
    """Import every generator/checks/*_rules.py module so its @rule functions register."""
    import generator.checks as pkg

    for info in pkgutil.iter_modules(pkg.__path__):
        if info.name.endswith("_rules"):
            importlib.import_module(f"generator.checks.{info.name}")


@dataclass
class CheckResult:
    findings: list[Finding] = field(default_factory=list)
    plan: FabricPlan | None = None

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == ERROR]

    @property
    def warnings(self) -> list[Finding]:
        return [f for f in self.findings if f.severity != ERROR]


def _run(stage: str, ctx: CheckContext, loaded: LoadedIntent) -> list[Finding]:
    out = []
    for code in sorted(RULES):
        r = RULES[code]
        if r.stage != stage:
            continue
        for path, message in r.func(ctx):
            out.append(Finding(code, r.severity, path, message, loaded.line_of(path), loaded.file))
    return out


# Rules whose verdict grows with the switch tiers (buffers, platforms, ASNs, names, ECMP width):
# with topology.build_out they also judge the build-out fabric, so a later phase never turns out
# to be unbuildable (say, headroom of the reserved super-spine ports beyond the lossless pool).
BUILD_OUT_RULES = ("FG204", "FG220", "FG221", "FG252", "FG253", "FG254", "FG404", "FG405", "FG406", "FG408", "FG505", "FG510")


def _build_out_findings(loaded: LoadedIntent, installed: list[Finding]) -> list[Finding]:
    from generator.plan.growth import build_out_intent

    t = loaded.intent.topology
    if t.build_out_nodes == t.nodes:
        return []
    intent = build_out_intent(loaded.intent)
    try:
        plan = compile_plan(intent)
    except CompileError as exc:         # the topology itself is built at the build-out: only pools remain
        return [Finding(exc.code, ERROR, exc.path, f"at the build-out ({t.build_out_nodes} nodes): {exc.message}",
                        loaded.line_of(exc.path), loaded.file)]
    seen = {(f.code, f.path) for f in installed}
    ctx = CheckContext(intent, plan)
    out = []
    for code in BUILD_OUT_RULES:
        r = RULES[code]
        for path, message in r.func(ctx):
            if (code, path) not in seen:
                seen.add((code, path))
                out.append(Finding(code, r.severity, path, f"at the build-out ({t.build_out_nodes} nodes): {message}",
                                   loaded.line_of(path), loaded.file))
    return out


def run_checks(loaded: LoadedIntent) -> CheckResult:
    with gc_paused():               # compile and rules allocate ~1.5 M acyclic objects at 98k GPUs
        return _run_checks(loaded)


def _run_checks(loaded: LoadedIntent) -> CheckResult:
    load_rules()
    result = CheckResult()
    ctx = CheckContext(loaded.intent)
    result.findings += _run("intent", ctx, loaded)
    if not any(f.severity == ERROR for f in result.findings):
        try:
            result.plan = compile_plan(loaded.intent, loaded.discovered)
        except CompileError as exc:
            result.findings.append(Finding(exc.code, ERROR, exc.path, exc.message, loaded.line_of(exc.path),
                                           loaded.file))
    if result.plan is not None:
        result.findings += _run("plan", CheckContext(loaded.intent, result.plan), loaded)
        if not any(f.severity == ERROR for f in result.findings):
            result.findings += _build_out_findings(loaded, result.findings)
    # one finding per (code, path, message): a rule seen from two stages must not print twice
    unique = {(f.code, f.path, f.message): f for f in result.findings}
    result.findings = sorted(unique.values(), key=lambda f: (_SEVERITY_ORDER.get(f.severity, 2), f.code, f.path))
    return result


def load_checked(intent_path: str, doing: str, err) -> tuple[LoadedIntent, FabricPlan] | None:
    """Load and check an intent for a command that reads devices (drift, verify): the intent's
    problems go to `err` one per line and None comes back, so nothing is contacted."""
    from generator.intent.loader import IntentError, load_intent

    try:
        loaded = load_intent(intent_path)
    except IntentError as exc:
        for problem in exc.problems:
            print(f"error: {problem}", file=err)
        return None
    plan = checked_plan(loaded, doing, err)
    return None if plan is None else (loaded, plan)


def load_selected(intent_path: str, doing: str, only: str | None, limit: str | None, err):
    """load_checked, then the devices --only/--limit select: (loaded, plan, switches, hosts), or
    None with the reason on `err` (an intent that does not validate, a selection matching nothing)."""
    from generator.common.selection import limited, no_match

    found = load_checked(intent_path, doing, err)
    if found is None:
        return None
    loaded, plan = found
    switches, hosts = limited(plan, only, limit)
    if refusal := no_match(plan, only, limit, switches, hosts):
        print(refusal, file=err)
        return None
    return loaded, plan, switches, hosts


def checked_plan(loaded: LoadedIntent, doing: str, err) -> FabricPlan | None:
    """The plan of a loaded intent, or None with its errors on `err`, one per line."""
    checked = run_checks(loaded)
    if checked.errors or checked.plan is None:
        for f in checked.errors:
            print(f"error: {f.one_line()}", file=err)
        print(f"error: {loaded.file}: the intent does not validate; fix it before {doing}", file=err)
        return None
    return checked.plan
