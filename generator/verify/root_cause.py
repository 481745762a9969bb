"""Root causes (issue 36): findings that follow from one fault are grouped under it.

One unplugged leaf-spine cable is one fault, but every check that looks at it fails: the link at
both ends, the BGP session on it from both sides, the transceiver at both ends (no cable, no
module), and the ECMP group of every switch whose paths ran over it. Verify keeps every finding
(the JSON contract lists what failed) and names one of them the root, the others its
consequences, so the operator fixes one thing, not twelve.

The faults, in report order:
- a dark cable: a planned port down, admin down or not configured. Its root is the end where
  the fault was set (admin down, not configured) or else the first end; the other end's link
  finding, the session on the cable from both sides ("not established") and a missing
  transceiver at either end are its consequences;
- a BGP session down on a live link: its root is the end that does not run it (no such
  neighbor, shut down) or else the first end; the far side's "not established" follows from it.
Each fault takes its planned sessions out of the session graph. An ECMP finding is a consequence
only when the faults explain it: the width the plan gives with those sessions gone
(ecmp.py, the same derivation as the plan's width) is the width the switch shows. It is
attributed to the first fault whose session alone narrows that group. An ECMP group that is
narrower than the faults explain stays a root of its own: something else is wrong there.
"""

from __future__ import annotations

from generator.verify.ecmp import _AMBIGUOUS, _shortest_paths, _width
from generator.verify.expected import Expectations
from generator.verify.model import Finding

DARK = ("down", "admin down", "port not configured")
SET_HERE = ("admin down", "port not configured")       # the end where the fault was made
SESSION_DOWN = "not established"                        # what the far side of a lost session shows
SESSION_NOT_RUN = ("not configured", "shut down")       # BGP that this end does not run


class _Fault:
    def __init__(self, root: Finding):
        self.root = root
        self.removed: list[tuple[str, str]] = []         # (switch, peer): one planned session each way


def _session_on(exp: Expectations, device: str, port: str):
    return next((s for s in exp.sessions.get(device, {}).values() if s.port == port), None)


def _ends(f: Finding, exp: Expectations) -> list[tuple[str, str]]:
    """The (device, port) ends of the cable F's port is planned for (one end when the far one is a host)."""
    planned = exp.peer_port(f.device, f.port)
    ends = [(f.device, f.port)]
    if planned is not None and planned.peer_is_switch:
        ends.append((planned.peer_device, planned.peer_port))
    return ends


def _cable_faults(findings: list[Finding], exp: Expectations, caused_by: dict[str, str]) -> list[_Fault]:
    at: dict[tuple[str, str], list[Finding]] = {}
    for f in findings:
        at.setdefault((f.device, f.port), []).append(f)
    by_cable: dict[frozenset, list[Finding]] = {}
    for f in findings:
        if f.check == "link" and f.observed in DARK:
            by_cable.setdefault(frozenset(_ends(f, exp)), []).append(f)
    faults = []
    for cable, ends in by_cable.items():
        root = next((f for f in ends if f.observed in SET_HERE), ends[0])
        fault = _Fault(root)
        for end in sorted(cable):
            for f in at.get(end, []):
                if f is not root and ((f.check == "link" and f.observed in DARK)
                                      or (f.check == "bgp" and f.observed == SESSION_DOWN)
                                      or (f.check == "optics" and f.observed == "no transceiver")):
                    caused_by[f.id] = root.id
            session = _session_on(exp, *end)
            if session is not None:
                fault.removed.append((end[0], session.peer_device))
        faults.append(fault)
    return faults


def _session_faults(findings: list[Finding], exp: Expectations, caused_by: dict[str, str]) -> list[_Fault]:
    down = [f for f in findings if f.check == "bgp" and f.id not in caused_by
            and (f.observed == SESSION_DOWN or f.observed in SESSION_NOT_RUN)]
    by_session: dict[frozenset, list[Finding]] = {}
    for f in down:
        session = _session_on(exp, f.device, f.port)
        far = (session.peer_device, session.peer_port) if session is not None else ("", "")
        by_session.setdefault(frozenset({(f.device, f.port), far}), []).append(f)
    faults = []
    for ends in by_session.values():
        root = next((f for f in ends if f.observed in SESSION_NOT_RUN), ends[0])
        for f in ends:
            if f is not root:
                caused_by[f.id] = root.id
        fault = _Fault(root)
        session = _session_on(exp, root.device, root.port)
        if session is not None:
            fault.removed += [(root.device, session.peer_device), (session.peer_device, root.device)]
        faults.append(fault)
    return faults


def _without(graph: dict[str, list[str]], removed: list[tuple[str, str]]) -> dict[str, list[str]]:
    out = {name: list(peers) for name, peers in graph.items()}
    for switch, peer in removed:
        if peer in out.get(switch, []):
            out[switch].remove(peer)
    return out


class _Widths:
    """The ECMP width of a switch toward a leaf over a session graph, one search per (graph, leaf)."""

    def __init__(self, exp: Expectations):
        self.exp = exp
        self.cache: dict[tuple[int, str], dict] = {}

    def width(self, key: int, graph: dict[str, list[str]], origin: str, switch: str):
        if (key, origin) not in self.cache:
            edges = {name: set(peers) for name, peers in graph.items()}
            self.cache[(key, origin)] = _shortest_paths(origin, edges, self.exp.asn)
        width = _width(self.cache[(key, origin)], graph.get(switch, []), self.exp.asn[switch])
        if width is _AMBIGUOUS:
            return None
        return min(width, self.exp.max_paths) if self.exp.max_paths and width else width


def _hops(observed: str) -> int | None:
    """The next hops an ecmp finding observed (checks: "N BGP next hops" or "no route")."""
    first = observed.split(" ", 1)[0]
    return int(first) if first.isdigit() else 0 if observed == "no route" else None


def root_causes(findings: list[Finding], exp: Expectations) -> dict[str, str]:
    """{consequence id: root id} over FINDINGS (VerifyReport.findings(): report order)."""
    caused_by: dict[str, str] = {}
    faults = _cable_faults(findings, exp, caused_by)
    faults += _session_faults(findings, exp, caused_by)
    faults = [f for f in faults if f.root.id not in caused_by]
    ecmp = [f for f in findings if f.check == "ecmp" and f.id not in caused_by]
    removing = [fault for fault in faults if fault.removed]
    if not ecmp or not removing or not exp.asn:
        return caused_by
    widths = _Widths(exp)
    everything = _without(exp.graph, [pair for fault in removing for pair in fault.removed])
    alone: dict[int, dict[str, list[str]]] = {}
    for f in ecmp:
        planned = exp.ecmp.get(f.device, {}).get(f.port)
        hops = _hops(f.observed)
        if planned is None or hops is None or f.device not in exp.asn:
            continue
        width, leaf = planned
        if widths.width(-1, everything, leaf, f.device) != hops:
            continue                     # not what the faults explain: a fault of its own
        for i, fault in enumerate(removing):
            if i not in alone:
                alone[i] = _without(exp.graph, fault.removed)
            if widths.width(i, alone[i], leaf, f.device) != width:
                caused_by[f.id] = fault.root.id
                break
        else:
            caused_by[f.id] = removing[0].root.id
    return caused_by
