"""What a day-2 deploy may change on a running SONiC switch, checked before anything is sent.

A day-2 deploy is `config apply-patch` (RFC 6902) scoped to fabricgen's tables
(generator/render/sonic_managed.py). Some changes cannot be applied to a live switch:
- DEVICE_METADATA hwsku, platform, buffer_model and the routing mode
  (docker_routing_config_mode, frr_mgmt_framework_config) take effect only after
  `config reload` or a container restart (DEVICE_STATE.md: the SAI profile follows the hwsku;
  the bgp container picks frrcfgd vs bgpcfgd when it starts);
- the PORT layout (ports added or removed, alias/index/lanes/subport): a breakout;
- MGMT_INTERFACE / MGMT_PORT / MGMT_VRF_CONFIG: eth0 under the deploy's own SSH session;
- buffer, WRED and PFC-watchdog changes beyond the field/operation allow-list that GCU enforces
  on Mellanox Spectrum SKUs. That list differs by release (DEVICE_STATE.md): the guard judges a
  patch by the list of the switch's release, the intent's switch_os.version, which the release
  gate (release_gate.py) has already matched against `show version`. The lists, per release
  with their sonic-utilities commits, are generator/data/sonic_gcu_releases.yaml (from each
  branch's generic_config_updater/gcu_field_operation_validators.conf.json and
  field_operation_validators.py).
Such a patch is refused as a whole with the advice to provision (`fabricgen deploy
--provision`: full config_db + `config reload`), so nothing is half-applied.
"""

from __future__ import annotations

from jsonpointer import JsonPointer

from generator.common.release_catalog import sonic_gcu_catalog, sonic_releases
from generator.deploy.waves import natural_key
from generator.render.sonic_managed import METADATA_RELOAD, MGMT_PORT_TABLES, PORT_LAYOUT

PROVISION_ADVICE = "not a live change on SONiC, run `fabricgen deploy --provision` (full config_db + config reload)"


def gcu_releases() -> list[str]:
    """The SONiC releases whose GCU allow-list fabricgen knows, oldest first."""
    return list(sonic_releases())


# Tables some known release's GCU field-checks, in the order a refusal lists them.
GCU_TABLES = ("BUFFER_POOL", "BUFFER_PROFILE", "WRED_PROFILE", "PFC_WD")


def spectrum(asic: str) -> str:
    """spc4 -> Spectrum-4 (GCU's ASIC names are NVIDIA's Spectrum generations)."""
    generation = asic.removeprefix("spc")
    return "Spectrum" if generation == "1" else f"Spectrum-{generation}"


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


def _fields(op: dict, parts: list[str], drop_digit_parts: bool) -> list[str]:
    """The fields GCU's validator names for an op (field_operation_validators.py, every branch): the
    path after the table, lowercased, without parts holding a digit when the validator drops them
    (ports, pg_lossless_400000_5m_profile); an object value is one field per key."""
    rest = [p for p in parts[1:] if not (drop_digit_parts and any(c.isdigit() for c in p))]
    base = "/".join(rest).lower()
    value = op.get("value")
    if isinstance(value, dict):
        return [f"{base}/{k}" if base else k for k in value]
    return [base]


def _listed(field: str, listed: str, match: str) -> bool:
    # exact (rdma_config_update_validator) or the last part (202505 wred_profile_ and 202511
    # buffer_profile_config_update_validator: fields_match_endswith)
    return field == listed if match == "exact" else field.split("/")[-1] == listed


