"""Read the discovery file named by `hosts.discovered`: the rail NICs every host reported.

`fabricgen hosts discover` writes it (version 1): per host, every netdev that has an RDMA
device, with the device name, PCI address, port, link layer, port state and rate read from
sysfs, the netdev's MAC (optional: files of earlier releases have none), and the GPUDirect path
it found. `verify` recognises a host NIC on its switch port by that MAC: lldpd announces it as
the LLDP port ID by default (lldpcli(8)). The compiler takes the RDMA device name of each rail
netdev from here (inbox drivers name devices rocep..., DGX compute NICs skip mlx5_1/2/7/8), and
FG313 reports every rail the file shows missing, InfiniBand, not ACTIVE or slower than planned.
`gpus` (optional) lists the host's NVIDIA GPUs in nvidia-smi's order (PCI bus order) with the
netdev of each GPU's nearest NIC (PCIe affinity): when it has one GPU per rail, rail r is GPU r's
NIC (generator/plan/compile.py), as NCCL pairs each GPU with its nearest NIC.

The file can be large (12k hosts x ~10 NICs: ~16 MB), so it is read as a stream of libyaml
events and built here, not through PyYAML's Python constructor (~14 s at that size): plain
scalars resolve through a cache (names and states repeat), aliases and tags are refused (the
writer emits none), nesting is capped without recursion, and every problem becomes one
IntentError line naming the file, the line and the key path. Size is capped before reading,
as the intent's is (FABRICGEN_MAX_DISCOVERED_BYTES).
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from generator.common.bounded_read import ReadRefused, read_bounded
from generator.common.errors import FabricgenError
from generator.gc_pause import gc_paused
from generator.intent.loader import IntentError, Problem
from generator.intent.model import valid_hostname, valid_ifname

VERSION = 1
MAX_DISCOVERED_BYTES_ENV = "FABRICGEN_MAX_DISCOVERED_BYTES"
# ~16 MB at 12,288 hosts with 10 RDMA netdevs each: 64 MiB leaves room for 40k such hosts
DEFAULT_MAX_DISCOVERED_BYTES = 64 * 1024 * 1024
# root / hosts / host / nics / nic: 5 levels; anything deeper is not this format
MAX_DEPTH = 6
GPUDIRECT = ("nvidia-peermem", "dmabuf", "none")
# /sys/class/infiniband/<dev>/ports/<p>/link_layer and state (drivers/infiniband/core/sysfs.c:
# link_layer_show, state_show), as the writer records them without the "4: " prefix; the writer
# (generator/deploy/discover.py) writes "" for a file it could not read, read here as None
LINK_LAYERS = ("Ethernet", "InfiniBand", "Unknown")
PORT_STATES = ("NOP", "DOWN", "INIT", "ARMED", "ACTIVE", "ACTIVE_DEFER")
_STATE = re.compile(r"[A-Z][A-Z_]{0,31}")       # the kernel's names above, or a newer one
_RDMA = re.compile(r"[A-Za-z0-9_]{1,32}")        # as hosts.rails[].rdma
_MAC = re.compile(r"[0-9a-fA-F]{2}(:[0-9a-fA-F]{2}){5}")     # /sys/class/net/<netdev>/address
_PCI = re.compile(r"[0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]")
_HOST_KEYS = ("gpudirect", "gpus", "nics")
_GPU_KEYS = ("pci", "numa_node", "nic")
MAX_GPUS = 64
_NIC_KEYS = ("netdev", "mac", "rdma", "pci", "port", "link_layer", "state", "rate_gbps")


@dataclass(frozen=True, slots=True)
class DiscoveredNic:
    netdev: str
    rdma: str
    pci: str | None
    port: int | None
    link_layer: str | None
    state: str | None
    rate_gbps: float | None          # None: not reported
    mac: str | None = None           # lower case, ":"-separated; None: not reported


@dataclass(frozen=True, slots=True)
class DiscoveredGpu:
    pci: str                         # the GPU's PCI function
    numa_node: int | None            # /sys/bus/pci/devices/<pci>/numa_node (None: -1 or unreadable)
    nic: str | None                  # netdev of its nearest NIC (None: no NIC left for it)


@dataclass(frozen=True, slots=True)
class DiscoveredHost:
    name: str
    gpudirect: str | None            # nvidia-peermem | dmabuf | none; None: not reported
    nics: dict[str, DiscoveredNic]   # by netdev
    # NVIDIA GPUs in nvidia-smi's order (PCI bus order), each with its nearest NIC; () when the
    # host reported none (files of earlier releases have no `gpus`)
    gpus: tuple[DiscoveredGpu, ...] = ()

    def gpu_rails(self, rails: int) -> tuple[str, ...] | None:
        """The rail netdevs in GPU order (rail r = GPU r's nearest NIC) when the host reported exactly
        `rails` GPUs, each with its own reported NIC; else None (hosts.rails' order stays)."""
        if len(self.gpus) != rails or any(g.nic is None or g.nic not in self.nics for g in self.gpus):
            return None
        return tuple(g.nic for g in self.gpus)  # type: ignore[misc]


@dataclass(frozen=True)
class Discovery:
    file: str                        # the path as resolved against the intent file
    sha256: str                      # of the file's bytes (manifest.json discovered_sha256)
    hosts: dict[str, DiscoveredHost]

    def nic(self, host: str, netdev: str) -> DiscoveredNic | None:
        found = self.hosts.get(host)
        return None if found is None else found.nics.get(netdev)


def max_discovered_bytes() -> int:
    raw = os.environ.get(MAX_DISCOVERED_BYTES_ENV)
    if raw is None or raw == "":
        return DEFAULT_MAX_DISCOVERED_BYTES
    if not raw.isascii() or not raw.isdigit() or int(raw) < 1:
        raise IntentError([Problem(MAX_DISCOVERED_BYTES_ENV, None, "",
                                   f"{raw!r} is not a size in bytes: set a positive whole number, e.g. 134217728")])
    return int(raw)


def discovery_path(intent_file: str | Path, discovered: str) -> Path:
    """hosts.discovered resolved against the directory of the intent file (absolute stays)."""
    return Path(intent_file).parent / discovered


def read_discovery(path: str | Path, named_at: tuple[str, int | None] | None = None) -> Discovery:
    """Read and check the discovery file at PATH; IntentError (one line per problem) if it is
    missing, not a regular file, too large, not UTF-8 YAML or not the version-1 format. NAMED_AT,
    the intent file and line of hosts.discovered, is where a missing file is reported."""
    file = str(path)
    limit = max_discovered_bytes()

    def fail(message: str) -> IntentError:
        return IntentError([Problem(file, None, "", message)])

    try:
        raw = read_bounded(path, limit)
    except FileNotFoundError:
        if named_at is not None:
            raise IntentError([Problem(named_at[0], named_at[1], "hosts.discovered", (
                f"{file}: file not found: run `fabricgen hosts discover` to write it, or fix the path "
                "(relative to the intent file)"))]) from None
        raise fail("file not found: run `fabricgen hosts discover` to write it, or fix hosts.discovered "
                   "(a path relative to the intent file)") from None
    except ReadRefused as exc:
        if exc.kind == "type":
            raise fail("not a regular file: hosts.discovered names the file `fabricgen hosts discover` wrote") from None
        if exc.kind == "size":
            raise fail(_too_large(exc.size, limit)) from None
        raise fail(f"cannot read the discovery file: {exc.reason}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise fail(f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    return parse_discovery(text, file, hashlib.sha256(raw).hexdigest())


def _too_large(size: int, limit: int) -> str:
    return (f"the discovery file is {size} bytes, above the {limit}-byte limit ({limit / 1048576:g} MiB); "
            f"raise it with the environment variable {MAX_DISCOVERED_BYTES_ENV}=<bytes>")


# --- YAML events -> plain data --------------------------------------------------------------
_RESOLVER = yaml.resolver.Resolver()
_CONSTRUCTOR = yaml.constructor.SafeConstructor()
_SCALAR_TAGS = {f"tag:yaml.org,2002:{t}" for t in ("null", "bool", "int", "float", "str")}


@lru_cache(maxsize=65536)
def _plain(text: str) -> Any:
    """A plain (unquoted) scalar as PyYAML's SafeLoader reads it (YAML 1.1 resolver): "400" is an
    int, "null" None, "yes" True. Timestamps and other tags stay text for the schema to refuse."""
    tag = _RESOLVER.resolve(yaml.ScalarNode, text, (True, False))
    if tag not in _SCALAR_TAGS:
        return text
    return _CONSTRUCTOR.yaml_constructors[tag](_CONSTRUCTOR, yaml.ScalarNode(tag, text))


class _Bad(Exception):
    def __init__(self, line: int | None, path: str, message: str):
        super().__init__(message)
        self.line, self.path, self.message = line, path, message


class DiscoveryFormatError(FabricgenError, ValueError):
    """The text is not a plain discovery document (plain_document)."""


def plain_document(text: str) -> Any:
    """The document of TEXT as the discovery reader builds it (no aliases or tags, at most
    MAX_DEPTH levels), without the schema check; DiscoveryFormatError otherwise."""
    try:
        return _build(text)[0]
    except (_Bad, yaml.YAMLError) as exc:
        raise DiscoveryFormatError(str(exc)) from None


def _events(text: str):
    """The parser's events, straight from libyaml's parser when PyYAML has it (yaml.parse adds a
    Python generator frame per event: ~20% of the read)."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)(text)
    try:
        get = loader.get_event
        while True:
            ev = get()
            if ev is None or type(ev) is yaml.StreamEndEvent:
                return
            yield ev
    finally:
        loader.dispose()


def _build(text: str) -> tuple[Any, dict[str, int]]:
    """The document as dicts, lists and scalars, and the line of every key and list item."""
    lines: dict[str, int] = {}
    # frames: [container, path, pending key or None]; a key is the scalar's text as written
    stack: list[list[Any]] = []
    root: list[Any] = []
    documents = 0

    def child_path(frame: list[Any]) -> str:
        container, path, key = frame
        if isinstance(container, list):
            return f"{path}[{len(container)}]"
        return f"{path}.{key}" if path else key

    def add(value: Any) -> None:
        if not stack:
            root.append(value)
            return
        frame = stack[-1]
        container = frame[0]
        if isinstance(container, list):
            container.append(value)
        else:
            container[frame[2]] = value
            frame[2] = None

    for ev in _events(text):
        kind = type(ev)
        line = ev.start_mark.line + 1 if ev.start_mark else 0
        if kind is yaml.ScalarEvent:
            if ev.tag is not None and ev.tag != "!":
                raise _Bad(line, stack[-1][1] if stack else "", f"YAML tag {ev.tag} is not accepted: the discovery "
                           "file is plain YAML")
            if stack and isinstance(stack[-1][0], dict) and stack[-1][2] is None:
                frame = stack[-1]
                key = ev.value
                if key in frame[0]:
                    raise _Bad(line, f"{frame[1]}.{key}" if frame[1] else key, "duplicate key: remove one")
                frame[2] = key
                if len(stack) <= 3:         # keys of a NIC entry: its own line is recorded (one line each)
                    lines[f"{frame[1]}.{key}" if frame[1] else key] = line
                continue
            if stack and isinstance(stack[-1][0], list):
                lines[child_path(stack[-1])] = line
            add(_plain(ev.value) if ev.implicit[0] else ev.value)
        elif kind is yaml.MappingStartEvent or kind is yaml.SequenceStartEvent:
            if stack and isinstance(stack[-1][0], dict) and stack[-1][2] is None:
                raise _Bad(line, stack[-1][1], "a mapping key must be a plain name, not a list or mapping")
            if ev.tag is not None and ev.tag != "!":
                raise _Bad(line, child_path(stack[-1]) if stack else "", f"YAML tag {ev.tag} is not accepted: the "
                           "discovery file is plain YAML")
            path = child_path(stack[-1]) if stack else ""
            if len(stack) >= MAX_DEPTH:
                raise _Bad(line, path, f"nested more than {MAX_DEPTH} levels deep: not the discovery file format")
            if stack and isinstance(stack[-1][0], list):
                lines[path] = line
            stack.append([{} if kind is yaml.MappingStartEvent else [], path, None])
        elif kind is yaml.MappingEndEvent or kind is yaml.SequenceEndEvent:
            add(stack.pop()[0])
        elif kind is yaml.AliasEvent:
            raise _Bad(line, stack[-1][1] if stack else "", "YAML aliases (*name) are not accepted: "
                       "`fabricgen hosts discover` writes every entry out")
        elif kind is yaml.DocumentStartEvent:
            documents += 1
            if documents > 1:
                raise _Bad(line, "", "more than one YAML document (---): the discovery file is one")
    if not root:
        raise _Bad(1, "", "the file is empty: run `fabricgen hosts discover` again")
    return root[0], lines


# --- the version-1 schema --------------------------------------------------------------------
def _line_of(lines: dict[str, int], path: str) -> int | None:
    while path:
        if path in lines:
            return lines[path]
        cut = max(path.rfind("."), path.rfind("["))
        path = path[:cut] if cut > 0 else ""
    return None


def _type_name(value: Any) -> str:
    return {dict: "a mapping", list: "a list", str: "text", bool: "a boolean", type(None): "empty"}.get(
        type(value), type(value).__name__)


def _keys(value: Any, path: str, known: tuple[str, ...], required: tuple[str, ...]) -> dict[str, Any]:
    if not isinstance(value, dict):
        want = "a mapping" if path else "a mapping with version: and hosts: at the top"
        raise _Bad(None, path, f"expected {want}, got {_type_name(value)}")
    for key in value:
        if key not in known:
            raise _Bad(None, f"{path}.{key}" if path else key,
                       f"unknown key: a version-{VERSION} discovery file has {', '.join(known)}")
    for key in required:
        if key not in value:
            raise _Bad(None, path, f"{key}: required key is missing")
    return value


def _text(value: Any, path: str, pattern: re.Pattern[str] | None = None, what: str = "") -> str:
    if not isinstance(value, str):
        raise _Bad(None, path, f"expected text, got {_type_name(value)} {value!r}: quote it")
    if pattern is not None and not pattern.fullmatch(value):
        raise _Bad(None, path, f"{value!r} is not {what}")
    return value


def _choice(value: Any, path: str, choices: tuple[str, ...]) -> str | None:
    if value is None:
        return None
    if value not in choices:
        raise _Bad(None, path, f"{value!r} is not one of {', '.join(choices)}")
    return value


def _nic(value: Any, path: str) -> DiscoveredNic:
    nic = _keys(value, path, _NIC_KEYS, ("netdev", "rdma"))
    netdev = _text(nic["netdev"], f"{path}.netdev")
    if not valid_ifname(netdev):
        raise _Bad(None, f"{path}.netdev", f"{netdev!r} is not a Linux interface name")
    rdma = _text(nic["rdma"], f"{path}.rdma", _RDMA, "an RDMA device name (letters, digits, _; at most 32)")
    mac = nic.get("mac") or None
    if mac is not None:
        mac = _text(mac, f"{path}.mac", _MAC, "a MAC address such as 0c:42:a1:00:00:01").lower()
    pci = nic.get("pci") or None
    if pci is not None:
        _text(pci, f"{path}.pci", _PCI, "a PCI address such as 0000:08:00.0")
    state = nic.get("state") or None
    if state is not None:
        _text(state, f"{path}.state", _STATE, f"a port state ({', '.join(PORT_STATES)})")
    port = nic.get("port")
    if port is not None and (type(port) is not int or port < 1):
        raise _Bad(None, f"{path}.port", f"{port!r} is not a port number (1, 2, ...)")
    rate = nic.get("rate_gbps")
    if rate is not None and (type(rate) not in (int, float) or not 0 <= rate < 1e6):
        raise _Bad(None, f"{path}.rate_gbps", f"{rate!r} is not a rate in Gb/s such as 400")
    return DiscoveredNic(netdev=netdev, rdma=rdma, pci=pci, port=port,
                         link_layer=_choice(nic.get("link_layer") or None, f"{path}.link_layer", LINK_LAYERS),
                         state=state, rate_gbps=rate, mac=mac)


def _gpu(value: Any, path: str) -> DiscoveredGpu:
    gpu = _keys(value, path, _GPU_KEYS, ("pci",))
    pci = _text(gpu["pci"], f"{path}.pci", _PCI, "a PCI address such as 0000:1b:00.0")
    numa = gpu.get("numa_node")
    if numa is not None and (type(numa) is not int or not 0 <= numa < 4096):
        raise _Bad(None, f"{path}.numa_node", f"{numa!r} is not a NUMA node number (0, 1, ...)")
    nic = gpu.get("nic") or None
    if nic is not None and not valid_ifname(_text(nic, f"{path}.nic")):
        raise _Bad(None, f"{path}.nic", f"{nic!r} is not a Linux interface name")
    return DiscoveredGpu(pci=pci, numa_node=numa, nic=nic)


def _gpus(value: Any, path: str, nics: dict[str, DiscoveredNic]) -> tuple[DiscoveredGpu, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise _Bad(None, path, f"expected a list of GPUs, got {_type_name(value)}")
    if len(value) > MAX_GPUS:
        raise _Bad(None, path, f"{len(value)} GPUs: more than the {MAX_GPUS} a server can hold")
    gpus, pcis, taken = [], set(), set()
    for i, item in enumerate(value):
        gpu = _gpu(item, f"{path}[{i}]")
        if gpu.pci in pcis:
            raise _Bad(None, f"{path}[{i}].pci", f"{gpu.pci} is listed twice: keep one entry")
        if gpu.nic is not None:
            if gpu.nic not in nics:
                raise _Bad(None, f"{path}[{i}].nic", f"{gpu.nic} is not one of the host's nics")
            if gpu.nic in taken:
                raise _Bad(None, f"{path}[{i}].nic", f"{gpu.nic} is already the nearest NIC of another GPU")
            taken.add(gpu.nic)
        pcis.add(gpu.pci)
        gpus.append(gpu)
    return tuple(gpus)


def _host(name: str, value: Any, path: str) -> DiscoveredHost:
    if not valid_hostname(name):
        raise _Bad(None, path, f"{name!r} is not a host name (letters, digits, inner dashes)")
    if value is None:
        value = {"nics": []}
    host = _keys(value, path, _HOST_KEYS, ("nics",))
    nics_raw = host["nics"] if host["nics"] is not None else []
    if not isinstance(nics_raw, list):
        raise _Bad(None, f"{path}.nics", f"expected a list of NICs, got {_type_name(nics_raw)}")
    nics: dict[str, DiscoveredNic] = {}
    for i, item in enumerate(nics_raw):
        nic = _nic(item, f"{path}.nics[{i}]")
        if nic.netdev in nics:
            raise _Bad(None, f"{path}.nics[{i}].netdev", f"{nic.netdev} is listed twice for {name}: keep one entry")
        nics[nic.netdev] = nic
    return DiscoveredHost(name=name, gpudirect=_choice(host.get("gpudirect"), f"{path}.gpudirect", GPUDIRECT),
                          nics=nics, gpus=_gpus(host.get("gpus"), f"{path}.gpus", nics))


def parse_discovery(text: str, file: str, sha256: str | None = None) -> Discovery:
    """The discovery file's TEXT checked against the version-1 format (FILE names it in errors)."""
    lines: dict[str, int] = {}
    try:
        with gc_paused():           # ~1 M acyclic objects at 12k hosts: no collector passes over them
            data, lines = _build(text)
        doc = _keys(data, "", ("version", "hosts"), ("version", "hosts"))
        if doc["version"] != VERSION or type(doc["version"]) is not int:
            raise _Bad(None, "version", f"{doc['version']!r} is not a version this fabricgen reads ({VERSION}): "
                       "run `fabricgen hosts discover` with this fabricgen")
        raw_hosts = doc["hosts"] if doc["hosts"] is not None else {}
        if not isinstance(raw_hosts, dict):
            raise _Bad(None, "hosts", f"expected a mapping of host names, got {_type_name(raw_hosts)}")
        with gc_paused():
            hosts = {name: _host(name, value, f"hosts.{name}") for name, value in raw_hosts.items()}
    except _Bad as bad:
        line = bad.line if bad.line is not None else _line_of(lines, bad.path)
        raise IntentError([Problem(file, line, bad.path, bad.message)]) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        raise IntentError([Problem(file, mark.line + 1 if mark else None, "",
                                   f"YAML syntax: {exc.problem or 'invalid YAML'}")]) from None
    except yaml.YAMLError as exc:
        raise IntentError([Problem(file, None, "", f"YAML syntax: {exc}")]) from None
    if sha256 is None:
        sha256 = hashlib.sha256(text.encode("utf-8")).hexdigest()
    return Discovery(file=file, sha256=sha256, hosts=hosts)


__all__ = ["Discovery", "DiscoveredHost", "DiscoveredNic", "DiscoveredGpu", "read_discovery", "parse_discovery", "discovery_path",
           "max_discovered_bytes", "MAX_DISCOVERED_BYTES_ENV", "DEFAULT_MAX_DISCOVERED_BYTES", "GPUDIRECT",
           "LINK_LAYERS", "PORT_STATES", "VERSION"]
