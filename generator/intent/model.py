"""The intent: the user-facing contract of DESIGN.md, as strict pydantic models.

Structure and types are enforced here; domain judgements (ranges that deserve a
rule code and an explanation, like DSCP 0-63) are rules in generator/checks, so
that every one of them has a stable code and `--explain`.
"""

from __future__ import annotations

import difflib
import ipaddress
import math
import re
import string
import typing
from typing import Annotated, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)

from generator.intent.releases import judge
from generator.intent.units import Ratio, Release, SizeBytes, SpeedG

# RFC 1123 host name label. Always used with fullmatch(): `$` also matches before a trailing
# newline, which let "gpu{n}\n" through into roce-qos.sh and netplan (issue 15, finding 7).
_HOSTNAME = re.compile(r"[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?")
# The fabric name prefixes every switch name (<fabric>-leaf-1): a lowercase label that starts
# and ends with a letter or digit, or names such as "--leaf-1" come out of "-".
_FABRIC_NAME = re.compile(r"[a-z0-9]([a-z0-9-]{0,38}[a-z0-9])?")
# Linux dev_valid_name() (net/core/dev.c): at most IFNAMSIZ-1 = 15 bytes, no '/', ':' or
# whitespace, not "." or "..". The intent keeps to the characters udev and netplan use.
_IFNAME = re.compile(r"[a-zA-Z0-9_.-]{1,15}")


def valid_ifname(name: str) -> bool:
    """A name Linux accepts for a network interface (dev_valid_name), whole string."""
    return isinstance(name, str) and name not in (".", "..") and _IFNAME.fullmatch(name) is not None


def valid_hostname(name: str) -> bool:
    """An RFC 1123 label (letters, digits, inner dashes, 1-63 characters), whole string."""
    return isinstance(name, str) and _HOSTNAME.fullmatch(name) is not None
TopologyKind = Literal["single-switch", "leaf-spine", "rail-optimized", "three-tier", "dragonfly-plus"]
TOPOLOGY_KINDS = typing.get_args(TopologyKind)


class _Strict(BaseModel):
    # the attribute docstrings below each field are its description in `fabricgen schema` and the README
    model_config = ConfigDict(strict=True, extra="forbid", frozen=True, populate_by_name=True,
                              use_attribute_docstrings=True)


def _network(value: object, what: str) -> str:
    if not isinstance(value, str):
        raise ValueError(f"expected an IPv4 prefix such as 10.0.0.0/16 for {what}")
    try:
        net = ipaddress.IPv4Network(value, strict=False)
    except ValueError as exc:
        raise ValueError(f"{value!r} is not an IPv4 prefix ({exc})") from None
    if "/" not in value:
        raise ValueError(f"{value!r} needs a prefix length, e.g. {value}/16")
    if str(net) != value.strip():
        raise ValueError(f"{value!r} has host bits set: did you mean {net}?")
    return str(net)


class FabricSection(_Strict):
    name: Annotated[str, Field(pattern=r"^[a-z0-9-]+$", max_length=40,
                               description="fabric name: lowercase letters, digits, dashes; prefixes every switch name")]
    description: str = ""
    """free text for people; not rendered into any config"""

    @field_validator("name")
    @classmethod
    def _label(cls, value: str) -> str:
        if not _FABRIC_NAME.fullmatch(value):
            raise ValueError(f"{value!r} must start and end with a letter or digit: it prefixes every switch "
                             f"name ({value}-leaf-1), which must be a valid host name")
        return value


class SwitchTier(_Strict):
    model: str = "SN5600"
    """switch model of this tier, e.g. SN5600 (generator/data/switch_models.yaml lists them)"""

    @field_validator("model")
    @classmethod
    def _catalog_spelling(cls, value: str) -> str:
        # `sn5600` is the SN5600: written in any case, the model is the catalog's spelling from here
        # on (plan.json, rendered files); an unknown one stays as written for FG102's did-you-mean
        from generator.plan.catalog import catalog

        by_folded = {name.casefold(): name for name in catalog()}
        return by_folded.get(value.casefold(), value)


class Switches(_Strict):
    leaf: SwitchTier = SwitchTier()
    """the leaf (top-of-rack) switches the GPU NICs connect to"""
    spine: SwitchTier = SwitchTier()
    """the spine switches (leaf-spine, rail-optimized, three-tier, dragonfly-plus)"""
    super_spine: SwitchTier = SwitchTier()
    """the super-spine switches (three-tier only)"""


class Cables(_Strict):
    """Metres per tier: decides DAC/AOC and the PFC headroom of both ends."""

    host_leaf: Annotated[float, Field(gt=0, le=100000)] = 3
    """metres from a NIC to its leaf"""
    leaf_spine: Annotated[float, Field(gt=0, le=100000)] = 30
    """metres from a leaf to a spine"""
    spine_super_spine: Annotated[float, Field(gt=0, le=100000)] = 100
    """metres from a spine to a super-spine (three-tier only)"""
    global_: Annotated[float, Field(gt=0, le=100000, alias="global")] = 50
    """metres of the spine-to-spine links between groups (dragonfly-plus only)"""


CableType = Literal["DAC", "AOC"]


