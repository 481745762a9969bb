"""One sha256 per switch of what it runs, for a saved plan (`fabricgen plan --out --endpoints`) and
the `deploy --plan` that must find the switch as the plan saw it.

The running config is parsed as drift parses it (drift/normalize.py: NVUE's `set` tree without the
document header and its rev-id, scalars canonical, so `on`/`true` and `9216`/'9216' are equal;
SONiC's config_db as JSON) and hashed as sorted, compact JSON. The whole tree counts, not only the
subtrees fabricgen manages: a deploy's candidate keeps the switch's own subtrees (deploy/candidate.py),
so a hand edit anywhere changes what would be pushed.
"""

from __future__ import annotations

import hashlib
import json

from generator.common.errors import FabricgenError
from generator.drift.normalize import ConfigParseError, parse_config


class RunningReadError(FabricgenError, RuntimeError):
    """A switch's running config could not be read; the message names the switch."""


def running_sha256(os_name: str, running_text: str) -> str:
    """sha256 of the canonical running config; ConfigParseError when it is not one."""
    tree = parse_config(os_name, running_text)
    return hashlib.sha256(json.dumps(tree, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def read_running_digests(plan, names: list[str], intent_path: str, endpoints: str,
                         concurrency: int) -> dict[str, str]:
    """{switch: sha256 of its running config} for NAMES, read over the endpoints' sessions in a bounded
    pool (devices/sessions.py). Any switch that cannot be read raises RunningReadError naming every
    such switch: a plan that pins some switches and not others would push to the others unchecked."""
    from generator.devices.credentials import resolve_access
    from generator.devices.sessions import for_each, pool_size
    from generator.drift.command import fetch_running

    access = resolve_access(plan, names, intent_path, endpoints)     # CredentialsError: the caller's line

    def one(name: str) -> tuple[str | None, str | None]:
        try:
            return running_sha256(plan.switch_os, fetch_running(plan, access.targets[name], access)), None
        except ConfigParseError as exc:
            return None, f"running config unreadable: {exc}"
        except Exception as exc:  # noqa: BLE001 - every switch's failure is named, none hides another
            text = " ".join(str(exc).split()) or type(exc).__name__
            if access.password:
                text = text.replace(access.password, "***")
            return None, text[:300]

    read = for_each(names, one, pool_size(len(names), concurrency))
    failed = [f"{name}: {why}" for name, (_, why) in read.items() if why is not None]
    if failed:
        more = f" (and {len(failed) - 3} more)" if len(failed) > 3 else ""
        raise RunningReadError(f"{len(failed)} switch(es) could not be read: {'; '.join(failed[:3])}{more}")
    return {name: digest for name, (digest, _) in read.items()}
