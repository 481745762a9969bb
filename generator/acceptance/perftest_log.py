"""Read perftest's bandwidth output (`ib_write_bw` and the other `*_bw` tests).

perftest prints a table after a dashed line (perftest README; src/perftest_parameters.c
print_report_bw): `#bytes #iterations BW peak[UNIT] BW average[UNIT] MsgRate[Mpps]`, UNIT
Gb/sec with --report_gbits, else MiB/sec (MB/sec in older releases), one row per message size.
The client's output is the measurement of a unidirectional test (perftest README). A file
without that header is not perftest output; a header without a row is a run that did not
measure (the connection failed, the peer died).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path

from generator.common.errors import FabricgenError

MAX_BYTES = 4 << 20          # a perftest output is a few KiB; anything bigger is not one
_HEADER = re.compile(r"^\s*#bytes\s+#iterations\s+BW peak\[(Gb/sec|MiB/sec|MB/sec)\]\s+"
                     r"BW average\[(Gb/sec|MiB/sec|MB/sec)\]")
_ROW = re.compile(r"^\s*(\d+)\s+(\d+)\s+(\S+)\s+(\S+)(?:\s+(\S+))?\s*$")
# to Gb/s: MiB = 2^20 bytes (perftest's MiB/sec), MB = 10^6 bytes
_TO_GBPS = {"Gb/sec": 1.0, "MiB/sec": 8 * 1048576 / 1e9, "MB/sec": 8 * 1e6 / 1e9}


class PerftestError(FabricgenError):
    """One line naming the file (and line) and what to do."""


class NoTable(PerftestError):
    """No bandwidth table: the run never measured (perftest prints its table only after it ran)."""


@dataclass(frozen=True, slots=True)
class BwRow:
    size_bytes: int
    iterations: int
    peak_gbps: float
    average_gbps: float
    line: int


def parse_bw(text: str, source: str) -> list[BwRow]:
    """The rows of a perftest BW table in Gb/s; [] when the header came but no row."""
    lines = text.splitlines()
    found = next(((n, m) for n, m in enumerate(map(_HEADER.match, lines), 1) if m), None)
    if found is None:
        raise NoTable(f"{source}: no perftest bandwidth table (#bytes #iterations BW peak... header): "
                            "give the client's ib_write_bw output")
    n, m = found
    factor = _TO_GBPS[m.group(2)]
    rows: list[BwRow] = []
    for k, line in enumerate(lines[n:], n + 1):
        if line.strip().startswith("-") or not line.strip():
            if rows:
                break
            continue
        r = _ROW.match(line)
        if not r:
            raise PerftestError(f"{source}:{k}: not a perftest bandwidth row: {line.strip()[:80]!r}")
        try:
            peak, avg = float(r.group(3)), float(r.group(4))
        except ValueError:
            raise PerftestError(f"{source}:{k}: bandwidth {r.group(3)!r}/{r.group(4)!r} is not a number") from None
        if not all(math.isfinite(v) and v >= 0 for v in (peak, avg)):
            raise PerftestError(f"{source}:{k}: bandwidth must be a finite number >= 0")
        rows.append(BwRow(int(r.group(1)), int(r.group(2)), peak * factor, avg * factor, k))
    return rows


def read_bw(path: Path) -> list[BwRow]:
    """parse_bw of a regular file of at most MAX_BYTES (never waits on a FIFO)."""
    try:
        if not path.is_file():
            raise PerftestError(f"{path}: not a regular file: give the client's output file")
        if path.stat().st_size > MAX_BYTES:
            raise PerftestError(f"{path}: larger than {MAX_BYTES} bytes: not a perftest output")
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise PerftestError(f"{path}: cannot read: {exc.strerror or exc}") from None
    return parse_bw(text, str(path))
