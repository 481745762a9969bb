"""Render a large three-tier fabric as `fabricgen render` does and print where the time goes.

Default: 16,384 GPUs (2,048 nodes x 8 rails at 400G on SN5600, pods of 32 nodes).
`--gpus 98304`: 12,288 nodes x 8 rails, pods of 128 (2 leaves per rail and pod), 4-byte ASNs.
Run it with `make bench` or `/usr/bin/time -v .venv/bin/python bench/render_scale.py` for the
figures as the kernel sees them; the script prints its own as well: wall, user and sys CPU of
itself and its render workers, peak RSS of the largest process and the sum of the workers',
devices/s, and the split load / compile / checks / render / write (render and write run in
the workers: their CPU seconds, added up over workers, next to the wall time of that phase).
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from generator.checks.runner import run_checks
from generator.gc_pause import gc_paused
from generator.intent.loader import load_intent
from generator.plan.compile import compile_plan
from generator.render.output import write_render
from generator.render.stream import worker_count

INTENT = """\
fabric: {name: scale}
topology:
  kind: three-tier
  nodes: %(nodes)d
  rails: 8
  nic_speed: 400G
  oversubscription: "1:1"
  nodes_per_unit: %(pod)d
  switches: {leaf: {model: SN5600}, spine: {model: SN5600}, super_spine: {model: SN5600}}
addressing:
  loopbacks: 10.255.0.0/16
  fabric_links: 10.128.0.0/10
  rails: 172.16.0.0/12
  management: 10.0.0.0/16
  asn: {spine: 4200000000, leaf_base: 4200001000}   # 512+ leaves outgrow the 2-byte private range
"""


def _cpu() -> tuple[float, float]:
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + kids.ru_utime, me.ru_stime + kids.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpus", type=int, default=16384, help="8 per node (default 16384)")
    ap.add_argument("--pod", type=int, help="nodes per pod (default 32 up to 16k GPUs, else 128)")
    ap.add_argument("--keep", help="render into this directory instead of a temporary one")
    args = ap.parse_args()
    nodes = args.gpus // 8
    pod = args.pod or (32 if args.gpus <= 16384 else 128)
    workers = worker_count()
    with tempfile.TemporaryDirectory() as tmp:
        intent = Path(tmp) / "fabric.yaml"
        intent.write_text(INTENT % {"nodes": nodes, "pod": pod})
        out = Path(args.keep) if args.keep else Path(tmp) / "out"
        t0 = time.perf_counter()
        loaded = load_intent(intent)
        t1 = time.perf_counter()
        result = run_checks(loaded)            # compile + every rule, as `render` does
        t2 = time.perf_counter()
        if result.errors:
            sys.exit("\n".join(f.one_line() for f in result.errors))
        plan = result.plan
        stats: dict[str, float] = {}
        _, files = write_render(plan, loaded.text, out, workers, stats)
        t3 = time.perf_counter()
        user, system = _cpu()
        # after the run: compile alone, to split compile from checks (not part of the totals)
        with gc_paused():
            c0 = time.perf_counter()
            compile_plan(loaded.intent)
            compile_s = time.perf_counter() - c0
        size = sum(f.stat().st_size for f in out.rglob("*") if f.is_file())
    roles = Counter(s.role for s in plan.switches)
    devices = len(plan.switches) + len(plan.hosts)
    me_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    kids_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(f"fabric: {nodes} nodes x 8 rails = {nodes * 8} GPU NICs, three-tier SN5600, pods of {pod}")
    print(f"switches: {len(plan.switches)} ({', '.join(f'{n} {r}' for r, n in sorted(roles.items()))}), "
          f"hosts: {len(plan.hosts)}, links: {len(plan.links)}, ports: {len(plan.ports)}")
    print(f"files: {files} ({size / 1e6:.1f} MB)")
    # FG260's verdicts come from ~/.cache/fabricgen unless this is the first run with these
    # documents (generator/render/nvue_model_cache.py): then checks include the model's ~0.75 s import
    model = "imported" if any(m.startswith("nvueschema.models.v") for m in sys.modules) else "cached"
    print(f"load: {t1 - t0:.2f} s  compile: {compile_s:.2f} s  checks: {t2 - t1 - compile_s:.2f} s "
          f"(NVUE model verdicts {model})  "
          f"render+write: {t3 - t2:.2f} s wall (workers: render {stats.get('render_s', 0):.2f} s, "
          f"write {stats.get('write_s', 0):.2f} s CPU+IO; fabric files {stats.get('fabric_s', 0):.2f} s)")
    print(f"total: {t3 - t0:.2f} s wall  user: {user:.2f} s  sys: {system:.2f} s  devices/s: {devices / (t3 - t0):.0f}  "
          f"peak RSS: {max(me_mb, kids_mb):.0f} MB (main {me_mb:.0f} MB, largest worker {kids_mb:.0f} MB)  "
          f"workers: {workers}  cpus: {os.cpu_count()}")


if __name__ == "__main__":
    main()
