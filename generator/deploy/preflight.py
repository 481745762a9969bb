"""Checks made once, before any switch is contacted, that a deploy would not lock itself out.

With a `management:` section the rendered users replace the switch's (`system aaa user`,
NVUE-User-Accounts page): after the apply, the deploy's next login (the post-check, the
confirm) authenticates against the intent's `hashed_password`. If the password this deploy
logs in with is not the one behind that hash, every switch of the first wave locks
fabricgen out until its confirm timer reverts it. crypt(3) answers that locally.

Neither the password nor the hash ever appears in a message.
"""

from __future__ import annotations

import hmac
from collections.abc import Callable

from generator.common import crypt3
from generator.common.errors import FabricgenError


class PreflightError(FabricgenError, RuntimeError):
    """The deploy would lock fabricgen out; the message says where and what to do (one line)."""


def password_matches(password: str, hashed: str) -> bool | None:
    """crypt(3) of `password` with the salt of `hashed` equals `hashed` ($6$, $y$, ... as the
    switch's libxcrypt reads them). None when this machine has no libcrypt."""
    if not crypt3.available():
        return None
    result = crypt3.crypt(password, hashed)
    return bool(result) and hmac.compare_digest(result.encode(), hashed.encode())


def check_login_users(plan, login_users: set[str], password: str | None,
                      where: Callable[[str], str] = lambda path: "") -> None:
    """Raise PreflightError when a user the deploy logs in as would not get in after the apply.
    `where(key_path)` gives the "file:line: " prefix of an intent key path."""
    management = plan.management
    if management is None or not management.users:
        return                       # the switch keeps its own users
    by_name = {u.name: (i, u) for i, u in enumerate(management.users)}
    for name in sorted(login_users):
        if name not in by_name:
            raise PreflightError(
                f"{where('management.users')}management.users: the switch would lock fabricgen out: the deploy "
                f"logs in as {name!r}, which is not in the list, so the apply would delete it; add {name} or "
                "log in as one of the listed users (endpoints username / deploy.user)")
        index, user = by_name[name]
        if not password:
            continue                 # key-based login: the keys in management.users decide
        key = f"management.users[{index}]"
        if not user.hashed_password:
            raise PreflightError(
                f"{where(key)}{key}: the switch would lock fabricgen out: user {name} has no hashed_password, "
                "but the deploy logs in with a password; add the SHA-512 hash of the deploy password "
                "(openssl passwd -6) or deploy with an SSH key")
        matches = password_matches(password, user.hashed_password)
        if matches is None:
            raise PreflightError(
                f"{where(key)}{key}.hashed_password: cannot check it against the deploy password: this "
                "machine has no libcrypt (install libcrypt1)")
        if not matches:
            raise PreflightError(
                f"{where(key)}{key}.hashed_password: the switch would lock fabricgen out: it is not the hash of "
                f"the deploy password for {name}; put the hash of that password there (openssl passwd -6) "
                "or deploy with the password it was made from")
