"""Where each switch is, who logs in, with what secret, and which host keys to trust.

The password is read from the environment or a 0600 file and only ever handed to the
driver: it is never part of a message, a log line or a report.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

import yaml

PASSWORD_ENV = "FABRICGEN_PASSWORD"


class CredentialsError(RuntimeError):
    """Endpoints or credentials are missing or unusable; the message says what to fix."""


@dataclass(frozen=True)
class Target:
    name: str
    host: str
    port: int
    username: str


@dataclass
class Access:
    targets: dict[str, Target]
    known_hosts: Path
    password: str = field(repr=False)
    hosts_listed: bool            # False: the endpoints file covers switches only (e.g. the lab)


def _password(endpoints: dict, base: Path, where: str) -> str:
    env_name = endpoints.get("password_env")
    if env_name:
        value = os.environ.get(str(env_name))
        if not value:
            raise CredentialsError(f"{where}: password_env names {env_name}, which is not set; export it")
        return value
    file_name = endpoints.get("password_file")
    if file_name:
        path = Path(file_name)
        path = path if path.is_absolute() else base / path
        try:
            mode = path.stat().st_mode
            text = path.read_text()
        except OSError as exc:
            raise CredentialsError(f"{where}: cannot read password_file {path}: {exc.strerror}") from None
        if mode & (stat.S_IRWXG | stat.S_IRWXO):
            raise CredentialsError(f"{where}: password_file {path} is readable by others; chmod 600 {path}")
        return text.rstrip("\n")
    value = os.environ.get(PASSWORD_ENV)
    if value:
        return value
    raise CredentialsError(f"{where}: no password: set password_env or password_file in the endpoints file, "
                           f"or export {PASSWORD_ENV}")


def resolve_access(plan, names: list[str], intent_path: str | Path, endpoints_path: str | Path | None) -> Access:
    """Targets for the named switches of the plan: from the endpoints file when given, else
    the plan's management addresses on port 22; known_hosts lives next to the inventory."""
    users = {name: plan.deploy_user for name in names}
    if endpoints_path is None:
        base = Path(intent_path).resolve().parent
        targets = {sw.name: Target(sw.name, sw.mgmt_ip, 22, plan.deploy_user) for sw in plan.switches
                   if sw.name in users}
        password = _password({}, base, str(intent_path))
        return Access(targets, base / "known_hosts", password, hosts_listed=True)

    path = Path(endpoints_path)
    try:
        data = yaml.safe_load(path.read_text()) or {}
    except OSError as exc:
        raise CredentialsError(f"{path}: cannot read the endpoints file: {exc.strerror}") from None
    except yaml.YAMLError as exc:
        raise CredentialsError(f"{path}: not valid YAML: {str(exc).splitlines()[0]}") from None
    switches = data.get("switches")
    if not isinstance(switches, dict):
        raise CredentialsError(f"{path}: needs a `switches: {{<name>: {{host, port, username}}}}` map")
    base = path.resolve().parent
    targets: dict[str, Target] = {}
    for name, entry in switches.items():
        if name not in users:
            continue  # a wider endpoints file may list switches of other fabrics
        if not isinstance(entry, dict) or "host" not in entry:
            raise CredentialsError(f"{path}: switches.{name}: needs at least `host`")
        try:
            port = int(entry.get("port", 22))
        except (TypeError, ValueError):
            raise CredentialsError(f"{path}: switches.{name}.port: not a number") from None
        targets[name] = Target(name, str(entry["host"]), port, str(entry.get("username") or users[name]))
    missing = sorted(set(users) - set(targets))
    if missing:
        raise CredentialsError(f"{path}: no endpoint for {len(missing)} switch(es) of the plan, e.g. "
                               f"{', '.join(missing[:3])}; add them or deploy with --limit")
    return Access(targets, base / "known_hosts", _password(data, base, str(path)), hosts_listed="hosts" in data)
