# C printf formats restated as %-formats (UP031), and logs whose trailing blanks are nccl-tests' own (W291)
# ruff: noqa: UP031, W291
"""The nccl-tests log parser on output in the exact format nccl-tests prints.

`nccl_log()` (tests/nccl_tests_log.py) lays a log out with the printf formats of
NVIDIA/nccl-tests v2.19.6.
The OLD_* logs below are written by hand in the 2022-2024 format (src/common.cu: "[0x%02x]"
bus ids, "%6.2f" bandwidths, "%5g" #wrong) and in the pre-2019 format without a root column.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.acceptance.nccl_log import LogError, parse_log, parse_text
from tests.nccl_tests_log import GIB, SIZES, get_float_str, nccl_log, row_body

# By hand, 2022-2024 format (nccl-tests 2.13): 2 nodes x 2 GPUs, validation on for
# out-of-place only in this build ("N/A" in-place), with NCCL INFO chatter in between.
OLD_LOG = """\
# nThread 1 nGpus 1 minBytes 1073741824 maxBytes 4294967296 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0
#
# Using devices
#  Rank  0 Group  0 Pid  18211 on node-a.example.net device  0 [0x18] NVIDIA H100 80GB HBM3
#  Rank  1 Group  0 Pid  18212 on node-a.example.net device  1 [0x2a] NVIDIA H100 80GB HBM3
#  Rank  2 Group  0 Pid  20931 on node-b.example.net device  0 [0x18] NVIDIA H100 80GB HBM3
#  Rank  3 Group  0 Pid  20932 on node-b.example.net device  1 [0x2a] NVIDIA H100 80GB HBM3
node-a:18211:18211 [0] NCCL INFO NCCL version 2.18.5+cuda12.2
#
#                                                              out-of-place                       in-place          
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)       
  1073741824     268435456     float     sum      -1    22390   47.96   71.93      0    22402   47.93   71.90    N/A
  2147483648     536870912     float     sum      -1    44610   48.14   72.21      0    44598   48.15   72.23    N/A
  4294967296    1073741824     float     sum      -1    89120   48.19   72.29      0    89151   48.18   72.27    N/A
# Out of bounds values : 0 OK
# Avg bus bandwidth    : 72.1383 
#
"""

# By hand, before 2019 (no root column, "error" instead of #wrong), one process on one node.
PRE_2019_LOG = """\
# nThread 1 nGpus 2 minBytes 1073741824 maxBytes 2147483648 step: 2(factor) warmup iters: 5 iters: 20 validation: 1 
#
# Using devices
#   Rank  0 Pid   1320 on      node1 device  0 [0x00] Tesla V100-SXM2-16GB
#   Rank  1 Pid   1320 on      node1 device  1 [0x01] Tesla V100-SXM2-16GB
#
#                                                       out-of-place                       in-place
#       size         count      type   redop     time   algbw   busbw  error     time   algbw   busbw  error
#        (B)    (elements)                       (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
  1073741824     268435456     float     sum    11021   97.43   97.43  0e+00    11019   97.44   97.44  0e+00
  2147483648     536870912     float     sum    22004   97.60   97.60  0e+00    22001   97.61   97.61  0e+00
