"""Topology diagram as SVG: every device for small fabrics; for large ones one box per
tier with counts plus one expanded unit. Graphviz `dot` when installed (Debian package
graphviz), else a layered layout drawn here, so the report never needs the network."""

from __future__ import annotations

import html
import re
import shutil
import subprocess
from collections import Counter
from dataclasses import dataclass, field

from generator.plan.model import ROLE_LEAF, ROLE_SPINE, ROLE_SUPER_SPINE, TIER_HOST_LEAF, FabricPlan

FULL_LIMIT = 40         # devices drawn one by one up to this many
_RANK = {ROLE_SUPER_SPINE: 0, ROLE_SPINE: 1, ROLE_LEAF: 2, "host": 3}
_FILL = {ROLE_SUPER_SPINE: "#d9e2f3", ROLE_SPINE: "#dbe8d4", ROLE_LEAF: "#fdf0d5", "host": "#eeeeee", "more": "#ffffff"}


@dataclass
class Graph:
    nodes: dict[str, tuple[str, int, str]] = field(default_factory=dict)   # id -> (label, rank, kind)
    edges: list[tuple[str, str, str]] = field(default_factory=list)        # (a, b, label)
    cluster: tuple[str, list[str]] | None = None                           # (title, node ids)

    def node(self, nid: str, label: str, rank: int, kind: str) -> None:
        self.nodes[nid] = (label, rank, kind)


def _host_label(plan: FabricPlan) -> str:
    return f"x {plan.rails} NICs"


def full_graph(plan: FabricPlan) -> Graph:
    g = Graph()
    for sw in plan.switches:
        g.node(sw.name, f"{sw.name}\n{sw.model}", _RANK[sw.role], sw.role)
    for h in plan.hosts:
        g.node(h.name, h.name, _RANK["host"], "host")
    pairs = Counter()
    meta = {}
    for link in plan.links:
        key = tuple(sorted((link.a_device, link.b_device)))
        pairs[key] += 1
        meta[key] = link
    for (a, b), n in sorted(pairs.items()):
        link = meta[(a, b)]
        label = "" if link.tier == TIER_HOST_LEAF and n == 1 else f"{n}x{link.speed_g}G"
        g.edges.append((a, b, label))
    return g


def summary_graph(plan: FabricPlan) -> Graph:
    g = Graph()
    roles = Counter(sw.role for sw in plan.switches)
    models = {sw.role: sw.model for sw in plan.switches}
    for role, n in roles.items():
        g.node(f"tier-{role}", f"{n} x {role}\n{models[role]}", _RANK[role], role)
    g.node("tier-host", f"{len(plan.hosts)} hosts\n{_host_label(plan)}", _RANK["host"], "host")
    role_of = {sw.name: sw.role for sw in plan.switches}
    tiers = Counter()
    meta = {}
    for link in plan.links:
        a = role_of.get(link.a_device, "host")
        b = role_of.get(link.b_device, "host")
        key = (a, b, link.speed_g, link.cable, link.length_m)
        tiers[key] += 1
        meta[key] = link
    for (a, b, speed, cable, length), n in sorted(tiers.items(), key=lambda kv: (_RANK[kv[0][0]], _RANK[kv[0][1]])):
        text = f"{n} x {speed}G {cable} {length:g} m"
        if a == b:
            # spine-to-spine global links between dragonfly groups: no other tier to draw them to
            label, rank, kind = g.nodes[f"tier-{a}"]
            g.node(f"tier-{a}", f"{label}\n{text} global", rank, kind)
        else:
            g.edges.append((f"tier-{a}", f"tier-{b}", text))
    _expand_unit(plan, g)
    return g


def _expand_unit(plan: FabricPlan, g: Graph) -> None:
    """Unit/pod/group 1 drawn device by device, hanging off the tier boxes."""
    first = min(plan.hosts, key=lambda h: h.index)
    unit_key = "unit" if first.unit is not None else "group" if first.group is not None else None
    if unit_key is None:
        members = [h for h in plan.hosts if {n.switch for n in h.nics} == {n.switch for n in first.nics}]
        title = f"leaf {first.nics[0].switch} (expanded)"
    else:
        value = getattr(first, unit_key)
        members = [h for h in plan.hosts if getattr(h, unit_key) == value]
        title = f"{'pod/unit' if unit_key == 'unit' else 'group'} {value} (expanded)"
    members.sort(key=lambda h: h.index)
    leaves = sorted({n.switch for h in members for n in h.nics})
    ids = []
    for leaf in leaves:
        nid = f"u-{leaf}"
        g.node(nid, leaf, _RANK[ROLE_LEAF], ROLE_LEAF)
        ids.append(nid)
        g.edges.append((nid, f"tier-{ROLE_SPINE}", "") if f"tier-{ROLE_SPINE}" in g.nodes else (nid, nid, ""))
    shown = members[:3]
    for h in shown:
        nid = f"u-{h.name}"
        g.node(nid, h.name, _RANK["host"], "host")
        ids.append(nid)
        for nic in h.nics:
            g.edges.append((nid, f"u-{nic.switch}", ""))
    if len(members) > len(shown):
        g.node("u-more", f"... {len(members) - len(shown)} more hosts", _RANK["host"], "more")
        ids.append("u-more")
    g.edges = [e for e in g.edges if e[0] != e[1]]
    g.cluster = (title, ids)