class CableTypes(_Strict):
    """Force a cable type per tier (normally derived: DAC up to 3 m, AOC above)."""

    host_leaf: CableType | None = None
    """force DAC or AOC on NIC-leaf links; unset: DAC up to 3 m, AOC above"""
    leaf_spine: CableType | None = None
    """force DAC or AOC on leaf-spine links; unset: by length"""
    spine_super_spine: CableType | None = None
    """force DAC or AOC on spine-super-spine links; unset: by length"""
    global_: CableType | None = Field(default=None, alias="global")
    """force DAC or AOC on the global links; unset: by length"""


class BuildOut(_Strict):
    """The size the fabric is built toward (DESIGN.md "Growth"): the installed fabric is this
    fabric restricted to the first `topology.nodes` nodes, so growing never moves a cable."""

    nodes: Annotated[int, Field(ge=1, le=200000)]
    """GPU servers of the build-out fabric (at least topology.nodes)"""


class Topology(_Strict):
    kind: TopologyKind
    """the fabric shape: a Clos-family kind for lossless RoCE"""
    nodes: Annotated[int, Field(ge=1, le=200000)]
    """GPU servers installed now"""
    gpus_per_node: Annotated[int, Field(ge=1, le=64)] = 8
    """GPUs per server"""
    gpu: str | None = None
    """GPU model, e.g. H100 (the capacity planner's NVLink bandwidth); optional"""
    rails: Annotated[int, Field(ge=1, le=16)] = 8
    """compute NIC ports per server, one per rail"""
    nic_speed: SpeedG = 400
    """speed of every rail port and fabric link: 100G, 200G, 400G or 800G"""
    oversubscription: Ratio = (1, 1)
    """leaf downlink:uplink bandwidth, quoted (\"1:1\", \"2:1\")"""
    nodes_per_unit: Annotated[int, Field(ge=1)] = 32
    """servers per scalable unit / pod (rail-optimized, three-tier)"""
    groups: Annotated[int, Field(ge=2, le=512)] = 2
    """groups of the build-out fabric (dragonfly-plus only)"""
    switches: Switches = Switches()
    """switch model per tier"""
    cables: Cables = Cables()
    """cable length in metres per tier: decides DAC/AOC and each end's PFC headroom"""
    cable_types: CableTypes = CableTypes()
    """force a cable type per tier (normally derived from the length)"""
    build_out: BuildOut | None = None
    """the size this fabric grows to without moving a cable; unset: topology.nodes"""

    @property
    def build_out_nodes(self) -> int:
        """Nodes of the build-out fabric: build_out.nodes, or nodes when build_out is absent."""
        return self.build_out.nodes if self.build_out is not None else self.nodes

    @field_validator("kind", mode="before")
    @classmethod
    def _known_kind(cls, kind: object) -> object:
        if not isinstance(kind, str) or kind in TOPOLOGY_KINDS:
            return kind
        close = difflib.get_close_matches(kind, TOPOLOGY_KINDS, n=1)
        if close:       # a misspelling (rail-optimised) needs the right word, not the lecture below
            raise ValueError(f"{kind!r} is not a topology kind: did you mean {close[0]!r}?")
        raise ValueError(
            f"{kind!r} is not supported: fabricgen builds Clos-family Ethernet fabrics for "
            f"RoCE ({', '.join(TOPOLOGY_KINDS)}); torus/mesh/ring fabrics need per-hop "
            "deadlock-free routing that BGP/ECMP underlays cannot provide")


def release_tuple(version: str) -> tuple[int, int]:
    """(major, minor) of "5.11" / "5.15.1"; (year, month) of SONiC's "202411" / "2024.11"."""
    if "." not in version:
        return int(version[:4]), int(version[4:])
    major, minor = version.split(".")[:2]
    return int(major), int(minor)


class SwitchOS(_Strict):
    name: Literal["cumulus", "sonic"] = "cumulus"
    """the switch operating system: Cumulus Linux (NVUE) or SONiC (config_db)"""
    version: Release = "5.11"
    """the release the switches run, quoted: Cumulus \"5.11\", SONiC \"202411\""""

    @field_validator("version")
    @classmethod
    def _renderable(cls, version: str, info: ValidationInfo) -> str:
        # a release fabricgen cannot render is an error here (FG270); a newer one of a known line
        # is rendered as the newest known and warned about by the rule FG271
        if "name" not in info.data:
            return version      # switch_os.name is wrong itself: that is the error to fix first
        verdict = judge(info.data["name"], version, release_tuple(version))
        if verdict.error:
            raise ValueError(verdict.error)
        return version

    def version_tuple(self) -> tuple[int, int]:
        return release_tuple(self.version)


class Ecn(_Strict):
    min_threshold: SizeBytes = 150000
    """queue depth where ECN marking starts (WRED min), e.g. 150KB"""
    max_threshold: SizeBytes = 1500000
    """queue depth where marking reaches the probability (WRED max), e.g. 1500KB"""
    probability: int = 100
    """marking probability at max_threshold, percent"""
    enabled: bool = True
    """mark ECN on the RoCE queue; off with PFC on is an error (pause storms)"""


class Mtu(_Strict):
    switch: Annotated[int, Field(ge=552, le=9216)] = 9216
    """MTU of switch ports, bytes"""
    host: Annotated[int, Field(ge=576, le=9216)] = 4200
    """MTU of the host rail NICs, bytes (RoCE payload 4096 + headers)"""


