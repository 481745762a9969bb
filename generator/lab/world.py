"""The lab's physical world: which cable is plugged where, and what the switches see through it.

`lab up --wiring FILE` (DESIGN.md) gives a CSV with header `a_device,a_port,b_device,b_port`
and optional columns `state` (up|down), `crc_errors` (integer) and `lldp_portid` (mac|ifname: how
the host end's lldpd announces that port, below) and `cable` (DAC|AOC: the assembly installed,
whose module reports its media) and `rate` (0-1: a degraded cable carries that share of its
speed, lab/perftest.py); one row per installed cable, host ends included. The plan's
`cabling.csv` is also a valid wiring file (its `speed` and `length_m` columns are ignored), and
it is the default world. A plan link with no
row is an unplugged cable.

What the simulated switches derive from it (`Fabric`):

- link state: up only if a cable is installed with state up, the port is admin-up in the
  switch's applied config, and, when the far end is a lab switch, that port is admin-up too;
- LLDP: the far end's identity on an up link. A host end announces what lldpd announces by
  default (lldpd src/daemon/interfaces.c interfaces_helper_port_name_desc; lldpcli(8)
  `configure lldp portidsubtype`): system name = host name, port ID = the NIC's MAC (subtype
  mac), port description = the netdev. With `lldp_portid` ifname on its cable the host runs
  `configure lldp portidsubtype ifname`: port ID = the netdev (subtype ifname), description
  the netdev too (no ifalias). The NIC's MAC is the world's `host_macs` entry (`lab up` takes it
  from the discovery file, `hosts discover` reads /sys/class/net/<netdev>/address) or, without
  one, host_nic_mac(): a stable locally administered address per host and netdev. The chassis
  ID is one stable MAC per host (lldpd takes one of the host's interface MACs);
- counters: traffic and `crc_errors` are rates per second, integrated from the lab's start, so
  two reads a few seconds apart differ; CRC/FCS errors count as received errors at every
  *switch* end of that cable (a host end is not simulated). PFC pause and ECN-marked rates come
  from the device's fault file (`counters` key, see faults.py);
- BGP: a configured neighbor is established only when the link is up, the far switch has the
  matching neighbor back (unnumbered on the same cable, or numbered with each side's address
  being the other's neighbor address), each side's `remote-as` matches the other's ASN
  (`external`: different, `internal`: equal, a number: equal), BGP is enabled on both, and
  SESSION_SETTLE_S have passed since all of that first held (a session still connecting);
- prefix counts, approximated honestly: every switch originates its connected prefixes (lo and
  up ports) that its redistribute route-map permits, plus `network` statements; prefixes then
  flow along established sessions as a path vector with eBGP loop prevention (a switch rejects
  a path that already holds its ASN), one best path per origin (fewest AS hops, ties broken by
  name). `rx` from a neighbor counts the origins whose best path at that neighbor is acceptable
  to us; `tx` counts what we hold that did not come from that neighbor. No MED, local-pref,
  communities, aggregation, add-path or timers are modelled;
- ECMP next hops (`next_hops`): toward another switch's loopback, the established sessions whose
  neighbor offers a loop-free path of the shortest length, restricted (as FRR does without
  `bgp bestpath as-path multipath-relax`) to those with the best path's exact AS path; the best
  among equal lengths is the lowest AS sequence (a stand-in for FRR's router-id tie-break). A
  narrower group comes from the world, as on a real fabric: an uplink down or a session that
  does not come up removes its next hop.
"""

from __future__ import annotations

import contextlib
import csv
import hashlib
import io
import ipaddress
import json
import threading
import time
import zlib
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from generator.common.atomic_write import write_atomic
from generator.common.errors import FabricgenError

REQUIRED_COLUMNS = ("a_device", "a_port", "b_device", "b_port")
OPTIONAL_COLUMNS = ("state", "crc_errors", "lldp_portid", "cable", "rate")
# lldpcli(8) `configure lldp portidsubtype ifname|macaddress`: the host end's LLDP port ID
LLDP_PORTIDS = ("mac", "ifname")
# The plan's cabling.csv (render/cabling.py) carries these too: accepted and ignored.
IGNORED_COLUMNS = ("speed", "length_m")
# `cable`: the cable assembly installed (its module reports its media, platform_oper.py)
CABLE_TYPES = ("DAC", "AOC")
WORLD_FILE = "world.json"
SESSION_SETTLE_S = 1.0
# Lab traffic on an up link: enough to make counters move, small enough to read.
PACKETS_PER_S = 1000
OCTETS_PER_PACKET = 1024
# a RoCE frame of a flow: 4096-byte payload (the RoCE MTU the plan's host MTU gives) plus headers
FLOW_FRAME_OCTETS = 4096 + 78


