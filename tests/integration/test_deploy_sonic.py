"""`fabricgen deploy` on SONiC lab switches that start where a real SN5600 starts.

Each simulated switch boots from SONiC's factory config_db (its own base MAC, the platform's
default SKU ACS-SN5600, bgpcfgd, eth0 at the plan's address, FEATURE, AAA, VERSIONS), applies
`config apply-patch` through GCU's Spectrum allow-list, loads files with `config reload`, and
stops taking logins when eth0 loses its address. Real SSH, real napalm/netmiko, real jsonpatch.
Day 0: `deploy --provision` (full config_db + config reload, saved only once confirmed).
Day 2: `deploy` = checkpoint + apply-patch scoped to fabricgen's tables + post-check.
"""

from __future__ import annotations

import json
import os
import shlex
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest
from netmiko import ConnectHandler

from generator.checks.runner import run_checks
from generator.devices.sonic import SonicDriver
from generator.drift.command import drift_stdout, run_drift
from generator.intent.loader import load_intent
from generator.lab.control import LabDevice
from generator.render.output import render_files
from generator.render.sonic_managed import SonicManaged
from tests.deploy_cli import deploy_cli

pytestmark = pytest.mark.integration

CONFIRM_SECONDS = 30   # the intent's floor; the lab's clock runs TIME_SCALE times faster (lab up --time-scale)
TIME_SCALE = 1.5      # so the confirm timer expires after 20 s of wall time
YANG_DIR = Path(__file__).resolve().parents[2].parent / "shared" / "sonic-yang"
INTENT = textwrap.dedent("""\
    fabric: {name: sd}
    topology:
      kind: single-switch
      nodes: NODES
      gpus_per_node: 8
      rails: 2
      nic_speed: 400G
      switches:
        leaf: {model: SN5600}
      cables: {host_leaf: HOSTCABLE}
    switch_os: {name: sonic, version: "202411"}
    addressing: {management: 10.30.0.0/24, rails: 172.16.0.0/24, loopbacks: 10.255.0.0/24}
    deploy: {user: admin, confirm_timeout: 60, concurrency: 4}
    management:
      ntp: [10.30.0.5]
      dns: [10.30.0.53]
      syslog: [10.30.0.99]
      timezone: Europe/Berlin
    """)
# Tables a day-2 deploy must leave exactly as the switch holds them.
UNTOUCHED = ("MGMT_INTERFACE", "MGMT_PORT", "MGMT_VRF_CONFIG", "NTP", "NTP_SERVER", "SYSLOG_SERVER",
             "DNS_NAMESERVER", "FEATURE", "FLEX_COUNTER_TABLE", "AAA", "VERSIONS")


@dataclass
class Fabric:
    intent: Path
    lab: object                     # conftest.LabHandle
    name: str                       # the one switch
    release: str = "202411"         # switch_os.version, and the lab switch's own release

    @property
    def endpoints(self) -> str:
        return str(self.lab.directory / "endpoints.yml")

    def write(self, nodes: int = 4, host_cable: int = 3) -> str:
        text = (INTENT.replace("NODES", str(nodes)).replace("HOSTCABLE", str(host_cable))
                .replace('version: "202411"', f'version: "{self.release}"'))
        self.intent.write_text(text)
        return text

    def rendered(self) -> dict:
        text = self.intent.read_text()
        plan = run_checks(load_intent(self.intent)).plan
        return json.loads(render_files(plan, text)[f"switches/{self.name}/config_db.json"])

    def running(self) -> dict:
        device = self.lab.driver(self.name, "sonic_fabric")
        device.open()               # a fresh login: the switch is reachable at its address
        try:
            return json.loads(device.get_config(retrieve="running")["running"])
        finally:
            device.close()

    def shell(self, *commands: str) -> list[str]:
        """Type commands on the switch as an operator would."""
        conn = ConnectHandler(device_type="linux", host="127.0.0.1", port=self.lab.port(self.name),
                              username="admin", password=self.lab.password, ssh_strict=True,
                              system_host_keys=False, alt_host_keys=True, alt_key_file=str(self.lab.known_hosts),
                              allow_agent=False, use_keys=False, fast_cli=True)
        try:
            return [conn.send_command(c, expect_string=r"[$#]\s*$", read_timeout=15) for c in commands]
        finally:
            conn.disconnect()

    def put(self, remote_path: str, text: str) -> None:
        """Copy a file onto the switch (SFTP, as an operator's scp)."""
        device = self.lab.driver(self.name, "sonic_fabric")
        device.open()
        try:
            device._upload(text, remote_path)
        finally:
            device.close()

    def deploy(self, capsys, **kwargs) -> tuple[int, str, str]:
        done = deploy_cli(self.intent, endpoints=self.endpoints, yes=True, **kwargs)
        return done.returncode, done.stdout, done.stderr

    def drift(self, capsys) -> tuple[int, dict]:
        run = run_drift(str(self.intent), endpoints=self.endpoints, only="switches", fmt="json")
        return run.exit_code, json.loads(drift_stdout(run))