_WatchdogMs = Annotated[int, Field(ge=100, le=5000)]


class PfcWatchdogTimers(_Strict):
    """PFC watchdog timing in ms; a field left out keeps the NOS's default (SONiC: 200 each,
    sonic-utilities pfcwd/main.py; Cumulus: polling-interval 100, robustness 3, QoS page)."""

    detection_ms: _WatchdogMs | None = None
    """a queue paused this long is a storm, ms (100-5000); unset: the NOS default"""
    # sonic-pfcwd.yang: detection_time 100..5000, restoration_time 100..60000, POLL_INTERVAL 100..1000
    restoration_ms: Annotated[int, Field(ge=100, le=60000)] | None = None
    """storm over after this long without pause, ms (SONiC only; 100-60000); unset: the NOS default"""
    poll_ms: _WatchdogMs | None = None
    """how often the queues are polled, ms (100-5000); unset: the NOS default"""


class Roce(_Strict):
    mode: Literal["lossless", "lossy"] = "lossless"
    """lossless: PFC and ECN; lossy: ECN only, no PFC"""
    dscp: int = 26
    """DSCP of RoCE data packets"""
    priority: int = 3
    """switch priority / traffic class of RoCE data (PFC enabled on it when lossless)"""
    cnp_dscp: int = 48
    """DSCP of congestion notification packets (CNP)"""
    cnp_priority: int = 6
    """priority of CNPs (strict priority queue)"""
    ecn: Ecn = Ecn()
    """ECN marking (WRED) on the RoCE queue"""
    pfc_watchdog: bool = True
    """PFC watchdog on: a queue paused for too long is drained instead of stalling the fabric"""
    pfc_watchdog_timers: PfcWatchdogTimers = PfcWatchdogTimers()
    """PFC watchdog timing; unset fields keep the NOS's defaults"""
    mtu: Mtu = Mtu()
    """switch and host MTU"""
    bandwidth_percent: Annotated[int, Field(ge=1, le=99)] = 50
    """ETS bandwidth share of the RoCE traffic class, percent"""


class Asn(_Strict):
    spine: Annotated[int, Field(description="ASN of the spine tier (RFC 7938); pods/groups count up from it")] = 65000
    leaf_base: Annotated[int, Field(description="leaf i gets leaf_base + i")] = 65100


class Addressing(_Strict):
    loopbacks: str = "10.255.0.0/16"
    """IPv4 pool of the switch loopbacks (router-ids)"""
    fabric_links: str = "unnumbered"
    """\"unnumbered\" (BGP unnumbered) or an IPv4 pool for /31 switch-to-switch links"""
    rails: str = "172.16.0.0/12"
    """IPv4 pool of the host links: one /31 per NIC port, carved per rail"""
    management: str = "192.168.0.0/20"
    """IPv4 prefix of the switch management network (eth0)"""
    asn: Asn = Asn()
    """BGP AS numbers (RFC 7938 style)"""

    @field_validator("loopbacks", "rails", "management")
    @classmethod
    def _pool(cls, value: object, info) -> str:
        return _network(value, info.field_name)

    @field_validator("fabric_links")
    @classmethod
    def _fabric_links(cls, value: object) -> str:
        if value == "unnumbered":
            return value
        return _network(value, "fabric_links (or 'unnumbered')")


def _ifname(value: str) -> str:
    if not valid_ifname(value):
        raise ValueError(f"{value!r} is not a Linux interface name (1-15 of letters, digits, _ . -; not . or ..)")
    return value


class HostRail(_Strict):
    netdev: Annotated[str, Field(pattern=r"^[a-zA-Z0-9_.-]{1,15}$")]
    """Linux name of the rail's NIC port, e.g. ens1f0np0"""
    rdma: Annotated[str, Field(pattern=r"^[a-zA-Z0-9_]{1,32}$")]
    """RDMA device of that port, e.g. mlx5_0"""

    @field_validator("netdev")
    @classmethod
    def _netdev(cls, value: str) -> str:
        return _ifname(value)


