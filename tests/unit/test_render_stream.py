"""`fabricgen render` writes through generator.render.stream (issue 14): forked workers, hashes
taken while writing. The tree must be byte for byte (and mode for mode) what
write_tree(render_files(...)) writes, whatever the number of workers."""

from __future__ import annotations

import errno
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


def test_identical_files_of_a_worker_share_one_inode(tmp_path) -> None:
    """Host files the same on every host are hard links to one copy per worker (no inode each);
    files that differ, and files of another mode, are copies of their own."""
    loaded = load_intent(example("medium"))
    plan = compile_plan(loaded.intent)
    out, _ = write_render(plan, loaded.text, tmp_path / "out", 1)
    hosts = [h.name for h in plan.hosts]
    for rel in ("nccl.conf", "nccl.env", "fabricgen-roce-qos@.service"):
        first = out / "hosts" / hosts[0] / rel
        assert first.stat().st_nlink == len(hosts), rel
        assert all((out / "hosts" / h / rel).samefile(first) for h in hosts), rel
    for rel in ("netplan.yaml", "roce-qos.sh"):         # the host's name and addresses are in them
        assert len({(out / "hosts" / h / rel).stat().st_ino for h in hosts}) == len(hosts), rel
        assert (out / "hosts" / hosts[0] / rel).stat().st_nlink == 1


def test_a_full_inode_starts_a_new_copy(tmp_path, monkeypatch) -> None:
    """EMLINK (ext4: 65,000 links to one inode) makes the next identical file a copy of its own,
    which later twins link to; any other link error is an error."""
    seen: dict = {}
    made: set = set()
    calls = []
    real_link = os.link

    def link(src, dst, **kw):
        calls.append(dst)
        if len(calls) == 1:
            raise OSError(errno.EMLINK, "Too many links", dst)
        return real_link(src, dst, **kw)

    monkeypatch.setattr(stream.os, "link", link)
    for n in range(4):
        stream._write(tmp_path, f"h{n}/nccl.conf", "NCCL_IB_TC=104\n", made, seen)
    ino = [(tmp_path / f"h{n}/nccl.conf").stat().st_ino for n in range(4)]
    assert ino[0] != ino[1] and ino[1] == ino[2] == ino[3]
    assert all((tmp_path / f"h{n}/nccl.conf").read_text() == "NCCL_IB_TC=104\n" for n in range(4))

    def broken(src, dst, **kw):
        raise OSError(errno.EPERM, "Operation not permitted", dst)

    monkeypatch.setattr(stream.os, "link", broken)
    with pytest.raises(OSError, match="not permitted"):
        stream._write(tmp_path, "h9/nccl.conf", "NCCL_IB_TC=104\n", made, seen)


def _inodes(root: Path) -> dict[str, int]:
    return {p.relative_to(root).as_posix(): p.stat().st_ino for p in root.rglob("*") if p.is_file()}


def test_a_re_render_links_unchanged_files_from_the_previous_tree(tmp_path) -> None:
    """Re-rendering into the same directory: unchanged device files keep their inode (no new
    inode, none freed with the old tree); the tree is byte for byte a fresh render's."""
    loaded = load_intent(example("medium"))
    plan = compile_plan(loaded.intent)
    out, _ = write_render(plan, loaded.text, tmp_path / "out", 2)
    before = _inodes(out)
    out, _ = write_render(plan, loaded.text, tmp_path / "out", 2)
    after = _inodes(out)
    fresh, _ = write_render(plan, loaded.text, tmp_path / "fresh", 2)
    assert _tree(out) == _tree(fresh)
    device_files = [rel for rel in after if rel.startswith(("hosts/", "switches/"))]
    assert device_files and all(after[rel] == before[rel] for rel in device_files)
    # the fabric-wide files are written by the parent, anew
    assert after["plan.json"] != before["plan.json"]


def test_a_re_render_rewrites_what_it_cannot_trust(tmp_path) -> None:
    """A previous copy edited in place (same size, newer mtime) or with another mode is written
    anew; a previous copy reached through a symlinked directory is never a link source."""
    from generator.render.reuse import PreviousRender

    loaded = load_intent(example("medium"))
    plan = compile_plan(loaded.intent)
    out, _ = write_render(plan, loaded.text, tmp_path / "out", 1)
    hosts = [h.name for h in plan.hosts]
    edited = out / "hosts" / hosts[0] / "netplan.yaml"
    text = edited.read_text()
    edited.write_text(text.replace("mtu", "MTU"))       # same size, other bytes
    moded = out / "hosts" / hosts[1] / "netplan.yaml"
    moded.chmod(0o600)
    before = _inodes(out)
    out, _ = write_render(plan, loaded.text, tmp_path / "out", 1)
    after = _inodes(out)
    fresh, _ = write_render(plan, loaded.text, tmp_path / "fresh", 1)
    assert _tree(out) == _tree(fresh)
    assert (out / "hosts" / hosts[0] / "netplan.yaml").read_text() == text
    for host in hosts[:2]:
        rel = f"hosts/{host}/netplan.yaml"
        assert after[rel] != before[rel], rel
    assert after[f"hosts/{hosts[3]}/netplan.yaml"] == before[f"hosts/{hosts[3]}/netplan.yaml"]

    rel = f"hosts/{hosts[2]}/netplan.yaml"
    data = (out / rel).read_bytes()
    digest = read_manifest(out)["files"][rel]
    assert PreviousRender.of(out).source(rel, digest, len(data), False) == f"{out}/{rel}"
    elsewhere = tmp_path / "elsewhere"
    os.rename(out / "hosts" / hosts[2], elsewhere)
    (out / "hosts" / hosts[2]).symlink_to(elsewhere)
    assert PreviousRender.of(out).source(rel, digest, len(data), False) is None
    assert PreviousRender.of(out).source(rel, "0" * 64, len(data), False) is None
    assert PreviousRender.of(tmp_path / "nothing") is None
