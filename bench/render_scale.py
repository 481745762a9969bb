"""Render a 16,384-GPU three-tier fabric and print where the time goes.

2,048 nodes x 8 rails at 400G on SN5600 (pods of 32 nodes). Run it with
`make bench` or `/usr/bin/time -v .venv/bin/python bench/render_scale.py` for the
peak RSS as the kernel sees it; the script prints its own peak RSS as well.
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
from generator.intent.loader import load_intent
from generator.render.output import render_files, write_tree

INTENT = """\
fabric: {name: scale}
topology:
  kind: three-tier
  nodes: %(nodes)d
  rails: 8
  nic_speed: 400G
  oversubscription: "1:1"
  nodes_per_unit: 32
  switches: {leaf: {model: SN5600}, spine: {model: SN5600}, super_spine: {model: SN5600}}
addressing:
  loopbacks: 10.255.0.0/16
  fabric_links: 10.128.0.0/10
  rails: 172.16.0.0/12
  management: 10.0.0.0/16
  asn: {spine: 4200000000, leaf_base: 4200001000}   # 512 leaves outgrow the 2-byte private range
"""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=2048)
    ap.add_argument("--keep", help="render into this directory instead of a temporary one")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        intent = Path(tmp) / "fabric.yaml"
        intent.write_text(INTENT % {"nodes": args.nodes})
        out = Path(args.keep) if args.keep else Path(tmp) / "out"
        t0 = time.perf_counter()
        loaded = load_intent(intent)
        result = run_checks(loaded)            # compile + every rule, as `render` does
        t1 = time.perf_counter()
        if result.errors:
            sys.exit("\n".join(f.one_line() for f in result.errors))
        plan = result.plan
        files = render_files(plan, loaded.text)
        t2 = time.perf_counter()
        write_tree(files, out)
        t3 = time.perf_counter()
    roles = Counter(s.role for s in plan.switches)
    devices = len(plan.switches) + len(plan.hosts)
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"fabric: {args.nodes} nodes x 8 rails = {args.nodes * 8} GPUs NICs, three-tier SN5600")
    print(f"switches: {len(plan.switches)} ({', '.join(f'{n} {r}' for r, n in sorted(roles.items()))}), "
          f"hosts: {len(plan.hosts)}, links: {len(plan.links)}, ports: {len(plan.ports)}")
    print(f"files: {len(files)} ({sum(len(c) for c in files.values()) / 1e6:.1f} MB)")
    print(f"load+compile+checks: {t1 - t0:.2f} s  render: {t2 - t1:.2f} s  write: {t3 - t2:.2f} s")
    print(f"total: {t3 - t0:.2f} s  devices/s: {devices / (t3 - t0):.0f}  peak RSS: {rss_mb:.0f} MB  "
          f"cpus: {os.cpu_count()}")


if __name__ == "__main__":
    main()
