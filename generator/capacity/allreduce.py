"""All-reduce time with the alpha-beta model, in nccl-tests' terms.

nccl-tests (doc/PERFORMANCE.md): algbw = S / t; all-reduce busbw = algbw * 2(n-1)/n.
busbw is the figure to compare with hardware: for a ring it is what crosses each link.

Every algorithm below is `t = latency + 2(n-1)/n * S / busbw_ceiling`:

- ring: NCCL's ring runs one channel per NIC through every GPU; each channel leaves a
  node through one NIC, so busbw is capped by the node's NICs (rails x speed x
  efficiency) and by what the ring pushes over NVLink. Latency: 2(n-N) NVLink steps +
  2(N-1) network steps.
- tree: double binary tree across nodes, chain inside; same bandwidth cap times 0.92
  (NCCL's own tree refinement, src/graph/tuning.cc), latency 2((g-1) NVLink + log2 N
  network hops). On 2 nodes a tree crosses the network once per byte, not twice.
- nvls_tree: NVLink SHARP reduces inside the node, a tree crosses nodes (Hopper+).
- hierarchical: the explicit three-phase schedule (NVLink reduce-scatter, per-rail ring
  of S/g across nodes, NVLink all-gather) run back to back, as Horovod-style
  hierarchical all-reduce does; NCCL pipelines those phases inside ring/nvls_tree, so it
  is shown for comparison and never chosen.

Calibration (defaults of `Calibration`):
- NIC efficiency: sjeaugey (NCCL) in NVIDIA/nccl-tests#119: "We usually consider 24GB/s
  is the peak performance per 200G NIC (12 GB/s for 100G NICs)" -> 0.96; AddyLaddy
  (NVIDIA) in NVIDIA/nccl-tests#290: "For NDR @ 400Gbps you should see 46-48GB/s per
  NIC" -> 0.94; 800G is extrapolated to 0.92 until public runs exist.
- Latencies: NCCL's tuner constants for the Simple protocol (src/graph/tuning.cc,
  NCCL 2.2x), which NVIDIA fits to nccl-tests runs: 8.4 us base, 3.4 us per NVLink ring
  step, 14 us per network step, NVLS-tree 25 us inside the node + 20.9 us per network
  tree level. They only matter below a few MB; gradients are GBs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from generator.capacity.gpus import GpuSpec

GB = 1e9


def nic_efficiency(speed_g: int) -> float:
    if speed_g <= 200:
        return 0.96
    if speed_g <= 400:
        return 0.94
    return 0.92


@dataclass(frozen=True, slots=True)
class Calibration:
    nic_efficiency: float | None = None      # None: by NIC speed, see nic_efficiency()
    base_us: float = 8.4
    alpha_nvlink_us: float = 3.4
    alpha_net_us: float = 14.0
    tree_bw_factor: float = 0.92
    nvls_intra_us: float = 25.0
    nvls_net_us: float = 20.9


@dataclass(frozen=True, slots=True)
class Shape:
    """What the model needs from a fabric: one job spanning every node."""

    nodes: int
    gpus_per_node: int
    rails: int
    nic_speed_g: int
    gpu: GpuSpec

    @property
    def ranks(self) -> int:
        return self.nodes * self.gpus_per_node


@dataclass(frozen=True, slots=True)
class Estimate:
    algorithm: str
    time_s: float
    algbw_GBps: float
    busbw_GBps: float
    latency_s: float
    busbw_ceiling_GBps: float
    nccl_candidate: bool

    def as_dict(self) -> dict:
        return {"algorithm": self.algorithm, "time_s": self.time_s, "algbw_GBps": self.algbw_GBps,
                "busbw_GBps": self.busbw_GBps, "latency_s": self.latency_s,
                "busbw_ceiling_GBps": self.busbw_ceiling_GBps, "nccl_candidate": self.nccl_candidate}


@dataclass(frozen=True, slots=True)
class AllReduce:
    message_bytes: int
    shape: Shape
    node_injection_GBps: float          # rails x speed x efficiency
    efficiency: float
    estimates: tuple[Estimate, ...] = field(default_factory=tuple)

    @property
    def chosen(self) -> Estimate:
        """The algorithm NCCL's tuner would most likely pick: the fastest it implements."""
        return min((e for e in self.estimates if e.nccl_candidate), key=lambda e: e.time_s)

    def by_name(self, name: str) -> Estimate:
        return next(e for e in self.estimates if e.algorithm == name)