class WiringError(FabricgenError, ValueError):
    """A wiring file is unusable; the message is one line naming file:line."""


@dataclass(frozen=True)
class Cable:
    a_device: str
    a_port: str
    b_device: str
    b_port: str
    state: str = "up"
    crc_errors: int = 0        # CRC/FCS errors per second at each switch end while the link is up
    line: int = 0
    lldp_portid: str = "mac"   # a host end's LLDP port ID: its MAC (lldpd's default) or its ifname
    cable: str = ""            # DAC | AOC; "" when the wiring does not say
    rate: float = 1.0          # share of its speed a degraded cable still carries (lab/perftest.py)

    def far(self, device: str, port: str) -> tuple[str, str]:
        if (device, port) == (self.a_device, self.a_port):
            return self.b_device, self.b_port
        return self.a_device, self.a_port


@dataclass(frozen=True)
class Flow:
    """Traffic through one switch port at a rate during a window (epoch seconds), as a simulated
    host's ib_write_bw puts it there (lab/perftest.py qp_paths gives the cables a pair crosses)."""
    device: str
    port: str
    tx_gbps: float = 0.0
    rx_gbps: float = 0.0
    start: float = 0.0
    end: float = 0.0

    def octets(self, since: float, now: float) -> tuple[float, float]:
        """(tx, rx) octets of the window's part in [since, now]."""
        seconds = max(0.0, min(now, self.end) - max(since, self.start))
        return self.tx_gbps * 1e9 / 8 * seconds, self.rx_gbps * 1e9 / 8 * seconds


@dataclass(frozen=True)
class World:
    cables: tuple[Cable, ...] = ()
    # (host, netdev, MAC) of host NICs whose MAC is known (the discovery file); others get host_nic_mac()
    host_macs: tuple[tuple[str, str, str], ...] = ()
    flows: tuple[Flow, ...] = ()
    _index: dict = field(default_factory=dict, compare=False, repr=False)
    _macs: dict = field(default_factory=dict, compare=False, repr=False)
    # per device, its cables and their far devices (cables_of): kept on the instance, since a key
    # holding the World would hash and compare every cable (1,024 at fleet size) on each lookup
    _by_device: dict = field(default_factory=dict, init=False, compare=False, repr=False)

    def __post_init__(self):
        for cable in self.cables:
            self._index[(cable.a_device, cable.a_port)] = cable
            self._index[(cable.b_device, cable.b_port)] = cable
        for host, netdev, mac in self.host_macs:
            self._macs[(host, netdev)] = mac

    def cable_at(self, device: str, port: str) -> Cable | None:
        return self._index.get((device, port))

    def cables_of(self, device: str) -> list[tuple[Cable, str]]:
        """(cable, far device) of every cable at DEVICE, ordered by (a_device, a_port)."""
        found = self._by_device.get(device)
        if found is None:
            found = sorted(((c, c.far(device, c.a_port if c.a_device == device else c.b_port)[0])
                            for c in self.cables if device in (c.a_device, c.b_device)),
                           key=lambda pair: (pair[0].a_device, pair[0].a_port))
            self._by_device[device] = found
        return found

    def host_mac(self, host: str, netdev: str) -> str:
        """The MAC of a host NIC: the known one, else the lab's stable made-up one."""
        return self._macs.get((host, netdev)) or host_nic_mac(host, netdev)

    def to_dict(self) -> dict:
        return {"cables": [{k: v for k, v in asdict(c).items() if k != "line"} for c in self.cables],
                "host_macs": [list(entry) for entry in self.host_macs],
                "flows": [asdict(f) for f in self.flows]}

    @classmethod
    def from_dict(cls, data: dict) -> World:
        return cls(tuple(Cable(**c) for c in data.get("cables", [])),
                   tuple(tuple(entry) for entry in data.get("host_macs", [])),
                   tuple(Flow(**f) for f in data.get("flows", [])))


def with_host_macs(world: World, macs: dict[tuple[str, str], str]) -> World:
    """WORLD with the MACs of host NICs ((host, netdev) -> MAC) its host ends announce."""
    known = {(h, n): m for h, n, m in world.host_macs} | {k: v.lower() for k, v in macs.items()}
    return World(world.cables, tuple((h, n, m) for (h, n), m in sorted(known.items())), world.flows)


