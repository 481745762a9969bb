"""perftest's BW table read from real ib_write_bw outputs (tests/data/perftest, sources in each
file's comment) and from the lab's stand-in (lab/perftest.py)."""

from __future__ import annotations

import pytest

from generator.acceptance.perftest_log import PerftestError, parse_bw, read_bw
from generator.lab.perftest import ib_write_bw_output
from generator.lab.world import Cable, World
from tests.conftest import REPO

DATA = REPO / "tests" / "data" / "perftest"


def test_real_bidirectional_gbits_output():
    rows = read_bw(DATA / "ib_write_bw_bidir_q4.txt")
    assert [r.size_bytes for r in rows] == [2, 4, 65536, 4194304, 8388608]
    assert rows[-1].average_gbps == pytest.approx(779.21) and rows[2].peak_gbps == pytest.approx(775.85)


def test_real_mib_output_is_converted_to_gbits():
    rows = read_bw(DATA / "ib_write_bw_mib.txt")
    # 19044.43 MiB/s = 19044.43 x 2^20 x 8 bit/s
    assert rows[-1].average_gbps == pytest.approx(19044.43 * 1048576 * 8 / 1e9)


def test_real_single_size_summary():
    (row,) = read_bw(DATA / "ib_write_bw_single_65536.txt")
    assert (row.size_bytes, row.iterations, row.average_gbps) == (65536, 5000, pytest.approx(193.21))


def test_a_header_without_rows_did_not_measure_and_foreign_text_is_refused(tmp_path):
    assert parse_bw(" #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]\n", "x") == []
    with pytest.raises(PerftestError, match=r"^x: no perftest bandwidth table"):
        parse_bw("Couldn't connect to 10.0.0.1:18515\n", "x")
    with pytest.raises(PerftestError, match=r"^x:3: bandwidth must be a finite number"):
        parse_bw(" #bytes #iterations BW peak[Gb/sec] BW average[Gb/sec] MsgRate[Mpps]\n---\n 65536 5000 inf 1.0 0.1\n",
                 "x")
    fifo = tmp_path / "fifo"
    import os
    os.mkfifo(fifo)
    with pytest.raises(PerftestError, match="not a regular file"):
        read_bw(fifo)


def test_the_lab_output_reads_back_and_follows_a_degraded_cable():
    def world(rate: float) -> World:
        return World((Cable("leaf1", "swp1", "h1", "eth0"), Cable("leaf1", "swp2", "h2", "eth0", rate=rate)))

    def measured(rate: float) -> float:
        text = ib_write_bw_output(world(rate), {"h1", "h2"}, client=("h1", "eth0"), server=("h2", "eth0"),
                                  rdma="mlx5_0", qps=1, nic_gbps=400, efficiency=0.94)
        (row,) = parse_bw(text, "lab")
        return row.average_gbps

    assert measured(1.0) == pytest.approx(376, rel=0.006)
    assert measured(0.9) == pytest.approx(376 * 0.9, rel=0.006)
    down = World((Cable("leaf1", "swp1", "h1", "eth0"), Cable("leaf1", "swp2", "h2", "eth0", state="down")))
    text = ib_write_bw_output(down, {"h1", "h2"}, client=("h1", "eth0"), server=("h2", "eth0"), rdma="mlx5_0",
                              qps=1, nic_gbps=400, efficiency=0.94)
    assert "RDMA_Write BW Test" in text and "#bytes" not in text
