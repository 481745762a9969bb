"""Parse nccl-tests output (all_reduce_perf stdout) in the format its sources print.

Formats restated from NVIDIA/nccl-tests (v2.19.6 @a0b82b2, src/util.cu; older releases
printed the same from src/common.cu):

    # nccl-tests version 2.19.6 nccl-headers=22807 nccl-library=22807      (2025 and later)
    # Collective test starting: all_reduce_perf
    # nThread %d nGpus %d minBytes %ld maxBytes %ld step: %ld(%s) warmup iters: %d iters: %d ...
    # Using devices
    #  Rank %2d Group %2d Pid %6d on %10s device %2d [%04x:%02x:%02x] %s
          (2019-2022: "#   Rank %2d Pid %6d on %10s device %2d [0x%02x] %s", no Group)
    #
    # %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s     size count type redop root
          time algbw busbw #wrong (out-of-place) time algbw busbw #wrong (in-place); -I 1 adds
          i_min i_max i_p99 i_cv% to each half, report_timestamps a trailing timestamp column
    %12li  %12li  %8s  %6s  %6s   then per half "  %7s  %6s  %6s  %6g" (time in us, algbw and
          busbw in GB/s, #wrong elements); "N/A" instead of #wrong when validation is off (-c 0);
          before 2025 "%6.2f" for the bandwidths, 2019-2022 an "error" column ("%5.0le", max delta)
    # Out of bounds values : %d OK|FAILED
    # Avg bus bandwidth    : %g             (the mean busbw over every out-of-place and in-place cell)
    # Collective test concluded: all_reduce_perf

Sizes are bytes (count x type size), so 1G on the command line prints as 1073741824.
Before 2019 rows had no root column and "#   Rank %2d Pid ..." lines; logs pasted through
Markdown lose their leading "#"; both are read too, and so are lines behind an srun --label or
mpirun --tag-output prefix. Until 2019 each collective printed its own
header (src/<collective>.cu print_header, NVIDIA/nccl-tests cbe7f65): all_gather named only
"size count type", broadcast "size count type root", so redop and root are each optional
(tests/data/nccl/all_gather_v100_dgx2_2019_failed.txt is such a real all_gather log).
The "error" column of those releases is the largest deviation from the expected result
(src/common.cu CheckData: a cell is out of bounds when it exceeds DeltaMaxValue(type) x
(nranks - 1)), not a count of wrong elements: a float sum deviates by ~1e-07 on a healthy
run. It is kept as Cell.max_error and the footer's out-of-bounds count is the verdict.
Lines that are none of these (NCCL INFO/WARN, mpirun chatter) are ignored, but a row that
does not have the columns its header names is an error: the log was cut or interleaved.
"""

from __future__ import annotations

import math
import re
import stat
from dataclasses import dataclass
from itertools import compress
from pathlib import Path

from generator.common.bounded_read import ReadRefused, read_bounded
from generator.common.errors import FabricgenError

# The leading "#" is optional: logs pasted through Markdown (issue trackers, wikis) lose it.
_VERSION = re.compile(r"^\s*#?\s*nccl-tests version\s+(\S+)")
_START = re.compile(r"^\s*#?\s*Collective test starting:\s*(\S+)")
_NTHREAD = re.compile(r"^\s*#?\s*nThread\s+(\d+)\s+nGpus\s+(\d+)\s+minBytes\s+(\d+)\s+maxBytes\s+(\d+)")
_RANK = re.compile(r"^\s*#?\s*Rank\s+(\d+)\s+(?:Group\s+(\d+)\s+)?Pid\s+(\d+)\s+on\s+(\S+)\s+device\s+(\d+)")
# before 2019 there was no root column, and all_gather had no redop column either
_COLUMNS = re.compile(r"^\s*#?\s*size\s+count\s+type\s+(redop\s+)?(root\s+)?((?:cpu)?time\s.*)$")
_OOB = re.compile(r"^\s*#?\s*Out of bounds values\s*:\s*(\d+)")
_AVG = re.compile(r"^\s*#?\s*Avg bus bandwidth\s*:\s*(\S+)")
_TIME_COLUMNS = ("time", "cputime")
# What a launcher puts before each line it relays: Slurm `srun --label` the task number ("0: ",
# srun(1)), Open MPI `mpirun --tag-output` "[jobid,rank]<stdout>:" (mpirun(1)). Real logs carry
# both (tests/data/nccl/all_reduce_p5_2x8_srun_label.txt, all_reduce_p5_2x8_tag_output.txt).
_LAUNCHER_PREFIX = re.compile(r"^\s*(?:\d+: |\[\d+,\d+\]<std(?:out|err)>: ?)")
# What every line parse_text reads starts with, behind a launcher's prefix: the word after
# "#" of each header pattern above, or a data row's first digit. The other lines (NCCL INFO,
# mpirun chatter: nearly all of a log at the 64 MiB cap) are passed over in C: 3.3 -> 0.75 s for
# a log padded to the cap, where seven patterns were tried on each of its 2 million lines.
_CANDIDATE = re.compile(r"(?:\s*(?:\d+: |\[\d+,\d+\]<std(?:out|err)>: ?))?\s*#?\s*(?:\d|nccl-tests version|"
                        r"Collective test starting|nThread|Rank|size|Out of bounds values|Avg bus bandwidth)")
