"""The endpoints file: where each switch and host is reached and where the password comes from.

It chooses where secrets go (which server receives the password, which known_hosts vouches for
it, which ssh options Ansible runs with), so it is read only when it is the user's or root's and
not writable by group or others (common/trusted_file.py), within the common YAML bounds, and its
`password_env` may only name an allowed variable (issue 34 finding 1).

Which switches it lists also decides reachability: a switch it does not list cannot be reached,
and is `unknown` in drift, `not installed` in verify (verify/installed.py), while the others are
still checked.
"""

from __future__ import annotations

import fnmatch
import os
from pathlib import Path
from typing import Any

from generator.common.bounded_read import ReadRefused
from generator.common.bounded_yaml import YamlRefused, load_bounded
from generator.common.errors import FabricgenError
from generator.common.trusted_file import read_trusted

# An endpoints file lists a few thousand switches at most
MAX_ENDPOINTS_FILE_BYTES = 4 * 1024 * 1024
# password_env may name these variables only: a file that could name any variable would send
# e.g. AWS_SECRET_ACCESS_KEY to whatever `host` it lists. More patterns (comma-separated fnmatch,
# e.g. "FABRICGEN_*,LAB_SWITCH_PW") come from the environment only, never from a file.
PASSWORD_ENV_DEFAULT = "FABRICGEN_*"
PASSWORD_ENV_ALLOW = "FABRICGEN_PASSWORD_ENV_ALLOW"


class EndpointsError(FabricgenError, ValueError):
    """One line: FILE[:LINE]: what is wrong and what to do."""


def load_endpoints(path: str | Path) -> Any:
    """The endpoints file's document (None when empty), or EndpointsError."""
    try:
        raw = read_trusted(path, MAX_ENDPOINTS_FILE_BYTES)
    except FileNotFoundError:
        raise EndpointsError(f"{path}: no such endpoints file; check --endpoints or fabricgen.toml's endpoints") from None
    except ReadRefused as exc:
        raise EndpointsError(f"{path}: endpoints file refused: {exc.message}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise EndpointsError(f"{path}: the endpoints file is not UTF-8 text") from None
    try:
        return load_bounded(text, max_bytes=MAX_ENDPOINTS_FILE_BYTES)
    except YamlRefused as exc:
        where = f"{path}:{exc.line}" if exc.line else str(path)
        raise EndpointsError(f"{where}: {exc.message}") from None


def password_env_allowed(name: str) -> bool:
    """Whether an endpoints file may name NAME as password_env."""
    patterns = [p.strip() for p in os.environ.get(PASSWORD_ENV_ALLOW, PASSWORD_ENV_DEFAULT).split(",") if p.strip()]
    return any(fnmatch.fnmatchcase(name, p) for p in patterns)


def hosts_section(endpoints: str | None) -> tuple[Any, str]:
    """(the `hosts:` value or {}, "") or (None, why hosts cannot be reached)."""
    if endpoints is None:
        return None, "no --endpoints file names the hosts"
    try:
        data = load_endpoints(endpoints) or {}
    except EndpointsError as exc:
        return None, str(exc)
    if not isinstance(data, dict) or "hosts" not in data:
        return None, f"{endpoints} lists no hosts"
    return data["hosts"] or {}, ""


def listed_switches(endpoints: str | None) -> set[str] | None:
    """The switch names of the endpoints file's `switches:` mapping; None: no file, or one that
    cannot be read (credentials.resolve_access then reports the problem in one line)."""
    if endpoints is None:
        return None
    try:
        data = load_endpoints(endpoints) or {}
    except EndpointsError:
        return None
    switches = data.get("switches") if isinstance(data, dict) else None
    return set(switches) if isinstance(switches, dict) else None


def split_listed(names: list[str], endpoints: str | None) -> tuple[list[str], list[str]]:
    """(switches the endpoints file lists, those it does not), each in the order of `names`."""
    listed = listed_switches(endpoints)
    reachable = [n for n in names if listed is None or n in listed]
    return reachable, [n for n in names if n not in reachable]
