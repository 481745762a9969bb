"""Per-port PFC headroom on NVIDIA Spectrum switches, and their lossless buffer pools.

The model is the one SONiC runs on Mellanox/NVIDIA platforms (sonic-swss
cfgmgr/buffer_headroom_mellanox.lua), so a generated profile equals what a SONiC
switch computes for the same port, and NVIDIA's static pg_profile_lookup.ini rows
can serve as test vectors. All constants live in generator/data/asics.yaml.

Arithmetic is exact (fractions): the lua works in doubles, but every input here
is a decimal figure, and exact sums keep a value that lands on a 1 KiB boundary
from rounding differently on another machine.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from fractions import Fraction
from functools import cache, lru_cache
from importlib import resources
from typing import Any, NamedTuple

import yaml


class Headroom(NamedTuple):
    """One lossless priority group's headroom, in bytes. A tuple (issue 14): every lossless
    Port holds one, and checks count ports by kind (tier, speed, cable, headroom) with C-level
    hashing, where a dataclass's generated __hash__ ran in Python per port."""

    xoff: int
    xon: int
    size: int


@dataclass(frozen=True, slots=True)
class AsicParams:
    name: str                 # "spectrum-1" .. "spectrum-6"
    cell_bytes: int
    pipeline_latency_bytes: int
    mac_phy_delay_bytes: int  # whole bytes for display; the model uses mac_phy_delay_exact when set
    serdes_lane_g: int        # per-lane SerDes rate in Gb/s (25, 50, 100, 200)
    on_tile_bytes_per_gbps: int = 0
    xoff_compensation_bytes: int = 0
    # The sources give MAC/PHY delay as 0.8 KiB = 819.2 B; rounding it would move a few
    # results across a 1 KiB step.
    mac_phy_delay_exact: Fraction | None = None


@cache
def _data() -> dict[str, Any]:
    text = resources.files("generator.data").joinpath("asics.yaml").read_text(encoding="utf-8")
    return yaml.safe_load(text)


def _exact(value: Any) -> Fraction:
    # str() first so 0.8 from YAML becomes 4/5, not the binary float nearest to it.
    return Fraction(str(value))


def _ceil_to(value: Fraction | int, unit: int) -> int:
    return math.ceil(Fraction(value) / unit) * unit


@cache
def asic_params(asic: str) -> AsicParams:
    asics = _data()["asics"]
    key = asic.strip().lower() if isinstance(asic, str) else asic
    if key not in asics:
        raise ValueError(f"unknown ASIC {asic!r}: expected one of {', '.join(asics)}")
    a = asics[key]
    pipeline = _exact(a["pipeline_latency_kib"]) * 1024
    if pipeline.denominator != 1:
        raise ValueError(f"asics.yaml: {key} pipeline_latency_kib must be a whole number of bytes")
    mac_phy = _exact(a["mac_phy_delay_kib"]) * 1024
    return AsicParams(
        name=key,
        cell_bytes=int(a["cell_bytes"]),
        pipeline_latency_bytes=int(pipeline),
        mac_phy_delay_bytes=math.floor(mac_phy),
        serdes_lane_g=int(a["serdes_lane_g"]),
        on_tile_bytes_per_gbps=int(a["on_tile_bytes_per_gbps"]),
        xoff_compensation_bytes=int(a["xoff_compensation_bytes"]),
        mac_phy_delay_exact=mac_phy,
    )


def _check_speed(speed_g: int) -> None:
    if isinstance(speed_g, bool) or not isinstance(speed_g, int) or speed_g <= 0:
        raise ValueError(f"port speed must be a positive whole number of Gb/s, got {speed_g!r}")


