"""`fabricgen verify` on a SONiC lab fabric: provisioned with `deploy --provision`, then verified.

The fabric: leaf-spine, one SN5600 leaf with 2 nodes x 2 rails (400G: front-panel ports split
2x, so the plan speaks swp1s0, the switch Ethernet0/etp1a), 2 SN5600 spines with 2 numbered
/31 uplinks each. The lab world is the plan's cabling.csv (plan names); the switches answer
with Ethernet names and, over LLDP, their aliases; verify maps both back to the plan's names.
A faulty wiring (two host cables crossed, one uplink unplugged, CRC errors on a host cable) and
a pause storm give exactly those findings. SONiC 202411 has no ECN-marked counter in its CLI
(wredstat came with 202505), so ecn is skipped there and checked on 202505.
"""

from __future__ import annotations

import json
import textwrap
import time
from pathlib import Path

import pytest
import yaml

from generator.checks.runner import run_checks
from generator.deploy.rollout import run_deploy
from generator.intent.loader import load_intent
from generator.lab.control import LabDevice, lab_down, lab_up, raise_counters, set_faults, set_wiring
from generator.lab.world import host_nic_mac, parse_wiring
from generator.render.cabling import render_cabling
from generator.verify.command import run_verify, verify_stdout

pytestmark = pytest.mark.integration

PASSWORD = "lab-Secret-7f3"
INTENT = textwrap.dedent("""\
    fabric: {name: sv}
    topology:
      kind: leaf-spine
      nodes: 2
      rails: 2
      nic_speed: 400G
      switches:
        leaf: {model: SN5600}
        spine: {model: SN5600}
    switch_os: {name: sonic, version: "VERSION"}
    addressing: {management: 10.31.0.0/24, rails: 172.16.0.0/24, loopbacks: 10.255.0.0/24,
                 fabric_links: 10.254.0.0/24}
    deploy: {user: admin, confirm_timeout: 60, concurrency: 4}
    """)
LEAF, SPINE1, SPINE2 = "sv-leaf-1", "sv-spine-1", "sv-spine-2"
FAST = {"interval_s": 1.5, "settle_s": 3.0}


class Fabric:
    def __init__(self, root: Path, version: str):
        self.root = root
        self.version = version
        self.intent = root / "fabric.yaml"
        self.intent.write_text(INTENT.replace("VERSION", version))
        self.plan = run_checks(load_intent(self.intent)).plan
        self.lab = root / "lab"

    @property
    def endpoints(self) -> str:
        return str(self.lab / "endpoints.yml")

    def verify(self, capsys) -> tuple[int, dict]:
        capsys.readouterr()
        run = run_verify(str(self.intent), endpoints=self.endpoints, fmt="json", **FAST)
        assert capsys.readouterr().out == ""            # the library returns the report; the CLI prints it
        return run.exit_code, json.loads(verify_stdout(run))


@pytest.fixture(scope="module", params=["202411", "202505"])
def fabric(request, tmp_path_factory):
    mp = pytest.MonkeyPatch()
    fab = Fabric(tmp_path_factory.mktemp(f"verify-sonic-{request.param}"), request.param)
    mp.setenv("FABRICGEN_PASSWORD", PASSWORD)
    mp.setenv("FABRICGEN_BACKUP_DIR", str(fab.root / "backups"))
    mp.setenv("FABRICGEN_CONFIRM_TIMEOUT", "30")
    mp.setenv("FABRICGEN_SSH_TIMEOUT", "6")
    plan = fab.plan
    # each switch at its plan address, as ZTP leaves it; the world: the plan's own cabling.csv
    devices = [LabDevice(sw.name, "sonic", request.param, mgmt_address=f"{sw.mgmt_ip}/24", mgmt_gateway="10.31.0.1")
               for sw in plan.switches]
    lab_up(devices, fab.lab, username="admin", password=PASSWORD,
           world=parse_wiring(render_cabling(plan), "cabling.csv"), time_scale=3.75)
    try:
        run = run_deploy(str(fab.intent), endpoints=fab.endpoints, yes=True, provision=True)
        assert run.exit_code == 0, run.lines("stderr")
        yield fab
    finally:
        lab_down(fab.lab)
        mp.undo()


@pytest.fixture
def rewired(fabric):
    yield fabric
    set_wiring(fabric.lab, parse_wiring(render_cabling(fabric.plan), "cabling.csv"))
    for sw in fabric.plan.switches:
        set_faults(fabric.lab, sw.name, {})


def test_provisioned_sonic_fabric_passes(fabric, capsys):
    code, doc = fabric.verify(capsys)
    assert code == 0, doc
    assert doc["findings"] == []
    # 3 switches x 15 checks; skipped (not counted): flaps on every switch (SONiC's CLI tables count
    # no carrier changes), the leaf's ecmp (no other leaf), and on 202411 ecn (no wredstat before 202505)
    if fabric.version == "202411":
        assert doc["summary"] == {"checked": 38, "passed": 38, "failed": 0, "unknown": 0}
    else:
        assert doc["summary"] == {"checked": 41, "passed": 41, "failed": 0, "unknown": 0}