class Hosts(_Strict):
    name: str = "gpu{n:03d}"
    """host name template with {n} = 1..nodes, e.g. gpu{n:03d}"""
    mgmt_interface: Annotated[str, Field(pattern=r"^[a-zA-Z0-9_.-]{1,15}$")] = "eno1"
    """the hosts' management interface (not a rail)"""
    rails: list[HostRail] | None = None
    """the rail NICs, one per rail in rail order; unset: ens<r+1>f0np0 / mlx5_<r>"""
    nic_tooling: Literal["mlnx_qos", "dcb"] = "mlnx_qos"
    """how the host playbook sets NIC QoS: mlnx_qos (NVIDIA MLNX tools) or dcb (iproute2)"""
    # compared with each rail RDMA device's fw_ver (sysfs, "28.39.1002" on a ConnectX-7) by
    # roce-qos.sh --check/--health: a NIC below it is reported (and --health drains), never flashed
    nic_firmware_min: Annotated[str, Field(pattern=r"^[0-9]{1,5}(\.[0-9]{1,5}){1,3}$")] | None = None
    """oldest rail NIC firmware the hosts may run, e.g. "28.39.1002"; --check/--health report a NIC below it; unset: not checked"""
    # lldpd on the hosts, announcing each port by its name: lldpd's default LLDP port ID is the
    # NIC's MAC (lldpcli(8)); the host playbook (tag lldpd) installs it and renders
    # /etc/lldpd.d/fabricgen.conf with `configure lldp portidsubtype ifname`. Off: nothing is done.
    lldpd: Annotated[bool, Field(description="install lldpd on the hosts and announce each port by its "
                                             "netdev (portidsubtype ifname)")] = False
    # the discovery file `fabricgen hosts discover` writes, relative to the intent file: per host,
    # the RDMA device behind each rail netdev (generator/intent/discovery.py reads it)
    discovered: Annotated[str, Field(min_length=1, max_length=4096)] | None = None
    """the file `fabricgen hosts discover` wrote, relative to this intent file; unset: none"""

    @field_validator("mgmt_interface")
    @classmethod
    def _mgmt(cls, value: str) -> str:
        return _ifname(value)

    @field_validator("discovered")
    @classmethod
    def _discovered(cls, value: str | None) -> str | None:
        if value is not None and (not value.isprintable() or value != value.strip()):
            raise ValueError(f"{value!r} is not a plain file path: no control characters or surrounding spaces")
        return value

    @field_validator("name")
    @classmethod
    def _name_template(cls, value: str) -> str:
        # a width such as {n:>2000000000} would allocate gigabytes before the length check
        for _, field_name, spec, _ in string.Formatter().parse(value):
            if field_name is not None and any(int(w) > 63 for w in re.findall(r"\d+", spec or "")):
                raise ValueError(f"{value!r}: a host name has at most 63 characters; use e.g. gpu{{n:03d}}")
        names = []
        for n in (1, 2, 200000):
            try:
                names.append(value.format(n=n))
            except Exception as exc:  # any format-spec error is the user's template, never a crash
                raise ValueError(f"{value!r} must be a Python format string using only {{n}}, e.g. gpu{{n:03d}} "
                                 f"({type(exc).__name__}: {exc})") from None
        if names[0] == names[1]:
            raise ValueError(f"{value!r} must contain {{n}} so every host gets its own name")
        for name in names:
            # the name becomes a hostname and a directory under hosts/: RFC 1123 label only
            if not valid_hostname(name):
                raise ValueError(f"{value!r} gives {name!r}, not a valid host name (letters, digits, dashes; "
                                 "at most 63 characters; no dots or slashes)")
        return value


class Nccl(_Strict):
    settings: dict[str, str | int | bool] = {}
    """extra NCCL_* settings for nccl.conf; unknown keys are an error"""
    # NCCL before 2.21 picks GID index 0 (RoCEv1, link-local): below it, or unset, nccl.conf pins index 3
    min_version: Annotated[str, Field(pattern=r"^\d+\.\d+(\.\d+)?$")] | None = None
    """oldest NCCL the jobs run, e.g. \"2.21.5\"; unset or below 2.21: nccl.conf pins NCCL_IB_GID_INDEX=3"""

    def min_version_tuple(self) -> tuple[int, ...] | None:
        return None if self.min_version is None else tuple(int(p) for p in self.min_version.split("."))


class Workload(_Strict):
    # YAML 1.1 reads 70e9 (no dot) as a string: the schema takes the text form too
    model_params: Annotated[float, Field(gt=0)] | None = Field(None, json_schema_extra={"anyOf": [
        {"type": "number", "exclusiveMinimum": 0}, {"type": "string", "pattern": r"^\d+(\.\d+)?[eE]\d+$"}]})
    """model parameters, e.g. 70e9"""
    gradient_bytes_per_param: Annotated[float, Field(gt=0)] = 2
    """gradient bytes per parameter (2: FP16/BF16)"""
    step_compute_ms: Annotated[float, Field(gt=0)] | None = None
    """compute time of one training step, ms"""
    gpu_hour_usd: Annotated[float, Field(ge=0)] | None = None
    """cost of one GPU hour, USD (communication cost in the capacity report)"""
    comm_overlap: Annotated[float, Field(ge=0, le=1)] | None = None
    """share of the all-reduce hidden behind backward compute, 0-1 (capacity: a row beside no/full overlap)"""

    @field_validator("model_params", mode="before")
    @classmethod
    def _sci(cls, value: object) -> object:
        # YAML 1.1 reads 70e9 (no dot) as a string
        if isinstance(value, str):
            try:
                number = float(value)
            except ValueError:
                raise ValueError(f"{value!r} is not a number such as 70e9") from None
            # float() also reads "inf" and "nan": capacity would crash on them far from here
            if not math.isfinite(number):
                raise ValueError(f"{value!r} is not a finite number: write e.g. 70e9")
            return number
        return value


# Jinja delimiters: a drain command is written into inventory.yml, which Ansible templates
_JINJA = ("{{", "}}", "{%", "%}", "{#", "#}")
_BATCH_PERCENT = re.compile(r"([1-9][0-9]?|100)%")


def _host_hook(value: str | None) -> str | None:
    """A drain/undrain shell command template: one printable line with {host} in it."""
    if value is None:
        return None
    if not value.isprintable():
        raise ValueError("must be one line of printable characters: the playbook runs it as one shell command")
    if "{host}" not in value:
        raise ValueError(f"{value!r} must contain {{host}}, replaced by each host's inventory name, "
                         "e.g. scontrol update NodeName={host} State=DRAIN Reason=fabricgen:deploy")
    if any(d in value for d in _JINJA):
        raise ValueError(f"{value!r} contains a Jinja delimiter ({{{{ }}}} {{% %}} {{# #}}): write the "
                         "command plainly; only {host} is replaced")
    return value


