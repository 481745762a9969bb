"""SONiC ZTP documents of the kit: one ztp.json per inventory switch (DHCP option 67 points at
it) and the provisioning scripts its sections fetch, shared by every switch.

sonic-ztp runs the sections of `{"ztp": {...}}` in sorted key order (ztp-engine.py); a section's
plugin is its `plugin` object, else its name without the leading "NN-" (ZTPSections.plugin). A
script of our own is a user-defined plugin, `"plugin": {"url": URL, "ignore-section-data": true,
"args": "..."}`, run as `PLUGIN ARGS` without the section's input file (ZTPJson.pluginArgs).
sonic-ztp downloads each section's plugin when that section runs, with plain curl in the default
VRF (Downloader.py; no VRF support): after the day-0 config turns the management VRF on, nothing
can be downloaded from the kit server any more (DEVICE_STATE.md). So the config change is the
last thing ZTP does:

01-release-gate  plugin sonic-release-gate.py: refuse a switch whose release is not
                 switch_os.version, or cannot be told (generator/sonic_release.py, embedded),
                 before anything changes;
02-provision     plugin sonic-provision.py URL SHA256: download the switch's config_db.json
                 (byte-identical to `fabricgen render`) while eth0 is still in the default VRF,
                 refuse a hwsku the switch cannot run, keep the switch's platform, mac and FEATURE
                 rows, `config reload -f -y`, then `config save -y`: the startup config changes
                 only at the very end. Nothing downloads after it.

Every section halts ZTP on failure, and `"restart-ztp-no-config": false` keeps a refused switch
refused: by default sonic-ztp restarts discovery when no startup config exists (ZTPJson defaults;
DEVICE_STATE.md), and a gate that refuses would loop. sonic-ztp's configdb-json plugin is not
used: with clear-config it moves the file to /etc/sonic/config_db.json whatever save-config says
and keeps the file's hwsku (plugins/configdb-json).
"""

from __future__ import annotations

import json
from pathlib import Path

from generator import sonic_release
from generator.day0.urls import file_url
from generator.render.environment import template

TAG = "fabricgen-ztp"
GATE = "ztp/sonic-release-gate.py"
PROVISION = "ztp/sonic-provision.py"


def release(version: tuple[int, int]) -> str:
    """switch_os.version as SONiC names releases (YYYYMM): (2024, 11) -> "202411"."""
    year, month = version
    return f"{year}{month:02d}"


def config_db_path(name: str) -> str:
    return f"switches/{name}/config_db.json"


def ztp_json(name: str, base_url: str, sha256: str) -> dict:
    """SHA256: of http/switches/<name>/config_db.json, checked by the provision plugin."""
    def script(rel: str, args: str | None = None) -> dict:
        plugin = {"url": file_url(base_url, rel), "ignore-section-data": True}
        if args is not None:
            plugin["args"] = args
        return {"plugin": plugin, "halt-on-failure": True}

    return {"ztp": {
        "01-release-gate": script(GATE),
        "02-provision": script(PROVISION, f"{file_url(base_url, config_db_path(name))} {sha256}"),
        "restart-ztp-no-config": False,
    }}


def ztp_text(name: str, base_url: str, sha256: str) -> str:
    return json.dumps(ztp_json(name, base_url, sha256), indent=2, sort_keys=True) + "\n"


def scripts(fabric: str, version: tuple[int, int]) -> dict[str, str]:
    """http-relative path -> text of the provisioning scripts every switch's ztp.json names."""
    context = {"fabric": fabric, "release": release(version), "tag": TAG,
               "release_parser": Path(sonic_release.__file__).read_text(encoding="utf-8").rstrip("\n")}
    return {
        GATE: template("day0/sonic-release-gate.py.j2").render(context),
        PROVISION: template("day0/sonic-provision.py.j2").render(context),
    }


__all__ = ["GATE", "PROVISION", "TAG", "config_db_path", "release", "scripts", "ztp_json", "ztp_text"]
