"""Environment overrides of deploy settings, validated as strictly as the intent's own values.

FABRICGEN_CONFIRM_TIMEOUT overrides `deploy.confirm_timeout` and passes the intent's rule
(intent/model.py Deploy: 30-3600 s; issue 15, finding 8: `=1` used to be accepted). The one
exception is the lab: when every target is on loopback and the endpoints file lies in the
directory of a running `fabricgen lab` (its lab.pid names the live simulator process), the
floor is LAB_CONFIRM_FLOOR. The 30 s floor exists so that a real switch is not reverted
while the post-check and confirm still cross a WAN; the lab is a process on this host, and
its tests need timers that expire within a test. No environment variable lowers the floor:
an operator cannot switch it off for real switches by accident or on purpose, and the lab
condition cannot be met by a real switch (a port forward to 127.0.0.1 would still need a
live lab server process owning that endpoints file's directory).

FABRICGEN_SSH_TIMEOUT is no intent value, but gets the same treatment: a whole number of
seconds in range, else one error line (it used to be clamped silently).
"""

from __future__ import annotations

import ipaddress
import os
from pathlib import Path

from pydantic import ValidationError

from generator.deploy.credentials import CredentialsError

CONFIRM_ENV = "FABRICGEN_CONFIRM_TIMEOUT"
SSH_TIMEOUT_ENV = "FABRICGEN_SSH_TIMEOUT"
LAB_CONFIRM_FLOOR = 5
SSH_TIMEOUT_RANGE = (1, 600)


def _whole(name: str, value: str) -> int:
    text = value.strip()
    if not (text.isascii() and text.isdigit()):
        raise CredentialsError(f"{name}={value!r} is not a whole number of seconds")
    return int(text)


def is_lab(endpoints: str | Path | None, hosts: list[str]) -> bool:
    """Every target on loopback and the endpoints file in a running lab's directory."""
    if endpoints is None or not hosts:
        return False
    try:
        if not all(ipaddress.ip_address(h).is_loopback for h in hosts):
            return False
    except ValueError:
        return False
    from generator.lab.control import _running_pid

    return _running_pid(Path(endpoints).resolve().parent) is not None


def confirm_timeout(intent_value: int, *, lab: bool) -> int:
    """The confirm timer: the intent's value, or $FABRICGEN_CONFIRM_TIMEOUT checked by the intent's rule."""
    raw = os.environ.get(CONFIRM_ENV)
    if raw is None or raw == "":
        return intent_value
    seconds = _whole(CONFIRM_ENV, raw)
    if lab:
        if not LAB_CONFIRM_FLOOR <= seconds <= 3600:
            raise CredentialsError(f"{CONFIRM_ENV}={raw}: against the lab the confirm timer is "
                                   f"{LAB_CONFIRM_FLOOR}-3600 seconds")
        return seconds
    from generator.intent.model import Deploy

    try:
        Deploy.model_validate({"confirm_timeout": seconds})
    except ValidationError as exc:
        error = exc.errors()[0]
        raise CredentialsError(f"{CONFIRM_ENV}={raw}: deploy.confirm_timeout: {error['msg']} (got {seconds}), "
                               "as in the intent") from None
    return seconds


def ssh_timeout(default: int = 30) -> int:
    raw = os.environ.get(SSH_TIMEOUT_ENV)
    if raw is None or raw == "":
        return default
    seconds = _whole(SSH_TIMEOUT_ENV, raw)
    low, high = SSH_TIMEOUT_RANGE
    if not low <= seconds <= high:
        raise CredentialsError(f"{SSH_TIMEOUT_ENV}={raw}: give {low}-{high} seconds")
    return seconds
