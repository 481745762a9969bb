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
# The guide's worked example (docs/capacity.md, "The guide's 62 ms"): 256 GPUs with 200 Gb/s of
# NIC each, a 140 GB gradient. Its truncated "62 ms" is only worth quoting for that fabric: any
# other intent printed "(guide prints 0 ms)" beside a figure of microseconds.
GUIDE_GPUS = 256
GUIDE_PER_GPU_GBPS = 200
GUIDE_MESSAGE_BYTES = 140_000_000_000

WHY = ("bytes x 8 / bisection treats the all-reduce as one transfer across the cut, but every rank "
       "must push about 2(n-1)/n of the message through its own NIC, so the NICs, not the bisection, "
       "set the time.")


@dataclass(frozen=True, slots=True)
class Naive:
    message_bytes: int
    bisection_gbps: float
    efficiency: float
    time_s: float
    guide_example: bool = False     # the intent is the guide's own example (is_guide_example)

    def worked(self) -> str:
        """The arithmetic; for the guide's own example the way the guide prints it (whole
        milliseconds, truncated), else with the figure's own precision."""
        gbit = self.message_bytes * 8 / 1e9
        result = f"{guide_ms(self.time_s)} ms" if self.guide_example else f"{self.time_s * 1e3:,.4g} ms"
        return (f"{_gb(self.message_bytes)} x 8 = {gbit:,.4g} Gb; {gbit:,.4g} Gb / "
                f"({self.bisection_gbps / 1000:g} Tb/s x {self.efficiency:.2f}) = {result}")

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


def is_guide_example(gpus: int, per_gpu_gbps: float, message_bytes: int) -> bool:
    return gpus == GUIDE_GPUS and per_gpu_gbps == GUIDE_PER_GPU_GBPS and message_bytes == GUIDE_MESSAGE_BYTES


def naive_time(message_bytes: int, bisection_gbps: float, efficiency: float = GUIDE_EFFICIENCY, *,
               guide_example: bool = False) -> Naive:
    if bisection_gbps <= 0:
        return Naive(message_bytes, bisection_gbps, efficiency, float("inf"), guide_example)
    t = message_bytes * 8 / (bisection_gbps * 1e9 * efficiency)
    return Naive(message_bytes, bisection_gbps, efficiency, t, guide_example)
