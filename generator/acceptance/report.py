"""What `acceptance --results` prints (a rich table per run) and writes (measured.json).

measured.json holds every measured point with the run's shape and the prediction, so the
capacity model can be recalibrated from real runs: `busbw_GBps / node_line_rate_GBps` of
the large judged rows is the NIC efficiency that `Calibration.nic_efficiency` takes
(generator/capacity/allreduce.py), and `time_us` against size gives the latency term.

Log paths, host names and problem lines come from files a job wrote; the table escapes them
with generator/safe_text.py and measured.json carries no lone surrogate.
"""

from __future__ import annotations

import io
import json
import shutil
import sys

from generator.acceptance.compare import RunResult
from generator.acceptance.expected import Predictor, rounded
from generator.safe_text import for_terminal, json_safe, terminal_text

MEASURED_SCHEMA = "fabricgen.acceptance.measured/1"


def _size(n: int) -> str:
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift} {unit}"
    return f"{n} B"


def _wrong(c) -> str:
    """#wrong as printed; a log with an "error" column shows its largest deviation, which is not a count."""
    if c.wrong is not None:
        return f"{c.wrong:g}"
    return "N/A" if c.max_error is None else f"err {c.max_error:g}"


def format_tables(results: list[RunResult], min_fraction: float, *, width: int | None = None) -> str:
    from rich.console import Console
    from rich.table import Table

    buffer = io.StringIO()
    if width is None:
        width = shutil.get_terminal_size((160, 24)).columns if sys.stdout.isatty() else 160
    console = Console(file=buffer, width=width, no_color=True, highlight=False, emoji=False)
    for res in results:
        run = res.run
        title = (f"{run.id}: {run.nodes} nodes, {run.ranks} ranks - {res.log.path} (matched by {res.matched_by}); "
                 f"avg busbw {res.log.avg_busbw_GBps:g} GB/s")
        table = Table(title=terminal_text(title), title_justify="left")
        for col, just in (("size", "right"), ("busbw out-of-place GB/s", "right"), ("in-place GB/s", "right"),
                          ("predicted GB/s", "right"), ("algorithm", "left"), ("of predicted", "right"),
                          ("#wrong", "right"), ("result", "left")):
            table.add_column(col, justify=just, overflow="fold")
        for p in res.points:
            oop, inp = p.row.out_of_place, p.row.in_place
            wrong = "/".join(_wrong(c) for c in p.row.cells)
            frac = "" if p.fraction is None else f"{p.fraction:.0%}"
            result = "FAIL: " + "; ".join(p.problems) if p.problems else ("ok" if p.judged else "not judged")
            table.add_row(_size(p.row.size_bytes), "-" if oop is None else f"{oop.busbw_GBps:.2f}",
                          f"{inp.busbw_GBps:.2f}", f"{p.prediction.busbw_GBps:.2f}", p.prediction.algorithm,
                          frac, wrong, terminal_text(result))
        console.print(table)
        for line in res.problems:
            console.print(for_terminal(f"FAIL: {run.id}: {line}"), markup=False)
        for line in res.notes:
            console.print(for_terminal(f"note: {run.id}: {line}"), markup=False)
    failed = [r for r in results if not r.ok]
    console.print(f"{len(results)} log(s): {len(results) - len(failed)} passed, {len(failed)} below expectation "
                  f"or corrupt (minimum {min_fraction:.0%} of the predicted busbw)", markup=False)
    return buffer.getvalue()


def _cell(c) -> dict | None:
    return None if c is None else {k: (rounded(v) if isinstance(v, float) else v) for k, v in c.as_dict().items()}


def measured_doc(fabric: str, results: list[RunResult], predictor: Predictor, min_fraction: float,
                 min_size: int) -> dict:
    s = predictor.shape
    return {
        "schema": MEASURED_SCHEMA,
        "fabric": fabric,
        "model": {"gpu": s.gpu.name, "gpus_per_node": s.gpus_per_node, "rails": s.rails,
                  "nic_speed_gbps": s.nic_speed_g, "nic_efficiency": predictor.efficiency,
                  "node_line_rate_GBps": rounded(predictor.line_rate_GBps)},
        "min_fraction": min_fraction,
        "min_size_bytes": min_size,
        "runs": [{
            "log": r.log.path, "run": r.run.id, "kind": r.run.kind, "matched_by": r.matched_by,
            "nodes": r.run.nodes, "ranks": r.run.ranks, "hosts": list(r.log.hosts) or list(r.run.hosts),
            "nccl_tests_version": r.log.version, "avg_busbw_GBps": rounded(r.log.avg_busbw_GBps),
            "ok": r.ok, "problems": list(r.problems), "notes": list(r.notes),
            "points": [{
                "size_bytes": p.row.size_bytes, "count": p.row.count, "type": p.row.type, "redop": p.row.redop,
                "out_of_place": _cell(p.row.out_of_place), "in_place": _cell(p.row.in_place),
                "predicted": {"algorithm": p.prediction.algorithm, "busbw_GBps": rounded(p.prediction.busbw_GBps),
                              "time_us": rounded(p.prediction.time_us, 3)},
                "fraction": None if p.fraction is None else rounded(p.fraction),
                "of_line_rate": rounded(p.measured_busbw / predictor.line_rate_GBps),
                "judged": p.judged, "ok": p.ok, "problems": list(p.problems),
            } for p in r.points],
        } for r in results],
    }


def measured_json(doc: dict) -> str:
    return json.dumps(json_safe(doc), indent=1) + "\n"
