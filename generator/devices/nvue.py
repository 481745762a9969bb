"""napalm driver for Cumulus Linux NVUE over SSH (netmiko `cumulus_linux`).

optional_args: port, known_hosts, accept_new_host_keys, key_file, cumulus_version
(picks the command generation in commands.py; default: the newest).

Commit-confirm follows napalm-srlinux: `commit_config(revert_in=N)` applies with
NVUE's own confirm timer, a second commit while one is pending raises CommitError,
`confirm_commit` keeps it and `rollback` with a pending confirm rejects it at once.
Which NVUE strings and keys this relies on, and where each was verified: the table in
commands.py ("Confirm flow").
"""

from __future__ import annotations

import contextlib
import functools
import math
import re
import shlex

from napalm.base import models
from napalm.base.exceptions import CommitError, MergeConfigException, ReplaceConfigException

from generator.device_data import DeviceDataError, parse_json, parse_yaml
from generator.devices import oper
from generator.devices.commands import nvue_commands
from generator.devices.ssh import CommandFailed, ReadIncomplete, SSHCliDriver

# NVUE's errors start with "Error" (see NVUEDriver.error_prefixes); the day-0 ZTP script holds nv's
# output to the same rule (templates/day0/cumulus-ztp.sh.j2)
NVUE_ERROR_PREFIX = "Error"


