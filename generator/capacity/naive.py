"""The field guide's all-reduce estimate, reproduced so it can be shown to be wrong.

The guide divides the gradient by the bisection bandwidth at an assumed 70 %
efficiency: 140 GB x 8 / (256 GPUs x 200 Gb/s / 2 x 0.70) = 1,120 Gb / 17.92 Tb/s =
62.5 ms, printed as "62 ms". It is wrong because an all-reduce is not one transfer
across the cut: every rank must send and receive about 2(n-1)/n x S through its own
NIC, so the NICs, not the bisection, set the time (about 1.4 s at line rate for the
same numbers on a rail-optimized fabric).
"""

from __future__ import annotations

from dataclasses import dataclass

GUIDE_EFFICIENCY = 0.70

WHY = ("bytes x 8 / bisection treats the all-reduce as one transfer across the cut, but every rank "
       "must push about 2(n-1)/n of the message through its own NIC, so the NICs, not the bisection, "
       "set the time.")


@dataclass(frozen=True, slots=True)
class Naive:
    message_bytes: int
    bisection_gbps: float
    efficiency: float
    time_s: float

    def worked(self) -> str:
        """The guide's arithmetic, the way it prints it (whole milliseconds, truncated)."""
        gbit = self.message_bytes * 8 / 1e9
        return (f"{_gb(self.message_bytes)} x 8 = {gbit:,.0f} Gb; {gbit:,.0f} Gb / "
                f"({self.bisection_gbps / 1000:g} Tb/s x {self.efficiency:.2f}) = {guide_ms(self.time_s)} ms")

    def as_dict(self) -> dict:
        return {"time_s": self.time_s, "bisection_tbps": self.bisection_gbps / 1000,
                "efficiency": self.efficiency, "formula": "message_bytes * 8 / (bisection * efficiency)",
                "why_wrong": WHY}


def _gb(n: int) -> str:
    return f"{n / 1e9:g} GB"


def guide_ms(time_s: float) -> int:
    # the guide truncates: 62.5 ms is quoted as 62 ms
    return int(time_s * 1000 + 1e-9)


def guide_bisection_gbps(gpus: int, per_gpu_gbps: float) -> float:
    """What the guide assumes: a non-blocking fabric, half the GPUs' NICs across the cut."""
    return gpus * per_gpu_gbps / 2


def naive_time(message_bytes: int, bisection_gbps: float, efficiency: float = GUIDE_EFFICIENCY) -> Naive:
    if bisection_gbps <= 0:
        return Naive(message_bytes, bisection_gbps, efficiency, float("inf"))
    t = message_bytes * 8 / (bisection_gbps * 1e9 * efficiency)
    return Naive(message_bytes, bisection_gbps, efficiency, t)
