"""FG5xx: the switch management plane (`management:`) and routing knobs (`routing:`).

A switch config that loses the deploy login or eth0 cuts the operator off the switch:
these rules refuse such intents before anything is rendered or pushed.
"""

from __future__ import annotations

from collections.abc import Iterator

from generator.checks.registry import ERROR, WARNING, CheckContext, rule

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
    if m is None or not m.users or ctx.intent.switch_os.name == "sonic":
        return                                  # SONiC: FG503
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


@rule("FG503", WARNING, "switch users are not rendered for SONiC", stage="intent")
def sonic_users_not_rendered(ctx: CheckContext) -> Finding:
    """SONiC keeps its accounts as Linux users outside config_db (sonic-yang-models
    doc/Configuration.md has no user table; PASSW_HARDENING only sets policy), so neither
    `config reload` nor `config apply-patch` creates or deletes them and fabricgen renders
    no `management.users` for `switch_os.name: sonic`. Create the accounts with ZTP or an
    Ansible play, or remove `management.users` to silence this."""
    m = ctx.intent.management
    if m is None or not m.users or ctx.intent.switch_os.name != "sonic":
        return
    yield ("management.users", "switch_os sonic keeps accounts outside config_db: these "
           f"{len(m.users)} user(s) are not rendered; create them with ZTP/Ansible, or remove management.users")
