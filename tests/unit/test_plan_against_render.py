"""`fabricgen plan --against DIR` skips files whose sha256 the render's manifest already records
(issue 14); the result must be the one a full read and diff of DIR gives."""

from __future__ import annotations

import re

from generator.gitops.plan import compare_renders, make_plan, read_tree
from generator.intent.loader import load_intent
from generator.plan.compile import compile_plan
from generator.render.output import render_files, write_tree
from tests.conftest import example


def _full(intent, rendered):
    loaded = load_intent(intent)
    return compare_renders(read_tree(rendered), render_files(compile_plan(loaded.intent), loaded.text))


def test_unchanged_render_reads_nothing_but_counts_every_device(tmp_path) -> None:
    loaded = load_intent(example("medium"))
    rendered = write_tree(render_files(compile_plan(loaded.intent), loaded.text), tmp_path / "r")
    result = make_plan(str(example("medium")), str(rendered))
    assert result.devices == {}
    assert result.summary() == _full(example("medium"), rendered).summary()


def test_changes_are_those_of_a_full_diff(tmp_path) -> None:
    loaded = load_intent(example("medium"))
    rendered = write_tree(render_files(compile_plan(loaded.intent), loaded.text), tmp_path / "r")
    text = example("medium").read_text()
    changed = re.sub(r"switch: 9216", "switch: 9000", text)
    assert changed != text
    intent = tmp_path / "fabric.yaml"
    intent.write_text(changed)
    result, full = make_plan(str(intent), str(rendered)), _full(intent, rendered)
    assert result.summary() == full.summary()
    # make_plan alone compiles the intents for a BOM delta (none against a directory): the diffs are equal
    assert result.as_json() | {"bom": None} == full.as_json()
    # a rendered directory holds no intent: no parts are guessed from its files (issue 38)
    assert result.bom.rows == () and "plan against the git ref" in result.bom.missing
    assert result.summary()["changed"] > 0
