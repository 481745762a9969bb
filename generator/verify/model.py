"""Verify results: findings (one line each) and outcomes per check x device (a JUnit testcase)."""

from __future__ import annotations

from dataclasses import dataclass, field

SWITCH_CHECKS = ("cabling", "link", "speed", "mtu", "bgp", "errors", "pfc", "ecn",
                 "optics", "fec", "flaps", "hardware", "os-version", "ntp", "ecmp")
HOST_CHECKS = ("host-roce", "host-counters")
CHECKS = SWITCH_CHECKS + HOST_CHECKS
ERROR, WARNING = "error", "warning"
NOT_INSTALLED = "not installed"


@dataclass(frozen=True)
class Finding:
    check: str
    device: str
    port: str
    expected: str
    observed: str
    severity: str = ERROR
    message: str = ""          # the one line a person reads; json keeps the contract's keys only

    @property
    def id(self) -> str:
        """How a consequence names its root (json `caused_by`): one finding per check, device and port
        for every check root_cause.py groups."""
        return f"{self.check}:{self.device}:{self.port}"

    def line(self) -> str:
        if self.message:
            return self.message
        where = f"{self.port} on {self.device}" if self.port else self.device
        return f"{where}: expected {self.expected}, observed {self.observed}"

    def as_dict(self) -> dict:
        return {"check": self.check, "device": self.device, "port": self.port, "expected": self.expected,
                "observed": self.observed, "severity": self.severity}


@dataclass
class Outcome:
    """One check on one device: passed | failed | unknown (could not check) | skipped |
    not installed (a switch of the plan the endpoints file does not list yet: issue 36)."""

    check: str
    device: str
    status: str
    findings: list[Finding] = field(default_factory=list)
    reason: str = ""           # why unknown or skipped


@dataclass
class VerifyReport:
    fabric: str
    outcomes: list[Outcome]
    started: float
    finished: float
    notes: list[str] = field(default_factory=list)
    # root_cause.py: consequence finding id -> its root finding id
    caused_by: dict[str, str] = field(default_factory=dict)
    # planned ports toward devices not installed (nothing checked on them): (device, port, why)
    absent_ports: list[tuple[str, str, str]] = field(default_factory=list)

    def counted(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.status not in ("skipped", NOT_INSTALLED)]

    def not_installed_devices(self) -> list[str]:
        return sorted({o.device for o in self.outcomes if o.status == NOT_INSTALLED})

    def consequences(self) -> dict[str, list[Finding]]:
        """root finding id -> the findings that follow from it, in report order."""
        out: dict[str, list[Finding]] = {}
        for f in self.findings():
            if f.id in self.caused_by:
                out.setdefault(self.caused_by[f.id], []).append(f)
        return out

    def summary(self) -> dict[str, int]:
        counted = self.counted()
        return {"checked": len(counted), "passed": sum(o.status == "passed" for o in counted),
                "failed": sum(o.status == "failed" for o in counted),
                "unknown": sum(o.status == "unknown" for o in counted)}

    def findings(self) -> list[Finding]:
        """What failed, then what could not be checked (as a finding with the reason observed)."""
        out: list[Finding] = []
        for o in self.outcomes:
            if o.status == "failed":
                out += o.findings
            elif o.status == "unknown":
                out.append(Finding(o.check, o.device, "", "checked", f"could not check: {o.reason}", ERROR))
        order = {c: i for i, c in enumerate(CHECKS)}
        return sorted(out, key=lambda f: (order.get(f.check, 99), f.device, _port_key(f.port), f.observed))

    @property
    def exit_code(self) -> int:
        summary = self.summary()
        # a verify that checked nothing (no device of the selection installed or reachable) has
        # proved nothing: "could not check", never "all pass"
        if summary["unknown"] or not summary["checked"]:
            return 1
        return 3 if summary["failed"] else 0


def _port_key(port: str) -> tuple:
    import re

    return tuple(int(p) if p.isdigit() else p for p in re.split(r"(\d+)", port))


def outcome(check: str, device: str, findings: list[Finding]) -> Outcome:
    return Outcome(check, device, "failed" if findings else "passed", findings)
