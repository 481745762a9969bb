"""The lab SONiC's generic config updater rules and factory CONFIG_DB, without SSH.

Expected outcomes follow sonic-utilities generic_config_updater on the switch's release branch
(commits in generator/data/sonic_gcu_releases.yaml); the fixture switch runs 202411, whose
rdma_config_update_validator drops path elements that contain a digit, lower-cases the rest and
needs an exact match in gcu_field_operation_validators.conf.json; validate_field_operation judges
jsonpatch.JsonPatch.from_diff(running, target), not the patch as written.
"""

from __future__ import annotations

import copy
import re
from pathlib import Path

import jinja2
import pytest

from generator.lab import sonic_factory, sonic_gcu
from generator.lab.device import CommandError
from generator.lab.factory import Management
from generator.lab.sonic import _render_var
from generator.lab.sonic_gcu import GcuError

YANG_DIR = (Path(__file__).resolve().parents[2] / ".." / "shared" / "sonic-yang").resolve()
STATIC = Management("10.30.0.11/24", "10.30.0.1", "static")
DHCP = Management("192.0.2.10/24", "192.0.2.1", "dhcp")
PG = "pg_lossless_400000_5m_profile"


def op(kind: str, path: str, value=None) -> dict:
    return {"op": kind, "path": path} | ({} if value is None else {"value": value})


@pytest.fixture
def running() -> dict:
    """A factory SN5600 with the lossless buffer tables a provisioned fabric switch carries."""
    config = sonic_factory.factory_config_db("SN5600", "leaf01", "202411", STATIC)
    config["BUFFER_POOL"] = {
        "ingress_lossless_pool": {"size": "60817392", "type": "ingress", "mode": "dynamic", "xoff": "4194304"},
        "egress_lossless_pool": {"size": "60817392", "type": "egress", "mode": "dynamic"},
        "egress_lossy_pool": {"size": "50270208", "type": "egress", "mode": "dynamic"}}
    config["BUFFER_PROFILE"] = {
        PG: {"pool": "ingress_lossless_pool", "size": "250880", "xon": "19456", "xoff": "231424", "dynamic_th": "0"},
        "egress_lossless_profile": {"pool": "egress_lossless_pool", "size": "0", "dynamic_th": "7"}}
    config["WRED_PROFILE"] = {"AZURE_LOSSLESS": {"wred_green_enable": "true", "ecn": "ecn_all",
                                                 "green_min_threshold": "150000", "green_max_threshold": "1500000",
                                                 "green_drop_probability": "5"}}
    config["PFC_WD"] = {"GLOBAL": {"POLL_INTERVAL": "200"}}
    return config


def apply(running: dict, *ops: dict, version: str = "202411") -> dict:
    return sonic_gcu.apply(running, list(ops), build_version=version)


# --- how GCU names the field of an operation --------------------------------------------
@pytest.mark.parametrize(("element", "fields"), [
    (op("replace", "/PFC_WD/Ethernet112/action", "drop"), ["action"]),
    (op("replace", f"/BUFFER_PROFILE/{PG}/xoff", "1"), ["xoff"]),
    # no digit in the profile name: it stays in the field, which then matches nothing (2024 rules)
    (op("replace", "/BUFFER_PROFILE/egress_lossless_profile/dynamic_th", "1"), ["egress_lossless_profile/dynamic_th"]),
    (op("replace", "/WRED_PROFILE/AZURE_LOSSLESS/green_min_threshold", "1"), ["azure_lossless/green_min_threshold"]),
    (op("add", "/PFC_WD/Ethernet0", {"action": "drop", "detection_time": "200"}), ["action", "detection_time"]),
    (op("add", "/BUFFER_PROFILE", {"pg_lossless_400000_40m_profile": {}}), ["pg_lossless_400000_40m_profile"]),
])
def test_patch_fields(element, fields):
    assert sonic_gcu.patch_fields(element) == fields


