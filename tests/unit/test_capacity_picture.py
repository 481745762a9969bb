"""The topology picture (issue 38 item 3): what it counts comes from the compiled plans, and
`capacity -o DIR` writes it as a byte-stable SVG and PNG. The page in Chromium:
tests/integration/test_report_chromium.py."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from generator.capacity.command import run_capacity
from generator.capacity.picture_model import has_blocks, picture_of
from generator.intent.loader import load_intent
from generator.plan.compile import compile_plan
from generator.plan.growth import build_out_intent
from tests.conftest import example

PHASED = Path(__file__).resolve().parents[2] / "inventories" / "phased" / "fabric.yaml"


def plans(path: Path):
    intent = load_intent(str(path)).intent
    return compile_plan(intent), compile_plan(build_out_intent(intent))


def grown(tmp_path: Path) -> Path:
    """inventories/phased at 64 installed nodes of 128."""
    path = tmp_path / "fabric.yaml"
    path.write_text(PHASED.read_text().replace("build_out: {nodes: 256}", "build_out: {nodes: 128}"))
    return path


def test_installed_units_and_the_build_out_from_the_plans(tmp_path):
    plan, full = plans(grown(tmp_path))
    p = picture_of(plan, full)
    assert [(b.number, b.installed) for b in p.blocks] == [(1, True), (2, True), (3, False), (4, False)]
    # per unit, independently: the hosts of each unit and the leaves their NICs reach
    for b in p.blocks:
        source = plan if b.installed else full
        hosts = [h for h in source.hosts if h.unit == b.number]
        assert (b.hosts, b.leaves) == (len(hosts), len({n.switch for h in hosts for n in h.nics}))
    assert p.top == tuple(f"phased-spine-{i}" for i in range(1, 9)) and p.top_model == "SN5600"
    # unit 1 opened: a leaf per rail, each host's NIC of rail r on the rail-r leaf
    assert [rail for _, rail in p.open_unit.leaves] == list(range(8))
    rail_of = dict(p.open_unit.leaves)
    assert all(rail_of[leaf] == rail for _, nics in p.open_unit.hosts for rail, leaf in nics)
    assert p.open_unit.more_hosts == 32 - len(p.open_unit.hosts)
    # the fan-out of spine 1, counted from the links
    links = Counter(lk.b_device if lk.a_device == "phased-spine-1" else lk.a_device
                    for lk in plan.links if "phased-spine-1" in (lk.a_device, lk.b_device))
    assert p.fanout.startswith(f"fan-out: each spine has {sum(links.values())} x 400G to {len(links)} leaves; ")


def test_dragonfly_groups_and_their_global_links():
    plan = compile_plan(load_intent(str(example("medium"))).intent)
    p = picture_of(plan)
    assert (p.word, p.top_role, p.top) == ("group", None, ())
    assert [(b.number, b.installed, b.spines, b.leaves, b.hosts) for b in p.blocks] == [
        (1, True, 2, 4, 16), (2, True, 2, 4, 16)]
    roles = {sw.name: sw.role for sw in plan.switches}
    global_links = [lk for lk in plan.links if roles.get(lk.a_device) == roles.get(lk.b_device) == "spine"]
    assert p.global_links.startswith(f"global links: {len(global_links)} x 400G ")
    assert p.open_unit.spines == ("medium-spine-g1-1", "medium-spine-g1-2")


def test_capacity_out_writes_the_picture_as_svg_and_png_byte_stable(tmp_path, capsys):
    path = grown(tmp_path)
    for d in ("a", "b"):
        assert run_capacity(str(path), message_size=None, what_if=[], fmt="json", naive=False,
                            output_dir=str(tmp_path / d)) == 0
    capsys.readouterr()
    svg, png = (tmp_path / "a" / "topology.svg").read_text(), (tmp_path / "a" / "topology.png").read_bytes()
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and 'id="topo-unit-4"' in svg
    for name in ("topology.svg", "topology.png"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


def test_a_fabric_without_units_keeps_the_device_graph(tmp_path, capsys):
    plan = compile_plan(load_intent(str(example("small"))).intent)
    assert not has_blocks(plan)
    assert run_capacity(str(example("small")), message_size=None, what_if=[], fmt="json", naive=False,
                        output_dir=str(tmp_path / "out")) == 0
    capsys.readouterr()
    assert not (tmp_path / "out" / "topology.svg").exists()
