"""What a reviewer of `fabricgen plan` reads first: the risky changes, and identical changes grouped.

Risk: the changes that can cut a device off or re-plug the floor, counted per device that exists on
both sides (an added device has nothing to lose, a removed one is counted as removed):

- management address: a switch's or host's `mgmt_ip` in plan.json (the address SSH, ZTP and
  monitoring reach it on);
- loopback / router-id: a switch's `loopback` in plan.json (BGP router-id and the address the
  fabric routes to it; DESIGN.md plan.json keys);
- ASN: a switch's `asn` in plan.json (every BGP session of the switch resets);
- users: a switch config change under `system.aaa.user` (NVUE; generator/render/managed.py USERS),
  the accounts a deploy logs in with;
- cables moved / removed (plan_compare.py's cable accounting) and devices removed;
- `extra:` (the escape hatch, plan.json `extra`): switches added or changed that carry an entry
  (config the model's rules did not derive or judge), and among them those where an entry has
  `override: true` (it replaces what the plan derives).

Groups: devices whose whole diff (status and every file's changes) is equal form one group, so an
ECN change on 80 leaves is one block "8 changes x 80 devices"; every device is in exactly one group.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from generator.gitops.plan_compare import CableChanges, DevicePlan

PLAN_JSON = "plan.json"
USERS_PATH = "system.aaa.user"
# plan.json record key -> risk item name, and what a person calls it
PLAN_KEYS = {"mgmt_ip": "management_address", "loopback": "loopback", "asn": "asn"}
RISK_LABELS = {"management_address": "management address(es)", "loopback": "loopback/router-id(s)",
               "asn": "ASN(s)", "users": "switch(es) with user account changes",
               "extra": "switch(es) changed that carry `extra:` config",
               "override": "switch(es) where `extra:` overrides what the plan derives"}
# order a reviewer reads groups in: existing devices changing first, the derived fabric files last
_STATUS_ORDER = {"changed": 0, "removed": 1, "added": 2}


@dataclass
class Risk:
    devices: dict[str, list[str]] = field(default_factory=lambda: {k: [] for k in RISK_LABELS})
    users: list[str] = field(default_factory=list)       # account names added, removed or changed
    cables_moved: int = 0
    cables_removed: int = 0
    devices_removed: int = 0
    config: str | None = None     # the fabricgen.toml beside the intent: "added", "changed" or "removed"

    @property
    def any(self) -> bool:
        return bool(any(self.devices.values()) or self.cables_moved or self.cables_removed or self.devices_removed
                    or self.config)

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {k: {"count": len(v), "devices": v} for k, v in self.devices.items()}
        out["users"]["accounts"] = self.users
        out["cables"] = {"moved": self.cables_moved, "removed": self.cables_removed}
        out["devices_removed"] = self.devices_removed
        out["config"] = self.config
        return out


def _records(text: str | None) -> dict[str, dict[str, Any]]:
    """name -> switch/host record of a plan.json text ({} when absent or not a plan)."""
    if not text:
        return {}
    try:
        data = json.loads(text)
    except ValueError:
        return {}               # not parseable: the diff shows it as text; no risk figures from it
    out: dict[str, dict[str, Any]] = {}
    if isinstance(data, dict):
        for kind in ("switches", "hosts"):
            for rec in data.get(kind) or []:
                if isinstance(rec, dict) and isinstance(rec.get("name"), str):
                    out[rec["name"]] = rec
    return out


def risk_of(old_plan: str | None, new_plan: str | None, devices: dict[str, DevicePlan],
            cables: CableChanges) -> Risk:
    risk = Risk(cables_moved=len(cables.moved), cables_removed=len(cables.removed),
                devices_removed=sum(1 for d in devices.values() if d.status == "removed"))
    before, after = _records(old_plan), _records(new_plan)
    for name in sorted(set(before) & set(after), key=natural):
        for key, item in PLAN_KEYS.items():
            if before[name].get(key) != after[name].get(key):
                risk.devices[item].append(name)
    accounts: set[str] = set()
    for name, device in devices.items():
        if device.status != "changed":
            continue
        touched = False
        for f in device.files.values():
            for change in f.get("changes", ()):
                path = change["path"]
                if path == USERS_PATH or path.startswith(USERS_PATH + ".") or path.startswith(USERS_PATH + "["):
                    touched = True
                    rest = path[len(USERS_PATH) + 1:]
                    if rest:
                        accounts.add(_first_key(rest))
                    else:       # the whole user tree appeared or went: its keys are the accounts
                        for side in ("old", "new"):
                            if isinstance(change.get(side), dict):
                                accounts.update(map(str, change[side]))
        if touched:
            risk.devices["users"].append(name)
    risk.devices["users"].sort(key=natural)
    risk.users = sorted(accounts)
    for entry in _extra_entries(new_plan):
        for name in entry["switches"]:
            if name in devices and devices[name].status in ("added", "changed"):
                for item in ("extra", "override") if entry.get("override") is True else ("extra",):
                    if name not in risk.devices[item]:
                        risk.devices[item].append(name)
    risk.devices["extra"].sort(key=natural)
    risk.devices["override"].sort(key=natural)
    return risk


def _extra_entries(text: str | None) -> list[dict[str, Any]]:
    """plan.json's `extra` list (render/plan_json.py), well-formed entries only."""
    try:
        data = json.loads(text) if text else {}
    except ValueError:
        return []
    entries = data.get("extra") if isinstance(data, dict) else None
    return [e for e in entries if isinstance(e, dict) and isinstance(e.get("switches"), list)
            and all(isinstance(n, str) for n in e["switches"])] if isinstance(entries, list) else []


