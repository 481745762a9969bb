"""SONiC config_db.json validation against the upstream SONiC YANG models (libyang 2.x)."""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path

import pytest

from generator.render import sonic_yang
from generator.render.sonic_yang import SonicYangUnavailable, YangIssue, YangValidator

REPO = Path(__file__).resolve().parents[2]
YANG_DIR = (REPO / ".." / "shared" / "sonic-yang").resolve()
LEAF_OK = REPO / "tests" / "data" / "sonic" / "leaf_ok.json"


def _skip_reason() -> str | None:
    if not any(YANG_DIR.glob("*.yang")):
        return f"SONiC YANG models not found in {YANG_DIR}"
    try:
        import libyang  # noqa: F401
    except Exception as exc:  # the C library can be missing even when the wheel is installed
        return f"python libyang not importable ({exc}); {sonic_yang.INSTALL_HINT}"
    return None


needs_libyang = pytest.mark.skipif(_skip_reason() is not None, reason=_skip_reason() or "")


@pytest.fixture(scope="module")
def validator() -> YangValidator:
    return YangValidator(YANG_DIR)


@pytest.fixture
def leaf_ok() -> dict:
    return json.loads(LEAF_OK.read_text())


def _issues(validator: YangValidator, cfg: dict) -> list[YangIssue]:
    return validator.validate(cfg, "leaf01")


# ----------------------------------------------------------------------------- no libyang needed


def test_issue_str_is_one_line():
    issue = YangIssue("leaf01", "BUFFER_PG", "Ethernet0|3", "profile: Invalid union value")
    assert str(issue) == "leaf01: BUFFER_PG|Ethernet0|3: profile: Invalid union value"
    assert str(YangIssue("leaf01", "FOO", "", "no YANG model for table FOO")) == "leaf01: FOO: no YANG model for table FOO"


def test_missing_libyang_is_actionable(monkeypatch):
    monkeypatch.setattr(sonic_yang, "libyang", None)
    with pytest.raises(SonicYangUnavailable, match=r"pip install libyang==2\.7\.1"):
        YangValidator(YANG_DIR)


# ----------------------------------------------------------------------------- loading


@needs_libyang
def test_empty_model_dir_is_actionable(tmp_path):
    with pytest.raises(SonicYangUnavailable, match="no .yang files"):
        YangValidator(tmp_path)


@needs_libyang
def test_tables_found_by_scanning_schema(validator):
    assert {"PORT", "BUFFER_PG", "DEVICE_METADATA", "CABLE_LENGTH", "PFC_WD", "WRED_PROFILE"} <= validator.tables
    assert validator.load_seconds < 5


# ----------------------------------------------------------------------------- translation


@needs_libyang
def test_translation_types_values_from_schema(validator, leaf_ok):
    y = validator.to_yang_json(leaf_ok)
    port = y["sonic-port:sonic-port"]["sonic-port:PORT"]["PORT_LIST"][0]
    assert port["name"] == "Ethernet0"
    assert port["mtu"] == 9216 and port["speed"] == 400000  # uint16 / uint32 -> JSON numbers
    assert port["lanes"] == "0,1,2,3"  # a string leaf in this model, not a leaf-list

    md = y["sonic-device_metadata:sonic-device_metadata"]["sonic-device_metadata:DEVICE_METADATA"]["localhost"]
    assert md["bgp_asn"] == 65101 and md["buffer_model"] == "traditional"

    prof = {
        p["name"]: p
        for p in y["sonic-buffer-profile:sonic-buffer-profile"]["sonic-buffer-profile:BUFFER_PROFILE"][
            "BUFFER_PROFILE_LIST"
        ]
    }["pg_lossless_400000_5m_profile"]
    assert prof["xoff"] == "231424" and prof["size"] == "250880"  # uint64 -> JSON strings
    assert prof["dynamic_th"] == 0  # int32

    wred = y["sonic-wred-profile:sonic-wred-profile"]["sonic-wred-profile:WRED_PROFILE"]["WRED_PROFILE_LIST"][0]
    assert wred["wred_green_enable"] is True

    pg = y["sonic-buffer-pg:sonic-buffer-pg"]["sonic-buffer-pg:BUFFER_PG"]["BUFFER_PG_LIST"]
    assert {"port": "Ethernet0", "pg_num": "3", "profile": "pg_lossless_400000_5m_profile"} in pg


