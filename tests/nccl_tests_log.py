# C printf formats restated as %-formats (UP031)
# ruff: noqa: UP031
"""nccl-tests logs laid out with the printf formats of NVIDIA/nccl-tests v2.19.6 (@a0b82b2,
src/util.cu: writeDeviceReport, writeResultHeader, writeBenchmarkLinePreamble,
writeBenchmarkLineBody, getFloatStr, writeResultFooter), restated here as Python %-formats.

A module of its own, without pytest, so that the mpirun stand-ins of the collective tests
(tests/unit/test_acceptance_collectives.py: ~40 starts) import only this (0.06 s a start against
0.2 s with a test module and pytest). The parser's tests are tests/unit/test_acceptance_log.py.
"""

from __future__ import annotations

GIB = 1 << 30
SIZES = [GIB << i for i in range(5)]


def get_float_str(value: float, width: int) -> str:
    """util.cu getFloatStr: the widest of %.2f, %.1f, %.0f that fits, else %e."""
    for fmt in ("%*.2f", "%*.1f", "%*.0f"):
        text = fmt % (width, value)
        if len(text) <= width:
            return text
    return ("%*.1e" if width >= 7 else "%*.0e") % (width, value)


def row_body(time_us: float, algbw: float, busbw: float, wrong: int | None) -> str:
    cols = (get_float_str(time_us, 7), get_float_str(algbw, 6), get_float_str(busbw, 6))
    if wrong is None:
        return "  %7s  %6s  %6s    N/A" % cols
    return "  %7s  %6s  %6s  %6g" % (*cols, wrong)


def nccl_log(hosts: list[str], gpus_per_node: int, busbw: float | list[float], *, sizes: list[int] = SIZES,
             wrong: tuple[int | None, int | None] = (0, 0), ip_factor: float = 1.0, footer: bool = True,
             program: str = "all_reduce_perf") -> str:
    """A complete all_reduce_perf -g 1 log: one process per GPU, `busbw` GB/s out-of-place
    (per size when a list) and `busbw * ip_factor` in-place; #wrong as given (None = N/A)."""
    ranks = len(hosts) * gpus_per_node
    factor = 2 * (ranks - 1) / ranks
    lines = [
        "# nccl-tests version 2.19.6 nccl-headers=22807 nccl-library=22807",
        f"# Collective test starting: {program}",
        "# nThread %d nGpus %d minBytes %ld maxBytes %ld step: %ld(%s) warmup iters: %d iters: %d agg iters: %d "
        "validation: %d graph: %d unalign: %d" % (1, 1, min(sizes), max(sizes), 2, "factor", 1, 20, 1, 1, 0, 0),
        "#",
        "# Using devices",
    ]
    for r in range(ranks):
        host, dev = hosts[r // gpus_per_node], r % gpus_per_node
        lines.append("#  Rank %2d Group %2d Pid %6d on %10s device %2d [%04x:%02x:%02x] %s"
                     % (r, 0, 40000 + r, host, dev, 0, 0x18 + dev, 0, "NVIDIA H100 80GB HBM3"))
    lines += [
        "#",
        "# %10s  %12s  %8s  %6s  %6s           out-of-place                       in-place          "
        % ("", "", "", "", ""),
        "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s %*s"
        % ("size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw",
           "#wrong", 0, ""),
        "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s %*s"
        % ("(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "", 0, ""),
    ]
    cells = []
    for i, size in enumerate(sizes):
        bws = busbw if isinstance(busbw, list) else [busbw] * len(sizes)
        row = "%12li  %12li  %8s  %6s  %6s" % (size, size // 4, "float", "sum", "%6i" % -1)
        for bw, w in ((bws[i], wrong[0]), (bws[i] * ip_factor, wrong[1])):
            algbw = bw / factor
            row += row_body(size / 1e9 / algbw * 1e6, algbw, bw, w)
            cells.append(bw)
        lines.append(row)
    if footer:
        lines += ["# %-20s : %d %s" % ("Out of bounds values", 0, "OK"),
                  "# %-20s : %g %s" % ("Avg bus bandwidth", sum(cells) / len(cells), ""),
                  "#", f"# Collective test concluded: {program}", "#"]
    return "\n".join(lines) + "\n"
