"""FG5xx: the switch management plane (`management:`) and routing knobs (`routing:`).

A switch config that loses the deploy login or eth0 cuts the operator off the switch:
these rules refuse such intents before anything is rendered or pushed.
"""

from __future__ import annotations

import ipaddress
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


# NVUE roles (System-Security / User-Accounts page of the Cumulus Linux 5.x user guide):
# system-admin and nvue-admin may `nv set` and `nv config apply`; nvue-monitor may only `nv show`.
APPLY_ROLES = ("system-admin", "nvue-admin")


@rule("FG504", ERROR, "the deploy user cannot apply configuration", stage="intent")
def deploy_user_read_only(ctx: CheckContext) -> Finding:
    """The deploy user logs in to push every config. NVUE gives `nvue-monitor` show
    commands only (User-Accounts page), and `role` defaults to `nvue-monitor` when it is
    left out: the first deploy would install the deploy user read-only, and every later
    `nv config apply` would be refused — fabricgen locks itself out. Give the deploy
    user `role: system-admin` (or `nvue-admin`) explicitly."""
    m = ctx.intent.management
    if m is None or ctx.intent.switch_os.name == "sonic":
        return                                  # SONiC accounts are not rendered (FG503)
    for i, user in enumerate(m.users):
        if user.name != ctx.intent.deploy.user or user.role in APPLY_ROLES:
            continue
        how = ("has no role, and the default is nvue-monitor (read-only)" if "role" not in user.model_fields_set
               else f"has role {user.role} (read-only)")
        yield (f"management.users[{i}].role", f"deploy user {user.name!r} {how}: set role: system-admin "
               "(or nvue-admin), or the first deploy locks fabricgen out of every switch")


@rule("FG505", ERROR, "the management gateway is not a usable address of the management prefix", stage="plan")
def gateway_outside_management(ctx: CheckContext) -> Finding:
    """Every switch gets `management.gateway` as eth0's default gateway in the mgmt VRF.
    Outside `addressing.management` the route is unreachable (NVUE installs it, nothing
    answers); the network or broadcast address is no host; a switch's or host's own
    management address turns the gateway into a black hole for that device and makes
    its ARP fight the router's. Each is pushed to the whole fabric at once, so it is
    refused here. Give the router's address inside the prefix, outside the addresses
    fabricgen hands out (the first ones stay free for gateways and bastions)."""
    m = ctx.intent.management
    if m is None or m.gateway is None or ctx.plan is None:
        return
    pool = ipaddress.IPv4Network(ctx.intent.addressing.management)
    gateway = ipaddress.IPv4Address(m.gateway)
    path = "management.gateway"
    if gateway not in pool:
        yield (path, f"{gateway} is outside addressing.management {pool}: give the router's address inside it")
    elif pool.prefixlen < 31 and gateway in (pool.network_address, pool.broadcast_address):
        which = "network" if gateway == pool.network_address else "broadcast"
        yield (path, f"{gateway} is the {which} address of {pool}: give the router's host address")
    else:
        owner = next((d.name for d in (*ctx.plan.switches, *ctx.plan.hosts) if d.mgmt_ip == str(gateway)), None)
        if owner is not None:
            yield (path, f"{gateway} is {owner}'s own management address: give the router's address, outside "
                   "the addresses fabricgen assigns")