def _first_key(path: str) -> str:
    """The first key of a structured_diff.join_path path: `name.x` or `"a.b".x` ([...] quoted)."""
    if path.startswith("["):
        path = path[1:]
    if path.startswith('"'):
        try:
            return json.JSONDecoder().raw_decode(path)[0]
        except ValueError:
            return path
    return re.split(r"[.\[]", path, maxsplit=1)[0]


@dataclass
class Group:
    status: str
    devices: list[str]
    sample: DevicePlan                  # the first device: its diff is every member's

    @property
    def change_count(self) -> int:
        return self.sample.change_count


def group_devices(devices: dict[str, DevicePlan], fabric: str) -> list[Group]:
    """Devices with equal diffs, in review order: changed, removed, added (largest group first,
    then by first name), and the fabric-wide files last."""
    groups: dict[str, Group] = {}
    for name, device in devices.items():
        key = json.dumps([device.status, device.files], sort_keys=True, default=str)
        if name == fabric:
            key = "\0" + fabric         # the fabric files are never grouped with a device
        if key in groups:
            groups[key].devices.append(name)
        else:
            groups[key] = Group(device.status, [name], device)
    return sorted(groups.values(), key=lambda g: (g.devices[0] == fabric, _STATUS_ORDER[g.status],
                                                  -len(g.devices), natural(g.devices[0])))


def natural(name: str) -> tuple:
    """spine-2 before spine-10."""
    return tuple((0, int(t), "") if t.isdigit() else (1, 0, t) for t in re.split(r"(\d+)", name))


_LAST_NUMBER = re.compile(r"^(.*?)(\d+)(\D*)$")


def abbreviate(names: Iterable[str]) -> list[str]:
    """Names as ranges on their last number, losslessly: spine-1..spine-16 -> `spine-[1-16]`,
    gpu065..gpu072 -> `gpu[065-072]` (a zero-padded number only joins numbers of its width)."""
    runs: dict[tuple[str, str, int], list[int]] = {}
    plain: list[str] = []
    for name in names:
        m = _LAST_NUMBER.match(name)
        if not m:
            plain.append(name)
            continue
        prefix, digits, suffix = m.groups()
        width = len(digits) if digits.startswith("0") and len(digits) > 1 else 0
        runs.setdefault((prefix, suffix, width), []).append(int(digits))
    out: list[tuple[tuple, str]] = [(natural(n), n) for n in plain]
    for (prefix, suffix, width), numbers in runs.items():
        numbers = sorted(set(numbers))
        spans: list[tuple[int, int]] = []
        for n in numbers:
            if spans and n == spans[-1][1] + 1:
                spans[-1] = (spans[-1][0], n)
            else:
                spans.append((n, n))

        def fmt(n: int, w: int = width) -> str:
            return str(n).zfill(w) if w else str(n)

        for lo, hi in spans:
            text = f"{prefix}{fmt(lo)}{suffix}" if lo == hi else f"{prefix}[{fmt(lo)}-{fmt(hi)}]{suffix}"
            out.append((natural(f"{prefix}{fmt(lo)}{suffix}"), text))
    return [text for _, text in sorted(out)]


def shape_of(group: Group) -> str:
    """What a group changes without the values: its status and, per file, each change's op and key
    path (a unified text diff and an added device's files count as they are). Spines that each
    get their own new leaf ports share a shape though every description differs."""
    files: dict[str, Any] = {}
    for name, f in group.sample.files.items():
        if group.status == "added":
            files[name] = f["status"]
        elif "changes" in f:
            files[name] = [(c["op"], c["path"]) for c in f["changes"]]
        else:
            files[name] = f["unified"]
    return json.dumps([group.status, files], sort_keys=True, default=str)


def families(groups: list[Group]) -> list[list[Group]]:
    """Groups of one shape together, in the order of their first group; the markdown shows one diff
    per family (the JSON keeps every group)."""
    out: dict[str, list[Group]] = {}
    for g in groups:
        out.setdefault(shape_of(g), []).append(g)
    return list(out.values())
