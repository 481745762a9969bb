"""Validation that teaches (issue 27, item 3): did-you-mean for keys and choices, NOS releases
checked against the releases fabricgen renders, unquoted numbers quoted back as written."""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.checks.registry import RULES
from generator.checks.runner import load_rules, run_checks
from generator.intent.loader import IntentError, load_intent, parse_yaml, validate_data
from generator.intent.releases import cumulus_releases, sonic_releases

BASE = """\
fabric: {name: t}
topology:
  kind: leaf-spine
  nodes: 4
  rails: 2
"""


def problem(text: str, path: str | None = None):
    """The one problem of an intent text (file t.yaml) as the loader reports it, or the one at `path`."""
    with pytest.raises(IntentError) as exc:
        validate_data(*parse_yaml(text, "t.yaml"), "t.yaml")
    (p,) = [p for p in exc.value.problems if path in (None, p.path)]
    return p


def findings(tmp_path: Path, text: str) -> dict[str, list[str]]:
    path = tmp_path / "fabric.yaml"
    path.write_text(text)
    result = run_checks(load_intent(path))
    out: dict[str, list[str]] = {}
    for f in result.findings:
        out.setdefault(f.code, []).append(f.message)
    return out


# did you mean: keys at every level -------------------------------------------------------------

@pytest.mark.parametrize("text,line,path,meant", [
    (BASE + "  nodes_per_su: 16\n", 6, "topology.nodes_per_su", "nodes_per_unit"),
    (BASE.replace("topology:", "toplogy:"), 2, "toplogy", "topology"),
    (BASE + "routing: {bdf: true}\n", 6, "routing.bdf", "bfd"),
    (BASE + "routing:\n  adaptive_routeing: true\n", 7, "routing.adaptive_routeing", "adaptive_routing"),
    # an alias (`global` is global_ in the model) is offered as written in YAML
    (BASE + "  cables: {globl: 40}\n", 6, "topology.cables.globl", "global"),
    (BASE + "deploy:\n  hosts:\n    canary_hosts: 2\n", 8, "deploy.hosts.canary_hosts", "canary"),
    # inside a list item
    (BASE + "management:\n  users:\n    - {name: ops, rol: nvue-admin}\n", 8, "management.users[0].rol", "role"),
])
def test_a_misspelt_key_gets_the_key_it_resembles(text, line, path, meant):
    p = problem(text, path)     # toplogy: also "topology: required key is missing"
    assert (p.line, p.path, p.message) == (line, path, f"unknown key: did you mean {meant}?")
    assert str(p).count("\n") == 0


def test_an_unknown_key_like_no_other_lists_the_keys_of_its_mapping():
    p = problem(BASE + "routing: {shortest_path_first: true}\n")
    assert p.path == "routing.shortest_path_first"
    assert p.message.startswith("unknown key: the keys here are max_paths, bfd, adaptive_routing")


# did you mean: choices --------------------------------------------------------------------------

@pytest.mark.parametrize("written,meant", [("rail-optimised", "rail-optimized"), ("leafspine", "leaf-spine"),
                                           ("dragonfly", "dragonfly-plus"), ("Three-Tier", "three-tier")])
def test_a_misspelt_kind_gets_the_kind_not_the_lecture(written, meant):
    p = problem(BASE.replace("leaf-spine", written))
    assert (p.line, p.path, p.code) == (3, "topology.kind", "FG101")
    assert p.message == f"{written!r} is not a topology kind: did you mean {meant!r}?"


def test_a_kind_like_none_of_them_still_gets_the_reason():
    p = problem(BASE.replace("leaf-spine", "torus"))
    assert "not supported" in p.message and "deadlock" in p.message and "did you mean" not in p.message


@pytest.mark.parametrize("text,line,path,meant", [
    (BASE + "roce: {mode: losless}\n", 6, "roce.mode", "lossless"),
    (BASE + "hosts: {nic_tooling: dbc}\n", 6, "hosts.nic_tooling", "dcb"),
    (BASE + "switch_os: {name: sonci}\n", 6, "switch_os.name", "sonic"),
    (BASE + "  cable_types: {leaf_spine: AOCC}\n", 6, "topology.cable_types.leaf_spine", "AOC"),
    (BASE + "management:\n  users:\n    - name: ops\n      role: nvue-admn\n", 9, "management.users[0].role",
     "nvue-admin"),
    (BASE + "deploy:\n  hosts: {scheduler: slrum, drain: 'd {host}', undrain: 'u {host}'}\n", 7,
     "deploy.hosts.scheduler", "slurm"),
])
def test_a_misspelt_choice_gets_the_choice_it_resembles(text, line, path, meant):
    p = problem(text)
    assert (p.line, p.path) == (line, path)
    assert p.message.endswith(f": did you mean {meant}?"), p.message


# NOS releases -----------------------------------------------------------------------------------

def newest(releases: tuple[str, ...]) -> str:
    return max(releases, key=lambda r: tuple(int(x) for x in r.split(".")))


