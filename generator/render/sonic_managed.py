"""The parts of a SONiC config_db that fabricgen manages: one definition for day-2 deploys
(target = running config with fabricgen's parts replaced), day-0 provisioning (rendered file
plus what only the device knows), the post-check and drift.

Why a definition at all: SONiC's `config replace FILE` (generic config updater, GCU) makes the
config exactly FILE, so a file without MGMT_INTERFACE, MGMT_PORT, MGMT_VRF_CONFIG, NTP, SYSLOG,
AAA, FEATURE, FLEX_COUNTER_TABLE, VERSIONS ... removes them, or GCU refuses
(SONiC_Generic_Config_Update_and_Rollback_Design §2.2.4; DEVICE_STATE.md). A running switch
is therefore changed with `config apply-patch` restricted to what fabricgen owns, and a
switch fresh from ZTP is provisioned with a full config_db and `config reload`.

Ownership, by config_db table:
- OWNED_TABLES are fabricgen's entirely (rows added, changed and removed): interfaces, BGP,
  QoS maps, scheduling, buffers, PFC watchdog, DEVICE_NEIGHBOR.
- PORT: the attributes fabricgen sets. The live ones (admin_status, description, fec, mtu,
  speed) may change on day 2; the layout ones (alias, index, lanes, subport) and the set of
  ports are a breakout, day-0 material.
- DEVICE_METADATA.localhost: the fields of METADATA_LIVE may change on day 2; those of
  METADATA_RELOAD take effect only after a reload or a container restart (DEVICE_STATE.md:
  hwsku changes the SAI profile, the routing mode is read when the bgp container starts).
  `mac` is the switch's own and never compared.
- With `management:` also NTP_SERVER, SYSLOG_SERVER and DNS_NAMESERVER (live), and
  MGMT_INTERFACE / MGMT_PORT / MGMT_VRF_CONFIG, which are compared but never patched live:
  changing eth0 under the deploy's own session is a provisioning step.
- Fields the image seeds from init_cfg.json (NTP global src_intf/vrf, BANNER_MESSAGE
  login/state, DEVICE_METADATA timezone: sonic-buildimage files/build_templates/
  init_cfg.json.j2) are fabricgen's only when the rendered file sets them: `config reload`
  merges init_cfg.json under the file (sonic-utilities config/main.py), so owning an unset
  one would make every provisioning look failed. A banner removed from the intent therefore
  stays on the switch until changed there.
- Everything else (FEATURE, FLEX_COUNTER_TABLE, AAA, VERSIONS, CRM, whatever ZTP or the
  operators added) is the switch's: carried over unchanged and never compared. FEATURE and
  FLEX_COUNTER_TABLE are rendered for day 0 only.
"""

from __future__ import annotations

from dataclasses import dataclass

from generator.common.errors import FabricgenError
from generator.common.json_text import copy_json

OWNED_TABLES: tuple[str, ...] = (
    "BGP_GLOBALS", "BGP_GLOBALS_AF", "BGP_GLOBALS_AF_NETWORK", "BGP_NEIGHBOR", "BGP_NEIGHBOR_AF",
    "BUFFER_PG", "BUFFER_POOL", "BUFFER_PORT_EGRESS_PROFILE_LIST", "BUFFER_PORT_INGRESS_PROFILE_LIST",
    "BUFFER_PROFILE", "BUFFER_QUEUE", "CABLE_LENGTH", "DEVICE_NEIGHBOR", "DSCP_TO_TC_MAP", "INTERFACE",
    "LOOPBACK_INTERFACE", "MAP_PFC_PRIORITY_TO_QUEUE", "PFC_PRIORITY_TO_PRIORITY_GROUP_MAP", "PFC_WD",
    "PORT_QOS_MAP", "QUEUE", "ROUTE_MAP", "ROUTE_MAP_SET", "SCHEDULER", "TC_TO_PRIORITY_GROUP_MAP",
    "TC_TO_QUEUE_MAP", "WRED_PROFILE",
)
PORT_LIVE: tuple[str, ...] = ("admin_status", "description", "fec", "mtu", "speed")
PORT_LAYOUT: tuple[str, ...] = ("alias", "index", "lanes", "subport")
METADATA_LIVE: tuple[str, ...] = ("bgp_asn", "default_bgp_status", "default_pfcwd_status", "hostname", "type")
METADATA_RELOAD: tuple[str, ...] = ("buffer_model", "docker_routing_config_mode", "frr_mgmt_framework_config",
                                    "hwsku", "platform")
