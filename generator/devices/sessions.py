"""One SSH session per switch per command, opened in a bounded pool, reads retried once; the one
parallel runner (for_each) of drift, verify and a deploy's phases and waves.

Why a pool of its own: `deploy.concurrency` is a blast-radius setting (how many switches a wave
changes at once); how many SSH sessions a bastion opens side by side is another limit (its
CPU, its file descriptors, the management network, the switches' sshd MaxStartups). Logins are
the slow part of talking to a switch (key exchange, the NOS's login banner and shell setup), so
overlapping them is most of the speed at 128+ switches. FABRICGEN_SSH_SESSIONS sets the bound
(default 64); reads (drift, verify, a deploy's backup + diff) use it, changes keep their waves.

A read that did not complete (a timeout, a dropped connection, output cut short: the driver's
ReadIncomplete) is retried once on a new session before the switch or getter is called
`unknown`; an answer of the device (an exit status, an error line) is never retried.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from napalm.base.exceptions import ConnectionClosedException, ConnectTimeoutError

from generator.devices.credentials import CredentialsError
from generator.devices.ssh import ReadIncomplete

SESSIONS_ENV = "FABRICGEN_SSH_SESSIONS"
DEFAULT_SESSIONS = 64
SESSIONS_RANGE = (1, 1024)

# what may succeed when asked again: the transport or the read failed, the device said nothing
TRANSIENT = (ConnectionClosedException, ConnectTimeoutError, ReadIncomplete, TimeoutError)

T = TypeVar("T")


def session_limit() -> int:
    """How many SSH sessions run side by side: $FABRICGEN_SSH_SESSIONS, checked, else the default."""
    raw = os.environ.get(SESSIONS_ENV, "").strip()
    if not raw:
        return DEFAULT_SESSIONS
    low, high = SESSIONS_RANGE
    if not (raw.isascii() and raw.isdigit()) or not low <= int(raw) <= high:
        raise CredentialsError(f"{SESSIONS_ENV}={raw!r}: give a whole number of sessions, {low}-{high}")
    return int(raw)


def pool_size(count: int, concurrency: int = 1) -> int:
    """Workers for `count` switches: the session limit, never below the intent's concurrency."""
    return max(1, min(count, max(session_limit(), concurrency)))


def for_each(names: list[str], func: Callable[[str], T], workers: int,
             done: Callable[[str], None] | None = None) -> dict[str, T]:
    """func(name) for every name in a pool of `workers` threads; {name: result} in `names` order.
    func handles its own errors (one switch's failure is its result, never the run's)."""
    def one(name: str) -> T:
        try:
            return func(name)
        finally:
            if done is not None:
                done(name)

    if not names:
        return {}
    with ThreadPoolExecutor(max_workers=max(1, min(workers, len(names))), thread_name_prefix="switch") as pool:
        return dict(zip(names, pool.map(one, names), strict=True))


class Session:
    """One switch's session for one command: opened once, reopened only when a read did not
    complete (the retry) or the connection is gone."""

    def __init__(self, make_driver: Callable[[], object]):
        self._make = make_driver
        self.driver = None

    def open(self):
        """Open (retried once on a transient failure); the driver."""
        return self._retry(self._open)

    def _open(self):
        self.close()
        driver = self._make()
        driver.open()
        self.driver = driver
        return driver

    def call(self, read: Callable[[object], T]) -> T:
        """read(driver), retried once on a fresh session when it did not complete."""
        if self.driver is None:
            self.open()
        try:
            return read(self.driver)
        except TRANSIENT:
            self._open()            # the old channel may still carry the rest of the cut answer
            return read(self.driver)

    @staticmethod
    def _retry(step: Callable[[], T]) -> T:
        try:
            return step()
        except TRANSIENT:
            return step()

    def close(self) -> None:
        driver, self.driver = self.driver, None
        if driver is not None:
            close_quietly(driver)


def close_quietly(driver) -> None:
    try:
        driver.close()
    except Exception:  # noqa: BLE001 - closing a dead session must not hide what was read, or the real error
        pass


def open_driver(driver, first_contact: threading.Lock | None = None):
    """DRIVER opened; under FIRST_CONTACT when new host keys are accepted: concurrent first-contact
    logins would each rewrite known_hosts and lose the others' keys."""
    if first_contact is None:
        driver.open()
    else:
        with first_contact:
            driver.open()
    return driver


class KeptSessions:
    """Each switch's session kept from one phase of a command to the next (a deploy's backup +
    diff to its wave: one login per switch unless it needs another, issue 26). A kept session
    that died meanwhile is replaced by a new login; what is never taken is closed at the end."""

    def __init__(self, login: Callable[[str], object]):
        self._login = login
        self._kept: dict[str, object] = {}
        self._lock = threading.Lock()

    def keep(self, name: str, driver) -> None:
        with self._lock:
            self._kept[name] = driver

    def take(self, name: str):
        """The switch's kept session if it is still alive, else a new login."""
        with self._lock:
            driver = self._kept.pop(name, None)
        if driver is not None:
            try:
                if driver.is_alive().get("is_alive"):
                    return driver
            except Exception:  # noqa: BLE001 - a dead session is replaced, whatever it says
                pass
            close_quietly(driver)
        return self._login(name)

    def close_all(self) -> None:
        with self._lock:
            left, self._kept = list(self._kept.values()), {}
        for driver in left:
            close_quietly(driver)
