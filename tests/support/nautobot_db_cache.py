"""Where a migrated, empty Nautobot database is kept between runs (a pg_dump), and when not to use one.

`nautobot-server migrate` on an empty database takes minutes on 2 cores; restoring its dump takes
seconds. The dump is keyed by what decides the schema: the pinned Nautobot install
(constraints-nautobot.txt, which names nautobot's version), PostgreSQL's major version (a custom
format dump restores into the same or a later major; pg_restore(1)) and the revision of the
generated config's schema-relevant part (installed apps). It holds no user and no token: those are
made after the restore, each run its own.

CI migrates once per run (issue 37): with CI=true only a dump made under the same
FABRICGEN_CI_RUN_ID is restored, so a change that breaks migrations fails the run that brings it.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from pathlib import Path

CACHE_DIR_ENV = "FABRICGEN_NAUTOBOT_CACHE_DIR"
DEFAULT_CACHE_DIR = Path("/var/tmp/fabricgen-nautobot-cache")
CI_RUN_ENV = "FABRICGEN_CI_RUN_ID"

# Bump when the generated nautobot_config.py changes anything migrate depends on (PLUGINS, apps).
CONFIG_SCHEMA_REVISION = "2"      # 2: migrates nautobot_bgp_models too


def schema_key(constraints: bytes, pg_major: str) -> str:
    digest = hashlib.sha256()
    for part in (constraints, pg_major.encode(), CONFIG_SCHEMA_REVISION.encode()):
        digest.update(len(part).to_bytes(8, "big") + part)
    return digest.hexdigest()[:16]


def dump_path(nautobot_version: str, key: str, env: dict[str, str]) -> tuple[Path | None, str]:
    """The dump to restore (when it exists) or to write after a migrate, and why; None: migrate
    and keep nothing."""
    name = f"nautobot-{nautobot_version}-{key}"
    if env.get("CI", "").lower() == "true":
        run_id = env.get(CI_RUN_ENV, "")
        if not re.fullmatch(r"[A-Za-z0-9_.-]{1,64}", run_id):
            return None, f"CI=true without a valid {CI_RUN_ENV}: migrating fresh, keeping no dump"
        name += f"-ci-{run_id}"
    directory = Path(env.get(CACHE_DIR_ENV) or DEFAULT_CACHE_DIR)
    problem = _private_dir(directory)
    if problem:
        return None, f"{problem}: migrating fresh, keeping no dump"
    return directory / f"{name}.dump", f"database cache {directory / name}.dump"


def _private_dir(directory: Path) -> str | None:
    """The cache is restored into a database the tests trust: only a directory of this user that
    nobody else can write qualifies (/var/tmp is shared)."""
    try:
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        info = directory.lstat()
    except OSError as exc:
        return f"cannot use {directory} ({exc.strerror})"
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid() or info.st_mode & 0o022:
        return f"{directory} is not a directory of uid {os.geteuid()} closed to others"
    return None


def prune_other_ci_runs(kept: Path) -> None:
    """A CI run's dump is useless to every later run: drop those of earlier runs when keeping one."""
    if "-ci-" not in kept.name:
        return
    for old in kept.parent.glob("nautobot-*-ci-*.dump"):
        if old != kept:
            old.unlink(missing_ok=True)
