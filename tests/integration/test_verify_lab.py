"""`fabricgen verify` against a lab fabric: `lab up --wiring`, `deploy`, `verify`, all through the CLI.

The fabric: leaf-spine, 4 nodes x 2 rails on one SN4700 leaf, 2 spines with 4 parallel
unnumbered uplinks each (3 switches: quick). A correctly wired lab passes; a wiring file that
crosses two host cables, unplugs one uplink, sets a host port down and puts CRC errors on
another, plus a PFC pause storm raised through the lab, gives exactly those findings.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from generator.checks.runner import run_checks
from generator.deploy.discover import discovery_text
from generator.intent.loader import load_intent
from generator.lab.control import lab_down, raise_counters, set_faults, set_wiring
from generator.lab.world import host_nic_mac, load_wiring, parse_wiring, with_host_macs
from generator.render.cabling import render_cabling
from generator.verify.model import HOST_CHECKS
from tests.hostile_text import (
    assert_json_clean,
    assert_junit_well_formed,
    assert_prometheus_parses,
    assert_terminal_clean,
)

pytestmark = pytest.mark.integration

PASSWORD = "lab-Secret-7f3"
INTENT = """\
fabric: {name: vf}
topology:
  kind: leaf-spine
  nodes: 4
  rails: 2
  nic_speed: 400G
  switches:
    leaf: {model: SN4700}
    spine: {model: SN4700}
deploy: {confirm_timeout: 60, concurrency: 4}
"""
LEAF, SPINE1, SPINE2 = "vf-leaf-1", "vf-spine-1", "vf-spine-2"
FAST = ["--interval", "1.5", "--settle", "3"]


def cli(*args: str, env: dict, cwd: Path, timeout: int = 180) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "generator.cli", *args], capture_output=True, text=True,
                          timeout=timeout, env=env, cwd=cwd)


class Fabric:
    def __init__(self, root: Path):
        self.root = root
        self.intent = root / "fabric.yaml"
        self.lab = root / "lab"
        self.env = {**os.environ, "FABRICGEN_PASSWORD": PASSWORD, "FABRICGEN_BACKUP_DIR": str(root / "backups"),
                    "FABRICGEN_CONFIRM_TIMEOUT": "30", "FABRICGEN_SSH_TIMEOUT": "6"}
        self.plan = None

    @property
    def endpoints(self) -> str:
        return str(self.lab / "endpoints.yml")

    def run(self, *args: str) -> subprocess.CompletedProcess:
        return cli(*args, env=self.env, cwd=self.root)

    def verify(self, *args: str) -> subprocess.CompletedProcess:
        return self.run("verify", str(self.intent), "--endpoints", self.endpoints, *FAST, *args)

    def plan_wiring(self) -> str:
        return render_cabling(self.plan)


@pytest.fixture(scope="module")
def fabric(tmp_path_factory):
    fab = Fabric(tmp_path_factory.mktemp("verify"))
    fab.intent.write_text(INTENT)
    fab.plan = run_checks(load_intent(fab.intent)).plan
    # The plan's own cabling.csv is a wiring file (its speed/length/cable columns are ignored).
    wiring = fab.root / "cabling.csv"
    wiring.write_text(fab.plan_wiring())
    up = fab.run("lab", "up", str(fab.intent), "--dir", str(fab.lab), "--wiring", str(wiring),
                 "--time-scale", "3.75")   # the 30 s confirm timer expires after 8 s
    try:
        assert up.returncode == 0, up.stdout + up.stderr
        deployed = fab.run("deploy", str(fab.intent), "--endpoints", fab.endpoints, "--yes")
        assert deployed.returncode == 0, deployed.stdout + deployed.stderr
        yield fab
    finally:
        lab_down(fab.lab)


@pytest.fixture
def rewired(fabric):
    """Put the plan's cabling and no counter faults back after a test re-cables the running lab."""
    yield fabric
    set_wiring(fabric.lab, parse_wiring(fabric.plan_wiring(), "cabling.csv"))
    for sw in fabric.plan.switches:
        set_faults(fabric.lab, sw.name, {})


