"""What a lab switch gets from a day-0 kit: the Kea answer for its MAC and vendor class (contract
section 2) and the kit file behind a URL (contract section 1). Small hand-written kits."""

from __future__ import annotations

import json
import os

import pytest

from generator.lab.ztp_kit import KitError, KitServer, UnsupportedTest, class_matches, dhcp_answer, load_kea

BASE = "http://192.168.0.2:8080"
CUMULUS_VC = "cumulus-linux x86_64"


def kea(**extra) -> dict:
    dhcp4 = {
        "option-def": [{"name": "cumulus-provision-url", "code": 239, "type": "string", "space": "dhcp4"}],
        "client-classes": [{"name": "cumulus", "test": "substring(option[60].hex,0,13) == 'cumulus-linux'",
                            "option-data": [{"name": "cumulus-provision-url", "data": f"{BASE}/ztp/cumulus-ztp.sh"}]}],
        "subnet4": [{"id": 1, "subnet": "192.168.0.0/24",
                     "option-data": [{"name": "routers", "data": "192.168.0.1"},
                                     {"name": "domain-name-servers", "data": "10.0.0.53"}],
                     "reservations": [
                         {"hw-address": "44:38:39:00:00:01", "ip-address": "192.168.0.14", "hostname": "leaf-1",
                          "option-data": [{"name": "host-name", "data": "leaf-1"}]},
                         {"hw-address": "1C:34:DA:00:00:02", "ip-address": "192.168.0.15", "hostname": "sonic-1",
                          "option-data": [{"name": "boot-file-name", "data": f"{BASE}/ztp/sonic-1/ztp.json"}]}]}],
    }
    dhcp4.update(extra)
    return dhcp4


def test_reservation_gives_address_gateway_hostname_and_the_class_option():
    answer = dhcp_answer(kea(), "44:38:39:00:00:01", CUMULUS_VC)
    assert answer.address == "192.168.0.14/24" and answer.ip == "192.168.0.14"
    assert answer.gateway == "192.168.0.1" and answer.hostname == "leaf-1"
    assert answer.options["cumulus-provision-url"] == f"{BASE}/ztp/cumulus-ztp.sh"
    assert answer.options["domain-name-servers"] == "10.0.0.53"
    assert answer.classes == ("cumulus",)


def test_mac_matches_in_any_case_and_the_reservation_hostname_stands_in_for_option_12():
    answer = dhcp_answer(kea(), "1c:34:da:00:00:02", None)
    assert answer.ip == "192.168.0.15" and answer.hostname == "sonic-1"
    assert answer.options["boot-file-name"] == f"{BASE}/ztp/sonic-1/ztp.json"
    assert "cumulus-provision-url" not in answer.options and answer.classes == ()


def test_no_reservation_no_answer():
    assert dhcp_answer(kea(), "44:38:39:00:00:99", CUMULUS_VC) is None


def test_precedence_reservation_then_subnet_then_class():
    """Kea 2.2 (what the real kea-dhcp4 does in test_dhcp_exchange.py's
    test_subnet_option_data_wins_over_class_option_data): a class's option only where the subnet has none."""
    config = kea()
    subnet = config["subnet4"][0]
    config["client-classes"][0]["option-data"].append({"name": "ntp-servers", "data": "10.0.0.2"})
    assert dhcp_answer(config, "44:38:39:00:00:01", CUMULUS_VC).options["ntp-servers"] == "10.0.0.2"
    subnet["option-data"].append({"name": "ntp-servers", "data": "10.0.0.1"})
    assert dhcp_answer(config, "44:38:39:00:00:01", CUMULUS_VC).options["ntp-servers"] == "10.0.0.1"
    subnet["reservations"][0]["option-data"].append({"name": "ntp-servers", "data": "10.0.0.3"})
    assert dhcp_answer(config, "44:38:39:00:00:01", CUMULUS_VC).options["ntp-servers"] == "10.0.0.3"
    # a client outside the class keeps the subnet's
    assert dhcp_answer(config, "1c:34:da:00:00:02", "SONiC").options["ntp-servers"] == "10.0.0.1"


@pytest.mark.parametrize("sent, matches", [("cumulus-linux x86_64", True), ("cumulus-linux", True),
                                            ("cumulus-lin", False), ("Cumulus-linux x86_64", False),
                                            (None, False), ("", False)])
def test_substring_of_option_60(sent, matches):
    assert class_matches("substring(option[60].hex,0,13) == 'cumulus-linux'", sent) is matches


def test_options_by_code_and_hex_data():
    config = kea()
    config["subnet4"][0]["reservations"][0]["option-data"] = [
        {"code": 67, "data": "boot"}, {"code": 12, "csv-format": False, "data": "6c:65:61:66"}]
    answer = dhcp_answer(config, "44:38:39:00:00:01", CUMULUS_VC)
    assert answer.options["boot-file-name"] == "boot" and answer.hostname == "leaf"


@pytest.mark.parametrize("test", ["option[60].hex == 'cumulus-linux'", "member('ALL')",
                                  "substring(option[61].hex,0,3) == 'abc'", "pkt4.mac == 0x443839000001"])
