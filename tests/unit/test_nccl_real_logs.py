"""The nccl-tests log parser on real outputs of nccl-tests, quoted in tests/data/nccl/ with their
source (tests/data/perftest/README.md, "nccl-tests logs"). Every expected figure below is read
off the quoted text by hand, not computed by the parser under test."""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.acceptance.collectives import measured_busbw
from generator.acceptance.command import _prepare
from generator.acceptance.compare import judge
from generator.acceptance.nccl_log import LogError, NcclLog, parse_log, parse_text
from generator.acceptance.report import format_tables
from tests.conftest import example

DATA = Path(__file__).resolve().parents[1] / "data" / "nccl"
GIB = 1 << 30
SWEEP = [8 << i for i in range(31)]          # -b 8 -e 8G -f 2: 8 B .. 8 GiB


def quoted(name: str) -> str:
    """The file without our '## ' header: exactly the text quoted from the source."""
    lines = (DATA / name).read_text().splitlines(keepends=True)
    return "".join(line for line in lines if not line.startswith("## "))


def real(name: str, collective: str = "all_reduce") -> NcclLog:
    return parse_text(quoted(name), name, collective)


def busbw(log: NcclLog, size: int) -> tuple[float, float]:
    row = next(r for r in log.rows if r.size_bytes == size)
    return row.out_of_place.busbw_GBps, row.in_place.busbw_GBps


def all_cells_mean(log: NcclLog) -> float:
    cells = [c.busbw_GBps for r in log.rows for c in r.cells]
    return sum(cells) / len(cells)


def test_h100_two_node_sweep() -> None:
    """2 x 8 H100, mpirun -np 16 -npernode 8, 8 B to 8 GiB (lessizzmore/create-a3mega-ztan-fork)."""
    log = real("all_reduce_h100_2x8_sweep.txt")
    assert log.hosts == ("ztan-mig-235z", "ztan-mig-gq73") and log.nranks == 16
    assert [r.host for r in log.ranks][7:9] == ["ztan-mig-235z", "ztan-mig-gq73"]
    assert [r.device for r in log.ranks] == list(range(8)) * 2
    assert (log.n_thread, log.n_gpus) == (1, 1)
    assert [r.size_bytes for r in log.rows] == SWEEP
    assert busbw(log, 8) == (0.00, 0.00)
    assert busbw(log, 33554432) == (59.36, 59.69)
    assert busbw(log, GIB) == (297.86, 298.82)
    assert busbw(log, 8 * GIB) == (338.82, 337.35)
    last = log.rows[-1]
    assert (last.count, last.type, last.redop, last.root) == (2147483648, "float", "sum", -1)
    assert (last.out_of_place.time_us, last.out_of_place.algbw_GBps, last.in_place.time_us) == (47535, 180.71, 47743)
    assert all(c.wrong == 0 for r in log.rows for c in r.cells) and log.validated
    assert log.out_of_bounds == 0 and log.avg_busbw_GBps == 70.742
    # the average nccl-tests prints is the mean over every out-of-place and in-place cell
    assert all_cells_mean(log) == pytest.approx(70.742, abs=0.005)


def test_h100_two_node_roce_run() -> None:
    """2 x 8 H100 over OCI's RoCE cluster network, 1 to 16 GiB (oracle-japan/ocitutorials)."""
    log = real("all_reduce_h100_2x8_oci.txt")
    assert log.hosts == ("inst-xxxxx-h100-ol89", "inst-yyyyy-h100-ol89") and log.nranks == 16
    assert log.version is None and log.program is None
    assert [busbw(log, s) for s in (GIB, 2 * GIB, 4 * GIB, 8 * GIB, 16 * GIB)] == [
        (446.28, 445.32), (456.22, 456.12), (461.83, 461.60), (463.90, 463.89), (464.57, 464.79)]
    assert log.rows[-1].count == 4294967296 and log.rows[-1].out_of_place.time_us == 69338
    assert log.out_of_bounds == 0 and log.avg_busbw_GBps == 458.452 and log.validated


def test_a100_two_node_run_with_start_and_conclusion_lines() -> None:
    """'# Collective test starting/concluded' (NCCL 2.26.5 build), 2 x 8 A100, one 10 GiB size."""
    log = real("all_reduce_a100_2x8_concluded.txt")
    assert log.program == "all_reduce_perf" and log.version is None
    assert log.hosts == ("inst-li3ob-ao-ub24", "inst-wyzi7-ao-ub24") and log.nranks == 16
    assert len(log.rows) == 1 and busbw(log, 10 * GIB) == (191.76, 191.75)
    assert (log.rows[0].out_of_place.time_us, log.rows[0].in_place.time_us) == (104989, 104997)
    assert log.out_of_bounds == 0 and log.avg_busbw_GBps == 191.752


def test_2019_all_reduce_error_column_is_a_deviation_not_wrong_elements() -> None:
    """12 V100 of a DGX-2 in one process (-g 12), the 2019 layout: no root, an 'error' column."""
    log = real("all_reduce_v100_dgx2_2019.txt")
    assert log.hosts == ("seville",) and log.nranks == 12 and (log.n_thread, log.n_gpus) == (1, 12)
    assert {r.pid for r in log.ranks} == {88131}
    assert [r.size_bytes for r in log.rows] == SWEEP
    assert {(r.redop, r.root) for r in log.rows} == {("sum", -1)}
    assert busbw(log, 33554432) == (108.75, 109.15) and busbw(log, 8 * GIB) == (123.56, 123.57)
    first = log.rows[0]
    assert (first.out_of_place.max_error, first.in_place.max_error) == (2e-07, 1e-07)
    assert all(c.wrong is None for r in log.rows for c in r.cells) and log.validated
    assert log.out_of_bounds == 0 and log.avg_busbw_GBps == 42.5578
    assert all_cells_mean(log) == pytest.approx(42.5578, abs=0.005)


