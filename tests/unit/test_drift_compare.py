"""Drift normalisation, per-feature comparison and report formats (no devices)."""

from __future__ import annotations

import json
import os

import pytest

from generator.common.atomic_write import write_atomic
from generator.drift.command import compare_texts
from generator.drift.compare import compare_device, split_features
from generator.drift.normalize import canonical, parse_nvue, parse_sonic, strip_unmanaged
from generator.drift.report import DriftReport, format_markdown, format_prometheus, format_table

INTENDED = """\
- header:
    model: fabricgen
    version: Cumulus Linux 5.11
- set:
    interface:
      swp1:
        type: swp
        link: {mtu: 9216, state: {up: {}}}
        qos: {pfc: {profile: roce-lossless-2m}}
    qos:
      pfc:
        roce-lossless-2m: {cable-length: 2, rx: enable, tx: enable, switch-priority: {'3': {}}}
      roce: {enable: on, mode: lossless}
    router:
      bgp: {autonomous-system: 65101, enable: on, router-id: 10.255.0.3}
    vrf:
      default:
        router: {bgp: {neighbor: {swp1: {remote-as: external, type: unnumbered}}}}
    system: {hostname: leaf1}
"""


def test_canonical_scalars():
    assert canonical({"a": "on", "b": "OFF", "c": "9216", "d": 9216.0, "e": "007", "f": "enable", "g": "-3"}) == {
        "a": True, "b": False, "c": 9216, "d": 9216, "e": "007", "f": "enable", "g": -3}


def test_running_with_other_key_order_quoting_header_and_factory_defaults_is_in_sync():
    running = """\
- header: {model: SN4700, rev-id: 1.0.0, version: Cumulus Linux 5.11.1}
- set:
    system: {hostname: leaf1, timezone: Etc/UTC, aaa: {user: {cumulus: {role: system-admin}}}}
    vrf:
      default:
        router: {bgp: {neighbor: {swp1: {type: unnumbered, remote-as: external}}}}
      mgmt: {table: auto}
    router:
      bgp: {enable: 'true', router-id: 10.255.0.3, autonomous-system: '65101'}
    qos:
      roce: {mode: lossless, enable: on}
      pfc:
        roce-lossless-2m: {tx: enable, rx: enable, cable-length: '2', switch-priority: {'3': {}}}
    interface:
      eth0: {type: eth, ip: {vrf: mgmt}}
      swp1:
        qos: {pfc: {profile: roce-lossless-2m}}
        type: swp
        link: {state: {up: {}}, mtu: '9216'}
"""
    result = compare_texts("cumulus", "leaf1", INTENDED, running)
    assert result.status == "in_sync", {n: f.as_dict() for n, f in result.features.items() if not f.compliant}
    assert set(result.features) == {"interfaces", "bgp", "qos", "buffers", "system"}


def test_missing_extra_changed_per_feature():
    running = (INTENDED.replace("mtu: 9216", "mtu: 1500")
               .replace("cable-length: 2", "cable-length: 5")
               .replace("      swp1:\n        type: swp", "      swp9: {type: swp}\n      swp1:\n        type: swp")
               .replace("router-id: 10.255.0.3}", "}"))
    result = compare_texts("cumulus", "leaf1", INTENDED, running)
    assert result.status == "drift"
    f = {n: x.as_dict() for n, x in result.features.items()}
    assert f["interfaces"]["changed"] == [{"path": "interface.swp1.link.mtu", "intended": 9216, "actual": 1500}]
    assert f["interfaces"]["extra"] == [{"path": "interface.swp9", "actual": {"type": "swp"}}]
    assert f["buffers"]["changed"] == [
        {"path": "qos.pfc.roce-lossless-2m.cable-length", "intended": 2, "actual": 5}]
    assert f["bgp"]["missing"] == [{"path": "router.bgp.router-id", "intended": "10.255.0.3"}]
    assert f["qos"]["compliant"] and f["system"]["compliant"]


def test_a_factory_default_that_the_intent_sets_is_compared():
    intended = parse_nvue(INTENDED)
    intended["vrf"]["mgmt"] = {"table": "auto"}
    actual = strip_unmanaged("cumulus", intended, {**parse_nvue(INTENDED), "service": {"ntp": {}}})
    assert "service" not in actual
    assert compare_device("cumulus", intended, actual)["bgp"].missing == [
        {"path": "vrf.mgmt", "intended": {"table": "auto"}}]