class NVUEDriver(SSHCliDriver):
    platform = "nvue"
    netmiko_device_type = "cumulus_linux"
    # NVUE can print an error and still exit 0 (`nv config apply`: ipspace/netlab PR 1726,
    # "the output of nv config apply shows errors, while the command returns success"), and
    # NVUE's errors start with "Error:" (NVUE-CLI page examples; netlab, napalm-cumulus and
    # NVIDIA's own NVOS test harness all match "Error"). So an "Error" line fails a command
    # whatever its status; the exit status is checked first (ssh.py).
    error_prefixes = (NVUE_ERROR_PREFIX,)

    def __init__(self, hostname: str, username: str, password: str, timeout: int = 60,
                 optional_args: dict | None = None) -> None:
        super().__init__(hostname, username, password, timeout, optional_args)
        self.commands = nvue_commands(self.optional_args.get("cumulus_version"))
        # snapshot(): None outside one; inside, {} until the interface tree is read, then that tree
        self._snapshot: dict | None = None

    # --- candidate ------------------------------------------------------
    def load_replace_candidate(self, filename: str | None = None, config: str | None = None) -> None:
        self._load(self.commands.replace, filename, config, ReplaceConfigException)

    def load_merge_candidate(self, filename: str | None = None, config: str | None = None) -> None:
        self._load(self.commands.patch, filename, config, MergeConfigException)

    def _load(self, template: str, filename, config, error: type[Exception]) -> None:
        try:
            text = self._read_source(filename, config)
        except (OSError, ValueError) as exc:
            raise error(f"{self.where}: cannot read candidate: {exc}") from None
        path = self.remote_path(self.commands.candidate_path)
        try:
            self._upload(text, path)
            self._check(template.format(path=path))
        except CommandFailed as exc:
            raise error(f"{self.where}: {exc}") from None
        except OSError as exc:
            raise error(f"{self.where}: upload of the candidate failed: {self._scrub(str(exc))}") from None

    def compare_config(self) -> str:
        return self._check(self.commands.diff).strip()

    def pending_changes(self) -> str:
        """Driver extra: `nv config diff` before a candidate is loaded. Non-empty: someone's edits
        (`nv set`, a replace) wait unapplied in the pending revision, which our replace would take
        over and our apply would push (NVUE: `nv config diff` shows pending against applied)."""
        return self._check(self.commands.diff).strip()

    def discard_config(self) -> None:
        self._check(self.commands.detach)

    # --- commit ---------------------------------------------------------
    def commit_config(self, message: str = "", revert_in: int | None = None) -> None:
        if self.has_pending_commit():
            raise CommitError(f"{self.where}: a commit is pending confirmation; confirm or roll it back first")
        try:
            self._check(self.commands.commit(message, revert_in), read_timeout=max(self.timeout, 120))
            if revert_in is None and self.commands.save:
                self._check(self.commands.save)
        except CommandFailed as exc:
            raise CommitError(f"{self.where}: {exc}") from None

    def confirm_commit(self) -> None:
        revision = self._pending_confirm()
        if revision is None:
            raise CommitError(f"{self.where}: no commit is pending confirmation")
        try:
            self._check(self.commands.confirm_yes.format(revision=revision))
            if self.commands.save:
                self._check(self.commands.save)
        except CommandFailed as exc:
            raise CommitError(f"{self.where}: {exc}") from None

    def _read_json(self, command: str, what: str, kind: type, error: type[Exception]):
        """COMMAND's JSON output, which must be a KIND; ERROR naming WHAT when it cannot be read."""
        try:
            value = parse_json(self._check(command) or ("{}" if kind is dict else "[]"), what)
        except DeviceDataError as exc:
            raise error(f"{self.where}: cannot read {exc}") from None
        if not isinstance(value, kind):
            raise error(f"{self.where}: cannot read {what}: `{command}` is not a JSON "
                        f"{'object' if kind is dict else 'list'}")
        return value

    def has_pending_commit(self) -> bool:
        return self._pending_confirm() is not None

    def _pending_confirm(self) -> str | None:
        """The revision waiting for confirmation, from `nv config revision -o json` (a mapping
        revision id -> {"state": ...}; the waiting one is in state "confirm": commands.py table).
        Not from `--confirm-status`, whose output no source shows."""
        revisions = self._read_json(self.commands.revisions_json, "the revision list", dict, CommandFailed)
        waiting = sorted((str(rev) for rev, info in revisions.items()
                          if isinstance(info, dict) and info.get("state") == self.commands.confirm_state),
                         key=lambda rev: (len(rev), rev))
        return waiting[-1] if waiting else None

    def rollback(self) -> None:
        try:
            revision = self._pending_confirm()
            if revision is not None:
                self._check(self.commands.confirm_no.format(revision=revision))
                return
            revision = self._previous_revision()
            self._check(self.commands.apply_revision.format(revision=revision), read_timeout=max(self.timeout, 120))
            if self.commands.save:
                self._check(self.commands.save)
        except CommandFailed as exc:
            raise CommitError(f"{self.where}: rollback failed: {exc}") from None

    def _previous_revision(self) -> str:
        """The revision that was applied before the current one (history is newest first)."""
        events = self._read_json(self.commands.history_json, "the revision history", list, CommitError)
        applied = [rev for rev in map(_history_rev, events) if rev is not None]
        for rev in applied[1:]:
            if rev != applied[0]:
                return rev
        raise CommitError(f"{self.where}: no earlier revision to roll back to")

    # --- getters --------------------------------------------------------
    def get_config(self, retrieve: str = "all", full: bool = False, sanitized: bool = False,
                   format: str = "text") -> dict:
        config = {"running": "", "startup": "", "candidate": ""}
        if retrieve in ("all", "running"):
            config["running"] = self._check(self.commands.show_running) + "\n"
        if retrieve in ("all", "startup"):
            config["startup"] = self._check(self.commands.show_startup) + "\n"
        return config

    def nos_release(self) -> str:
        """`product-release` ("5.11.0"), else `build` ("Cumulus Linux 5.11.0") of `nv show system`."""
        system = self._json(self.commands.show_system_json)
        return str(system.get("product-release") or system.get("build", "")) if isinstance(system, dict) else ""

    def get_facts(self) -> dict:
        system = self._json(self.commands.show_system_json)
        platform = self._json(self.commands.show_platform_json)
        interfaces = self._json(self.commands.show_interface_json)
        hostname = str(system.get("hostname", ""))
        return {
            "uptime": float(system.get("uptime", -1)),
            "vendor": "NVIDIA",
            "os_version": str(system.get("product-release") or system.get("build", "")),
            "serial_number": str(platform.get("serial-number", "")),
            "model": str(platform.get("product-name", "")),
            "hostname": hostname,
            "fqdn": hostname,
            "interface_list": sorted(interfaces),
        }

    # --- operational getters (napalm models; OS-neutral builders in oper.py) ----------
    @contextlib.contextmanager
    def snapshot(self):
        """Driver extra: inside the block every operational getter answers from ONE read of
        `nv show interface -o json` (issue 26: one structured read per switch, not one per port).

        NVUE's CLI paths are its object model's paths (NVUE-Object-Model page): `nv show
        interface <p> lldp` shows the `lldp` subtree of interface <p>, and the collection read
        prints every interface's object. So the per-port answers (lldp, counters, QoS counters) are
        taken from that tree at the path their own command names; a port whose subtree is missing
        (a release printing a summary only) is read with its own command, as before. Outside a
        snapshot every getter reads afresh, as napalm's getters do."""
        self._snapshot = {}
        try:
            yield self
        finally:
            self._snapshot = None

    def _interfaces(self) -> dict:
        if self._snapshot:
            return self._snapshot
        interfaces = self._json(self.commands.show_interface_json)
        if self._snapshot is not None and isinstance(interfaces, dict):
            self._snapshot = interfaces
        return interfaces

    def _port_json(self, template: str, port: str) -> dict:
        """The answer of a per-port command (`nv show interface {port} <path> -o json`): from the
        snapshot's tree at <path> when it holds it, else from the command itself."""
        if self._snapshot:
            node = self._snapshot.get(port)
            for key in _path_after_port(template):
                node = node.get(key) if isinstance(node, dict) else None
            if isinstance(node, dict):
                return node
        return self._json(template.format(port=port))

    @staticmethod
    def _is_up(entry: dict) -> bool:
        link = entry.get("link") or {}
        if "oper-status" in link:
            return str(link["oper-status"]) == "up"
        state = link.get("state")
        return "up" in state if isinstance(state, dict) else str(state) == "up"

    def _swp_ports(self, interfaces: dict, *, up_only: bool) -> list[str]:
        return [name for name, entry in sorted(interfaces.items())
                if str((entry or {}).get("type")) == "swp" and (not up_only or self._is_up(entry or {}))]

    def get_interfaces(self) -> dict[str, models.InterfaceDict]:
        out = {}
        for name, entry in sorted(self._interfaces().items()):
            entry = entry or {}
            link = entry.get("link") or {}
            enabled = str(link.get("admin-status", "up")) == "up"
            out[name] = oper.interface(is_up=self._is_up(entry), is_enabled=enabled,
                                       description=str(entry.get("description") or ""),
                                       speed=oper.speed_mbps(link.get("speed")), mtu=int(link.get("mtu") or 0),
                                       mac_address=str(link.get("mac-address") or ""))
        return out

    def get_interfaces_ip(self) -> dict[str, dict]:
        """napalm's {interface: {"ipv4": {address: {"prefix_length": n}}}}: the addresses `nv show
        interface` reports, which are the kernel's, whoever configured them (NVUE, ifupdown2 files)."""
        out: dict[str, dict] = {}
        for name, entry in sorted(self._interfaces().items()):
            addresses = ((entry or {}).get("ip") or {}).get("address") or {}
            for address in sorted(addresses if isinstance(addresses, dict) else ()):
                ip, _, length = str(address).partition("/")
                family = "ipv6" if ":" in ip else "ipv4"
                out.setdefault(name, {}).setdefault(family, {})[ip] = {
                    "prefix_length": int(length) if length.isdigit() else 0}
        return out

    # --- day 0 proof (`deploy --day0`): what routes outside NVUE ---------------------------
    def frr_bgp_summary(self) -> dict:
        """FRR's `show bgp summary json`: BGP as bgpd runs it, from NVUE, frr.conf or a snippet."""
        return self._json(self.commands.frr_bgp_summary_json)

    def flat_files(self) -> dict[str, str]:
        """/etc/network/interfaces and /etc/frr/frr.conf as they are on the switch (NVUE renders
        both; automation may have written them instead: DEVICE_STATE.md)."""
        return {"/etc/network/interfaces": self._check(self.commands.show_interfaces_file),
                "/etc/frr/frr.conf": self._check(self.commands.show_frr_conf)}

    def _lldp(self, port: str) -> list[dict]:
        neighbors = self._port_json(self.commands.show_lldp_json, port).get("neighbor") or {}
        return [entry | {"_id": nid} for nid, entry in sorted(neighbors.items()) if isinstance(entry, dict)]

    def get_lldp_neighbors(self) -> dict[str, list[models.LLDPNeighborDict]]:
        out = {}
        for port in self._swp_ports(self._interfaces(), up_only=True):
            found = [oper.lldp_neighbor((n.get("chassis") or {}).get("system-name") or n["_id"],
                                        (n.get("port") or {}).get("name") or "") for n in self._lldp(port)]
            if found:
                out[port] = found
        return out

    def get_lldp_neighbors_detail(self, interface: str = "") -> dict[str, list[models.LLDPNeighborDetailDict]]:
        ports = [interface] if interface else self._swp_ports(self._interfaces(), up_only=True)
        out = {}
        for port in ports:
            found = []
            for n in self._lldp(port):
                chassis, remote = n.get("chassis") or {}, n.get("port") or {}
                found.append(oper.lldp_neighbor_detail(
                    remote_port=remote.get("name") or "", remote_port_description=remote.get("description") or "",
                    remote_chassis_id=chassis.get("chassis-id") or "",
                    remote_system_name=chassis.get("system-name") or n["_id"],
                    remote_system_description=chassis.get("system-description") or "",
                    capabilities=chassis.get("capability") or []))
            if found:
                out[port] = found
        return out

    def get_interfaces_counters(self) -> dict[str, models.InterfaceCounterDict]:
        out = {}
        for port in self._swp_ports(self._interfaces(), up_only=False):
            c = self._port_json(self.commands.show_counters_json, port)
            out[port] = oper.counters(
                tx_errors=c.get("out-errors"), rx_errors=c.get("in-errors"),
                tx_discards=c.get("out-drops"), rx_discards=c.get("in-drops"),
                tx_octets=c.get("out-bytes"), rx_octets=c.get("in-bytes"),
                tx_unicast_packets=c.get("out-ucast-pkts"), rx_unicast_packets=c.get("in-ucast-pkts"),
                tx_multicast_packets=c.get("out-mcast-pkts"), rx_multicast_packets=c.get("in-mcast-pkts"),
                tx_broadcast_packets=c.get("out-bcast-pkts"), rx_broadcast_packets=c.get("in-bcast-pkts"))
        return out

    def get_bgp_neighbors(self) -> dict:
        router = self._json(self.commands.show_router_bgp_json)
        if not router:
            return {}
        neighbors = self._json(self.commands.show_bgp_neighbors_json)
        peers = {}
        for nid, n in neighbors.items():
            n = n or {}
            family = ((n.get("address-family") or {}).get("ipv4-unicast") or {})
            up = str(n.get("state", "")).lower() == "established"
            received = int(family.get("rx-prefix", 0) or 0)
            peers[str(nid)] = oper.bgp_peer(
                local_as=(n.get("local-as") or {}).get("asn") or router.get("autonomous-system") or 0,
                remote_as=n.get("remote-as") or 0, remote_id=str(n.get("peer-router-id") or "0.0.0.0"),
                is_up=up, is_enabled=str(n.get("admin-state", "enabled")) != "disabled",
                description=str(n.get("description") or ""),
                uptime=int(n.get("up-time") or 0) if up else -1,
                received=received, accepted=received, sent=int(family.get("tx-prefix", 0) or 0))
        return oper.bgp_neighbors(str(router.get("router-id") or "0.0.0.0"), peers)

    def get_pfc_ecn_counters(self) -> dict[str, dict]:
        """Driver extra: per port PFC pause frames per switch-priority and ECN-marked packets (oper.py)."""
        out = {}
        for port in self._swp_ports(self._interfaces(), up_only=False):
            pfc = self._port_json(self.commands.show_pfc_json, port)
            stats = self._port_json(self.commands.show_qos_port_json, port)
            out[port] = oper.pfc_ecn(
                rx_pause={int(p): (v or {}).get("rx-pause-frames", 0) for p, v in pfc.items() if str(p).isdigit()},
                tx_pause={int(p): (v or {}).get("tx-pause-frames", 0) for p, v in pfc.items() if str(p).isdigit()},
                ecn_marked=(stats.get("tx-stats") or {}).get("ecn-marked-packets", 0))
        return out

    def get_pfc_watchdog_counters(self) -> dict[str, dict]:
        """Driver extra (oper.pfc_watchdog): the PFC storms each port's watchdog detected, per
        switch-priority (`qos pfc-watchdog` deadlock-count, 5.6+; releases before have no watchdog:
        {}). In a snapshot a port whose object holds no `qos pfc-watchdog` has none to read."""
        version = self.optional_args.get("cumulus_version")
        if version and _version_tuple(version) < self.commands.pfc_watchdog_from:
            return {}
        out = {}
        for port in self._swp_ports(self._interfaces(), up_only=False):
            if self._snapshot and not ((self._snapshot.get(port) or {}).get("qos") or {}).get("pfc-watchdog"):
                continue
            node = self._port_json(self.commands.show_pfc_watchdog_json, port)
            prios = node.get("switch-priority") if str(node.get("state", "")).startswith("enable") else None
            out[port] = oper.pfc_watchdog({int(p): ((v or {}).get("deadlock-count"), None)
                                           for p, v in _entries(prios) if str(p).isdigit()})
        return out

    # --- hardware, optics, FEC, time, routes (oper.py lists the shapes; lab/nvue_oper.py the JSON) ---
    def get_environment(self) -> models.EnvironmentDict:
        """`nv show platform environment -o json`: fans and PSUs by state; a sensor is an alert at or
        above its `max`, critical at or above `crit` (or when NVUE's own state says so)."""
        env = self._json(self.commands.show_environment_json)
        temperatures = {}
        for name, sensor in _entries(env.get("temperature")):
            current = _number(sensor.get("current"))
            if current is None:
                continue
            high, crit = _number(sensor.get("max")), _number(sensor.get("crit"))
            state = str(sensor.get("state", "ok")).lower()
            critical = state == "critical" or (crit is not None and current >= crit)
            temperatures[name] = (current, critical or state != "ok" or (high is not None and current >= high),
                                  critical)
        return oper.environment(fans={n: _ok(f) for n, f in _entries(env.get("fan"))},
                                psus={n: _ok(p) for n, p in _entries(env.get("psu"))}, temperatures=temperatures)

    def get_transceivers(self) -> dict[str, dict]:
        """Driver extra (oper.py): every port's module from one `nv show platform transceiver -o json`."""
        out = {}
        for port, entry in _entries(self._json(self.commands.show_transceivers_json)):
            present = str(entry.get("status", "")).lower() not in ("unplugged", "absent", "not present", "")
            cable = str(entry.get("cable-type", "")).lower()
            media = "DAC" if "copper" in cable else "AOC" if "optical" in cable or "active" in cable else ""
            lanes = [lane for _, lane in sorted(_entries(entry.get("channel")), key=lambda kv: _lane(kv[0]))]
            thresholds = {}
            for key, source in (("rx_power_dbm", "rx-power"), ("tx_power_dbm", "tx-power")):
                limits = _limits(lanes[0].get(source)) if lanes and isinstance(lanes[0].get(source), dict) else None
                if limits:
                    thresholds[key] = limits
            temp = entry.get("temperature") if isinstance(entry.get("temperature"), dict) else {}
            if _limits(temp):
                thresholds["temperature_c"] = _limits(temp)
            out[port] = oper.transceiver(
                present=present, media=media,
                rx_power_dbm=[v for v in (_number((lane.get("rx-power") or {}).get("power")) for lane in lanes)
                              if v is not None],
                tx_power_dbm=[v for v in (_number((lane.get("tx-power") or {}).get("power")) for lane in lanes)
                              if v is not None],
                temperature_c=_number(temp.get("temperature")), thresholds=thresholds)
        return out

    def get_optics(self) -> dict[str, models.OpticsDict]:
        return oper.optics(self.get_transceivers())

    def get_phy_counters(self) -> dict[str, dict]:
        """Driver extra (oper.py): FEC codewords and pre-FEC BER (`link phy-detail`), carrier transitions
        (`counters`), per swp port."""
        out = {}
        for port in self._swp_ports(self._interfaces(), up_only=False):
            # inside snapshot(): both from the one interface-tree read, as the other per-port getters
            phy = self._port_json(self.commands.show_phy_json, port)
            counters = self._port_json(self.commands.show_counters_json, port)
            out[port] = oper.phy_counters(fec_corrected=phy.get("fec-corrected-codewords"),
                                          fec_uncorrected=phy.get("fec-uncorrected-codewords"),
                                          pre_fec_ber=_number(phy.get("raw-ber")),
                                          carrier_transitions=counters.get("carrier-transitions"))
        return out

    def get_ntp_stats(self) -> list[models.NTPStats]:
        """One peer per configured server; the one NVUE names as `reference` while `status` is
        synchronised is the synchronized peer (NTP page: status synchronised | unsynchronised)."""
        ntp = self._json(self.commands.show_ntp_json)
        synced = str(ntp.get("status", "")).lower() in ("synchronised", "synchronized")
        reference = str(ntp.get("reference") or "")
        return [oper.ntp_peer(remote=server, synchronized=synced and server == reference, referenceid=reference,
                              offset_ms=_number(ntp.get("offset")) or 0.0)
                for server, _ in _entries(ntp.get("server"))]

    def get_route_next_hops(self) -> dict[str, dict]:
        """Driver extra (oper.py): the IPv4 RIB's routes with their next-hop group resolved
        (`router rib ipv4 route` gives the group id, `router nexthop` its resolved-via paths)."""
        routes = self._json(self.commands.show_routes_json)
        groups = dict(_entries(self._json(self.commands.show_nexthops_json).get("rib")))
        out = {}
        for prefix, route in _entries(routes):
            entries = [e for _, e in sorted(_entries(route.get("route-entry")))]
            chosen = next((e for e in entries if "selected" in (e.get("flags") or {})), entries[0] if entries else None)
            if chosen is None:
                continue
            group = groups.get(str(chosen.get("nexthop-group-id")), {})
            hops = [via for via, detail in _entries(group.get("resolved-via"))
                    if "active" in ((detail or {}).get("flags") or {"active": {}})]
            out[prefix] = oper.route(protocol=str(chosen.get("protocol", "")), next_hops=hops)
        return out

    def _json(self, command: str) -> dict:
        output = self._check(command)
        try:
            return parse_json(output, f"`{command}`") if output else {}
        except DeviceDataError as exc:       # hostile or broken output: this switch fails, the run goes on
            # JSON that stops short is a read that did not complete (retried once by the readers);
            # a size or depth cap is the device's answer, refused.
            error = ReadIncomplete if "not JSON" in str(exc) else CommandFailed
            raise error(f"{self.where}: {exc}") from None


