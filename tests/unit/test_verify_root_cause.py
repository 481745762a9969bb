"""verify names the root cause (issue 36): findings that follow from one fault are grouped under it.

Pure logic over the real checks: readings of a healthy 2-leaf, 2-spine fabric (4 parallel uplinks
per leaf and spine) are built from the plan, one fault is put in, the real check functions judge
them, and root_cause.py groups what they found. The lab test (test_verify_lab.py) does the same
through the CLI against the simulator.
"""

from __future__ import annotations

import json

import pytest

from generator.checks.runner import run_checks
from generator.intent.loader import load_intent
from generator.verify import checks as C
from generator.verify import control_plane as CP
from generator.verify import physical as P
from generator.verify.expected import expectations
from generator.verify.model import VerifyReport, outcome
from generator.verify.report import format_json, format_junit, format_table
from generator.verify.root_cause import root_causes

INTENT = """\
fabric: {name: rc}
topology:
  kind: leaf-spine
  nodes: 16
  rails: 2
  nic_speed: 400G
  switches:
    leaf: {model: SN4700}
    spine: {model: SN4700}
"""


@pytest.fixture(scope="module")
def fabric(tmp_path_factory):
    path = tmp_path_factory.mktemp("rc") / "fabric.yaml"
    path.write_text(INTENT)
    plan = run_checks(load_intent(path)).plan
    return plan, expectations(plan)


def healthy(exp) -> dict[str, C.SwitchReading]:
    out = {}
    for name, ports in exp.ports.items():
        out[name] = C.SwitchReading(
            name,
            interfaces={p: {"is_up": True, "is_enabled": True, "speed": pp.speed_g * 1000.0, "mtu": exp.mtu}
                        for p, pp in ports.items()},
            bgp={"global": {"peers": {n: {"is_up": True, "is_enabled": True,
                                          "address_family": {"ipv4": {"received_prefixes": s.prefixes}}}
                                      for n, s in exp.sessions[name].items()}}},
            transceivers={p: {"present": True, "media": exp.cables.get((name, p))} for p in ports},
            routes={prefix: {"protocol": "bgp", "next_hops": [f"nh{i}" for i in range(width)]}
                    for prefix, (width, _leaf) in exp.ecmp.get(name, {}).items()})
    return out


def unplug(readings, exp, device: str, port: str, *, state: str = "down") -> None:
    """The cable at DEVICE:PORT is gone: both ends dark, no module, the session idle."""
    far = exp.peer_port(device, port)
    for name, p in ((device, port), (far.peer_device, far.peer_port)):
        r = readings[name]
        r.interfaces[p] = {**r.interfaces[p], "is_up": False, "is_enabled": state != "admin down" or name != device}
        r.transceivers[p] = {"present": False}
        for n, s in exp.sessions[name].items():
            if s.port == p:
                r.bgp["global"]["peers"][n]["is_up"] = False


def narrow(readings, prefix_owner: str, switch: str, width: int, exp) -> None:
    prefix = next(pfx for pfx, (_w, leaf) in exp.ecmp[switch].items() if leaf == prefix_owner)
    readings[switch].routes[prefix]["next_hops"] = [f"nh{i}" for i in range(width)]


def judge(readings, exp) -> VerifyReport:
    outcomes = []
    for name, r in sorted(readings.items()):
        link = C.check_link(r, exp)
        outcomes += [outcome("link", name, link["link"]), outcome("bgp", name, C.check_bgp(r, exp)),
                     outcome("optics", name, P.check_optics(r, exp)), outcome("ecmp", name, CP.check_ecmp(r, exp))]
    report = VerifyReport("rc", outcomes, 0.0, 1.0)
    report.caused_by = root_causes(report.findings(), exp)
    return report