def test_correctly_wired_lab_passes(fabric):
    result = fabric.verify("--format", "json")
    assert result.returncode == 0, result.stdout + result.stderr
    doc = json.loads(result.stdout)
    # 3 switches x 15 checks, but the leaf's ecmp is skipped: it is the fabric's only leaf, so no
    # other leaf's loopback to reach; the hosts are skipped (the lab's endpoints list no hosts), not unknown
    assert doc == {"summary": {"checked": 44, "passed": 44, "failed": 0, "unknown": 0}, "findings": []}
    assert "host-roce and host-counters skipped" in result.stderr
    only = fabric.verify("--only", "switches", "--format", "json")
    assert only.returncode == 0 and "host-roce" not in only.stderr


FAULTS = """\
a_device,a_port,b_device,b_port,state,crc_errors
vf-leaf-1,swp1,gpu002,ens1f0np0,,
vf-leaf-1,swp2,gpu001,ens2f0np0,,
vf-leaf-1,swp3,gpu001,ens1f0np0,,
vf-leaf-1,swp4,gpu002,ens2f0np0,,
vf-leaf-1,swp5,gpu003,ens1f0np0,down,
vf-leaf-1,swp6,gpu003,ens2f0np0,,
vf-leaf-1,swp7,gpu004,ens1f0np0,up,40
vf-leaf-1,swp8,gpu004,ens2f0np0,,
vf-leaf-1,swp18,vf-spine-2,swp1,,
vf-leaf-1,swp19,vf-spine-1,swp2,,
vf-leaf-1,swp20,vf-spine-2,swp2,,
vf-leaf-1,swp21,vf-spine-1,swp3,,
vf-leaf-1,swp22,vf-spine-2,swp3,,
vf-leaf-1,swp23,vf-spine-1,swp4,,
vf-leaf-1,swp24,vf-spine-2,swp4,,
"""


def test_faulty_wiring_gives_exactly_its_findings(rewired, tmp_path):
    fabric = rewired
    # The plan: swp1 -> gpu001:ens1f0np0, swp3 -> gpu002:ens1f0np0 (crossed here); swp17 -> spine-1 swp1
    # (no row: unplugged); swp5 down; swp7 with CRC errors. Plus a pause storm on spine-2 swp3.
    wiring = tmp_path / "faults.csv"
    wiring.write_text(FAULTS)
    set_wiring(fabric.lab, load_wiring(wiring))
    raise_counters(fabric.lab, SPINE2, "swp3", priority=3, pfc_rx_pause=500)

    result = fabric.verify("--format", "json")
    assert result.returncode == 3, result.stdout + result.stderr
    doc = json.loads(result.stdout)
    found = sorted((f["check"], f["device"], f["port"]) for f in doc["findings"])
    assert found == sorted([
        ("cabling", LEAF, "swp1,swp3"),                              # the swap: ONE finding
        ("link", LEAF, "swp5"),                                      # the port set down
        ("link", LEAF, "swp17"), ("link", SPINE1, "swp1"),           # both ends of the unplugged uplink
        ("bgp", LEAF, "swp17"), ("bgp", SPINE1, "swp1"),             # and its session, from both sides
        ("optics", LEAF, "swp17"), ("optics", SPINE1, "swp1"),       # no cable: no transceiver at either end
        ("ecmp", SPINE1, "10.255.0.3/32"),                           # spine-1 reaches the leaf over 3 of 4 links
        ("errors", LEAF, "swp7"),                                    # the CRC errors
        ("pfc", SPINE2, "swp3"),                                     # the pause storm
    ])
    by_key = {(f["check"], f["device"], f["port"]): f for f in doc["findings"]}
    assert by_key[("cabling", LEAF, "swp1,swp3")]["observed"].endswith("(crossed)")
    assert by_key[("bgp", LEAF, "swp17")]["observed"] == "not established"
    assert by_key[("pfc", SPINE2, "swp3")]["observed"].endswith("rx pause frames/s on priority 3")
    assert by_key[("ecmp", SPINE1, "10.255.0.3/32")]["observed"] == "3 BGP next hops"
    assert doc["summary"]["unknown"] == 0 and doc["summary"]["failed"] == 10   # check x device units

    table = fabric.verify()
    assert table.returncode == 3
    assert "swp1 and swp3 on vf-leaf-1 are crossed" in table.stdout

    junit = fabric.root / "verify.xml"
    assert fabric.verify("--format", "junit", "--output", str(junit)).returncode == 3
    junitparser = pytest.importorskip("junitparser")
    xml = junitparser.JUnitXml.fromfile(str(junit))
    failed = sorted((suite.name, case.name) for suite in xml for case in suite
                    if case.result and isinstance(case.result[0], junitparser.Failure))
    assert failed == sorted([("cabling", LEAF), ("link", LEAF), ("link", SPINE1), ("bgp", LEAF), ("bgp", SPINE1),
                             ("optics", LEAF), ("optics", SPINE1), ("ecmp", SPINE1), ("errors", LEAF),
                             ("pfc", SPINE2)])
    # 3 x 15 switch cases (the leaf's ecmp a skipped one); every host check (host-roce,
    # host-counters) a skipped case per host
    assert sum(1 for suite in xml for _ in suite) == 45 + len(HOST_CHECKS) * len(fabric.plan.hosts)