def make_fabric(tmp_path, lab_start, monkeypatch, release: str = "202411") -> Fabric:
    monkeypatch.setenv("FABRICGEN_BACKUP_DIR", str(tmp_path / "backups"))
    monkeypatch.setenv("FABRICGEN_CONFIRM_TIMEOUT", str(CONFIRM_SECONDS))
    monkeypatch.setenv("FABRICGEN_SSH_TIMEOUT", "5")
    monkeypatch.chdir(tmp_path)
    fab = Fabric(tmp_path / "fabric.yaml", None, "", release)
    fab.write()
    plan = run_checks(load_intent(fab.intent)).plan
    assert plan is not None
    sw = plan.switches[0]
    # the switch sits at its plan address, as ZTP left it (a DHCP reservation or the console)
    fab.lab = lab_start([LabDevice(sw.name, "sonic", release, mgmt_address=f"{sw.mgmt_ip}/24",
                                   mgmt_gateway="10.30.0.1")], username="admin", time_scale=TIME_SCALE)
    fab.name = sw.name
    return fab


@pytest.fixture
def fabric(tmp_path, lab_start, monkeypatch) -> Fabric:
    return make_fabric(tmp_path, lab_start, monkeypatch)


def yang_issues(config: dict) -> list[str]:
    try:
        from generator.render.sonic_yang import SonicYangUnavailable, YangValidator
        validator = YangValidator(YANG_DIR)
    except (ImportError, SonicYangUnavailable) as exc:          # pragma: no cover - CI installs both
        pytest.skip(f"SONiC YANG validation unavailable: {exc}")
    return [str(i) for i in validator.validate(config, "lab")]


def provision(fab: Fabric, capsys) -> dict:
    code, out, err = fab.deploy(capsys, provision=True)
    assert code == 0, out + err
    return fab.running()


