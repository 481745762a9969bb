"""One way to log in to a switch of the plan: drift, verify, soak and the burn-in snapshot open
their sessions through `driver_opener` (or `switch_logins`, which also resolves the credentials and
sizes the pool), so a driver option or timeout is set in one place."""

from __future__ import annotations

from collections.abc import Callable

SSH_TIMEOUT = 20


def driver_opener(plan, access, timeout: float = SSH_TIMEOUT) -> Callable[[str], Callable[[], object]]:
    """name -> a callable that logs in to that switch (a Session's opener); ACCESS is
    devices.credentials.resolve_access()'s answer for the switches asked about."""
    from generator.devices.factory import switch_driver

    def for_switch(name: str):
        target = access.targets[name]
        return lambda: switch_driver(plan.switch_os, plan.switch_os_version, target.host, target.port,
                                     target.username, access.password, access.known_hosts, timeout=timeout,
                                     password_hint=access.password_source)

    return for_switch


def switch_logins(plan, names: list[str], intent_path: str, endpoints: str | None, concurrency: int,
                  timeout: float = SSH_TIMEOUT):
    """(access, workers, opener) for reading NAMES: their credentials resolved once, the pool sized
    for them, and driver_opener's logins. CredentialsError (devices.credentials) when they cannot be."""
    from generator.devices.credentials import resolve_access
    from generator.devices.sessions import pool_size

    access = resolve_access(plan, names, intent_path, endpoints)
    return access, pool_size(len(names), concurrency), driver_opener(plan, access, timeout)
