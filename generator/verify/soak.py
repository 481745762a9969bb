"""`verify --soak DURATION --interval I`: error counters watched over a window, not 5 seconds.

Each switch keeps one session (devices/sessions.py: a read that did not complete is retried once
on a new session) and is read every INTERVAL until DURATION has passed: interface counters
(napalm get_interfaces_counters: rx/tx errors and discards) and, where the driver has them, PHY
counters (FEC uncorrected codewords, carrier transitions = link flaps) and the PFC watchdog's
storm counts per port and priority (NVUE `qos pfc-watchdog` deadlock-count, SONiC `show pfcwd
stats` STORM DETECTED: a storm is a NIC or switch stuck sending pause frames, the watchdog
dropped that queue's traffic for its restoration time). Any growth between two
reads is a finding naming the switch, port, counter, the growth and the UTC time of the read that
saw it (the fault started between that read and the one before). A switch whose read fails is
unknown for that interval, never clean (safety is never inferred away).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from generator.devices.sessions import Session, for_each
from generator.safe_text import for_terminal

# napalm's get_interfaces_counters keys that only grow on trouble
INTERFACE_ERRORS = ("rx_errors", "tx_errors", "rx_discards", "tx_discards")
# oper.py phy_counters keys (None: the OS does not count it)
PHY_ERRORS = {"fec_uncorrected": "FEC uncorrected codewords", "carrier_transitions": "link flaps"}
WATCHDOG = "PFC watchdog storms, priority"
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|m|h)?\s*$")
MAX_DURATION_S = 7 * 24 * 3600


def parse_duration(text: str) -> float:
    """'90', '90s', '15m', '2h' -> seconds; ValueError naming the form otherwise."""
    m = _DURATION.match(text or "")
    if not m:
        raise ValueError(f"{text!r} is not a duration: write seconds or a number with s, m or h, e.g. 15m or 2h")
    seconds = float(m.group(1)) * {"s": 1, "m": 60, "h": 3600, None: 1}[m.group(2)]
    if not 0 < seconds <= MAX_DURATION_S:
        raise ValueError(f"{text!r}: give a duration above 0 and at most 7 days")
    return seconds


@dataclass(frozen=True, slots=True)
class Sample:
    at: float                                   # time.time() of the read
    counters: dict | None                       # {port: {key: int}} or None (the read failed)
    phy: dict | None
    error: str = ""
    watchdog: dict | None = None                # {port: {priority: {"storm_detected": int, ...}}}
    watchdog_error: str = ""                    # the watchdog read failed: its storms are unknown


@dataclass(frozen=True, slots=True)
class SoakFinding:
    device: str
    port: str
    counter: str
    growth: int
    at: float                                   # the read that saw the growth

    def when(self) -> str:
        return datetime.fromtimestamp(self.at, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")

    def line(self) -> str:
        return f"{self.device} {self.port}: {self.counter} +{self.growth} by {self.when()}"


def growth(device: str, samples: list[Sample]) -> tuple[list[SoakFinding], list[str]]:
    """(findings, unknown intervals) from one switch's samples in time order: the first growth of
    each (port, counter) between two good reads."""
    found: dict[tuple[str, str], SoakFinding] = {}
    unknown = [f"{device}: read at {datetime.fromtimestamp(s.at, UTC):%H:%M:%SZ} failed: {s.error}"
               for s in samples if s.counters is None]
    unknown += [f"{device}: PFC watchdog read at {datetime.fromtimestamp(s.at, UTC):%H:%M:%SZ} failed: "
                f"{s.watchdog_error}" for s in samples if s.counters is not None and s.watchdog_error]
    good = [s for s in samples if s.counters is not None]
    for before, after in zip(good, good[1:], strict=False):
        for port, now in sorted(after.counters.items()):
            then = before.counters.get(port)
            if then is None:
                continue
            for key in INTERFACE_ERRORS:
                delta = int(now.get(key, 0) or 0) - int(then.get(key, 0) or 0)
                if delta > 0 and (port, key) not in found:
                    found[(port, key)] = SoakFinding(device, port, key.replace("_", " "), delta, after.at)
        for port, now in sorted((after.phy or {}).items()):
            then = (before.phy or {}).get(port)
            for key, what in PHY_ERRORS.items():
                if then is None or now.get(key) is None or then.get(key) is None:
                    continue
                delta = int(now[key]) - int(then[key])
                if delta > 0 and (port, key) not in found:
                    found[(port, key)] = SoakFinding(device, port, what, delta, after.at)
        if before.watchdog is None or after.watchdog is None:
            continue
        for port, now in sorted(after.watchdog.items()):
            then = before.watchdog.get(port) or {}
            for prio, row in sorted(now.items()):
                # a queue the OS printed no row for had no storm yet (pfcwd prints non-zero rows only)
                delta = int(row.get("storm_detected") or 0) - int((then.get(prio) or {}).get("storm_detected") or 0)
                key = f"{WATCHDOG} {prio}"
                if delta > 0 and (port, key) not in found:
                    found[(port, key)] = SoakFinding(device, port, f"{WATCHDOG} {prio}", delta, after.at)
    return sorted(found.values(), key=lambda f: (f.at, f.port, f.counter)), unknown


def soak(names: list[str], make_driver: Callable[[str], Callable], *, duration_s: float, interval_s: float,
         workers: int, after_read: Callable[[int], None] | None = None,
         clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], None] = time.sleep
         ) -> dict[str, list[Sample]]:
    """Every switch read at 0, I, 2I ... up to DURATION; after_read(k) runs once the k-th read of
    every switch is in (k from 1), so a test acts at a read, never on a timer."""
    sessions = {n: Session(make_driver(n)) for n in names}
    samples: dict[str, list[Sample]] = {n: [] for n in names}

    def read(name: str) -> None:
        session = sessions[name]
        try:
            counters = session.call(lambda d: d.get_interfaces_counters())
        except Exception as exc:  # noqa: BLE001 - this interval of this switch is unknown
            samples[name].append(Sample(time.time(), None, None, " ".join(str(exc).split())[:200]))
            return
        phy = None
        if getattr(session.driver, "get_phy_counters", None) is not None:
            try:
                phy = session.call(lambda d: d.get_phy_counters())
            except Exception:  # noqa: BLE001 - PHY counters are optional; the interface ones stand
                phy = None
        watchdog, watchdog_error = None, ""
        if getattr(session.driver, "get_pfc_watchdog_counters", None) is not None:
            try:
                watchdog = session.call(lambda d: d.get_pfc_watchdog_counters())
            except Exception as exc:  # noqa: BLE001 - storms unread are unknown, never none
                watchdog_error = " ".join(str(exc).split())[:200]
        samples[name].append(Sample(time.time(), counters, phy, watchdog=watchdog, watchdog_error=watchdog_error))

    start = clock()
    k = 0
    try:
        while True:
            for_each(names, read, workers)
            k += 1
            if after_read is not None:
                after_read(k)
            due = start + k * interval_s
            if due > start + duration_s + 1e-9:
                break
            sleep(max(0.0, due - clock()))
    finally:
        for session in sessions.values():
            session.close()
    return samples


CHECK_OF = {"FEC uncorrected codewords": "fec", "link flaps": "flaps"}


def _check(counter: str) -> str:
    return "pfc-watchdog" if counter.startswith(WATCHDOG) else CHECK_OF.get(counter, "errors")


def report(plan_fabric: str, samples: dict[str, list[Sample]], fmt: str) -> tuple[str, int]:
    """(text, exit code): 0 clean, 3 a finding, 1 a read failed (that window was not watched)."""
    import json

    findings: list[SoakFinding] = []
    unknown: list[str] = []
    for name in sorted(samples):
        f, u = growth(name, samples[name])
        findings += f
        unknown += u
    reads = sum(len(v) for v in samples.values())
    code = 1 if unknown else 3 if findings else 0
    if fmt == "json":
        doc = {"summary": {"switches": len(samples), "reads": reads, "findings": len(findings), "unknown": len(unknown)},
               "findings": [{"check": _check(f.counter), "device": f.device, "port": f.port,
                             "expected": f"no {f.counter} growth", "observed": f"+{f.growth} by {f.when()}",
                             "severity": "error"} for f in findings],
               "unknown": unknown}
        return json.dumps(doc, indent=1) + "\n", code
    lines = [f"soak of {plan_fabric}: {len(samples)} switch(es), {reads} read(s), {len(findings)} finding(s)"]
    lines += [f"{'PFC storms' if f.counter.startswith(WATCHDOG) else 'error growth'}: {f.line()}" for f in findings]
    lines += [f"unknown: {u}" for u in unknown]
    # a port or counter name is the device's text: escaped line by line, so a control character in
    # it cannot reach the terminal nor start a line of its own, while the table keeps its line breaks
    return "".join(for_terminal(line) + "\n" for line in lines), code
