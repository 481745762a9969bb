"""IPAM and ASNs: integer arithmetic on pools (ipaddress objects are slow in bulk).

Allocation is positional and stable: loopbacks and management addresses follow the
canonical switch order, host /31s follow (rail, node), so adding a node at the end
never renumbers existing hosts.
"""

from __future__ import annotations

import ipaddress
import math
from dataclasses import dataclass

from generator.plan.topology import CompileError


@dataclass(frozen=True, slots=True)
class Pool:
    path: str          # intent key path, for error messages
    network: int
    size: int
    text: str

    @classmethod
    def parse(cls, path: str, text: str) -> Pool:
        net = ipaddress.IPv4Network(text)
        return cls(path, int(net.network_address), net.num_addresses, text)

    def need(self, count: int, what: str) -> None:
        if count > self.size:
            raise CompileError(self.path, f"pool {self.text} has {self.size} addresses but {what} needs {count}: "
                               f"use a /{max(0, 32 - math.ceil(math.log2(max(count, 1))))} or larger", "FG401")

    def addr(self, offset: int) -> str:
        return ipv4(self.network + offset)


def ipv4(value: int) -> str:
    return f"{value >> 24 & 255}.{value >> 16 & 255}.{value >> 8 & 255}.{value & 255}"


_OCTETS = tuple(map(str, range(256)))


def ipv4_run(start: int, count: int) -> list[str]:
    """[ipv4(start), ipv4(start + 1), ...]: COUNT consecutive addresses, each /24's first three
    octets formatted once (issue 14: a 98k-GPU plan writes ~600k addresses)."""
    out: list[str] = []
    value, end = start, start + count
    while value < end:
        net24 = value >> 8
        stop = min(end, (net24 + 1) << 8)
        first = f"{net24 >> 16 & 255}.{net24 >> 8 & 255}.{net24 & 255}."
        out += [first + last for last in _OCTETS[value & 255:(stop - 1 & 255) + 1]]
        value = stop
    return out


def loopbacks(pool: Pool, count: int) -> list[str]:
    # offset 0 is the network address: start at .1
    pool.need(count + 1, f"{count} switch loopbacks")
    return [pool.addr(i + 1) for i in range(count)]


FIRST_SWITCH_MGMT = 10      # the first addresses stay free for gateways and bastions


def host_mgmt_start(pool: Pool, n_switches: int) -> int:
    """Offset of the first host's management address: right after the switches, from the next /24
    boundary when the pool is large enough to afford it."""
    host_start = FIRST_SWITCH_MGMT + n_switches
    if pool.size >= 1024:
        host_start = math.ceil(host_start / 256) * 256
    return host_start + 1


def management(pool: Pool, n_switches: int, n_hosts: int) -> tuple[list[str], list[str]]:
    """Switches from .10, hosts from host_mgmt_start."""
    first_switch = FIRST_SWITCH_MGMT
    host_start = host_mgmt_start(pool, n_switches)
    pool.need(host_start + n_hosts + 1, f"{n_switches} switches and {n_hosts} hosts")
    return ([pool.addr(first_switch + i) for i in range(n_switches)],
            [pool.addr(host_start + i) for i in range(n_hosts)])


def rail_subnet_size(pool: Pool, rails: int) -> int:
    slots = 1 << math.ceil(math.log2(rails)) if rails > 1 else 1
    return pool.size // slots


def rail_base(pool: Pool, rails: int, rail: int) -> int:
    """The first address of RAIL's subnet: the rail pool is carved into one equal subnet per rail."""
    return pool.network + rail * rail_subnet_size(pool, rails)


def host_link(pool: Pool, rails: int, nodes: int, rail: int, node: int) -> tuple[str, str]:
    """(host address, leaf address) of node's rail NIC: node n takes the n-th /31 of its rail's
    subnet (leaf even, host odd)."""
    base = rail_base(pool, rails, rail) + 2 * (node - 1)
    return ipv4(base + 1), ipv4(base)


def check_host_pool(pool: Pool, rails: int, nodes: int) -> None:
    per_rail = rail_subnet_size(pool, rails)
    if 2 * nodes > per_rail:
        slots = 1 << math.ceil(math.log2(rails)) if rails > 1 else 1
        needed = slots * (1 << math.ceil(math.log2(2 * nodes)))
        raise CompileError(pool.path, f"pool {pool.text} gives each of {rails} rails {per_rail} addresses but "
                           f"{nodes} nodes need {2 * nodes} (one /31 each): use a "
                           f"/{32 - int(math.log2(needed))} or larger", "FG401")


def fabric_link(pool: Pool, index: int) -> tuple[str, str]:
    base = pool.network + 2 * index
    return ipv4(base), ipv4(base + 1)
