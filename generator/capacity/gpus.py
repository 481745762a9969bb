"""GPU catalog for the capacity planner: data, not code.

`nvlink_gbps` is the per-GPU *unidirectional* NVLink bandwidth in GB/s (datasheets
quote the bidirectional sum: H100 "900 GB/s" = 450 GB/s each way). Sources:
- NVIDIA A100 datasheet: NVLink 600 GB/s; H100 SXM / H200 datasheets: 900 GB/s;
  H800 SXM: 400 GB/s; HGX B200 and GB200 NVL72 datasheets: 1.8 TB/s per GPU.
- `ring_gbps` is what NCCL's ring can push over NVLink: sjeaugey (NCCL lead) in
  NVIDIA/nccl-tests#212: "450GB/s is the line rate. With the protocol overhead (~20%)
  NCCL can get an effective NVLink bandwidth of 370GB/s". The same ~0.82 factor is
  applied to the other generations; A100 matches kiskra-nvidia in NVIDIA/nccl#1712
  ("close to 240 GB/s" on one NVLink node) and NCCL's old compCap80 cap of 235 GB/s.
- `nvls` (NVLink SHARP) needs third-generation NVSwitch (HGX H100 and later).
  `nvls_busbw_gbps`: sjeaugey in nccl-tests#212, "On 8 GPUs, you should reach a peak
  busBw of ~480GB/s"; nccl-tests#272 measured 475 GB/s on 8 x H200. Blackwell is scaled
  from NCCL's nvlsEfficiency (0.74 vs Hopper 0.85, src/graph/tuning.cc) and is an
  estimate until published measurements exist.
"""

from __future__ import annotations

from dataclasses import dataclass

from generator.common.errors import FabricgenError


@dataclass(frozen=True, slots=True)
class GpuSpec:
    name: str
    nvlink_gbps: float          # per GPU, one direction, GB/s (0 = PCIe only)
    ring_gbps: float            # what an NCCL ring achieves over the node's fabric (NVLink or PCIe)
    nvls: bool                  # NVLink SHARP (in-switch reduction) available
    nvls_busbw_gbps: float      # nccl-tests busbw ceiling of NVLS inside one node; 0 without NVLS
    source: str


_CATALOG: dict[str, GpuSpec] = {g.name: g for g in (
    GpuSpec("V100", 150.0, 123.0, False, 0.0, "NVLink2 300 GB/s bidirectional (V100 SXM2 datasheet)"),
    GpuSpec("A100", 300.0, 235.0, False, 0.0, "NVLink3 600 GB/s bidirectional (A100 datasheet)"),
    GpuSpec("A800", 200.0, 164.0, False, 0.0, "NVLink 400 GB/s bidirectional (A800 datasheet)"),
    GpuSpec("H100", 450.0, 370.0, True, 480.0, "NVLink4 900 GB/s bidirectional (H100 SXM datasheet)"),
    GpuSpec("H800", 200.0, 164.0, True, 215.0, "NVLink 400 GB/s bidirectional; 215 GB/s NVLS busbw in NVIDIA/nccl#1374"),
    GpuSpec("H200", 450.0, 370.0, True, 480.0, "NVLink4 900 GB/s bidirectional (H200 datasheet)"),
    GpuSpec("H20", 450.0, 370.0, True, 480.0, "NVLink4 900 GB/s bidirectional (HGX H20)"),
    GpuSpec("B200", 900.0, 740.0, True, 840.0, "NVLink5 1.8 TB/s bidirectional (HGX B200 datasheet); NVLS ceiling estimated"),
    GpuSpec("GB200", 900.0, 740.0, True, 840.0, "NVLink5 1.8 TB/s bidirectional (GB200 NVL72 datasheet); NVLS ceiling estimated"),
    GpuSpec("L40S", 0.0, 22.0, False, 0.0, "no NVLink: PCIe Gen4 x16, ~22 GB/s achievable through the host bridge"),
)}

DEFAULT_GPU = "H100"


class UnknownGpu(FabricgenError, ValueError):
    def __init__(self, name: str):
        super().__init__(f"unknown GPU model {name!r} in topology.gpu: use one of {', '.join(known_gpus())}")
        self.name = name


def known_gpus() -> list[str]:
    return sorted(_CATALOG)


def get_gpu(name: str | None) -> GpuSpec:
    """The spec of `name`; case-insensitive, so `h100` works as typed in a hurry."""
    if name is None:
        return _CATALOG[DEFAULT_GPU]
    for key, spec in _CATALOG.items():
        if key.lower() == name.strip().lower():
            return spec
    raise UnknownGpu(name)
