"""Refuse a candidate whose `nv config diff` would cut the switch off, before any apply.

`nv config replace` makes the pending config exactly the file (NVUE-CLI page); whatever the
file lacks is unset on apply. The diff between the applied and the pending revision
(`nv config diff -o yaml`: `- unset: {...}` / `- set: {...}` items, the format of
startup.yaml) says what the apply would do. A candidate is refused when that diff would

- unset or change eth0's address or its VRF in a way the intent does not ask for: with a
  `management:` section eth0 must end up as the plan's `mgmt_ip/prefix` in VRF mgmt; without
  one eth0's address and VRF must not change at all (Quick-Start-Guide, Management-VRF pages:
  eth0 in the mgmt VRF is how the switch is reached);
- unset or change eth0's default gateway other than to the plan's `management.gateway` (a
  wrong gateway leaves the switch reachable from its own subnet only: the bastion is usually
  routed, so it is as bad as a wrong address);
- remove the mgmt VRF;
- delete the deploy user or the user logged in (NVUE refuses to delete a logged-in user; an
  apply that deletes the deploy user locks every later deploy out);
- remove NVIDIA's default control-plane ACLs (`acl-default-dos`, `acl-default-whitelist`,
  factory startup.yaml): no intent asks for that today.

The answer is one line naming the NVUE path, or None when the diff is safe.
"""

from __future__ import annotations

from dataclasses import dataclass

from generator.render.nvue_document import DocumentError, load_items

KeyPath = tuple[str, ...]

ETH0_ADDRESS: tuple[KeyPath, ...] = (("interface", "eth0", "ip", "address"),      # 5.14 and earlier
                                     ("interface", "eth0", "ipv4", "address"))    # 5.15+
ETH0_GATEWAY: tuple[KeyPath, ...] = (("interface", "eth0", "ip", "gateway"),      # 5.14 and earlier
                                     ("interface", "eth0", "ipv4", "gateway"))    # 5.15+
ETH0_VRF: tuple[KeyPath, ...] = (("interface", "eth0", "ip", "vrf"), ("interface", "eth0", "vrf"))
MGMT_VRF: KeyPath = ("vrf", "mgmt")
DEFAULT_ACLS: tuple[KeyPath, ...] = (("system", "control-plane", "acl", "acl-default-dos"),
                                     ("system", "control-plane", "acl", "acl-default-whitelist"))
USER: KeyPath = ("system", "aaa", "user")


@dataclass(frozen=True)
class GuardContext:
    """What must survive the apply on one switch."""

    management: bool                 # the intent has a `management:` section
    mgmt_address: str | None         # "192.168.0.10/20" (Switch.mgmt_ip/prefix) with management
    deploy_user: str                 # deploy.user of the intent
    login_user: str                  # the user this deploy is logged in as (endpoints username)
    mgmt_gateway: str | None = None  # management.gateway of the plan, with management


def _leaves(tree: dict, path: KeyPath = ()) -> list[tuple[KeyPath, object]]:
    """(path, value) of every leaf; an empty map is a leaf (`key: {}` sets or unsets `key`)."""
    out: list[tuple[KeyPath, object]] = []
    for key, value in tree.items():
        sub = (*path, str(key))
        if isinstance(value, dict) and value:
            out.extend(_leaves(value, sub))
        else:
            out.append((sub, value))
    return out


def _under(path: KeyPath, prefix: KeyPath) -> bool:
    return path[:len(prefix)] == prefix


def _overlaps(path: KeyPath, region: KeyPath) -> bool:
    """Unsetting `path` removes something in `region` (one lies inside the other)."""
    return _under(path, region) or _under(region, path)


def _words(path: KeyPath) -> str:
    return " ".join(path)


def _has(tree: dict | None, path: KeyPath) -> bool:
    node = tree
    for key in path:
        if not isinstance(node, dict) or key not in node:
            return False
        node = node[key]
    return True