# issue 25: what cabling cannot say, as `lab up --faults FILE` takes it (DESIGN.md)
LAB_FAULTS = """\
switches:
  vf-leaf-1: {ntp: unsynced}
  vf-spine-1: {os_version: "5.9"}
  vf-spine-2: {psu: [ok, failed]}
ports:
  "vf-leaf-1:swp18": {rx_power_dbm: -14.0}
  "vf-leaf-1:swp2": {link_flaps: 5}
"""


def test_faults_file_gives_exactly_its_findings(rewired, tmp_path):
    """A weak optic, a failed PSU, a switch on another release, NTP unsynchronised, a flapping port,
    and an ECMP group one narrower than planned: spine-2's link to the leaf on swp2 is down in the
    wiring, as a real fabric loses an ECMP member (the link and its session are findings too)."""
    from generator.lab.fault_file import load_fault_file

    fabric = rewired
    faults = tmp_path / "faults.yaml"
    faults.write_text(LAB_FAULTS)
    planned = {sw.name: {p.port for p in fabric.plan.ports if p.device == sw.name} for sw in fabric.plan.switches}
    for switch, fault in load_fault_file(faults, planned).items():      # as `lab up --faults` stores them
        set_faults(fabric.lab, switch, fault)
    rows = fabric.plan_wiring().splitlines()
    wiring = "\n".join([rows[0] + ",state"] + [r + (",down" if r.startswith("vf-leaf-1,swp20,") else ",")
                                                for r in rows[1:]])
    set_wiring(fabric.lab, parse_wiring(wiring + "\n", "w.csv"))

    result = fabric.verify("--format", "json")
    assert result.returncode == 3, result.stdout + result.stderr
    doc = json.loads(result.stdout)
    found = {(f["check"], f["device"], f["port"]): f for f in doc["findings"]}
    assert sorted(found) == sorted([
        ("optics", LEAF, "swp18"),                                   # the weak optic
        ("hardware", SPINE2, "PSU2"),                                # the failed PSU
        ("os-version", SPINE1, ""),                                  # the switch on 5.9
        ("ntp", LEAF, ""),                                           # NTP unsynchronised
        ("flaps", LEAF, "swp2"),                                     # the flapping port
        ("ecmp", SPINE2, "10.255.0.3/32"),                           # 3 of 4 next hops to the leaf
        ("link", LEAF, "swp20"), ("link", SPINE2, "swp2"),           # the uplink that took it
        ("bgp", LEAF, "swp20"), ("bgp", SPINE2, "swp2"),
    ])
    # the lab AOC's own Rx alarm threshold (-10.4 dBm) is the limit, not the default
    assert found[("optics", LEAF, "swp18")]["expected"] == "Rx power -10.4..5 dBm"
    assert found[("optics", LEAF, "swp18")]["observed"] == "-14 dBm (lanes 1, 2, 3, 4)"
    assert found[("os-version", SPINE1, "")]["observed"] == "5.9"
    assert found[("ecmp", SPINE2, "10.255.0.3/32")]["observed"] == "3 BGP next hops"
    assert found[("flaps", LEAF, "swp2")]["observed"] == "11 carrier changes since the counters were cleared"
    # check x device units: 10 of the 44, each finding above in its own unit
    assert doc["summary"] == {"checked": 44, "passed": 34, "failed": 10, "unknown": 0}