@needs_libyang
def test_map_tables_become_inner_lists(validator, leaf_ok):
    y = validator.to_yang_json(leaf_ok)
    dscp = y["sonic-dscp-tc-map:sonic-dscp-tc-map"]["sonic-dscp-tc-map:DSCP_TO_TC_MAP"]["DSCP_TO_TC_MAP_LIST"][0]
    assert dscp["name"] == "AZURE"
    assert {"dscp": "3", "tc": 3} in dscp["DSCP_TO_TC_MAP"]  # tc is uint8
    assert len(dscp["DSCP_TO_TC_MAP"]) == 64
    cable = y["sonic-cable-length:sonic-cable-length"]["sonic-cable-length:CABLE_LENGTH"]["CABLE_LENGTH_LIST"][0]
    assert cable == {
        "name": "AZURE",
        "CABLE_LENGTH": [{"port": "Ethernet0", "length": "5m"}, {"port": "Ethernet8", "length": "5m"}],
    }


@needs_libyang
def test_comma_string_becomes_leaf_list(validator, leaf_ok):
    leaf_ok["BUFFER_PORT_INGRESS_PROFILE_LIST"]["Ethernet0"]["profile_list"] = (
        "ingress_lossless_profile,ingress_lossy_profile"
    )
    y = validator.to_yang_json(leaf_ok)
    rows = y["sonic-buffer-port-ingress-profile-list:sonic-buffer-port-ingress-profile-list"][
        "sonic-buffer-port-ingress-profile-list:BUFFER_PORT_INGRESS_PROFILE_LIST"
    ]["BUFFER_PORT_INGRESS_PROFILE_LIST_LIST"]
    assert rows[0]["profile_list"] == ["ingress_lossless_profile", "ingress_lossy_profile"]
    assert validator.validate(leaf_ok, "leaf01") == []


@needs_libyang
def test_to_yang_json_is_deterministic_and_pure(validator, leaf_ok):
    before = copy.deepcopy(leaf_ok)
    first = json.dumps(validator.to_yang_json(leaf_ok))
    assert json.dumps(validator.to_yang_json(leaf_ok)) == first
    assert leaf_ok == before

    rng = random.Random(7)

    def shuffled(d):
        if not isinstance(d, dict):
            return d
        items = list(d.items())
        rng.shuffle(items)
        return {k: shuffled(v) for k, v in items}

    assert json.dumps(validator.to_yang_json(shuffled(leaf_ok))) == first


# ----------------------------------------------------------------------------- validation


@needs_libyang
def test_leaf_ok_validates_clean(validator, leaf_ok):
    assert validator.validate(leaf_ok, "leaf01") == []


@needs_libyang
def test_wrong_profile_reference_in_buffer_pg(validator, leaf_ok):
    leaf_ok["BUFFER_PG"]["Ethernet0|3"]["profile"] = "pg_lossless_400000_300m_profile"
    [issue] = _issues(validator, leaf_ok)
    assert (issue.table, issue.key) == ("BUFFER_PG", "Ethernet0|3")
    assert "profile" in issue.message and "pg_lossless_400000_300m_profile" in issue.message


@needs_libyang
def test_dangling_leafref_names_table_and_key(validator, leaf_ok):
    leaf_ok["QUEUE"]["Ethernet0|3"]["wred_profile"] = "AZURE_LOSSY"
    [issue] = _issues(validator, leaf_ok)
    assert (issue.table, issue.key) == ("QUEUE", "Ethernet0|3")
    assert "leafref" in issue.message and "AZURE_LOSSY" in issue.message


@needs_libyang
def test_bad_pfc_enable(validator, leaf_ok):
    leaf_ok["PORT_QOS_MAP"]["Ethernet0"]["pfc_enable"] = "3,8"
    [issue] = _issues(validator, leaf_ok)
    assert (issue.table, issue.key) == ("PORT_QOS_MAP", "Ethernet0")
    assert "pfc_enable" in issue.message and "pattern" in issue.message