def test_provisioning_a_factory_switch(fabric, capsys, monkeypatch):
    fab = fabric
    factory = fab.running()
    meta = factory["DEVICE_METADATA"]["localhost"]
    assert meta["hwsku"] == "ACS-SN5600" and meta["mac"], "the lab must boot like a real SN5600"
    # as a 202411 image prints it: FRR's config as a string beside the tables
    assert isinstance(json.loads(fab.shell("show runningconfiguration all")[0])["bgpraw"], str)
    assert "bgpraw" not in factory
    assert "fabricgen-confirm: command not found" in fab.shell("sudo fabricgen-confirm status")[0]

    # Day 2 on a factory switch: its SKU and routing mode can only change with a reload.
    code, out, err = fab.deploy(capsys)
    assert code == 1
    assert "refused before apply" in out and "hwsku 'ACS-SN5600' -> 'Mellanox-SN5600-O128'" in out
    assert "fabricgen deploy --provision" in out
    assert fab.running() == factory, "a refused deploy sends nothing"

    # An operator's session open during day 0: the reload moves eth0 into the mgmt VRF (off on the
    # factory image) and every session drops, the deploy's own included; the deploy logs in again.
    watcher = ConnectHandler(device_type="linux", host="127.0.0.1", port=fab.lab.port(fab.name), username="admin",
                             password=fab.lab.password, ssh_strict=True, system_host_keys=False, alt_host_keys=True,
                             alt_key_file=str(fab.lab.known_hosts), allow_agent=False, use_keys=False, fast_cli=True)
    reconnects: list[int] = []
    real_commit = SonicDriver.commit_config

    def counting_commit(self, message="", revert_in=None):
        real_commit(self, message, revert_in)
        reconnects.append(self.reconnects)

    with monkeypatch.context() as patched:
        patched.setattr(SonicDriver, "commit_config", counting_commit)
        running = provision(fab, capsys)
    assert not watcher.is_alive(), "the reload dropped the operator's session"
    assert "eth0 moves into VRF mgmt: eth0 restarts, dropping" in (fab.lab.directory / "lab.log").read_text()
    assert reconnects and reconnects[0] >= 1, "the deploy logged in again after the reload"
    assert "MGMT_VRF_CONFIG" not in factory and running["MGMT_VRF_CONFIG"] == {
        "vrf_global": {"mgmtVrfEnabled": "true"}}
    rendered = fab.rendered()
    managed = SonicManaged.of(rendered, management=True)
    assert managed.owned(running) == managed.owned(rendered)
    got = running["DEVICE_METADATA"]["localhost"]
    assert got["mac"] == meta["mac"], "the switch's own base MAC, never an invented one"
    assert got["hwsku"] == "Mellanox-SN5600-O128" and got["docker_routing_config_mode"] == "unified"
    assert running["MGMT_INTERFACE"] == rendered["MGMT_INTERFACE"]
    assert running["VERSIONS"] == factory["VERSIONS"]
    for table in ("AAA",):
        if table in factory:
            assert running[table] == factory[table], table
    assert yang_issues(running) == []
    # saved: the startup file is the provisioned config, and the confirm timer is gone
    startup = json.loads(fab.shell("cat /etc/sonic/config_db.json")[0])
    assert managed.owned(startup) == managed.owned(rendered)
    assert fab.shell("systemctl is-active fabricgen-confirm.timer")[0].strip() == "inactive"
    # pushed with a checkpoint of the factory config (issue 12: checkpoint, reload, post-check)
    checkpoints = json.loads(fab.shell("sudo config list-checkpoints")[0])
    assert any(c.startswith("fabricgen-") for c in checkpoints), checkpoints

    code, doc = fab.drift(capsys)
    assert code == 0, doc
    code, out, _ = fab.deploy(capsys)
    assert code == 0 and "0 to change, 1 unchanged" in out


# Every program the deploy and drift run on a SONiC switch: stock sonic-utilities, systemd, coreutils.
# ":" is bash's no-op builtin (POSIX special built-in): the driver's shell sync at login (ssh.py _sync)
STOCK = {"config", "sonic-cfggen", "systemd-run", "systemctl", "sha256sum", "show", "cat", ":"}


def test_only_stock_commands_run_on_the_switch(fabric, capsys, monkeypatch):
    fab = fabric
    sent: list[str] = []
    real_run = SonicDriver._run

    def recording_run(self, command, read_timeout=None):
        sent.append(command)
        return real_run(self, command, read_timeout)

    monkeypatch.setattr(SonicDriver, "_run", recording_run)
    provision(fab, capsys)
    fab.write(nodes=5)
    code, out, err = fab.deploy(capsys)
    assert code == 0, out + err
    code, doc = fab.drift(capsys)
    assert code == 0, doc
    programs = set()
    lists = [command for command in sent if " && " in command]
    assert lists, "day 0 starts checkpoint, confirm timer and reload in one `&&` list"
    for command in (step for line in sent for step in line.split(" && ")):
        argv = shlex.split(command)
        argv = argv[1:] if argv[0] == "sudo" else argv
        programs.add(argv[0])
        if argv[0] == "systemd-run":          # what the transient unit runs is stock too
            assert argv[argv.index("--description") + 2] == "config", command
    assert programs <= STOCK, programs - STOCK
    assert {"systemd-run", "systemctl"} <= programs
    assert not any("fabricgen-confirm start" in c or c.startswith("sudo fabricgen") for c in sent)


