"""`fabricgen deploy` and `fabricgen drift` on switches that already hold a management plane.

Every lab switch boots from the factory default (eth0 static in the mgmt VRF, the cumulus
user with a SHA-512 hash of the lab password, the default control-plane ACLs, the API), logs
in against its applied accounts, stops taking logins when eth0 loses its address or the mgmt
VRF, and refuses to delete a logged-in user. Real SSH, real napalm/netmiko.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import json
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest
from netmiko import ConnectHandler

from generator.checks.runner import run_checks
from generator.devices.nvue import load_nvue_document
from generator.drift.command import drift_stdout, run_drift
from generator.intent.loader import load_intent
from generator.lab.control import LabDevice
from generator.render.managed import managed_set
from generator.render.output import render_files
from tests.deploy_cli import deploy_cli

pytestmark = pytest.mark.integration

CONFIRM_SECONDS = 30   # the intent's floor; the lab's clock runs TIME_SCALE times faster (lab up --time-scale)
TIME_SCALE = 1.5      # so the confirm timer expires after 20 s of wall time
BASE = """\
fabric: {name: mg}
topology:
  kind: leaf-spine
  nodes: 2
  gpus_per_node: 8
  rails: 2
  switches:
    leaf: {model: SN4700}
    spine: {model: SN4700}
  cables: {host_leaf: 2, leaf_spine: 30}
switch_os: {name: cumulus, version: "VERSION"}
addressing: {management: 10.20.0.0/24}
deploy: {confirm_timeout: 60, concurrency: 4}
"""
OPS_KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGm4c0mOq1S9kkFhR1xwQWgsNnAbqS5k3b3dWZ7Xo7nq ops@bastion"


def sha512_crypt(password: str) -> str:
    """`openssl passwd -6` of the password, through the system's libcrypt."""
    lib = ctypes.CDLL(ctypes.util.find_library("crypt"))
    lib.crypt.restype = ctypes.c_char_p
    lib.crypt.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
    return lib.crypt(password.encode(), b"$6$mgtestsalt0001$").decode()


def management_section(password: str) -> str:
    return textwrap.dedent(f"""\
        management:
          ntp: [10.20.0.5]
          dns: [10.20.0.53]
          syslog: [10.20.0.99]
          timezone: Europe/Berlin
          users:
            - {{name: cumulus, role: system-admin, hashed_password: "{sha512_crypt(password)}"}}
            - {{name: ops, role: nvue-monitor, ssh_keys: ["{OPS_KEY}"]}}
        """)


@dataclass
class Fabric:
    intent: Path
    lab: object                     # conftest.LabHandle
    plan: object
    rendered: dict[str, str]

    @property
    def names(self) -> list[str]:
        return sorted(self.rendered)

    @property
    def endpoints(self) -> str:
        return str(self.lab.directory / "endpoints.yml")

    def running(self, name: str) -> dict:
        device = self.lab.driver(name)
        device.open()                   # a fresh login: the switch is reachable with the lab password
        try:
            return load_nvue_document(device.get_config(retrieve="running")["running"])
        finally:
            device.close()

    def snapshot(self) -> dict[str, dict]:
        return {n: self.running(n) for n in self.names}

    def deploy(self, capsys, **kwargs) -> tuple[int, str, str]:
        done = deploy_cli(self.intent, endpoints=self.endpoints, yes=True, **kwargs)
        return done.returncode, done.stdout, done.stderr

    def drift(self, capsys) -> tuple[int, dict]:
        run = run_drift(str(self.intent), endpoints=self.endpoints, only="switches", fmt="json")
        return run.exit_code, json.loads(drift_stdout(run))

    def nv(self, name: str, *commands: str) -> None:
        """Type commands on the switch as an operator would."""
        conn = ConnectHandler(device_type="cumulus_linux", host="127.0.0.1", port=self.lab.port(name),
                              username="cumulus", password=self.lab.password, ssh_strict=True,
                              system_host_keys=False, alt_host_keys=True, alt_key_file=str(self.lab.known_hosts),
                              allow_agent=False, use_keys=False, fast_cli=True)
        try:
            for command in commands:
                output = conn.send_command(command, expect_string=r"[$#]\s*$", read_timeout=15)
                assert "Error" not in output, (command, output)
        finally:
            conn.disconnect()


