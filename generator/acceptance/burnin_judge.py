"""`fabricgen acceptance INTENT --judge DIR`: the burn-in's outputs attributed to cables.

Reads DIR/burnin.json (written by --burn-in from the same intent) and each pair's client output
(perftest_log.py), then names the cables that explain the low pairs (attribution.py) with their
cabling.csv row and both ends, and the evidence: the low pairs and how far below expected.

Exit 0: every pair measured at its expected rate; 3: a finding (a cable, an unexplained low pair,
a pair not run); 1: nothing judged (no or foreign burnin.json, another intent, an unreadable or
foreign output), one line naming the file, nothing written.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from generator.acceptance.attribution import DEFAULT_MIN_FRACTION, Measured, attribute, fraction
from generator.acceptance.burnin import SCHEDULE_FILE, SCHEMA
from generator.acceptance.perftest_log import NoTable, PerftestError, read_bw

MAX_SCHEDULE_BYTES = 64 << 20


class JudgeError(Exception):
    """One line: what, where, what to do."""


def load_schedule(directory: Path, intent_text: str) -> dict:
    path = directory / SCHEDULE_FILE
    try:
        if not path.is_file() or path.stat().st_size > MAX_SCHEDULE_BYTES:
            raise JudgeError(f"{path}: no burn-in schedule: run `fabricgen acceptance INTENT --burn-in -o {directory}` "
                             "first and judge that directory")
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise JudgeError(f"{path}: unreadable burn-in schedule ({exc}); write it again with --burn-in") from None
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
        raise JudgeError(f"{path}: not a fabricgen burn-in schedule (schema {SCHEMA}); write it again with --burn-in")
    if doc.get("intent_sha256") != hashlib.sha256(intent_text.encode()).hexdigest():
        raise JudgeError(f"{path}: written from another intent than the one given: judge with the intent the "
                         "schedule was written from, or write the schedule again")
    return doc


def measurements(directory: Path, doc: dict) -> tuple[list[Measured], list[str]]:
    """(measured pairs, pairs without an output). A pair's rate is the largest size's BW average."""
    out, missing = [], []
    for rnd in doc["rounds"]:
        for p in rnd["pairs"]:
            path = directory / p["output"]
            if not path.exists():
                missing.append(p["id"])
                continue
            try:
                rows = read_bw(path)
            except NoTable:
                rows = []          # the client gave up (no server, no path): a pair that did not measure
            rate = max(rows, key=lambda r: r.size_bytes).average_gbps if rows else None
            out.append(Measured(p["id"], tuple(p["cables"]), float(p["expected_gbps"]), rate))
    return out, missing


def counter_evidence(directory: Path, doc: dict) -> list:
    """Error growth per round from the snapshots the round left (round_counters.py); rounds
    without both snapshots have none."""
    from generator.acceptance.round_counters import load_snapshot, round_findings, snapshot_paths

    out = []
    for rnd in doc["rounds"]:
        before, after = snapshot_paths(directory, rnd["id"])
        if not (before.exists() and after.exists()):
            continue
        try:
            then, now = load_snapshot(before), load_snapshot(after)
        except ValueError as exc:
            raise JudgeError(f"{exc}; take the round's snapshots again") from None
        used = {row for p in rnd["pairs"] for row in p["cables"]}
        out += round_findings(doc["cables"], rnd["id"], used, then, now)
    return out


def judge_lines(doc: dict, results: list[Measured], missing: list[str],
                min_fraction: float = DEFAULT_MIN_FRACTION, counters: list | None = None) -> tuple[list[str], int]:
    """(report lines, number of findings)."""
    found = attribute(results, min_fraction)
    cables = doc["cables"]
    by_id = {m.pair: m for m in results}
    pairs = {p["id"]: p for rnd in doc["rounds"] for p in rnd["pairs"]}
    lines = [f"{doc['fabric']}: {len(results)} pair(s) judged, {found.good} at their expected rate, "
             f"{len(found.low)} below {min_fraction:.0%} of it, {len(missing)} not run"]
    for s in found.suspects:
        c = cables[str(s.cable)]
        evidence = ", ".join(f"{pid} {_pct(by_id[pid])}" for pid in s.pairs[:6])
        more = f" (+{len(s.pairs) - 6} more)" if len(s.pairs) > 6 else ""
        lines.append(f"cable cabling.csv:{s.cable} {c['a']} <-> {c['b']} ({c['tier']}): explains {len(s.pairs)} low "
                     f"pair(s), every other pair over it cleared none of them; worst {s.worst_fraction:.0%} of "
                     f"expected: {evidence}{more}")
    for pid in found.unexplained:
        p = pairs[pid]
        lines.append(f"pair {pid} {p['client']['host']}:{p['client']['rdma']} -> {p['server']['host']}:"
                     f"{p['server']['rdma']}: {_pct(by_id[pid])} of expected and every cable it crossed carried a good "
                     "pair: look at these NICs and hosts (firmware, PCIe, NUMA placement)")
    by_cable: dict[int, list] = {}
    for f in counters or []:
        by_cable.setdefault(f.cable, []).append(f)
    for row, evidence in sorted(by_cable.items()):
        c = cables[str(row)]
        seen = "; ".join(f"{f.device}:{f.port} {f.counter} +{f.growth} in round {f.round}" for f in evidence[:4])
        lines.append(f"cable cabling.csv:{row} {c['a']} <-> {c['b']} ({c['tier']}): errors while the burn-in ran: "
                     f"{seen}")
    for pid in missing:
        lines.append(f"not run: {pid}: no {pairs[pid]['output']}; run the round's script again")
    return lines, len(found.suspects) + len(found.unexplained) + len(missing) + len(by_cable)


def _pct(m: Measured) -> str:
    return "did not measure" if m.measured_gbps is None else f"{m.measured_gbps:.1f} Gb/s ({fraction(m):.0%})"


def run_judge(intent_text: str, directory: str, min_fraction: float = DEFAULT_MIN_FRACTION) -> tuple[int, list[str]]:
    """(exit code, lines to print); errors raise JudgeError or PerftestError."""
    d = Path(directory)
    doc = load_schedule(d, intent_text)
    results, missing = measurements(d, doc)
    lines, findings = judge_lines(doc, results, missing, min_fraction, counter_evidence(d, doc))
    return (3 if findings else 0), lines


__all__ = ["JudgeError", "PerftestError", "run_judge"]