def test_one_unplugged_uplink_is_one_root_finding_with_its_consequences(rewired):
    """Issue 36: the cable leaf swp17 - spine-1 swp1 is unplugged (no row in the wiring). Every
    check that looks at it fails, and verify names one root: the link, with its consequences
    counted (the far end's link, the session from both sides, no module at either end, spine-1's
    ECMP group to the leaf one narrower). The exit stays 3, every finding stays in the JSON."""
    fabric = rewired
    rows = [r for r in fabric.plan_wiring().splitlines() if not r.startswith(f"{LEAF},swp17,")]
    set_wiring(fabric.lab, parse_wiring("\n".join(rows) + "\n", "unplugged.csv"))

    result = fabric.verify("--only", "switches", "--format", "json")
    assert result.returncode == 3, result.stdout + result.stderr
    doc = json.loads(result.stdout)
    root = f"link:{LEAF}:swp17"
    assert doc["root_causes"] == [{"id": root, "check": "link", "device": LEAF, "port": "swp17", "consequences": 6,
                                   "by_check": {"link": 1, "bgp": 2, "optics": 2, "ecmp": 1}}]
    assert len(doc["findings"]) == 7
    assert {f["id"]: f.get("caused_by") for f in doc["findings"]} == {
        root: None, f"link:{SPINE1}:swp1": root, f"bgp:{LEAF}:swp17": root, f"bgp:{SPINE1}:swp1": root,
        f"optics:{LEAF}:swp17": root, f"optics:{SPINE1}:swp1": root, f"ecmp:{SPINE1}:10.255.0.3/32": root}

    table = fabric.verify("--only", "switches")
    assert table.returncode == 3
    assert "swp17 on vf-leaf-1 is down (planned up to vf-spine-1:swp1) (+6 consequences: link 1, bgp 2, " \
        "optics 2, ecmp 1)" in " ".join(table.stdout.split())
    assert "7 finding(s) from 1 root cause(s)" in table.stdout
    assert "BGP swp17" not in table.stdout          # a consequence is not a row of its own

def test_reports_survive_a_hostile_lldp_neighbour(rewired, tmp_path):
    """swp1's LLDP neighbour announces a system and port name full of markup, escape sequences,
    XML specials and a markdown table break (LLDP names are any octets): every format escapes
    them (issue 25), and the JSON carries the announced text as it is."""
    fabric = rewired
    # a wiring file takes any name without a space or a comma; the lab announces it over LLDP
    name = "[/]x<script>|`\x1b[31m\x1b]52;c;aGk=\x07[link=http://x]y[/link]&]]>\x00\x9b\u202e"
    port = "eth<b>\x1b]8;;http://x\x1b\\"
    wiring = fabric.plan_wiring().replace("vf-leaf-1,swp1,gpu001,ens1f0np0", f"vf-leaf-1,swp1,{name},{port}", 1)
    assert name in wiring
    set_wiring(fabric.lab, parse_wiring(wiring, "hostile.csv"))

    result = fabric.verify("--only", "switches", "--format", "json")
    assert result.returncode == 3, result.stdout + result.stderr
    doc = assert_json_clean(result.stdout)
    assert [(f["check"], f["device"], f["port"]) for f in doc["findings"]] == [("cabling", LEAF, "swp1")]
    assert name in doc["findings"][0]["observed"] and port in doc["findings"][0]["observed"]

    table = fabric.verify("--only", "switches")
    assert table.returncode == 3
    assert "[/]x<script>|`\\x1b[31m" in table.stdout
    assert_terminal_clean(table.stdout + table.stderr)

    junit = tmp_path / "verify.xml"
    assert fabric.verify("--only", "switches", "--format", "junit", "--output", str(junit)).returncode == 3
    root = assert_junit_well_formed(junit.read_text(encoding="utf-8"))
    failure = root.find("testsuite[@name='cabling']/testcase[@name='vf-leaf-1']/failure")
    assert "[/]x<script>|`\\x1b[31m\\x1b]52;c;aGk=\\x07" in failure.get("message")

    prom = tmp_path / "verify.prom"
    assert fabric.verify("--only", "switches", "--format", "prometheus", "--output", str(prom)).returncode == 3
    assert_prometheus_parses(prom.read_text(encoding="utf-8"))