@pytest.fixture
def make_fabric(tmp_path, lab_start, monkeypatch):
    monkeypatch.setenv("FABRICGEN_BACKUP_DIR", str(tmp_path / "backups"))
    monkeypatch.setenv("FABRICGEN_CONFIRM_TIMEOUT", str(CONFIRM_SECONDS))
    monkeypatch.setenv("FABRICGEN_SSH_TIMEOUT", "5")
    monkeypatch.chdir(tmp_path)

    def make(*, management: bool, version: str = "5.11") -> Fabric:
        from tests.integration.conftest import LAB_PASSWORD

        text = BASE.replace("VERSION", version) + (management_section(LAB_PASSWORD) if management else "")
        intent = tmp_path / "fabric.yaml"
        intent.write_text(text)
        plan = run_checks(load_intent(intent)).plan
        assert plan is not None
        rendered = {rel.split("/")[1]: body for rel, body in render_files(plan, text).items()
                    if rel.startswith("switches/")}
        # Each switch sits at its plan address (as `fabricgen lab up` puts it), static, in VRF mgmt.
        lab = lab_start([LabDevice(sw.name, "cumulus", version, mgmt_address=f"{sw.mgmt_ip}/24",
                                   mgmt_gateway="10.20.0.1") for sw in plan.switches], time_scale=TIME_SCALE)
        return Fabric(intent, lab, plan, rendered)

    return make


def _eth0(tree: dict) -> dict:
    return tree["interface"]["eth0"]


@pytest.mark.parametrize("version", ["5.11", "5.15"])
def test_deploy_with_management_leaves_the_switch_reachable_as_planned(make_fabric, capsys, version):
    fab = make_fabric(management=True, version=version)
    code, out, err = fab.deploy(capsys)
    assert code == 0, out + err
    assert "3 to change" in out and "switches deployed" in out
    assert "kept the switches' own management" not in out
    assert fab.lab.password not in out + err and "$6$" not in out + err
    managed = managed_set(True)
    for sw in fab.plan.switches:
        running = fab.running(sw.name)          # reachable: a fresh login with the deploy password
        eth0 = _eth0(running)
        ip = eth0["ipv4"] if version == "5.15" else eth0["ip"]
        assert ip["address"] == {f"{sw.mgmt_ip}/24": {}}, sw.name
        assert ip["gateway"] == {"10.20.0.1": {}}
        assert (eth0["vrf"] if version == "5.15" else ip["vrf"]) == "mgmt"
        users = running["system"]["aaa"]["user"]
        assert set(users) == {"cumulus", "ops"}
        assert users["cumulus"]["hashed-password"] == sha512_crypt(fab.lab.password)
        assert users["ops"]["ssh"]["authorized-key"]
        assert set(running["system"]["control-plane"]["acl"]) == {"acl-default-dos", "acl-default-whitelist"}
        system = running["system"]
        # 5.15 object model: `system timezone` became `system date-time timezone`
        assert (system["date-time"]["timezone"] if version == "5.15" else system["timezone"]) == "Europe/Berlin"
        assert managed.managed(running) == load_nvue_document(fab.rendered[sw.name])
    code, doc = fab.drift(capsys)
    assert code == 0, doc
    code, out, _ = fab.deploy(capsys)
    assert code == 0 and "0 to change, 3 unchanged" in out


