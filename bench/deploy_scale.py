"""Deploy to 128 simulated switches from the factory, then redeploy with nothing to change.

    .venv/bin/python bench/deploy_scale.py [--nos cumulus|sonic] [--keep DIR]

The fabric of bench/fleet.py (120 leaves + 8 spines with `management:`): the rollout has a
canary, eight rail waves and two spine halves. Both runs go through the `fabricgen deploy`
CLI, as a person would run them; the figures include its start-up time. SONiC's first
deploy is day 0 (`--provision`: full config_db and `config reload`).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fleet import Fleet  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nos", choices=("cumulus", "sonic"), default="cumulus")
    parser.add_argument("--keep", help="work in this directory and leave it (the lab is always stopped)")
    args = parser.parse_args()
    work = Path(args.keep or tempfile.mkdtemp(prefix="fabricgen-deploy-bench-")).resolve()
    work.mkdir(parents=True, exist_ok=True)
    fleet = Fleet(work, args.nos)
    try:
        fleet.up()
        for label, provision in (("deploy from factory", args.nos == "sonic"), ("redeploy (no changes)", False)):
            run = fleet.deploy(label, provision=provision)
            print("  " + next((ln for ln in run.stdout.splitlines() if "switch(es):" in ln), "").strip())
    finally:
        fleet.down()
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