# An all_reduce_perf log is a few KB (a header, one line per rank, ~20 rows); NCCL_DEBUG=INFO
# adds some tens of lines per rank, ~10 MB at 1,024 ranks. 64 MiB leaves room for that and
# still refuses /dev/zero or a core file before it fills memory.
MAX_LOG_BYTES = 64 << 20


class LogError(FabricgenError):
    """One line that names the file and says what is wrong with it."""


@dataclass(frozen=True, slots=True)
class Cell:
    """One half of a row (out-of-place or in-place)."""

    time_us: float
    algbw_GBps: float
    busbw_GBps: float
    wrong: float | None         # None: "N/A" (validation off) or a log with an "error" column
    max_error: float | None = None   # the "error" column (largest deviation) of logs before #wrong

    def as_dict(self) -> dict:
        return {"time_us": self.time_us, "algbw_GBps": self.algbw_GBps, "busbw_GBps": self.busbw_GBps,
                "wrong": self.wrong, "max_error": self.max_error}


@dataclass(frozen=True, slots=True)
class Row:
    line: int
    size_bytes: int
    count: int
    type: str
    redop: str
    root: int
    out_of_place: Cell | None   # None only in nccl-tests' trace-replay rows (in-place only)
    in_place: Cell

    @property
    def cells(self) -> tuple[Cell, ...]:
        return tuple(c for c in (self.out_of_place, self.in_place) if c is not None)


@dataclass(frozen=True, slots=True)
class RankLine:
    rank: int
    group: int
    pid: int
    host: str
    device: int


@dataclass(frozen=True, slots=True)
class NcclLog:
    path: str
    version: str | None
    program: str | None
    n_thread: int | None
    n_gpus: int | None
    ranks: tuple[RankLine, ...]
    rows: tuple[Row, ...]
    out_of_bounds: int | None
    avg_busbw_GBps: float

    @property
    def nranks(self) -> int | None:
        return len({r.rank for r in self.ranks}) or None

    @property
    def hosts(self) -> tuple[str, ...]:
        """Distinct hosts in rank order."""
        return tuple(dict.fromkeys(r.host for r in self.ranks))

    @property
    def validated(self) -> bool:
        return all(c.wrong is not None or c.max_error is not None for row in self.rows for c in row.cells)


@dataclass
class _Layout:
    redop: bool         # size count type [redop] [root]
    root: bool
    half: int           # tokens per out-of-place / in-place half
    trailing: int       # timestamp tokens after the in-place half
    counts_wrong: bool  # "#wrong" (a count) rather than "error" (a deviation)
    row: re.Pattern

    @classmethod
    def from_header(cls, m: re.Match) -> _Layout:
        redop, root = bool(m.group(1)), bool(m.group(2))
        names = m.group(3).split()
        starts = [i for i, n in enumerate(names) if n in _TIME_COLUMNS]
        half = starts[1] - starts[0] if len(starts) >= 2 else 4
        # a data row starts with size, count and the named type (and redop); anything else between
        # the header and the footer (NCCL INFO, mpirun chatter) is not a row. A row that starts so
        # but lacks a column is an error (_row), never skipped.
        row = re.compile(r"^\s*\d+\s+\d+\s+[A-Za-z]\S*" + (r"\s+[A-Za-z]\S*" if redop else "") + r"(\s|$)")
        return cls(redop, root, half, 2 if "timestamp" in names else 0, "error" not in names, row)

    @property
    def fixed(self) -> int:
        return 3 + self.redop + self.root


