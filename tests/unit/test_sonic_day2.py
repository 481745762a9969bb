"""SONiC day 2 (scoped apply-patch) and day 0 (provisioning) on the config_db level: what
fabricgen owns (generator/render/sonic_managed.py) and what a live switch refuses
(generator/deploy/sonic_guard.py). The switch side here is a hand-written running config_db
shaped like a provisioned SN5600 (DEVICE_STATE.md); the lab tests run the same flows over SSH."""

from __future__ import annotations

import copy
import json
import textwrap

import jsonpatch
import pytest

from generator.checks.runner import run_checks
from generator.deploy.sonic_guard import PROVISION_ADVICE, check_patch, provision_refusal, refusal_line
from generator.intent.loader import load_intent
from generator.render.sonic import switch_config
from generator.render.sonic_managed import ProvisionError, SonicManaged, provision_config

INTENT = textwrap.dedent("""\
    fabric: {name: s2}
    topology:
      kind: single-switch
      nodes: NODES
      gpus_per_node: 8
      rails: 2
      nic_speed: 400G
      switches:
        leaf: {model: SN5600}
      cables: {host_leaf: 3}
    switch_os: {name: sonic, version: "202411"}
    addressing: {management: 10.30.0.0/24, rails: 172.16.0.0/24, loopbacks: 10.255.0.0/24}
    deploy: {user: admin}
    """)
MANAGEMENT = textwrap.dedent("""\
    management:
      ntp: [10.30.0.5]
      dns: [10.30.0.53]
      syslog: [10.30.0.99]
      timezone: Europe/Berlin
    """)
MAC = "1c:34:da:5a:00:01"


def rendered(tmp_path, nodes: int = 4, management: bool = True) -> dict:
    path = tmp_path / f"fabric-{nodes}-{management}.yaml"
    path.write_text(INTENT.replace("NODES", str(nodes)) + (MANAGEMENT if management else ""))
    checked = run_checks(load_intent(path))
    assert checked.plan is not None, [f.one_line() for f in checked.errors]
    return switch_config(checked.plan, checked.plan.switches[0])


def device_extras() -> dict:
    """What a switch holds that fabricgen never renders: its MAC, AAA, VERSIONS, its own FEATURE rows."""
    return {
        "AAA": {"authentication": {"login": "local"}},
        "VERSIONS": {"DATABASE": {"VERSION": "version_4_0_3"}},
        "FEATURE": {"lldp": {"state": "enabled", "auto_restart": "enabled", "delayed": "True",
                             "high_mem_alert": "disabled", "has_global_scope": "True"},
                    "snmp": {"state": "enabled", "auto_restart": "enabled", "delayed": "True"}},
    }


def provisioned(config: dict) -> dict:
    """A switch that took `config` at day 0: its MAC and its own tables merged in."""
    running = copy.deepcopy(config)
    running["DEVICE_METADATA"]["localhost"]["mac"] = MAC
    for table, rows in device_extras().items():
        running[table] = {**running.get(table, {}), **rows}
    return running


def day2_ops(running: dict, new: dict, management: bool = True) -> list[dict]:
    target = SonicManaged.of(new, management).target(new, running)
    return list(jsonpatch.make_patch(running, target))


def touched_tables(ops: list[dict]) -> set[str]:
    tables = set()
    for op in ops:
        for key in ("path", "from"):
            if key in op:
                tables.add(op[key].split("/")[1])
    return tables


def test_a_node_added_is_a_patch_of_fabricgen_tables_only(tmp_path):
    running = provisioned(rendered(tmp_path, nodes=4))
    new = rendered(tmp_path, nodes=5)
    ops = day2_ops(running, new)
    tables = touched_tables(ops)
    assert tables, "a new node must change the switch"
    # the new node's two host ports: port up + description, /31, announced network, QoS, buffers
    assert {"PORT", "INTERFACE", "BGP_GLOBALS_AF_NETWORK", "PORT_QOS_MAP", "QUEUE", "BUFFER_PG",
            "BUFFER_QUEUE", "CABLE_LENGTH"} <= tables
    untouched = {"MGMT_INTERFACE", "MGMT_PORT", "MGMT_VRF_CONFIG", "NTP", "NTP_SERVER", "SYSLOG_SERVER",
                 "DNS_NAMESERVER", "FEATURE", "FLEX_COUNTER_TABLE", "AAA", "VERSIONS", "DEVICE_METADATA"}
    assert not tables & untouched
    assert check_patch(ops, running, "202411") == [], "adding a node is a live change"
    patched = jsonpatch.apply_patch(running, ops)
    managed = SonicManaged.of(new, True)
    assert managed.owned(patched) == managed.owned(new)
    for table in untouched & set(running):
        assert patched[table] == running[table], table


