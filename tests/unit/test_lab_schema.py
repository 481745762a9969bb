"""NVUE path validation of the lab simulator (pure logic, no SSH)."""

from __future__ import annotations

import pytest

from generator.lab import build_schema
from generator.lab.schema import DATA_FILE, SchemaError, resolve_cli, schema_for, validate_tree


def test_committed_path_list_matches_the_builder(tmp_path):
    if not build_schema.DEFAULT_REFERENCE.is_dir():
        pytest.skip("reference TSVs not present on this machine")
    out = tmp_path / "paths.tsv"
    build_schema.main(["--out", str(out)])
    assert out.read_text() == DATA_FILE.read_text()


@pytest.mark.parametrize(("tokens", "keys", "value"), [
    ("qos roce mode lossless", ["qos", "roce", "mode"], "lossless"),
    ("interface swp1 link mtu 9216", ["interface", "swp1", "link", "mtu"], "9216"),
    ("interface lo ip address 10.0.0.1/32", ["interface", "lo", "ip", "address", "10.0.0.1/32"], None),
    ("interface swp1", ["interface", "swp1"], None),
])
def test_resolve_cli_splits_keys_and_value(tokens, keys, value):
    assert resolve_cli(schema_for("5.11"), tokens.split()) == (keys, value)


def test_unknown_path_refused():
    with pytest.raises(SchemaError, match="Invalid config path: qos roce colour"):
        resolve_cli(schema_for("5.11"), "qos roce colour blue".split())


def test_version_generations():
    old, new = schema_for("5.14"), schema_for("5.15")
    resolve_cli(old, "qos roce enable on".split())
    resolve_cli(new, "qos roce state enabled".split())
    with pytest.raises(SchemaError):
        resolve_cli(new, "qos roce enable on".split())
    with pytest.raises(SchemaError):
        resolve_cli(old, "qos roce state enabled".split())
    resolve_cli(new, "interface swp1 ipv4 address 10.0.0.0/31".split())
    with pytest.raises(SchemaError):
        resolve_cli(new, "interface swp1 ip address 10.0.0.0/31".split())


def test_introduced_in_is_respected():
    resolve_cli(schema_for("5.17"), "interface swp1 qos shared-headroom-pool enabled".split())
    with pytest.raises(SchemaError):
        resolve_cli(schema_for("5.11"), "interface swp1 qos shared-headroom-pool enabled".split())


def test_validate_tree_accepts_nvue_yaml_shapes():
    validate_tree(schema_for("5.11"), {
        "interface": {"swp1": {"type": "swp", "link": {"mtu": "9216", "state": {"up": {}},
                                                       "breakout": {"2x": {}}},
                               "ip": {"address": {"10.0.0.0/31": {}}}}},
        "qos": {"roce": {"enable": "on", "mode": "lossless"},
                "pfc": {"roce": {"switch-priority": {"3": {}}, "port-buffer": "20000"}}},
    })


def test_validate_tree_refuses_unknown_keys_and_scalars_on_containers():
    with pytest.raises(SchemaError, match="interface swp1 lnk"):
        validate_tree(schema_for("5.11"), {"interface": {"swp1": {"lnk": {"mtu": "9216"}}}})
    with pytest.raises(SchemaError, match="container"):
        validate_tree(schema_for("5.11"), {"interface": {"swp1": {"link": "fast"}}})