MANAGEMENT_TABLES: tuple[str, ...] = ("DNS_NAMESERVER", "NTP_SERVER", "SYSLOG_SERVER")
# (table, row, fields) init_cfg.json seeds: owned only where the rendered file sets them
SEEDED: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("BANNER_MESSAGE", "global", ("login", "state")),
    ("DEVICE_METADATA", "localhost", ("timezone",)),
    ("NTP", "global", ("src_intf", "vrf")),
)
MGMT_PORT_TABLES: tuple[str, ...] = ("MGMT_INTERFACE", "MGMT_PORT", "MGMT_VRF_CONFIG")
# What only the device knows, kept from it at provisioning: its base MAC and the database
# schema version its image migrated to; FEATURE rows it has win over the rendered defaults
# (the image knows its own services: "kept at the platform's defaults").
DEVICE_METADATA_KEPT: tuple[str, ...] = ("mac",)
DEVICE_TABLES_KEPT: tuple[str, ...] = ("VERSIONS",)
DEVICE_ROWS_WIN: tuple[str, ...] = ("FEATURE",)

META = "DEVICE_METADATA"


class _AllFields(tuple):
    """Every field of a row (an `extra:` row is owned whole)."""


ALL_FIELDS = _AllFields()
LOCALHOST = "localhost"


class ProvisionError(FabricgenError, ValueError):
    """The device cannot take this day-0 config (wrong platform, no base MAC)."""


@dataclass(frozen=True)
class SonicManaged:
    management: bool
    # (table, row) -> fields of init_cfg-seeded rows that the rendered file sets (see SEEDED)
    seeded: tuple[tuple[str, str, tuple[str, ...]], ...] = ()
    # (table, row) the intent's `extra:` sets on this switch (render/extra.py): owned whole
    extra: tuple[tuple[str, str], ...] = ()

    @classmethod
    def of(cls, rendered: dict, management: bool, extra: tuple[tuple[str, str], ...] = ()) -> SonicManaged:
        """The managed set for one switch's rendered config_db."""
        seeded = []
        if management:
            for table, row, fields in SEEDED:
                have = ((rendered.get(table) or {}).get(row) or {})
                if any(f in have for f in fields):
                    seeded.append((table, row, fields))
        return cls(management, tuple(seeded), tuple(extra))

    @property
    def tables(self) -> tuple[str, ...]:
        return OWNED_TABLES + (MANAGEMENT_TABLES + MGMT_PORT_TABLES if self.management else ())

    def _rows(self) -> list[tuple[str, str, tuple[str, ...]]]:
        """Rows owned field by field (PORT: every row, "*")."""
        rows = [("PORT", "*", PORT_LIVE + PORT_LAYOUT), (META, LOCALHOST, METADATA_LIVE + METADATA_RELOAD)]
        rows += [(table, row, ALL_FIELDS) for table, row in self.extra if table not in self.tables]
        for table, row, fields in self.seeded:
            if table == META and row == LOCALHOST:
                rows[1] = (META, LOCALHOST, rows[1][2] + fields)
            else:
                rows.append((table, row, fields))
        return rows

    def owned(self, config: dict, *, shared: bool = False) -> dict:
        """The managed view of a config_db: what the post-check and drift compare. `shared`: the
        view's rows are config's own (a comparison, nothing modified), not copies."""
        out: dict = {}
        for table in self.tables:
            if config.get(table):
                out[table] = dict(config[table])      # the rows below may be set in it
        for table, row, fields in self._rows():
            rows = config.get(table) or {}
            for name in (rows if row == "*" else [row] if row in rows else []):
                if not isinstance(rows[name], dict):
                    continue
                picked = {f: v for f, v in rows[name].items() if fields is ALL_FIELDS or f in fields}
                if picked:
                    out.setdefault(table, {})[name] = picked
        # one copy of the whole view, not one per table and row: nothing of `config` is shared
        return out if shared else copy_json(out)

    def target(self, rendered: dict, running: dict) -> dict:
        """Day 2: the running config with every managed part taken from the rendered file.
        The patch from running to this target touches nothing fabricgen does not own."""
        target = copy_json(running)
        for table in self.tables:
            if rendered.get(table):
                target[table] = copy_json(rendered[table])
            else:
                target.pop(table, None)
        for table, row, fields in self._rows():
            want = rendered.get(table) or {}
            have = target.get(table) or {}
            if row == "*":
                # the set of rows is the rendered one (a PORT added or removed is a breakout)
                names = list(want)
                rows = {}
            else:
                names = [row]
                rows = {k: v for k, v in have.items() if k != row}
            for name in names:
                kept = {f: v for f, v in (have.get(name) or {}).items() if fields is not ALL_FIELDS and f not in fields}
                mine = copy_json({f: v for f, v in (want.get(name) or {}).items()
                                  if fields is ALL_FIELDS or f in fields})
                if kept or mine:
                    rows[name] = {**kept, **mine}
            if rows:
                target[table] = rows
            else:
                target.pop(table, None)
        # GCU refuses a target with an empty table (generic_updater.py: "tables without any fields")
        return {t: rows for t, rows in target.items() if rows}


