"""Where each switch is, who logs in, with what secret, and which host keys to trust.

The password is read from the environment or a 0600 file and only ever handed to the
driver: it is never part of a message, a log line or a report.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from generator.common.bounded_read import ReadRefused, read_bounded
from generator.common.errors import FabricgenError
from generator.devices.endpoints import (
    PASSWORD_ENV_ALLOW,
    PASSWORD_ENV_DEFAULT,
    EndpointsError,
    load_endpoints,
    password_env_allowed,
)

PASSWORD_ENV = "FABRICGEN_PASSWORD"
# A login password is a line; 4 KiB is far above any switch's limit and keeps /dev/zero-sized
# mistakes from being read at all (issue 15, finding 6)
MAX_PASSWORD_FILE_BYTES = 4096


class CredentialsError(FabricgenError, RuntimeError):
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
    password_source: str = ""     # where the password came from, for an authentication failure


def _read_regular(path: Path, limit: int, where: str, what: str, private: bool) -> str:
    """Text of `path` if it is a regular file of at most `limit` bytes (and, when `private`, mode
    0600 or stricter). Devices and FIFOs are refused before they are read, and the open is
    non-blocking, so a pipe swapped in after the check cannot hang a run that holds the deploy lock."""
    def mode_0600(st: os.stat_result) -> str | None:
        if private and st.st_mode & 0o7177:
            return f"has mode {stat.S_IMODE(st.st_mode):04o}, it must be 0600 or stricter; chmod 600 {path}"
        return None

    try:
        raw = read_bounded(path, limit, check=mode_0600)
    except ReadRefused as exc:
        if exc.kind == "type":
            raise CredentialsError(f"{where}: {what} {path} is not a regular file: point it at a file") from None
        if exc.kind == "size":
            raise CredentialsError(f"{where}: {what} {path} is {exc.size} bytes, more than the {limit} a "
                                   f"{what} can be; point it at the right file") from None
        raise CredentialsError(f"{where}: {what} {path} {exc.message}" if exc.kind == "trust" else
                               f"{where}: cannot read {what} {path}: {exc.message}") from None
    except OSError as exc:
        raise CredentialsError(f"{where}: cannot read {what} {path}: {exc.strerror}") from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise CredentialsError(f"{where}: {what} {path} is not UTF-8 text") from None


def _port(value: object, where: str) -> int:
    """An endpoint port: a whole number 1-65535. 41871.9 used to be truncated to 41871."""
    if isinstance(value, bool):
        raise CredentialsError(f"{where}: {value!r} is not a port: write a whole number 1-65535")
    if isinstance(value, str) and value.isascii() and value.strip().isdigit():
        value = int(value.strip())
    if not isinstance(value, int) or not 1 <= value <= 65535:
        raise CredentialsError(f"{where}: {value!r} is not a port: write a whole number 1-65535")
    return value


def _password(endpoints: dict, base: Path, where: str) -> str:
    env_name = endpoints.get("password_env")
    if env_name:
        if not password_env_allowed(str(env_name)):
            raise CredentialsError(f"{where}: password_env names {env_name}, which is not a variable an endpoints file "
                                   f"may name ({PASSWORD_ENV_DEFAULT}); rename it, or allow it in your environment: "
                                   f"{PASSWORD_ENV_ALLOW}={PASSWORD_ENV_DEFAULT},{env_name}")
        value = os.environ.get(str(env_name))
        if not value:
            raise CredentialsError(f"{where}: password_env names {env_name}, which is not set; export it")
        return value
    file_name = endpoints.get("password_file")
    if file_name:
        path = Path(file_name)
        path = path if path.is_absolute() else base / path
        text = _read_regular(path, MAX_PASSWORD_FILE_BYTES, where, "password_file", private=True)
        return text.rstrip("\n")
    value = os.environ.get(PASSWORD_ENV)
    if value:
        return value
    raise CredentialsError(f"{where}: no password: set password_env or password_file in the endpoints file, "
                           f"or export {PASSWORD_ENV}")


def password_hint(endpoints: dict, base: Path, where: str) -> str:
    """What to do when a switch refuses the password: where it came from, in _password's order.

    An endpoints file's password_file (the lab writes one: DIR/password, holding $FABRICGEN_PASSWORD
    as it was at `lab up`, else a random password) comes before $FABRICGEN_PASSWORD, so exporting
    the variable afterwards changes nothing: the file has to hold the switch's password, or name
    the variable with `password_env: FABRICGEN_PASSWORD` instead."""
    env_name = endpoints.get("password_env")
    if env_name:
        return f"the password is ${env_name} (password_env in {Path(where).name}): export the switch's password there"
    file_name = endpoints.get("password_file")
    if file_name:
        path = Path(file_name)
        path = path if path.is_absolute() else base / path
        return (f"the password is read from password_file {path}, which comes before ${PASSWORD_ENV}: write "
                f"the switch's password there, or use `password_env: {PASSWORD_ENV}` in {Path(where).name}")
    return (f"the password is ${PASSWORD_ENV}: export the switch's password there, or set password_file in "
            "an endpoints file")


def resolve_access(plan, names: list[str], intent_path: str | Path, endpoints_path: str | Path | None) -> Access:
    """Targets for the named switches of the plan: from the endpoints file when given, else
    the plan's management addresses on port 22; known_hosts lives next to the inventory."""
    users = {name: plan.deploy_user for name in names}
    if endpoints_path is None:
        base = Path(intent_path).resolve().parent
        targets = {sw.name: Target(sw.name, sw.mgmt_ip, 22, plan.deploy_user) for sw in plan.switches
                   if sw.name in users}
        password = _password({}, base, str(intent_path))
        return Access(targets, base / "known_hosts", password, hosts_listed=True,
                      password_source=password_hint({}, base, str(intent_path)))

    path = Path(endpoints_path)
    try:
        data = load_endpoints(path) or {}
    except EndpointsError as exc:
        raise CredentialsError(str(exc)) from None
    switches = data.get("switches") if isinstance(data, dict) else None
    if not isinstance(switches, dict):
        raise CredentialsError(f"{path}: needs a `switches: {{<name>: {{host, port, username}}}}` map")
    base = path.resolve().parent
    targets: dict[str, Target] = {}
    for name, entry in switches.items():
        if name not in users:
            continue  # a wider endpoints file may list switches of other fabrics
        if not isinstance(entry, dict) or "host" not in entry:
            raise CredentialsError(f"{path}: switches.{name}: needs at least `host`")
        port = _port(entry.get("port", 22), f"{path}: switches.{name}.port")
        targets[name] = Target(name, str(entry["host"]), port, str(entry.get("username") or users[name]))
    missing = sorted(set(users) - set(targets))
    if missing:
        raise CredentialsError(f"{path}: no endpoint for {len(missing)} switch(es) of the plan, e.g. "
                               f"{', '.join(missing[:3])}; add them or deploy with --limit")
    return Access(targets, base / "known_hosts", _password(data, base, str(path)), hosts_listed="hosts" in data,
                  password_source=password_hint(data, base, str(path)))