def bus_factor(ranks: int) -> float:
    return 2 * (ranks - 1) / ranks if ranks > 1 else 0.0


def _estimate(name: str, s: Shape, size: int, latency_s: float, ceiling_GBps: float, candidate: bool) -> Estimate:
    factor = bus_factor(s.ranks)
    if factor == 0 or size == 0:
        return Estimate(name, 0.0, 0.0, 0.0, 0.0, ceiling_GBps, candidate)
    t = latency_s + factor * size / (ceiling_GBps * GB)
    algbw = size / t / GB
    return Estimate(name, t, algbw, algbw * factor, latency_s, ceiling_GBps, candidate)


def estimate(shape: Shape, message_bytes: int, cal: Calibration | None = None) -> AllReduce:
    cal = cal or Calibration()
    s, size = shape, message_bytes
    eff = cal.nic_efficiency if cal.nic_efficiency is not None else nic_efficiency(s.nic_speed_g)
    node_GBps = s.rails * s.nic_speed_g / 8 * eff
    n, nodes, g = s.ranks, s.nodes, s.gpus_per_node
    us = 1e-6
    out: list[Estimate] = []

    # the ring's NVLink share: a PCIe-only GPU still relays through the host bridge
    intra = s.gpu.ring_gbps
    if nodes == 1:
        ring_cap = intra
    else:
        ring_cap = min(node_GBps, intra)
    ring_lat = (cal.base_us + 2 * (n - nodes) * cal.alpha_nvlink_us + 2 * (nodes - 1) * cal.alpha_net_us) * us
    out.append(_estimate("ring", s, size, ring_lat, ring_cap, True))

    if nodes > 1:
        # on two nodes a tree sends each byte across the network once instead of twice
        tree_net = node_GBps * (bus_factor(n) if nodes == 2 else 1.0)
        tree_cap = cal.tree_bw_factor * min(tree_net, intra)
        levels = math.ceil(math.log2(nodes))
        tree_lat = (cal.base_us + 2 * ((g - 1) * cal.alpha_nvlink_us + levels * cal.alpha_net_us)) * us
        out.append(_estimate("tree", s, size, tree_lat, tree_cap, True))

    if s.gpu.nvls and g > 1:
        if nodes == 1:
            out.append(_estimate("nvls", s, size, cal.nvls_intra_us * us, s.gpu.nvls_busbw_gbps, True))
        else:
            net = node_GBps * (bus_factor(n) if nodes == 2 else 1.0)
            cap = min(net, s.gpu.nvls_busbw_gbps)
            lat = (cal.nvls_intra_us + 2 * math.ceil(math.log2(nodes)) * cal.nvls_net_us) * us
            out.append(_estimate("nvls_tree", s, size, lat, cap, True))

    out.append(_hierarchical(s, size, node_GBps, cal))
    return AllReduce(size, s, node_GBps, eff, tuple(out))


def _hierarchical(s: Shape, size: int, node_GBps: float, cal: Calibration) -> Estimate:
    g, nodes = s.gpus_per_node, s.nodes
    us = 1e-6
    t_nvl = lat = 0.0
    if g > 1:
        # reduce-scatter then all-gather inside the node, each (g-1)/g * S at NVLink speed
        t_nvl = 2 * ((g - 1) / g) * size / (s.gpu.ring_gbps * GB)
        lat += 2 * (g - 1) * cal.alpha_nvlink_us * us
    t_net = 0.0
    if nodes > 1:
        # every GPU rings its S/g shard across nodes over its share (R/g) of the node's NICs
        t_net = 2 * (nodes - 1) / nodes * (size / g) / (node_GBps / g * GB)
        lat += 2 * (nodes - 1) * cal.alpha_net_us * us
    t = lat + t_nvl + t_net
    factor = bus_factor(s.ranks)
    if t == 0 or factor == 0:
        return Estimate("hierarchical", 0.0, 0.0, 0.0, 0.0, 0.0, False)
    algbw = size / t / GB
    ceiling = factor * size / ((t_nvl + t_net) * GB) if t_nvl + t_net else 0.0
    return Estimate("hierarchical", t, algbw, algbw * factor, lat, ceiling, False)
