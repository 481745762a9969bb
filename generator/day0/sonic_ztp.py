"""SONiC ZTP documents of the kit: one ztp.json per inventory switch (DHCP option 67 points at
it) and the provisioning scripts its sections fetch, shared by every switch.

sonic-ztp runs the sections of `{"ztp": {...}}` in sorted key order; a section's plugin is its
`plugin` object, else its name without the leading "NN-" (sonic-ztp doc/ztp/ztp.md). sonic-ztp
ships the plugins configdb-json, connectivity-check, download, firmware, graphservice and snmp
(src/usr/lib/ztp/plugins/); a script of our own is a user-defined plugin,
`"plugin": {"url": URL, "ignore-section-data": true}` — the form ztp-engine.py itself writes for
an option-239 provisioning script — run without the section's input file as argument. The sections:

01 release-gate   plugin sonic-release-gate.sh: refuse a switch whose release is not
                  switch_os.version, before anything changes;
02 feature-save   plugin sonic-feature-save.py: keep the switch's FEATURE rows aside;
03 configdb-json        the day-0 config_db (http/switches/<name>/config_db.json, byte-identical to
                        `fabricgen render`) with clear-config: `config reload`. The plugin keeps
                        DEVICE_METADATA platform, hwsku and mac from the running switch
                        (overwrite-device-metadata false) as `deploy --provision` does;
04 feature-restore plugin sonic-feature-restore.py: load the saved FEATURE rows back (the plugin does
                        not keep them: a reload makes FEATURE the file's) and `config save -y`.

Every section halts ZTP on failure: a later section must never run on a half-provisioned switch.
"""

from __future__ import annotations

import json

from generator.day0.urls import file_url
from generator.render.environment import template

TAG = "fabricgen-ztp"
GATE = "ztp/sonic-release-gate.sh"
SAVE = "ztp/sonic-feature-save.py"
RESTORE = "ztp/sonic-feature-restore.py"


def release(version: tuple[int, int]) -> str:
    """switch_os.version as SONiC names releases (YYYYMM): (2024, 11) -> "202411"."""
    year, month = version
    return f"{year}{month:02d}"


def config_db_path(name: str) -> str:
    return f"switches/{name}/config_db.json"


def ztp_json(name: str, base_url: str) -> dict:
    def script(rel: str) -> dict:
        return {"plugin": {"url": file_url(base_url, rel), "ignore-section-data": True}, "halt-on-failure": True}

    return {"ztp": {
        "01-release-gate": script(GATE),
        "02-feature-save": script(SAVE),
        "03-configdb-json": {
            "url": {"source": file_url(base_url, config_db_path(name))},
            "clear-config": True,
            "overwrite-device-metadata": False,
            # saved by section 04, once the switch's FEATURE rows are back
            "save-config": False,
            "halt-on-failure": True,
        },
        "04-feature-restore": script(RESTORE),
    }}


def ztp_text(name: str, base_url: str) -> str:
    return json.dumps(ztp_json(name, base_url), indent=2, sort_keys=True) + "\n"


def scripts(fabric: str, version: tuple[int, int]) -> dict[str, str]:
    """http-relative path -> text of the provisioning scripts every switch's ztp.json names."""
    context = {"fabric": fabric, "release": release(version), "tag": TAG}
    return {
        GATE: template("day0/sonic-release-gate.sh.j2").render(context),
        SAVE: template("day0/sonic-feature-save.py.j2").render(context),
        RESTORE: template("day0/sonic-feature-restore.py.j2").render(context),
    }


__all__ = ["GATE", "RESTORE", "SAVE", "TAG", "config_db_path", "release", "scripts", "ztp_json", "ztp_text"]