# a scheduler node name made from the host name: an RFC 1123 host name (dots allowed: an FQDN), as
# Slurm NodeName and Kubernetes node names are; it also lands in a shell command (the hooks' {host})
_NODE_NAME = re.compile(r"[A-Za-z0-9]([A-Za-z0-9._-]{0,251}[A-Za-z0-9])?")


def _scheduler_node(value: str | None) -> str | None:
    """deploy.hosts.scheduler_node: a template with {host} giving each host's scheduler node name."""
    if value is None:
        return None
    if "{host}" not in value:
        raise ValueError(f"{value!r} must contain {{host}}, replaced by each host's name, e.g. {{host}}.cluster.example")
    if not _NODE_NAME.fullmatch(value.replace("{host}", "gpu001")):
        raise ValueError(f"{value!r} must give a host name (letters, digits, '.', '-', '_' around {{host}}), "
                         "e.g. {host}.cluster.example")
    return value


# the reason prefix of the rollout's Slurm drains (playbooks/files/fabricgen_sched.py OWN_PREFIX)
SLURM_DRAIN_PREFIX = "fabricgen:"
SLURM_DRAIN_EXAMPLE = "scontrol update NodeName={host} State=DRAIN Reason=fabricgen:deploy"
# scontrol reads its keywords in any case (Reason=, reason=), the reason itself as written
_OWN_REASON = re.compile(r"""\b(?i:reason)=(["']?)fabricgen:""")


_KUBECTL_DRAIN = re.compile(r"\bkubectl\b.*\sdrain\s")
_KUBECTL_TIMEOUT = re.compile(r"\s--timeout[= ](\S+)")
_GO_DURATION = re.compile(r"(?:(\d+)h)?(?:(\d+)m(?!s))?(?:(\d+)s)?")


def _go_seconds(text: str) -> int | None:
    """kubectl's --timeout, a Go duration ("90s", "1h30m", "0"), in seconds; None if not one."""
    text = text.strip("'\"")
    if text == "0":
        return 0
    found = _GO_DURATION.fullmatch(text)
    if not found or not any(found.groups()):
        return None
    h, m, s = (int(g or 0) for g in found.groups())
    return h * 3600 + m * 60 + s


def _batch(value: object) -> int | str:
    """Ansible `serial` after the canary: a host count >= 1 or a percentage "1%".."100%"."""
    if (isinstance(value, int) and not isinstance(value, bool) and value >= 1) or \
            (isinstance(value, str) and _BATCH_PERCENT.fullmatch(value)):
        return value
    raise ValueError(f"{value!r} is neither a host count >= 1 (e.g. 8) nor a percentage 1%-100% (e.g. \"10%\")")


