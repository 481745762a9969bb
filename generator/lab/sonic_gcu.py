"""The generic config updater (GCU) of the lab's SONiC: what `config apply-patch`, `config replace`
and `config rollback` accept, and the running config they leave.

Follows sonic-utilities generic_config_updater/ of the switch's own release: the field/operation
allow-list is the one of the lab switch's branch (generator/data/sonic_gcu_releases.yaml names the
commit per release, 202311..202511), as a real switch runs the validator its image ships.
PatchApplier.apply simulates the patch on the running config, then
ConfigWrapper.validate_field_operation checks the diff from running to target
(jsonpatch.JsonPatch.from_diff, so a patch's own shape does not matter, only what it changes),
then empty tables are refused and the target is validated against the YANG models (when the lab
has them). ConfigReplacer.replace (replace, rollback) is apply of jsonpatch.make_patch(running, target).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from functools import cache
from pathlib import Path

import jsonpatch
import jsonpointer
import yaml

DATA = Path(__file__).with_name("data") / "gcu_allowlist.yaml"
RELEASES = Path(__file__).resolve().parents[1] / "data" / "sonic_gcu_releases.yaml"
VALIDATORS = "generic_config_updater.field_operation_validators"
PORT_VALIDATOR = f"{VALIDATORS}.port_config_update_validator"
# A YANG check: target config -> None or GCU's error text. None when the lab has no models.
YangCheck = Callable[[dict], "str | None"]


class GcuError(Exception):
    """GCU refused; the message is what `config apply-patch` prints after 'Failed to apply patch due to: '."""


@cache
def _data() -> dict:
    return yaml.safe_load(DATA.read_text(encoding="utf-8"))


@cache
def _releases() -> dict:
    return yaml.safe_load(RELEASES.read_text(encoding="utf-8"))


def branch_version(build_version: str) -> str | None:
    """The 8-digit branch date in a build version ("20231110.18" -> "20231110"), as GCU finds it."""
    found = None
    for part in str(build_version).split("."):
        if re.fullmatch(r"\d{8}", part):
            found = part
    return found


def release_of(build_version: str) -> str | None:
    """The release branch of a build: "202411" of "202411", "202411.1" or "SONiC.202411.12"; the
    month of a dated build ("20231110.18" -> "202311"); None for master and private builds."""
    for part in str(build_version).split("."):
        if re.fullmatch(r"\d{6}", part):
            return part
    date = branch_version(build_version)
    return date[:6] if date else None


def gcu_release(build_version: str) -> str:
    """The release whose allow-list the lab switch enforces. Its own when the table lists it; else
    the newest listed release at or before it (the oldest for anything older; the newest for master
    and private builds). A lab switch must answer something, and an unlisted release most likely
    ships its predecessor's file; the deploy guard refuses an unlisted release instead (sonic_guard.py)."""
    known = sorted(_releases()["releases"])
    release = release_of(build_version)
    if release is None:
        return known[-1]
    return max((r for r in known if r <= release), default=known[0])


def _rules(build_version: str) -> dict:
    return _releases()["releases"][gcu_release(build_version)]


def asic_of(hwsku: str, build_version: str = "") -> str:
    """field_operation_validators.get_asic_name for a Mellanox switch on that release: spc1..spc5 or "unknown"."""
    for asic, skus in _rules(build_version)["mellanox_asics"].items():
        if hwsku.lower() in (s.lower() for s in skus):
            return asic
    return "unknown"


def patch_fields(element: dict, drop_digit_parts: bool = True) -> list[str]:
    """The fields an operation touches, as the validators name them (see sonic_gcu_releases.yaml)."""
    parts = jsonpointer.JsonPointer(element["path"]).parts[1:]
    if drop_digit_parts:
        parts = [p for p in parts if not any(c.isdigit() for c in p)]
    field = "/".join(parts).lower()
    value = element.get("value")
    if isinstance(value, dict):
        return [f"{field}/{key}" if field else key for key in value]
    return [field]