def topology_graph(plan: FabricPlan) -> Graph:
    devices = len(plan.switches) + len(plan.hosts)
    return full_graph(plan) if devices <= FULL_LIMIT else summary_graph(plan)


def _dot_source(g: Graph) -> str:
    def q(s: str) -> str:
        return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'
    out = ["digraph fabric {", "  graph [rankdir=TB, nodesep=0.25, ranksep=0.8, fontname=\"DejaVu Sans\", fontsize=10];",
           "  node [shape=box, style=\"rounded,filled\", fontname=\"DejaVu Sans\", fontsize=9];",
           "  edge [dir=none, fontname=\"DejaVu Sans\", fontsize=8, color=\"#666666\"];"]
    clustered = set(g.cluster[1]) if g.cluster else set()
    for nid, (label, _, kind) in g.nodes.items():
        if nid not in clustered:
            out.append(f"  {q(nid)} [label={q(label)}, fillcolor={q(_FILL[kind])}];")
    if g.cluster:
        out.append(f"  subgraph cluster_unit {{ label={q(g.cluster[0])}; style=dashed; color=\"#999999\";")
        for nid in g.cluster[1]:
            label, _, kind = g.nodes[nid]
            out.append(f"    {q(nid)} [label={q(label)}, fillcolor={q(_FILL[kind])}];")
        out.append("  }")
    for rank in sorted({r for _, r, _ in g.nodes.values()}):
        same = [q(n) for n, (_, r, _) in g.nodes.items() if r == rank and n not in clustered]
        if same:
            out.append(f"  {{ rank=same; {' '.join(same)} }}")
    for a, b, label in g.edges:
        if g.nodes[a][1] > g.nodes[b][1]:
            a, b = b, a             # dot ranks along edge direction: upper tier first, hosts at the bottom
        out.append(f"  {q(a)} -> {q(b)}" + (f" [label={q(label)}];" if label else ";"))
    out.append("}")
    return "\n".join(out) + "\n"


def _strip_prolog(svg: str) -> str:
    start = svg.find("<svg")
    svg = svg[start:] if start >= 0 else svg
    # the report scales the drawing to its column; fixed pt sizes would overflow it
    return re.sub(r'<svg width="[^"]*" height="[^"]*"', '<svg class="topology"', svg, count=1)


def dot_svg(g: Graph) -> str | None:
    dot = shutil.which("dot")
    if dot is None:
        return None
    try:
        done = subprocess.run([dot, "-Tsvg"], input=_dot_source(g), capture_output=True, text=True, timeout=60,
                              check=True)
    except (subprocess.SubprocessError, OSError):
        return None
    return _strip_prolog(done.stdout)


def layered_svg(g: Graph) -> str:
    """Fallback: rows by tier, boxes spread evenly, straight lines between centres."""
    rows: dict[int, list[str]] = {}
    for nid, (_, rank, _) in g.nodes.items():
        rows.setdefault(rank, []).append(nid)
    box_w, box_h, gap_x, gap_y = 120, 34, 14, 90
    width = max(len(r) for r in rows.values()) * (box_w + gap_x) + gap_x
    pos = {}
    for i, rank in enumerate(sorted(rows)):
        ids = rows[rank]
        span = len(ids) * (box_w + gap_x) - gap_x
        x0 = (width - span) / 2
        for j, nid in enumerate(ids):
            pos[nid] = (x0 + j * (box_w + gap_x), 20 + i * (box_h + gap_y))
    height = 20 + len(rows) * (box_h + gap_y)
    parts = [f'<svg class="topology" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width:.0f} {height:.0f}" '
             'font-family="DejaVu Sans, sans-serif">']
    for a, b, label in g.edges:
        (xa, ya), (xb, yb) = pos[a], pos[b]
        x1, y1, x2, y2 = xa + box_w / 2, ya + box_h / 2, xb + box_w / 2, yb + box_h / 2
        parts.append(f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" stroke="#888" stroke-width="1"/>')
        if label:
            parts.append(f'<text x="{(x1 + x2) / 2:.1f}" y="{(y1 + y2) / 2:.1f}" font-size="9" fill="#333">'
                         f"{html.escape(label)}</text>")
    for nid, (label, _, kind) in g.nodes.items():
        x, y = pos[nid]
        parts.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="{box_w}" height="{box_h}" rx="5" fill="{_FILL[kind]}" '
                     'stroke="#555"/>')
        for k, text in enumerate(label.split("\n")):
            parts.append(f'<text x="{x + box_w / 2:.1f}" y="{y + 14 + 12 * k:.1f}" font-size="9" text-anchor="middle">'
                         f"{html.escape(text)}</text>")
    parts.append("</svg>")
    return "\n".join(parts)


def topology_svg(plan: FabricPlan, prefer_dot: bool = True) -> tuple[str, str]:
    """(svg, engine) with engine 'graphviz' or 'builtin'."""
    g = topology_graph(plan)
    if prefer_dot:
        svg = dot_svg(g)
        if svg:
            return svg, "graphviz"
    return layered_svg(g), "builtin"