# Out of bounds values : 0 OK
# Avg bus bandwidth    : 97.52 
#
"""


def test_generated_log_round_trips_every_field() -> None:
    hosts = ["gpu01", "gpu02", "gpu03", "gpu04"]
    log = parse_text(nccl_log(hosts, 8, 90.0, ip_factor=1.01), "fabric.log")
    assert log.version == "2.19.6" and log.program == "all_reduce_perf"
    assert (log.n_thread, log.n_gpus) == (1, 1)
    assert log.nranks == 32 and log.hosts == tuple(hosts)
    assert [r.size_bytes for r in log.rows] == SIZES
    first = log.rows[0]
    assert (first.count, first.type, first.redop, first.root) == (GIB // 4, "float", "sum", -1)
    assert first.out_of_place.busbw_GBps == 90.0 and first.in_place.busbw_GBps == 90.9
    # algbw = busbw * n / 2(n-1) with n = 32 ranks; the log prints two decimals
    assert first.out_of_place.algbw_GBps == pytest.approx(90.0 * 32 / 62, abs=0.005)
    # time in us: 1 GiB / algbw
    assert first.out_of_place.time_us == pytest.approx(GIB / 1e9 / (90.0 * 32 / 62) * 1e6, rel=1e-4)
    assert first.out_of_place.wrong == 0 and first.in_place.wrong == 0
    assert log.avg_busbw_GBps == pytest.approx((90.0 + 90.9) / 2, abs=1e-3)
    assert log.out_of_bounds == 0 and log.validated


def test_hand_written_2022_format_with_na_in_place() -> None:
    log = parse_text(OLD_LOG, "x.log")
    assert log.version is None and log.program is None
    assert log.nranks == 4 and log.hosts == ("node-a.example.net", "node-b.example.net")
    assert [r.size_bytes for r in log.rows] == [GIB, 2 * GIB, 4 * GIB]
    row = log.rows[1]
    assert (row.out_of_place.time_us, row.out_of_place.algbw_GBps, row.out_of_place.busbw_GBps) == (44610, 48.14, 72.21)
    assert row.out_of_place.wrong == 0 and row.in_place.wrong is None
    assert row.in_place.busbw_GBps == 72.23
    assert log.avg_busbw_GBps == 72.1383
    assert not log.validated


def test_hand_written_pre_2019_format_without_root() -> None:
    log = parse_text(PRE_2019_LOG, "old.log")
    assert log.nranks == 2 and log.hosts == ("node1",)
    assert [(r.size_bytes, r.root, r.in_place.busbw_GBps) for r in log.rows] == [(GIB, -1, 97.44), (2 * GIB, -1, 97.61)]
    # "error" is the largest deviation, not a count of wrong elements (nccl_log.py docstring)
    assert all(c.wrong is None and c.max_error == 0 for r in log.rows for c in r.cells) and log.validated


def test_markdown_pasted_log_without_hashes_parses() -> None:
    text = "\n".join(line[1:] if line.startswith("#") else line for line in nccl_log(["a", "b"], 1, 10.0).splitlines())
    log = parse_text(text, "pasted.log")
    assert log.nranks == 2 and len(log.rows) == 5 and log.avg_busbw_GBps == 10.0


def test_per_iteration_and_timestamp_columns() -> None:
    """-I 1 adds i_min i_max i_p99 i_cv% to each half; report_timestamps a timestamp column."""
    header = ("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %7s  %7s  %7s  %7s  %6s  %6s  %6s  %7s  %7s  %7s  %7s %*s"
              % ("size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "i_min", "i_max", "i_p99",
                 "i_cv%", "time", "algbw", "busbw", "#wrong", "i_min", "i_max", "i_p99", "i_cv%", 19, "timestamp"))
    half = row_body(20000.0, 53.69, 100.66, 0) + "  %7s  %7s  %7s  %7s" % ("19990.1", "20100.2", "20099.0", "0.21")
    row = "%12li  %12li  %8s  %6s  %6s" % (GIB, GIB // 4, "float", "sum", "%6i" % -1) + half + half + "%21s" % "2026-07-09 16:03:21"
    text = "\n".join(["# nThread 1 nGpus 1 minBytes 1073741824 maxBytes 1073741824 step: 2(factor) warmup iters: 1",
                      "#", header, row, "# Avg bus bandwidth    : 100.66 ", ""])
    log = parse_text(text, "iter.log")
    assert log.rows[0].out_of_place.busbw_GBps == 100.66 and log.rows[0].in_place.time_us == 20000.0


def test_large_values_in_exponent_form() -> None:
    """getFloatStr falls back to %e when %.0f does not fit the column (a time over 9999999 us)."""
    assert get_float_str(123456789.0, 7) == "1.2e+08"
    slow = "%12li  %12li  %8s  %6s  %6s" % (16 * GIB, 4 * GIB, "float", "sum", "%6i" % -1)
    slow += row_body(12345678.9, 1.39, 1.39, 0) * 2
    text = nccl_log(["a", "b"], 1, 10.0, sizes=[GIB]).replace("# Out of bounds", slow + "\n# Out of bounds")
    assert "1.2e+07" in text
    log = parse_text(text, "e.log")
    assert log.rows[1].out_of_place.time_us == 1.2e7 and log.rows[1].size_bytes == 16 * GIB


@pytest.mark.parametrize("cut, message", [
    (lambda t: t.split("#       size")[0], "no data rows"),
    (lambda t: t[:t.index("  2147483648")], "no '# Avg bus bandwidth' line"),
    (lambda t: t[:t.index("# Out of bounds")] + "gpu01: Test NCCL failure common.cu:1005 'unhandled system error'\n",
     "Test NCCL failure"),
    (lambda t: t[:t.index("  4294967296") + 60], "truncated or mixed"),
])
def test_truncated_log_is_one_error_naming_the_file(tmp_path: Path, cut, message: str) -> None:
    path = tmp_path / "fabric.log"
    path.write_text(cut(nccl_log(["gpu01", "gpu02"], 8, 90.0)))
    with pytest.raises(LogError) as exc:
        parse_log(path)
    text = str(exc.value)
    assert text.startswith(f"{path}") and message in text and "\n" not in text


@pytest.mark.parametrize("content, message", [
    ("hello\nthis is a README\n", "not an nccl-tests log"),
    ("", "not an nccl-tests log"),
    (nccl_log(["a", "b"], 1, 10.0, program="all_gather_perf").replace(" sum ", "none"), "all_gather_perf"),
    (nccl_log(["a", "b"], 1, 10.0) + nccl_log(["a", "b"], 1, 10.0), "more than one nccl-tests run"),
    (nccl_log(["a", "b"], 1, 10.0).replace("Group  0 Pid  40001", "Group  1 Pid  40001"), "NCCL_TESTS_SPLIT"),
])
def test_foreign_log_is_one_error(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "some.log"
    path.write_text(content)
    with pytest.raises(LogError) as exc:
        parse_log(path)
    assert str(exc.value).startswith(str(path)) and message in str(exc.value)


def test_binary_and_missing_files(tmp_path: Path) -> None:
    binary = tmp_path / "core"
    binary.write_bytes(b"\x7fELF\x00\x01\x02" * 100)
    with pytest.raises(LogError, match="binary"):
        parse_log(binary)
    with pytest.raises(LogError, match="cannot read"):
        parse_log(tmp_path / "absent.log")


def test_wrong_counts_are_kept() -> None:
    log = parse_text(nccl_log(["a", "b"], 1, 10.0, wrong=(0, 1234)), "w.log")
    assert {r.in_place.wrong for r in log.rows} == {1234}
    assert {r.out_of_place.wrong for r in log.rows} == {0}
