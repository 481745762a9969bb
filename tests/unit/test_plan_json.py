"""plan.json is streamed record by record (issue 14); its bytes must stay exactly what
json.dumps(plan_to_dict(plan), indent=1) printed before, the documented shape."""

from __future__ import annotations

import dataclasses
import json

import pytest
import yaml

from generator.intent.loader import load_intent
from generator.plan.compile import compile_plan
from generator.render.plan_json import iter_plan_json, plan_to_dict, render_plan_json
from tests.conftest import example


def _reference(plan) -> str:
    return json.dumps(plan_to_dict(plan), indent=1) + "\n"


def _plan(name: str, tmp_path=None, edit=None):
    path = example(name)
    if edit is not None:
        data = yaml.safe_load(path.read_text())
        edit(data)
        path = tmp_path / "fabric.yaml"
        path.write_text(yaml.safe_dump(data))
    return compile_plan(load_intent(path).intent)


@pytest.mark.parametrize("name", ["small", "medium", "medium-sonic", "large"])
def test_stream_is_json_dumps_indent_1(name: str) -> None:
    plan = _plan(name)
    text = render_plan_json(plan)
    assert text == _reference(plan)
    assert "".join(iter_plan_json(plan)) == text


def _lossy_fractional(data: dict) -> None:
    data["roce"]["mode"] = "lossy"
    data["topology"]["cables"] = {"host_leaf": 2.5, "leaf_spine": 0.3, "spine_super_spine": 12.75}


def test_lossy_plan_with_fractional_cables(tmp_path) -> None:
    plan = _plan("medium", tmp_path, _lossy_fractional)
    assert all(p.headroom is None for p in plan.ports)               # "headroom": null
    assert {lk.length_m for lk in plan.links} >= {2.5, 0.3}
    assert render_plan_json(plan) == _reference(plan)


def test_scalars_the_examples_do_not_hold() -> None:
    """Non-ASCII and quote-bearing names, exponent floats, None where ints usually are, empty lists."""
    plan = _plan("small")
    sw = dataclasses.replace(plan.switches[0], name='leaf-"ü"\\1', rail=None, unit=7, asn=4_294_967_294)
    port = plan.ports[0]._replace(cable_m=1e-05, device="gpü\t")       # Port and Link are tuple rows
    link = plan.links[0]._replace(length_m=1e16 + 2.5)
    host = dataclasses.replace(plan.hosts[0], nics=(), group=3)
    odd = dataclasses.replace(plan, fabric="fäbric", switches=(sw,), ports=(port, plan.ports[1]),
                              links=(link,), hosts=(host,))
    assert render_plan_json(odd) == _reference(odd)
    empty = dataclasses.replace(plan, switches=(), hosts=(), links=(), ports=())
    assert render_plan_json(empty) == _reference(empty)
    json.loads(render_plan_json(empty))