def with_rails_down(world: World, host: str, down: set[str], netdevs: set[str]) -> World:
    """WORLD with the cables of HOST's rails in NETDEVS down where in DOWN, up otherwise (a lab
    host's `rails_down` fault): the leaf's port at the far end loses link with the host's."""
    cables = tuple(replace(c, state="down" if end in down else "up")
                   if (end := c.b_port if c.b_device == host else c.a_port if c.a_device == host else None) in netdevs
                   else c for c in world.cables)
    return World(cables, world.host_macs, world.flows)


def host_nic_mac(host: str, netdev: str) -> str:
    """A stable, locally administered unicast MAC for a simulated host NIC (IEEE 802: bit 1 of the
    first octet set = locally administered, bit 0 clear = unicast). 40 hashed bits: no two NICs of
    a lab share one in practice."""
    digest = hashlib.blake2b(f"{host}/{netdev}".encode(), digest_size=5).digest()
    return ":".join(f"{o:02x}" for o in (0x02, *digest))


def parse_wiring(text: str, source: str = "wiring") -> World:
    """The cables of a wiring CSV; the first bad row raises WiringError('source:line: ...')."""
    lines = text.splitlines()
    rows = [(n, line) for n, line in enumerate(lines, 1) if line.strip() and not line.lstrip().startswith("#")]
    if not rows:
        raise WiringError(f"{source}:1: empty wiring file; the header is {','.join(REQUIRED_COLUMNS)}"
                          f"[,{','.join(OPTIONAL_COLUMNS)}]")
    header_line, header_text = rows[0]
    header = [h.strip() for h in next(csv.reader([header_text]))]
    missing = [c for c in REQUIRED_COLUMNS if c not in header]
    unknown = [c for c in header if c not in (*REQUIRED_COLUMNS, *OPTIONAL_COLUMNS, *IGNORED_COLUMNS)]
    if missing or unknown:
        what = f"missing column(s) {', '.join(missing)}" if missing else f"unknown column(s) {', '.join(unknown)}"
        raise WiringError(f"{source}:{header_line}: {what}; the header is {','.join(REQUIRED_COLUMNS)} "
                          f"with optional {','.join(OPTIONAL_COLUMNS)}")
    if len(set(header)) != len(header):
        raise WiringError(f"{source}:{header_line}: a column appears twice in the header")
    cables: list[Cable] = []
    seen: dict[tuple[str, str], int] = {}
    for number, line in rows[1:]:
        values = [v.strip() for v in next(csv.reader(io.StringIO(line)))]
        if len(values) != len(header):
            raise WiringError(f"{source}:{number}: {len(values)} field(s) where the header has {len(header)}")
        row = dict(zip(header, values, strict=True))
        for column in REQUIRED_COLUMNS:
            if not row[column] or any(ch.isspace() for ch in row[column]):
                raise WiringError(f"{source}:{number}: {column} is empty or holds a space: {row[column]!r}")
        state = (row.get("state") or "up").lower()
        if state not in ("up", "down"):
            raise WiringError(f"{source}:{number}: state {row['state']!r}: use up or down")
        crc_text = row.get("crc_errors") or "0"
        if not crc_text.isdigit():
            raise WiringError(f"{source}:{number}: crc_errors {crc_text!r}: give a whole number >= 0")
        portid = (row.get("lldp_portid") or "mac").lower()
        if portid not in LLDP_PORTIDS:
            raise WiringError(f"{source}:{number}: lldp_portid {row['lldp_portid']!r}: use mac (lldpd's default) "
                              "or ifname (lldpd configured with portidsubtype ifname)")
        kind = (row.get("cable") or "").upper()
        if kind and kind not in CABLE_TYPES:
            raise WiringError(f"{source}:{number}: cable {row['cable']!r}: use {' or '.join(CABLE_TYPES)}")
        rate_text = row.get("rate") or "1"
        try:
            rate = float(rate_text)
        except ValueError:
            rate = -1.0
        if not 0 < rate <= 1:
            raise WiringError(f"{source}:{number}: rate {rate_text!r}: give the share of its speed the cable "
                              "carries, above 0 and at most 1 (0.9: degraded to 90 %)")
        cable = Cable(row["a_device"], row["a_port"], row["b_device"], row["b_port"], state, int(crc_text), number,
                      portid, kind, rate)
        ends = [(cable.a_device, cable.a_port), (cable.b_device, cable.b_port)]
        if ends[0] == ends[1]:
            raise WiringError(f"{source}:{number}: {ends[0][0]}:{ends[0][1]} is cabled to itself")
        for end in ends:
            if end in seen:
                raise WiringError(f"{source}:{number}: {end[0]}:{end[1]} already has a cable (line {seen[end]}); "
                                  "a port takes one cable")
            seen[end] = number
        cables.append(cable)
    return World(tuple(cables))


