"""What a day-2 deploy may change on a running SONiC switch, checked before anything is sent.

A day-2 deploy is `config apply-patch` (RFC 6902) scoped to fabricgen's tables
(generator/render/sonic_managed.py). Some changes cannot be applied to a live switch:
- DEVICE_METADATA hwsku, platform, buffer_model and the routing mode
  (docker_routing_config_mode, frr_mgmt_framework_config) take effect only after
  `config reload` or a container restart (DEVICE_STATE.md: the SAI profile follows the hwsku;
  the bgp container picks frrcfgd vs bgpcfgd when it starts);
- the PORT layout (ports added or removed, alias/index/lanes/subport): a breakout;
- MGMT_INTERFACE / MGMT_PORT / MGMT_VRF_CONFIG: eth0 under the deploy's own SSH session;
- buffer and PFC-watchdog changes beyond the field/operation allow-list that GCU enforces on
  Mellanox Spectrum SKUs (sonic-utilities generic_config_updater/field_operation_validators.py,
  gcu_field_operation_validators.conf.json; the list below is the 2024-era one that
  DEVICE_STATE.md records; newer sonic-utilities refuse every BUFFER_POOL change).
Such a patch is refused as a whole with the advice to provision (`fabricgen deploy
--provision`: full config_db + `config reload`), so nothing is half-applied.
"""

from __future__ import annotations

import json

from jsonpointer import JsonPointer

from generator.deploy.waves import natural_key
from generator.render.sonic_managed import METADATA_RELOAD, MGMT_PORT_TABLES, PORT_LAYOUT

PROVISION_ADVICE = "not a live change on SONiC, run `fabricgen deploy --provision` (full config_db + config reload)"

# (row, field) pairs GCU lets `replace` change live
_BUFFER_POOL = {("ingress_lossless_pool", "size"), ("ingress_lossless_pool", "xoff"), ("egress_lossy_pool", "size")}
_BUFFER_PROFILE_FIELDS = {"dynamic_th", "xoff"}
_WRED = {("AZURE_LOSSLESS", "green_min_threshold"), ("AZURE_LOSSLESS", "green_max_threshold"),
         ("AZURE_LOSSLESS", "green_drop_probability")}
# GCU strips path parts with digits (the port) and matches what remains, lowercased
_PFC_WD_FIELDS = {"restoration_time", "detection_time", "action", "global/poll_interval", ""}


def _expand(ops: list[dict], running: dict) -> list[dict]:
    """move/copy as the remove/add they amount to (jsonpatch.make_patch emits moves of equal values)."""
    out = []
    for op in ops:
        if op["op"] == "move":
            value = JsonPointer(op["from"]).resolve(running, None)
            out += [{"op": "remove", "path": op["from"]}, {"op": "add", "path": op["path"], "value": value}]
        elif op["op"] == "copy":
            out.append({"op": "add", "path": op["path"], "value": JsonPointer(op["from"]).resolve(running, None)})
        elif op["op"] != "test":
            out.append(op)
    return out


def _pfc_wd_allowed(op: dict, parts: list[str]) -> bool:
    cleaned = [p for p in parts[1:] if not any(c.isdigit() for c in p)]
    base = "/".join(cleaned).lower()
    value = op.get("value")
    if op["op"] != "remove" and isinstance(value, dict):
        names = [f"{base}/{k}" if base else k for k in value]
    else:
        names = [base]
    return all(n in _PFC_WD_FIELDS for n in names)


# Why a change is not live, in the order a refusal lists them.
RELOAD_ONLY = "DEVICE_METADATA fields that take effect only after a reload"
MANAGEMENT = "eth0 (management interface) changes under the deploy's own session"
BREAKOUT = "PORT layout changes (a breakout: ports added or removed, lanes/alias/index/subport)"
POOL = "BUFFER_POOL changes outside GCU's allow-list"
PROFILE = "BUFFER_PROFILE changes outside GCU's allow-list (profiles are added or removed only at day 0)"
WRED = "WRED_PROFILE changes outside GCU's allow-list"
PFC_WD = "PFC_WD changes outside GCU's allow-list"
WHOLE = "a patch of the whole config_db"
_ORDER = (RELOAD_ONLY, MANAGEMENT, BREAKOUT, POOL, PROFILE, WRED, PFC_WD, WHOLE)


