"""`make golden`: rewrite tests/golden/<example>/ from the current code.

Review the resulting `git diff` before committing: golden files are only as good
as the review of their changes.
"""

from __future__ import annotations

import shutil

from generator.intent.loader import load_intent
from generator.plan.compile import compile_plan
from generator.render.output import render_files
from tests.conftest import REPO
from tests.golden.examples import GOLDEN, golden_dir


def main() -> None:
    for name in GOLDEN:
        loaded = load_intent(REPO / "inventories" / name / "fabric.yaml")
        files = render_files(compile_plan(loaded.intent), loaded.text)
        out = golden_dir(name)
        shutil.rmtree(out, ignore_errors=True)
        for rel, content in files.items():
            path = out / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(content, encoding="utf-8")
        print(f"{name}: {len(files)} files -> {out.relative_to(REPO)}")


if __name__ == "__main__":
    main()