def test_deploy_without_management_keeps_the_switch_own(make_fabric, capsys):
    fab = make_fabric(management=False)
    leaf = "mg-leaf-1"
    # things an operator configured by hand that fabricgen does not manage
    fab.nv(leaf, "nv set service lldp tx-interval 10", "nv set system global anycast-id 12",
           "nv set vrf blue loopback ip address 10.9.9.9/32", "nv config apply -y")
    before = fab.snapshot()
    code, out, err = fab.deploy(capsys)
    assert code == 0, out + err
    kept = [line for line in out.splitlines() if line.startswith("kept the switches' own management")]
    assert kept == ["kept the switches' own management (eth0, users, control-plane ACLs, NVUE API, ssh-server): "
                    "the intent has no management section"]
    managed = managed_set(False)
    for name in fab.names:
        running = fab.running(name)
        assert managed.managed(running) == load_nvue_document(fab.rendered[name]), name
        # everything fabricgen does not manage is exactly what the switch had: eth0, the cumulus user
        # and its hash, the ACLs, the API, and the hand-made LLDP / global / vrf blue on the leaf
        assert managed.unmanaged(running) == managed.unmanaged(before[name]), name
    assert fab.running(leaf)["vrf"]["blue"] == {"loopback": {"ip": {"address": {"10.9.9.9/32": {}}}}}
    assert fab.running(leaf)["service"] == {"lldp": {"tx-interval": "10"}}

    # drift: in sync although the leaf carries extra unmanaged subtrees ...
    code, doc = fab.drift(capsys)
    assert code == 0, doc
    assert doc["summary"]["in_sync"] == 3
    # ... and more hand-made unmanaged state is still no drift
    fab.nv(leaf, "nv set system global fabric-id 3", "nv config apply -y")
    assert fab.drift(capsys)[0] == 0
    # a managed change is drift
    fab.nv("mg-spine-1", "nv set interface swp1 link mtu 1500", "nv config apply -y")
    code, doc = fab.drift(capsys)
    assert code == 3
    assert doc["devices"]["mg-spine-1"]["features"]["interfaces"]["changed"] == [
        {"path": "interface.swp1.link.mtu", "intended": 9216, "actual": 1500}]
    assert doc["devices"][leaf]["status"] == "in_sync"


def test_operator_settings_under_managed_parents_survive_a_deploy(make_fabric, capsys):
    """Issue 23, item 6: fabricgen owns the management leaves it renders (vrf mgmt itself,
    ssh-server state, api state), not their parents: an operator's static route in the mgmt VRF,
    `ssh-server vrf mgmt` and the API's listening address stay, and are no drift."""
    fab = make_fabric(management=True)
    leaf = "mg-leaf-1"
    assert fab.deploy(capsys)[0] == 0
    fab.nv(leaf, "nv set vrf mgmt router static 10.99.0.0/16 via 10.20.0.1", "nv set system ssh-server vrf mgmt",
           "nv set system api listening-address 127.0.0.1", "nv config apply -y")
    mine = fab.running(leaf)
    assert mine["vrf"]["mgmt"]["router"]["static"]["10.99.0.0/16"]["via"] == {"10.20.0.1": {}}
    code, doc = fab.drift(capsys)
    assert code == 0, {k: v for k, v in doc["devices"][leaf]["features"].items() if not v["compliant"]}
    fab.nv(leaf, "nv set interface swp1 link mtu 1500", "nv config apply -y")    # something to deploy
    code, out, err = fab.deploy(capsys)
    assert code == 0, out + err
    after = fab.running(leaf)
    assert after["interface"]["swp1"]["link"]["mtu"] == "9216"
    assert after["vrf"]["mgmt"] == mine["vrf"]["mgmt"]
    assert after["system"]["ssh-server"] == {"state": "enabled", "vrf": {"mgmt": {}}}
    assert after["system"]["api"] == {"state": "enabled", "listening-address": {"127.0.0.1": {}}}
    assert fab.drift(capsys)[0] == 0
    # the managed leaf itself is still fabricgen's
    fab.nv(leaf, "nv set system ssh-server state disabled", "nv config apply -y")
    code, doc = fab.drift(capsys)
    assert code == 3 and doc["devices"][leaf]["status"] == "drift"


def test_a_new_management_gateway_is_deployed(make_fabric, capsys):
    """eth0's gateway is checked like its address (issue 23, item 6): the plan's new gateway passes
    the guard (tests/unit/test_guard.py refuses any other)."""
    fab = make_fabric(management=True)
    assert fab.deploy(capsys)[0] == 0
    text = fab.intent.read_text().replace("management:\n", "management:\n  gateway: 10.20.0.254\n", 1)
    fab.intent.write_text(text)
    code, out, err = fab.deploy(capsys)
    assert code == 0, out + err                  # the plan's new gateway is what the diff sets: allowed
    assert "10.20.0.254" in str(fab.running("mg-leaf-1")["interface"]["eth0"]["ip"]["gateway"])


