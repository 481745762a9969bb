"""A real DHCPv4 exchange between two network namespaces: Kea serves, dhclient asks (issue 22).

The fixture `dhcp_link` makes two namespaces with random names and one veth pair between
them, created from inside the server namespace with its peer sent straight to the client
namespace (`ip link add ... peer ... netns`), so neither end ever exists in the host's
namespace and no DHCP packet can leave the pair.

Server side: the real `kea-dhcp4 -c CONFIG` (Debian's kea-dhcp4-server) with the test's config,
changed only where running it in a test needs it:
- "lease-database" becomes a memfile with "persist": false (Kea ARM 2.2, "Memfile - Basic
  Storage for Leases": no lease file is written at all), so /var/lib/kea is never touched;
- KEA_PIDFILE_DIR (Kea ARM, "Starting and Stopping the DHCPv4 Server") and KEA_LOCKFILE_DIR
  (Kea ARM, "Logging During Kea Startup") point into the test's temp dir;
- `-d` (same ARM section: debug severity) and stdout/stderr into kea.log in the temp dir. With no
  "loggers" in the config Kea keeps its startup logging, to stdout (ARM "Logging During Kea
  Startup"): debug up to the config load, then INFO, which names each lease allocated or
  refused (DHCP4_LEASE_ALLOC, ALLOC_ENGINE_V4_ALLOC_FAIL_*). Failure messages show its tail.
The config must already name the server veth in "interfaces-config" (the caller writes it, or
passes it to `fabricgen day0 --dhcp-interface`); a config with "loggers", "control-socket",
"hooks-libraries" or "dhcp-ddns" is refused, since those would write or listen outside the test.
Kea is ready when its UDP socket on port 67 shows up in the server namespace (with the default
"dhcp-socket-type": "raw" Kea also binds a UDP socket per address, ARM "Interface
Configuration"), and a client gets no answer before that.

Client side: the real `dhclient` (isc-dhcp-client) in the foreground (-d), one try (-1: "On
failure exit with code 2", dhclient(8)), with its lease and pid files (-lf, -pf) and its
config (-cf) in the temp dir, never /var/lib/dhcp or /etc/dhcp. The config (dhclient.conf(5))
declares option 239 as `cumulus-provision-url` (text), sends the given vendor class
identifier (option 60) and requests host-name, routers, domain-name-servers, ntp-servers,
bootfile-name (67) and option 239. -sf is a script written here that only dumps the
environment dhclient gives it (dhclient-script(8): $reason, new_<option> with dashes turned
into underscores, requested_<option>=1) into env.<reason>: the real /sbin/dhclient-script,
which would write /etc/resolv.conf, addresses and routes, never runs.

Teardown, also when a test fails: Kea and dhclient are stopped by the PID of the process this
module started (`ip netns exec` execs the program, so that PID is Kea's or dhclient's), then
whatever is left in our two namespaces (`ip netns pids`) is killed by PID, then the namespaces
are deleted, which removes the veth pair.
"""

from __future__ import annotations

import copy
import json
import os
import secrets
import shlex
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

KEA = "/usr/sbin/kea-dhcp4"
DHCLIENT = "/usr/sbin/dhclient"
CUMULUS_VENDOR_CLASS = "cumulus-linux x86_64"   # option 60 of a Cumulus switch (contract section 2)
# Config sections that would write, listen or load code outside the test's temp dir.
REFUSED_KEYS = ("loggers", "control-socket", "hooks-libraries", "dhcp-ddns")
# Where a Kea that ignored the overrides above would write: none of these may appear.
KEA_STATE_DIRS = (Path("/var/lib/kea"), Path("/run/kea"), Path("/var/run/kea"))
DEFAULT_TIMEOUT = 20.0


def _tool(name: str, default: str) -> str | None:
    return shutil.which(name) or (default if Path(default).exists() else None)


def dhcp_missing_reason() -> str | None:
    """Why the real DHCP exchange cannot run here, or None."""
    if os.geteuid() != 0:
        return "network namespaces, kea-dhcp4 (port 67, raw sockets) and dhclient need root"
    if _tool("ip", "/usr/sbin/ip") is None:
        return "ip not found (apt-get install -y iproute2)"
    if _tool("kea-dhcp4", KEA) is None:
        return "kea-dhcp4 not found (apt-get install -y kea-dhcp4-server)"
    if _tool("dhclient", DHCLIENT) is None:
        return "dhclient not found (apt-get install -y isc-dhcp-client)"
    return None


