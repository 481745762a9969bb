"""One intent in, every capacity figure out: the single entry point the command,
the what-if rows and the report share, so they can never disagree."""

from __future__ import annotations

from dataclasses import dataclass

from generator.capacity.allreduce import AllReduce, Calibration, Shape, estimate
from generator.capacity.bisection import closed_form_gbps
from generator.capacity.cost import StepCost
from generator.capacity.figures import Figures, fabric_figures
from generator.capacity.gpus import GpuSpec, get_gpu
from generator.capacity.growth import grows
from generator.capacity.naive import Naive, guide_bisection_gbps, is_guide_example, naive_time
from generator.intent.model import Intent
from generator.plan.bom import BomLine, bill_of_materials
from generator.plan.compile import compile_plan
from generator.plan.growth import build_out_intent
from generator.plan.model import FabricPlan

DEFAULT_MESSAGE_BYTES = 1 << 30     # nccl-tests' usual large size when the intent has no workload


@dataclass(frozen=True)
class Analysis:
    intent: Intent
    plan: FabricPlan
    figures: Figures
    gpu: GpuSpec
    gpu_assumed: bool
    bisection_gbps: float
    allreduce: AllReduce
    message_source: str
    naive: Naive
    naive_guide: bool
    step: StepCost | None
    bom: tuple[BomLine, ...]
    # topology.build_out: the same figures on the build-out plan (None without build_out, or
    # when not asked for); every other field is the installed plan's, i.e. phase 1
    build_out: Analysis | None = None


def _params(n: float) -> str:
    return f"{n / 1e9:g}e9" if n >= 1e9 else f"{n:g}"


def message_size(intent: Intent, override: int | None) -> tuple[int, str]:
    if override is not None:
        return override, "--message-size"
    w = intent.workload
    if w is not None and w.model_params:
        return int(round(w.model_params * w.gradient_bytes_per_param)), (
            f"workload: {_params(w.model_params)} params x {w.gradient_bytes_per_param:g} B")
    return DEFAULT_MESSAGE_BYTES, "default 1 GiB (no workload.model_params in the intent)"


def analyze(intent: Intent, message_bytes: int | None = None, *, naive_guide: bool = False,
            plan: FabricPlan | None = None, calibration: Calibration | None = None,
            with_build_out: bool = False) -> Analysis:
    """Raises UnknownGpu and the plan compiler's CompileError; callers turn them into one line.

    Every figure is the installed plan's (what runs in phase 1). WITH_BUILD_OUT and an intent
    whose topology.build_out differs from topology.nodes: `build_out` holds the same analysis
    of the build-out fabric (generator.plan.growth.build_out_intent)."""
    gpu = get_gpu(intent.topology.gpu)
    plan = plan if plan is not None else compile_plan(intent)
    figures = fabric_figures(intent, plan)
    t = intent.topology
    size, source = message_size(intent, message_bytes)
    shape = Shape(t.nodes, t.gpus_per_node, t.rails, t.nic_speed, gpu)
    ar = estimate(shape, size, calibration or Calibration())
    bisection = closed_form_gbps(plan)
    naive_bis = guide_bisection_gbps(figures.gpus, figures.per_gpu_gbps) if naive_guide else bisection
    step = None
    w = intent.workload
    if w is not None and w.step_compute_ms:
        step = StepCost(w.step_compute_ms / 1000, ar.chosen.time_s, figures.gpus, w.gpu_hour_usd, w.comm_overlap)
    return Analysis(intent=intent, plan=plan, figures=figures, gpu=gpu, gpu_assumed=t.gpu is None,
                    bisection_gbps=bisection, allreduce=ar, message_source=source,
                    naive=naive_time(size, naive_bis, guide_example=is_guide_example(
                        figures.gpus, figures.per_gpu_gbps, size)), naive_guide=naive_guide, step=step,
                    bom=bill_of_materials(plan),
                    build_out=analyze(build_out_intent(intent), message_bytes, naive_guide=naive_guide,
                                      calibration=calibration) if with_build_out and grows(intent) else None)