def load_wiring(path: str | Path) -> World:
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as exc:
        raise WiringError(f"{path}: cannot read the wiring file: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise WiringError(f"{path}:1: not a text (CSV) file") from None
    return parse_wiring(text, str(path))


def check_devices(world: World, known: set[str], source: str, hosts: set[str] | None = None) -> None:
    """Every device named in the wiring is a switch or host of the plan (catches typos); with HOSTS,
    an `lldp_portid` other than the default is on a cable with a host end (only a host runs lldpd
    as the column says)."""
    for cable in world.cables:
        for device in (cable.a_device, cable.b_device):
            if device not in known:
                raise WiringError(f"{source}:{cable.line}: {device!r} is not a switch or host of the plan")
        if hosts is not None and cable.lldp_portid != "mac" and not {cable.a_device, cable.b_device} & hosts:
            raise WiringError(f"{source}:{cable.line}: lldp_portid {cable.lldp_portid} is how a host's lldpd "
                              f"announces its port; {cable.a_device} and {cable.b_device} are switches")


def write_world(directory: Path, world: World) -> Path:
    path = Path(directory) / WORLD_FILE
    write_atomic(path, json.dumps(world.to_dict(), indent=1, sort_keys=True), fsync=False)
    return path


class WorldSource:
    """DIR/world.json, re-read when it changes (a test can unplug a cable in a running lab)."""

    def __init__(self, path: Path | None):
        self.path = path
        self._stamp: tuple[int, int] | None = None
        self._world = World()

    def current(self) -> tuple[World, tuple[int, int] | None]:
        if self.path is None:
            return self._world, None
        try:
            st = self.path.stat()
        except FileNotFoundError:
            self._stamp, self._world = None, World()
            return self._world, None
        stamp = (st.st_mtime_ns, st.st_size)
        if stamp != self._stamp:
            try:
                self._world = World.from_dict(json.loads(self.path.read_text() or "{}"))
                self._stamp = stamp
            except (ValueError, OSError, TypeError):
                pass  # half-written: keep the previous world
        return self._world, self._stamp


# --- what a device tells the world about its applied config -------------------------------
@dataclass(frozen=True)
class PortConfig:
    admin_up: bool
    speed: str | None          # "400G" as configured; None: not set (auto)
    mtu: int
    addresses: tuple[str, ...] = ()   # interface prefixes, e.g. "172.16.0.0/31"
    description: str = ""


@dataclass(frozen=True)
class NeighborConfig:
    id: str                    # the port (unnumbered) or the peer address (numbered)
    numbered: bool
    remote_as: str | int       # "external" | "internal" | ASN
    enabled: bool = True


@dataclass(frozen=True)
class BgpConfig:
    asn: int
    router_id: str
    enabled: bool
    neighbors: dict[str, NeighborConfig]
    redistribute_connected: bool
    announces: Callable[[str], bool]     # the redistribute route-map, for one connected prefix
    networks: tuple[str, ...] = ()


@dataclass(frozen=True)
class Link:
    up: bool
    reason: str                 # why down ("" when up)
    far_device: str | None = None
    far_port: str | None = None
    far_is_switch: bool = False
    crc_errors: int = 0


@dataclass(frozen=True)
class LldpNeighbor:
    system_name: str
    port_id: str
    port_description: str
    chassis_id: str
    management_ip: str
    system_description: str
    capabilities: tuple[str, ...]
    # lldpd's names of the port ID subtypes (src/lib/atoms/port.c port_id_subtype_map): ifname,
    # ifalias, local, mac, ip
    port_id_subtype: str = "ifname"


@dataclass(frozen=True)
class Session:
    neighbor: str
    state: str                  # established | connect | active | idle
    local_as: int
    remote_as: int              # the peer's ASN once TCP connects, else the configured number or 0
    peer_router_id: str
    port: str | None
    up_since: float | None
    rx_prefixes: int = 0
    tx_prefixes: int = 0
    enabled: bool = True


def chassis_mac(name: str) -> str:
    """A stable, locally administered MAC for a simulated chassis."""
    value = zlib.crc32(name.encode())
    octets = [0x02, 0x1C, (value >> 24) & 0xFF, (value >> 16) & 0xFF, (value >> 8) & 0xFF, value & 0xFF]
    return ":".join(f"{o:02x}" for o in octets)


def _asn_matches(spec: str | int, mine: int, theirs: int) -> bool:
    if spec == "external":
        return theirs != mine
    if spec == "internal":
        return theirs == mine
    try:
        return int(spec) == theirs
    except (TypeError, ValueError):
        return False


class _Accumulator:
    """Monotonic counters from rates: integrated between reads, starting at the lab's start."""

    def __init__(self, start: float):
        self.last = start
        self.totals: dict[str, float] = {}

    def advance(self, now: float, rates: dict[str, float]) -> dict[str, int]:
        elapsed = max(0.0, now - self.last)
        for key, rate in rates.items():
            self.totals[key] = self.totals.get(key, 0.0) + rate * elapsed
        self.last = now
        return {k: int(v) for k, v in self.totals.items()}


class Fabric:
    """The world joined with every lab device's applied config; the devices ask it at show time.

    Devices take part by duck typing: `oper_ports() -> {port: PortConfig}`,
    `oper_bgp() -> BgpConfig | None`, `config_token()`, `hostname`, `lldp_description`,
    `mgmt_ip`. A device without them (an OS the world does not model yet) has no up ports.
    """

    def __init__(self, source: WorldSource, devices: dict | None = None, *, clock=time.time):
        self.source = source
        self.devices: dict = dict(devices or {})
        self.clock = clock
        self.started = clock()
        self._ready_since: dict[tuple[str, str], float] = {}
        self._counters: dict[tuple[str, str], _Accumulator] = {}
        self._cache_key = None
        self._cache: dict = {}
        self._frozen_key = None
        self._lock = threading.Lock()

    # --- inputs ---------------------------------------------------------------------------
    def world(self) -> World:
        return self.source.current()[0]

    def _ports(self, name: str) -> dict[str, PortConfig]:
        device = self.devices.get(name)
        getter = getattr(device, "oper_ports", None)
        return getter() if getter else {}

    def _bgp(self, name: str) -> BgpConfig | None:
        device = self.devices.get(name)
        getter = getattr(device, "oper_bgp", None)
        return getter() if getter else None

    def _key(self):
        tokens = tuple(sorted((n, getattr(d, "config_token", lambda: None)()) for n, d in self.devices.items()))
        return self.source.current()[1], tokens

    @contextlib.contextmanager
    def frozen(self):
        """While one answer is built. Devices build an answer synchronously on the lab's event
        loop, so no config and no world file changes meanwhile: the key of both is taken once,
        not once per port (a 128-port `nv show interface -o json` asks the world ~500 times)."""
        outer = self._frozen_key is None
        if outer:
            self._frozen_key = self._key()
        try:
            yield self
        finally:
            if outer:
                self._frozen_key = None

    def _cached(self, what: str, build):
        key = self._frozen_key or self._key()
        if key != self._cache_key:
            self._cache_key, self._cache = key, {}
        if what not in self._cache:
            self._cache[what] = build()
        return self._cache[what]

    # --- physical layer -------------------------------------------------------------------
    def port_config(self, device: str, port: str) -> PortConfig | None:
        return self._ports(device).get(port)

    def link(self, device: str, port: str) -> Link:
        return self._cached(("link", device, port), lambda: self._link(device, port))

    def _link(self, device: str, port: str) -> Link:
        config = self._ports(device).get(port)
        cable = self.world().cable_at(device, port)
        far = cable.far(device, port) if cable else (None, None)
        far_is_switch = far[0] in self.devices
        common = {"far_device": far[0], "far_port": far[1], "far_is_switch": far_is_switch}
        if config is None or not config.admin_up:
            return Link(False, "admin down", **common)
        if cable is None:
            return Link(False, "no cable")
        if cable.state != "up":
            return Link(False, "cable down", **common)
        if far_is_switch:
            far_config = self._ports(far[0]).get(far[1])
            if far_config is None or not far_config.admin_up:
                return Link(False, "far end admin down", **common)
        return Link(True, "", crc_errors=cable.crc_errors, **common)

    def lldp(self, device: str, port: str) -> LldpNeighbor | None:
        link = self.link(device, port)
        if not link.up:
            return None
        if link.far_is_switch:
            return self._switch_end(link.far_device, link.far_port)
        # A GPU server running lldpd (module docstring): its MAC as port ID by default, its netdev
        # with `portidsubtype ifname`; the netdev is the port description either way.
        world = self.world()
        cable = world.cable_at(device, port)
        host, netdev = link.far_device, link.far_port
        if cable is not None and cable.lldp_portid == "ifname":
            port_id, subtype = netdev, "ifname"
        else:
            port_id, subtype = world.host_mac(host, netdev), "mac"
        return LldpNeighbor(host, port_id, netdev, chassis_mac(host), "", "Linux (lldpd on a GPU server)",
                            ("station",), subtype)

    def _switch_end(self, device: str, port: str) -> LldpNeighbor:
        """What a lab switch announces on PORT."""
        peer = self.devices[device]
        config = self._ports(device).get(port)
        port_id, description = port, (config.description if config else "") or port
        subtype = "ifname"          # Cumulus: the swp name
        # A device may announce its port under another id than the world's name (optional
        # `lldp_port(port) -> (port id, description)`: SONiC's lldpmgrd sends the alias).
        announce = getattr(peer, "lldp_port", None)
        if announce is not None:
            port_id, description = announce(port)
            subtype = "local"       # lldpmgrd: `portidsubtype local <alias>`
        return LldpNeighbor(peer.hostname, port_id, description, chassis_mac(device),
                            str(getattr(peer, "mgmt_ip", "")), str(getattr(peer, "lldp_description", "")),
                            ("bridge", "router"), subtype)

    def host_lldp(self, host: str, netdev: str) -> LldpNeighbor | None:
        """What a lab GPU server's lldpd hears on a rail: the switch at the far end of its cable,
        while that link is up (the same link the switch's own LLDP answer needs)."""
        cable = self.world().cable_at(host, netdev)
        if cable is None:
            return None
        device, port = cable.far(host, netdev)
        if device not in self.devices or not self.link(device, port).up:
            return None
        return self._switch_end(device, port)

    def counters(self, device: str, port: str, extra_rates: dict[str, float] | None = None) -> dict[str, int]:
        """Counter totals of one port; extra_rates (per second) come from the device's faults."""
        link = self.link(device, port)
        rates: dict[str, float] = {}
        if link.up:
            rates = {"rx_packets": PACKETS_PER_S, "tx_packets": PACKETS_PER_S,
                     "rx_octets": PACKETS_PER_S * OCTETS_PER_PACKET, "tx_octets": PACKETS_PER_S * OCTETS_PER_PACKET,
                     "rx_fcs_errors": float(link.crc_errors)}
        rates.update(extra_rates or {})
        with self._lock:
            accumulator = self._counters.setdefault((device, port), _Accumulator(self.started))
            now = self.clock()
            totals = accumulator.advance(now, rates)
        return self._with_flows(device, port, link, totals, now)

    def _with_flows(self, device: str, port: str, link: Link, totals: dict[str, int], now: float) -> dict[str, int]:
        """TOTALS plus the world's flows through this port since the lab started (totals, not rates:
        a window's part in [start, now] only grows, so the counters stay monotonic). Frames that
        arrive over a degraded cable (`rate` below 1) arrive corrupted in that share: the port
        counts them as FCS errors, not as received octets (the receiving MAC checks the FCS and
        counts a bad one: IEEE 802.3 clause 30.3.1.1.6 aFrameCheckSequenceErrors)."""
        flows = [f for f in self.world().flows if (f.device, f.port) == (device, port)]
        if not flows or not link.up:
            return totals
        cable = self.world().cable_at(device, port)
        share = cable.rate if cable is not None else 1.0
        tx = rx = 0.0
        for flow in flows:
            t, r = flow.octets(self.started, now)
            tx, rx = tx + t, rx + r
        out = dict(totals)
        out["tx_octets"] = out.get("tx_octets", 0) + int(tx)
        out["tx_packets"] = out.get("tx_packets", 0) + int(tx / FLOW_FRAME_OCTETS)
        out["rx_octets"] = out.get("rx_octets", 0) + int(rx * share)
        out["rx_packets"] = out.get("rx_packets", 0) + int(rx * share / FLOW_FRAME_OCTETS)
        out["rx_fcs_errors"] = out.get("rx_fcs_errors", 0) + int(rx * (1 - share) / FLOW_FRAME_OCTETS)
        return out

    # --- BGP ------------------------------------------------------------------------------
    def _port_for_neighbor(self, device: str, neighbor: NeighborConfig) -> tuple[str | None, str | None]:
        """(local port, local address) the neighbor is reached through."""
        ports = self._ports(device)
        if not neighbor.numbered:
            return (neighbor.id if neighbor.id in ports else None), None
        try:
            peer = ipaddress.ip_address(neighbor.id)
        except ValueError:
            return None, None
        for name, config in sorted(ports.items()):
            for prefix in config.addresses:
                interface = ipaddress.ip_interface(prefix)
                if peer in interface.network and peer != interface.ip:
                    return name, str(interface.ip)
        return None, None

    def _readiness(self) -> dict[tuple[str, str], tuple[bool, str | None, str | None, int]]:
        """(device, neighbor) -> (ready, far device, local port, peer ASN) from configs and links."""
        out = {}
        for name in sorted(self.devices):
            bgp = self._bgp(name)
            if bgp is None:
                continue
            for nid, neighbor in sorted(bgp.neighbors.items()):
                port, address = self._port_for_neighbor(name, neighbor)
                configured = neighbor.remote_as if isinstance(neighbor.remote_as, int) else 0
                entry = (False, None, port, configured)
                link = self.link(name, port) if port else None
                if link is not None and link.up and link.far_is_switch:
                    far_bgp = self._bgp(link.far_device)
                    if far_bgp is not None:
                        entry = (False, link.far_device, port, far_bgp.asn)
                        back = self._back_neighbor(link, far_bgp, neighbor, address)
                        ready = (back is not None and bgp.enabled and far_bgp.enabled and neighbor.enabled
                                 and back.enabled and _asn_matches(neighbor.remote_as, bgp.asn, far_bgp.asn)
                                 and _asn_matches(back.remote_as, far_bgp.asn, bgp.asn))
                        entry = (ready, link.far_device, port, far_bgp.asn)
                out[(name, nid)] = entry
        return out

    def _back_neighbor(self, link: Link, far_bgp: BgpConfig, neighbor: NeighborConfig,
                       address: str | None) -> NeighborConfig | None:
        if not neighbor.numbered:
            back = far_bgp.neighbors.get(link.far_port)
            return back if back is not None and not back.numbered else None
        back = far_bgp.neighbors.get(address or "")
        if back is None or not back.numbered:
            return None
        far_addresses = {str(ipaddress.ip_interface(p).ip) for p in self._ports(link.far_device)[link.far_port].addresses}
        return back if neighbor.id in far_addresses else None

    def _established(self) -> tuple[dict, frozenset]:
        """(readiness, the (device, neighbor id) sessions established now: ready for SESSION_SETTLE_S)."""
        readiness = self._cached("readiness", self._readiness)
        now = self.clock()
        with self._lock:
            for key, (ready, far, *_rest) in readiness.items():
                if ready:
                    if key not in self._ready_since:
                        self._ready_since[key] = self._ready_from(key[0], far, now)
                else:
                    self._ready_since.pop(key, None)
            established = frozenset(k for k, (ready, *_r) in readiness.items()
                                    if ready and now - self._ready_since[k] >= SESSION_SETTLE_S)
        return readiness, established

    def _ready_from(self, device: str, far: str, now: float) -> float:
        """When a session seen ready for the first time became ready: the latest change of either
        switch's config or of the cables. A real session comes up seconds after the commit whether
        or not anyone asks; stamping it at the first read would keep it connecting for whoever
        reads first."""
        changes = []
        for name in (device, far):
            changed_at = getattr(self.devices.get(name), "config_changed_at", None)
            if changed_at is None:
                return now
            changes.append(changed_at())
        stamp = self.source.current()[1]
        if stamp is not None:
            changes.append(stamp[0] / 1e9)
        return min(now, max(changes))

    def sessions(self, device: str) -> dict[str, Session]:
        readiness, established = self._established()
        counts = self._prefix_counts(readiness, established)
        bgp = self._bgp(device)
        if bgp is None:
            return {}
        out = {}
        for nid, neighbor in sorted(bgp.neighbors.items()):
            ready, far, port, peer_as = readiness[(device, nid)]
            up = (device, nid) in established
            if up:
                state = "established"
            elif ready:
                state = "connect"
            elif far is not None:
                state = "active"           # TCP reaches the far switch; OPEN is refused (config mismatch)
            else:
                state = "idle"
            far_bgp = self._bgp(far) if far else None
            rx, tx = counts.get((device, nid), (0, 0))
            out[nid] = Session(nid, state, bgp.asn, peer_as, far_bgp.router_id if up and far_bgp else "0.0.0.0",
                               port, self._ready_since.get((device, nid)) if up else None, rx, tx,
                               enabled=neighbor.enabled)
        return out

    def next_hops(self, device: str) -> dict[str, list[tuple[str, str | None]]]:
        """{other switch's loopback prefix: [(neighbor id, local port)]} of the BGP routes DEVICE installs."""
        readiness, established = self._established()
        # the whole fabric's routing is one computation per world state and set of established
        # sessions: every switch's `router rib` read of a verify run shares it (issue 26, item 4)
        table = self._cached(("next_hops", established), lambda: self._next_hops_all(readiness, established))
        return table.get(device, {})

    def _next_hops_all(self, readiness: dict, established: frozenset) -> dict[str, dict]:
        configs = {n: self._bgp(n) for n in sorted(self.devices)}
        configs = {n: c for n, c in configs.items() if c is not None}
        asn = {n: c.asn for n, c in configs.items()}
        edges: dict[str, set[str]] = {n: set() for n in configs}
        for name, nid in established:
            far = readiness[(name, nid)][1]
            if name in configs and far in configs and nid in configs[name].neighbors:
                edges[name].add(far)
        loopbacks = {n: lo for n in sorted(configs) if (lo := self._loopback(n)) is not None}
        best_of = {origin: _shortest_paths(origin, edges, asn) for origin in loopbacks}
        out: dict[str, dict] = {}
        for device in sorted(configs):
            up = sorted((nid, readiness[(device, nid)]) for nid in configs[device].neighbors
                        if (device, nid) in established)
            routes: dict[str, list[tuple[str, str | None]]] = {}
            for origin, best in best_of.items():
                if origin == device:
                    continue
                offers = []
                for nid, (_ready, far, port, _peer_as) in up:
                    paths = [p for p in best.get(far, ()) if asn[device] not in p]
                    if paths:
                        offers.append((min(paths), nid, port))
                if not offers:
                    continue
                length = min(len(p) for p, _nid, _port in offers)
                chosen = min(p for p, _nid, _port in offers if len(p) == length)
                routes[loopbacks[origin]] = [(nid, port) for p, nid, port in offers if p == chosen]
            out[device] = routes
        return out

    def _loopback(self, name: str) -> str | None:
        lo = self._ports(name).get("lo")
        for address in (lo.addresses if lo else ()):
            interface = ipaddress.ip_interface(address)
            if interface.network.prefixlen == 32:
                return str(interface.network)
        return None

    def _originated(self, name: str, bgp: BgpConfig) -> int:
        prefixes: set[str] = set(bgp.networks)
        if bgp.redistribute_connected:
            for port, config in self._ports(name).items():
                if port != "lo" and not self.link(name, port).up:
                    continue
                for address in config.addresses:
                    network = str(ipaddress.ip_interface(address).network)
                    if bgp.announces(network):
                        prefixes.add(network)
        return len(prefixes)

    def _prefix_counts(self, readiness, established) -> dict[tuple[str, str], tuple[int, int]]:
        return self._cached(("prefixes", established), lambda: self._count_prefixes(readiness, established))

    def _count_prefixes(self, readiness, established) -> dict[tuple[str, str], tuple[int, int]]:
        configs = {n: self._bgp(n) for n in sorted(self.devices)}
        configs = {n: c for n, c in configs.items() if c is not None}
        # established sessions as directed edges: device -> [(neighbor id, far device)]
        edges: dict[str, list[tuple[str, str]]] = {n: [] for n in configs}
        for (name, nid) in sorted(established):
            far = readiness[(name, nid)][1]
            if far in configs:
                edges[name].append((nid, far))
        counts: dict[tuple[str, str], list[int]] = {(n, nid): [0, 0] for (n, nid) in established}
        for origin, config in configs.items():
            size = self._originated(origin, config)
            if not size:
                continue
            # best path per device: AS list (receiver first); learned_from: the device it came from
            paths: dict[str, tuple[int, ...]] = {origin: (config.asn,)}
            learned_from: dict[str, str | None] = {origin: None}
            frontier = [origin]
            while frontier:
                nxt = []
                for holder in frontier:
                    for _nid, far in edges[holder]:
                        if far in paths or configs[far].asn in paths[holder]:
                            continue
                        paths[far] = (configs[far].asn, *paths[holder])
                        learned_from[far] = holder
                        nxt.append(far)
                frontier = sorted(set(nxt))
            for (name, nid) in established:
                far = readiness[(name, nid)][1]
                if far in paths and config.asn is not None and configs[name].asn not in paths[far]:
                    counts[(name, nid)][0] += size      # what `far` advertises and we accept
                if name in paths and learned_from.get(name) != far:
                    counts[(name, nid)][1] += size      # what we advertise to `far`
        return {k: (v[0], v[1]) for k, v in counts.items()}


def _shortest_paths(origin: str, edges: dict[str, set[str]], asn: dict[str, int]) -> dict[str, set[tuple[int, ...]]]:
    """device -> the AS paths it advertises for ORIGIN's prefix at the shortest loop-free length
    (breadth first; eBGP loop prevention: a device rejects a path holding its own ASN)."""
    best: dict[str, set[tuple[int, ...]]] = {origin: {(asn[origin],)}}
    frontier = [origin]
    while frontier:
        offers: dict[str, set[tuple[int, ...]]] = {}
        for holder in frontier:
            for far in edges[holder]:
                if far in best:
                    continue
                for path in best[holder]:
                    if asn[far] not in path:
                        offers.setdefault(far, set()).add((asn[far], *path))
        best.update(offers)
        frontier = sorted(offers)
    return best
