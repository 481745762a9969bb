"""SIGINT and SIGTERM during a deploy: stop cleanly instead of dying with commits pending.

Outside the switch waves the handler raises Interrupted in the main thread (nothing is
committed there: loading, backups, the confirmation prompt, the host playbook). Inside
a phase that talks to switches (`deferred()`) it only sets an event: the workers check it
before they start a device and before they commit, the wave that is running rolls back
the commits it made pending (or leaves them to their confirm timers when a switch cannot
be reached), and no later wave starts. The deploy then releases its lock and says what it
did in one line; the exit status is the shell's 128 + signal number (130, 143).
"""

from __future__ import annotations

import signal
import threading
from contextlib import contextmanager

SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Interrupted(BaseException):
    """A stop signal arrived where unwinding is safe. BaseException: no `except Exception` eats it."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


class StopSignals:
    def __init__(self) -> None:
        self.signum: int | None = None
        self.event = threading.Event()
        self.summary = "nothing was pushed"
        self.lock_released: bool | None = None   # None: the lock was never taken
        self._raise = True
        self._old: dict[int, object] = {}

    def __enter__(self) -> StopSignals:
        # Python runs handlers in the main thread only; a deploy started elsewhere (a library
        # caller's worker thread) keeps its caller's handling.
        if threading.current_thread() is threading.main_thread():
            for sig in SIGNALS:
                self._old[sig] = signal.signal(sig, self._handle)
        return self

    def __exit__(self, *exc) -> None:
        for sig, old in self._old.items():
            signal.signal(sig, old)
        self._old.clear()

    def _handle(self, signum: int, frame) -> None:
        if self.signum is None:
            self.signum = signum
        self.event.set()
        if self._raise:
            self._raise = False          # a second Ctrl-C must not cut the clean-up short
            raise Interrupted(signum)

    @contextmanager
    def deferred(self):
        """Inside: a signal only sets the event (the caller polls it)."""
        before, self._raise = self._raise, False
        try:
            yield
        finally:
            self._raise = before and self.signum is None

    @property
    def name(self) -> str:
        return signal.Signals(self.signum).name if self.signum else ""

    @property
    def exit_code(self) -> int:
        return 128 + int(self.signum or 0)