class DeployHosts(_Strict):
    """How playbooks/hosts.yml rolls out to the GPU servers (inventory.yml `hosts` group vars)."""

    # a login name only, as deploy.user (issue 15, finding 3): it lands in inventory.yml
    user: Annotated[str, Field(pattern=r"^[a-z_][a-z0-9_-]{0,31}$",
                               description="SSH login name on the hosts (letters, digits, _ and -)")] = "root"
    canary: Annotated[int, Field(ge=0, le=1000, description="hosts in the first batch alone (0: none)")] = 1
    batch: Annotated[int | str, BeforeValidator(_batch),
                     Field(description='hosts per batch after the canary: a count or "N%"')] = "10%"
    max_fail_percentage: Annotated[int, Field(ge=0, le=100, description="failed hosts a batch may have, %")] = 0
    drain: Annotated[str, Field(max_length=1024)] | None = None
    """command run on the controller before a batch, {host} = inventory name; unset: none"""
    undrain: Annotated[str, Field(max_length=1024)] | None = None
    """command run on the controller after a batch, {host} = inventory name; unset: none"""
    require_gpudirect: Annotated[bool, Field(description="pre-flight stops a host without nvidia-peermem or "
                                                         "DMA-BUF")] = True
    # none (default): the drain hook's exit is the drain, as before. slurm: after the hook, wait
    # until `scontrol show node` says DRAINED (no job runs); a node drained before the run keeps
    # its drain and reason. kubernetes: the hook (kubectl drain) is bounded by drain_timeout and
    # a node cordoned before the run stays cordoned.
    scheduler: Annotated[Literal["none", "slurm", "kubernetes"],
                         Field(description="who runs jobs on the hosts: drain waits until none runs")] = "none"
    drain_timeout: Annotated[int, Field(ge=10, le=7 * 86400, description="seconds a host may take to drain "
                                                                         "(scheduler slurm/kubernetes)")] = 3600
    # The scheduler's name for a host when it is not the host name (Slurm NodeName is often an
    # FQDN or a site name; slurm.conf(5) NodeName/NodeHostname): the hooks' {host} and the
    # playbook's scheduler reads use it. Unset: the host name.
    scheduler_node: Annotated[str | None, Field(max_length=253, description="the host's scheduler node name, "
                                                                            "{host} = host name, e.g. "
                                                                            "{host}.cluster.example; unset: the "
                                                                            "host name")] = None
    # A drain hook with scheduler none is taken as done when it exits, and `scontrol update State=DRAIN`
    # exits at once while jobs run on: only a fleet that runs no jobs may do without a scheduler (FG340)
    idle: Annotated[bool, Field(description="no jobs run on the hosts: with scheduler none, a drain hook's exit "
                                            "is the drain (FG340)")] = False
    # Ansible runs `forks` hosts at a time (default 5): a batch of 50 would take ten rounds
    forks: Annotated[int | None, Field(ge=1, le=500, description="hosts Ansible works on at once; unset: the "
                                                                 "largest batch, 5 to 50")] = None

    @field_validator("drain", "undrain")
    @classmethod
    def _hooks(cls, value: str | None) -> str | None:
        return _host_hook(value)

    @field_validator("scheduler_node")
    @classmethod
    def _node(cls, value: str | None) -> str | None:
        return _scheduler_node(value)

    @model_validator(mode="after")
    def _scheduler_hooks(self) -> DeployHosts:
        if self.scheduler != "none" and not (self.drain and self.undrain):
            example = (SLURM_DRAIN_EXAMPLE if self.scheduler == "slurm"
                       else f"kubectl drain {{host}} --ignore-daemonsets --timeout={self.drain_timeout}s")
            raise ValueError(f"scheduler {self.scheduler} needs the drain and undrain hooks, e.g. drain: {example!r}")
        # `kubectl drain` waits for its evictions without end unless given --timeout (kubectl drain
        # reference: 0, the default, is no bound); the playbook ends it a grace after drain_timeout
        if self.scheduler == "kubernetes" and self.drain and _KUBECTL_DRAIN.search(self.drain):
            bound = _KUBECTL_TIMEOUT.search(self.drain)
            seconds = _go_seconds(bound.group(1)) if bound else None
            if not seconds or seconds > self.drain_timeout:
                given = f"its --timeout={bound.group(1)} is " + ("no bound" if seconds == 0 else
                        f"longer than drain_timeout {self.drain_timeout} s") if bound else "it has no --timeout"
                raise ValueError(f"kubectl drain in the drain hook must end within drain_timeout, and {given}: "
                                 f"add --timeout={self.drain_timeout}s (e.g. drain: 'kubectl drain {{host}} "
                                 f"--ignore-daemonsets --timeout={self.drain_timeout}s')")
        # a drain belongs to whoever set it: the playbook resumes a Slurm node only while its reason
        # still carries this prefix, and never drains over (or resumes) one without it (issue 33)
        if self.scheduler == "slurm" and self.drain and not _OWN_REASON.search(self.drain):
            raise ValueError(f"the drain hook must set a reason starting {SLURM_DRAIN_PREFIX} (e.g. drain: "
                             f"{SLURM_DRAIN_EXAMPLE!r}): fabricgen resumes only the drains it marked so")
        return self


class Deploy(_Strict):
    # a login name only: the value is written into inventory.yml, where Ansible would evaluate
    # "{{ lookup('pipe', ...) }}" on the bastion (issue 15, finding 3)
    user: Annotated[str, Field(pattern=r"^[a-z_][a-z0-9_-]{0,31}$",
                               description="switch login name (letters, digits, _ and -)")] = "cumulus"
    confirm_timeout: Annotated[int, Field(ge=30, le=3600)] = 300
    """seconds a switch waits for the deploy to confirm a change before rolling it back"""
    concurrency: Annotated[int, Field(ge=1, le=1024)] = 32
    """switches deployed at the same time"""
    hosts: DeployHosts = DeployHosts()
    """how the host playbook rolls out to the GPU servers"""


_USER_NAME = r"^[a-z_][a-z0-9_-]{0,31}$"
# crypt(3) hashes NVUE accepts for `system aaa user <u> hashed-password`: SHA-512 and yescrypt
_HASH = re.compile(r"^\$(6|y)\$[./A-Za-z0-9$=]{8,}$")
_SSH_KEY = re.compile(r"^(ssh-ed25519|ssh-rsa|ecdsa-sha2-nistp(256|384|521)|sk-ssh-ed25519@openssh\.com|"
                      r"sk-ecdsa-sha2-nistp256@openssh\.com) [A-Za-z0-9+/]+={0,3}( .*)?$")


def _ipv4(value: object, what: str) -> str:
    if not isinstance(value, str):
        raise ValueError(f"expected an IPv4 address for {what}")
    try:
        return str(ipaddress.IPv4Address(value))
    except ValueError:
        raise ValueError(f"{value!r} is not an IPv4 address") from None


def _server(value: object) -> str:
    """An IPv4 address or a DNS name (NTP, syslog and TACACS servers may be names)."""
    if not isinstance(value, str) or not value:
        raise ValueError("expected an IPv4 address or a host name")
    try:
        return str(ipaddress.IPv4Address(value))
    except ValueError:
        pass
    if not all(valid_hostname(label) for label in value.rstrip(".").split(".")) or len(value) > 253:
        raise ValueError(f"{value!r} is neither an IPv4 address nor a host name")
    return value