def test_the_owned_view_is_a_copy_unless_shared(tmp_path):
    config = provisioned(rendered(tmp_path))
    managed = SonicManaged.of(config, True)
    before = copy.deepcopy(config)
    view, shared = managed.owned(config), managed.owned(config, shared=True)
    assert view == shared and "PORT" in view and "BGP_GLOBALS" in view
    port = next(iter(view["PORT"]))
    view["PORT"][port]["mtu"] = "1"
    view["BGP_GLOBALS"].clear()
    assert config == before, "the post-check's and drift's view is theirs to change"
    assert shared["BGP_GLOBALS"]["default"] is config["BGP_GLOBALS"]["default"]     # shared: no copy made for a comparison
    assert config == before


def test_nothing_to_do_is_an_empty_patch(tmp_path):
    config = rendered(tmp_path)
    assert day2_ops(provisioned(config), config) == []


def test_without_management_the_switch_keeps_its_own_ntp_and_eth0(tmp_path):
    running = provisioned(rendered(tmp_path, management=True))
    running["MGMT_INTERFACE"] = {"eth0|10.30.0.77/24": {"gwaddr": "10.30.0.1"}}   # set on the console
    new = rendered(tmp_path, nodes=4, management=False)
    ops = day2_ops(running, new, management=False)
    assert not touched_tables(ops) & {"MGMT_INTERFACE", "NTP_SERVER", "SYSLOG_SERVER", "DNS_NAMESERVER", "NTP"}


def test_a_factory_switch_needs_provisioning(tmp_path):
    """A switch fresh from ZTP runs the platform's default SKU and bgpcfgd: both are reload-only."""
    new = rendered(tmp_path)
    running = provisioned(new)
    meta = running["DEVICE_METADATA"]["localhost"]
    meta.update(hwsku="ACS-SN5600", docker_routing_config_mode="separated")
    del meta["frr_mgmt_framework_config"]
    refusals = check_patch(day2_ops(running, new), running, "202411")
    assert refusals == [
        "DEVICE_METADATA fields that take effect only after a reload: docker_routing_config_mode 'separated' -> "
        "'unified', frr_mgmt_framework_config None -> 'true', hwsku 'ACS-SN5600' -> 'Mellanox-SN5600-O128'"]
    line = refusal_line(refusals)
    assert line.startswith(PROVISION_ADVICE) and "--provision" in line


RELEASES = ("202311", "202405", "202411", "202505", "202511")
ALL = frozenset(RELEASES)
TO_202505 = frozenset(RELEASES[:4])
ONLY_202511 = frozenset({"202511"})
NONE: frozenset = frozenset()
PG = "pg_lossless_400000_5m_profile"


