"""What communication costs a training step, in share of time, GPU-hours and money.

The model (stated next to every share it gives): pure data-parallel training, one all-reduce
of the whole gradient per step; "no overlap" runs it after the backward pass, "full overlap"
hides it behind backward compute as far as compute lasts, `workload.comm_overlap` F hides a
share F of it (never more than the compute). Pipeline, tensor and expert parallelism, and
the optimizer step, are not in it: quote the share with its model."""

from __future__ import annotations

from dataclasses import dataclass

HOURS_PER_MONTH = 730.0        # 8,760 h / 12
MODEL = "data-parallel all-reduce of the whole gradient once per step, compute and all-reduce times from the model"


@dataclass(frozen=True, slots=True)
class StepCost:
    compute_s: float
    comm_s: float
    gpus: int
    gpu_hour_usd: float | None
    overlap: float | None = None        # workload.comm_overlap

    def share_at(self, overlap: float) -> float:
        """Exposed communication with a share OVERLAP of it hidden behind compute (at most all of it)."""
        exposed = max(self.comm_s * (1 - overlap), self.comm_s - self.compute_s)
        return exposed / (self.compute_s + exposed)

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
        if self.overlap is not None:
            share = self.share_at(self.overlap)
            out["intent_overlap"] = {"overlap": self.overlap, "comm_share": share,
                                     "gpu_hours_lost_per_month": self.gpu_hours_lost(share),
                                     "usd_lost_per_month": self.usd_lost(share)}
        out["model"] = MODEL
        return out