def _matches(field: str, listed: str, how: str) -> bool:
    # rdma_config_update_validator_common: fields_match_exact / fields_match_endswith (202505+);
    # the 202311..202411 validator compares exactly
    return field == listed if how == "exact" else field.split("/")[-1] == listed


def validator_of(table: str, build_version: str = "") -> str | None:
    """The validator GCU of that release runs on the table; None: the table is not field-checked."""
    spec = _rules(build_version)["tables"].get(table)
    return spec["validator"] if spec else None


def validator_allows(element: dict, table: str, asic: str, build_version: str = "") -> bool:
    """The table's validator of that release (rdma_config_update_validator, its 202505
    wred_profile_ and 202511 buffer_profile_ variants): every field listed for the operation and ASIC."""
    spec = _rules(build_version)["tables"][table]
    how = _releases()["validators"][spec["validator"]]
    if (len(jsonpointer.JsonPointer(element["path"]).parts) == 2
            and element["op"] in how.get("row_operations", ())):
        return True  # 202511 buffer_profile_config_update_validator: whole profiles, before the ASIC
    if asic == "unknown":
        return False
    branch = branch_version(build_version)
    for field in patch_fields(element, how["drop_digit_parts"]):
        scenario = next((s for s in spec["scenarios"].values()
                         if any(_matches(field, listed, how["match"]) for listed in s["fields"])), None)
        if scenario is None:
            return False
        since = scenario["platforms"].get(asic)
        if not since:  # 2024 GCU: a KeyError or "", 2025: .get() - either way not allowed
            return False
        if element["op"] not in scenario["operations"]:
            return False
        if branch is not None and branch < since:
            return False
    return True


def port_allowed(element: dict) -> bool:
    """port_config_update_validator: a fec value must be one the port supports (no STATE_DB: defaults)."""
    if element["op"] == "remove":
        return True
    supported = _data()["port_supported_fecs"]
    value = element.get("value")
    fecs: list = []
    if element["path"].endswith("/fec"):
        fecs.append(value)
    elif isinstance(value, dict):
        if "fec" in value:
            fecs.append(value["fec"])
        else:
            fecs.extend(row["fec"] for row in value.values() if isinstance(row, dict) and "fec" in row)
    return all(str(f).strip() in supported for f in fecs)


def _table_of(path: str) -> str:
    match = re.search(r"/([^/]+)(/|$)", path)  # gu_common.py: the table of /PFC_WD/GLOBAL is PFC_WD
    if match is None:
        raise GcuError(f"Invalid jsonpatch path: {path}")
    return match.group(1)


def validate_field_operation(old: dict, target: dict, build_version: str = "") -> None:
    """gu_common.ConfigWrapper.validate_field_operation of the build's release, plus the lab's
    reload-only metadata rule."""
    diff = list(jsonpatch.JsonPatch.from_diff(old, target))
    for operation, paths in _data()["illegal_operations"].items():
        for path in paths:
            if any(op["op"] == operation and op["path"] == path for op in diff):
                raise GcuError(f"Given patch operation is invalid. Operation: {operation} is illegal on field: {path}")
    hwsku = str(((old.get("DEVICE_METADATA") or {}).get("localhost") or {}).get("hwsku", ""))
    asic = asic_of(hwsku, build_version)
    for element in diff:
        table = _table_of(element["path"])
        validator = validator_of(table, build_version)
        if validator and not validator_allows(element, table, asic, build_version):
            raise GcuError(f"Modification of {table} table is illegal- validating function {VALIDATORS}.{validator} "
                           "returned False")
        if table == "PORT" and not port_allowed(element):
            raise GcuError(f"Modification of PORT table is illegal- validating function {PORT_VALIDATOR} "
                           "returned False")
    _check_reload_only(old, target)


