"""Rendered output of the examples, byte for byte against reviewed golden files
(regenerate with `make golden`, review the diff)."""

from __future__ import annotations

import pytest

from generator.intent.loader import load_intent
from generator.plan.compile import compile_plan
from generator.render.output import render_files
from tests.conftest import example
from tests.golden.examples import GOLDEN, golden_dir


@pytest.mark.parametrize("name", GOLDEN)
def test_render_matches_golden(name: str) -> None:
    loaded = load_intent(example(name))
    files = render_files(compile_plan(loaded.intent), loaded.text)
    root = golden_dir(name)
    on_disk = {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()}
    assert sorted(on_disk) == sorted(files), "file set differs: run `make golden` and review the diff"
    for rel, content in sorted(files.items()):
        assert (root / rel).read_text(encoding="utf-8") == content, f"{name}/{rel} differs: `make golden`, review"


@pytest.mark.parametrize("name", GOLDEN)
def test_render_is_deterministic(name: str) -> None:
    loaded = load_intent(example(name))
    first = render_files(compile_plan(loaded.intent), loaded.text)
    second = render_files(compile_plan(load_intent(example(name)).intent), loaded.text)
    assert first == second