class _NotAMeasure(ValueError):
    """A value column that parses as a float but cannot be a measurement (inf, nan, negative)."""

    def __init__(self, column: str, text: str):
        super().__init__(f"{column} {text!r} is not a finite number of 0 or more")


def _number(text: str, column: str) -> float:
    """A time, bandwidth, #wrong count or average. nccl-tests prints these from elapsed times
    and counts (src/common.cu), so inf, nan or a negative value means an edited or corrupt log:
    judged, an `inf` busbw would pass and reach measured.json as `Infinity` (not JSON)."""
    value = float(text)
    if not math.isfinite(value) or value < 0:
        raise _NotAMeasure(column, text)
    return value


def _cell(tokens: list[str], counts_wrong: bool) -> Cell:
    time_us, algbw, busbw = (_number(t, c) for t, c in zip(tokens[:3], ("time", "algbw", "busbw"), strict=True))
    if tokens[3] == "N/A":
        return Cell(time_us, algbw, busbw, None)
    if counts_wrong:
        return Cell(time_us, algbw, busbw, _number(tokens[3], "#wrong"))
    return Cell(time_us, algbw, busbw, None, _number(tokens[3], "error"))


def _one_line(text: str, limit: int = 100) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 3] + "..."


REDUCING = ("all_reduce", "reduce_scatter", "reduce")      # the collectives whose rows name a redop


def parse_text(text: str, path: str, collective: str = "all_reduce") -> NcclLog:
    """COLLECTIVE: the nccl-tests binary the log must come from (<collective>_perf)."""
    version = program = None
    n_thread = n_gpus = None
    ranks: list[RankLine] = []
    rows: list[Row] = []
    layout: _Layout | None = None
    oob: int | None = None
    avg: float | None = None
    starts = 0
    lines = text.splitlines()
    for n, raw in compress(enumerate(lines, start=1), map(_CANDIDATE.match, lines)):
        line = _LAUNCHER_PREFIX.sub("", raw.rstrip(), count=1)
        if m := _START.match(line):
            starts += 1
            program = m.group(1)
        elif m := _VERSION.match(line):
            version = m.group(1)
        elif m := _NTHREAD.match(line):
            if n_thread is not None:
                starts = max(starts, 2)
            n_thread, n_gpus = int(m.group(1)), int(m.group(2))
        elif m := _RANK.match(line):
            ranks.append(RankLine(int(m.group(1)), int(m.group(2) or 0), int(m.group(3)), m.group(4),
                                  int(m.group(5))))
        elif m := _COLUMNS.match(line):
            if layout is not None:
                starts = max(starts, 2)
            layout = _Layout.from_header(m)
        elif m := _OOB.match(line):
            oob = int(m.group(1))
        elif m := _AVG.match(line):
            try:
                avg = _number(m.group(1), "'# Avg bus bandwidth'")
            except _NotAMeasure as exc:
                raise LogError(f"{path}:{n}: {exc}: the log is corrupt or edited; judge the log "
                               "all_reduce_perf printed") from None
            except ValueError:
                raise LogError(f"{path}:{n}: '# Avg bus bandwidth' is {m.group(1)!r}, not a number: "
                               "the run measured nothing") from None
        elif layout is not None and layout.row.match(line):
            rows.append(_row(line, layout, path, n))
    if starts > 1:
        raise LogError(f"{path}: holds more than one nccl-tests run (one header per process means nccl-tests "
                       "was built without MPI=1 and every process ran alone): give each run's output as its own "
                       "file, from an MPI build")
    if layout is None and n_thread is None:
        raise LogError(f"{path}: not an nccl-tests log (no '# nThread' header and no size/count column header): "
                       "give the standard output of all_reduce_perf")
    if program is not None and not program.startswith(collective + "_perf"):
        raise LogError(f"{path}: a {program} log, not {collective}_perf: give the log of the run that file names")
    if collective in REDUCING and any(r.redop == "none" for r in rows):
        raise LogError(f"{path}: rows without a reduction (redop none) are not all_reduce_perf output: "
                       "acceptance compares all-reduce runs")
    if not rows:
        raise LogError(f"{path}: truncated nccl-tests log: no data rows (the run stopped before measuring; "
                       f"last line: {_one_line(_last_line(lines))!r})")
    if avg is None:
        raise LogError(f"{path}: truncated nccl-tests log: {len(rows)} row(s) but no '# Avg bus bandwidth' line "
                       f"(the run did not finish; last line: {_one_line(_last_line(lines))!r})")
    groups = {r.group for r in ranks}
    if len(groups) > 1:
        raise LogError(f"{path}: ranks in {len(groups)} groups (NCCL_TESTS_SPLIT): each group is its own "
                       "communicator, which is not an acceptance run; run without a split")
    return NcclLog(path, version, program, n_thread, n_gpus, tuple(ranks), tuple(rows), oob, avg)