def test_2019_all_reduce_is_not_judged_corrupt() -> None:
    """A float sum deviating by 2e-07 is within nccl-tests' bound ('Out of bounds values : 0 OK'):
    the judge must not call it data corruption, as it did when 'error' was read as #wrong."""
    loaded, plan, runs, predictor = _prepare(str(example("medium")))
    result = judge(real("all_reduce_v100_dgx2_2019.txt"), runs.by_id("group1"), "test", predictor, 0.0, GIB)
    assert not [p for point in result.points for p in point.problems] and not result.problems
    # the report shows the deviation for what it is, never as a #wrong count
    assert "err 2e-07/err 1e-07" in format_tables([result], 0.0, width=250)


def test_2019_failed_all_gather_without_redop_column() -> None:
    """all_gather_perf before 2019 printed 'size count type' and no redop: a real FAILED run
    (the two largest sizes deviate by 1 in both halves, '# Out of bounds values : 4 FAILED')."""
    log = real("all_gather_v100_dgx2_2019_failed.txt", "all_gather")
    assert log.hosts == ("seville",) and log.nranks == 12
    assert [r.size_bytes for r in log.rows][:4] == [0, 0, 0, 48] and log.rows[-1].size_bytes == 8589934560
    assert len(log.rows) == 31 and {(r.redop, r.root) for r in log.rows} == {("none", -1)}
    assert busbw(log, 67108848) == (67.21, 103.30) and busbw(log, 8589934560) == (73.75, 112.34)
    deviating = [(r.size_bytes, c.max_error) for r in log.rows for c in r.cells if c.max_error]
    assert deviating == [(4294967280, 1.0), (4294967280, 1.0), (8589934560, 1.0), (8589934560, 1.0)]
    assert log.out_of_bounds == 4 and log.avg_busbw_GBps == 30.2993
    assert all_cells_mean(log) == pytest.approx(30.2993, abs=0.005)


def test_real_all_gather_is_not_an_all_reduce_log() -> None:
    with pytest.raises(LogError, match="redop none"):
        real("all_gather_v100_dgx2_2019_failed.txt", "all_reduce")


def test_collectives_judge_reads_the_real_all_gather(tmp_path: Path) -> None:
    """collectives.sh's judge takes the largest size's lower busbw (in-place 112.34 vs out-of-place 73.75)."""
    path = tmp_path / "all_gather.log"
    path.write_text(quoted("all_gather_v100_dgx2_2019_failed.txt"))
    assert measured_busbw(path, "all_gather") == 73.75


@pytest.mark.parametrize("name, collective", [
    ("all_reduce_h100_2x8_sweep.txt", "all_reduce"), ("all_reduce_h100_2x8_oci.txt", "all_reduce"),
    ("all_reduce_a100_2x8_concluded.txt", "all_reduce"), ("all_reduce_v100_dgx2_2019.txt", "all_reduce"),
    ("all_gather_v100_dgx2_2019_failed.txt", "all_gather"), ("all_reduce_p5_2x8_tag_output.txt", "all_reduce"),
])
def test_header_lines_are_not_read_as_log(name: str, collective: str) -> None:
    """Our '## ' source lines parse as nothing: the file reads as the quoted text does."""
    whole, text = parse_log(DATA / name, collective), real(name, collective)
    assert (whole.rows[-1].in_place, whole.avg_busbw_GBps, whole.ranks) == (text.rows[-1].in_place,
                                                                            text.avg_busbw_GBps, text.ranks)
    assert (DATA / name).read_text().startswith("## ")


def test_open_mpi_tag_output_prefix() -> None:
    """'[1,0]<stdout>:' before every line (mpirun --tag-output, kubectl logs of an MPIJob launcher);
    the README's own '...' cut leaves 0 B and 64 MiB to 2 GiB."""
    log = real("all_reduce_p5_2x8_tag_output.txt")
    assert [r.size_bytes for r in log.rows] == [0] + [64 << 20 << i for i in range(6)]
    assert busbw(log, 0) == (0.00, 0.00)
    assert busbw(log, 134217728) == (129.02, 145.83) and busbw(log, 2 * GIB) == (437.79, 437.89)
    assert log.rows[-1].out_of_place.time_us == 9197.5 and log.rows[-1].in_place.algbw_GBps == 233.54
    assert log.out_of_bounds == 0 and log.avg_busbw_GBps == 52.9753 and log.validated
    assert log.nranks is None          # the excerpt has no '# Rank' lines


def test_srun_label_prefix_excerpt_without_footer_is_truncated(tmp_path: Path) -> None:
    """'0: ' before every line (srun --label); the README's excerpt ends at the 16 GiB row with no
    footer, so it is refused as truncated, with its 32 rows counted, not as a foreign file."""
    path = tmp_path / "fabric.log"
    path.write_text(quoted("all_reduce_p5_2x8_srun_label.txt"))
    with pytest.raises(LogError) as exc:
        parse_log(path)
    assert str(exc.value).startswith(f"{path}: truncated nccl-tests log: 32 row(s) but no '# Avg bus bandwidth'")
    footer = "0: # Out of bounds values : 0 OK\n0: # Avg bus bandwidth    : 1 \n"
    log = parse_text(quoted("all_reduce_p5_2x8_srun_label.txt") + footer, "x.log")
    assert [r.size_bytes for r in log.rows] == [8 << i for i in range(32)]
    assert busbw(log, 16 * GIB) == (487.09, 487.26) and busbw(log, 8) == (0.00, 0.00)
