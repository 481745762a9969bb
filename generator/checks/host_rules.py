"""FG3xx: the host half of the lossless contract and NCCL settings.

Intent-stage rules look at `hosts:` and `nccl.settings`; plan-stage rules check
that what the host files say (NCCL ToS, NIC PFC priority, MTU, HCA list) agrees
with what the switches are given, and that every NIC lands on a lossless port.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from generator.checks.registry import ERROR, WARNING, CheckContext, rule
from generator.plan.nccl import (
    ECN_CE,
    ECN_MASK,
    LINK_LOCAL_GID_INDEXES,
    RAIL_ALIGNED_KINDS,
    ROCE_V2_IPV4_GID_INDEX,
    build_nccl,
    c_int,
    nccl_auto_selects_gid,
    nccl_param_names,
    setting_text,
)

Finding = Iterator[tuple[str, str]]

# strtoll(value, NULL, 0) as NCCL's param.cc calls it: decimal, 0x hex or 0 octal.
# Anything else is read as its longest valid prefix (often 0) without a warning.
_C_INT = re.compile(r"^[+-]?(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)$")
_int = c_int

# Integer parameters whose valid range we know (NCCL docs, ROCE.md §6, IB spec).
INT_RANGES: dict[str, tuple[int, int | None]] = {
    "NCCL_IB_RETRY_CNT": (0, 7),              # 3-bit QP attribute
    "NCCL_IB_TIMEOUT": (1, 31),               # 5-bit local ACK timeout exponent
    "NCCL_IB_QPS_PER_CONNECTION": (1, 128),
    "NCCL_IB_TC": (0, 255),                   # ToS byte
    "NCCL_IB_FIFO_TC": (0, 255),
    "NCCL_IB_SL": (0, 15),
    "NCCL_IB_GID_INDEX": (-1, 255),           # -1 = auto (NCCL >= 2.21)
    "NCCL_IB_ROCE_VERSION_NUM": (1, 2),
    "NCCL_CROSS_NIC": (0, 2),
    "NCCL_IB_DISABLE": (0, 1),
    "NCCL_IB_SPLIT_DATA_ON_QPS": (0, 1),
    "NCCL_IB_ADAPTIVE_ROUTING": (0, 1),
    "NCCL_IB_PCI_RELAXED_ORDERING": (0, 2),
    "NCCL_IB_USE_INLINE": (0, 1),
    "NCCL_IB_ECE_ENABLE": (0, 1),
    "NCCL_NET_GDR_READ": (0, 1),
    "NCCL_P2P_DISABLE": (0, 1),
    "NCCL_SHM_DISABLE": (0, 1),
    "NCCL_MIN_NCHANNELS": (1, None),
    "NCCL_MAX_NCHANNELS": (1, None),
    "NCCL_BUFFSIZE": (1, None),
    "NCCL_NTHREADS": (64, 512),
    "NCCL_SOCKET_NTHREADS": (1, 16),
    "NCCL_NSOCKS_PERTHREAD": (1, 64),
}
ENUMS: dict[str, tuple[str, ...]] = {
    "NCCL_DEBUG": ("VERSION", "WARN", "INFO", "ABORT", "TRACE"),
    "NCCL_IB_ADDR_FAMILY": ("AF_INET", "AF_INET6"),
}
_PATH_LEVELS = ("LOC", "NVL", "PIX", "PXB", "PXN", "PHB", "SYS")
_LEVEL_PARAMS = ("NCCL_NET_GDR_LEVEL", "NCCL_P2P_LEVEL")
_DEVICE_LIST = re.compile(r"^[\^=]?[A-Za-z0-9_.-]+(:\d+)?(,[A-Za-z0-9_.-]+(:\d+)?)*$")

TUNING_RISKS = {
    "NCCL_ALGO": "forces one algorithm for every size and collective; NCCL's tuner picks per message size and "
                 "a forced ring/tree is slower outside the size it was measured at",
    "NCCL_PROTO": "LL caps bandwidth at a fraction of line rate; forcing LL128 on platforms NCCL disables it "
                  "for can corrupt data",
    "NCCL_BUFFSIZE": "changes per-channel buffer memory on every GPU and peer; too small stalls pipelines, too "
                     "large exhausts GPU memory on large jobs",
    "NCCL_NTHREADS": "changes CUDA threads per block for every kernel; wrong values lower bandwidth or fail to "
                     "launch on some GPUs",
}



def _settings_path(key: str) -> str:
    return f"nccl.settings.{key}"


def _value_problem(key: str, raw: object) -> str | None:
    """Why NCCL would not read `raw` as the user meant, or None."""
    if isinstance(raw, bool):
        rng = INT_RANGES.get(key)
        if rng is not None and rng[0] <= 0 and (rng[1] is None or rng[1] >= 1):
            return None
        return f"a boolean is written as 1/0 but {key} does not take 0/1: quote the value NCCL expects"
    text = setting_text(raw)
    if "\n" in text or "\r" in text:
        return "contains a line break: nccl.conf is one KEY=VALUE per line, so the rest would be lost"
    bad = next((ch for ch in text if not " " <= ch <= "~"), None)
    if bad is not None:
        # nccl.conf is read with C string functions: a NUL ends the value there, other control
        # and non-ASCII bytes reach getenv() users verbatim
        return (f"contains {bad!r}, which is not printable ASCII: NCCL reads values as C strings; "
                "write plain ASCII")
    if text != text.strip():
        return f"has leading or trailing spaces: NCCL reads everything after '=' verbatim ({text!r})"
    if text == "":
        return "is empty: NCCL treats an empty value as unset; remove the key instead"
    if key in INT_RANGES:
        lo, hi = INT_RANGES[key]
        value = _int(text)
        if value is None:
            return f"{text!r} is not an integer: NCCL's strtoll would read it as a different number without warning"
        if value < lo or (hi is not None and value > hi):
            bound = f"{lo}-{hi}" if hi is not None else f">= {lo}"
            return f"{value} is out of range ({bound})"
        if key == "NCCL_NTHREADS" and value % 64:
            return f"{value} is not a multiple of 64 (NCCL accepts 64, 128, 256, 512)"
        return None
    if key in ENUMS and text.upper() not in ENUMS[key]:
        return f"{text!r} is not one of {', '.join(ENUMS[key])}"
    if key in _LEVEL_PARAMS and text.upper() not in _PATH_LEVELS and not _C_INT.match(text):
        return f"{text!r} is not a path level ({', '.join(_PATH_LEVELS)})"
    if key in ("NCCL_IB_HCA", "NCCL_SOCKET_IFNAME") and not _DEVICE_LIST.match(text):
        return f"{text!r} is not a device list such as =mlx5_0:1,mlx5_1:1 ('=' exact, '^' exclude)"
    return None


@rule("FG301", ERROR, "unknown NCCL parameter", stage="intent")
def unknown_nccl_parameter(ctx: CheckContext) -> Finding:
    """A key in nccl.settings that NCCL does not read.

    NCCL ignores unknown variables silently, so a typo (NCCL_IB_GID_IDX for
    NCCL_IB_GID_INDEX) leaves the default in force while the reviewer believes it is
    set. The list of valid names is every parameter NCCL 2.30.7 reads
    (generator/data/nccl_params.txt). Fix the spelling or remove the key."""
    names = nccl_param_names()
    for key in ctx.intent.nccl.settings:
        if key not in names:
            close = sorted(n for n in names if n.startswith(key[:9]))[:3]
            hint = f" (did you mean {', '.join(close)}?)" if close and key.startswith("NCCL_") else ""
            yield _settings_path(key), f"{key} is not an NCCL parameter{hint}: fix the name or remove it"


@rule("FG302", ERROR, "invalid NCCL parameter value", stage="intent")
def invalid_nccl_value(ctx: CheckContext) -> Finding:
    """A value NCCL would not read as intended.

    NCCL parses integer parameters with strtoll and no end check: "7x" becomes 7,
    "seven" becomes 0, and out-of-range values reach the verbs layer (a retry count
    above 7 does not fit the 3-bit QP field; a timeout above 31 does not fit 5 bits).
    nccl.conf takes every character after '=' verbatim, so spaces and line breaks
    change the value, and values must be printable ASCII (a NUL ends a C string early).
    Known ranges: NCCL_IB_RETRY_CNT 0-7, NCCL_IB_TIMEOUT 1-31,
    NCCL_IB_QPS_PER_CONNECTION 1-128, NCCL_IB_TC 0-255, NCCL_IB_SL 0-15,
    NCCL_CROSS_NIC 0-2, NCCL_NTHREADS 64-512 in steps of 64."""
    names = nccl_param_names()
    for key, raw in ctx.intent.nccl.settings.items():
        if key not in names:
            continue        # FG301
        problem = _value_problem(key, raw)
        if problem:
            yield _settings_path(key), f"{key}: {problem}"


@rule("FG331", WARNING, "NCCL value that nccl.env readers read differently", stage="intent")
def nccl_env_quoting(ctx: CheckContext) -> Finding:
    """A value in nccl.settings with a quote or a backslash.

    nccl.conf and nccl.env carry the same KEY=VALUE lines. NCCL, `docker run --env-file`
    and a Kubernetes ConfigMap from an env file take the value verbatim; systemd's
    EnvironmentFile= treats quotes and backslashes as shell-like quoting and removes them
    (systemd.exec(5)); a Slurm TaskProlog that prints "export KEY=VALUE" hands the line to
    a shell. The job then sees another value depending on how nccl.env reached it.
    Write the value without quotes and backslashes (a path without an apostrophe)."""
    names = nccl_param_names()
    for key, raw in ctx.intent.nccl.settings.items():
        text = setting_text(raw)
        if key in names and any(ch in text for ch in "\"'\\"):
            yield _settings_path(key), (f"{key}: {text!r} has a quote or backslash: systemd EnvironmentFile= removes "
                                        "them from nccl.env, docker --env-file and nccl.conf keep them")


@rule("FG303", WARNING, "NCCL tuning parameter forced", stage="intent")
def forced_nccl_tuning(ctx: CheckContext) -> Finding:
    """NCCL_ALGO, NCCL_PROTO, NCCL_BUFFSIZE or NCCL_NTHREADS set in nccl.settings.

    These are debugging and benchmarking knobs. NCCL's documentation advises against
    forcing them in production: NCCL picks algorithm, protocol and buffer sizes per
    message size and topology, and a value tuned on one job or NCCL version is
    usually slower elsewhere; NCCL_PROTO=LL caps bandwidth and forcing LL128 where
    NCCL disables it can corrupt data. fabricgen writes them because you asked;
    keep them only with a benchmark that justifies them."""
    for key in ctx.intent.nccl.settings:
        if key in TUNING_RISKS:
            yield _settings_path(key), f"{key} is forced for every job on every host: {TUNING_RISKS[key]}"


@rule("FG304", ERROR, "host rail NIC list does not match topology.rails", stage="intent")
def rail_count_mismatch(ctx: CheckContext) -> Finding:
    """hosts.rails must list exactly one NIC per rail.

    Each entry of hosts.rails is the NIC that connects to rail r. With fewer entries
    some rails would have no interface on the host; with more, a NIC would get no
    leaf port. Add or remove entries so there are topology.rails of them (or drop
    hosts.rails to use the ConnectX default names ens<r+1>f0np0 / mlx5_<r>)."""
    rails = ctx.intent.hosts.rails
    want = ctx.intent.topology.rails
    if rails is not None and len(rails) != want:
        yield "hosts.rails", f"lists {len(rails)} NIC(s) but topology.rails is {want}: give one entry per rail"


def _duplicates(values: list[str]) -> Iterator[tuple[int, int, str]]:
    first: dict[str, int] = {}
    for i, value in enumerate(values):
        if value in first:
            yield i, first[value], value
        else:
            first[value] = i


@rule("FG305", ERROR, "duplicate rail netdev name", stage="intent")
def duplicate_netdev(ctx: CheckContext) -> Finding:
    """Two rails name the same network interface.

    Every rail needs its own interface: the address, MTU, routing table and PFC
    settings of one rail would overwrite the other's, and the second leaf link would
    stay unconfigured."""
    rails = ctx.intent.hosts.rails or []
    for i, j, name in _duplicates([r.netdev for r in rails]):
        yield f"hosts.rails[{i}].netdev", f"{name} is already the netdev of hosts.rails[{j}]: each rail needs its own"


@rule("FG306", ERROR, "duplicate RDMA device name", stage="intent")
def duplicate_rdma(ctx: CheckContext) -> Finding:
    """Two rails name the same RDMA device.

    NCCL_IB_HCA is built from these names; a repeated device makes NCCL use one HCA
    twice and leave another rail's NIC idle (half the bandwidth, all traffic of two
    rails on one leaf)."""
    rails = ctx.intent.hosts.rails or []
    for i, j, name in _duplicates([r.rdma for r in rails]):
        yield f"hosts.rails[{i}].rdma", f"{name} is already the RDMA device of hosts.rails[{j}]: each rail needs its own"


@rule("FG307", ERROR, "rail NIC is the management interface", stage="intent")
def rail_is_mgmt(ctx: CheckContext) -> Finding:
    """A rail netdev equals hosts.mgmt_interface.

    fabricgen rewrites rail interfaces (address, MTU, routing) and leaves the
    management interface alone; one interface cannot be both. The deploy would cut
    the management connection it runs over."""
    mgmt = ctx.intent.hosts.mgmt_interface
    for i, nic in enumerate(ctx.intent.hosts.rails or []):
        if nic.netdev == mgmt:
            yield f"hosts.rails[{i}].netdev", f"{mgmt} is also hosts.mgmt_interface: use the rail NIC's own name"


def _nccl(ctx: CheckContext) -> dict[str, str]:
    plan = ctx.plan
    nccl = plan.nccl if plan.nccl is not None else build_nccl(ctx.intent, plan.qos)
    return dict(nccl.settings)


@rule("FG310", ERROR, "NCCL traffic class does not carry the switch RoCE DSCP", stage="plan")
def nccl_tc_mismatch(ctx: CheckContext) -> Finding:
    """NCCL_IB_TC must be the RoCE DSCP shifted left by two (plus optional ECN bits).

    NCCL marks its RDMA traffic with NCCL_IB_TC as the IP ToS byte; the switches
    classify DSCP (ToS >> 2) into the lossless priority. A different DSCP puts all
    NCCL traffic in a lossy queue: no PFC, drops under incast, go-back-N
    retransmissions. fabricgen sets NCCL_IB_TC from roce.dscp; this fires when
    nccl.settings overrides it with a value for another DSCP, or with the ECN bits 11
    (Congestion Experienced, RFC 3168): every packet would arrive marked, so the receiving
    NIC answers each with a CNP and DCQCN holds every sender at its minimum rate.
    ECT(0) (106 for DSCP 26, NVIDIA's usual value) and ECT(1) are accepted: the switches
    classify on the DSCP alone, and roce-qos.sh gives the NIC the same ToS (nic_tos)."""
    qos = ctx.plan.qos
    tc = _int(_nccl(ctx).get("NCCL_IB_TC"))
    if tc is not None and 0 <= tc <= 255 and tc >> 2 != qos.roce_dscp:
        yield "nccl.settings.NCCL_IB_TC", (f"{tc} marks DSCP {tc >> 2} but the switches carry RoCE on DSCP "
                                           f"{qos.roce_dscp}: use {qos.tos} (or {qos.tos | 2} with ECT(0))")
    elif tc is not None and 0 <= tc <= 255 and tc & ECN_MASK == ECN_CE:
        yield "nccl.settings.NCCL_IB_TC", (f"{tc} sets the ECN bits to 11 (Congestion Experienced): every "
                                           f"packet would look congested and DCQCN would throttle every sender; "
                                           f"use {qos.tos} (or {qos.tos | 2} with ECT(0))")
    mapped = dict(qos.dscp_to_priority)
    if mapped.get(qos.roce_dscp) != qos.roce_priority:
        yield "roce.dscp", (f"switch maps DSCP {qos.roce_dscp} to priority {mapped.get(qos.roce_dscp)} but the "
                            f"hosts map it to {qos.roce_priority}")
    if mapped.get(qos.cnp_dscp) != qos.cnp_priority:
        yield "roce.cnp_dscp", (f"switch maps CNP DSCP {qos.cnp_dscp} to priority {mapped.get(qos.cnp_dscp)} but "
                                f"the hosts map it to {qos.cnp_priority}")


@rule("FG311", ERROR, "host PFC priority is not lossless on the switches", stage="plan")
def pfc_priority_mismatch(ctx: CheckContext) -> Finding:
    """The NIC enables PFC on the RoCE priority; the switches must pause the same one.

    roce-qos.sh turns PFC on for roce.priority only. If the switch side pauses a
    different priority, NIC pause frames are ignored and the switch pauses a class
    the NIC does not honour: the fabric is lossy while both ends look configured."""
    qos = ctx.plan.qos
    if qos.mode == "lossless" and tuple(qos.pfc_priorities) != (qos.roce_priority,):
        yield "roce.priority", (f"hosts enable PFC on priority {qos.roce_priority} but the switches on "
                                f"{list(qos.pfc_priorities)}")


@rule("FG312", ERROR, "host MTU above the MTU of its leaf port", stage="plan")
def host_mtu_above_leaf(ctx: CheckContext) -> Finding:
    """Every rail NIC's MTU must fit the leaf port it is cabled to.

    A host frame larger than the switch port MTU is dropped by the switch (not
    fragmented: RoCE sets DF), so large RDMA messages never complete while small
    ones work. Checked per NIC against its leaf port from the plan."""
    plan = ctx.plan
    qos = plan.qos
    if qos.host_mtu <= qos.switch_mtu:
        return
    for host in plan.hosts:
        for nic in host.nics:
            yield "roce.mtu.host", (f"{host.name} {nic.netdev} MTU {qos.host_mtu} exceeds {nic.switch} {nic.port} "
                                    f"MTU {qos.switch_mtu} (and every other NIC likewise): lower roce.mtu.host")
            return


@rule("FG314", ERROR, "NIC leaf port is not lossless", stage="plan")
def nic_port_not_lossless(ctx: CheckContext) -> Finding:
    """Every rail NIC must land on a leaf port that the plan makes lossless.

    With roce.mode lossless the NIC pauses and expects pauses on the RoCE priority;
    a leaf port without PFC and headroom drops instead, and RoCE falls back to
    go-back-N retransmission. Reported once per leaf with the number of NICs."""
    plan = ctx.plan
    if plan.qos.mode != "lossless":
        return
    bad: dict[str, list[str]] = {}
    named: dict[str, dict[str, object]] = {}     # switch -> port name -> its first Port (as a scan finds)
    for host in plan.hosts:
        for nic in host.nics:
            by_port = named.get(nic.switch)
            if by_port is None:
                by_port = named[nic.switch] = {}
                for p in plan.ports_of(nic.switch):
                    by_port.setdefault(p.port, p)
            port = by_port.get(nic.port)
            if port is None:
                why = f"{nic.switch} has no port {nic.port}"
            elif port.peer_device != host.name:
                why = f"{nic.switch} {nic.port} is cabled to {port.peer_device}"
            elif not port.lossless or port.headroom is None:
                why = f"{nic.switch} {nic.port} has no PFC headroom"
            else:
                continue
            bad.setdefault(nic.switch, []).append(f"{host.name} {nic.netdev} ({why})")
    for switch, items in sorted(bad.items()):
        more = f" and {len(items) - 1} more" if len(items) > 1 else ""
        yield "roce.mode", f"{items[0]}{more} on {switch}: the NIC's leaf port must be lossless"


@rule("FG315", WARNING, "NCCL_IB_HCA does not select exactly the rail NICs", stage="plan")
def nccl_hca_mismatch(ctx: CheckContext) -> Finding:
    """NCCL_IB_HCA should list every rail RDMA device, with a leading '=' for exact match.

    Without '=', NCCL matches prefixes: mlx5_1 also selects mlx5_10..mlx5_19
    (storage or management HCAs on 16-NIC servers). A rail device missing from the
    list leaves that rail idle; '^' excludes instead of selecting."""
    value = _nccl(ctx).get("NCCL_IB_HCA")
    if value is None:
        return
    if value.startswith("^"):
        yield "nccl.settings.NCCL_IB_HCA", f"{value!r} excludes devices: list the rail NICs with '=' instead"
        return
    if not value.startswith("="):
        yield "nccl.settings.NCCL_IB_HCA", f"{value!r} matches by prefix: start it with '=' for exact names"
    listed = {item.split(":")[0] for item in value.lstrip("=").split(",")}
    missing = [nic.rdma for nic in ctx.intent.rail_nics() if nic.rdma not in listed]
    if missing:
        yield "nccl.settings.NCCL_IB_HCA", f"{value!r} leaves out rail device(s) {', '.join(missing)}"
    elif ctx.plan.host_nccl or ctx.plan.discovery is None or "NCCL_IB_HCA" not in ctx.intent.nccl.settings:
        return      # fabricgen wrote each host's own list (FabricPlan.host_nccl)
    # nccl.settings pins one list for every host: it must also hold each host's discovered names
    for host in ctx.plan.hosts:
        missing = [nic.rdma for nic in host.nics if nic.rdma not in listed]
        if missing:
            yield "nccl.settings.NCCL_IB_HCA", (f"{value!r} leaves out {host.name}'s discovered rail device(s) "
                                                f"{', '.join(missing)} (and maybe other hosts'): remove the key to "
                                                "get each host's own list")
            return


@rule("FG316", WARNING, "NCCL_CROSS_NIC allows cross-rail rings on a rail-aligned fabric", stage="plan")
def cross_nic_on_rails(ctx: CheckContext) -> Finding:
    """On rail-aligned leaves (rail-optimized, three-tier, dragonfly-plus) traffic
    between NICs of the same rail stays on one leaf; a ring that changes rails must
    cross the spine tier, which is sized for failures and cross-unit traffic, not for
    all of it. fabricgen writes NCCL_CROSS_NIC=0 there; this fires on an override."""
    if ctx.plan.kind not in RAIL_ALIGNED_KINDS:
        return
    value = _nccl(ctx).get("NCCL_CROSS_NIC")
    if value is not None and value != "0":
        yield "nccl.settings.NCCL_CROSS_NIC", f"{value} lets rings change rails through the spines: use 0"


def _user_gid_index(ctx: CheckContext) -> int | None:
    """NCCL_IB_GID_INDEX from nccl.settings when it is a whole integer (FG302 reports the rest)."""
    raw = ctx.intent.nccl.settings.get("NCCL_IB_GID_INDEX")
    return None if raw is None or isinstance(raw, bool) else c_int(setting_text(raw))


@rule("FG317", WARNING, "NCCL GID index overridden", stage="plan")
def gid_index_forced(ctx: CheckContext) -> Finding:
    """NCCL_IB_GID_INDEX in nccl.settings replaces what fabricgen would write.

    Without nccl.min_version, or below 2.21, fabricgen writes NCCL_IB_GID_INDEX=3:
    the RoCEv2 GID of the port's first IPv4 address on a stock ConnectX port (0 and 1
    are link-local, 2 is RoCEv1). From 2.21 on it writes nothing and NCCL selects the
    RoCEv2 IPv4 GID itself. Another fixed index is right only on hosts whose GID
    table differs (extra VLAN or IPv6 addresses) and then must be the same on every
    host: check show_gids everywhere; roce-qos.sh --check verifies the index you set
    on every rail NIC. Index 0, 1 and -1 on older NCCL are FG319."""
    value = _user_gid_index(ctx)
    if value is None or value in LINK_LOCAL_GID_INDEXES:
        return
    path = "nccl.settings.NCCL_IB_GID_INDEX"
    if nccl_auto_selects_gid(ctx.intent):
        if value >= 0:
            yield path, (f"{value} is forced on every host although NCCL >= 2.21 (nccl.min_version "
                         f"{ctx.intent.nccl.min_version}) selects the RoCEv2 IPv4 GID itself: verify with "
                         "show_gids or remove it")
    elif value >= 0 and value != ROCE_V2_IPV4_GID_INDEX:
        yield path, (f"{value} replaces fabricgen's {ROCE_V2_IPV4_GID_INDEX} (RoCEv2/IPv4 on a stock ConnectX "
                     f"port): verify with show_gids on every host or remove it")


@rule("FG319", ERROR, "NCCL GID index cannot cross the routed fabric", stage="plan")
def gid_index_unroutable(ctx: CheckContext) -> Finding:
    """NCCL_IB_GID_INDEX names a GID that cannot reach another rail /31.

    GID indexes 0 and 1 of every RoCE port are the kernel's default GIDs, fe80::
    link-local addresses made from the MAC (RoCEv1 and RoCEv2). A link-local or
    RoCEv1 packet is not routed, and every NIC of the fabric sits on its own /31
    behind its leaf, so NCCL connections to other hosts fail. -1 (auto-select)
    exists only from NCCL 2.21 on (src/transport/net_ib); older NCCL passes it to
    ibv_query_gid, which fails. Use 3 (fabricgen's default below 2.21), or set
    nccl.min_version to the oldest NCCL your jobs run if that is 2.21 or newer."""
    value = _user_gid_index(ctx)
    path = "nccl.settings.NCCL_IB_GID_INDEX"
    if value in LINK_LOCAL_GID_INDEXES:
        yield path, (f"{value} is a link-local fe80:: GID that no rail /31 can route: use "
                     f"{ROCE_V2_IPV4_GID_INDEX} or remove the key")
    elif value == -1 and not nccl_auto_selects_gid(ctx.intent):
        have = ctx.intent.nccl.min_version
        why = f"nccl.min_version {have} is older" if have else "nccl.min_version is unset"
        yield path, (f"-1 (auto-select) needs NCCL >= 2.21 and {why}: set nccl.min_version if every job "
                     f"runs 2.21 or newer, else remove the key to get {ROCE_V2_IPV4_GID_INDEX}")


@rule("FG318", WARNING, "NCCL bootstrap interface is a rail NIC", stage="plan")
def socket_ifname_on_rail(ctx: CheckContext) -> Finding:
    """NCCL_SOCKET_IFNAME should name the management interface.

    Bootstrap connects every rank to every other over TCP. A rail interface has a
    /31 with routes only in its own policy table, reachable from its own address:
    peers on other leaves or rails may be unreachable and jobs hang at init."""
    value = _nccl(ctx).get("NCCL_SOCKET_IFNAME")
    if value is None or not ctx.plan.hosts:
        return
    rails = {nic.netdev for nic in ctx.plan.hosts[0].nics}
    names = {item for item in value.lstrip("=^").split(",")}
    hit = sorted(names & rails)
    if hit and not value.startswith("^"):
        yield "nccl.settings.NCCL_SOCKET_IFNAME", (f"{value!r} selects rail NIC {hit[0]}: use the management "
                                                   f"interface ={ctx.plan.mgmt_interface}")