@needs_libyang
def test_port_mtu_out_of_range(validator, leaf_ok):
    leaf_ok["PORT"]["Ethernet8"]["mtu"] = "10000"
    [issue] = _issues(validator, leaf_ok)
    assert (issue.table, issue.key) == ("PORT", "Ethernet8")
    assert "mtu" in issue.message and "range" in issue.message


@needs_libyang
def test_wred_green_max_below_min_caught_by_must(validator, leaf_ok):
    # sonic-wred-profile.yang: must "(current() >= current()/../green_min_threshold)"
    leaf_ok["WRED_PROFILE"]["AZURE_LOSSLESS"]["green_max_threshold"] = "524288"
    [issue] = _issues(validator, leaf_ok)
    assert (issue.table, issue.key) == ("WRED_PROFILE", "AZURE_LOSSLESS")
    assert "green_max_threshold" in issue.message and "Green max threshold" in issue.message


@needs_libyang
def test_pfcwd_detection_time_out_of_range(validator, leaf_ok):
    leaf_ok["PFC_WD"]["Ethernet8"]["detection_time"] = "6000"
    [issue] = _issues(validator, leaf_ok)
    assert (issue.table, issue.key) == ("PFC_WD", "Ethernet8")


@needs_libyang
def test_unknown_table_is_an_issue(validator, leaf_ok):
    leaf_ok["FLEX_COUNTER_TABLE_X"] = {"PFCWD": {"FLEX_COUNTER_STATUS": "enable"}}
    [issue] = _issues(validator, leaf_ok)
    assert issue.table == "FLEX_COUNTER_TABLE_X"
    assert issue.message == "no YANG model for table FLEX_COUNTER_TABLE_X"


@needs_libyang
def test_unknown_field_and_bad_key_arity(validator, leaf_ok):
    leaf_ok["PORT"]["Ethernet0"]["speeed"] = "400000"
    leaf_ok["BUFFER_PG"]["Ethernet0|3|4"] = {"profile": "ingress_lossy_profile"}
    issues = _issues(validator, leaf_ok)
    assert {(i.table, i.key) for i in issues} == {("PORT", "Ethernet0"), ("BUFFER_PG", "Ethernet0|3|4")}
    assert any("speeed" in i.message for i in issues)


@needs_libyang
def test_all_errors_reported_in_one_run(validator, leaf_ok):
    leaf_ok["PORT"]["Ethernet8"]["mtu"] = "10000"
    leaf_ok["BUFFER_PG"]["Ethernet0|3"]["profile"] = "nope"
    leaf_ok["BUFFER_PG"]["Ethernet0|9"] = {"profile": "ingress_lossy_profile"}  # pg_num is [0-7]
    leaf_ok["DSCP_TO_TC_MAP"]["AZURE"]["64"] = "1"
    leaf_ok["WRED_PROFILE"]["AZURE_LOSSLESS"]["wred_green_enable"] = "yes"
    got = {(i.table, i.key) for i in _issues(validator, leaf_ok)}
    assert got == {
        ("PORT", "Ethernet8"),
        ("BUFFER_PG", "Ethernet0|3"),
        ("BUFFER_PG", "Ethernet0|9"),
        ("DSCP_TO_TC_MAP", "AZURE"),
        ("WRED_PROFILE", "AZURE_LOSSLESS"),
    }


@needs_libyang
def test_missing_mandatory_leaf_does_not_cascade(validator, leaf_ok):
    del leaf_ok["PORT"]["Ethernet8"]["speed"]
    issues = _issues(validator, leaf_ok)
    assert {(i.table, i.key) for i in issues} == {("PORT", "Ethernet8")}
    assert any('Mandatory node "speed"' in i.message for i in issues)


@needs_libyang
def test_missing_port_reports_every_reference(validator, leaf_ok):
    del leaf_ok["PORT"]["Ethernet8"]
    issues = _issues(validator, leaf_ok)
    refs = {(i.table, i.key) for i in issues}
    assert ("BUFFER_PG", "Ethernet8|3") in refs and ("PORT_QOS_MAP", "Ethernet8") in refs
    assert ("CABLE_LENGTH", "AZURE") in refs
    assert all("Ethernet8" in i.message or "Ethernet8" in i.key for i in issues)
