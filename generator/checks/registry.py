"""Rule catalog mechanics: each rule is one function with a stable code.

Codes never change meaning once published (users silence and grep them):
FG1xx topology, FG2xx lossless/QoS, FG3xx host and NCCL, FG4xx addressing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

ERROR = "error"
WARNING = "warning"


@dataclass(frozen=True, slots=True)
class Finding:
    code: str
    severity: str
    path: str          # intent key path, e.g. "roce.ecn.min_threshold"
    message: str
    line: int | None = None
    file: str | None = None

    def location(self) -> str:
        if self.file and self.line:
            return f"{self.file}:{self.line}"
        return self.file or ""

    def one_line(self) -> str:
        where = self.location()
        prefix = f"{where}: " if where else ""
        return f"{prefix}{self.severity} {self.code} {self.path}: {self.message}"

    def as_dict(self) -> dict[str, Any]:
        return {"code": self.code, "severity": self.severity, "path": self.path,
                "message": self.message, "file": self.file, "line": self.line}


@dataclass(frozen=True, slots=True)
class Rule:
    code: str
    severity: str
    title: str
    explanation: str
    stage: str          # "intent": needs only the intent; "plan": needs the compiled plan
    func: Callable[[Any], Iterable[tuple[str, str]]]


RULES: dict[str, Rule] = {}


def rule(code: str, severity: str, title: str, *, stage: str = "plan") -> Callable:
    """Register a rule. The function yields (intent_key_path, message) pairs; its
    docstring is the long explanation shown by `fabricgen validate --explain CODE`."""

    def register(func: Callable) -> Callable:
        if code in RULES:
            raise RuntimeError(f"rule code {code} registered twice")
        doc = (func.__doc__ or "").strip()
        RULES[code] = Rule(code, severity, title, _dedent(doc), stage, func)
        return func

    return register


def _dedent(text: str) -> str:
    import textwrap

    first, _, rest = text.partition("\n")
    return (first + "\n" + textwrap.dedent(rest)).strip()


@dataclass(frozen=True)
class CheckContext:
    """What a rule sees: the validated intent, and the compiled plan for plan-stage
    rules (None when compilation failed, in which case plan rules do not run)."""

    intent: Any            # generator.intent.model.Intent
    plan: Any = None       # generator.plan.model.FabricPlan
