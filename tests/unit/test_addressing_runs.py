"""addressing.ipv4_run (issue 14): runs of consecutive addresses formatted per /24 must equal
ipv4() of each value, across /24, /16 and /8 boundaries and at both ends of the IPv4 space.
ipv4() itself is checked against the standard library's ipaddress."""

from __future__ import annotations

import ipaddress
import random

import pytest

from generator.plan.addressing import ipv4, ipv4_run


@pytest.mark.parametrize("start, count", [
    (0, 0), (0, 1), (0, 256), (250, 12), (0x0A00FFFE, 4), (0x0AFFFFFF, 2), ((1 << 32) - 7, 7),
    (int(ipaddress.IPv4Address("172.16.0.0")), 2 * 12288), (int(ipaddress.IPv4Address("10.128.0.0")), 70_000),
])
def test_run_equals_each_address(start: int, count: int) -> None:
    got = ipv4_run(start, count)
    assert got == [ipv4(start + i) for i in range(count)]
    assert got == [str(ipaddress.IPv4Address(start + i)) for i in range(count)]


def test_random_runs() -> None:
    rng = random.Random(14)
    for _ in range(500):
        start = rng.randrange(1 << 32)
        count = min(rng.randrange(1200), (1 << 32) - start)
        assert ipv4_run(start, count) == [str(ipaddress.IPv4Address(start + i)) for i in range(count)]