# Host LLDP both ways lldpd announces a port (lldpcli(8)): gpu001 runs `portidsubtype ifname`
# (port ID = netdev), the others lldpd's default (port ID = MAC, description = netdev). swp1/swp3
# cross gpu001 and gpu002, swp5/swp6 cross gpu003's two NICs, swp7 holds gpu004's second NIC and
# swp8 is unplugged.
HOST_LLDP = """\
a_device,a_port,b_device,b_port,lldp_portid
vf-leaf-1,swp1,gpu002,ens1f0np0,
vf-leaf-1,swp2,gpu001,ens2f0np0,ifname
vf-leaf-1,swp3,gpu001,ens1f0np0,ifname
vf-leaf-1,swp4,gpu002,ens2f0np0,mac
vf-leaf-1,swp5,gpu003,ens2f0np0,
vf-leaf-1,swp6,gpu003,ens1f0np0,
vf-leaf-1,swp7,gpu004,ens2f0np0,
"""


def _discovered(fabric, directory: Path) -> tuple[Path, dict]:
    """An intent naming a discovery file whose NICs have MACs (as `hosts discover` writes it), and the MACs."""
    macs, entries = {}, {}
    for h, host in enumerate(fabric.plan.hosts, 1):
        nics = []
        for n, nic in enumerate(host.nics):
            macs[(host.name, nic.netdev)] = f"0c:42:a1:00:{h:02x}:{n:02x}"
            nics.append({"netdev": nic.netdev, "mac": macs[(host.name, nic.netdev)], "rdma": nic.rdma,
                         "pci": f"0000:{8 + n:02x}:00.0", "port": 1, "link_layer": "Ethernet", "state": "ACTIVE",
                         "rate_gbps": 400})
        entries[host.name] = {"gpudirect": "nvidia-peermem", "nics": nics}
    (directory / "discovered.yaml").write_text(discovery_text(entries))
    intent = directory / "fabric.yaml"
    intent.write_text(INTENT + "hosts: {discovered: discovered.yaml}\n")
    return intent, macs


def test_hosts_announcing_macs_or_names_pass_and_miscabled_host_ports_are_found(rewired, tmp_path):
    fabric = rewired
    intent, macs = _discovered(fabric, tmp_path)
    rows = fabric.plan_wiring().splitlines()
    wired = "\n".join([rows[0] + ",lldp_portid"] + [r + (",ifname" if ",gpu001," in r else ",") for r in rows[1:]])
    # the lab's hosts announce the MACs the discovery file recorded (as `lab up` does with hosts.discovered)
    set_wiring(fabric.lab, with_host_macs(parse_wiring(wired + "\n", "w.csv"), macs))
    assert leaf_driver_port(fabric, "swp3") == macs[("gpu002", "ens1f0np0")]
    passed = fabric.run("verify", str(intent), "--endpoints", fabric.endpoints, *FAST, "--format", "json")
    assert passed.returncode == 0, passed.stdout + passed.stderr

    wiring = tmp_path / "hosts.csv"
    wiring.write_text(HOST_LLDP + "".join(",".join(r.split(",")[:4]) + ",\n" for r in rows if "spine" in r))
    set_wiring(fabric.lab, with_host_macs(load_wiring(wiring), macs))
    result = fabric.run("verify", str(intent), "--endpoints", fabric.endpoints, *FAST, "--format", "json")
    assert result.returncode == 3, result.stdout + result.stderr
    findings = {(f["check"], f["port"]): f for f in json.loads(result.stdout)["findings"]}
    assert sorted(findings) == [("cabling", "swp1,swp3"), ("cabling", "swp5,swp6"), ("cabling", "swp7"),
                                ("link", "swp8"), ("optics", "swp8")]       # unplugged: no module either
    assert findings[("cabling", "swp1,swp3")]["observed"].endswith("(crossed)")
    assert (findings[("cabling", "swp7")]["expected"], findings[("cabling", "swp7")]["observed"]) == (
        f"gpu004:ens1f0np0 (MAC {macs[('gpu004', 'ens1f0np0')]})",
        f"gpu004:ens2f0np0 (MAC {macs[('gpu004', 'ens2f0np0')]})")

    # without the discovery file the same lab is judged by the port descriptions: the same findings
    plain = fabric.verify("--format", "json")
    assert plain.returncode == 3
    assert sorted((f["check"], f["port"]) for f in json.loads(plain.stdout)["findings"]) == sorted(findings)


