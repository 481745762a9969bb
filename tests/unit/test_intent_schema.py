"""`fabricgen schema` (issue 27, item 4): a valid JSON Schema that every example satisfies, enums,
user-facing defaults, a description on every key, and the README's key table made from it."""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml

from generator.intent.key_reference import BEGIN, END, key_table
from generator.intent.loader import validate_data
from generator.intent.model import Intent
from generator.intent.schema import intent_schema
from tests.cli_runner import run_cli
from tests.conftest import REPO

jsonschema = pytest.importorskip("jsonschema")

INVENTORIES = sorted(REPO.glob("inventories/*/fabric.yaml"))


@pytest.fixture(scope="module")
def schema() -> dict[str, Any]:
    """What `fabricgen schema` prints, as an editor reads it."""
    r = run_cli("schema", cwd=REPO)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def validator(schema):
    cls = jsonschema.validators.validator_for(schema)
    assert cls is jsonschema.Draft202012Validator      # the dialect the document declares
    cls.check_schema(schema)
    return cls(schema)


def resolve(schema: dict, node: dict) -> dict:
    """Where an editor looks for completions: through $ref, `X | null` and list items."""
    if "$ref" in node:
        return resolve(schema, schema["$defs"][node["$ref"].rsplit("/", 1)[1]])
    for alt in node.get("anyOf", []):
        if alt.get("type") != "null":
            return resolve(schema, alt)
    if node.get("type") == "array":
        return resolve(schema, node["items"])
    return node


def at(schema: dict, path: str) -> tuple[dict, dict]:
    """(property as written, what it resolves to) at a dotted key path."""
    node, prop = schema, schema
    for key in path.split("."):
        prop = resolve(schema, node)["properties"][key]
        node = prop
    return prop, resolve(schema, prop)


@pytest.mark.parametrize("intent", INVENTORIES, ids=[p.parent.name for p in INVENTORIES])
def test_every_example_satisfies_the_schema(schema, intent):
    errors = [f"{list(e.path)}: {e.message}" for e in validator(schema).iter_errors(yaml.safe_load(intent.read_text()))]
    assert errors == []


@pytest.mark.parametrize("change,where", [
    (lambda d: d["topology"].update(kind="torus"), ["topology", "kind"]),
    (lambda d: d["topology"].update(kind="rail-optimised"), ["topology", "kind"]),
    (lambda d: d["topology"].update(nodes_per_su=16), ["topology"]),          # unknown key
    (lambda d: d["topology"].update(nic_speed=400), ["topology", "nic_speed"]),  # a bare number
    (lambda d: d["switch_os"].update(version=5.1), ["switch_os", "version"]),    # unquoted 5.10
    (lambda d: d.setdefault("routing", {}).update(bfd="yes"), ["routing", "bfd"]),
])
def test_the_schema_refuses_what_the_loader_refuses(schema, change, where):
    data = yaml.safe_load((REPO / "inventories/medium/fabric.yaml").read_text())
    change(data)
    errors = list(validator(schema).iter_errors(data))
    assert [list(e.path) for e in errors] == [where], [e.message for e in errors]


def test_an_editor_completes_the_topology_kind(schema):
    prop, target = at(schema, "topology.kind")
    # DESIGN.md: single-switch | leaf-spine | rail-optimized | three-tier | dragonfly-plus
    assert target["enum"] == ["single-switch", "leaf-spine", "rail-optimized", "three-tier", "dragonfly-plus"]
    assert prop["description"]
    assert at(schema, "switch_os.name")[1]["enum"] == ["cumulus", "sonic"]
    assert at(schema, "roce.mode")[1]["enum"] == ["lossless", "lossy"]
    assert at(schema, "management.users.role")[1]["enum"] == ["system-admin", "nvue-admin", "nvue-monitor"]


def test_an_editor_offers_the_routing_keys_with_descriptions(schema):
    _, routing = at(schema, "routing")
    offered = routing["properties"]
    assert {"max_paths", "bfd", "adaptive_routing"} <= set(offered)
    assert "BFD" in offered["bfd"]["description"]
    assert "adaptive routing" in offered["adaptive_routing"]["description"]
    assert offered["bfd"]["default"] is False and offered["adaptive_routing"]["default"] is False


def _properties(schema: dict, node: dict, path: str = ""):
    for key, prop in resolve(schema, node).get("properties", {}).items():
        yield f"{path}{key}", prop
        yield from _properties(schema, prop, f"{path}{key}.")


def test_every_key_has_a_description(schema):
    missing = [path for path, prop in _properties(schema, schema) if not prop.get("description")]
    assert missing == []
    assert len(list(_properties(schema, schema))) > 100


def test_defaults_are_as_a_user_writes_them(schema):
    assert at(schema, "topology.nic_speed")[0]["default"] == "400G"
    assert at(schema, "topology.oversubscription")[0]["default"] == "1:1"
    assert at(schema, "switch_os.version")[0]["default"] == "5.11"
    # derived from other keys or optional: described, never a constant (nor null)
    for path in ("routing.max_paths", "management.gateway", "hosts.rails", "topology.build_out",
                 "roce.pfc_watchdog_timers.detection_ms"):
        assert "default" not in at(schema, path)[0], path
        assert "unset" in at(schema, path)[0]["description"], path
    # a section shows no dump of itself: its keys carry their defaults
    for path in ("roce", "roce.ecn", "deploy", "topology.switches"):
        assert "default" not in at(schema, path)[0], path


def test_the_shown_defaults_are_the_defaults(schema):
    """An intent that spells out every default the schema shows is the intent that omits them."""
    def spelled(node: dict) -> dict:
        out = {}
        for key, prop in resolve(schema, node).get("properties", {}).items():
            if "default" in prop:
                out[key] = prop["default"]
            elif "properties" in resolve(schema, prop) and prop.get("type") != "array" and \
                    not any(a.get("type") == "array" for a in prop.get("anyOf", [])):
                inner = spelled(prop)
                if inner:
                    out[key] = inner
        return out

    required = {"fabric": {"name": "t"}, "topology": {"kind": "leaf-spine", "nodes": 4}}
    full = spelled(schema)
    for key, value in required.items():
        full[key] = {**full.get(key, {}), **value}
    assert full["topology"]["nic_speed"] == "400G"
    # management, workload and layout are optional sections: spelling their defaults adds them
    full.pop("management", None)
    full.pop("workload", None)
    full.pop("layout", None)
    assert validate_data(full, {}, "t.yaml") == validate_data(required, {}, "t.yaml")


def test_the_readme_key_table_is_the_models(schema):
    readme = (REPO / "README.md").read_text()
    start, end = readme.index(BEGIN), readme.index(END) + len(END) + 1
    assert readme[start:end] == key_table(), \
        "README's key table differs from the model: python -m generator.intent.key_reference --write README.md"
    # every key the schema has is a row, routing's among them
    for path, _ in _properties(schema, schema):
        assert f"| `{path.replace('users.', 'users[].').replace('rails.', 'rails[].').replace('extra.', 'extra[].')}` |" in readme, path
    assert "| `routing.bfd` |" in readme and "| `routing.adaptive_routing` |" in readme


def test_the_schema_is_the_model():
    assert intent_schema()["properties"].keys() == {f.alias or n for n, f in Intent.model_fields.items()}
