"""What communication costs a training step, in share of time, GPU-hours and money."""

from __future__ import annotations

from dataclasses import dataclass

HOURS_PER_MONTH = 730.0        # 8,760 h / 12


@dataclass(frozen=True, slots=True)
class StepCost:
    compute_s: float
    comm_s: float
    gpus: int
    gpu_hour_usd: float | None

    @property
    def share_no_overlap(self) -> float:
        """Communication after the backward pass: the step is compute + comm."""
        return self.comm_s / (self.compute_s + self.comm_s)

    @property
    def share_overlap(self) -> float:
        """Communication hidden behind backward compute (PyTorch DDP/FSDP bucketing at
        best): only what outlasts the compute is exposed."""
        step = max(self.compute_s, self.comm_s)
        return max(0.0, self.comm_s - self.compute_s) / step

    def gpu_hours_lost(self, share: float) -> float:
        return self.gpus * HOURS_PER_MONTH * share

    def usd_lost(self, share: float) -> float | None:
        return None if self.gpu_hour_usd is None else self.gpu_hours_lost(share) * self.gpu_hour_usd

    def as_dict(self) -> dict:
        out = {"compute_s": self.compute_s, "comm_s": self.comm_s, "gpus": self.gpus,
               "hours_per_month": HOURS_PER_MONTH}
        for label, share in (("no_overlap", self.share_no_overlap), ("overlap", self.share_overlap)):
            out[label] = {"comm_share": share, "gpu_hours_lost_per_month": self.gpu_hours_lost(share),
                          "usd_lost_per_month": self.usd_lost(share)}
        return out