def test_a_taken_confirm_unit_fails_the_deploy_before_any_change(fabric, capsys):
    fab = fabric
    before = provision(fab, capsys)
    # A revert that failed earlier leaves fabricgen-confirm.service loaded as `failed`: systemd
    # refuses the name until someone looks at it and runs reset-failed.
    fab.shell("sudo systemd-run --unit fabricgen-confirm config rollback fabricgen-gone")
    fab.write(nodes=5)
    code, out, err = fab.deploy(capsys)
    assert code == 1, out + err
    line = next(ln for ln in out.splitlines() if "failed:" in ln)
    assert "fabricgen-confirm.timer cannot be started" in line and "reset-failed fabricgen-confirm.service" in line
    assert "Unit fabricgen-confirm.service was already loaded or has a fragment file." in line
    assert fab.running() == before, "the timer is armed before the patch: nothing was applied"
    assert fab.shell("systemctl is-active fabricgen-confirm.timer")[0].strip() == "inactive"
    fab.shell("sudo systemctl reset-failed fabricgen-confirm.service")
    code, out, err = fab.deploy(capsys)
    assert code == 0, out + err


def test_day2_node_added_is_a_scoped_patch(fabric, capsys):
    fab = fabric
    before = provision(fab, capsys)
    fab.write(nodes=5)
    code, out, err = fab.deploy(capsys, dry_run=True, show_diff=True)
    assert code == 0, out + err
    # old -> new as drift reads it (issue 36, item 5): the new node's port added, nothing of MGMT_* or FEATURE
    assert "\n  + INTERFACE" in out and "MGMT_" not in out and "FEATURE" not in out
    code, out, err = fab.deploy(capsys)
    assert code == 0, out + err
    running = fab.running()
    managed = SonicManaged.of(fab.rendered(), True)
    assert managed.owned(running) == managed.owned(fab.rendered())
    for table in UNTOUCHED:
        assert running.get(table) == before.get(table), table
    assert running["DEVICE_METADATA"]["localhost"]["mac"] == before["DEVICE_METADATA"]["localhost"]["mac"]
    assert yang_issues(running) == []
    checkpoints = json.loads(fab.shell("sudo config list-checkpoints")[0])
    assert any(c.startswith("fabricgen-") for c in checkpoints)
    code, doc = fab.drift(capsys)
    assert code == 0, doc


def test_live_buffer_changes_are_refused_with_the_provision_advice(fabric, capsys):
    fab = fabric
    provisioned = provision(fab, capsys)
    # A longer host cable crosses into the SKU table's next row: a new lossless profile, which
    # GCU does not add live.
    fab.write(host_cable=20)
    code, out, _ = fab.deploy(capsys)
    assert code == 1
    assert "BUFFER_PROFILE" in out and "fabricgen deploy --provision" in out
    assert fab.running() == provisioned

    # Someone resized a pool by hand (config reload of an edited file): restoring it live is a
    # pool change outside the allow-list.
    fab.write()
    edited = json.loads(json.dumps(provisioned))
    pool = edited["BUFFER_POOL"]["egress_lossless_pool"]
    pool["size"] = str(int(pool["size"]) - 1024)
    fab.put("/tmp/edited.json", json.dumps(edited))
    fab.shell("sudo config reload -y -f /tmp/edited.json")
    assert fab.running()["BUFFER_POOL"]["egress_lossless_pool"] == pool
    code, out, _ = fab.deploy(capsys)
    assert code == 1
    assert "BUFFER_POOL/egress_lossless_pool/size" in out and "fabricgen deploy --provision" in out
    # ... which provisioning puts right
    running = provision(fab, capsys)
    assert running["BUFFER_POOL"] == fab.rendered()["BUFFER_POOL"]