def leaf_driver_port(fabric, port: str) -> str:
    """The port ID the leaf's LLDP shows on PORT, read with `nv show` through the lab's SSH."""
    import napalm

    endpoint = yaml.safe_load(Path(fabric.endpoints).read_text())["switches"][LEAF]
    driver = napalm.get_network_driver("nvue")(
        "127.0.0.1", endpoint["username"], PASSWORD, timeout=10,
        optional_args={"port": endpoint["port"], "known_hosts": str(fabric.lab / "known_hosts"),
                       "cumulus_version": "5.11"})
    driver.open()
    try:
        return driver.get_lldp_neighbors()[port][0]["port"]
    finally:
        driver.close()


def test_a_switch_that_refuses_the_login_cannot_be_checked(rewired):
    set_faults(rewired.lab, SPINE2, {"refuse_auth": True})
    result = rewired.verify("--format", "json")
    assert result.returncode == 1, result.stdout + result.stderr
    doc = json.loads(result.stdout)
    assert doc["summary"]["unknown"] == 15      # every switch check of the switch
    assert {f["device"] for f in doc["findings"]} == {SPINE2}
    assert all(f["observed"].startswith("could not check: ") for f in doc["findings"])
    assert PASSWORD not in result.stdout + result.stderr


def test_bad_wiring_file_is_one_line_and_no_lab(tmp_path):
    intent = tmp_path / "fabric.yaml"
    intent.write_text(INTENT)
    wiring = tmp_path / "w.csv"
    wiring.write_text("a_device,a_port,b_device,b_port\nvf-leaf-1,swp1,gpu001,ens1f0np0\nvf-leaf-1,swp2,gpu099,x\n")
    result = cli("lab", "up", str(intent), "--dir", str(tmp_path / "lab"), "--wiring", str(wiring),
                 env=dict(os.environ), cwd=tmp_path)
    assert result.returncode == 1
    assert result.stderr.strip() == f"error: lab up: {wiring}:3: 'gpu099' is not a switch or host of the plan"
    assert not (tmp_path / "lab" / "endpoints.yml").exists()


@pytest.mark.parametrize("text, where", [
    ("switches:\n  vf-leaf-1: {ntp: unsynced}\n  vf-leaf-9: {psu: [ok, failed]}\n",
     "3: switches.vf-leaf-9: not a switch of the plan"),
    ("ports:\n  \"vf-leaf-1:swp99\": {rx_power_dbm: -14}\n", "2: ports.vf-leaf-1:swp99: swp99 is not a planned port"),
    ("switches:\n  vf-spine-1: {psu: [ok, broken]}\n", "2: switches.vf-spine-1.psu: 'broken': use ok or failed"),
    ("switches:\n  vf-spine-1: {fan: [ok]}\n", "2: switches.vf-spine-1.fan: unknown key"),
])
def test_bad_faults_file_is_one_line_and_no_lab(tmp_path, text, where):
    intent = tmp_path / "fabric.yaml"
    intent.write_text(INTENT)
    faults = tmp_path / "faults.yaml"
    faults.write_text(text)
    result = cli("lab", "up", str(intent), "--dir", str(tmp_path / "lab"), "--faults", str(faults),
                 env=dict(os.environ), cwd=tmp_path)
    assert result.returncode == 1
    assert result.stderr.startswith(f"error: lab up: {faults}:{where}") and result.stderr.count("\n") == 1
    assert not (tmp_path / "lab" / "endpoints.yml").exists()


