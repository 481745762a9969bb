"""The bring-up kit as files: DIR/kea-dhcp4.json, DIR/http/ (what ZTP fetches, with
http/manifest.json = {"files": {relpath: sha256}}), and DIR/manifest.json, the render-style
manifest that lets a later `fabricgen day0 -o DIR` replace the kit (generator/render/output.py
check_target accepts only a directory its manifest describes).

Written with output.write_tree: everything goes to a temporary sibling renamed into place, so
an error leaves nothing behind and a re-run never mixes two kits.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from generator.common.errors import FabricgenError
from generator.day0 import cumulus_ztp, kea, sonic_ztp
from generator.day0.inventory import Inventory, missing_switches, missing_warning
from generator.day0.urls import UrlError, check_base_url
from generator.plan.model import FabricPlan
from generator.render.output import manifest_text, switch_files, write_tree

KEA_FILE = "kea-dhcp4.json"
HTTP = "http/"
HTTP_MANIFEST = "http/manifest.json"
DEFAULT_INTERFACE = "eth0"
# A Kea interface name, optionally /address (Kea ARM "Interface Configuration"), or "*"
_INTERFACE = re.compile(r"\A(\*|[A-Za-z0-9_.:@-]{1,15}(/[0-9.]{7,15})?)\Z")


class KitError(FabricgenError, ValueError):
    """One line: why the kit cannot be built (nothing was written)."""


@dataclass
class Kit:
    files: dict[str, str]                 # DIR-relative path -> text
    warnings: list[str] = field(default_factory=list)
    reservations: int = 0


def check_interface(interface: str) -> str:
    if not _INTERFACE.match(interface or ""):
        raise KitError(f"--dhcp-interface {interface!r}: give the name of the interface Kea answers on "
                       "(the one facing the switches' eth0 network), e.g. eth1")
    return interface


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def build_kit(plan: FabricPlan, intent_text: str, inventory: Inventory, url: str,
              interface: str = DEFAULT_INTERFACE, password: str | None = None) -> Kit:
    """Every file of the kit, in memory (a kit is small: one script, one file per switch).
    PASSWORD: deploy.user's (FABRICGEN_PASSWORD), which a Cumulus kit without `management:` sets."""
    try:
        base = check_base_url(url)
        check_interface(interface)
        http: dict[str, str] = dict(switch_files(plan))      # byte-identical to `fabricgen render`
        if plan.switch_os == "cumulus":
            hashes = {rel.split("/")[1]: _sha(text) for rel, text in http.items()}
            http[kea.CUMULUS_SCRIPT] = cumulus_ztp.render_cumulus_script(plan, inventory, base, hashes, password)
        else:
            http.update(sonic_ztp.scripts(plan.fabric, plan.switch_os_version))
            for name in sorted(inventory.switches):
                sha = _sha(http[sonic_ztp.config_db_path(name)])
                http[kea.sonic_ztp_path(name)] = sonic_ztp.ztp_text(name, base, sha)
        config, warnings = kea.kea_config(plan, inventory, base, interface)
    except (UrlError, kea.KeaError, cumulus_ztp.LoginError) as exc:
        raise KitError(str(exc)) from None
    listing = {rel: _sha(text) for rel, text in sorted(http.items())}
    files = {HTTP + rel: text for rel, text in http.items()}
    files[HTTP_MANIFEST] = json.dumps({"files": listing}, indent=1, sort_keys=True) + "\n"
    files[KEA_FILE] = kea.kea_text(config)
    top = {rel: _sha(text) for rel, text in files.items()}
    files["manifest.json"] = manifest_text(plan.fabric, intent_text, top)
    missing = missing_warning(missing_switches(inventory, plan), inventory)
    if missing:
        warnings.insert(0, missing)
    reservations = len(config["Dhcp4"]["subnet4"][0]["reservations"])
    return Kit(files, warnings, reservations)


def write_kit(kit: Kit, out_dir: str | Path) -> Path:
    """Write KIT into OUT_DIR atomically (OutputError: nothing written)."""
    return write_tree(kit.files, out_dir)


__all__ = ["DEFAULT_INTERFACE", "HTTP_MANIFEST", "KEA_FILE", "Kit", "KitError", "build_kit", "check_interface",
           "write_kit"]