def test_asic_of_spectrum_skus():
    assert sonic_gcu.asic_of("ACS-SN5600", "202411") == "spc4"
    assert sonic_gcu.asic_of("mellanox-sn5600-o128", "202311") == "spc4"   # GCU compares lower-cased
    assert sonic_gcu.asic_of("ACS-MSN4700", "202411") == "spc3"
    assert sonic_gcu.asic_of("ACS-SN5640", "202411") == "unknown"   # 202411's get_asic_name reads spc1..4
    assert sonic_gcu.asic_of("ACS-SN5640", "202505") == "spc5"
    assert sonic_gcu.asic_of("Mellanox-SN5600-C256S1", "202311") == "unknown"  # listed from 202405
    assert sonic_gcu.asic_of("Arista-7060X6-64PE", "202511") == "unknown"


@pytest.mark.parametrize(("build", "release"), [
    ("202411", "202411"), ("SONiC.202505.12-abc", "202505"), ("20231110.18", "202311"),
    ("202605", "202511"), ("master.123-abc", "202511"), ("202305", "202311"), ("202408", "202405")])
def test_a_lab_switch_runs_the_list_of_its_release(build, release):
    """Its own release; an unlisted one the newest listed at or before it (the oldest below all)."""
    assert sonic_gcu.gcu_release(build) == release


# --- the allow-list on a running Spectrum-4 -------------------------------------------------
@pytest.mark.parametrize("element", [
    op("replace", "/BUFFER_POOL/ingress_lossless_pool/size", "60000000"),
    op("replace", "/BUFFER_POOL/ingress_lossless_pool/xoff", "4000000"),
    op("replace", "/BUFFER_POOL/egress_lossy_pool/size", "50000000"),
    op("replace", f"/BUFFER_PROFILE/{PG}/xoff", "230000"),
    op("replace", f"/BUFFER_PROFILE/{PG}/dynamic_th", "1"),
    op("replace", "/WRED_PROFILE/AZURE_LOSSLESS/green_max_threshold", "2000000"),
    op("replace", "/WRED_PROFILE/AZURE_LOSSLESS/green_drop_probability", "10"),
    op("add", "/PFC_WD/Ethernet0", {"action": "drop", "detection_time": "200", "restoration_time": "200"}),
    op("replace", "/PFC_WD/GLOBAL/POLL_INTERVAL", "400"),
])
def test_allowed_live_changes(running, element):
    after = apply(running, element)
    assert after != running


@pytest.mark.parametrize("element", [
    op("replace", "/BUFFER_POOL/egress_lossless_pool/size", "60000000"),
    op("add", "/BUFFER_POOL/ingress_lossless_pool/xon", "1"),                     # add, not replace
    op("replace", f"/BUFFER_PROFILE/{PG}/size", "300000"),                          # size is not listed
    op("add", "/BUFFER_PROFILE/pg_lossless_400000_40m_profile",                      # a new profile
       {"pool": "ingress_lossless_pool", "size": "1", "xon": "1", "xoff": "1", "dynamic_th": "0"}),
    op("remove", f"/BUFFER_PROFILE/{PG}"),                                          # removing one
    op("replace", "/BUFFER_PROFILE/egress_lossless_profile/dynamic_th", "3"),        # digitless name
    op("replace", "/WRED_PROFILE/AZURE_LOSSLESS/ecn", "ecn_none"),
])
def test_refused_live_changes_leave_running_alone(running, element):
    before = copy.deepcopy(running)
    with pytest.raises(GcuError, match=r"Modification of \w+ table is illegal- validating function "
                                       r"generic_config_updater\.field_operation_validators\."
                                       r"rdma_config_update_validator returned False"):
        apply(running, element)
    assert running == before


def test_the_table_of_a_whole_table_operation_is_its_first_element(running):
    # /BUFFER_PROFILE replaced as a whole: the diff from running adds one profile row -> refused
    profiles = copy.deepcopy(running["BUFFER_PROFILE"])
    profiles["pg_lossless_400000_40m_profile"] = dict(profiles[PG], xoff="300000")
    with pytest.raises(GcuError, match="Modification of BUFFER_PROFILE table is illegal"):
        apply(running, op("replace", "/BUFFER_PROFILE", profiles))
    # a table the switch lacks, added whole: its fields are the row names -> refused
    del running["WRED_PROFILE"]
    with pytest.raises(GcuError, match="Modification of WRED_PROFILE table is illegal"):
        apply(running, op("add", "/WRED_PROFILE", {"AZURE_LOSSLESS": {"green_min_threshold": "1"}}))
    # the same value written back through a whole-table replace is no change at all
    assert apply(running, op("replace", "/BUFFER_PROFILE", copy.deepcopy(running["BUFFER_PROFILE"]))) == running


