"""The all-reduce model against figures worked by hand, and the guide's naive 62 ms."""

import pytest

from generator.capacity.allreduce import Calibration, Shape, bus_factor, estimate
from generator.capacity.gpus import get_gpu
from generator.capacity.naive import guide_bisection_gbps, guide_ms, naive_time

LINE_RATE = Calibration(nic_efficiency=1.0, base_us=0, alpha_nvlink_us=0, alpha_net_us=0, nvls_intra_us=0,
                        nvls_net_us=0)


def test_bus_factor_is_nccl_tests_definition():
    assert bus_factor(256) == pytest.approx(2 * 255 / 256)
    assert bus_factor(1) == 0


def test_ring_at_line_rate_matches_the_issue_figure():
    # 140 GB, 256 GPUs, 8 x 200 Gb/s per node: 2*255/256 * 140e9 B / (8 * 25e9 B/s) = 1.3945 s
    ar = estimate(Shape(32, 8, 8, 200, get_gpu("H100")), 140_000_000_000, LINE_RATE)
    ring = ar.by_name("ring")
    assert ring.time_s == pytest.approx(2 * 255 / 256 * 140e9 / 200e9)
    assert ring.time_s == pytest.approx(1.3945, abs=1e-4)
    assert ring.algbw_GBps == pytest.approx(140 / ring.time_s)
    assert ring.busbw_GBps == pytest.approx(200.0)


def test_hierarchical_network_phase_is_rail_ring_of_shards():
    # no NVLink phases with one GPU per node: 2(N-1)/N * (S/g) / (B/g) = 2*31/32 * 1e9 / 50e9
    ar = estimate(Shape(32, 1, 1, 400, get_gpu("A100")), 1_000_000_000, LINE_RATE)
    assert ar.by_name("hierarchical").time_s == pytest.approx(2 * 31 / 32 * 1e9 / 50e9)


def test_ring_latency_counts_nvlink_and_network_steps():
    cal = Calibration(nic_efficiency=1.0, base_us=8.4, alpha_nvlink_us=3.4, alpha_net_us=14.0)
    ar = estimate(Shape(4, 8, 8, 400, get_gpu("A100")), 8, cal)
    # 2(n-N) = 56 NVLink steps, 2(N-1) = 6 network steps
    assert ar.by_name("ring").latency_s == pytest.approx((8.4 + 56 * 3.4 + 6 * 14.0) * 1e-6)
    # tree: 2((g-1) NVLink + log2 N network hops)
    assert ar.by_name("tree").latency_s == pytest.approx((8.4 + 2 * (7 * 3.4 + 2 * 14.0)) * 1e-6)
    assert ar.chosen.algorithm == "tree"           # tiny message: latency wins


def test_large_message_busbw_is_the_node_nics_at_calibrated_efficiency():
    # 8 x 400G at 0.94 = 376 GB/s, above H100's 370 GB/s NVLink ring ceiling; NVLS tree is not capped by it
    ar = estimate(Shape(16, 8, 8, 400, get_gpu("H100")), 8 << 30)
    assert ar.chosen.algorithm == "nvls_tree"
    assert ar.chosen.busbw_GBps == pytest.approx(376, rel=0.01)
    assert ar.by_name("ring").busbw_ceiling_GBps == pytest.approx(370)
    a100 = estimate(Shape(16, 8, 8, 200, get_gpu("A100")), 8 << 30)
    assert a100.chosen.algorithm == "ring"
    assert a100.chosen.busbw_ceiling_GBps == pytest.approx(192)     # 8 x 24 GB/s (nccl-tests#119)
    assert a100.chosen.busbw_GBps == pytest.approx(192, rel=0.02)


def test_naive_reproduces_the_guide_62_ms():
    n = naive_time(140_000_000_000, guide_bisection_gbps(256, 200))
    assert n.bisection_gbps == 25_600
    assert n.time_s == pytest.approx(0.0625)
    assert guide_ms(n.time_s) == 62
    # truncated as the guide prints it only for the guide's own example
    assert n.worked().endswith("= 62.5 ms")
    guide = naive_time(140_000_000_000, guide_bisection_gbps(256, 200), guide_example=True)
    assert guide.worked().endswith("= 62 ms")