def test_any_other_class_test_is_refused_naming_it(test):
    config = kea()
    config["client-classes"][0]["test"] = test
    with pytest.raises(UnsupportedTest) as info:
        dhcp_answer(config, "44:38:39:00:00:01", CUMULUS_VC)
    assert test in str(info.value) and "client-classes[0] (cumulus)" in str(info.value)


def test_a_reservation_outside_its_subnet_is_a_kit_error():
    config = kea()
    config["subnet4"][0]["reservations"][0]["ip-address"] = "10.9.9.9"
    with pytest.raises(KitError, match="outside 192.168.0.0/24"):
        dhcp_answer(config, "44:38:39:00:00:01", CUMULUS_VC)


def test_load_kea_refuses_what_is_not_a_kea_config(tmp_path):
    with pytest.raises(KitError, match="no such file"):
        load_kea(tmp_path)
    (tmp_path / "kea-dhcp4.json").write_text("{not json")
    with pytest.raises(KitError, match="not JSON"):
        load_kea(tmp_path)
    (tmp_path / "kea-dhcp4.json").write_text(json.dumps({"Dhcp6": {}}))
    with pytest.raises(KitError, match="no Dhcp4"):
        load_kea(tmp_path)
    (tmp_path / "kea-dhcp4.json").write_text(json.dumps({"Dhcp4": kea()}))
    assert load_kea(tmp_path)["subnet4"][0]["id"] == 1


@pytest.fixture
def kit(tmp_path):
    http = tmp_path / "kit" / "http"
    (http / "ztp" / "sonic-1").mkdir(parents=True)
    (http / "switches" / "leaf-1").mkdir(parents=True)
    (http / "ztp" / "cumulus-ztp.sh").write_text("#!/bin/bash\n# CUMULUS-AUTOPROVISIONING\nexit 0\n")
    (http / "ztp" / "sonic-1" / "ztp.json").write_text("{}")
    (http / "switches" / "leaf-1" / "startup.yaml").write_text("- set: {}\n")
    (tmp_path / "secret").write_text("not for the switches")
    os.symlink(tmp_path / "secret", http / "switches" / "leak.txt")
    files = {rel: "0" * 64 for rel in ("ztp/cumulus-ztp.sh", "ztp/sonic-1/ztp.json", "switches/leaf-1/startup.yaml",
                                       "switches/leak.txt")}
    (http / "manifest.json").write_text(json.dumps({"files": files}))
    return KitServer(tmp_path / "kit")


def test_the_base_url_is_what_precedes_a_kit_file(kit):
    assert kit.base_of(f"{BASE}/ztp/cumulus-ztp.sh") == BASE
    assert kit.base_of("http://10.0.0.2/day0/ztp/sonic-1/ztp.json") == "http://10.0.0.2/day0"
    assert kit.base_of(f"{BASE}/ztp/other.sh") is None


def test_urls_under_the_base_map_to_kit_files_and_nothing_else(kit):
    assert kit.fetch(f"{BASE}/switches/leaf-1/startup.yaml", BASE) == b"- set: {}\n"
    assert kit.fetch(f"{BASE}/manifest.json", BASE).startswith(b"{")
    for url in (f"{BASE}/switches/leaf-2/startup.yaml", f"{BASE}/ztp/../ztp/cumulus-ztp.sh",
                f"{BASE}//ztp/cumulus-ztp.sh", "http://other:8080/ztp/cumulus-ztp.sh", f"{BASE}/ztp",
                f"{BASE}/switches/leak.txt"):
        assert kit.fetch(url, BASE) is None, url
    assert set(kit.url_map(BASE)) == {f"{BASE}/ztp/cumulus-ztp.sh", f"{BASE}/ztp/sonic-1/ztp.json",
                                      f"{BASE}/switches/leaf-1/startup.yaml", f"{BASE}/manifest.json"}


@pytest.mark.parametrize("base", [f"{BASE}?", f"{BASE}#", f"{BASE}/x?", "http://10.0.0.2:99999"])
def test_a_base_url_a_switch_cannot_fetch_under_serves_nothing(kit, base):
    # issue 34 finding 6: the lab stripped the empty ?/# itself and called such a kit provisioned;
    # a switch's client sends base + "?/ztp/..." as the path of the base alone, a 404
    url = f"{base}/ztp/cumulus-ztp.sh"
    assert kit.base_of(url) == base
    assert kit.fetch(url, base) is None
    assert kit.url_map(base) == {}


def test_a_fragment_is_not_sent_by_the_switch(kit):
    assert kit.fetch(f"{BASE}/ztp/cumulus-ztp.sh#x", BASE).startswith(b"#!/bin/bash")


def test_a_kit_without_a_manifest_is_refused(tmp_path):
    (tmp_path / "http").mkdir()
    with pytest.raises(KitError, match="no such file"):
        KitServer(tmp_path)
    (tmp_path / "http" / "manifest.json").write_text("[]")
    with pytest.raises(KitError, match="files"):
        KitServer(tmp_path)