@functools.cache
def _version_tuple(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in str(version).split(".")[:2] if p.isdigit())


def _path_after_port(template: str) -> tuple[str, ...]:
    """`nv show interface {port} counters qos pfc-stats -o json` -> ("counters", "qos", "pfc-stats")."""
    words = shlex.split(template)
    return tuple(words[words.index("{port}") + 1:words.index("-o")])


def _entries(node) -> list[tuple[str, dict]]:
    """(key, mapping) pairs of an NVUE object keyed by id; anything else a device printed there is dropped."""
    return [(str(k), v) for k, v in sorted(node.items()) if isinstance(v, dict)] if isinstance(node, dict) else []


_NUMBER = re.compile(r"^\s*([-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)")


def _number(value) -> float | None:
    """25 / "25 ms" / "-1.60 dBm" / "1.00e-09" -> float; None when no finite number leads."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value) if math.isfinite(value) else None
    match = _NUMBER.match(str(value or ""))
    return float(match.group(1)) if match else None


def _limits(node) -> tuple[float, float] | None:
    low, high = _number((node or {}).get("low-alarm-threshold")), _number((node or {}).get("high-alarm-threshold"))
    return (low, high) if low is not None and high is not None else None


def _lane(key: str) -> int:
    digits = "".join(ch for ch in key if ch.isdigit())
    return int(digits) if digits else 0


def _ok(entry: dict) -> bool:
    return str(entry.get("state", "")).lower() in ("ok", "good", "present")


def _history_rev(event) -> str | None:
    """The revision an `nv config history -o json` entry applied. Its key is spelled `rev-id`
    (NVIDIA's NVOS test harness, 2024) or `rev_id` (the same harness's 2022 sample), at the top
    of the entry or one level down (`apply-meta`): the harness flattens one level before reading
    it, and so does this (commands.py table)."""
    if not isinstance(event, dict):
        return None
    for scope in [event, *(v for v in event.values() if isinstance(v, dict))]:
        for key in ("rev-id", "rev_id"):
            if isinstance(scope.get(key), (str, int)) and not isinstance(scope.get(key), bool):
                return str(scope[key])
    return None


def load_nvue_document(text: str) -> dict:
    """The `set` part of an NVUE document with every scalar a string (on/off stay strings)."""
    merged: dict = {}
    for item in parse_yaml(text, "the NVUE document") or []:
        if isinstance(item, dict) and isinstance(item.get("set"), dict):
            merged.update(item["set"])
    return merged