def _check_reload_only(old: dict, target: dict) -> None:
    before = ((old.get("DEVICE_METADATA") or {}).get("localhost") or {})
    after = ((target.get("DEVICE_METADATA") or {}).get("localhost") or {})
    for field in _data()["reload_only_metadata"]:
        if before.get(field) != after.get(field):
            raise GcuError(f"Modification of DEVICE_METADATA field {field} "
                           f"({before.get(field)!r} -> {after.get(field)!r}) only takes effect after "
                           "'config reload'; it cannot be applied to a running switch")


def empty_tables(config: dict) -> list[str]:
    return sorted(t for t, rows in config.items() if not rows)


def apply(running: dict, ops: object, *, build_version: str = "", yang: YangCheck | None = None) -> dict:
    """PatchApplier.apply: the config `ops` (an RFC 6902 patch) leaves, or GcuError; running is untouched."""
    if not isinstance(ops, list) or not all(isinstance(op, dict) for op in ops):
        raise GcuError("a JSON patch must be a list of operations")
    try:
        patch = jsonpatch.JsonPatch(ops)
        target = patch.apply(copy.deepcopy(running))
    except (jsonpatch.JsonPatchException, jsonpointer.JsonPointerException, TypeError, KeyError) as exc:
        raise GcuError(str(exc) or type(exc).__name__) from None
    if not isinstance(target, dict) or not all(isinstance(rows, dict) for rows in target.values()):
        raise GcuError("the patched config must map table names to objects")
    validate_field_operation(running, target, build_version)
    empty = empty_tables(target)
    if empty:
        raise GcuError("given patch is not valid because it will result in empty tables which is not allowed "
                       f"in ConfigDb. Table{'s' if len(empty) != 1 else ''}: {', '.join(empty)}")
    if yang is not None:
        error = yang(target)
        if error:
            raise GcuError(error if error.startswith("Given patch") else
                           f"Given patch will produce invalid config. Error: {error}")
    return target


def replace(running: dict, target: dict, *, build_version: str = "", yang: YangCheck | None = None) -> dict:
    """ConfigReplacer.replace: the patch from running to target, applied as apply-patch applies it."""
    ops = list(jsonpatch.make_patch(running, target))
    return apply(running, ops, build_version=build_version, yang=yang)


# --- YANG ------------------------------------------------------------------------------------
# GCU validates the target against the image's YANG models (StrictPatchSorter.sort). The lab uses
# the sonic-yang models next to the repository (or FABRICGEN_LAB_SONIC_YANG); without them or
# without libyang it skips this one check and says so once in the lab log.
YANG_ENV = "FABRICGEN_LAB_SONIC_YANG"
_NO_MODEL = "no YANG model for table "


@cache
def _validator():
    import logging
    import os

    directory = Path(os.environ.get(YANG_ENV) or Path(__file__).resolve().parents[2].parent / "shared" / "sonic-yang")
    try:
        from generator.render.sonic_yang import SonicYangUnavailable, YangValidator

        return YangValidator(directory)
    except (ImportError, SonicYangUnavailable, OSError) as exc:
        logging.getLogger("generator.lab").warning(
            "SONiC lab: no YANG validation in apply-patch/replace (%s: %s)", directory, exc)
        return None


def yang_check(old: dict) -> YangCheck | None:
    """The YANG step of GCU for a patch on `old`; None when the lab has no models."""
    validator = _validator()
    if validator is None:
        return None

    def check(target: dict) -> str | None:
        issues = validator.validate(target, "localhost")
        changed = {t for t in set(old) | set(target) if old.get(t) != target.get(t)}
        unmodelled = sorted({i.table for i in issues if i.message.startswith(_NO_MODEL)})
        if any(t in changed for t in unmodelled):
            # StrictPatchSorter: tables without models may exist, but a patch may not change them
            return "Given patch is not valid because it has changes to tables without YANG models"
        real = [i for i in issues if not i.message.startswith(_NO_MODEL)]
        return "; ".join(str(i) for i in real[:3]) or None

    return check
