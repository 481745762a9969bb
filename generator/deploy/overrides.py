"""Environment overrides of deploy settings, validated as strictly as the intent's own values.

FABRICGEN_CONFIRM_TIMEOUT overrides `deploy.confirm_timeout` and passes the intent's rule
(intent/model.py Deploy: 30-3600 s; issue 15, finding 8: `=1` used to be accepted), for every
target alike. The 30 s floor exists so that a real switch is not reverted while the post-check
and confirm still cross a WAN. The product never asks whether it talks to a simulator (issue 26,
item 6): tests that need a timer to expire within a test run the lab's clock faster instead
(`fabricgen lab up --time-scale N`: a 30 s timer expires in 30/N s there).

FABRICGEN_SSH_TIMEOUT is no intent value, but gets the same treatment: a whole number of
seconds in range, else one error line (it used to be clamped silently).
"""

from __future__ import annotations

import os

from pydantic import ValidationError

from generator.devices.credentials import CredentialsError

CONFIRM_ENV = "FABRICGEN_CONFIRM_TIMEOUT"
SSH_TIMEOUT_ENV = "FABRICGEN_SSH_TIMEOUT"
SSH_TIMEOUT_RANGE = (1, 600)


def _whole(name: str, value: str) -> int:
    text = value.strip()
    if not (text.isascii() and text.isdigit()):
        raise CredentialsError(f"{name}={value!r} is not a whole number of seconds")
    return int(text)


def confirm_timeout(intent_value: int) -> int:
    """The confirm timer: the intent's value, or $FABRICGEN_CONFIRM_TIMEOUT checked by the intent's rule."""
    raw = os.environ.get(CONFIRM_ENV)
    if raw is None or raw == "":
        return intent_value
    seconds = _whole(CONFIRM_ENV, raw)
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
