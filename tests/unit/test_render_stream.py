"""`fabricgen render` writes through generator.render.stream (issue 14): forked workers, hashes
taken while writing. The tree must be byte for byte (and mode for mode) what
write_tree(render_files(...)) writes, whatever the number of workers."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from generator.intent.loader import load_intent
from generator.plan.compile import compile_plan
from generator.render import stream
from generator.render.output import OutputError, read_manifest, render_files, write_render, write_tree
from tests.conftest import example


def _tree(root: Path) -> dict[str, tuple[bytes, int]]:
    return {p.relative_to(root).as_posix(): (p.read_bytes(), p.stat().st_mode & 0o777)
            for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("name", ["medium", "medium-sonic"])
@pytest.mark.parametrize("workers", [1, 3])
def test_same_tree_as_write_tree(tmp_path, name: str, workers: int) -> None:
    loaded = load_intent(example(name))
    plan = compile_plan(loaded.intent)
    ref = write_tree(render_files(plan, loaded.text), tmp_path / "ref")
    stats: dict[str, float] = {}
    out, count = write_render(plan, loaded.text, tmp_path / "new", workers, stats)
    assert _tree(out) == _tree(ref)
    assert count == len(_tree(ref))
    assert read_manifest(out) is not None
    assert stats["render_s"] > 0 and "fabric_s" in stats


def test_workers_from_the_environment(monkeypatch) -> None:
    monkeypatch.setenv(stream.WORKERS_ENV, "3")
    assert stream.worker_count() == 3
    monkeypatch.setenv(stream.WORKERS_ENV, "0")
    with pytest.raises(ValueError, match="FABRICGEN_WORKERS"):
        stream.worker_count()
    monkeypatch.delenv(stream.WORKERS_ENV)
    assert stream.worker_count() == len(os.sched_getaffinity(0))


def test_a_failing_worker_leaves_nothing(tmp_path, monkeypatch) -> None:
    """A worker that raises: the error reaches the caller, no output, no temporary directory."""
    loaded = load_intent(example("medium"))
    plan = compile_plan(loaded.intent)
    import generator.render.nvue as nvue

    def broken(plan, sw):
        raise RuntimeError(f"template exploded on {sw.name}")

    monkeypatch.setattr(nvue, "render_switch", broken)
    with pytest.raises(stream.WorkerError, match="template exploded"):
        write_render(plan, loaded.text, tmp_path / "out", 2)
    assert list(tmp_path.iterdir()) == []


def test_an_unwritable_target_is_an_output_error(tmp_path) -> None:
    loaded = load_intent(example("small"))
    (tmp_path / "taken").write_text("not a directory")
    with pytest.raises(OutputError):
        write_render(compile_plan(loaded.intent), loaded.text, tmp_path / "taken", 2)