@pytest.mark.parametrize("release", ["202411", "202511"])
def test_a_pool_size_change_follows_the_release_of_gcu(tmp_path, lab_start, monkeypatch, capsys, release):
    """Restoring the lossless pool's size is a live change on 202411 and none on 202511 (sonic-utilities
    gcu_field_operation_validators.conf.json of each branch; generator/data/sonic_gcu_releases.yaml):
    the deploy judges it by the intent's release and refuses it on 202511 before anything changes."""
    fab = make_fabric(tmp_path, lab_start, monkeypatch, release)
    provisioned = provision(fab, capsys)
    # Someone resized the pool by hand (config reload of an edited file).
    edited = json.loads(json.dumps(provisioned))
    pool = edited["BUFFER_POOL"]["ingress_lossless_pool"]
    pool["size"] = str(int(pool["size"]) - 1024)
    fab.put("/tmp/edited.json", json.dumps(edited))
    fab.shell("sudo config reload -y -f /tmp/edited.json")
    drifted = fab.running()
    assert drifted["BUFFER_POOL"]["ingress_lossless_pool"] == pool
    wanted = fab.rendered()["BUFFER_POOL"]["ingress_lossless_pool"]["size"]

    code, out, err = fab.deploy(capsys)
    if release == "202411":
        assert code == 0, out + err
        assert fab.running()["BUFFER_POOL"]["ingress_lossless_pool"]["size"] == wanted
        return
    assert code == 1, out + err
    assert "refused before apply" in out and "fabricgen deploy --provision" in out
    assert ("GCU on SONiC 202511 allows no BUFFER_POOL change on Spectrum-4: "
            "BUFFER_POOL/ingress_lossless_pool/size") in out
    assert fab.running() == drifted, "a refused deploy sends nothing"
    # The switch's own GCU refuses the same change: the guard predicted it, it did not invent it.
    fab.put("/tmp/pool.json", json.dumps(
        [{"op": "replace", "path": "/BUFFER_POOL/ingress_lossless_pool/size", "value": wanted}]))
    (answer,) = fab.shell("sudo config apply-patch /tmp/pool.json")
    assert "Modification of BUFFER_POOL table is illegal" in answer, answer
    assert fab.running() == drifted


def test_failed_post_check_rolls_the_patch_back(fabric, capsys, monkeypatch):
    fab = fabric
    before = provision(fab, capsys)
    fab.write(nodes=5)
    real_commit = SonicDriver.commit_config

    def commit_then_meddle(self, message="", revert_in=None):
        real_commit(self, message, revert_in)
        # Between our commit and the post-check, another session changes a port we own.
        port = sorted(before["PORT"])[0]
        patch = [{"op": "replace", "path": f"/PORT/{port}/description", "value": "meddled"}]
        fab.put("/tmp/meddle.json", json.dumps(patch))
        fab.shell("sudo config apply-patch /tmp/meddle.json")

    monkeypatch.setattr(SonicDriver, "commit_config", commit_then_meddle)
    code, out, err = fab.deploy(capsys)
    assert code == 1, out + err
    assert "post-check after the commit" in out and "rolled back" in out
    running = fab.running()
    managed = SonicManaged.of(fab.rendered(), True)
    assert managed.owned(running) == managed.owned(before)
    assert fab.shell("systemctl is-active fabricgen-confirm.timer")[0].strip() == "inactive"


def test_failed_provisioning_reloads_the_saved_config(fabric, capsys, monkeypatch):
    """The undo runs seconds after the day-0 reload restarted swss: `config reload -y -f` of the
    saved startup (issue 32); plain `config reload -y` is refused there for 120 s (sonic-utilities
    _swss_ready), as the last line shows."""
    fab = fabric
    factory = fab.running()
    real_commit = SonicDriver.commit_config

    def commit_then_meddle(self, message="", revert_in=None):
        real_commit(self, message, revert_in)
        fab.put("/tmp/m.json", json.dumps([{"op": "add", "path": "/NTP_SERVER/10.30.0.66", "value": {}}]))
        fab.shell("sudo config apply-patch /tmp/m.json")

    monkeypatch.setattr(SonicDriver, "commit_config", commit_then_meddle)
    code, out, err = fab.deploy(capsys, provision=True)
    assert code == 1, out + err
    assert "rolled back" in out
    assert fab.running() == factory, "the untouched startup file was reloaded"
    refused = fab.shell("sudo config reload -y; echo status=$?")[0]
    assert "SwSS container is not ready. Retry later or use -f to avoid system checks" in refused
    assert "status=1" in refused