def test_the_known_releases_are_those_fabricgen_was_built_from():
    # nvueschema models Cumulus Linux 5.0 (NVUE's first release) to at least 5.18
    assert cumulus_releases()[0] == "5.0" and "5.18" in cumulus_releases()
    # generator/data/sonic_gcu_releases.yaml: the GCU allow-lists read from sonic-utilities' branches
    assert {"202311", "202405", "202411", "202505", "202511"} <= set(sonic_releases())


@pytest.mark.parametrize("switch_os,says", [
    ('{name: cumulus, version: "4.4"}', "Cumulus Linux 4.4 has no NVUE"),
    ('{name: cumulus, version: "3.7"}', "Cumulus Linux 3.7 has no NVUE"),
    ('{name: cumulus, version: "6.0"}', "Cumulus Linux 6.0 is a release line fabricgen does not know"),
    ('{name: cumulus, version: "202411"}', "'202411' is a SONiC release name"),
    ('{version: "2024.11"}', "'2024.11' is a SONiC release name"),
    ('{name: sonic, version: "5.11"}', "'5.11' is a Cumulus Linux release"),
    ('{name: sonic, version: "202305"}', "SONiC 202305 is older than the releases fabricgen knows"),
    ('{name: sonic, version: "202413"}', 'SONiC 202413 is not a release fabricgen knows: did you mean "202411"?'),
    ('{name: cumulus, version: "five"}', "'five' is not a release"),
    ('{name: cumulus, version: "5.11-rc1"}', "'5.11-rc1' is not a release"),
])
def test_a_release_fabricgen_cannot_render_is_an_error(switch_os, says):
    p = problem(BASE + f"switch_os: {switch_os}\n")
    assert (p.line, p.path, p.code) == (6, "switch_os.version", "FG270")
    assert p.message.startswith(says), p.message


def test_the_renderable_releases_are_accepted_without_a_release_warning(tmp_path):
    for os_name, versions in (("cumulus", ("5.0", "5.11", "5.15.1", "5.18")), ("sonic", ("202311", "2024.11"))):
        for version in versions:
            extra = "addressing: {fabric_links: 10.254.0.0/16}\n" if os_name == "sonic" else ""
            got = findings(tmp_path, BASE + f'switch_os: {{name: {os_name}, version: "{version}"}}\n' + extra)
            assert "FG271" not in got, (version, got["FG271"])
            assert not [c for c in got if c in ("FG270",)]


def test_a_newer_cumulus_release_renders_as_the_newest_known_with_a_warning(tmp_path):
    got = findings(tmp_path, BASE + 'switch_os: {name: cumulus, version: "5.99"}\n')
    last = newest(cumulus_releases())
    (message,) = got["FG271"]
    assert message.startswith(f"Cumulus Linux 5.99 is newer than the newest release fabricgen knows: rendered as "
                              f"{last} ")
    assert not [c for c, _ in got.items() if RULES[c].severity == "error"], got


def test_a_newer_sonic_release_renders_as_the_newest_known_with_a_warning(tmp_path):
    got = findings(tmp_path, BASE + 'switch_os: {name: sonic, version: "202605"}\n'
                                    "addressing: {fabric_links: 10.254.0.0/16}\n")
    (message,) = got["FG271"]
    assert f"config_db is rendered as for {newest(sonic_releases())}" in message
    assert "sonic_gcu_releases.yaml" in message


def test_release_rules_are_explained():
    load_rules()
    assert RULES["FG270"].stage == "compile" and list(RULES["FG270"].func(None)) == []
    assert RULES["FG271"].severity == "warning"
    assert "5.10" in RULES["FG270"].explanation and "NVUE" in RULES["FG270"].explanation


# unquoted numbers: quoted back as written --------------------------------------------------------

@pytest.mark.parametrize("written,number", [("5.10", "5.1"), ("5.1", "5.1"), ("5.15", "5.15"), ("202411", "202411")])
def test_an_unquoted_version_is_quoted_back_as_written(written, number):
    p = problem(BASE + f"switch_os:\n  name: sonic\n  version: {written}\n")
    assert (p.line, p.path) == (8, "switch_os.version")
    assert p.message.startswith(f'got the number {number}: write it quoted: "{written}" (YAML reads'), p.message


def test_without_the_yaml_text_the_number_itself_is_the_example():
    with pytest.raises(IntentError) as exc:
        validate_data({"fabric": {"name": "t"}, "topology": {"kind": "leaf-spine", "nodes": 4},
                       "switch_os": {"version": 5.1}}, {}, "t.yaml")
    (p,) = exc.value.problems
    assert p.message.startswith('got the number 5.1: write it quoted, e.g. "5.1"')


def test_an_unquoted_ratio_is_quoted_back_as_written():
    p = problem(BASE + "  oversubscription: 3:1\n")
    # YAML 1.1 base 60: 3 * 60 + 1
    assert p.message == 'got the number 181: write it quoted: "3:1" (an unquoted ratio is a YAML base-60 number)'