def _hostile(text: str, drop: str) -> str:
    """The rendered file with the management eth0 block or the cumulus user cut out."""
    lines = text.splitlines(keepends=True)
    start = next(i for i, ln in enumerate(lines) if ln.rstrip() == drop)
    indent = len(lines[start]) - len(lines[start].lstrip())
    end = start + 1
    while end < len(lines) and len(lines[end]) - len(lines[end].lstrip()) > indent:
        end += 1
    return "".join(lines[:start] + lines[end:])


def test_a_hostile_candidate_is_refused_before_anything_is_applied(make_fabric, capsys, monkeypatch):
    fab = make_fabric(management=True)
    before = fab.snapshot()
    import generator.render.output as output

    real = output.render_files

    def hostile_render(plan, text):
        files = dict(real(plan, text))
        leaf, spine = "switches/mg-leaf-1/startup.yaml", "switches/mg-spine-2/startup.yaml"
        files[leaf] = _hostile(files[leaf], "      eth0:")                 # eth0 removed
        files[spine] = _hostile(files[spine], "          cumulus:")         # the deploy user removed
        return files

    monkeypatch.setattr(output, "render_files", hostile_render)
    code, out, err = fab.deploy(capsys)
    assert code == 1, out + err
    problems = {ln.split(" ")[0]: ln for ln in out.splitlines() if ": failed: refused before apply" in ln}
    assert set(problems) == {"mg-leaf-1", "mg-spine-2"}
    assert "the diff would unset `interface eth0`" in problems["mg-leaf-1"]
    assert "`system aaa user cumulus`, deleting user cumulus" in problems["mg-spine-2"]
    assert "2 switch(es) refused" in err and "nothing was pushed" in err
    assert fab.snapshot() == before                   # nothing anywhere was applied; all reachable

    # the dry run says the same per switch: refused with the guard's reason, the others would change
    code, out, err = fab.deploy(capsys, dry_run=True)
    assert code == 1 and "2 switch(es) refused" in err, out + err
    rows = {n: ln for ln in out.splitlines() if ln.startswith("  wave ") for n in fab.names if f" {n} " in ln}
    assert set(rows) == set(fab.names)
    assert rows["mg-leaf-1"].split("mg-leaf-1", 1)[1].strip().startswith(
        "refused: refused before apply: the diff would unset `interface eth0`")
    assert "refused: refused before apply:" in rows["mg-spine-2"] and "deleting user cumulus" in rows["mg-spine-2"]
    others = len(fab.names) - 2
    assert all("would change (" in ln for n, ln in rows.items() if n not in ("mg-leaf-1", "mg-spine-2"))
    assert (f"dry run: {len(fab.names)} switch(es) in " in out
            and f": would change {others}, unchanged 0, refused 2, failed 0" in out)
    assert fab.snapshot() == before
    for name in fab.names:
        device = fab.lab.driver(name)
        device.open()
        try:
            assert not device.has_pending_commit()
        finally:
            device.close()


def test_the_guard_runs_again_right_before_the_commit(make_fabric, capsys, monkeypatch):
    """A candidate that turns hostile between the diff phase and the commit (here: forced)
    is refused in its wave, the rollout stops, and the switch is not touched."""
    fab = make_fabric(management=True)
    before = fab.snapshot()
    import generator.deploy.rollout as rollout

    real = rollout.build_candidate
    calls: dict[str, int] = {}

    def late_hostile(rendered, running, managed):
        candidate = real(rendered, running, managed)
        name = "mg-leaf-1" if "hostname: mg-leaf-1" in rendered else None
        if name:
            calls[name] = calls.get(name, 0) + 1
            if calls[name] == 2:                      # the apply phase's rebuild
                from generator.deploy.candidate import Candidate

                return Candidate(_hostile(candidate.text, "      eth0:"), candidate.kept_management,
                                 candidate.running)
        return candidate

    monkeypatch.setattr(rollout, "build_candidate", late_hostile)
    code, out, err = fab.deploy(capsys)
    assert code == 1, out + err
    assert "mg-leaf-1 (wave 1): failed: refused before apply: the diff would unset `interface eth0`" in out
    assert "wave 1" in err and "the rollout stopped" in err
    assert fab.snapshot() == before
