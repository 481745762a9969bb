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
  later phase, a global link to a group not yet built) is reserved: it carries no config at
  all, exactly like any other unused port (NVUE and SONiC leave such a port at the NOS
  default), and gains its settings in the phase that cables it.
"""

from __future__ import annotations

from generator.plan.model import ROLE_LEAF, ROLE_SPINE


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