def lanes_for(asic: str, speed_g: int) -> int:
    """SerDes lanes a port of this speed occupies: what decides the 8-lane adjustments."""
    params = asic_params(asic)
    _check_speed(speed_g)
    return max(1, speed_g // params.serdes_lane_g)


@lru_cache(maxsize=4096)
def port_headroom(asic: str, speed_g: int, cable_m: float, port_mtu: int, *, lanes: int | None = None,
                  lossless_mtu: int = 1024, small_packet_percent: int = 100,
                  shared_headroom_pool: bool = False) -> Headroom:
    """xoff/xon/size of one lossless priority group, in bytes.

    lossless_mtu and small_packet_percent are SONiC's LOSSLESS_TRAFFIC_PATTERN; NVIDIA's
    static ACS tables use 1024 and 100. shared_headroom_pool mirrors a SKU whose ingress
    lossless pool has an xoff or an over-subscribe ratio (SHP): the PG then reserves only xon and the reduced
    small-packet compensation is skipped, because the shared pool absorbs the bursts.
    Gearbox delay is always 0: no Mellanox platform in sonic-buildimage has a gearbox config.
    """
    params = asic_params(asic)
    _check_speed(speed_g)
    data = _data()
    model = data["model"]
    quanta = data["pause_quanta"].get(speed_g)
    if quanta is None:
        known = ", ".join(f"{s}G" for s in sorted(data["pause_quanta"]))
        raise ValueError(f"unknown port speed {speed_g}G for PFC headroom: no pause-quanta figure "
                         f"(known: {known})")
    if isinstance(cable_m, bool) or not isinstance(cable_m, numbers.Real) or not math.isfinite(cable_m) \
            or cable_m < 0:
        raise ValueError(f"cable length must be a finite number of metres >= 0, got {cable_m!r}")
    for name, value in (("port_mtu", port_mtu), ("lossless_mtu", lossless_mtu)):
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise ValueError(f"{name} must be a positive whole number of bytes, got {value!r}")
    spp = small_packet_percent
    if isinstance(spp, bool) or not isinstance(spp, int) or not 0 <= spp <= 100:
        raise ValueError(f"small_packet_percent must be 0..100, got {spp!r}")
    if lanes is None:
        lanes = lanes_for(asic, speed_g)
    elif isinstance(lanes, bool) or not isinstance(lanes, int) or lanes < 1:
        raise ValueError(f"lanes must be a positive whole number, got {lanes!r}")

    unit = int(model["round_bytes"])
    min_pkt = int(model["minimal_packet_bytes"])

    # NVIDIA gives 8-lane ports double xon and one extra port-MTU frame of size (sonic-swss
    # buffermgrdyn keeps a separate "_8lane" profile for them). The lua tests for exactly 8.
    eight_lane = lanes == 8
    pipeline = params.pipeline_latency_bytes * (2 if eight_lane else 1)
    speed_overhead = port_mtu if eight_lane else 0

    # Worst case: every 64-byte frame takes a whole cell, wasting most of it.
    cell = params.cell_bytes
    ratio = Fraction(cell, min_pkt) if cell > 2 * min_pkt else Fraction(2 * cell, 1 + cell)
    worst_case_factor = math.ceil(ratio)
    # The percentage counts packets; convert to a share of bytes, since headroom fills by bytes.
    spp_by_byte = Fraction(100 * min_pkt) / (Fraction(spp * min_pkt + (100 - spp) * lossless_mtu, 100))
    occupancy = (100 - spp_by_byte + spp_by_byte * worst_case_factor) / 100

    peer_response = Fraction(quanta * int(model["pause_quantum_bits"]), 8)
    cable_bytes = 2 * _exact(cable_m) * speed_g * 10**9 / int(model["propagation_m_per_s"]) / 8
    on_tile = params.on_tile_bytes_per_gbps * speed_g
    mac_phy = params.mac_phy_delay_exact if params.mac_phy_delay_exact is not None \
        else params.mac_phy_delay_bytes
    propagation = port_mtu + cable_bytes + mac_phy + peer_response + on_tile

    xoff = _ceil_to(lossless_mtu + propagation * occupancy, unit) + params.xoff_compensation_bytes
    if not shared_headroom_pool and spp != 100:
        compensation = int(model["reduced_small_packet_compensation_bytes"])
        full_small_packet_xoff = _ceil_to(lossless_mtu + propagation * worst_case_factor, unit)
        if xoff + compensation < full_small_packet_xoff:
            xoff += compensation
    xon = _ceil_to(pipeline, unit)
    size = _ceil_to(xon if shared_headroom_pool else xoff + xon + speed_overhead, unit)
    return Headroom(xoff=xoff, xon=xon, size=size)


def model_pools(model: str) -> dict[str, int | str]:
    """Lossless ingress/egress pool sizes of a switch model, with the file they came from."""
    models = _data()["models"]
    entry = models.get(model)
    if entry is None:
        raise ValueError(f"no sourced lossless buffer pool sizes for switch model {model!r} "
                         f"(known: {', '.join(models)})")
    return {
        "ingress_lossless_pool_bytes": int(entry["ingress_lossless_pool_bytes"]),
        "egress_lossless_pool_bytes": int(entry["egress_lossless_pool_bytes"]),
        "source": str(entry["source"]),
    }