def test_lab_up_with_faults_answers_them_through_the_nos_commands(tmp_path):
    """`lab up --faults` before any deploy: the factory switch already reports its release, PSUs,
    NTP and optics as the file says (a module is in every cabled port from power-on)."""
    intent = tmp_path / "fabric.yaml"
    intent.write_text(INTENT)
    faults = tmp_path / "faults.yaml"
    faults.write_text(LAB_FAULTS)
    env = {**os.environ, "FABRICGEN_PASSWORD": PASSWORD}
    up = cli("lab", "up", str(intent), "--dir", str(tmp_path / "lab"), "--faults", str(faults), env=env, cwd=tmp_path)
    try:
        assert up.returncode == 0, up.stdout + up.stderr
        spine1, spine2, leaf = (_driver(tmp_path / "lab", name) for name in (SPINE1, SPINE2, LEAF))
        try:
            assert spine1.get_facts()["os_version"] == "5.9"
            assert spine2.get_environment()["power"]["PSU2"]["status"] is False
            assert all(p["status"] for p in spine1.get_environment()["power"].values())
            assert not any(p["synchronized"] for p in leaf.get_ntp_stats())
            assert any(p["synchronized"] for p in spine1.get_ntp_stats())
            optics = leaf.get_transceivers()
            assert optics["swp18"]["rx_power_dbm"] == [-14.0] * 4 and optics["swp18"]["media"] == "AOC"
            assert optics["swp1"]["media"] == "DAC" and optics["swp1"]["rx_power_dbm"] == []
        finally:
            for driver in (spine1, spine2, leaf):
                driver.close()
    finally:
        lab_down(tmp_path / "lab")


def _driver(lab: Path, name: str):
    import napalm

    endpoint = yaml.safe_load((lab / "endpoints.yml").read_text())["switches"][name]
    driver = napalm.get_network_driver("nvue")(
        "127.0.0.1", endpoint["username"], PASSWORD, timeout=10,
        optional_args={"port": endpoint["port"], "known_hosts": str(lab / "known_hosts"), "cumulus_version": "5.11"})
    driver.open()
    return driver


# --- napalm's own getter tests, against a deployed lab switch ------------------------------
GETTER_TESTS = ("test_get_interfaces", "test_get_lldp_neighbors", "test_get_lldp_neighbors_detail",
                "test_get_interfaces_counters", "test_get_bgp_neighbors", "test_get_facts", "test_is_alive",
                "test_get_environment", "test_get_optics", "test_get_ntp_stats")


@pytest.fixture(scope="module")
def leaf_driver(fabric):
    import napalm

    endpoint = yaml.safe_load(Path(fabric.endpoints).read_text())["switches"][LEAF]
    driver = napalm.get_network_driver("nvue")(
        "127.0.0.1", endpoint["username"], PASSWORD, timeout=10,
        optional_args={"port": endpoint["port"], "known_hosts": str(fabric.lab / "known_hosts"),
                       "cumulus_version": "5.11"})
    driver.open()
    yield driver
    driver.close()


@pytest.mark.parametrize("name", GETTER_TESTS)
def test_napalm_getter_tests_pass_against_the_lab(leaf_driver, name):
    """napalm.base.test.getters.BaseTestGetters' test bodies (unwrapped from their mocked-data
    harness) with our driver as `self.device`: each checks its getter against napalm.base.models."""
    from napalm.base.test.getters import BaseTestGetters

    class Harness:
        device = leaf_driver

    test = getattr(BaseTestGetters, name)
    result = getattr(test, "__wrapped__", test)(Harness(), "lab")
    assert result


def test_getters_see_the_plan(fabric, leaf_driver):
    lldp = leaf_driver.get_lldp_neighbors()
    # a host's lldpd announces its NIC's MAC as port ID and the netdev as description (lldpd's
    # default; the NVUE reference shows servers so: "swp1 ... server01 48:b0:2d:76:ee:8e")
    assert lldp["swp1"] == [{"hostname": "gpu001", "port": host_nic_mac("gpu001", "ens1f0np0")}]
    assert lldp["swp17"] == [{"hostname": SPINE1, "port": "swp1"}]
    host = leaf_driver.get_lldp_neighbors_detail("swp1")["swp1"][0]
    assert (host["remote_port"], host["remote_port_description"]) == (host_nic_mac("gpu001", "ens1f0np0"),
                                                                      "ens1f0np0")
    assert leaf_driver._json("nv show interface swp1 lldp -o json")["neighbor"]["gpu001"]["port"]["type"] == "mac"
    interfaces = leaf_driver.get_interfaces()
    assert interfaces["swp17"]["speed"] == 400000.0 and interfaces["swp17"]["mtu"] == 9216
    peers = leaf_driver.get_bgp_neighbors()["global"]["peers"]
    assert sorted(peers) == [f"swp{i}" for i in range(17, 25)]
    assert all(p["is_up"] and p["remote_as"] == 65000 for p in peers.values())
    pfc = leaf_driver.get_pfc_ecn_counters()
    assert set(pfc["swp1"]["rx_pause"]) == set(range(8))