def test_sonic_tables_and_metadata():
    intended = {"PORT": {"Ethernet0": {"mtu": "9216", "admin_status": "up"}},
                "CABLE_LENGTH": {"AZURE": {"Ethernet0": "3m"}},
                "DEVICE_METADATA": {"localhost": {"hostname": "s1", "bgp_asn": "65101", "hwsku": "x"}}}
    # the switch's MAC, its FEATURE/FLEX_COUNTER tables and PORT fields fabricgen does not set are
    # never compared (generator/render/sonic_managed.py)
    running = {"PORT": {"Ethernet0": {"mtu": 9216, "admin_status": "up", "autoneg": "off"}},
               "CABLE_LENGTH": {"AZURE": {"Ethernet0": "5m"}},
               "DEVICE_METADATA": {"localhost": {"hostname": "s1", "bgp_asn": "65101", "mac": "aa:bb",
                                                 "hwsku": "x"}},
               "FLEX_COUNTER_TABLE": {"PORT": {"FLEX_COUNTER_STATUS": "enable"}}}
    result = compare_texts("sonic", "s1", json.dumps(intended), json.dumps(running))
    assert result.status == "drift"
    assert result.features["buffers"].changed == [
        {"path": 'CABLE_LENGTH.AZURE.Ethernet0', "intended": "3m", "actual": "5m"}]
    assert all(result.features[n].compliant for n in ("interfaces", "system", "bgp", "qos"))
    assert split_features("sonic", parse_sonic(json.dumps(intended)))["interfaces"] == {
        "PORT": {"Ethernet0": {"mtu": 9216, "admin_status": "up"}}}


def test_unreadable_running_config_is_unknown():
    assert compare_texts("cumulus", "x", INTENDED, "- set: [unclosed").status == "unknown"
    assert compare_texts("sonic", "x", "{}", "not json").status == "unknown"


def _report():
    synced = compare_texts("cumulus", "leaf1", INTENDED, INTENDED)
    drifted = compare_texts("cumulus", "leaf2", INTENDED, INTENDED.replace("mtu: 9216", "mtu: 1500"))
    from generator.drift.report import DeviceResult
    unknown = DeviceResult("leaf3", "switch", "unknown", error="leaf3:22: authentication failed")
    return DriftReport("f1", [synced, drifted, unknown], started=1000.0, finished=1002.5)


def test_exit_codes():
    report = _report()
    assert report.exit_code == 1
    report.devices.pop()
    assert report.exit_code == 3
    report.devices.pop()
    assert report.exit_code == 0


def test_prometheus_textfile():
    text = format_prometheus(_report())
    assert 'fabricgen_drift_devices{fabric="f1",feature="interfaces"} 1' in text
    assert 'fabricgen_drift_devices{fabric="f1",feature="bgp"} 0' in text
    assert 'fabricgen_drift_check_success{fabric="f1"} 0' in text
    assert 'fabricgen_drift_last_run_timestamp_seconds{fabric="f1"} 1002.500' in text
    assert "# TYPE fabricgen_drift_devices gauge" in text and text.endswith("\n")


def test_table_and_markdown_name_device_feature_path():
    table = format_table(_report())
    assert "leaf2" in table and "interface.swp1.link.mtu" in table and "unknown: leaf3" in table
    md = format_markdown(_report())
    assert "| <code>leaf2</code> | drift | interfaces |" in md and "| <code>leaf3</code> | unknown |" in md


def test_write_atomic_replaces_and_leaves_no_temp(tmp_path):
    target = tmp_path / "out.prom"
    write_atomic(target, "a 1\n")
    write_atomic(target, "a 2\n")
    assert target.read_text() == "a 2\n"
    assert os.listdir(tmp_path) == ["out.prom"]
    assert oct(target.stat().st_mode & 0o777) == "0o644"


@pytest.mark.parametrize("fmt", ["yaml", "bogus"])
def test_unknown_format_is_usage_error(fmt, capsys):
    from generator.drift.command import run_drift

    run = run_drift("nowhere.yaml", fmt=fmt)
    assert (run.exit_code, run.report, run.problems) == (2, None, (f"error: --format {fmt!r}: use table, json, prometheus, markdown",))
    assert capsys.readouterr() == ("", "")


def test_empty_device_reports_buffers_and_qos_at_their_own_paths():
    result = compare_texts("cumulus", "leaf1", INTENDED, "")
    assert [c["path"] for c in result.features["buffers"].missing] == ["qos.pfc"]
    assert [c["path"] for c in result.features["qos"].missing] == ["qos.roce"]