FAULTS = """\
a_device,a_port,b_device,b_port,state,crc_errors
sv-leaf-1,swp1s0,gpu002,ens1f0np0,,
sv-leaf-1,swp1s1,gpu001,ens2f0np0,,
sv-leaf-1,swp2s0,gpu001,ens1f0np0,,
sv-leaf-1,swp2s1,gpu002,ens2f0np0,up,50
sv-leaf-1,swp33s1,sv-spine-2,swp1s0,,
sv-leaf-1,swp34s0,sv-spine-1,swp1s1,,
sv-leaf-1,swp34s1,sv-spine-2,swp1s1,,
"""


def test_faulty_wiring_gives_its_findings_in_plan_names(rewired, capsys):
    fabric = rewired
    # crossed: swp1s0 <-> swp2s0 host cables; unplugged: swp33s0 -> spine-1 swp1s0; CRC on swp2s1;
    # a pause storm on spine-2's Ethernet0 (= plan swp1s0), raised under the switch's own port name
    set_wiring(fabric.lab, parse_wiring(FAULTS, "faults.csv"))
    raise_counters(fabric.lab, SPINE2, "Ethernet0", priority=3, pfc_rx_pause=500,
                   ecn_marked=5000 if fabric.version >= "202505" else 0)
    code, doc = fabric.verify(capsys)
    assert code == 3, doc
    found = sorted((f["check"], f["device"], f["port"]) for f in doc["findings"])
    expected = [
        ("cabling", LEAF, "swp1s0,swp2s0"),                          # the swap, one finding
        ("link", LEAF, "swp33s0"), ("link", SPINE1, "swp1s0"),       # both ends of the unplugged uplink
        ("bgp", LEAF, "swp33s0"), ("bgp", SPINE1, "swp1s0"),         # its session, from both sides
        ("optics", LEAF, "swp33s0"), ("optics", SPINE1, "swp1s0"),   # no cable: no transceiver
        ("ecmp", SPINE1, "10.255.0.3/32"),                           # spine-1 reaches the leaf over 1 of 2
        ("errors", LEAF, "swp2s1"),                                  # CRC/FCS errors (portstat RX_ERR)
        ("pfc", SPINE2, "swp1s0"),                                   # the pause storm
    ]
    if fabric.version >= "202505":
        expected.append(("ecn", SPINE2, "swp1s0"))                   # wredstat's ECN-marked packets
    assert found == sorted(expected)
    by_key = {(f["check"], f["device"], f["port"]): f for f in doc["findings"]}
    assert by_key[("cabling", LEAF, "swp1s0,swp2s0")]["observed"].endswith("(crossed)")
    assert by_key[("bgp", LEAF, "swp33s0")]["observed"] == "not established"
    assert by_key[("pfc", SPINE2, "swp1s0")]["observed"].endswith("rx pause frames/s on priority 3")


def test_faults_file_gives_its_findings_on_sonic(rewired, capsys, tmp_path):
    """`lab up --faults` keys (stored per switch, as lab up stores them): a weak optic, a failed PSU,
    NTP unsynchronised, a switch on another release, a host link's high pre-FEC BER, read through
    SONiC's own commands."""
    from generator.lab.fault_file import load_fault_file

    fabric = rewired
    # another release on the same side of 202505 (wredstat), so the driver reads what it read before
    other = "202405" if fabric.version == "202411" else "202511"
    faults = tmp_path / "faults.yaml"
    faults.write_text(f"""\
switches:
  {LEAF}: {{ntp: unsynced}}
  {SPINE1}: {{psu: [ok, failed]}}
  {SPINE2}: {{os_version: "{other}"}}
ports:
  "{LEAF}:swp34s0": {{rx_power_dbm: -14.0}}
  "{LEAF}:swp1s1": {{fec_ber: 1.0e-5}}
""")
    planned = {sw.name: {p.port for p in fabric.plan.ports if p.device == sw.name} for sw in fabric.plan.switches}
    for switch, fault in load_fault_file(faults, planned).items():
        set_faults(fabric.lab, switch, fault)
    code, doc = fabric.verify(capsys)
    assert code == 3, doc
    found = {(f["check"], f["device"], f["port"]): f for f in doc["findings"]}
    assert sorted(found) == sorted([("optics", LEAF, "swp34s0"), ("hardware", SPINE1, "PSU2"),
                                    ("ntp", LEAF, ""), ("os-version", SPINE2, ""), ("fec", LEAF, "swp1s1")])
    assert found[("fec", LEAF, "swp1s1")]["observed"].startswith("pre-FEC BER 1.0e-05")
    assert found[("optics", LEAF, "swp34s0")]["expected"] == "Rx power -10.4..5 dBm"
    assert found[("os-version", SPINE2, "")]["observed"].startswith(f"SONiC.{other}")


# --- the SONiC driver's getters against a provisioned lab switch ---------------------------
GETTER_TESTS = ("test_get_interfaces", "test_get_lldp_neighbors", "test_get_lldp_neighbors_detail",
                "test_get_interfaces_counters", "test_get_bgp_neighbors", "test_get_facts", "test_is_alive",
                "test_get_environment", "test_get_optics", "test_get_ntp_stats")


