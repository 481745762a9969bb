"""What the capacity model predicts for each acceptance run and size (expected.json).

The prediction is `generator.capacity.allreduce.estimate`, the model behind `fabricgen
capacity`, never a copy of it: the fabric's Shape comes from `capacity.analyze` and a
rail-group run is the same Shape with that group's node count. Per run and size:

    t      = latency + 2(n-1)/n * S / busbw_ceiling        (alpha-beta, per algorithm)
    algbw  = S / t ;  busbw = algbw * 2(n-1)/n             (nccl-tests doc/PERFORMANCE.md)

with n = nodes x GPUs per node ranks and the algorithm NCCL's tuner would pick (the
fastest of ring, tree, NVLS tree). busbw_ceiling is bounded by the node's NICs
(rails x speed x NIC efficiency, allreduce.py cites the efficiencies) and by NVLink.
nccl-tests reports busbw with the same 2(n-1)/n factor (src/all_reduce.cu
AllReduceGetBw), so measured and predicted busbw compare directly.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cache

from generator.capacity.allreduce import AllReduce, Shape, estimate

# all_reduce_perf -b 1G -e 16G -f 2: nccl-tests parses K/M/G as binary units
# (src/common.cu parsesize: "We use the binary system, so M=Mebibytes and G=Gibibytes").
GIB = 1 << 30
MIN_BYTES = GIB
MAX_BYTES = 16 * GIB
STEP_FACTOR = 2
SIZES = tuple(MIN_BYTES * STEP_FACTOR ** i for i in range(5))      # 1, 2, 4, 8, 16 GiB
COMMAND = "all_reduce_perf -b 1G -e 16G -f 2 -g 1"
FLOAT_BYTES = 4                     # all_reduce_perf's default type is float

FORMULA = ("busbw = algbw * 2(n-1)/n with algbw = S / t and t = latency + 2(n-1)/n * S / busbw_ceiling "
           "for the algorithm NCCL would pick (fastest of ring, tree, NVLS tree); n = ranks = nodes x "
           "GPUs per node; busbw_ceiling = min(node NICs: rails x speed/8 x NIC efficiency, NVLink). "
           "Source: generator/capacity/allreduce.py (the model of `fabricgen capacity`), "
           "busbw as nccl-tests prints it (src/all_reduce.cu AllReduceGetBw).")


@dataclass(frozen=True, slots=True)
class Prediction:
    size_bytes: int
    algorithm: str
    busbw_GBps: float
    algbw_GBps: float
    time_us: float


class Predictor:
    """Predictions for any node count and size from the fabric's capacity Shape."""

    def __init__(self, shape: Shape, efficiency: float):
        self.shape = shape
        self.efficiency = efficiency

    @property
    def line_rate_GBps(self) -> float:
        """What a node's NICs carry at line rate (rails x speed / 8), before NIC efficiency."""
        return self.shape.rails * self.shape.nic_speed_g / 8

    def predict(self, nodes: int, size_bytes: int) -> Prediction:
        return _predict(replace(self.shape, nodes=nodes), size_bytes)

    def all_reduce(self, nodes: int, size_bytes: int) -> AllReduce:
        return estimate(replace(self.shape, nodes=nodes), size_bytes)


@cache
def _predict(shape: Shape, size_bytes: int) -> Prediction:
    chosen = estimate(shape, size_bytes).chosen
    return Prediction(size_bytes, chosen.algorithm, chosen.busbw_GBps, chosen.algbw_GBps, chosen.time_s * 1e6)


def predictor_for(intent, plan) -> Predictor:
    """Raises capacity's UnknownGpu; the command turns it into one line."""
    from generator.capacity.analyze import analyze

    analysis = analyze(intent, MIN_BYTES, plan=plan)
    return Predictor(analysis.allreduce.shape, analysis.allreduce.efficiency)


def rounded(x: float, digits: int = 6) -> float:
    # stable bytes across platforms' last-bit float differences (as capacity/shape.py)
    return round(float(x), digits)


SCHEMA = "fabricgen.acceptance/1"
EXPECTED_FILE = "expected.json"


def expected_doc(fabric: str, intent_sha256: str, runs, skipped, predictor: Predictor, files: dict[str, str],
                 generator: str) -> dict:
    """expected.json: the runs, their commands and the predicted busbw per size.

    `files` (path -> sha256 of what this output wrote, expected.json itself excluded) lets a
    later `acceptance -o` on the same directory recognise its own files and replace only those.
    """
    s = predictor.shape
    return {
        "schema": SCHEMA,
        "generator": generator,
        "fabric": fabric,
        "intent_sha256": intent_sha256,
        "comment": FORMULA,
        "command": COMMAND,
        "model": {"gpu": s.gpu.name, "gpus_per_node": s.gpus_per_node, "rails": s.rails,
                  "nic_speed_gbps": s.nic_speed_g, "nic_efficiency": predictor.efficiency,
                  "node_line_rate_GBps": rounded(predictor.line_rate_GBps)},
        "runs": [{
            "id": run.id, "kind": run.kind, "nodes": run.nodes, "ranks": run.ranks,
            "hosts": list(run.hosts), "leaves": list(run.leaves),
            "log": f"logs/{run.id}.log", "hostfile": hostfile_name(run),
            "expected": [{"size_bytes": p.size_bytes, "count": p.size_bytes // FLOAT_BYTES,
                          "algorithm": p.algorithm, "busbw_GBps": rounded(p.busbw_GBps),
                          "algbw_GBps": rounded(p.algbw_GBps), "time_us": rounded(p.time_us, 3)}
                         for p in (predictor.predict(run.nodes, size) for size in SIZES)],
        } for run in runs],
        "skipped": list(skipped),
        "files": dict(sorted(files.items())),
    }


def hostfile_name(run) -> str:
    return "hostfile" if run.kind == "fabric" else f"hostfile.{run.id}"
