"""What a simulated SONiC switch holds in CONFIG_DB when it leaves the factory, and what keeps it reachable.

The data and its upstream sources are in data/sonic_factory.yaml: init_cfg.json's tables, the
default SKU's PORT layout (sonic-cfggen -H -k <default SKU> --preset t1), DEVICE_METADATA with
the platform's default SKU and the switch's own base MAC, MGMT_PORT eth0 and, when eth0 is static,
MGMT_INTERFACE `eth0|A/L` with its gateway. VERSIONS is what db_migrator leaves after the first
`config reload`.
"""

from __future__ import annotations

import copy
import hashlib
import ipaddress
import re
from functools import cache
from pathlib import Path

import yaml

from generator.lab.factory import Management
from generator.plan.sonic_catalog import sonic_platform

DATA = Path(__file__).with_name("data") / "sonic_factory.yaml"
MGMT_PORT = "eth0"


@cache
def _data() -> dict:
    return yaml.safe_load(DATA.read_text(encoding="utf-8"))


def release(version: str) -> str:
    """"202411" of "202411", "202411.1" or "SONiC.202411.12"."""
    for part in str(version).split("."):
        if part.isdigit() and len(part) == 6:
            return part
    return str(version)


# The date tags of the release branches' official builds (sonic-buildimage tags, DEVICE_STATE.md):
# an image built on such a tag prints the tag, and its sonic_version.yml names its branch.
TAG_RELEASES = {"20230531": "202305", "20231110": "202311", "20240531": "202405", "20241211": "202411"}
_BUILD = re.compile(r"\ASONiC\.([0-9]{6}|[0-9]{8})((?:[A-Za-z]{1,8}|_RC[0-9]*)?)\.[0-9]+(?:-[A-Za-z0-9._-]{1,80})?\Z")


def image(version: str) -> tuple[str, str]:
    """(the release, the build string) of `lab up --nos-version`: a release ("202411") images as
    SONiC.202411 (the lab's short form); a full build string as real images print it
    ("SONiC.20241211.21", "SONiC.202405c.38617-int-abc", "SONiC.202311_RC.38-0ea9fa1ef_Internal")
    carries the release of its branch. ValueError when the lab cannot tell which branch built it."""
    if re.fullmatch(r"[0-9]{6}", version):
        return version, f"SONiC.{version}"
    match = _BUILD.match(version)
    if match is None:
        raise ValueError(f"{version!r} is not a SONiC build string (SONiC.<branch>.<build>[-<sha>])")
    branch = match.group(1)
    release = branch if len(branch) == 6 else TAG_RELEASES.get(branch)
    if release is None:
        raise ValueError(f"{version!r}: the lab knows no release branch tagged {branch} "
                         f"(it knows {', '.join(sorted(TAG_RELEASES))})")
    return release, version


def version_yml(release: str, build: str) -> str:
    """/etc/sonic/sonic_version.yml as sonic-buildimage's sonic_version.yml.j2 writes it (the fields
    the lab has values for); `branch` is git's --abbrev-ref HEAD: HEAD for a build of a tag."""
    tagged = bool(re.match(r"\ASONiC\.[0-9]{8}\.", build))
    return (f"build_version: '{build}'\ndebian_version: '12.7'\nkernel_version: '6.1.0-11-2-amd64'\n"
            f"asic_type: mellanox\nasic_subtype: 'mellanox'\ncommit_id: '0ea9fa1ef'\n"
            f"branch: '{'HEAD' if tagged else release}'\nrelease: '{release}'\nbuild_number: 0\n"
            "built_by: lab@fabricgen\n")


def database_version(version: str) -> str:
    """The newest known release at or before `version` (the oldest known one for anything older)."""
    versions = _data()["database_version"]
    rel = release(version)
    known = sorted(versions)
    return versions[max((r for r in known if r <= rel), default=known[0])]


def base_mac(name: str) -> str:
    """The switch's base MAC: an NVIDIA OUI and three bytes from its name (stable, unique per name)."""
    tail = hashlib.sha256(name.encode()).digest()[:3]
    return _data()["mac_oui"] + "".join(f":{b:02x}" for b in tail)


def init_cfg() -> dict:
    """/etc/sonic/init_cfg.json: loaded under every `config reload` (sonic-utilities config/main.py)."""
    data = _data()
    tables = copy.deepcopy(data["tables"])
    tables["DEVICE_METADATA"] = {"localhost": dict(data["metadata"])}
    crm = data["crm"]
    config = {"polling_interval": crm["polling_interval"]}
    for resource in crm["resources"]:
        config.update({f"{resource}_{k}": v for k, v in crm["threshold"].items()})
    tables["CRM"] = {"Config": config}
    tables["FEATURE"] = features()
    tables["AUTO_TECHSUPPORT_FEATURE"] = {f: dict(data["auto_techsupport_feature"]) for f in data["features"]}
    tables["SYSLOG_CONFIG_FEATURE"] = {f: dict(data["syslog_config_feature"]) for f in data["features"]}
    return tables


def features() -> dict:
    data = _data()
    rows = {}
    for name, (state, delayed, global_scope, per_asic, auto_restart, check_up) in data["features"].items():
        row = {"state": state, "delayed": delayed, "has_global_scope": global_scope,
               "has_per_asic_scope": per_asic, "auto_restart": auto_restart, **data["feature_common"]}
        if check_up is not None:
            row["check_up_status"] = check_up
        rows[name] = row
    return rows