@pytest.fixture(scope="module")
def leaf_driver(fabric):
    from generator.devices.sonic import SonicDriver

    endpoint = yaml.safe_load(Path(fabric.endpoints).read_text())["switches"][LEAF]
    driver = SonicDriver("127.0.0.1", endpoint["username"], PASSWORD, timeout=10,
                         optional_args={"port": endpoint["port"], "known_hosts": str(fabric.lab / "known_hosts")})
    driver.open()
    yield driver
    driver.close()


@pytest.mark.parametrize("name", GETTER_TESTS)
def test_napalm_getter_tests_pass_against_the_sonic_lab(leaf_driver, name):
    """napalm.base.test.getters.BaseTestGetters' test bodies with our SONiC driver as `self.device`."""
    from napalm.base.test.getters import BaseTestGetters

    class Harness:
        device = leaf_driver

    test = getattr(BaseTestGetters, name)
    assert getattr(test, "__wrapped__", test)(Harness(), "lab")


def test_sonic_getters_speak_the_switch_names(fabric, leaf_driver):
    lldp = leaf_driver.get_lldp_neighbors()
    # Ethernet0 = etp1a = plan swp1s0 (2x400G split of front-panel port 1); the host's lldpd
    # announces its NIC's MAC as port ID and the netdev as description (lldpd's default)
    assert lldp["Ethernet0"] == [{"hostname": "gpu001", "port": host_nic_mac("gpu001", "ens1f0np0")}]
    host = leaf_driver.get_lldp_neighbors_detail("Ethernet0")["Ethernet0"][0]
    assert (host["remote_port"], host["remote_port_description"]) == (host_nic_mac("gpu001", "ens1f0np0"),
                                                                      "ens1f0np0")
    raw = leaf_driver._json(leaf_driver.commands.show_lldp_json)
    ports = {i["name"]: i["port"][0]["id"][0]["type"] for i in raw["lldp"][0]["interface"]}
    assert (ports["Ethernet0"], ports["Ethernet256"]) == ("mac", "local")          # lldpctl -f json0 subtypes
    # a SONiC neighbour announces its alias (lldpmgrd: portidsubtype local <alias>)
    assert lldp["Ethernet256"] == [{"hostname": SPINE1, "port": "etp1a"}]
    detail = leaf_driver.get_lldp_neighbors_detail()["Ethernet256"][0]
    assert detail["remote_system_description"].startswith(f"SONiC Software Version: SONiC.{fabric.version}")
    assert detail["remote_system_enable_capab"] == ["bridge", "router"]
    interfaces = leaf_driver.get_interfaces()
    assert interfaces["Ethernet256"]["speed"] == 400000.0 and interfaces["Ethernet256"]["mtu"] == 9216
    assert interfaces["Ethernet16"]["is_enabled"] is False          # unused port: admin down as rendered
    # a test before may have re-cabled the lab: a session re-connects within the world's settle time
    deadline = time.monotonic() + 60          # polled: a loaded machine only makes it later
    peers = leaf_driver.get_bgp_neighbors()["global"]["peers"]
    while not all(p["is_up"] for p in peers.values()) and time.monotonic() < deadline:
        time.sleep(0.5)
        peers = leaf_driver.get_bgp_neighbors()["global"]["peers"]
    assert len(peers) == 4 and all(p["is_up"] and p["remote_as"] == 65000 for p in peers.values())
    pfc = leaf_driver.get_pfc_ecn_counters()
    assert set(pfc["Ethernet0"]["rx_pause"]) == set(range(8))
    assert (pfc["Ethernet0"]["ecn_marked"] == -1) is (fabric.version < "202505")


def test_pfc_watchdog_storms_on_watched_queues_over_ssh(rewired, leaf_driver):
    """`show pfcwd stats` over real SSH: a storm fault on a host port the deploy put in PFC_WD
    shows as its queue's STORM DETECTED/RESTORED; the same fault on an unused port (no PFC_WD
    entry, watchdog off) shows nothing. Polled on the switch's own answer, never slept on."""
    from generator.lab.control import pfc_storms

    roce = rewired.plan.qos.roce_priority
    assert leaf_driver.get_pfc_watchdog_counters() == {}          # pfcwd prints non-zero queues only
    pfc_storms(rewired.lab, LEAF, "swp1s0", priority=roce, per_second=5)
    pfc_storms(rewired.lab, LEAF, "Ethernet16", priority=roce, per_second=5)
    deadline = time.monotonic() + 60
    storms = leaf_driver.get_pfc_watchdog_counters()
    while not storms and time.monotonic() < deadline:
        time.sleep(0.2)
        storms = leaf_driver.get_pfc_watchdog_counters()
    assert list(storms) == ["Ethernet0"] and list(storms["Ethernet0"]) == [roce]
    row = storms["Ethernet0"][roce]
    assert row["storm_detected"] > 0 and row["storm_restored"] == row["storm_detected"]
