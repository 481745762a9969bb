"""`fabricgen sot` against a live Nautobot: first push, second (no-change) push and diff (issue 37).

    NAUTOBOT_TOKEN=... .venv/bin/python bench/sot_scale.py --url http://127.0.0.1:8080 [--sizes medium,1k]

medium: inventories/medium (44 devices, 320 cables). 1k: a three-tier fabric of ~1,000 devices
(INTENT below). Each is pushed under a fabric name of its own (sotbench-<size>), after removing
what an earlier run left under that name, so the first push starts from nothing; the second push
must make 0 write requests and the diff must find nothing. The fabric is removed afterwards unless
--keep; --again measures only the second push and the diff of a fabric an earlier --keep run left. Prints one line per step: seconds, write requests, objects. Uses the library (generator.sot)
as the CLI does, without its start-up time.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
import time
from pathlib import Path

from generator.intent.loader import load_intent
from generator.plan.compile import compile_plan
from generator.sot.compare import compare
from generator.sot.nautobot import Nautobot
from generator.sot.objects import desired_objects
from generator.sot.push import push, remove_fabric

# ~1,000 devices: 896 nodes x 2 rails in pods of 32 -> 896 hosts, 56 leaves, spines and super-spines
INTENT_1K = """\
fabric: {name: sotbench-1k}
topology:
  kind: three-tier
  nodes: 896
  rails: 2
  nic_speed: 400G
  oversubscription: "1:1"
  nodes_per_unit: 32
  switches: {leaf: {model: SN5600}, spine: {model: SN5600}, super_spine: {model: SN5600}}
addressing:
  loopbacks: 10.255.0.0/16
  fabric_links: unnumbered
  rails: 172.16.0.0/12
  management: 10.0.0.0/16
  asn: {spine: 65000, leaf_base: 65100}
"""


def intent_file(size: str, work: Path) -> Path:
    path = work / f"{size}.yaml"
    if size == "medium":
        text = Path("inventories/medium/fabric.yaml").read_text()
        path.write_text(re.sub(r"(?m)^  name: medium$", "  name: sotbench-medium", text))
    else:
        path.write_text(INTENT_1K)
    return path


def run(nb: Nautobot, size: str, work: Path, keep: bool, again: bool = False) -> bool:
    plan = compile_plan(load_intent(str(intent_file(size, work))).intent)
    desired = desired_objects(plan)
    objects = sum(len(v) for v in desired.objects.values())
    print(f"{size}: {len(desired.objects['device'])} devices, {len(desired.objects['interface'])} interfaces, "
          f"{len(desired.objects['cable'])} cables, {len(desired.objects['ip'])} IPs, {objects} objects", flush=True)
    if not again:
        remove_fabric(nb, desired)
    ok = True
    for label in (("second push",) if again else ("first push", "second push")):
        before = nb.writes
        started = time.perf_counter()
        result = push(nb, desired)
        took = time.perf_counter() - started
        writes = nb.writes - before
        print(f"{size}: {label} {took:.1f} s, {writes} write requests, "
              f"{sum(result.written.values())} objects written", flush=True)
        if label == "second push" and writes:
            print(f"{size}: FAIL: the second push wrote {dict(result.written)}", flush=True)
            ok = False
    started = time.perf_counter()
    fitted = nb.fit(desired)                 # as `fabricgen sot diff` does
    state = nb.read_state(fitted)
    result = compare(fitted, state.objects, state.held)
    print(f"{size}: diff {time.perf_counter() - started:.1f} s, {len(result.changes)} change(s)", flush=True)
    ok &= not result.changes
    if not keep:
        remove_fabric(nb, desired)
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default=os.environ.get("NAUTOBOT_URL"))
    parser.add_argument("--token-env", default="NAUTOBOT_TOKEN")
    parser.add_argument("--sizes", default="medium,1k")
    parser.add_argument("--keep", action="store_true", help="leave the fabrics in Nautobot")
    parser.add_argument("--again", action="store_true",
                        help="the fabrics are there (an earlier --keep run): only the no-change push and the diff")
    args = parser.parse_args()
    token = os.environ.get(args.token_env)
    if not args.url or not token:
        sys.exit(f"give --url (or $NAUTOBOT_URL) and the token in ${args.token_env}")
    nb = Nautobot(args.url, token)
    print(f"Nautobot {nb.status()} at {args.url}", flush=True)
    work = Path(tempfile.mkdtemp(prefix="fabricgen-sot-bench-"))
    ok = all([run(nb, size, work, args.keep or args.again, args.again) for size in args.sizes.split(",")])
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