class User(_Strict):
    """A local switch account: a crypt hash and/or public keys, never a password."""

    name: Annotated[str, Field(pattern=_USER_NAME, description="login name")]
    role: Literal["system-admin", "nvue-admin", "nvue-monitor"] = "nvue-monitor"
    """NVUE role: system-admin, nvue-admin (apply config) or nvue-monitor (read-only)"""
    hashed_password: str | None = None
    """SHA-512 ($6$) or yescrypt ($y$) crypt hash, never a password"""
    ssh_keys: list[str] = []
    """OpenSSH public key lines"""

    @field_validator("hashed_password")
    @classmethod
    def _hash(cls, value: str | None) -> str | None:
        if value is not None and not _HASH.match(value):
            raise ValueError("not a SHA-512 ($6$) or yescrypt ($y$) crypt hash: create one with "
                             "`mkpasswd -m sha-512` (or `openssl passwd -6`) and paste the hash")
        return value

    @field_validator("ssh_keys")
    @classmethod
    def _keys(cls, value: list[str]) -> list[str]:
        for key in value:
            if not _SSH_KEY.match(key.strip()):
                raise ValueError(f"{key[:40]!r}... is not an OpenSSH public key line (type base64 [comment]); "
                                 "paste the .pub file's line")
        return [k.strip() for k in value]


class Management(_Strict):
    """The switch management plane: eth0 in the mgmt VRF, services reached through it, accounts."""

    gateway: str | None = None
    """default gateway of the management VRF; unset: the first address of addressing.management"""
    ntp: list[str] = []
    """NTP servers (addresses or names), reached through the management VRF"""
    dns: list[str] = []
    """DNS server addresses"""
    syslog: list[str] = []
    """syslog servers (addresses or names)"""
    timezone: Annotated[str, Field(pattern=r"^[A-Za-z0-9_+-]+(/[A-Za-z0-9_+-]+)*$")] = "Etc/UTC"
    """time zone, e.g. Etc/UTC"""
    users: list[User] = []
    """local switch accounts: hashes and public keys only"""
    banner: Annotated[str, Field(max_length=2000)] | None = None
    """pre-login message of the switches; unset: the NOS's own"""

    @field_validator("gateway")
    @classmethod
    def _gateway(cls, value: object) -> str | None:
        return None if value is None else _ipv4(value, "management.gateway")

    @field_validator("dns")
    @classmethod
    def _dns(cls, value: list[str]) -> list[str]:
        return [_ipv4(v, "management.dns") for v in value]

    @field_validator("ntp", "syslog")
    @classmethod
    def _servers(cls, value: list[str]) -> list[str]:
        return [_server(v) for v in value]

    @field_validator("users")
    @classmethod
    def _unique_users(cls, value: list[User]) -> list[User]:
        names = [u.name for u in value]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"user {dupes[0]!r} is listed twice: keep one entry per user")
        return value


class Routing(_Strict):
    # NVUE `multipaths ebgp` takes 1-128 (object model 5.11-5.18); unset: 128, the widest it takes
    max_paths: Annotated[int, Field(ge=1, le=128)] | None = None
    """BGP multipath width (ECMP), 1-128; unset: 128, the widest NVUE takes"""
    bfd: bool = False
    """BFD on every BGP session (sub-second failure detection)"""
    adaptive_routing: bool = False
    """NVIDIA adaptive routing (Spectrum-4 at 200G/400G only; needs NICs that reorder)"""


# Bounds of an `extra:` subtree (hostile input is bounded): NVUE documents nest about 10 deep
EXTRA_MAX_DEPTH = 16
EXTRA_MAX_NODES = 5000
EXTRA_MAX_TEXT = 1024


def _extra_tree(value: object, path: str, depth: int = 0, budget: list[int] | None = None) -> None:
    """An NVUE subtree: maps with string keys, scalars (text, numbers, booleans) as leaves."""
    budget = [EXTRA_MAX_NODES] if budget is None else budget
    if depth > EXTRA_MAX_DEPTH:
        raise ValueError(f"{path}: deeper than {EXTRA_MAX_DEPTH} levels")
    if not isinstance(value, dict):
        raise ValueError(f"{path}: expected a map of NVUE keys")
    for key, child in value.items():
        budget[0] -= 1
        if budget[0] < 0:
            raise ValueError(f"more than {EXTRA_MAX_NODES} keys: split it, or render it in the model")
        if not isinstance(key, str) or not key or len(key) > EXTRA_MAX_TEXT:
            raise ValueError(f"{path}: key {str(key)[:40]!r} must be non-empty text (quote numeric ids: '3')")
        where = f"{path}.{key}"
        if depth == 0 and not (isinstance(child, dict) and child):
            # an entry owns what it sets from the second key down (render/extra.py): a bare
            # `system: {}` would claim the whole `system` tree, the switch's own settings with it
            raise ValueError(f"{where}: give the subtree to set below it, e.g. {key}: {{<name>: {{...}}}}")
        if isinstance(child, dict):
            _extra_tree(child, where, depth + 1, budget)
        elif isinstance(child, bool | int | float) or (isinstance(child, str) and len(child) <= EXTRA_MAX_TEXT):
            continue
        else:
            raise ValueError(f"{where}: expected text, a number, a boolean or a map, not {type(child).__name__}")