def provision_config(rendered: dict, device: dict, *, management: bool) -> tuple[dict, list[str]]:
    """Day 0: the rendered full config_db plus what only the device knows, and notes on what was
    kept. `device` is the switch's running config_db (read before the reload). Without
    `management:` the switch's own NTP, syslog and DNS tables are kept too."""
    have_meta = (device.get(META) or {}).get(LOCALHOST) or {}
    want_meta = (rendered.get(META) or {}).get(LOCALHOST) or {}
    platform = have_meta.get("platform")
    if platform and want_meta.get("platform") and platform != want_meta["platform"]:
        raise ProvisionError(f"the switch reports platform {platform}, the plan's model renders "
                             f"{want_meta['platform']}: check switches.*.model in the intent")
    if not have_meta.get("mac"):
        raise ProvisionError("the switch's DEVICE_METADATA has no base MAC (sonic-cfggen -d -v "
                             "DEVICE_METADATA.localhost.mac is empty); finish its first boot, then provision")
    config = copy_json(rendered)
    notes: list[str] = []
    meta = config.setdefault(META, {}).setdefault(LOCALHOST, {})
    for field in DEVICE_METADATA_KEPT:
        meta[field] = have_meta[field] if field in have_meta else meta.get(field)
    for field, value in have_meta.items():
        meta.setdefault(field, value)             # e.g. synchronous_mode: the image's own
    for table in DEVICE_TABLES_KEPT:
        if device.get(table):
            config[table] = copy_json(device[table])
    for table in DEVICE_ROWS_WIN:
        rows = device.get(table) or {}
        if rows:
            config[table] = {**config.get(table, {}), **copy_json(rows)}
            notes.append(f"kept the switch's {table} rows")
    owned = SonicManaged(management).tables + MGMT_PORT_TABLES + ("PORT", META)
    # init_cfg-seeded rows (NTP global, BANNER_MESSAGE global): the switch's fields under ours
    for table, row, _fields in SEEDED:
        have = (device.get(table) or {}).get(row)
        if table != META and isinstance(have, dict) and row in (config.get(table) or {}):
            config[table][row] = {**copy_json(have), **config[table][row]}
    extra = sorted(t for t in device if t not in config and t not in owned and device[t])
    for table in extra:
        config[table] = copy_json(device[table])
    if extra:
        notes.append(f"kept the switch's own {', '.join(extra)}")
    config = {t: rows for t, rows in config.items() if rows}
    return config, notes


__all__ = ["MANAGEMENT_TABLES", "METADATA_RELOAD", "SEEDED", "MGMT_PORT_TABLES", "OWNED_TABLES", "PORT_LAYOUT", "PORT_LIVE", "ProvisionError",
           "SonicManaged", "provision_config"]