def test_one_unplugged_uplink_is_one_root_with_its_consequences(fabric):
    plan, exp = fabric
    leaf1, leaf2, spine1 = "rc-leaf-1", "rc-leaf-2", "rc-spine-1"
    uplink = next(p for p, pp in exp.ports[leaf1].items() if pp.peer_device == spine1)
    far = exp.peer_port(leaf1, uplink)
    readings = healthy(exp)
    unplug(readings, exp, leaf1, uplink)
    # what a real fabric then routes: leaf-1 reaches leaf-2 over one next hop less, spine-1 reaches leaf-1 so too
    (w_leaf, _), = [v for v in exp.ecmp[leaf1].values() if v[1] == leaf2]
    (w_spine, _), = [v for v in exp.ecmp[spine1].values() if v[1] == leaf1]
    narrow(readings, leaf2, leaf1, w_leaf - 1, exp)
    narrow(readings, leaf1, spine1, w_spine - 1, exp)

    report = judge(readings, exp)
    findings = report.findings()
    assert len(findings) == 8
    root = f"link:{leaf1}:{uplink}"
    assert report.caused_by == {f.id: root for f in findings if f.id != root}
    doc = json.loads(format_json(report))
    assert doc["root_causes"] == [{"id": root, "check": "link", "device": leaf1, "port": uplink, "consequences": 7,
                                   "by_check": {"link": 1, "bgp": 2, "optics": 2, "ecmp": 2}}]
    rows = {f["id"]: f for f in doc["findings"]}
    assert rows[root]["root"] is True and rows[root]["consequences"] == 7
    assert rows[f"link:{spine1}:{far.peer_port}"]["caused_by"] == root
    assert doc["summary"]["failed"] == 8         # every check x device that failed still counts
    table = format_table(report, width=200)
    assert "(+7 consequences: link 1, bgp 2, optics 2, ecmp 2)" in table
    assert "8 finding(s) from 1 root cause(s)" in table
    assert "BGP" not in table                    # the consequences are not rows of their own
    junit = format_junit(report)
    assert f"(consequence of {root})" in junit and "+7 consequences" in junit


def test_an_ecmp_group_narrower_than_the_fault_explains_is_a_root_of_its_own(fabric):
    plan, exp = fabric
    leaf1, leaf2, spine1 = "rc-leaf-1", "rc-leaf-2", "rc-spine-1"
    uplink = next(p for p, pp in exp.ports[leaf1].items() if pp.peer_device == spine1)
    readings = healthy(exp)
    unplug(readings, exp, leaf1, uplink)
    (w_leaf, _), = [v for v in exp.ecmp[leaf1].values() if v[1] == leaf2]
    narrow(readings, leaf2, leaf1, w_leaf - 3, exp)         # one cable explains one next hop less, not three
    report = judge(readings, exp)
    ecmp = [f for f in report.findings() if f.check == "ecmp"]
    assert len(ecmp) == 1 and ecmp[0].id not in report.caused_by


def test_a_session_missing_at_one_end_is_the_root_of_the_far_side_and_the_narrower_groups(fabric):
    plan, exp = fabric
    leaf2, spine1 = "rc-leaf-2", "rc-spine-1"
    neighbor, session = next((n, s) for n, s in exp.sessions[spine1].items() if s.peer_device == leaf2)
    readings = healthy(exp)
    del readings[spine1].bgp["global"]["peers"][neighbor]              # spine-1 lost that neighbor
    far = next(n for n, s in exp.sessions[leaf2].items() if s.port == session.peer_port)
    readings[leaf2].bgp["global"]["peers"][far]["is_up"] = False
    (w, _), = [v for v in exp.ecmp[spine1].values() if v[1] == leaf2]
    narrow(readings, leaf2, spine1, w - 1, exp)
    report = judge(readings, exp)
    root = f"bgp:{spine1}:{session.port}"
    assert report.caused_by == {f"bgp:{leaf2}:{session.peer_port}": root,
                                next(f.id for f in report.findings() if f.check == "ecmp"): root}


def test_a_port_set_admin_down_is_the_root_not_the_far_end(fabric):
    plan, exp = fabric
    spine1 = "rc-spine-1"
    port = next(iter(exp.ports[spine1]))
    far = exp.peer_port(spine1, port)
    readings = healthy(exp)
    unplug(readings, exp, spine1, port, state="admin down")
    for device, p in ((spine1, port), (far.peer_device, far.peer_port)):     # the modules stay in
        readings[device].transceivers[p] = {"present": True, "media": exp.cables[(device, p)]}
    report = judge(readings, exp)
    assert len(report.findings()) == 4           # the link and the session, at both ends
    assert {f.id for f in report.findings() if f.id not in report.caused_by} == {f"link:{spine1}:{port}"}