class ExtraMatch(_Strict):
    """which switches an `extra:` entry applies to: every key given must match (none: every switch)"""
    role: Literal["leaf", "spine", "super-spine"] | None = None
    """switch role"""
    unit: Annotated[int, Field(ge=1)] | None = None
    """scalable unit (rail-optimized) or pod (three-tier), 1-based as in plan.json"""
    group: Annotated[int, Field(ge=1)] | None = None
    """dragonfly+ group, 1-based as in plan.json"""
    rail: Annotated[int, Field(ge=0)] | None = None
    """rail of a rail-aligned leaf, 0-based as in plan.json"""
    device: Annotated[str, Field(min_length=1, max_length=253)] | None = None
    """switch name or glob, e.g. \"*-leaf-1*\""""


class Extra(_Strict):
    """config the model does not know (SNMP, an extra ACL), merged last into matching switches' configs"""
    match: ExtraMatch = ExtraMatch()
    """which switches: role, unit, group, rail, device (glob); all given must match"""
    nvue: dict[str, typing.Any] | None = None
    """NVUE subtree merged into startup.yaml's `set` (Cumulus), checked against the release's object model"""
    sonic: dict[str, dict[str, dict[str, str | list[str]]]] | None = None
    """config_db tables {TABLE: {row: {field: value}}} merged into config_db.json (SONiC), checked against the YANG"""
    override: bool = False
    """true is required to touch what the plan derives (QoS, buffers, addressing, BGP, planned interfaces)"""

    @field_validator("nvue")
    @classmethod
    def _nvue_tree(cls, value):
        if value is not None:
            _extra_tree(value, "nvue")
        return value

    @field_validator("sonic")
    @classmethod
    def _sonic_size(cls, value):
        if value is not None:
            fields = sum(len(row) for rows in value.values() for row in rows.values())
            if fields > EXTRA_MAX_NODES:
                raise ValueError(f"more than {EXTRA_MAX_NODES} fields: split it, or render it in the model")
            for table, rows in value.items():
                for row, data in rows.items():
                    for name, v in data.items():
                        if max(len(table), len(row), len(name)) > EXTRA_MAX_TEXT or \
                                sum(len(x) for x in ([v] if isinstance(v, str) else v)) > EXTRA_MAX_TEXT * 16:
                            raise ValueError(f"{table}.{row}.{name}: longer than {EXTRA_MAX_TEXT} characters")
        return value


class Layout(_Strict):
    """The data hall, for cable lengths (`fabricgen advise`, FG115): server racks fill rows in
    node order, one unit after another; every leaf of a unit sits in one network rack in the
    unit's first row, the spines in a row of their own after the last server row. Defaults
    are stated figures, not measurements: write what the floor plan says."""

    servers_per_rack: Annotated[int, Field(ge=1, le=64)] = 4
    """GPU servers per rack (default 4: four ~10 kW HGX/DGX servers in a 40 kW rack)"""
    racks_per_row: Annotated[int, Field(ge=1, le=200)] = 8
    """server racks per row, not counting the network rack"""
    rack_width_m: Annotated[float, Field(gt=0, le=5)] = 0.6
    """width of one rack along the row, metres"""
    row_pitch_m: Annotated[float, Field(gt=0, le=50)] = 2.4
    """distance between two rows (rack depth plus aisle), metres"""
    rise_m: Annotated[float, Field(ge=0, le=20)] = 2.0
    """cable run up out of one rack into the tray and down into the other, both ends together, metres"""
    leaf_rack: Literal["middle-of-row", "end-of-row"] = "middle-of-row"
    """where a unit's network rack (its leaves) stands in the unit's first row"""


class Intent(_Strict):
    fabric: FabricSection
    """the fabric's name and description"""
    topology: Topology
    """the shape and size of the fabric: kind, nodes, rails, speeds, switch models, cables"""
    switch_os: SwitchOS = SwitchOS()
    """the switch operating system and the release the switches run"""
    roce: Roce = Roce()
    """the lossless RoCEv2 contract both ends of every link share: DSCP, priorities, PFC, ECN, MTU"""
    addressing: Addressing = Addressing()
    """address pools and BGP ASNs every switch and host address is carved from"""
    hosts: Hosts = Hosts()
    """the GPU servers: names, management interface, rail NICs"""
    nccl: Nccl = Nccl()
    """NCCL settings written to every host's nccl.conf"""
    workload: Workload | None = None
    """optional: the training job `fabricgen capacity` sizes the fabric for"""
    layout: Layout | None = None
    """optional: racks and rows of the data hall, for cable lengths and media (`fabricgen advise`)"""
    deploy: Deploy = Deploy()
    """how `fabricgen deploy` reaches and rolls out to the switches and hosts"""
    management: Management | None = None
    """optional: the switch management plane (eth0 in the mgmt VRF, NTP, DNS, syslog, users)"""
    routing: Routing = Routing()
    """BGP knobs: multipath width, BFD, adaptive routing"""
    extra: Annotated[list[Extra], Field(max_length=256)] = []
    """escape hatch: NVUE subtrees / config_db tables per role, unit, group, rail or device, merged last"""

    def rail_nics(self) -> list[HostRail]:
        """hosts.rails, or the ConnectX naming of a typical 8-rail server when omitted."""
        if self.hosts.rails is not None and len(self.hosts.rails) == self.topology.rails:
            return list(self.hosts.rails)
        return [HostRail(netdev=f"ens{r + 1}f0np0", rdma=f"mlx5_{r}") for r in range(self.topology.rails)]