def test_illegal_removals(running):
    with pytest.raises(GcuError, match="Operation: remove is illegal on field: /PFC_WD/GLOBAL"):
        apply(running, op("remove", "/PFC_WD/GLOBAL"))


def test_spectrum5_and_old_branches_may_not_change_buffers(running):
    element = op("replace", "/BUFFER_POOL/ingress_lossless_pool/size", "60000000")
    assert sonic_gcu.validator_allows(element, "BUFFER_POOL", "spc4", "20231110.18")
    assert not sonic_gcu.validator_allows(element, "BUFFER_POOL", "spc4", "20220500.3")  # before 20221100
    assert not sonic_gcu.validator_allows(element, "BUFFER_POOL", "spc5", "202411")      # not listed in 2024
    assert sonic_gcu.validator_allows(element, "BUFFER_POOL", "spc5", "202505")          # 20241200 on
    assert not sonic_gcu.validator_allows(element, "BUFFER_POOL", "spc5", "20241110.1")  # a build before it
    assert not sonic_gcu.validator_allows(element, "BUFFER_POOL", "unknown", "202411")


# --- the same switch on other releases -------------------------------------------------------
def _refused(running: dict, element: dict, version: str) -> str | None:
    before = copy.deepcopy(running)
    try:
        apply(running, element, version=version)
    except GcuError as exc:
        assert running == before
        return str(exc)
    return None


def test_202511_refuses_every_buffer_pool_change(running):
    """202511 (667f4b32, #4226): BUFFER_POOL keeps rdma_config_update_validator with no field."""
    size = op("replace", "/BUFFER_POOL/ingress_lossless_pool/size", "60000000")
    for version in ("202311", "202405", "202411", "202505"):
        assert _refused(running, size, version) is None, version
    assert _refused(running, size, "202511") == (
        "Modification of BUFFER_POOL table is illegal- validating function "
        "generic_config_updater.field_operation_validators.rdma_config_update_validator returned False")


def test_202505_validates_wred_by_field_name(running):
    """202505 (a4212fed, #3934): wred_profile_config_update_validator, the last path part; 202511: none."""
    running["WRED_PROFILE"]["WRED_LOSSY"] = dict(running["WRED_PROFILE"]["AZURE_LOSSLESS"])
    tune = op("replace", "/WRED_PROFILE/WRED_LOSSY/green_max_threshold", "2000000")
    assert "rdma_config_update_validator returned False" in _refused(running, tune, "202411")
    assert _refused(running, tune, "202505") is None
    ecn = op("replace", "/WRED_PROFILE/AZURE_LOSSLESS/ecn", "ecn_none")
    assert "wred_profile_config_update_validator returned False" in _refused(running, ecn, "202505")
    assert _refused(running, ecn, "202511") is None  # WRED_PROFILE is not field-checked on 202511


def test_202511_takes_whole_buffer_profiles(running):
    """202511 buffer_profile_config_update_validator (7a046d63, ae048e70): whole rows and the fields
    of any profile by their last part; the 2024 validator refuses both."""
    new = op("add", "/BUFFER_PROFILE/pg_lossless_400000_40m_profile",
             {"pool": "ingress_lossless_pool", "size": "1", "xon": "1", "xoff": "1", "dynamic_th": "0"})
    digitless = op("replace", "/BUFFER_PROFILE/egress_lossless_profile/dynamic_th", "3")
    size = op("replace", f"/BUFFER_PROFILE/{PG}/size", "300000")
    for element in (new, digitless, op("remove", f"/BUFFER_PROFILE/{PG}")):
        assert _refused(running, element, "202411") is not None
        assert _refused(running, element, "202511") is None, element
    assert "buffer_profile_config_update_validator returned False" in _refused(running, size, "202511")