# Which releases take each change live on the provisioned SN5600 (Mellanox-SN5600-O128: spc4).
# Sources, sonic-utilities generic_config_updater/ per branch (commits in
# generator/data/sonic_gcu_releases.yaml): 202311..202411 the list DEVICE_STATE.md records;
# 202505 WRED_PROFILE by field name whatever the profile (#3934); 202511 no BUFFER_POOL field
# (#4226), WRED_PROFILE unchecked, whole BUFFER_PROFILE rows and fields of any profile (#4087, #4585).
@pytest.mark.parametrize(("change", "releases"), [
    (lambda c: c["BUFFER_POOL"]["egress_lossless_pool"].update(size="1000"), NONE),
    (lambda c: c["BUFFER_POOL"]["ingress_lossless_pool"].update(size="1000"), TO_202505),
    (lambda c: c["BUFFER_POOL"].pop("egress_lossless_pool"), NONE),
    (lambda c: c["BUFFER_PROFILE"][PG].update(xoff="1024"), ALL),
    (lambda c: c["BUFFER_PROFILE"][PG].update(size="1024"), NONE),
    (lambda c: c["BUFFER_PROFILE"].update(pg_lossless_400000_300m_profile={
        "pool": "ingress_lossless_pool", "size": "1", "xon": "1", "xoff": "1", "dynamic_th": "0"}), ONLY_202511),
    (lambda c: c["BUFFER_PROFILE"]["egress_lossless_profile"].update(dynamic_th="5"), ONLY_202511),
    (lambda c: c["WRED_PROFILE"]["AZURE_LOSSLESS"].update(green_min_threshold="100000"), ALL),
    (lambda c: c["WRED_PROFILE"]["AZURE_LOSSLESS"].update(ecn="ecn_none"), ONLY_202511),
    (lambda c: c["PFC_WD"][next(p for p in c["PFC_WD"] if p != "GLOBAL")].update(detection_time="400"), ALL),
    (lambda c: c["PFC_WD"]["GLOBAL"].update(POLL_INTERVAL="400"), ALL),
    (lambda c: c["PORT"][next(iter(c["PORT"]))].update(lanes="0,1"), NONE),
    (lambda c: c["PORT"][next(iter(c["PORT"]))].update(description="moved"), ALL),
    (lambda c: c.update(MGMT_INTERFACE={"eth0|10.30.0.9/24": {"gwaddr": "10.30.0.1"}}), NONE),
    (lambda c: c.update(NTP_SERVER={"10.30.0.6": {}}), ALL),
])
def test_live_change_allow_list_per_release(tmp_path, change, releases):
    """GCU's allow-list of each release for Spectrum-4, and the reload-only parts."""
    running = provisioned(rendered(tmp_path))
    new = copy.deepcopy(rendered(tmp_path))
    change(new)
    ops = day2_ops(running, new)
    assert ops
    for release in RELEASES:
        refusals = check_patch(ops, running, release)
        assert (refusals == []) is (release in releases), (release, ops, refusals)
        assert all(release in line for line in refusals if "GCU" in line), refusals
        # The lab's GCU (generator/lab/sonic_gcu.py, written from sonic-utilities' validators) judges
        # the buffer/WRED/PFC-WD cases the same way on a switch of that release. MGMT_* and PORT
        # lanes differ by design: GCU would take them, fabricgen refuses them as day-0 material.
        if touched_tables(ops) <= {"BUFFER_POOL", "BUFFER_PROFILE", "WRED_PROFILE", "PFC_WD"}:
            from generator.lab.sonic_gcu import GcuError, validate_field_operation

            try:
                validate_field_operation(running, jsonpatch.apply_patch(running, ops), build_version=release)
                gcu_allows = True
            except GcuError:
                gcu_allows = False
            assert gcu_allows is (release in releases), (release, ops)


def _pool_size(release: str, hwsku: str = "Mellanox-SN5600-O128", pool: str = "ingress_lossless_pool") -> list[str]:
    running = {"DEVICE_METADATA": {"localhost": {"hwsku": hwsku}},
               "BUFFER_POOL": {pool: {"size": "1000", "type": "ingress", "mode": "dynamic"}}}
    return check_patch([{"op": "replace", "path": f"/BUFFER_POOL/{pool}/size", "value": "2000"}], running, release)


