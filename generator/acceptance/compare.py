"""Match each nccl-tests log to a planned run and judge every row against the prediction.

Matching, first rule that applies:
1. hosts: the log's "# Rank ... on <host>" lines name exactly the run's hosts (domain
   stripped, so gpu001.cluster.local is gpu001);
2. file name: logs/<run>.log as the generated scripts write it, or <run> followed by
   . - or _ (fabric-12345.log);
3. rank count: the runs with the log's rank count, when they all have the same node count
   (rail groups of one size get the same prediction, so which of them ran does not matter).
A matched log must have the run's rank count; anything else is a log of some other job.

A row is judged when its size is at least --min-size (default 1 GiB: the acceptance
command starts at -b 1G, where the model's bandwidth term dominates; below that its
latency constants are rough). It fails when the lower of its out-of-place and in-place
busbw is below min_fraction x the predicted busbw. Any #wrong > 0, judged or not, is a
failure in its own right: the collective returned wrong data.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from generator.acceptance.expected import SIZES, Prediction, Predictor
from generator.acceptance.nccl_log import LogError, NcclLog, Row
from generator.acceptance.runs import Run, RunSet

DEFAULT_MIN_FRACTION = 0.85
DEFAULT_MIN_SIZE = SIZES[0]
_ANY_OF_SIZE = "rank count (any of "       # matched_by of a log that could be any run of its size


@dataclass(frozen=True, slots=True)
class Point:
    row: Row
    prediction: Prediction
    judged: bool
    problems: tuple[str, ...]

    @property
    def measured_busbw(self) -> float:
        """The lower of out-of-place and in-place: either being slow is a slow fabric."""
        return min(c.busbw_GBps for c in self.row.cells)

    @property
    def fraction(self) -> float | None:
        p = self.prediction.busbw_GBps
        return self.measured_busbw / p if p > 0 else None

    @property
    def ok(self) -> bool:
        return not self.problems


@dataclass
class RunResult:
    log: NcclLog
    run: Run
    matched_by: str
    points: list[Point] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)     # failures of the log as a whole
    notes: list[str] = field(default_factory=list)        # worth reading, not failures

    @property
    def ok(self) -> bool:
        return not self.problems and all(p.ok for p in self.points)


def _short(host: str) -> str:
    return host.split(".", 1)[0]


def _stem(path: str) -> str:
    name = re.split(r"[\\/]", path)[-1]
    return name[:-4] if name.endswith(".log") else name


def match_run(log: NcclLog, runset: RunSet) -> tuple[Run, str]:
    hosts = {_short(h) for h in log.hosts}
    if hosts:
        for run in runset.runs:
            if set(run.hosts) == hosts:
                return _checked(log, run, "hosts")
    stem = _stem(log.path)
    named = [r for r in runset.runs if stem == r.id or re.match(re.escape(r.id) + r"[._-]", stem)]
    if named:
        return _checked(log, max(named, key=lambda r: len(r.id)), "file name")
    same = [r for r in runset.runs if log.nranks is not None and r.ranks == log.nranks]
    if same and len({r.nodes for r in same}) == 1:
        how = "rank count" if len(same) == 1 else f"{_ANY_OF_SIZE}{', '.join(r.id for r in same)})"
        return same[0], how
    plan = ", ".join(f"{r.id} ({r.ranks} ranks)" for r in runset.runs)
    seen = f"{log.nranks} ranks" if log.nranks else "no '# Rank' lines"
    raise LogError(f"{log.path}: matches no planned run ({seen}"
                   + (f" on {', '.join(sorted(hosts))}" if hosts else "")
                   + f"; planned: {plan}): name the file <run>.log as the generated scripts do")


def _checked(log: NcclLog, run: Run, how: str) -> tuple[Run, str]:
    if log.nranks is not None and log.nranks != run.ranks:
        raise LogError(f"{log.path}: matched run {run.id} by {how}, but has {log.nranks} ranks where the run has "
                       f"{run.ranks} ({run.nodes} nodes x {run.gpus_per_node} GPUs, -g 1): "
                       "rerun with the generated script")
    return run, how


def judge(log: NcclLog, run: Run, how: str, predictor: Predictor, min_fraction: float,
          min_size: int) -> RunResult:
    result = RunResult(log, run, how)
    for row in log.rows:
        pred = predictor.predict(run.nodes, row.size_bytes)
        problems: list[str] = []
        for name, cell in (("out-of-place", row.out_of_place), ("in-place", row.in_place)):
            if cell is not None and cell.wrong:
                problems.append(f"{cell.wrong:g} wrong {name}: data corruption")
        judged = row.size_bytes >= min_size
        probe = Point(row, pred, judged, ())
        if judged and probe.fraction is not None and probe.fraction < min_fraction:
            problems.append(f"busbw {probe.measured_busbw:.2f} GB/s is {probe.fraction:.0%} of the predicted "
                            f"{pred.busbw_GBps:.2f} GB/s (minimum {min_fraction:.0%})")
        result.points.append(Point(row, pred, judged, tuple(problems)))
    if log.out_of_bounds:
        result.problems.append(f"'# Out of bounds values : {log.out_of_bounds}': nccl-tests found wrong results")
    if not any(p.judged for p in result.points):
        raise LogError(f"{log.path}: no data row of {min_size} bytes or more to judge (largest "
                       f"{max(r.size_bytes for r in log.rows)}): run the generated command (-b 1G -e 16G) "
                       "or lower --min-size")
    if not log.validated:
        result.notes.append("validation was off (#wrong N/A, -c 0): data corruption was not checked")
    missing = [s for s in SIZES if s >= min_size and s not in {r.size_bytes for r in log.rows}]
    if missing:
        result.notes.append("no row for " + ", ".join(f"{s >> 30} GiB" for s in missing)
                            + " (nccl-tests lowers -e when GPU memory is short)")
    return result


def compare(logs: list[NcclLog], runset: RunSet, predictor: Predictor, *, min_fraction: float = DEFAULT_MIN_FRACTION,
            min_size: int = DEFAULT_MIN_SIZE) -> list[RunResult]:
    """Raises LogError for a log that matches no run or has nothing to judge."""
    matched = [(log, *match_run(log, runset)) for log in logs]
    return [judge(log, run, how, predictor, min_fraction, min_size) for log, run, how in matched]


def not_run(results: list[RunResult], runset: RunSet) -> list[Run]:
    """The planned runs no log was judged for, in plan order. A log matched only by its rank
    count stands for one run of that size (which one ran cannot be told from the log): each
    such log covers one run of its size that no other log covers."""
    covered = {r.run.id for r in results if not r.matched_by.startswith(_ANY_OF_SIZE)}
    for res in results:
        if res.matched_by.startswith(_ANY_OF_SIZE):
            peers = [run for run in runset.runs if run.ranks == res.log.nranks and run.id not in covered]
            if peers:
                covered.add(peers[0].id)
    return [run for run in runset.runs if run.id not in covered]