def test_port_fec_must_be_supported(running):
    assert apply(running, op("replace", "/PORT/Ethernet0/fec", "none"))["PORT"]["Ethernet0"]["fec"] == "none"
    with pytest.raises(GcuError, match="port_config_update_validator returned False"):
        apply(running, op("replace", "/PORT/Ethernet0/fec", "turbo"))


@pytest.mark.parametrize(("field", "value"), [
    ("hwsku", "Mellanox-SN5600-O128"), ("mac", "1c:34:da:00:00:01"), ("docker_routing_config_mode", "unified"),
    ("frr_mgmt_framework_config", "true"), ("buffer_model", "dynamic"), ("platform", "x86_64-mlnx_msn2700-r0"),
])
def test_reload_only_metadata_is_refused(running, field, value):
    with pytest.raises(GcuError, match=f"DEVICE_METADATA field {field} .*'config reload'"):
        apply(running, op("add", f"/DEVICE_METADATA/localhost/{field}", value))
    # a field that applies live is fine
    assert apply(running, op("replace", "/DEVICE_METADATA/localhost/hostname", "leaf09")) != running


def test_malformed_patches(running):
    with pytest.raises(GcuError, match="non-existent"):
        apply(running, op("remove", "/PORT/Ethernet999"))
    with pytest.raises(GcuError):
        apply(running, {"op": "frobnicate", "path": "/PORT"})
    with pytest.raises(GcuError, match="list of operations"):
        sonic_gcu.apply(running, {"op": "add"})


def test_empty_tables_are_refused(running):
    with pytest.raises(GcuError, match="empty tables .* Table: NTP"):
        apply(running, op("replace", "/NTP", {}))


def test_replace_with_a_partial_file_drops_what_it_lacks(running):
    factory = sonic_factory.factory_config_db("SN5600", "leaf01", "202411", STATIC)
    partial = {t: copy.deepcopy(factory[t]) for t in ("DEVICE_METADATA", "PORT")}
    after = sonic_gcu.replace(factory, partial)
    assert after == partial
    assert "MGMT_INTERFACE" not in after and "FEATURE" not in after
    assert sonic_factory.management_loss(after, STATIC) is not None
    # on a switch with buffer tables the same file removes BUFFER_POOL: field "" is not allowed
    with pytest.raises(GcuError, match="Modification of BUFFER_POOL table is illegal"):
        sonic_gcu.replace(running, partial)
    # a partial file whose DEVICE_METADATA differs from the switch's is refused outright
    partial["DEVICE_METADATA"]["localhost"].pop("mac")
    with pytest.raises(GcuError, match="field mac"):
        sonic_gcu.replace(factory, partial)


# --- the factory CONFIG_DB ---------------------------------------------------------------------
def test_factory_identity():
    a = sonic_factory.factory_config_db("SN5600", "leaf01", "202311", STATIC)
    b = sonic_factory.factory_config_db("SN5600", "leaf02", "202311", STATIC)
    meta = a["DEVICE_METADATA"]["localhost"]
    # device/mellanox/x86_64-nvidia_sn5600-r0/default_sku is "ACS-SN5600 t1"
    assert meta["hwsku"] == "ACS-SN5600" and meta["platform"] == "x86_64-nvidia_sn5600-r0"
    assert meta["hostname"] == "leaf01" and meta["type"] == "LeafRouter"
    assert meta["buffer_model"] == "traditional" and meta["docker_routing_config_mode"] == "separated"
    assert meta["mac"].startswith("1c:34:da:") and meta["mac"] != b["DEVICE_METADATA"]["localhost"]["mac"]
    assert sonic_factory.factory_config_db("SN5600", "leaf01", "202311", STATIC) == a  # the same after a restart
    # 64 OSFP cages at 1x800G (8 lanes, RS-FEC) and the 25G service port (portconfig.py)
    assert len(a["PORT"]) == 65
    assert a["PORT"]["Ethernet8"] == {"alias": "etp2", "lanes": "8,9,10,11,12,13,14,15", "speed": "800000",
                                      "index": "2", "subport": "0", "fec": "rs", "admin_status": "up", "mtu": "9100"}
    assert "fec" not in a["PORT"]["Ethernet512"]
    assert a["MGMT_PORT"] == {"eth0": {"alias": "eth0", "admin_status": "up"}}
    assert a["MGMT_INTERFACE"] == {"eth0|10.30.0.11/24": {"gwaddr": "10.30.0.1"}}
    assert a["VERSIONS"] == {"DATABASE": {"VERSION": "version_202311_03"}}
    assert sonic_factory.factory_config_db("SN5600", "x", "202411", STATIC)["VERSIONS"]["DATABASE"]["VERSION"] \
        == "version_202411_02"
    assert a["FLEX_COUNTER_TABLE"]["PFCWD"] == {"FLEX_COUNTER_STATUS": "enable"}
    assert a["FEATURE"]["bgp"]["state"] == "enabled" and a["FEATURE"]["database"]["state"] == "always_enabled"
    # DHCP: no MGMT_INTERFACE row, interfaces.j2 runs dhclient on eth0
    assert "MGMT_INTERFACE" not in sonic_factory.factory_config_db("SN5600", "leaf01", "202311", DHCP)


