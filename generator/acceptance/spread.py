"""Load spread across a leaf's uplinks during a burn-in round or collective (issue 39 item 5).

ECMP hashes each flow onto one uplink; with few flows (few QPs per connection) the hash leaves
some uplinks with two flows and others with none. Meta's RoCE paper (SIGCOMM 2024, "RDMA over
Ethernet for Distributed AI Training at Meta Scale") reports exactly this imbalance on few QPs and
up to +40 % all-reduce once flows were spread. A leaf's uplink that carried more than
SPREAD_LIMIT x the mean tx bytes of that leaf's uplinks is a finding, with the knobs that spread
flows: more QPs per connection (NCCL_IB_QPS_PER_CONNECTION, NCCL env docs), and the switches'
ECMP hash fields (the UDP source port must be in the hash: RoCEv2 varies it per QP).
burnin_judge.spread_evidence feeds it each burn-in round's uplink tx bytes from the switch
counter snapshots taken around the round.
"""

from __future__ import annotations

from dataclasses import dataclass

SPREAD_LIMIT = 1.25
HINT = ("spread the flows: raise NCCL_IB_QPS_PER_CONNECTION (more QPs, more distinct UDP source ports) "
        "and check that the switches' ECMP hash includes the UDP source port")


@dataclass(frozen=True, slots=True)
class SpreadFinding:
    leaf: str
    port: str
    tx_bytes: int
    mean_bytes: float

    @property
    def ratio(self) -> float:
        return self.tx_bytes / self.mean_bytes

    def line(self) -> str:
        return (f"{self.leaf} {self.port}: {self.ratio:.2f} x the mean tx bytes of its uplinks "
                f"({self.tx_bytes} vs {self.mean_bytes:.0f}); {HINT}")


def spread(uplink_tx: dict[str, dict[str, int]], limit: float = SPREAD_LIMIT) -> list[SpreadFinding]:
    """uplink_tx: {leaf: {uplink port: tx bytes during the window}} -> the uplinks above LIMIT x
    their leaf's mean. A leaf whose uplinks carried nothing has no spread to judge."""
    out = []
    for leaf, ports in sorted(uplink_tx.items()):
        if len(ports) < 2:
            continue
        mean = sum(ports.values()) / len(ports)
        if mean <= 0:
            continue
        out += [SpreadFinding(leaf, port, tx, mean) for port, tx in sorted(ports.items()) if tx > limit * mean]
    return out


def uplink_tx(before: dict, after: dict, uplinks: dict[str, dict[str, int]]) -> dict[str, dict[str, int]]:
    """{leaf: {uplink port: tx bytes between two counter snapshots}} ({switch: {port: napalm
    counters}}); a leaf missing any uplink's tx_octets in either snapshot is left out (not judged)."""
    out: dict[str, dict[str, int]] = {}
    for leaf, ports in sorted(uplinks.items()):
        try:
            out[leaf] = {port: max(0, int(after[leaf][port]["tx_octets"]) - int(before[leaf][port]["tx_octets"]))
                         for port in ports}
        except (KeyError, TypeError, ValueError):
            continue
    return out
