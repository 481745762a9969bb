"""FG5xx: the switch management plane (`management:`) and routing knobs (`routing:`).

A switch config that loses the deploy login or eth0 cuts the operator off the switch:
these rules refuse such intents before anything is rendered or pushed.
"""

from __future__ import annotations

from collections.abc import Iterator

from generator.checks.registry import ERROR, CheckContext, rule

Finding = Iterator[tuple[str, str]]


@rule("FG501", ERROR, "the deploy user is not among the managed switch users", stage="intent")
def deploy_user_missing(ctx: CheckContext) -> Finding:
    """`management.users` lists the switch accounts, and a full replace deletes every
    account the config does not carry (NVUE-CLI page: `nv config replace` makes the
    configuration exactly the file). Without `deploy.user` in the list, the first
    deploy would delete the account fabricgen logs in with: NVUE refuses to delete a
    logged-in user, and if another session made the change, the next deploy could not
    log in at all. Add the deploy user (with its hash or SSH key), or leave
    `management.users` out to keep the switch's own accounts."""
    m = ctx.intent.management
    if m is None or not m.users:
        return
    names = [u.name for u in m.users]
    if ctx.intent.deploy.user not in names:
        yield ("management.users", f"deploy.user {ctx.intent.deploy.user!r} is not listed ({', '.join(names)}): "
               "add it with its hashed_password or ssh_keys, or the first deploy deletes the login it uses")


@rule("FG502", ERROR, "a managed switch user can never log in", stage="intent")
def user_without_credentials(ctx: CheckContext) -> Finding:
    """A user with neither `hashed_password` nor `ssh_keys` has no way to log in; for
    the deploy user that locks fabricgen out after the first deploy. Give every user a
    crypt hash (`mkpasswd -m sha-512`) or at least one public key."""
    m = ctx.intent.management
    if m is None:
        return
    for i, user in enumerate(m.users):
        if user.hashed_password is None and not user.ssh_keys:
            yield (f"management.users[{i}]", f"user {user.name!r} has neither hashed_password nor ssh_keys: "
                   "add one, or the account cannot log in")