def default_sku(model: str) -> str:
    platform = _platform(model)
    return dict(platform.hwskus)["default"]


def platform_string(model: str) -> str:
    return _platform(model).platform


def hardware(model: str, name: str, mac: str | None = None) -> dict:
    """What `sonic-cfggen -H -k <default SKU>` adds: platform, base MAC, SKU and its PORT rows.

    mac: the base MAC from the switch's EEPROM (the inventory's, `lab up --ztp`); else one from its name.
    """
    platform = _platform(model)
    preset = _data()["preset"]
    ports = {}
    for number, _group in platform.front_panel():
        for port in platform.ports(number, "1x"):
            lanes = len(port.lanes.split(","))
            row = {"alias": port.alias, "lanes": port.lanes, "speed": str(port.speed_g * 1000),
                   "index": str(port.index), "subport": str(port.subport)}
            if port.speed_g // lanes >= _data()["fec_min_lane_gbps"]:
                row["fec"] = "rs"
            row.update(preset["port"])
            ports[port.name] = row
    return {"DEVICE_METADATA": {"localhost": {"hwsku": default_sku(model), "platform": platform.platform,
                                              "mac": mac or base_mac(name)}},
            "PORT": ports}


def factory_config_db(model: str, name: str, version: str, mgmt: Management, *, mac: str | None = None,
                      hostname: str | None = None) -> dict:
    """The running CONFIG_DB (and saved /etc/sonic/config_db.json) of a switch fresh from install.

    hostname: the image's own ("sonic" in sonic-ztp's ztp-config.j2 profile) for a switch that
    waits for ZTP; else the lab device's name."""
    config = init_cfg()
    hw = hardware(model, name, mac)
    config["PORT"] = hw["PORT"]
    meta = config["DEVICE_METADATA"]["localhost"]
    meta.update(hw["DEVICE_METADATA"]["localhost"])
    meta.update({"hostname": hostname or name, "type": _data()["preset"]["type"],
                 "docker_routing_config_mode": _data()["docker_routing_config_mode"]})
    config["MGMT_PORT"] = {MGMT_PORT: dict(_data()["mgmt_port"])}
    if mgmt.mode == "static":
        config["MGMT_INTERFACE"] = {f"{MGMT_PORT}|{mgmt.address}": {"gwaddr": mgmt.gateway} if mgmt.gateway
                                    else {}}
    config["VERSIONS"] = {"DATABASE": {"VERSION": database_version(version)}}
    return {table: config[table] for table in sorted(config)}


def management_loss(config: dict, mgmt: Management) -> str | None:
    """Why this CONFIG_DB leaves eth0 without the address the lab reaches the switch at, or None.

    interfaces.j2 (sonic-buildimage files/image_config/interfaces/): with any MGMT_INTERFACE row eth0
    gets exactly those static addresses; with none it runs a DHCP client, which gets the lab's lease
    again. MGMT_PORT eth0 admin_status down takes the link down (hostcfgd).
    """
    port = (config.get("MGMT_PORT") or {}).get(MGMT_PORT)
    if isinstance(port, dict) and port.get("admin_status") == "down":
        return "MGMT_PORT eth0 is admin down"
    rows = config.get("MGMT_INTERFACE") or {}
    addresses = set()
    for key in rows:
        name, _, prefix = str(key).partition("|")
        if name == MGMT_PORT and prefix:
            try:
                addresses.add(str(ipaddress.ip_interface(prefix)))
            except ValueError:
                continue
    if mgmt.address in addresses:
        return None
    if not rows:
        if mgmt.mode == "dhcp":
            return None
        return f"MGMT_INTERFACE has no eth0 address (was {mgmt.address}) and no DHCP server answers"
    if not addresses:
        return f"MGMT_INTERFACE has no eth0 address (was {mgmt.address})"
    return f"eth0 address changed from {mgmt.address} to {', '.join(sorted(addresses))}"


def _platform(model: str):
    platform = sonic_platform(model)
    if platform is None:
        raise ValueError(f"no SONiC platform data for model {model!r}")
    return platform


def eth0_moved(before: dict, after: dict) -> str | None:
    """Why a reload from `before` to `after` restarts eth0 somewhere else, or None: the management
    VRF switched on or off (MGMT_VRF_CONFIG vrf_global mgmtVrfEnabled; no row is "false", as
    hostcfgd reads it) or eth0's MGMT_INTERFACE rows changed (interfaces.j2 renders eth0 from them)."""
    def vrf(config: dict) -> str:
        row = (config.get("MGMT_VRF_CONFIG") or {}).get("vrf_global") or {}
        return str(row.get("mgmtVrfEnabled", "false")).lower()

    def eth0(config: dict) -> dict:
        return {k: v for k, v in (config.get("MGMT_INTERFACE") or {}).items() if str(k).split("|")[0] == MGMT_PORT}

    if vrf(before) != vrf(after):
        return f"management VRF {'on' if vrf(after) == 'true' else 'off'}, eth0 moves {'into' if vrf(after) == 'true' else 'out of'} VRF mgmt"
    if eth0(before) != eth0(after):
        return "eth0's MGMT_INTERFACE changed"
    return None
