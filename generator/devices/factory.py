"""One place that turns (switch OS, endpoint, credentials) into a napalm driver."""

from __future__ import annotations

from pathlib import Path


def switch_driver(os_name: str, os_version: tuple[int, ...] | str, host: str, port: int, username: str,
                  password: str, known_hosts: Path | str, *, timeout: float,
                  accept_new_host_keys: bool = False, run_id: str | None = None, password_hint: str = ""):
    """run_id: names the files uploaded to the switch (a deploy passes its lock's run id);
    password_hint: what to do when the switch refuses the password (credentials.password_hint)."""
    optional_args = {"port": port, "known_hosts": str(known_hosts), "accept_new_host_keys": accept_new_host_keys}
    if password_hint:
        optional_args["password_hint"] = password_hint
    if run_id:
        optional_args["run_id"] = run_id
    if os_name == "cumulus":
        from generator.devices.nvue import NVUEDriver

        version = os_version if isinstance(os_version, str) else ".".join(str(p) for p in os_version)
        optional_args["cumulus_version"] = version
        return NVUEDriver(host, username, password, timeout=timeout, optional_args=optional_args)
    from generator.devices.sonic import SonicDriver

    return SonicDriver(host, username, password, timeout=timeout, optional_args=optional_args)
