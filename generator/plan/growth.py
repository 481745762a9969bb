"""Growth (`topology.build_out`, DESIGN.md "Growth"): the installed fabric is the build-out
fabric restricted to its first `topology.nodes` nodes.

The topology compiler always builds the build-out fabric, so every name, port, cable and
(in compile.py) every address, ASN and management IP is the one the build-out gives it;
this module only decides which of those devices are on the floor yet:
- the top tier (spines of leaf-spine and rail-optimized, super-spines of three-tier) is
  racked in full from the first phase, so a later unit plugs into reserved ports and no
  uplink is ever re-dealt over a larger spine count;
- a leaf is there once an installed node is cabled to it; a three-tier pod's spines and a
  dragonfly group's spines once a leaf of that pod or group is there;
- a link is there when both its ends are. A port whose link is not there yet (a host of a
  later phase, a global link to a group not yet built) is reserved and treated as every
  unused port is: on Cumulus it carries no config at all (NVUE leaves it at the NOS default),
  on SONiC it is admin-down in PORT (config_db lists every front-panel port). It gains its
  settings, and on SONiC comes up, in the phase that cables it.
- a setting sized by a switch's links (SONiC's max_ebgp_paths) is sized by its build-out
  links (FabricPlan.build_out_fabric_links), so it never changes as phases are added.
"""

from __future__ import annotations

from typing import NamedTuple

from generator.plan.model import ROLE_LEAF, ROLE_SPINE, ROLE_SUPER_SPINE


def installed_switches(switches, attachments, installed_nodes: int) -> frozenset[str]:
    """Names of the switches of SWITCHES (topology.SwitchNode, the build-out's) that the first
    INSTALLED_NODES nodes need. ATTACHMENTS: (node, rail) -> (leaf name, port)."""
    leaves = {leaf for (node, _), (leaf, _) in attachments.items() if node <= installed_nodes}
    pods = {sw.unit for sw in switches if sw.name in leaves}
    groups = {sw.group for sw in switches if sw.name in leaves}
    present = set(leaves)
    for sw in switches:
        if sw.role == ROLE_LEAF:
            continue
        if sw.role == ROLE_SPINE and sw.unit is not None:          # three-tier pod spine
            if sw.unit in pods:
                present.add(sw.name)
        elif sw.role == ROLE_SPINE and sw.group is not None:       # dragonfly-plus group spine
            if sw.group in groups:
                present.add(sw.name)
        else:                                                      # the top tier: in full
            present.add(sw.name)
    return frozenset(present)


def build_out_intent(intent):
    """INTENT at its build-out size (nodes = build_out.nodes, no build_out): the fabric the
    installed one grows into, for capacity figures and growth tests."""
    t = intent.topology
    if t.build_out is None:
        return intent
    topology = t.model_copy(update={"nodes": t.build_out.nodes, "build_out": None})
    return intent.model_copy(update={"topology": topology})


class GrowthCost(NamedTuple):
    """What adding one node to a fabric without build_out does to what is already there."""

    moved_links: int          # switch-to-switch cables of today whose far end changes
    links: int                # switch-to-switch cables of today
    renumbered: int           # switches whose loopback, management IP or ASN changes
    hosts_regrouped: int      # dragonfly-plus: nodes that move to another group's leaves
    host_mgmt_moved: bool     # every host's management IP shifts (the switch block grew past it)

    @property
    def forces_recabling(self) -> bool:
        return bool(self.moved_links or self.renumbered or self.hosts_regrouped or self.host_mgmt_moved)


def next_node_cost(intent, plan) -> GrowthCost:
    """The fabric of INTENT one node larger, against PLAN (INTENT's): the switch-to-switch links,
    switch positions (loopback, mgmt IP and ASN follow the role-sorted position) and host
    attachments that would change. Host attachments of leaf-spine, rail-optimized and three-tier
    fabrics cannot change (nodes fill leaves in order, a new node lands after every existing
    one); dragonfly-plus re-splits its nodes evenly over the groups."""
    from generator.plan import addressing
    from generator.plan.model import TIER_HOST_LEAF
    from generator.plan.topology import _build, _split_even

    t = intent.topology
    bigger = _build(intent, t.nodes + 1, keep_attachments=False)
    new_links = {(lk.a, lk.a_port.name, lk.b, lk.b_port.name) for lk in bigger.links}
    today = [lk for lk in plan.links if lk.tier != TIER_HOST_LEAF]
    moved = sum((lk.a_device, lk.a_port, lk.b_device, lk.b_port) not in new_links for lk in today)
    del new_links
    order = {ROLE_SUPER_SPINE: 0, ROLE_SPINE: 1, ROLE_LEAF: 2}
    position = {sw.name: i for i, sw in enumerate(sorted(bigger.switches, key=lambda s: order[s.role]))}
    renumbered = sum(position.get(sw.name) != i for i, sw in enumerate(plan.switches))
    regrouped = 0
    if t.kind == "dragonfly-plus":
        group_of = {n: g for g, block in enumerate(_split_even(t.nodes + 1, t.groups)) for n in block}
        regrouped = sum(group_of[n] != g for g, block in enumerate(_split_even(t.nodes, t.groups)) for n in block)
    pool = addressing.Pool.parse("addressing.management", intent.addressing.management)
    host_mgmt_moved = (addressing.host_mgmt_start(pool, len(plan.switches))
                       != addressing.host_mgmt_start(pool, len(bigger.switches)))
    return GrowthCost(moved, len(today), renumbered, regrouped, host_mgmt_moved)
