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

from generator.render.sonic_managed import METADATA_RELOAD, MGMT_PORT_TABLES, PORT_LAYOUT

PROVISION_ADVICE = "not a live change on SONiC: run `fabricgen deploy --provision` (full config_db + config reload)"

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


def _refusal(op: dict, running: dict) -> str | None:
    parts = JsonPointer(op["path"]).parts
    table = parts[0] if parts else ""
    where = "/".join(parts)
    if not parts:
        return "a patch of the whole config_db"
    if table == "DEVICE_METADATA":
        if len(parts) < 2:
            return "DEVICE_METADATA replaced as a whole"
        old = (running.get("DEVICE_METADATA") or {}).get(parts[1]) or {}
        if len(parts) == 2:
            new = op.get("value") if isinstance(op.get("value"), dict) else {}
            touched = set(new) | (set(old) if op["op"] != "add" else set())
        else:
            new = {parts[2]: op.get("value")}
            touched = {parts[2]}
        changed = [f for f in sorted(touched & set(METADATA_RELOAD)) if old.get(f) != new.get(f)]
        if changed:
            shown = ", ".join(f"{f} {old.get(f)!r} -> {new.get(f)!r}" for f in changed)
            return f"DEVICE_METADATA {shown} takes effect only after a reload"
        return None
    if table in MGMT_PORT_TABLES:
        return f"{where}: a management interface change under the deploy's own session"
    if table == "PORT":
        if len(parts) <= 2:
            return f"{where}: ports added or removed (a breakout)"
        if parts[2] in PORT_LAYOUT:
            return f"{where}: a port layout change (a breakout)"
        return None
    if table == "BUFFER_POOL":
        if op["op"] == "replace" and len(parts) == 3 and (parts[1], parts[2]) in _BUFFER_POOL:
            return None
        return f"{where} ({op['op']}): a buffer pool change outside GCU's allow-list"
    if table == "BUFFER_PROFILE":
        if op["op"] == "replace" and len(parts) == 3 and parts[2] in _BUFFER_PROFILE_FIELDS:
            return None
        return f"{where} ({op['op']}): a buffer profile change outside GCU's allow-list (profiles are added " \
               "or removed only at day 0)"
    if table == "WRED_PROFILE":
        if op["op"] == "replace" and len(parts) == 3 and (parts[1], parts[2]) in _WRED:
            return None
        return f"{where} ({op['op']}): a WRED profile change outside GCU's allow-list"
    if table == "PFC_WD":
        if len(parts) >= 2 and _pfc_wd_allowed(op, parts):
            return None
        return f"{where} ({op['op']}): a PFC watchdog change outside GCU's allow-list"
    return None


def check_patch(ops: list[dict], running: dict) -> list[str]:
    """Why each op of a day-2 patch cannot be applied live ([] when all can)."""
    refusals: list[str] = []
    for op in _expand(ops, running):
        reason = _refusal(op, running)
        if reason and reason not in refusals:
            refusals.append(reason)
    return refusals


def refusal_line(refusals: list[str], limit: int = 3) -> str:
    shown = "; ".join(refusals[:limit]) + (f"; and {len(refusals) - limit} more" if len(refusals) > limit else "")
    return f"{shown}: {PROVISION_ADVICE}"


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