def test_provision_is_refused_for_cumulus(tmp_path, capsys):
    intent = tmp_path / "c.yaml"
    intent.write_text(INTENT.replace("NODES", "4").replace("HOSTCABLE", "3")
                      .replace('{name: sonic, version: "202411"}', '{name: cumulus, version: "5.11"}')
                      .replace("SN5600", "SN4700").replace("deploy: {user: admin", "deploy: {user: cumulus"))
    done = deploy_cli(intent, yes=True, provision=True)
    assert done.returncode == 1 and "--provision is for switch_os sonic" in done.stderr
    assert not (tmp_path / "backups").exists() or not os.listdir(tmp_path / "backups")


def test_day0_on_sonic_is_proven_from_config_db_and_frr(fabric, capsys):
    """`--day0` on SONiC: a factory switch (its t1 preset ports up, no address, no BGP) proves day 0;
    once provisioned it routes (CONFIG_DB's BGP tables) and --day0 is
    refused naming it, with nothing pushed (issue 32)."""
    fab = fabric
    code, out, err = fab.deploy(capsys, provision=True, day0=True, dry_run=True)
    assert code == 0, out + err
    assert "day 0 (--day0): no switch shows traffic evidence" in out
    provision(fab, capsys)
    before = fab.running()
    code, out, err = fab.deploy(capsys, day0=True)
    assert code == 1, out + err
    [line] = [ln for ln in err.splitlines() if ": not day 0: " in ln]
    # a single-switch fabric has BGP globals and no peer: bgpd's summary shows none
    assert line == f"error: {fab.name}: not day 0: running config has BGP_GLOBALS", line
    assert "--day0 refused: 1 of 1 switch(es)" in err
    assert fab.running() == before


def test_day0_builds_each_file_once_unless_the_switch_changed_before_its_wave(fabric, capsys, monkeypatch):
    """The wave reads the running config_db again; when it is the one the backup + diff phase read,
    the day-0 file and its diff are those of that phase (issue 32: each rebuild cost a wave of 32 a
    few tenths of a second of CPU). When an operator changed the switch in between (here a FEATURE
    row, whose switch value wins in the file), the wave builds and pushes a new file from the fresh read."""
    from generator.deploy import rollout, rollout_plan
    from generator.devices import sonic

    built, diffed = [], []
    real_build, real_diff = rollout.provision_config, sonic.config_db_diff
    monkeypatch.setattr(rollout, "provision_config", lambda *a, **k: built.append(1) or real_build(*a, **k))
    monkeypatch.setattr(sonic, "config_db_diff", lambda *a, **k: diffed.append(1) or real_diff(*a, **k))
    code, out, err = fabric.deploy(capsys, provision=True, day0=True)
    assert code == 0, out + err
    assert (len(built), len(diffed)) == (1, 1), "one build and one diff for the phase and the wave"
    built.clear(), diffed.clear()

    provisioned = fabric.running()
    feature = sorted(provisioned["FEATURE"])[0]
    state = "disabled" if provisioned["FEATURE"][feature].get("state") != "disabled" else "enabled"
    real_waves = rollout_plan.plan_waves
    fabric.write(nodes=5)                 # a change to push again: one more node's ports

    def operator_between_phases(*args, **kwargs):
        # after every switch was read and diffed, before its wave: a change an operator makes
        fabric.put("/tmp/operator.json", json.dumps({"FEATURE": {feature: {"state": state}}}))
        fabric.shell("sudo config load -y /tmp/operator.json")
        return real_waves(*args, **kwargs)

    with monkeypatch.context() as between:
        between.setattr(rollout_plan, "plan_waves", operator_between_phases)
        code, out, err = fabric.deploy(capsys, provision=True)
    assert code == 0, out + err
    assert (len(built), len(diffed)) == (2, 2), "the changed switch's file was built and diffed again"
    assert fabric.running()["FEATURE"][feature]["state"] == state, "the pushed file has the operator's row"