def test_refusals_name_the_release_and_the_asic():
    # 202411 allows `replace` of the lossless pool size on Spectrum-4, 202511 no BUFFER_POOL field at all
    assert _pool_size("202411") == []
    assert _pool_size("202511") == [
        "GCU on SONiC 202511 allows no BUFFER_POOL change on Spectrum-4: BUFFER_POOL/ingress_lossless_pool/size"]
    line = refusal_line(_pool_size("202511"))
    assert line.startswith(PROVISION_ADVICE) and "SONiC 202511" in line
    assert _pool_size("202411", pool="egress_lossless_pool") == [
        "BUFFER_POOL changes outside GCU's allow-list on SONiC 202411 (Spectrum-4): "
        "BUFFER_POOL/egress_lossless_pool/size"]
    # SN5640 (Spectrum-5): 202411's validator reads spc1..spc4 only; 202505 lists spc5 from 20241200
    assert _pool_size("202411", "ACS-SN5640") == [
        "GCU on SONiC 202411 allows no BUFFER_POOL change on hwsku 'ACS-SN5640' (no Spectrum ASIC in its list): "
        "BUFFER_POOL/ingress_lossless_pool/size"]
    assert _pool_size("202505", "ACS-SN5640") == []
    # SN2201 is in no release's list: GCU refuses every buffer and PFC watchdog change there
    assert all("hwsku 'ACS-SN2201'" in _pool_size(r, "ACS-SN2201")[0] for r in RELEASES)


def test_an_unknown_release_is_refused_for_gcu_tables_only():
    """A release the table lacks (newer or older) is not guessed from a neighbour's list."""
    for release in ("202605", "202305"):
        (line,) = _pool_size(release)
        assert line.startswith(f"fabricgen has no GCU allow-list for SONiC {release} (it knows 202311, "
                               "202405, 202411, 202505, 202511;"), line
    ntp = [{"op": "add", "path": "/NTP_SERVER/10.30.0.6", "value": {}}]
    assert check_patch(ntp, {}, "202605") == []


def test_wred_thresholds_of_any_profile_from_202505():
    """202505's wred_profile_config_update_validator matches green_* by the last path part, so a
    profile other than AZURE_LOSSLESS may be tuned; 202311..202411 list azure_lossless/green_* only;
    202511 does not field-check WRED_PROFILE."""
    running = {"DEVICE_METADATA": {"localhost": {"hwsku": "ACS-SN5600"}},
               "WRED_PROFILE": {"WRED_LOSSY": {"green_min_threshold": "1", "ecn": "ecn_all"}}}
    tune = [{"op": "replace", "path": "/WRED_PROFILE/WRED_LOSSY/green_min_threshold", "value": "2"}]
    ecn = [{"op": "replace", "path": "/WRED_PROFILE/WRED_LOSSY/ecn", "value": "ecn_none"}]
    assert [r for r in RELEASES if check_patch(tune, running, r) == []] == ["202505", "202511"]
    assert [r for r in RELEASES if check_patch(ecn, running, r) == []] == ["202511"]
    assert check_patch(tune, running, "202411") == [
        "WRED_PROFILE changes outside GCU's allow-list on SONiC 202411 (Spectrum-4): "
        "WRED_PROFILE/WRED_LOSSY/green_min_threshold"]


@pytest.mark.parametrize("release", RELEASES)
def test_pfc_watchdog_rows_follow_gcu_field_matching(release):
    """GCU drops path parts with digits (the port) and matches the rest, lowercased; a row added
    with only allowed fields passes, a whole table added does not (field_operation_validators.py)."""
    meta = {"DEVICE_METADATA": {"localhost": {"hwsku": "ACS-SN5600"}}}
    running = {"PFC_WD": {"GLOBAL": {"POLL_INTERVAL": "200"}}, **meta}
    row = {"op": "add", "path": "/PFC_WD/Ethernet8",
           "value": {"action": "drop", "detection_time": "200", "restoration_time": "200"}}
    assert check_patch([row], running, release) == []
    assert check_patch([{"op": "remove", "path": "/PFC_WD/Ethernet8"}], running, release) == []
    table = {"op": "add", "path": "/PFC_WD", "value": {"GLOBAL": {"POLL_INTERVAL": "200"}}}
    assert check_patch([table], meta, release) != []


def test_moves_are_judged_as_the_remove_and_add_they_are():
    running = {"BUFFER_PROFILE": {"a": {"size": "1"}}, "DEVICE_METADATA": {"localhost": {"hwsku": "ACS-SN5600"}}}
    move = {"op": "move", "from": "/BUFFER_PROFILE/a", "path": "/BUFFER_PROFILE/b"}
    (line,) = check_patch([move], running, "202411")
    assert "BUFFER_PROFILE/a (remove), BUFFER_PROFILE/b (add)" in line
    assert check_patch([move], running, "202511") == [], "202511 adds and removes whole profiles live"