def endpoint_host_access(section, endpoints: str) -> tuple[dict, Path | None]:
    """(extravars, ssh private key) from the endpoints file's `hosts:` section (docs/drift.md):
    `user` becomes ansible_user, `extravars` pass through, `ssh_key` is relative to the file."""
    extravars: dict = {}
    ssh_key = None
    if isinstance(section, dict):
        if section.get("user"):
            extravars["ansible_user"] = str(section["user"])
        if isinstance(section.get("extravars"), dict):
            extravars.update(section["extravars"])
        if section.get("ssh_key"):
            ssh_key = Path(endpoints).resolve().parent / str(section["ssh_key"])
    return extravars, ssh_key


def endpoint_host_vars(section) -> dict[str, dict]:
    """{host: Ansible vars} from the `hosts:` section's `servers:` map, which `lab up --hosts` writes:
    each simulated GPU server listens on its own port of 127.0.0.1 with its own Ansible tmp. {} when
    there is none (real servers are reached at their inventory address). Not fabricgen_root: the
    playbooks set it as a play var, which beats inventory vars; the lab passes it in `extravars`."""
    servers = section.get("servers") if isinstance(section, dict) else None
    if not isinstance(servers, dict):
        return {}
    out: dict[str, dict] = {}
    for name, entry in servers.items():
        if not isinstance(entry, dict) or "host" not in entry:
            raise CredentialsError(f"hosts.servers.{name}: needs at least `host`")
        found = {"ansible_host": str(entry["host"]),
                 "ansible_port": _port(entry.get("port", 22), f"hosts.servers.{name}.port")}
        if entry.get("remote_tmp"):
            found["ansible_remote_tmp"] = str(entry["remote_tmp"])
        out[str(name)] = found
    return out


# The hosts an endpoints file's `servers:` lists (a lab started with --hosts N): the others are not
# reachable there (not started), so a run covers only these (issue 36: not installed, not failed)
SERVERS_GROUP = "fabricgen_endpoint_servers"


def endpoint_overlay(host_vars: dict[str, dict]) -> dict:
    """The second inventory source: the servers' connection vars, and the group of them."""
    return {"all": {"hosts": host_vars, "children": {SERVERS_GROUP: {"hosts": {name: {} for name in host_vars}}}}}


def servers_only(limit: str | None) -> str:
    """LIMIT narrowed to the endpoints file's servers: Ansible applies `&` terms after the unions, and
    a pattern with a comma is split on commas only (inventory/manager.py split_host_pattern), so
    `a,b:&group` would be the hosts a and `b:&group`."""
    return f"{limit},&{SERVERS_GROUP}" if limit else SERVERS_GROUP
