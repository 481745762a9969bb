"""`fabricgen acceptance INTENT --snapshot FILE --endpoints E`: every switch's interface counters
now, through verify's session layer (devices/sessions.py: bounded pool, a read that did not
complete retried once on a new session), as {switch: {port: napalm get_interfaces_counters row}}.
The burn-in scripts take one before and one after each round (round_counters.py reads them).
A switch that cannot be read fails the snapshot (exit 1, nothing written): a round judged
without a switch's counters would call its cables clean, and safety is never inferred away.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

SSH_TIMEOUT = 20


def take_snapshot(intent_path: str, target: str, endpoints: str | None) -> int:
    from generator.checks.runner import load_checked
    from generator.common.atomic_write import write_atomic
    from generator.devices.credentials import CredentialsError
    from generator.devices.endpoints import split_listed
    from generator.devices.opener import switch_logins
    from generator.devices.sessions import Session, for_each

    found = load_checked(intent_path, "reading counters of", sys.stderr)
    if found is None:
        return 1
    loaded, plan = found
    names, _unlisted = split_listed([sw.name for sw in plan.switches], endpoints)
    try:
        access, workers, open_switch = switch_logins(plan, names, intent_path, endpoints,
                                                     loaded.intent.deploy.concurrency, SSH_TIMEOUT)
    except CredentialsError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1

    def read(name: str):
        session = Session(open_switch(name))
        try:
            return session.call(lambda d: d.get_interfaces_counters())
        except Exception as exc:  # noqa: BLE001 - reported below, one line per switch
            text = " ".join(str(exc).split())[:200]
            return exc.__class__.__name__ + ": " + (text.replace(access.password, "***") if access.password else text)
        finally:
            session.close()

    readings = for_each(names, read, workers)
    failed = {n: r for n, r in readings.items() if not isinstance(r, dict)}
    if failed or not names:
        for name, why in sorted(failed.items()):
            print(f"error: {name}: counters not read ({why}); nothing written to {target}", file=sys.stderr)
        if not names:
            print(f"error: no switch of fabric {plan.fabric} is listed in {endpoints}", file=sys.stderr)
        return 1
    try:
        Path(target).parent.mkdir(parents=True, exist_ok=True)
        write_atomic(Path(target), json.dumps(readings, indent=1, sort_keys=True) + "\n")
    except OSError as exc:
        print(f"error: {target}: cannot write: {exc.strerror or exc}", file=sys.stderr)
        return 1
    return 0