def test_provisioning_keeps_what_only_the_device_knows(tmp_path):
    config = rendered(tmp_path)
    assert "mac" not in config["DEVICE_METADATA"]["localhost"], "a MAC is never invented"
    device = {
        "DEVICE_METADATA": {"localhost": {"hostname": "sonic", "hwsku": "ACS-SN5600", "mac": MAC,
                                          "platform": "x86_64-nvidia_sn5600-r0", "synchronous_mode": "enable"}},
        "MGMT_INTERFACE": {"eth0|192.0.2.10/24": {"gwaddr": "192.0.2.1"}},
        "BGP_NEIGHBOR": {"10.0.0.1": {"asn": "65999"}},         # a ZTP leftover fabricgen owns
        "NTP_SERVER": {"192.0.2.123": {}},
        **device_extras(),
    }
    merged, notes = provision_config(config, device, management=True)
    meta = merged["DEVICE_METADATA"]["localhost"]
    assert meta["mac"] == MAC and meta["hwsku"] == "Mellanox-SN5600-O128" and meta["synchronous_mode"] == "enable"
    assert merged["VERSIONS"] == device["VERSIONS"] and merged["AAA"] == device["AAA"]
    assert merged["FEATURE"]["lldp"] == device["FEATURE"]["lldp"], "the switch's own FEATURE rows win"
    assert merged["FEATURE"]["bgp"] == config["FEATURE"]["bgp"], "rows it lacks are added"
    assert "BGP_NEIGHBOR" not in merged and merged["NTP_SERVER"] == config["NTP_SERVER"]
    assert merged["MGMT_INTERFACE"] == config["MGMT_INTERFACE"]
    assert any("FEATURE" in n for n in notes) and any("AAA" in n for n in notes)
    without, _ = provision_config(rendered(tmp_path, management=False), device, management=False)
    assert without["NTP_SERVER"] == device["NTP_SERVER"], "without management: the switch's NTP stays"
    # DHCP (no MGMT_INTERFACE) may become the plan's static address; a static one may not move
    assert provision_refusal(config, {k: v for k, v in device.items() if k != "MGMT_INTERFACE"}) is None
    planned = next(iter(config["MGMT_INTERFACE"])).split("|")[1]
    assert f"move eth0 from 192.0.2.10/24 to {planned}" in provision_refusal(config, device)


def test_provisioning_refuses_another_platform_or_no_mac(tmp_path):
    config = rendered(tmp_path)
    wrong = {"DEVICE_METADATA": {"localhost": {"mac": MAC, "platform": "x86_64-mlnx_msn4700-r0"}}}
    with pytest.raises(ProvisionError, match="platform x86_64-mlnx_msn4700-r0"):
        provision_config(config, wrong, management=True)
    with pytest.raises(ProvisionError, match="no base MAC"):
        provision_config(config, {"DEVICE_METADATA": {"localhost": {}}}, management=True)


def test_rendered_config_db_is_json_stable(tmp_path):
    assert json.dumps(rendered(tmp_path), sort_keys=True) == json.dumps(rendered(tmp_path), sort_keys=True)


def test_provisioned_and_patched_configs_satisfy_sonic_yang(tmp_path):
    """Every config a switch ends up with (day 0 merged with the device, day 2 patched) is what
    GCU's own YANG validation would accept (../shared/sonic-yang, libyang)."""
    from tests.unit.test_sonic_yang import YANG_DIR, _skip_reason

    if _skip_reason():
        pytest.skip(_skip_reason())
    from generator.render.sonic_yang import YangValidator

    validator = YangValidator(YANG_DIR)
    day0, _ = provision_config(rendered(tmp_path, nodes=4), {
        "DEVICE_METADATA": {"localhost": {"mac": MAC, "platform": "x86_64-nvidia_sn5600-r0"}},
        **device_extras()}, management=True)
    assert [str(i) for i in validator.validate(day0, "day0")] == []
    ops = day2_ops(day0, rendered(tmp_path, nodes=5))
    patched = jsonpatch.apply_patch(day0, ops)
    assert [str(i) for i in validator.validate(patched, "day2")] == []