def _run(*cmd: str, check: bool = True) -> subprocess.CompletedProcess:
    r = subprocess.run(list(cmd), capture_output=True, text=True, timeout=30)
    if check and r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({r.returncode}): {r.stderr.strip() or r.stdout.strip()}")
    return r


def _stop(proc: subprocess.Popen) -> None:
    """SIGTERM, then SIGKILL, to the process we started (by its PID, through Popen)."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)


@dataclass
class Lease:
    """What dhclient handed to its script on BOUND (dhclient-script(8) variable names)."""

    ip: str
    subnet_mask: str | None
    routers: list[str]
    hostname: str | None            # option 12
    dns: list[str]                  # option 6
    ntp: list[str]                  # option 42
    bootfile: str | None            # option 67 (bootfile-name)
    filename: str | None            # the BOOTP header's file field
    provision_url: str | None       # option 239 (cumulus-provision-url)
    env: dict[str, str]

    @classmethod
    def from_env(cls, env: dict[str, str]) -> Lease:
        def words(key: str) -> list[str]:
            return env.get(key, "").split()

        return cls(ip=env["new_ip_address"], subnet_mask=env.get("new_subnet_mask"), routers=words("new_routers"),
                   hostname=env.get("new_host_name"), dns=words("new_domain_name_servers"),
                   ntp=words("new_ntp_servers"), bootfile=env.get("new_bootfile_name"),
                   filename=env.get("new_filename"), provision_url=env.get("new_cumulus_provision_url"), env=env)


@dataclass
class DhcpLink:
    tag: str
    directory: Path
    server_ns: str
    client_ns: str
    server_if: str
    client_if: str
    namespaces: list[str] = field(default_factory=list)
    kea: subprocess.Popen | None = None
    clients: list[subprocess.Popen] = field(default_factory=list)
    requests: int = 0

    @property
    def kea_log(self) -> Path:
        return self.directory / "kea" / "kea.log"

    def kea_log_text(self) -> str:
        return self.kea_log.read_text(errors="replace") if self.kea_log.exists() else "(no Kea log)"

    def _kea_tail(self, lines: int = 60) -> str:
        # -d logs every control command Kea registers at startup: noise next to a failure
        kept = [line for line in self.kea_log_text().splitlines() if "COMMAND_REGISTERED" not in line]
        return "\n".join(kept[-lines:])

    # -- server ----------------------------------------------------------------------------
    def kea_config_for_test(self, config: dict) -> dict:
        """CONFIG as Kea runs it here: only the lease database changes (see the module doc)."""
        config = copy.deepcopy(config)
        dhcp4 = config.get("Dhcp4")
        if not isinstance(dhcp4, dict):
            raise ValueError("a Kea DHCPv4 config is {\"Dhcp4\": {...}}")
        refused = [k for k in REFUSED_KEYS if k in dhcp4]
        if refused:
            raise ValueError(f"Dhcp4 {', '.join(refused)}: would write or listen outside the test; "
                             "the DHCP netns test does not run such a config")
        interfaces = dhcp4.get("interfaces-config", {}).get("interfaces")
        if interfaces != [self.server_if]:
            raise ValueError(f"interfaces-config.interfaces is {interfaces!r}: the test's server veth is "
                             f"{self.server_if!r} (write it into the config, or day0 --dhcp-interface)")
        # Kea ARM 2.2 "Memfile - Basic Storage for Leases": persist false writes no lease file
        dhcp4["lease-database"] = {"type": "memfile", "persist": False}
        return config

    def _kea_env(self, d: Path) -> dict[str, str]:
        env = {**os.environ, "KEA_PIDFILE_DIR": str(d), "KEA_LOCKFILE_DIR": str(d)}
        env.pop("KEA_LOGGER_DESTINATION", None)     # stdout: kea.log, or the caller's capture
        return env

    def check_kea(self, config: dict) -> subprocess.CompletedProcess:
        """`kea-dhcp4 -t` on CONFIG as start_kea would run it, inside the server namespace: Kea's
        check opens the config's interfaces, so it needs the server veth (Kea ARM "Starting and
        Stopping the DHCPv4 Server": -t loads the file, checks it and exits 0 when it looks OK)."""
        d = self.directory / f"kea-check{secrets.token_hex(2)}"
        d.mkdir()
        path = d / "kea-dhcp4.json"
        path.write_text(json.dumps(self.kea_config_for_test(config), indent=2) + "\n")
        return subprocess.run(["ip", "netns", "exec", self.server_ns, _tool("kea-dhcp4", KEA) or KEA, "-t", str(path)],
                              capture_output=True, text=True, timeout=60, env=self._kea_env(d))

    def start_kea(self, config: dict, server_address: str, timeout: float = 10.0) -> Path:
        """Run kea-dhcp4 on the server veth with SERVER_ADDRESS (e.g. "192.0.2.254/24", inside the
        config's subnet: Kea picks a directly connected client's subnet by the address of the
        interface the packet came in on, Kea ARM "How the DHCPv4 Server Selects a Subnet").
        Returns the config file Kea runs; raises with the log if it does not listen in TIMEOUT."""
        if self.kea is not None:
            raise RuntimeError("Kea already runs on this link")
        d = self.directory / "kea"
        d.mkdir(exist_ok=True)
        path = d / "kea-dhcp4.json"
        path.write_text(json.dumps(self.kea_config_for_test(config), indent=2) + "\n")
        _run("ip", "-n", self.server_ns, "addr", "add", server_address, "dev", self.server_if)
        env = self._kea_env(d)
        with self.kea_log.open("w") as log:
            self.kea = subprocess.Popen(["ip", "netns", "exec", self.server_ns, _tool("kea-dhcp4", KEA) or KEA,
                                         "-d", "-c", str(path)],
                                        stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, env=env)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.kea.poll() is not None:
                raise RuntimeError(f"kea-dhcp4 exited with {self.kea.returncode} before listening; Kea log:\n"
                                   f"{self._kea_tail()}")
            # the UDP socket Kea opens on port 67 of the server address
            if _run("ip", "netns", "exec", self.server_ns, "ss", "-H", "-uln", "sport = :67").stdout.strip():
                return path
            time.sleep(0.1)
        raise RuntimeError(f"kea-dhcp4 did not listen on port 67 within {timeout:.0f} s; Kea log:\n{self._kea_tail()}")

    # -- client ----------------------------------------------------------------------------
    def _client_files(self, d: Path, vendor_class: str | None, client_timeout: int) -> tuple[Path, Path]:
        conf = d / "dhclient.conf"
        lines = [
            "# dhclient.conf(5), written by tests/integration/dhcp_netns.py",
            # "DEFINING NEW OPTIONS" (dhcp-options(5)): Cumulus ZTP's option 239 carries a URL
            "option cumulus-provision-url code 239 = text;",
            # give up after CLIENT_TIMEOUT s (then -1 exits 2), retransmit every 1-2 s meanwhile
            f"timeout {client_timeout};",
            "initial-interval 1;",
            "backoff-cutoff 2;",
        ]
        if vendor_class is not None:
            lines.append(f"send vendor-class-identifier {json.dumps(vendor_class)};")
        # `request` replaces dhclient's default list, so subnet-mask is named too
        lines.append("request subnet-mask, routers, domain-name-servers, ntp-servers, host-name, bootfile-name, "
                     "cumulus-provision-url;")
        conf.write_text("\n".join(lines) + "\n")
        script = d / "dump-env.sh"
        # dhclient-script(8): one call per $reason (PREINIT, BOUND, FAIL, ...); each call's environment
        # goes to env.<reason>, written then renamed so the test never reads half a file. Nothing else.
        script.write_text("#!/bin/sh\n"
                          "# -sf for dhclient in the DHCP netns test: dump the environment, configure nothing\n"
                          f"dir={shlex.quote(str(d))}\n"
                          'env -0 > "$dir/env.$reason.tmp" && mv "$dir/env.$reason.tmp" "$dir/env.$reason"\n'
                          "exit 0\n")
        script.chmod(0o755)
        return conf, script

    def request(self, mac: str, vendor_class: str | None = CUMULUS_VENDOR_CLASS, *,
                timeout: float = DEFAULT_TIMEOUT, client_timeout: int = 15) -> Lease | None:
        """One DHCP exchange from the client veth with MAC and (if not None) option 60 VENDOR_CLASS.

        Returns the lease, or None when dhclient gave up (-1: exit 2 after CLIENT_TIMEOUT s with
        no lease). Raises, with the Kea and dhclient logs, when nothing is settled in TIMEOUT s."""
        if self.kea is None:
            raise RuntimeError("start_kea first")
        self.requests += 1
        d = self.directory / f"client{self.requests}"
        d.mkdir()
        conf, script = self._client_files(d, vendor_class, client_timeout)
        # a veth's MAC is set while it is down; up again, it carries the new address from the first packet
        _run("ip", "-n", self.client_ns, "link", "set", "dev", self.client_if, "down")
        _run("ip", "-n", self.client_ns, "link", "set", "dev", self.client_if, "address", mac)
        _run("ip", "-n", self.client_ns, "link", "set", "dev", self.client_if, "up")
        log_path = d / "dhclient.log"
        with log_path.open("w") as log:
            proc = subprocess.Popen(["ip", "netns", "exec", self.client_ns, _tool("dhclient", DHCLIENT) or DHCLIENT,
                                     "-1", "-d", "-cf", str(conf), "-lf", str(d / "dhclient.leases"),
                                     "-pf", str(d / "dhclient.pid"), "-sf", str(script), self.client_if],
                                    stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
        self.clients.append(proc)
        bound = d / "env.BOUND"
        deadline = time.monotonic() + timeout
        try:
            while time.monotonic() < deadline:
                if bound.exists():
                    return Lease.from_env(_read_env(bound))
                if proc.poll() is not None:
                    if proc.returncode == 2:
                        return None
                    raise RuntimeError(f"dhclient exited with {proc.returncode}:\n{log_path.read_text()}\n"
                                       f"Kea log:\n{self._kea_tail()}")
                time.sleep(0.05)
            raise AssertionError(f"no DHCP outcome for {mac} within {timeout:.0f} s\ndhclient log:\n"
                                 f"{log_path.read_text()}\nKea log:\n{self._kea_tail()}")
        finally:
            _stop(proc)


def _read_env(path: Path) -> dict[str, str]:
    env = {}
    for entry in path.read_bytes().split(b"\0"):
        key, sep, value = entry.decode(errors="replace").partition("=")
        if sep:
            env[key] = value
    return env


def _create(link: DhcpLink) -> None:
    for ns in (link.server_ns, link.client_ns):
        link.namespaces.append(ns)          # before creating: teardown removes whatever exists
        _run("ip", "netns", "add", ns)
        _run("ip", "-n", ns, "link", "set", "dev", "lo", "up")
    _run("ip", "-n", link.server_ns, "link", "add", "name", link.server_if, "type", "veth",
         "peer", "name", link.client_if, "netns", link.client_ns)
    _run("ip", "-n", link.server_ns, "link", "set", "dev", link.server_if, "up")
    _run("ip", "-n", link.client_ns, "link", "set", "dev", link.client_if, "up")


def _teardown(link: DhcpLink) -> list[str]:
    problems: list[str] = []
    for proc in [*link.clients, *([link.kea] if link.kea else [])]:
        try:
            _stop(proc)
        except (OSError, subprocess.SubprocessError) as exc:
            problems.append(f"stopping pid {proc.pid}: {exc}")
    existing = set(_run("ip", "netns", "list", check=False).stdout.split())
    for ns in link.namespaces:
        if ns not in existing:
            continue
        # anything still in our namespaces was started by this test (e.g. a forked helper)
        for pid in _run("ip", "netns", "pids", ns, check=False).stdout.split():
            try:
                os.kill(int(pid), signal.SIGKILL)
            except (ProcessLookupError, ValueError):
                pass
        r = _run("ip", "netns", "del", ns, check=False)
        if r.returncode != 0:
            problems.append(f"ip netns del {ns}: {r.stderr.strip()}")
    return problems


@pytest.fixture
def dhcp_link(tmp_path_factory) -> Iterator[DhcpLink]:
    """Two fresh namespaces and a veth pair (server_if <-> client_if); start_kea() then request()."""
    reason = dhcp_missing_reason()
    if reason:
        pytest.skip(reason)
    tag = secrets.token_hex(3)
    link = DhcpLink(tag=tag, directory=tmp_path_factory.mktemp(f"dhcp{tag}"), server_ns=f"fgdhcp{tag}s",
                    client_ns=f"fgdhcp{tag}c", server_if=f"fgk{tag}", client_if=f"fgc{tag}")
    before = {p for p in KEA_STATE_DIRS if p.exists()}
    try:
        _create(link)
        yield link
    finally:
        problems = _teardown(link)
        created = [str(p) for p in KEA_STATE_DIRS if p.exists() and p not in before]
        if created:
            problems.append(f"{', '.join(created)} appeared during the test: Kea wrote outside its temp dir")
        if problems:
            raise RuntimeError("dhcp netns teardown: " + "; ".join(problems))
