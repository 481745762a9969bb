"""The NOS releases fabricgen knows, as data: read by the intent's release check, the renderer
and the deploy alike, so none of them imports another for it (issue 35).

- Cumulus Linux: one NVUE object model per 5.x minor release in the `nvueschema` package
  (modules v5_0 .. v5_18), which render/nvue_model.py validates against.
- SONiC: the release branches whose GCU allow-list generator/data/sonic_gcu_releases.yaml holds
  (deploy/sonic_guard.py judges a day-2 patch by it).
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache
from importlib import resources

import yaml

NVUE_MODELS_PACKAGE = "nvueschema.models"


def _minor_key(version: str) -> tuple[int, int]:
    major, minor = (str(version).split(".") + ["0"])[:2]
    return int(major), int(minor)


@cache
def cumulus_releases() -> tuple[str, ...]:
    """The Cumulus Linux releases with an NVUE object model, oldest first ("5.0" .. "5.18")."""
    pkg = importlib.import_module(NVUE_MODELS_PACKAGE)
    found = []
    for info in pkgutil.iter_modules(pkg.__path__):
        parts = info.name[1:].split("_") if info.name.startswith("v") else []
        if len(parts) == 2 and all(p.isdigit() for p in parts):
            found.append(f"{parts[0]}.{parts[1]}")
    return tuple(sorted(found, key=_minor_key))


@cache
def sonic_gcu_catalog() -> dict:
    """generator/data/sonic_gcu_releases.yaml, parsed (fabricgen's own file, not a user's)."""
    text = resources.files("generator.data").joinpath("sonic_gcu_releases.yaml").read_text(encoding="utf-8")
    return yaml.safe_load(text)


def sonic_releases() -> tuple[str, ...]:
    """The SONiC release branches with a GCU allow-list, oldest first ("202311" .. "202511")."""
    return tuple(sorted(sonic_gcu_catalog()["releases"]))


__all__ = ["NVUE_MODELS_PACKAGE", "cumulus_releases", "sonic_gcu_catalog", "sonic_releases"]
