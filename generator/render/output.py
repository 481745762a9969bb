"""Write a render atomically: everything goes into a temporary sibling directory
that replaces the previous output in one rename, so a failed render leaves the old
output untouched and files that no longer belong disappear with it."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path

from generator import __version__
from generator.plan.model import FabricPlan
from generator.render.cabling import render_cabling
from generator.render.nvue import render_switch
from generator.render.plan_json import render_plan_json

# A target adds files for a plan: (relative path, content) pairs
Target = Callable[[FabricPlan], Iterable[tuple[str, str]]]


def switch_files(plan: FabricPlan) -> Iterable[tuple[str, str]]:
    if plan.switch_os == "cumulus":
        for sw in plan.switches:
            yield f"switches/{sw.name}/startup.yaml", render_switch(plan, sw)
    else:
        from generator.render.sonic import render_config_db

        for sw in plan.switches:
            yield f"switches/{sw.name}/config_db.json", render_config_db(plan, sw)


def host_files(plan: FabricPlan) -> Iterable[tuple[str, str]]:
    from generator.render.hosts import render_host

    for host in plan.hosts:
        yield from sorted(render_host(plan, host).items())


def fabric_files(plan: FabricPlan) -> Iterable[tuple[str, str]]:
    from generator.render.inventory import render_inventory

    yield "plan.json", render_plan_json(plan)
    yield "cabling.csv", render_cabling(plan)
    yield "inventory.yml", render_inventory(plan)


TARGETS: tuple[Target, ...] = (fabric_files, switch_files, host_files)


def render_files(plan: FabricPlan, intent_text: str) -> dict[str, str]:
    files: dict[str, str] = {}
    for target in TARGETS:
        for rel, content in target(plan):
            files[rel] = content
    manifest = {
        "generator": f"fabricgen {__version__}",
        "fabric": plan.fabric,
        "intent_sha256": hashlib.sha256(intent_text.encode()).hexdigest(),
        "files": {rel: hashlib.sha256(files[rel].encode()).hexdigest() for rel in sorted(files)},
    }
    files["manifest.json"] = json.dumps(manifest, indent=1, sort_keys=True) + "\n"
    return files


def write_tree(files: dict[str, str], out_dir: str | Path) -> Path:
    out = Path(out_dir).resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.tmp-", dir=out.parent))
    try:
        made: set[Path] = set()
        for rel in sorted(files):
            path = tmp / rel
            parent = path.parent
            if parent not in made:
                parent.mkdir(parents=True, exist_ok=True)
                made.add(parent)
            path.write_text(files[rel], encoding="utf-8")
            if rel.endswith(".sh"):
                path.chmod(0o755)
        os.chmod(tmp, 0o755)
        old = None
        if out.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{out.name}.old-", dir=out.parent))
            os.rename(out, old / "previous")
        try:
            os.rename(tmp, out)
        except OSError:
            os.rename(old / "previous", out)
            raise
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return out