def _last_line(lines: list[str]) -> str:
    """The last line with anything on it, as parse_text reads it."""
    for raw in reversed(lines):
        line = _LAUNCHER_PREFIX.sub("", raw.rstrip(), count=1)
        if line.strip():
            return line
    return ""


def _row(line: str, layout: _Layout, path: str, n: int) -> Row:
    tokens = line.split()
    fixed, half, trailing = layout.fixed, layout.half, layout.trailing
    values = tokens[fixed:]
    try:
        root = int(tokens[fixed - 1]) if layout.root else -1
        if len(values) == 2 * half + trailing:
            oop, inp = _cell(values[:half], layout.counts_wrong), _cell(values[half:2 * half], layout.counts_wrong)
        elif len(values) == half + trailing:
            oop, inp = None, _cell(values[:half], layout.counts_wrong)
        else:
            raise ValueError
    except _NotAMeasure as exc:
        raise LogError(f"{path}:{n}: data row {exc}: the log is corrupt or edited; judge the log "
                       "all_reduce_perf printed") from None
    except (ValueError, IndexError):
        raise LogError(f"{path}:{n}: data row with {len(values)} value column(s) where the header names "
                       f"{2 * half + trailing}: the log is truncated or mixed with other output") from None
    # no redop column (all_gather before 2019) means no reduction: later releases print "none" there
    return Row(n, int(tokens[0]), int(tokens[1]), tokens[2], tokens[3] if layout.redop else "none", root, oop, inp)


def parse_log(path: str | Path, collective: str = "all_reduce") -> NcclLog:
    """Read PATH (a regular file of at most MAX_LOG_BYTES) and parse it.

    Opened non-blocking so that a FIFO named as a log does not wait for a writer that never
    comes (open(2): O_NONBLOCK on a FIFO opened for reading returns at once); fstat then
    refuses anything but a regular file, so a FIFO, /dev/zero or a directory is one error line
    and never a hang or an unbounded read. A link to a log is read: the operator may keep logs
    elsewhere, and reading through it writes nothing."""
    name = str(path)
    try:
        data = read_bounded(path, MAX_LOG_BYTES)
    except ReadRefused as exc:
        if exc.kind == "type":
            raise LogError(f"{name}: {_kind(exc.mode or 0)}, not a regular file: give the file all_reduce_perf's "
                           "output was saved to") from None
        if exc.kind == "size":
            raise LogError(_too_large(name, exc.size or MAX_LOG_BYTES + 1)) from None
        raise LogError(f"{name}: {exc.message}") from None
    except OSError as exc:
        raise LogError(f"{name}: cannot read: {exc.strerror or exc}") from None
    if b"\0" in data[:4096]:
        raise LogError(f"{name}: not an nccl-tests log (binary data): give the standard output of all_reduce_perf")
    return parse_text(data.decode("utf-8", errors="replace"), name, collective)


def _kind(mode: int) -> str:
    for test, word in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISDIR, "a directory"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return word
    return "a special file"


def _too_large(name: str, size: int) -> str:
    return (f"{name}: {size} bytes, more than the {MAX_LOG_BYTES >> 20} MiB an nccl-tests log can be: "
            "give the standard output of one all_reduce_perf run")