def _gcu_refusal(op: dict, parts: list[str], release: str, hwsku: str) -> str | None:
    """Why GCU of `release` refuses the op on a switch of `hwsku` (None: it takes it). The branch-date
    check GCU adds for dated builds is left out: every Spectrum date in the table predates the
    branch that lists it (sonic_gcu_releases.yaml)."""
    table = parts[0]
    data = sonic_gcu_catalog()
    rules = data["releases"].get(release)
    if rules is None:
        # An unknown release is refused, not judged by the newest list: between known releases the
        # list moved both ways (202511 dropped every BUFFER_POOL and WRED rule 202505 had, and
        # added whole-profile operations), so no known list predicts another release. A refusal
        # here costs a provision and names the fix; a wrong pass fails in GCU on the switch, in the
        # middle of a wave - what keying the list by release is for.
        if table not in GCU_TABLES:
            return None
        return (f"fabricgen has no GCU allow-list for SONiC {release} (it knows {', '.join(gcu_releases())}; "
                f"add the release to generator/data/sonic_gcu_releases.yaml): {table} changes")
    spec = rules["tables"].get(table)
    if spec is None:
        return None  # not field-checked on this release (202511: WRED_PROFILE)
    how = data["validators"][spec["validator"]]
    if len(parts) == 2 and op["op"] in how.get("row_operations", ()):
        return None  # 202511: whole profiles may be added, removed, replaced
    asic = next((a for a, skus in rules["mellanox_asics"].items()
                 if hwsku.lower() in (s.lower() for s in skus)), None)
    if asic is None:
        return (f"GCU on SONiC {release} allows no {table} change on hwsku {hwsku or '(none)'!r} "
                "(no Spectrum ASIC in its list)")
    scenarios = [s for s in spec["scenarios"].values() if s["platforms"].get(asic)]
    if not any(s["fields"] for s in scenarios):
        return f"GCU on SONiC {release} allows no {table} change on {spectrum(asic)}"
    for field in _fields(op, parts, how["drop_digit_parts"]):
        # GCU takes the first scenario listing the field, whatever its platforms
        scenario = next((s for s in spec["scenarios"].values()
                         if any(_listed(field, f, how["match"]) for f in s["fields"])), None)
        if scenario is None or not scenario["platforms"].get(asic) or op["op"] not in scenario["operations"]:
            day0 = (" (profiles are added or removed only at day 0)"
                    if table == "BUFFER_PROFILE" and not how.get("row_operations") else "")
            return f"{table} changes outside GCU's allow-list on SONiC {release} ({spectrum(asic)}){day0}"
    return None


# Why a change is not live, in the order a refusal lists them (GCU's reasons sit between BREAKOUT
# and WHOLE, by table).
RELOAD_ONLY = "DEVICE_METADATA fields that take effect only after a reload"
MANAGEMENT = "eth0 (management interface) changes under the deploy's own session"
BREAKOUT = "PORT layout changes (a breakout: ports added or removed, lanes/alias/index/subport)"
WHOLE = "a patch of the whole config_db"


def _refusal(op: dict, running: dict, release: str) -> tuple[int, str, str] | None:
    """(rank, why, what) when the op is not a live change."""
    parts = JsonPointer(op["path"]).parts
    if not parts:
        return 9, WHOLE, op["op"]
    table = parts[0]
    where = "/".join(parts) + ("" if op["op"] == "replace" else f" ({op['op']})")
    if table == "DEVICE_METADATA":
        if len(parts) < 2:
            return 0, RELOAD_ONLY, "DEVICE_METADATA replaced as a whole"
        old = (running.get("DEVICE_METADATA") or {}).get(parts[1]) or {}
        if len(parts) == 2:
            new = op.get("value") if isinstance(op.get("value"), dict) else {}
            touched = set(new) | (set(old) if op["op"] != "add" else set())
        else:
            new = {parts[2]: op.get("value")}
            touched = {parts[2]}
        changed = [f for f in sorted(touched & set(METADATA_RELOAD)) if old.get(f) != new.get(f)]
        if changed:
            return 0, RELOAD_ONLY, ", ".join(f"{f} {old.get(f)!r} -> {new.get(f)!r}" for f in changed)
        return None
    if table in MGMT_PORT_TABLES:
        return 1, MANAGEMENT, where
    if table == "PORT":
        return (2, BREAKOUT, where) if len(parts) <= 2 or parts[2] in PORT_LAYOUT else None
    # GCU reads the hwsku of the running config (get_asic_name: sonic-cfggen -d)
    hwsku = str(((running.get("DEVICE_METADATA") or {}).get("localhost") or {}).get("hwsku") or "")
    why = _gcu_refusal(op, parts, release, hwsku)
    if why:
        rank = 3 + GCU_TABLES.index(table) if table in GCU_TABLES else 8
        return rank, why, where
    return None


def check_patch(ops: list[dict], running: dict, release: str, shown: int = 4) -> list[str]:
    """Why a day-2 patch cannot be applied live on a switch of SONiC `release` ("202411"), one line
    per reason with the first `shown` places ([] when every op can)."""
    found: dict[tuple[int, str], list[str]] = {}
    for op in _expand(ops, running):
        hit = _refusal(op, running, release)
        if hit and hit[2] not in found.setdefault(hit[:2], []):
            found[hit[:2]].append(hit[2])
    lines = []
    for why in sorted(found):
        places = sorted(found[why], key=natural_key)
        more = f" and {len(places) - shown} more" if len(places) > shown else ""
        lines.append(f"{why[1]}: {', '.join(places[:shown])}{more}")
    return lines


def refusal_line(refusals: list[str]) -> str:
    # the advice first: reports shorten long messages
    return f"{PROVISION_ADVICE}: {'; '.join(refusals)}"


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


__all__ = ["GCU_TABLES", "PROVISION_ADVICE", "check_patch", "gcu_releases", "provision_refusal", "refusal_line"]
