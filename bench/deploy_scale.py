"""Deploy to 128 simulated switches from the factory, then redeploy with nothing to change.

    .venv/bin/python bench/deploy_scale.py [--nos cumulus|sonic] [--keep DIR]

The fabric of bench/fleet.py (120 leaves + 8 spines with `management:`). The first deploy is
`--day0` (every switch read for traffic evidence, then the canary and waves of 32; SONiC also
`--provision`: full config_db and `config reload`); the redeploy goes rail-safe: a canary, eight
rail waves and two spine halves. Both runs go through the `fabricgen deploy` CLI, as a person
would run them; the figures include its start-up time.
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
        # the factory fabric proves day 0 (`--day0`: canary + waves of deploy.concurrency); the
        # redeploy is of a fabric in service, rail-safe
        for label, provision, day0 in (("deploy from factory", args.nos == "sonic", True),
                                       ("redeploy (no changes)", False, False)):
            run = fleet.deploy(label, provision=provision, day0=day0)
            print("  " + next((ln for ln in run.stdout.splitlines() if "switch(es):" in ln), "").strip())
    finally:
        fleet.down()
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
