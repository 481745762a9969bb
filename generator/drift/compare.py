"""Per-feature compliance of one device (the result shape of Nautobot Golden Config):
for every feature, compliant or not, with `missing` (intended, not on the device),
`extra` (on the device, not intended) and `changed` key paths.

Features, NVUE: interfaces (interface.*), bgp (router.*, vrf.*), qos (qos.* except
buffers), buffers (qos.pfc profiles with their cable lengths, qos.traffic-pool,
qos.buffer*), system (system.*); anything else is `other`.
SONiC: by config_db table (TABLE_FEATURES below).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from generator.common.structured_diff import Change, diff_trees, join_path

FEATURES = ("interfaces", "bgp", "qos", "buffers", "system")
SPLIT_TOPS = {"qos"}             # NVUE top-level keys whose children belong to different features
NVUE_BUFFER_KEYS = {"pfc", "traffic-pool", "buffer", "buffer-pool", "ingress-buffer", "egress-buffer"}

TABLE_FEATURES = {
    "PORT": "interfaces", "INTERFACE": "interfaces", "LOOPBACK_INTERFACE": "interfaces",
    "PORTCHANNEL": "interfaces", "PORTCHANNEL_MEMBER": "interfaces", "PORTCHANNEL_INTERFACE": "interfaces",
    "VLAN": "interfaces", "VLAN_MEMBER": "interfaces", "VLAN_INTERFACE": "interfaces",
    "DEVICE_NEIGHBOR": "interfaces",
    "BGP_NEIGHBOR": "bgp", "BGP_GLOBALS": "bgp", "BGP_GLOBALS_AF": "bgp", "BGP_PEER_RANGE": "bgp",
    "BGP_NEIGHBOR_AF": "bgp", "BGP_GLOBALS_AF_NETWORK": "bgp", "ROUTE_MAP_SET": "bgp",
    "ROUTE_MAP": "bgp", "PREFIX_SET": "bgp", "PREFIX": "bgp", "STATIC_ROUTE": "bgp",
    "DSCP_TO_TC_MAP": "qos", "TC_TO_QUEUE_MAP": "qos", "TC_TO_PRIORITY_GROUP_MAP": "qos",
    "PFC_PRIORITY_TO_PRIORITY_GROUP_MAP": "qos", "MAP_PFC_PRIORITY_TO_QUEUE": "qos", "PORT_QOS_MAP": "qos",
    "QUEUE": "qos", "SCHEDULER": "qos", "WRED_PROFILE": "qos", "PFC_WD": "qos",
    "BUFFER_POOL": "buffers", "BUFFER_PROFILE": "buffers", "BUFFER_PG": "buffers", "BUFFER_QUEUE": "buffers",
    "BUFFER_PORT_INGRESS_PROFILE_LIST": "buffers", "BUFFER_PORT_EGRESS_PROFILE_LIST": "buffers",
    "CABLE_LENGTH": "buffers",
    "DEVICE_METADATA": "system", "MGMT_INTERFACE": "system", "MGMT_PORT": "system", "NTP_SERVER": "system",
    "SYSLOG_SERVER": "system", "MGMT_VRF_CONFIG": "system", "NTP": "system", "DNS_NAMESERVER": "system",
    "BANNER_MESSAGE": "system",
}


@dataclass
class FeatureResult:
    feature: str
    missing: list[dict[str, Any]] = field(default_factory=list)
    extra: list[dict[str, Any]] = field(default_factory=list)
    changed: list[dict[str, Any]] = field(default_factory=list)

    @property
    def compliant(self) -> bool:
        return not (self.missing or self.extra or self.changed)

    def as_dict(self) -> dict[str, Any]:
        return {"compliant": self.compliant, "missing": self.missing, "extra": self.extra, "changed": self.changed}


def nvue_feature(top: str, child: str | None) -> str:
    if top == "interface":
        return "interfaces"
    if top in ("router", "vrf"):
        return "bgp"
    if top == "qos":
        return "buffers" if child in NVUE_BUFFER_KEYS else "qos"
    if top == "system":
        return "system"
    return "other"


def split_features(os_name: str, tree: dict) -> dict[str, dict]:
    """{feature: subtree}, each subtree keeping its full key paths from the root."""
    out: dict[str, dict] = {}
    for top, value in tree.items():
        if os_name == "cumulus" and top == "qos" and isinstance(value, dict):
            for child, sub in value.items():
                out.setdefault(nvue_feature(top, child), {}).setdefault(top, {})[child] = sub
        elif os_name == "cumulus":
            out.setdefault(nvue_feature(top, None), {})[top] = value
        else:
            out.setdefault(TABLE_FEATURES.get(top, "other"), {})[top] = value
    return out


def _split_top(changes: list[Change]) -> list[Change]:
    """A whole `qos` missing or extra is reported per child: buffers must not read as path `qos`."""
    out = []
    for c in changes:
        value = c.old if c.op == "removed" else c.new
        if c.path in SPLIT_TOPS and c.op != "changed" and isinstance(value, dict) and value:
            for key, sub in value.items():
                path = join_path(c.path, key)
                out.append(Change(c.op, path, old=sub if c.op == "removed" else None,
                                  new=sub if c.op == "added" else None))
        else:
            out.append(c)
    return out


def compare_device(os_name: str, intended: dict, actual: dict) -> dict[str, FeatureResult]:
    """Every standard feature (compliant or not), plus `other` when something falls there."""
    want, have = split_features(os_name, intended), split_features(os_name, actual)
    names = list(FEATURES) + sorted((set(want) | set(have)) - set(FEATURES))
    results: dict[str, FeatureResult] = {}
    for name in names:
        result = FeatureResult(name)
        for change in _split_top(diff_trees(want.get(name, {}), have.get(name, {}))):
            if change.op == "removed":
                result.missing.append({"path": change.path, "intended": change.old})
            elif change.op == "added":
                result.extra.append({"path": change.path, "actual": change.new})
            else:
                result.changed.append({"path": change.path, "intended": change.old, "actual": change.new})
        results[name] = result
    return results
