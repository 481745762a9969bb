"""`fabricgen sot push`: make Nautobot hold the plan, writing only what differs (issue 37).

Diff first: a conflict (an object on a desired key without the fabric's tag) stops the push before
any write. Then, in the order a reference needs its target: the shared vocabulary (tag, location,
namespace, roles, device types with their interface templates), devices, interfaces (Nautobot
made most of them from the templates with the device: only what is missing or differs is
written), prefixes, IP addresses and their interface assignments, each device's primary IPv4,
cables, the RoCE config context. Every write is a bulk request. Nothing here remembers a run: a
killed push is resumed by running it again, which compares afresh and writes what is still missing.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from generator.sot.compare import ADDED, CHANGED, REMOVE, Comparison, compare, key_text
from generator.sot.nautobot import Nautobot, SotError, State
from generator.sot.objects import ASN_FIELD, Desired

PRUNE_MODES = ("never", "mark", "delete")
DECOMMISSIONING = "Decommissioning"
DEPRECATED = "Deprecated"          # Nautobot's retired-address status (ipam statuses have no Decommissioning)


@dataclass(slots=True)
class PushResult:
    comparison: Comparison
    writes: int = 0
    written: Counter = field(default_factory=Counter)     # "device added" -> count

    @property
    def conflicts(self) -> list[str]:
        return self.comparison.conflicts


def _changes(result: Comparison, kind: str, op: str):
    return [c for c in result.changes if c.kind == kind and c.op == op]


def push(nb: Nautobot, desired: Desired, *, prune: str = "never", yes: bool = False) -> PushResult:
    desired = nb.fit(desired)
    state = nb.read_state(desired)
    first = compare(desired, state.objects, state.held)
    result = PushResult(first)
    if first.conflicts:
        return result
    removals = _changes_any(first, REMOVE)
    if prune == "delete" and removals and not yes:
        raise SotError(f"--prune delete would delete {len(removals)} object(s) tagged {desired.tag} "
                       f"({key_text(removals[0].kind, removals[0].key)} first); review `fabricgen sot diff`, "
                       "then add --yes")
    if not first.writes_needed and not (removals and prune != "never"):
        return result
    start = nb.writes
    ids = nb.ensure_catalog(desired)
    _devices(nb, desired, state, first, ids, result)
    if result.written:
        state = nb.read_state(desired)          # the interfaces Nautobot made from the templates
    now = compare(desired, state.objects, state.held)
    if now.conflicts:
        result.comparison = now
        return result
    _interfaces(nb, desired, state, now, result)
    _prefixes(nb, desired, now, ids, result)
    _ips(nb, desired, state, now, ids, result)
    _primary(nb, desired, state, result)
    _bgp(nb, state, now, result)
    _cables(nb, desired, state, now, ids, result)
    _context(nb, desired, state, now, ids, result)
    if prune != "never":
        _prune(nb, state, now, prune, result)
    result.writes = nb.writes - start
    return result


def _changes_any(result: Comparison, op: str):
    return [c for c in result.changes if c.op == op]


def _device_body(desired: Desired, name: str, f: dict[str, Any], ids: dict[str, str], nb: Nautobot) -> dict:
    body: dict[str, Any] = {}
    if "device_type" in f:
        body["device_type"] = ids[f"type:{f['device_type']}"]
    if "role" in f:
        body["role"] = ids[f"role:{f['role']}"]
    if "platform" in f:
        body["platform"] = ids[f"platform:{f['platform']}"] if f["platform"] else None
    if "status" in f:
        body["status"] = nb.status_id(f["status"])
    if "asn" in f:
        body["custom_fields"] = {ASN_FIELD: f["asn"]}
    return body


def _devices(nb, desired, state: State, result: Comparison, ids, out: PushResult) -> None:
    new = []
    for c in _changes(result, "device", ADDED):
        body = _device_body(desired, c.key, c.fields, ids, nb)
        new.append({"name": c.key, "location": ids["location"], "tags": [ids["tag"]], **body})
    if new:
        made = nb.create("/api/dcim/devices/", new)
        for row in made:
            state.device_ids[row["name"]] = row["id"]
        out.written["device added"] += len(new)
    patch = []
    for c in _changes(result, "device", CHANGED):
        fields = {k: new_value for k, (_, new_value) in c.fields.items() if k != "primary_ip4"}
        if fields:
            patch.append({"id": state.device_ids[c.key], **_device_body(desired, c.key, fields, ids, nb)})
    if patch:
        nb.update("/api/dcim/devices/", patch)
        out.written["device changed"] += len(patch)


def _interfaces(nb, desired, state: State, result: Comparison, out: PushResult) -> None:
    new = [{"device": state.device_ids[c.key[0]], "name": c.key[1], "status": nb.status_id("Active"), **c.fields}
           for c in _changes(result, "interface", ADDED)]
    if new:
        nb.create("/api/dcim/interfaces/", new)
        out.written["interface added"] += len(new)
        state.interface_ids.update(_interface_ids(nb, desired))
    patch = [{"id": state.interface_ids[c.key], **{k: v for k, (_, v) in c.fields.items()}}
             for c in _changes(result, "interface", CHANGED)]
    if patch:
        nb.update("/api/dcim/interfaces/", patch)
        out.written["interface changed"] += len(patch)


def _interface_ids(nb: Nautobot, desired: Desired) -> dict[tuple[str, str], str]:
    from generator.sot.nautobot import _Q_INTERFACES

    rows = nb.graphql(_Q_INTERFACES, {"loc": [desired.location]})["interfaces"]
    return {(r["device"]["name"], r["name"]): r["id"] for r in rows}


def _prefixes(nb, desired, result: Comparison, ids, out: PushResult) -> None:
    new = [{"prefix": c.key, "namespace": ids["namespace"], "status": nb.status_id(c.fields["status"]),
            "type": "network", "tags": [ids["tag"]], "locations": [ids["location"]]}
           for c in _changes(result, "prefix", ADDED)]
    if new:
        nb.create("/api/ipam/prefixes/", new)
        out.written["prefix added"] += len(new)


def _ips(nb, desired, state: State, result: Comparison, ids, out: PushResult) -> None:
    added = _changes(result, "ip", ADDED)
    if added:
        made = nb.create("/api/ipam/ip-addresses/", [
            {"address": c.key, "namespace": ids["namespace"], "status": nb.status_id("Active"), "type": "host",
             "tags": [ids["tag"]]} for c in added])
        for c, row in zip(added, made, strict=True):
            state.ip_ids[c.key] = row["id"]
        out.written["ip added"] += len(added)
    moved = [c for c in _changes(result, "ip", CHANGED) if {"device", "interface"} & set(c.fields)]
    stale = [a for c in moved for a in state.assignment_ids.get(c.key, [])]
    if stale:
        nb.delete("/api/ipam/ip-address-to-interface/", stale)
    rows = []
    for c in added + moved:
        f = desired.objects["ip"][c.key]
        rows.append({"ip_address": state.ip_ids[c.key], "interface": state.interface_ids[(f["device"], f["interface"])]})
    if rows:
        nb.create("/api/ipam/ip-address-to-interface/", rows)
        out.written["ip assigned"] += len(rows)


def _primary(nb, desired, state: State, out: PushResult) -> None:
    patch = []
    actual = state.objects.get("device", {})
    for name, f in desired.objects["device"].items():
        have = actual.get(name)
        if f["primary_ip4"] and (have is None or have.fields.get("primary_ip4") != f["primary_ip4"]):
            patch.append({"id": state.device_ids[name], "primary_ip4": state.ip_ids[f["primary_ip4"]]})
    if patch:
        nb.update("/api/dcim/devices/", patch)
        out.written["device primary IPv4"] += len(patch)


def _bgp(nb, state: State, result: Comparison, out: PushResult) -> None:
    """The nautobot-bgp-models routing instance of each switch (after the addresses: its router ID
    is one), its AutonomousSystem made when missing."""
    added, changed = _changes(result, "bgp", ADDED), _changes(result, "bgp", CHANGED)
    if not added and not changed:
        return
    asns = {c.fields["asn"] for c in added} | {c.fields["asn"][1] for c in changed if "asn" in c.fields}
    as_ids = nb.asn_ids(asns) if asns else {}

    def body(fields: dict[str, Any]) -> dict[str, Any]:
        out_fields: dict[str, Any] = {}
        if "asn" in fields:
            out_fields["autonomous_system"] = as_ids[fields["asn"]]
        if "router_id" in fields:
            out_fields["router_id"] = state.ip_ids[fields["router_id"]] if fields["router_id"] else None
        if "status" in fields:
            out_fields["status"] = nb.status_id(fields["status"])
        return out_fields

    if added:
        nb.create(_PATHS["bgp"], [{"device": state.device_ids[c.key], **body(c.fields)} for c in added])
        out.written["BGP routing instance added"] += len(added)
    if changed:
        nb.update(_PATHS["bgp"], [{"id": state.objects["bgp"][c.key].id, **body({k: new for k, (_, new) in c.fields.items()})}
                                  for c in changed])
        out.written["BGP routing instance changed"] += len(changed)


def _cable_body(desired, state: State, key, f, nb, ids) -> dict:
    return {"termination_a_type": "dcim.interface", "termination_a_id": state.interface_ids[key],
            "termination_b_type": "dcim.interface", "termination_b_id": state.interface_ids[(f["b_device"], f["b_port"])],
            "type": f["type"], "length": f["length"], "length_unit": f["length_unit"], "label": f["label"],
            "status": nb.status_id(f["status"]), "tags": [ids["tag"]]}


def _cables(nb, desired, state: State, result: Comparison, ids, out: PushResult) -> None:
    want = desired.objects["cable"]
    new = [_cable_body(desired, state, c.key, want[c.key], nb, ids) for c in _changes(result, "cable", ADDED)]
    moved, patch = [], []
    for c in _changes(result, "cable", CHANGED):
        if {"b_device", "b_port"} & set(c.fields):
            # a cable's terminations are not edited in place on Nautobot 3 (CableSerializer applies
            # terminations on create): the moved cable is replaced, on the same A-end key
            moved.append(state.cable_ids[c.key])
            new.append(_cable_body(desired, state, c.key, want[c.key], nb, ids))
        else:
            body = {k: v for k, (_, v) in c.fields.items()}
            if "status" in body:
                body["status"] = nb.status_id(body["status"])
            patch.append({"id": state.cable_ids[c.key], **body})
    # ours, no longer planned, on an end a new cable needs (compare._cable_ends): off before it goes on
    replaced = [state.cable_ids[key] for key in sorted(result.replaced, key=str)]
    if replaced:
        nb.delete("/api/dcim/cables/", replaced)
        out.written["cable replaced"] += len(replaced)
    if moved:
        nb.delete("/api/dcim/cables/", moved)
        out.written["cable moved"] += len(moved)
    if new:
        made = nb.create("/api/dcim/cables/", new)
        # Nautobot 3.2.7's CableSerializer applies the terminations itself on create and drops the
        # `tags` of the request (measured: a created cable has none); a PATCH sets them
        nb.update("/api/dcim/cables/", [{"id": row["id"], "tags": [ids["tag"]]} for row in made])
        out.written["cable added"] += len(new) - len(moved)
    if patch:
        nb.update("/api/dcim/cables/", patch)
        out.written["cable changed"] += len(patch)


def _context(nb, desired, state: State, result: Comparison, ids, out: PushResult) -> None:
    for c in _changes(result, "context", ADDED):
        nb.create("/api/extras/config-contexts/", [{
            "name": c.key, "data": c.fields["data"], "locations": [ids["location"]],
            "weight": 1000, "description": "read-only: fabricgen renders this contract; edit the intent"}])
        out.written["context added"] += 1
    for c in _changes(result, "context", CHANGED):
        nb.update("/api/extras/config-contexts/", [{"id": state.context_id, "data": c.fields["data"][1]}])
        out.written["context changed"] += 1


_PATHS = {"context": "/api/extras/config-contexts/", "cable": "/api/dcim/cables/", "ip": "/api/ipam/ip-addresses/",
          "bgp": "/api/plugins/bgp/routing-instances/",
          "prefix": "/api/ipam/prefixes/", "interface": "/api/dcim/interfaces/", "device": "/api/dcim/devices/"}


def _prune(nb, state: State, result: Comparison, mode: str, out: PushResult) -> None:
    gone = [c for c in result.changes if c.op == REMOVE and not (c.kind == "cable" and c.key in result.replaced)]
    if mode == "delete":
        # a routing instance PROTECTs its device and router-ID address: it goes first
        for kind in ("context", "cable", "bgp", "ip", "prefix", "interface", "device"):
            doomed = [state.objects[kind][c.key].id for c in gone if c.kind == kind]
            if doomed:
                nb.delete(_PATHS[kind], doomed)
                out.written[f"{kind} deleted"] += len(doomed)
        return
    for kind in ("device", "cable", "ip", "prefix"):
        status = DEPRECATED if kind in ("ip", "prefix") else DECOMMISSIONING
        rows = [{"id": state.objects[kind][c.key].id, "status": nb.status_id(status)}
                for c in gone if c.kind == kind and state.objects[kind][c.key].fields.get("status") != status]
        if rows:
            nb.update(_PATHS[kind], rows)
            out.written[f"{kind} marked {status}"] += len(rows)





def remove_fabric(nb: Nautobot, desired: Desired) -> int:
    """Delete every object tagged for DESIRED's fabric, then its location and namespace (tests and
    the bench start from nothing); the shared vocabulary stays. The number of write requests."""
    start = nb.writes
    desired = nb.fit(desired)
    state = nb.read_state(desired)
    for kind in ("context", "cable", "bgp", "ip", "prefix", "device"):
        doomed = [a.id for a in state.objects.get(kind, {}).values() if a.tagged and a.id]
        if doomed:
            nb.delete(_PATHS[kind], doomed)
    for path in ("/api/ipam/namespaces/", "/api/dcim/locations/"):
        found = nb.list(path, name=desired.location if "locations" in path else desired.namespace)
        if found:
            nb.delete(path, [f["id"] for f in found])
    return nb.writes - start
__all__ = ["PRUNE_MODES", "PushResult", "push", "remove_fabric"]