def test_management_loss():
    config = sonic_factory.factory_config_db("SN5600", "leaf01", "202411", STATIC)
    assert sonic_factory.management_loss(config, STATIC) is None
    moved = copy.deepcopy(config)
    moved["MGMT_INTERFACE"] = {"eth0|10.30.0.99/24": {"gwaddr": "10.30.0.1"}}
    assert "changed from 10.30.0.11/24 to 10.30.0.99/24" in sonic_factory.management_loss(moved, STATIC)
    down = copy.deepcopy(config)
    down["MGMT_PORT"]["eth0"]["admin_status"] = "down"
    assert sonic_factory.management_loss(down, STATIC) == "MGMT_PORT eth0 is admin down"
    dhcp = sonic_factory.factory_config_db("SN5600", "leaf01", "202411", DHCP)
    assert sonic_factory.management_loss(dhcp, DHCP) is None
    dhcp["MGMT_INTERFACE"] = {"eth0|10.1.1.1/24": {}}  # a static row ends the DHCP client
    assert sonic_factory.management_loss(dhcp, DHCP) is not None


def test_factory_satisfies_sonic_yang():
    try:
        from generator.render.sonic_yang import SonicYangUnavailable, YangValidator
        validator = YangValidator(YANG_DIR)
    except (ImportError, SonicYangUnavailable, OSError) as exc:
        pytest.skip(f"SONiC YANG validation unavailable: {exc}")
    if not validator.tables:
        pytest.skip(f"no SONiC YANG models in {YANG_DIR}")
    for mgmt in (STATIC, DHCP):
        for version in ("202311", "202411"):
            config = sonic_factory.factory_config_db("SN5600", "leaf01", version, mgmt)
            assert [str(i) for i in validator.validate(config, "leaf01")] == []
    broken = sonic_factory.factory_config_db("SN5600", "leaf01", "202411", STATIC)
    broken["DEVICE_METADATA"]["localhost"]["mac"] = "not-a-mac"
    assert validator.validate(broken, "leaf01"), "the validator must see a bad MAC"


@pytest.mark.parametrize("expr", ["DEVICE_METADATA.localhost.mac", "DEVICE_METADATA['localhost']['hwsku']",
                                  "DEVICE_METADATA.localhost.nothing", "NO_TABLE", "NO_TABLE.x.y",
                                  "DEVICE_METADATA.localhost.nothing.more", "MGMT_PORT.eth0"])
def test_cfggen_var_renders_as_jinja2_does(expr):
    """`sonic-cfggen -v EXPR` renders '{{EXPR}}' with jinja2: compare with jinja2 itself."""
    data = sonic_factory.factory_config_db("SN5600", "leaf01", "202411", STATIC)
    try:
        expected = jinja2.Template("{{" + expr + "}}").render(data)
    except jinja2.UndefinedError as exc:
        with pytest.raises(CommandError, match=re.escape(str(exc))):
            _render_var(data, expr)
    else:
        assert _render_var(data, expr) == expected
