"""Which migrated Nautobot database a test run may restore, and where it keeps one."""

from __future__ import annotations

import os

from tests.support import nautobot_db_cache as cache


def test_the_key_follows_every_input_of_the_schema():
    base = cache.schema_key(b"nautobot==3.2.7\n", "15")
    assert base == cache.schema_key(b"nautobot==3.2.7\n", "15")
    assert len(base) == 16
    assert base != cache.schema_key(b"nautobot==3.2.8\n", "15")
    assert base != cache.schema_key(b"nautobot==3.2.7\n", "16")
    # the parts are length-prefixed: moving bytes between them is another key
    assert cache.schema_key(b"a1", "5") != cache.schema_key(b"a", "15")


def test_outside_ci_the_dump_lives_in_the_cache_dir(tmp_path):
    path, why = cache.dump_path("3.2.7", "k" * 16, {cache.CACHE_DIR_ENV: str(tmp_path / "c")})
    assert path == tmp_path / "c" / f"nautobot-3.2.7-{'k' * 16}.dump"
    assert (tmp_path / "c").stat().st_mode & 0o777 == 0o700
    assert "database cache" in why


def test_ci_restores_only_a_dump_of_its_own_run(tmp_path):
    env = {cache.CACHE_DIR_ENV: str(tmp_path), "CI": "true", cache.CI_RUN_ENV: "20261206T031500Z-42"}
    path, _ = cache.dump_path("3.2.7", "key", env)
    assert path.name == "nautobot-3.2.7-key-ci-20261206T031500Z-42.dump"

    for run_id in ("", "../../etc", "a b"):
        path, why = cache.dump_path("3.2.7", "key", {**env, cache.CI_RUN_ENV: run_id})
        assert path is None and "migrating fresh" in why


def test_a_directory_others_can_write_is_not_trusted(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o777)
    path, why = cache.dump_path("3.2.7", "key", {cache.CACHE_DIR_ENV: str(shared)})
    assert path is None and "closed to others" in why


def test_keeping_a_ci_dump_drops_those_of_earlier_runs(tmp_path):
    old_run = tmp_path / "nautobot-3.2.7-key-ci-run1.dump"
    local = tmp_path / "nautobot-3.2.7-key.dump"
    kept = tmp_path / "nautobot-3.2.7-key-ci-run2.dump"
    for f in (old_run, local, kept):
        f.write_bytes(b"x")
    cache.prune_other_ci_runs(kept)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([local.name, kept.name])
