"""The compiled fabric plan: plain frozen dataclasses, no pydantic.

Large fabrics have tens of thousands of ports and links; per-object validation
would cost seconds, and everything here was derived from an already validated
intent. Every value a renderer or check needs is computed once, here.
"""

from __future__ import annotations

from dataclasses import MISSING, dataclass, field, fields
from typing import TYPE_CHECKING, NamedTuple

from generator.plan.headroom import Headroom

if TYPE_CHECKING:
    from generator.intent.discovery import Discovery

ROLE_LEAF = "leaf"
ROLE_SPINE = "spine"
ROLE_SUPER_SPINE = "super-spine"

TIER_HOST_LEAF = "host-leaf"
TIER_LEAF_SPINE = "leaf-spine"
TIER_SPINE_SUPER = "spine-super-spine"
TIER_GLOBAL = "global"


def _fast_init(cls):
    """Give a frozen, slotted dataclass without defaults an __init__ that fills each slot through
    its member descriptor instead of object.__setattr__ (what a frozen dataclass's generated
    __init__ calls per field): the same signature, values and frozenness, ~2.5x cheaper. A
    98k-GPU plan builds ~98k Nics (issue 14; Port and Link are tuple rows)."""
    names = [f.name for f in fields(cls)]
    if any(f.default is not MISSING or f.default_factory is not MISSING or not f.init for f in fields(cls)) \
            or hasattr(cls, "__post_init__"):
        raise TypeError(f"{cls.__name__}: _fast_init handles plain fields only")
    scope = {f"_set_{n}": cls.__dict__[n].__set__ for n in names}
    exec(f"def __init__(self, {', '.join(names)}):\n"                       # noqa: S102 - our own names
         + "".join(f"    _set_{n}(self, {n})\n" for n in names), scope)
    init = scope["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__module__ = cls.__module__
    cls.__init__ = init
    return cls


@dataclass(frozen=True, slots=True)
class Switch:
    name: str
    role: str               # leaf | spine | super-spine
    model: str
    asic: str
    asn: int
    loopback: str           # "10.255.0.1" (no prefix length)
    mgmt_ip: str
    rail: int | None        # rail-aligned leaves only
    unit: int | None        # scalable unit / pod, 1-based
    group: int | None       # dragonfly-plus group, 1-based


class Port(NamedTuple):
    """A logical switch port carrying one link (swp1 or a split port swp1s0).

    A tuple row, not a dataclass, like Link (issue 14: a 98k-GPU plan holds ~590k ports and
    ~295k links): compile builds a row in C (tuple.__new__, ~0.15 us) where a frozen slotted
    dataclass paid a Python __init__ (~1.1 us). Fields read the same (`p.port`), rows stay
    immutable and compare by value; `p._replace(...)` stands in for dataclasses.replace."""

    device: str
    port: str
    physical: str           # front-panel port: swp1
    breakout: str | None    # "2x" when the physical port is split, else None
    speed_g: int
    lanes: int              # SerDes lanes of this logical port
    cable_m: float
    lossless: bool
    headroom: Headroom | None
    peer_device: str
    peer_port: str
    tier: str
    ip: str | None          # "172.16.0.0/31" when numbered, else None (unnumbered)
    peer_ip: str | None     # the far end's address without prefix length
    peer_asn: int | None    # None for host-facing ports


class Link(NamedTuple):
    """One cable between two devices: a tuple row, see Port."""

    a_device: str
    a_port: str
    b_device: str
    b_port: str
    tier: str
    speed_g: int
    length_m: float
    cable: str              # DAC | AOC


@_fast_init
@dataclass(frozen=True, slots=True)
class Nic:
    rail: int
    netdev: str
    rdma: str
    ip: str                 # host side, odd address of the /31: "172.16.0.1/31"
    gateway: str            # leaf side: "172.16.0.0"
    switch: str
    port: str


@_fast_init
@dataclass(frozen=True, slots=True)
class Host:
    name: str
    index: int              # 1-based node number
    mgmt_ip: str
    unit: int | None
    group: int | None
    nics: tuple[Nic, ...]


@dataclass(frozen=True, slots=True)
class QosPlan:
    """The lossless contract, computed once from `roce:`; every target renders these values."""

    mode: str                               # lossless | lossy
    roce_dscp: int
    roce_priority: int
    cnp_dscp: int
    cnp_priority: int
    roce_tc: int
    cnp_tc: int
    dscp_to_priority: tuple[tuple[int, int], ...]     # explicit entries (dscp, switch priority)
    priority_to_tc: tuple[tuple[int, int], ...]       # (switch priority, traffic class) for all 8
    pfc_priorities: tuple[int, ...]                   # () when lossy
    ets: tuple[tuple[int, str, int], ...]             # (tc, "dwrr"|"strict", bw percent or 0)
    ecn_tcs: tuple[int, ...]
    ecn_min_bytes: int
    ecn_max_bytes: int
    ecn_probability: int
    pfc_watchdog: bool
    # (detection, restoration, poll) ms as the intent gives them; None: the NOS default
    pfc_watchdog_ms: tuple[int | None, int | None, int | None]
    switch_mtu: int
    host_mtu: int
    tos: int                                          # DSCP << 2: NCCL_IB_TC default (NIC ToS: nccl.nic_tos)
    # NVUE lossless defaults differ from the intent: only these need explicit keys
    differs_from_nvue_default: bool


@dataclass(frozen=True, slots=True)
class NcclPlan:
    settings: tuple[tuple[str, str], ...]     # ordered (KEY, VALUE) as written to nccl.conf


@dataclass(frozen=True, slots=True)
class HostRollout:
    """`deploy.hosts`: how playbooks/hosts.yml rolls out (inventory.yml `hosts` group vars)."""

    user: str = "root"
    canary: int = 1                   # hosts in the first batch alone; 0: no canary batch
    batch: int | str = "10%"          # Ansible serial after the canary: a count or "N%"
    max_fail_percentage: int = 0
    drain: str = ""                   # shell command template run on the controller, {host} replaced
    undrain: str = ""
    require_gpudirect: bool = True
    scheduler: str = "none"           # none | slurm | kubernetes: what the drain waits for
    drain_timeout: int = 3600         # seconds
    scheduler_node: str = ""          # {host} template of the scheduler's node name; "": the host name
    idle: bool = False                # no jobs run on the hosts (deploy.hosts.idle)
    forks: int | None = None          # Ansible forks; None: from the largest batch (generator/deploy/hosts.py)

    def serial(self) -> list[int | str]:
        """Ansible `serial`: the canary batch, then batches of `batch` (the last one repeats)."""
        return [self.canary, self.batch] if self.canary else [self.batch]


@dataclass(frozen=True, slots=True)
class MgmtUser:
    name: str
    role: str                 # system-admin | nvue-admin | nvue-monitor
    hashed_password: str | None
    ssh_keys: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ManagementPlan:
    """`management:` of the intent; None in the plan means "keep the switch's own"."""

    prefix_len: int           # of addressing.management: eth0 is Switch.mgmt_ip/prefix_len
    gateway: str
    ntp: tuple[str, ...]
    dns: tuple[str, ...]
    syslog: tuple[str, ...]
    timezone: str
    users: tuple[MgmtUser, ...]
    banner: str | None


@dataclass(frozen=True, slots=True)
class RoutingPlan:
    max_paths: int            # BGP multipath width rendered on every switch
    max_paths_set: bool       # written in the intent (else the default)
    bfd: bool
    adaptive_routing: bool
    widest_ecmp: int          # the largest equal-cost next-hop set the topology builds


# weakref_slot: results derived from a plan are kept beside it, weakly (generator/plan/budget.py)
@dataclass(frozen=True, slots=True, weakref_slot=True)
class FabricPlan:
    fabric: str
    description: str
    kind: str
    switch_os: str            # cumulus | sonic
    switch_os_version: tuple[int, int]
    nic_speed_g: int
    rails: int
    oversubscription: tuple[int, int]
    switches: tuple[Switch, ...]
    hosts: tuple[Host, ...]
    links: tuple[Link, ...]
    ports: tuple[Port, ...]
    qos: QosPlan
    loopback_pool: str
    rail_pool: str
    fabric_link_pool: str | None          # None = unnumbered
    mgmt_pool: str
    mgmt_interface: str
    nic_tooling: str
    deploy_user: str
    host_lldpd: bool = False              # hosts.lldpd: lldpd with portidsubtype ifname on every host
    nic_firmware_min: str | None = None   # hosts.nic_firmware_min: roce-qos.sh reports a rail NIC below it
    nccl: NcclPlan | None = None
    management: ManagementPlan | None = None
    routing: RoutingPlan | None = None
    host_rollout: HostRollout = HostRollout()
    # topology.build_out.nodes when above topology.nodes: this plan is that fabric's first phase(s)
    build_out_nodes: int | None = None
    # with build_out above nodes: switch -> its switch-to-switch links in the build-out fabric
    # (reserved ones included), so a setting sized by them (SONiC max_ebgp_paths) never changes
    build_out_fabric_links: dict[str, int] = field(default_factory=dict, compare=False, repr=False)
    # hosts.discovered, read: per host, the RDMA device of each rail netdev (None: no file)
    discovery: Discovery | None = field(default=None, compare=False, repr=False)
    # hosts whose NCCL settings differ from `nccl` (their discovered RDMA names differ from
    # hosts.rails): host name -> its own NcclPlan. Empty without a discovery file.
    host_nccl: dict[str, NcclPlan] = field(default_factory=dict, hash=False, repr=False)
    # device name -> indexes, filled by compile for O(1) lookups in renderers
    _ports_by_device: dict[str, tuple[Port, ...]] = field(default_factory=dict, compare=False, repr=False)
    # the intent's `extra:` entries (generator/plan/extra.py ExtraPlan), merged last into the configs
    extra: tuple = field(default=(), hash=False)

    def nccl_of(self, host: Host) -> NcclPlan | None:
        """The NCCL settings of HOST's nccl.conf / nccl.env (per host only when discovery gave it
        other RDMA names)."""
        return self.host_nccl.get(host.name, self.nccl) if self.host_nccl else self.nccl

    def ports_of(self, device: str) -> tuple[Port, ...]:
        return self._ports_by_device.get(device, ())

    def switch(self, name: str) -> Switch:
        for sw in self.switches:
            if sw.name == name:
                return sw
        raise KeyError(name)