def _refusal(op: dict, running: dict) -> tuple[str, str] | None:
    """(why, what) when the op is not a live change."""
    parts = JsonPointer(op["path"]).parts
    if not parts:
        return WHOLE, op["op"]
    table = parts[0]
    where = "/".join(parts) + ("" if op["op"] == "replace" else f" ({op['op']})")
    if table == "DEVICE_METADATA":
        if len(parts) < 2:
            return RELOAD_ONLY, "DEVICE_METADATA replaced as a whole"
        old = (running.get("DEVICE_METADATA") or {}).get(parts[1]) or {}
        if len(parts) == 2:
            new = op.get("value") if isinstance(op.get("value"), dict) else {}
            touched = set(new) | (set(old) if op["op"] != "add" else set())
        else:
            new = {parts[2]: op.get("value")}
            touched = {parts[2]}
        changed = [f for f in sorted(touched & set(METADATA_RELOAD)) if old.get(f) != new.get(f)]
        if changed:
            return RELOAD_ONLY, ", ".join(f"{f} {old.get(f)!r} -> {new.get(f)!r}" for f in changed)
        return None
    if table in MGMT_PORT_TABLES:
        return MANAGEMENT, where
    if table == "PORT":
        return (BREAKOUT, where) if len(parts) <= 2 or parts[2] in PORT_LAYOUT else None
    if table == "BUFFER_POOL":
        ok = op["op"] == "replace" and len(parts) == 3 and (parts[1], parts[2]) in _BUFFER_POOL
        return None if ok else (POOL, where)
    if table == "BUFFER_PROFILE":
        # The 2024 validator drops path parts holding a digit and then wants an exact field
        # match: `dynamic_th`/`xoff` pass on pg_lossless_400000_5m_profile, not on
        # egress_lossless_profile (whose name stays in the path).
        ok = (op["op"] == "replace" and len(parts) == 3 and parts[2] in _BUFFER_PROFILE_FIELDS
              and any(c.isdigit() for c in parts[1]))
        return None if ok else (PROFILE, where)
    if table == "WRED_PROFILE":
        ok = op["op"] == "replace" and len(parts) == 3 and (parts[1], parts[2]) in _WRED
        return None if ok else (WRED, where)
    if table == "PFC_WD":
        return None if len(parts) >= 2 and _pfc_wd_allowed(op, parts) else (PFC_WD, where)
    return None


def check_patch(ops: list[dict], running: dict, shown: int = 4) -> list[str]:
    """Why a day-2 patch cannot be applied live, one line per reason with the first `shown`
    places ([] when every op can)."""
    found: dict[str, list[str]] = {}
    for op in _expand(ops, running):
        hit = _refusal(op, running)
        if hit and hit[1] not in found.setdefault(hit[0], []):
            found[hit[0]].append(hit[1])
    lines = []
    for why in _ORDER:
        places = sorted(found.get(why, ()), key=natural_key)
        if places:
            more = f" and {len(places) - shown} more" if len(places) > shown else ""
            lines.append(f"{why}: {', '.join(places[:shown])}{more}")
    return lines


def refusal_line(refusals: list[str]) -> str:
    # the advice first: reports shorten long messages
    return f"{PROVISION_ADVICE}: {'; '.join(refusals)}"


def patch_text(ops: list[dict]) -> str:
    """One line per op, for `deploy --dry-run` and the diff-line count."""
    lines = []
    for op in ops:
        value = "" if op["op"] == "remove" else " " + json.dumps(op.get("value"), sort_keys=True)
        source = f" from {op['from']}" if "from" in op else ""
        lines.append(f"{op['op']} {op['path']}{source}{value}")
    return "\n".join(lines)




def provision_refusal(candidate: dict, running: dict) -> str | None:
    """Day 0 may set eth0's address where ZTP left it on DHCP, but not move a static one: the
    post-check logs in at the address the deploy reached the switch on."""
    have = sorted(running.get("MGMT_INTERFACE") or {})
    want = sorted(candidate.get("MGMT_INTERFACE") or {})
    if have and have != want:
        return (f"provisioning would move eth0 from {', '.join(k.split('|', 1)[-1] for k in have)} to "
                f"{', '.join(k.split('|', 1)[-1] for k in want)} and lose this session: set the switch's "
                "address to the plan's on the console (or in DHCP/ZTP) first")
    return None


__all__ = ["PROVISION_ADVICE", "check_patch", "patch_text", "provision_refusal", "refusal_line"]