def check_diff(diff_text: str, ctx: GuardContext, running: dict | None = None) -> str | None:
    """None when applying this diff keeps the switch reachable, else why not (one line).

    `running` (the `set` tree read before the replace), when given, limits the checks on
    removals to what the switch has: unsetting a user that exists only outside NVUE is no loss.
    """
    try:
        items = load_items(diff_text)
    except DocumentError as exc:
        return f"cannot read `nv config diff` ({exc}); nothing was applied"
    unset = [p for item in items for kind, body in item.items() if kind == "unset" for p, _ in _leaves(body)]
    sets = [(p, v) for item in items for kind, body in item.items() if kind == "set" for p, v in _leaves(body)]

    def exists(path: KeyPath) -> bool:
        return running is None or _has(running, path)

    users = [(ctx.login_user, "the user this deploy is logged in as")]
    if ctx.deploy_user != ctx.login_user:
        users.append((ctx.deploy_user, "deploy.user of the intent"))
    for path in unset:
        for name, who in users:
            target = (*USER, name)
            if _under(target, path) and exists(target):
                return (f"the diff would unset `{_words(path)}`, deleting user {name} ({who}): "
                        f"keep it in management.users or deploy as another user")
        for acl in DEFAULT_ACLS:
            if _under(acl, path) and exists(acl):
                return (f"the diff would unset `{_words(path)}`, removing NVIDIA's default control-plane "
                        f"ACL {acl[-1]}: fabricgen never removes it; check the rendered file")
        if _under(MGMT_VRF, path) and exists(MGMT_VRF):
            return f"the diff would unset `{_words(path)}`, removing the management VRF the switch is reached by"

    set_addresses = {p[len(region)] for p, _ in sets for region in ETH0_ADDRESS
                     if _under(p, region) and len(p) > len(region)}
    set_vrfs = {str(v) for p, v in sets for region in ETH0_VRF if p == region}
    for path in unset:
        for region in ETH0_ADDRESS + ETH0_VRF:
            if not _overlaps(path, region) or not exists(path if len(path) > len(region) else region):
                continue
            what = "address" if region in ETH0_ADDRESS else "VRF"
            if not ctx.management:
                return (f"the diff would unset `{_words(path)}`, changing eth0's {what}: the intent has no "
                        "management section, so the switch's own eth0 must stay as it is")
            if region in ETH0_ADDRESS:
                removed = path[len(region)] if len(path) > len(region) else None
                kept = removed is not None and running is not None and any(
                    _has(running, (*r, str(ctx.mgmt_address))) for r in ETH0_ADDRESS)
                if removed == ctx.mgmt_address or not (ctx.mgmt_address in set_addresses or kept):
                    return (f"the diff would unset `{_words(path)}` without setting eth0 to the plan's "
                            f"{ctx.mgmt_address}: the switch would lose its management address")
            elif "mgmt" not in set_vrfs:
                return (f"the diff would unset `{_words(path)}`, taking eth0 out of VRF mgmt: the switch "
                        "would drop off its management network")
    refusal = _gateway_refusal(unset, sets, ctx, exists)
    if refusal:
        return refusal
    for path, value in sets:
        for region in ETH0_ADDRESS:
            if _under(path, region) and len(path) > len(region):
                address = path[len(region)]
                if not ctx.management:
                    return (f"the diff would set `{_words(path[:len(region) + 1])}`: the intent has no "
                            "management section, so the switch's own eth0 must stay as it is")
                if address != ctx.mgmt_address:
                    return (f"the diff would set `{_words(path[:len(region) + 1])}`, but the plan gives "
                            f"this switch eth0 {ctx.mgmt_address}")
        if path in ETH0_VRF:
            if not ctx.management:
                return (f"the diff would set `{_words(path)} {value}`: the intent has no management "
                        "section, so the switch's own eth0 must stay as it is")
            if str(value) != "mgmt":
                return f"the diff would set `{_words(path)} {value}`: eth0 must stay in VRF mgmt"
    return None


def _gateway_refusal(unset: list[KeyPath], sets: list[tuple[KeyPath, object]], ctx: GuardContext,
                     exists) -> str | None:
    """eth0's gateway is checked like its address: only the plan's, and only with `management:`."""
    set_gateways = {p[len(region)] for p, _ in sets for region in ETH0_GATEWAY
                    if _under(p, region) and len(p) > len(region)}
    for path, _ in sets:
        for region in ETH0_GATEWAY:
            if _under(path, region) and len(path) > len(region):
                where = _words(path[:len(region) + 1])
                if not ctx.management:
                    return (f"the diff would set `{where}`: the intent has no management section, so the "
                            "switch's own eth0 gateway must stay as it is")
                if ctx.mgmt_gateway is not None and path[len(region)] != ctx.mgmt_gateway:
                    return (f"the diff would set `{where}`, but the plan's management.gateway is "
                            f"{ctx.mgmt_gateway}")
    for path in unset:
        for region in ETH0_GATEWAY:
            if not _overlaps(path, region) or not exists(path if len(path) > len(region) else region):
                continue
            if not ctx.management:
                return (f"the diff would unset `{_words(path)}`, changing eth0's gateway: the intent has no "
                        "management section, so the switch's own eth0 must stay as it is")
            removed = path[len(region)] if len(path) > len(region) else None
            if ctx.mgmt_gateway is not None and (removed == ctx.mgmt_gateway or ctx.mgmt_gateway not in set_gateways):
                return (f"the diff would unset `{_words(path)}` without setting eth0's gateway to the plan's "
                        f"{ctx.mgmt_gateway}: the switch would lose its route to the management network")
    return None


# What a new login depends on: eth0 and its VRF, the accounts, sshd and the control-plane ACLs
# (NVUE paths; Management-VRF, User-Accounts and SSH pages). A diff that touches none of them
# leaves every way in as it was.
ACCESS: tuple[KeyPath, ...] = (("interface", "eth0"), MGMT_VRF, ("system", "aaa"), ("system", "ssh-server"),
                               ("system", "control-plane"))


def touches_access(diff_text: str) -> bool:
    """The diff sets or unsets something a new SSH login goes through (ACCESS), or cannot be read.

    The deploy's post-check proves on a NEW login that the switch can still be reached when this
    is true (an open session survives a change that locks out every later one); otherwise it
    checks on the session that committed (issue 26: one session per switch)."""
    try:
        items = load_items(diff_text)
    except DocumentError:
        return True
    return any(_overlaps(path, region) for item in items for kind, body in item.items()
               if kind in ("set", "unset") and isinstance(body, dict)
               for path, _ in _leaves(body) for region in ACCESS)
