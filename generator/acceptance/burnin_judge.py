"""`fabricgen acceptance INTENT --judge DIR`: the burn-in's outputs attributed to cables.

Reads DIR/burnin.json (written by --burn-in from the same intent) and each pair's client output
(perftest_log.py), then names the cables that explain the low pairs (attribution.py) with their
cabling.csv row and both ends, and the evidence: the low pairs and how far below expected.

With the rounds' switch counter snapshots it also names the cables whose switch port counted
errors during a round (round_counters.py) and the leaf uplinks that sent more than 1.25 x their
leaf's mean tx bytes in a round (spread.py: the ECMP hash left the load uneven).

Exit 0: every pair measured at its expected rate; 3: a finding (a cable, an unexplained low pair,
a pair not run, an uneven spread); 1: nothing judged (no or foreign burnin.json, another intent, an unreadable or
foreign output), one line naming the file, nothing written.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from generator.acceptance.attribution import DEFAULT_MIN_FRACTION, Measured, attribute, fraction
from generator.acceptance.burnin import SCHEDULE_FILE, SCHEMA
from generator.acceptance.perftest_log import NoTable, PerftestError, read_bw
from generator.common.errors import FabricgenError

MAX_SCHEDULE_BYTES = 64 << 20


class JudgeError(FabricgenError):
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
    from generator.acceptance.round_counters import round_findings

    out = []
    for rnd, then, now in _round_snapshots(directory, doc):
        used = {row for p in rnd["pairs"] for row in p["cables"]}
        out += round_findings(doc["cables"], rnd["id"], used, then, now)
    return out


def _round_snapshots(directory: Path, doc: dict):
    """(round, before, after) for each round with both counter snapshots; a snapshot that does not
    read is a JudgeError (take them again), a round without both is skipped."""
    from generator.acceptance.round_counters import load_snapshot, snapshot_paths

    for rnd in doc["rounds"]:
        before, after = snapshot_paths(directory, rnd["id"])
        if not (before.exists() and after.exists()):
            continue
        try:
            yield rnd, load_snapshot(before), load_snapshot(after)
        except ValueError as exc:
            raise JudgeError(f"{exc}; take the round's snapshots again") from None


def spread_evidence(directory: Path, doc: dict) -> list[tuple[str, int, object]]:
    """(round, cabling.csv row, spread.SpreadFinding) per leaf uplink that sent more than 1.25 x
    its leaf's mean tx bytes during a round, from the round's snapshots (napalm tx_octets of the
    leaf's end of each uplink the round used). A leaf's uplinks are the round's cables between
    a switch that has a NIC port of a pair (a leaf) and another switch; a leaf whose snapshots
    lack an uplink's bytes is not judged (nothing to compare)."""
    from generator.acceptance.spread import spread

    out = []
    for rnd, then, now in _round_snapshots(directory, doc):
        leaves = {p[side]["switch"] for p in rnd["pairs"] for side in ("client", "server")}
        hosts = _hosts(rnd)
        rows: dict[tuple[str, str], int] = {}
        for row in sorted({r for p in rnd["pairs"] for r in p["cables"]}):
            ends = [e.split(":", 1) for e in (doc["cables"][str(row)]["a"], doc["cables"][str(row)]["b"])]
            on_leaf = [(d, p) for d, p in ends if d in leaves]
            if len(on_leaf) == 1 and all(d not in hosts for d, _ in ends):
                rows[on_leaf[0]] = row
        sent: dict[str, dict[str, int]] = {}
        unreadable: set[str] = set()
        for (leaf, port), _row in sorted(rows.items()):
            try:
                grew = int(now[leaf][port]["tx_octets"]) - int(then[leaf][port]["tx_octets"])
            except (KeyError, TypeError, ValueError):
                unreadable.add(leaf)
                continue
            sent.setdefault(leaf, {})[port] = max(0, grew)
        found = spread({leaf: ports for leaf, ports in sent.items() if leaf not in unreadable})
        out += [(rnd["id"], rows[(f.leaf, f.port)], f) for f in found]
    return out


def _hosts(rnd: dict) -> set[str]:
    return {p[side]["host"] for p in rnd["pairs"] for side in ("client", "server")}


def judge_lines(doc: dict, results: list[Measured], missing: list[str],
                min_fraction: float = DEFAULT_MIN_FRACTION, counters: list | None = None,
                spread: list | None = None) -> tuple[list[str], int]:
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
    for round_id, row, f in spread or []:
        lines.append(f"load spread in round {round_id}: cable cabling.csv:{row} {f.line()}")
    for pid in missing:
        lines.append(f"not run: {pid}: no {pairs[pid]['output']}; run the round's script again")
    return lines, len(found.suspects) + len(found.unexplained) + len(missing) + len(by_cable) + len(spread or [])


def _pct(m: Measured) -> str:
    return "did not measure" if m.measured_gbps is None else f"{m.measured_gbps:.1f} Gb/s ({fraction(m):.0%})"


def run_judge(intent_text: str, directory: str, min_fraction: float = DEFAULT_MIN_FRACTION) -> tuple[int, list[str]]:
    """(exit code, lines to print); errors raise JudgeError or PerftestError."""
    d = Path(directory)
    doc = load_schedule(d, intent_text)
    results, missing = measurements(d, doc)
    lines, findings = judge_lines(doc, results, missing, min_fraction, counter_evidence(d, doc),
                                  spread_evidence(d, doc))
    return (3 if findings else 0), lines


__all__ = ["JudgeError", "PerftestError", "run_judge"]
