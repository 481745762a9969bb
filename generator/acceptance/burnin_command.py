"""`fabricgen acceptance INTENT --burn-in -o DIR`: write the burn-in schedule and its scripts.

DIR may be new, empty or an earlier burn-in output (its burnin.json carries our schema);
anything else is refused before a byte is written, so an operator's directory never loses a
file. The operator's burnin/<round>/ outputs are never touched. burnin.json is written last.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from generator.acceptance.burnin import SCHEDULE_FILE, SCHEMA, schedule, schedule_doc
from generator.acceptance.burnin_scripts import slurm_script, ssh_script
from generator.common.atomic_write import write_atomic
from generator.common.errors import FabricgenError


class BurninRefused(FabricgenError):
    """One line: why DIR cannot take the output."""


def _check_dir(out: Path) -> None:
    if not out.exists():
        return
    if not out.is_dir():
        raise BurninRefused(f"{out} is a file, not a directory: give a new or empty directory to -o")
    if not any(out.iterdir()):
        return
    try:
        doc = json.loads((out / SCHEDULE_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        doc = None
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
        raise BurninRefused(f"{out} is not empty and is not an earlier fabricgen burn-in output (no {SCHEDULE_FILE} "
                            f"with schema {SCHEMA}): give a new or empty directory to -o; nothing written")


def burnin_files(loaded, plan, efficiency: float, generator: str) -> tuple[dict[str, str], list, list[str]]:
    rounds, notes = schedule(plan, efficiency)
    hosts = [h.name for h in plan.hosts]
    files = {"burnin-ssh.sh": ssh_script(plan.fabric, rounds, generator),
             "burnin.sbatch": slurm_script(plan.fabric, hosts, rounds, generator)}
    doc = schedule_doc(plan, rounds, notes, efficiency, generator, hashlib.sha256(loaded.text.encode()).hexdigest())
    files[SCHEDULE_FILE] = json.dumps(doc, indent=1) + "\n"
    return files, rounds, notes


def write_burnin(files: dict[str, str], output: str) -> Path:
    out = Path(output)
    _check_dir(out)
    out.mkdir(parents=True, exist_ok=True)
    for rel in sorted(r for r in files if r != SCHEDULE_FILE) + [SCHEDULE_FILE]:
        write_atomic(out / rel, files[rel], mode=0o755 if rel.endswith((".sh", ".sbatch")) else 0o644)
    return out
