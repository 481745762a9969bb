"""Secret paths per OS (generator/secrets_redact.py): values become `<redacted sha256:…>` in trees,
drift/plan change paths, `nv config diff` YAML, config_db unified diffs and GCU patch lines."""

from __future__ import annotations

import difflib
import hashlib
import json

import yaml

from generator.drift.compare import FeatureResult
from generator.drift.report import (
    DeviceResult,
    DriftReport,
    format_json,
    format_markdown,
    format_table,
    redacted,
)
from generator.secrets_redact import redact_change, redact_text, redact_tree

SECRETS = ["Md5-Key-1", "$6$salt$hash", "Tacacs-Key", "comm-ro-9", "Bgp-Pw-2", "Snmp-Auth-3"]


def mark(secret: str) -> str:
    return f"<redacted sha256:{hashlib.sha256(secret.encode()).hexdigest()[:12]}>"


NVUE = {"interface": {"swp1": {"router": {"ospf": {"authentication": {"enable": "on", "md5-key": "Md5-Key-1",
                                                                         "message-digest-key": 7}}}}},
        "system": {"aaa": {"user": {"admin": {"hashed-password": "$6$salt$hash",
                                              "ssh": {"authorized-key": {"k1": {"key": "AAAAC3Nz", "type": "ed"}}}}},
                           "tacacs": {"server": {"5": {"host": "192.0.2.5", "secret": "Tacacs-Key"}}}}},
        "service": {"snmp-server": {"readonly-community": {"comm-ro-9": {"access": {"any": {}}}}}},
        "router": {"policy": {"route-map": {"m": {"rule": {"1": {"set": {"community": {"65000:1": {}}}}}}}}}}
SONIC = {"BGP_NEIGHBOR": {"10.0.0.1": {"asn": "65001", "auth_password": "Bgp-Pw-2"}},
         "TACPLUS": {"global": {"passkey": "Tacacs-Key"}},
         "SNMP_COMMUNITY": {"comm-ro-9": {"TYPE": "RO"}},
         "SNMP_USER": {"u": {"SNMP_USER_AUTH_PASSWORD": "Snmp-Auth-3", "SNMP_USER_AUTH_TYPE": "SHA"}},
         "PORT": {"Ethernet0": {"mtu": "9100"}}}


def test_nvue_tree_secrets_redacted_public_values_kept():
    out = json.dumps(redact_tree("cumulus", NVUE))
    for secret in ("Md5-Key-1", "$6$salt$hash", "Tacacs-Key", "comm-ro-9"):
        assert secret not in out and mark(secret) in out
    # an SSH public key, the OSPF key ID and a BGP community are not secrets
    assert "AAAAC3Nz" in out and '"message-digest-key": 7' in out and "65000:1" in out


def test_sonic_tree_secrets_redacted():
    out = json.dumps(redact_tree("sonic", SONIC))
    for secret in ("Bgp-Pw-2", "Tacacs-Key", "comm-ro-9", "Snmp-Auth-3"):
        assert secret not in out and mark(secret) in out
    assert '"9100"' in out and '"SHA"' in out


def test_a_changed_secret_is_a_changed_hash():
    a = redact_tree("sonic", SONIC)
    b = redact_tree("sonic", {**SONIC, "TACPLUS": {"global": {"passkey": "Other-Key"}}})
    assert a["TACPLUS"] != b["TACPLUS"] and a["PORT"] == b["PORT"]
    assert redact_tree("sonic", SONIC) == a          # deterministic


def test_change_paths_and_subtrees():
    path, value = redact_change("cumulus", "interface.swp1.router", NVUE["interface"]["swp1"]["router"])
    assert "Md5-Key-1" not in json.dumps(value) and path == "interface.swp1.router"
    path, value = redact_change("sonic", 'SNMP_COMMUNITY["comm-ro-9"].TYPE', "RO")
    assert "comm-ro-9" not in path and value == "RO"
    assert redact_change("sonic", 'BGP_NEIGHBOR["10.0.0.1"].auth_password', "Bgp-Pw-2")[1] == mark("Bgp-Pw-2")


def test_nvue_diff_yaml_and_sonic_diffs():
    nv = yaml.safe_dump([{"set": NVUE}], sort_keys=False)
    out = redact_text("cumulus", nv)
    assert not [s for s in SECRETS if s in out] and mark("Md5-Key-1") in out and "AAAAC3Nz" in out
    assert yaml.safe_load(out)                        # still YAML
    before = json.dumps({}, indent=4).splitlines(True)
    after = json.dumps(SONIC, indent=4, sort_keys=True).splitlines(True)
    out = redact_text("sonic", "".join(difflib.unified_diff(before, after, "running", "candidate")))
    assert not [s for s in SECRETS if s in out] and mark("Bgp-Pw-2") in out and '"9100"' in out
    patch = ('add /BGP_NEIGHBOR/10.0.0.1 {"asn": "65001", "auth_password": "Bgp-Pw-2"}\n'
             'replace /TACPLUS/global/passkey "Tacacs-Key"\nadd /SNMP_COMMUNITY/comm-ro-9 {"TYPE": "RO"}\n'
             'remove /PORT/Ethernet4')
    out = redact_text("sonic", patch)
    assert not [s for s in SECRETS if s in out] and mark("Tacacs-Key") in out and "remove /PORT/Ethernet4" in out


def test_drift_report_formats_redact_even_unredacted_results():
    feature = FeatureResult("bgp", extra=[{"path": "interface.swp1.router.ospf.authentication.md5-key",
                                           "actual": "Md5-Key-1"}])
    report = redacted(DriftReport("f", [DeviceResult("s1", "switch", "drift", {"bgp": feature})], 0.0, 1.0))
    for fmt in (format_json, format_table, format_markdown):
        text = fmt(report)
        # markdown shows the marker's angle brackets as entities (no raw HTML in a step summary)
        marker = mark("Md5-Key-1") if fmt is not format_markdown else (
            mark("Md5-Key-1").replace("<", "&lt;").replace(">", "&gt;"))
        assert "Md5-Key-1" not in text and marker in text


def test_only_secrets_change_in_text():
    # a line with no secret is given back as written, spaces and all (a diff of whitespace stays one)
    text = "a: b  \nkey :  v\n- x  \npassword:  hunter2  \n"
    assert redact_text(None, text).split("\n") == ["a: b  ", "key :  v", "- x  ",
                                                   "password:  " + mark("hunter2"), ""]
    # no rule's names in a text: the text itself (NTP_KEY's `value` alone is no secret)
    plain = "value: 3\nmtu: 9216\n"
    assert redact_text("sonic", plain) is plain


def test_a_key_spelled_with_escapes_is_still_a_secret():
    # the text holds no "password", but JSON and YAML read these keys as password
    for text in ('{\n  "\\u0070assword": "hunter2"\n}', '"\\x70assword": hunter2\n', '"\\U00000070assword": hunter2\n'):
        assert "hunter2" not in redact_text("cumulus", text), text
