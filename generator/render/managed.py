"""The parts of a Cumulus NVUE config that fabricgen manages: one definition for the deploy
(candidate = rendered file + the switch's unmanaged subtrees), its guard and post-check,
and drift.

Why a definition at all: `nv config replace FILE` makes the config exactly FILE (NVUE-CLI
page), and a real switch already holds things the intent does not describe: eth0 in the
mgmt VRF, the `cumulus` user, the default control-plane ACLs, the NVUE API (factory
startup.yaml; Quick-Start-Guide, Management-VRF pages), and whatever the operators added
(LLDP, `system global`, other VRFs). fabricgen owns the data plane always, and the
management plane only when the intent has a `management:` section; everything else on
the switch is carried over unchanged and never compared.

Key paths are tuples of NVUE keys as in startup.yaml; `ANY` matches one key.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

ANY = "*"
KeyPath = tuple[str, ...]

# Always fabricgen's: every interface but eth0 (ports, breakouts, lo), QoS/buffers,
# `router` (BGP globals, route-maps/prefix-lists under `router policy`), the default VRF
# (BGP neighbours, redistribution) and the hostname.
DATA_PLANE: tuple[KeyPath, ...] = (
    ("interface", ANY),
    ("qos",),
    ("router",),
    ("vrf", "default"),
    ("system", "hostname"),
)
MGMT_PORT: KeyPath = ("interface", "eth0")
# With `management:` also what the renderer emits for it, in both syntax generations
# (5.14 and earlier: `service ntp|dns|syslog <vrf>`; 5.15+: `system ntp|dns|syslog`, renames
# list in nvue_renames_515.tsv). Users are managed one by one under `system aaa user`; the
# rest of `system aaa` (TACACS, RADIUS, authentication order) stays the switch's. Of the
# control plane only the ACL bindings are rendered; policers and traps stay the switch's.
MANAGEMENT: tuple[tuple[KeyPath, str], ...] = (
    (MGMT_PORT, "eth0"),
    (("vrf", "mgmt"), "vrf mgmt"),
    (("system", "aaa", "user"), "users"),
    (("system", "ntp"), "NTP"),
    (("service", "ntp"), "NTP"),
    (("system", "dns"), "DNS"),
    (("service", "dns"), "DNS"),
    (("system", "syslog"), "syslog"),
    (("service", "syslog"), "syslog"),
    (("system", "timezone"), "timezone"),                   # 5.14 and earlier
    (("system", "date-time", "timezone"), "timezone"),      # 5.15+ object model
    (("system", "message"), "login banner"),
    (("system", "control-plane", "acl"), "control-plane ACLs"),
    (("system", "api"), "NVUE API"),
    (("system", "ssh-server"), "ssh-server"),
)

# What fabricgen owns of the management plane: the leaves it renders, not their parents
# (issue 23, item 6). An operator's `vrf mgmt router static`, `system ssh-server vrf mgmt` or
# `allow-users`, `system api listening-address`, a post-login message or another control-plane
# ACL binding lives under the same parents; owning the parents would delete them on the next
# replace. NTP, DNS and syslog servers and the user list stay owned whole: the intent lists them.
MANAGEMENT_OWNED: tuple[KeyPath, ...] = (
    MGMT_PORT,
    ("vrf", "mgmt"),                    # the VRF itself; what lies below it is carved out
    ("system", "aaa", "user"),
    ("system", "ntp"), ("service", "ntp"),
    ("system", "dns"), ("service", "dns"),
    ("system", "syslog"), ("service", "syslog"),
    ("system", "timezone"), ("system", "date-time", "timezone"),
    ("system", "message", "pre-login"),
    ("system", "control-plane", "acl", "acl-default-dos"),
    ("system", "control-plane", "acl", "acl-default-whitelist"),
    ("system", "api", "state"),
    ("system", "ssh-server", "state"),
)
# Below an owned path, still the switch's: static routes and other settings of the mgmt VRF.
MANAGEMENT_CARVED: tuple[KeyPath, ...] = (("vrf", "mgmt", ANY),)

# What `nv config show` prints that nobody set: defaults inside managed subtrees. Dropped
# from the running side of a comparison when the intended side does not have them.
# NVUE-CLI page: interfaces carry the `type` NVUE infers (swp, loopback, eth).
SHOW_DEFAULTS: tuple[tuple[KeyPath, str], ...] = (
    (("interface", ANY, "type"), "swp"),
    (("interface", "lo", "type"), "loopback"),
    (("interface", "eth0", "type"), "eth"),
)


def _match(pattern: KeyPath, path: KeyPath) -> bool:
    """`path` lies in the subtree `pattern` names (or is it)."""
    return len(path) >= len(pattern) and all(p == ANY or p == k for p, k in zip(pattern, path, strict=False))


def _above(pattern: KeyPath, path: KeyPath) -> bool:
    """`path` is a container strictly above the subtree `pattern` names."""
    return len(path) < len(pattern) and _match(pattern[:len(path)], path)


@dataclass(frozen=True)
class ManagedSet:
    owned: tuple[KeyPath, ...]
    carved_out: tuple[KeyPath, ...]
    management: bool

    def owns(self, path: KeyPath) -> bool:
        """fabricgen decides everything at and below `path`."""
        return any(_match(p, path) for p in self.owned) and not any(_match(c, path) for c in self.carved_out)

    def _carved_below(self, path: KeyPath) -> bool:
        return any(_above(c, path) for c in self.carved_out)

    def contains(self, path: KeyPath) -> bool:
        """`path` is a container with some managed subtree below it."""
        return any(_above(p, path) for p in self.owned) and not any(_match(c, path) for c in self.carved_out)

    def split(self, tree: dict, path: KeyPath = ()) -> tuple[dict, dict]:
        """(managed part, unmanaged part) of a `set` tree; together they are the tree."""
        mine: dict = {}
        theirs: dict = {}
        for key, value in tree.items():
            sub = (*path, str(key))
            if self.owns(sub) and isinstance(value, dict) and self._carved_below(sub):
                m, t = self.split(value, sub)     # owned, with the switch's own settings below it
                if m or not value:                # an empty owned map is ours; a mere container is not
                    mine[key] = m
                if t:
                    theirs[key] = t
            elif self.owns(sub):
                mine[key] = value
            elif isinstance(value, dict) and value and self.contains(sub):
                m, t = self.split(value, sub)
                if m:
                    mine[key] = m
                if t:
                    theirs[key] = t
            else:
                theirs[key] = value
        return mine, theirs

    def with_owned(self, paths: tuple[KeyPath, ...]) -> ManagedSet:
        """This set plus PATHS (a switch's `extra:` subtrees, render/extra.py)."""
        return ManagedSet(self.owned + tuple(p for p in paths if p not in self.owned), self.carved_out,
                          self.management) if paths else self

    def managed(self, tree: dict) -> dict:
        return self.split(tree)[0]

    def unmanaged(self, tree: dict) -> dict:
        return self.split(tree)[1]

    def candidate(self, rendered: dict, running: dict) -> dict:
        """What `nv config replace` gets: the rendered tree, plus the running config's
        unmanaged subtrees (appended after the rendered keys of each map)."""
        from generator.render.nvue_document import merge_into

        return merge_into(merge_into({}, rendered), self.unmanaged(running))

    def kept_management(self, running: dict) -> list[str]:
        """Labels of the management-plane subtrees a candidate carries over from `running`."""
        kept = self.unmanaged(running)
        labels: list[str] = []
        for path, label in MANAGEMENT:
            if _has(kept, path) and label not in labels:
                labels.append(label)
        return labels


USERS: KeyPath = ("system", "aaa", "user")


def managed_set(management: bool, users: bool = True) -> ManagedSet:
    """`users` False: a `management:` without `users` leaves the switch's accounts alone (an
    empty managed user list would delete every account, the deploy's own included)."""
    if management:
        owned = tuple(p for p in MANAGEMENT_OWNED if users or p != USERS)
        return ManagedSet(DATA_PLANE + owned, MANAGEMENT_CARVED, True)
    return ManagedSet(DATA_PLANE, (MGMT_PORT,), False)


def for_plan(plan) -> ManagedSet:
    """The managed set of a compiled plan: `plan.management` None keeps the switch's own."""
    m = plan.management
    return managed_set(m is not None, users=bool(m and m.users))


def for_switch(plan, name: str) -> ManagedSet:
    """The managed set of one switch: the plan's, plus what the intent's `extra:` entries set on
    it (render/extra.py), so deploy replaces those subtrees and drift compares them."""
    managed = for_plan(plan)
    if not plan.extra:
        return managed
    from generator.render.extra import nvue_owned

    sw = next((s for s in plan.switches if s.name == name), None)
    return managed if sw is None else managed.with_owned(nvue_owned(plan, sw))


def _has(tree: dict, path: KeyPath) -> bool:
    node = tree
    for key in path:
        if not isinstance(node, dict) or key not in node:
            return False
        node = node[key]
    return True


def _known_path_check(version: str | None) -> Callable[[KeyPath], bool] | None:
    """`is_known_path` of the release's NVUE object model, when the model is available."""
    if not version:
        return None
    try:
        from generator.render.nvue_model import is_known_path
    except ImportError:
        return None

    def known(path: KeyPath) -> bool:
        try:
            return bool(is_known_path(version, path))
        except (KeyError, ValueError, LookupError):
            return True           # a release the model does not cover: compare everything
    return known


def comparable(tree: dict, managed: ManagedSet, *, version: str | None = None,
               intended: dict | None = None) -> dict:
    """The managed part of `tree`, as compared with the intent (post-check, drift).

    Running side (`intended` given): also without what NVUE adds by itself where the
    intended tree does not have it — the defaults `nv config show` prints (SHOW_DEFAULTS)
    and keys the intent's release does not document (a newer minor release on the switch).
    A key the release documents stays: on the device but not intended is drift.
    """
    mine = managed.managed(tree)
    if intended is None:
        return mine
    known = _known_path_check(version)
    return _prune(mine, intended, (), known)


def _prune(node: dict, want: dict | None, path: KeyPath, known) -> dict:
    """`want` is the intended map at `path`, None where the intent has nothing there."""
    out: dict = {}
    for key, value in node.items():
        sub = (*path, str(key))
        wanted = want.get(key, _MISSING) if want is not None else _MISSING
        if wanted is _MISSING:
            # a default only where the intent has the object it belongs to (an unplanned
            # port is reported whole, `type` included)
            if want is not None and not isinstance(value, dict) and any(
                    len(p) == len(sub) and _match(p, sub) and value == v for p, v in SHOW_DEFAULTS):
                continue
            if known is not None and not known(sub):
                continue
        if isinstance(value, dict) and value:
            out[key] = _prune(value, wanted if isinstance(wanted, dict) else None, sub, known)
        else:
            out[key] = value
    return out


_MISSING = object()


# Values never written into a message (hashes, keys, shared secrets).
SECRET_KEYS = frozenset({"hashed-password", "password", "secret", "key"})


def first_difference(want: dict, have: dict, path: KeyPath = ()) -> str | None:
    """The first key path (in `want`'s order, then `have`'s) where two trees differ, in words."""
    for key, value in want.items():
        sub = (*path, str(key))
        if key not in have:
            return f"`{' '.join(sub)}` (missing on the switch)"
        other = have[key]
        if isinstance(value, dict) and isinstance(other, dict):
            found = first_difference(value, other, sub)
            if found:
                return found
        elif value != other:
            if str(key) in SECRET_KEYS:
                return f"`{' '.join(sub)}` (differs)"
            return f"`{' '.join(sub)}` (rendered {value!r}, switch {other!r})"
    for key in have:
        if key not in want:
            return f"`{' '.join((*path, str(key)))}` (on the switch, not rendered)"
    return None
