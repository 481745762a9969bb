"""The managed-subtree definition (generator/render/managed.py), the candidate built from it
(generator/deploy/candidate.py) and the NVUE document reader/writer it relies on.

The running configs below are written by hand after the factory startup.yaml DEVICE_STATE.md
describes (eth0 in the mgmt VRF, the cumulus user, the default ACLs, the API), plus things
operators add (LLDP, `system global`, another VRF).
"""

from __future__ import annotations

import textwrap

import pytest

from generator.checks.runner import run_checks
from generator.deploy.candidate import build_candidate
from generator.intent.loader import load_intent
from generator.render.managed import comparable, first_difference, for_plan, managed_set
from generator.render.nvue_document import dump_document, load_tree
from generator.render.output import render_files

HASH = "$6$fabricgenlab$ZzKqIY2yQnc7sTRpm9.N1Bv0Pj4Pt3cB0nLK7Pz4x1kX4ty2tMN4cwXkqPU1Zj8CDT9ctYnBx4Uuq9AVPHTYy/"

FACTORY_PLUS = """\
- header:
    model: SN5600
    nvue-api-version: nvue_v1
    rev-id: 1.0.0
    version: Cumulus Linux 5.11.0
- set:
    interface:
      eth0:
        ip:
          address:
            192.168.0.17/20: {}
          gateway:
            192.168.0.1: {}
          vrf: mgmt
        type: eth
      swp30:
        type: swp
        link:
          mtu: 1500
    qos:
      roce:
        enable: on
        mode: lossy
    service:
      lldp:
        tx-interval: 10
      ntp:
        mgmt:
          server:
            10.1.1.1: {}
    system:
      aaa:
        authentication-order:
          '10': {}
        user:
          cumulus:
            hashed-password: "$6$old$x"
            role: system-admin
      api:
        state: enabled
      control-plane:
        acl:
          acl-default-dos:
            inbound: {}
          acl-default-whitelist:
            inbound: {}
      global:
        system-mac: 44:38:39:00:00:01
      hostname: cumulus
      timezone: Etc/UTC
    vrf:
      blue:
        table: auto
      mgmt: {}
"""

RENDERED = """\
- header:
    model: fabricgen
    nvue-api-version: nvue_v1
    rev-id: 1.0
    version: Cumulus Linux 5.11
- set:
    interface:
      lo:
        type: loopback
        ip:
          address:
            10.255.0.1/32: {}
      swp1:
        type: swp
        link:
          mtu: 9216
    qos:
      pfc:
        roce-lossless-3m:
          switch-priority:
            '3': {}
      roce:
        enable: on
        mode: lossless
    router:
      bgp:
        autonomous-system: 65101
        enable: on
    system:
      hostname: leaf1
    vrf:
      default:
        router:
          bgp:
            enable: on
"""


def test_without_management_the_switch_keeps_its_management_plane():
    _, running = load_tree(FACTORY_PLUS)
    mine, theirs = managed_set(False).split(running)
    # fabricgen's: every port but eth0, qos, the hostname
    assert mine == {"interface": {"swp30": running["interface"]["swp30"]}, "qos": running["qos"],
                    "system": {"hostname": "cumulus"}}
    assert set(theirs) == {"interface", "service", "system", "vrf"}
    assert set(theirs["interface"]) == {"eth0"}
    assert set(theirs["system"]) == {"aaa", "api", "control-plane", "global", "timezone"}
    assert set(theirs["vrf"]) == {"blue", "mgmt"}
    assert theirs["service"] == running["service"]


def test_with_management_fabricgen_owns_eth0_users_and_services_but_not_the_rest():
    _, running = load_tree(FACTORY_PLUS)
    mine, theirs = managed_set(True).split(running)
    assert set(mine["interface"]) == {"eth0", "swp30"}
    assert set(mine["system"]) == {"aaa", "api", "control-plane", "hostname", "timezone"}
    assert set(mine["system"]["aaa"]) == {"user"}                 # only the users
    assert mine["service"] == {"ntp": running["service"]["ntp"]}
    assert mine["vrf"] == {"mgmt": {}}
    # TACACS/authentication order, LLDP, global MAC and other VRFs stay the switch's
    assert theirs == {"service": {"lldp": {"tx-interval": "10"}},
                      "system": {"aaa": {"authentication-order": {"10": {}}},
                                 "global": {"system-mac": "44:38:39:00:00:01"}},
                      "vrf": {"blue": {"table": "auto"}}}


def test_management_without_users_keeps_the_switch_accounts(tmp_path):
    """An empty managed user list would delete every account, the deploy's own included: with
    `management:` but no `users`, fabricgen renders no `system aaa` and owns no user."""
    intent = tmp_path / "fabric.yaml"
    intent.write_text(textwrap.dedent("""\
        fabric: {name: nu}
        topology: {kind: single-switch, nodes: 2, gpus_per_node: 8, rails: 2, switches: {leaf: {model: SN4700}}}
        switch_os: {name: cumulus, version: "5.11"}
        addressing: {management: 10.20.0.0/24}
        management: {ntp: [10.20.0.5]}
        """))
    checked = run_checks(load_intent(intent))
    assert not checked.errors, [f.one_line() for f in checked.errors]
    files = render_files(checked.plan, intent.read_text())
    _, tree = load_tree(files["switches/nu-leaf-1/startup.yaml"])
    assert "aaa" not in tree["system"] and "eth0" in tree["interface"]
    managed = for_plan(checked.plan)
    _, running = load_tree(FACTORY_PLUS)
    mine, theirs = managed.split(running)
    assert "aaa" not in mine["system"] and theirs["system"]["aaa"]["user"] == running["system"]["aaa"]["user"]
    assert "eth0" in mine["interface"]


def test_candidate_is_the_rendered_file_plus_what_fabricgen_does_not_manage():
    candidate = build_candidate(RENDERED, FACTORY_PLUS, managed_set(False))
    header, tree = load_tree(candidate.text)
    assert header["model"] == "fabricgen"
    _, rendered = load_tree(RENDERED)
    _, running = load_tree(FACTORY_PLUS)
    assert tree["interface"]["eth0"] == running["interface"]["eth0"]
    assert "swp30" not in tree["interface"]                     # a managed port the plan lacks goes
    assert tree["qos"] == rendered["qos"]                        # managed: the rendered value wins
    assert tree["system"]["hostname"] == "leaf1"
    assert tree["system"]["aaa"] == running["system"]["aaa"]
    assert tree["system"]["control-plane"] == running["system"]["control-plane"]
    assert tree["vrf"] == {"default": rendered["vrf"]["default"], "blue": {"table": "auto"}, "mgmt": {}}
    assert tree["service"] == running["service"]
    assert candidate.kept_management == ("eth0", "vrf mgmt", "users", "NTP", "timezone", "control-plane ACLs",
                                         "NVUE API")
    # the rendered keys first, in their order; deterministic text
    assert list(tree["interface"]) == ["lo", "swp1", "eth0"]
    assert build_candidate(RENDERED, FACTORY_PLUS, managed_set(False)).text == candidate.text


def test_candidate_text_keeps_nvue_scalars_and_quoted_ids():
    text = build_candidate(RENDERED, FACTORY_PLUS, managed_set(False)).text
    assert "\n            '3': {}\n" in text                       # traffic-class id stays a string key
    assert "\n        enable: on\n" in text                          # on/off stay plain NVUE words
    assert "\n          '10': {}\n" in text
    assert '\n            hashed-password: $6$old$x\n' in text
    assert "\n          mtu: 9216\n" in text


def test_candidate_is_the_rendered_text_when_nothing_is_carried():
    running = "- set:\n    system:\n      hostname: old\n    interface:\n      swp9: {type: swp}\n"
    candidate = build_candidate(RENDERED, running, managed_set(False))
    assert candidate.text == RENDERED and candidate.kept_management == ()


@pytest.mark.parametrize("value", ["plain", "Cumulus Linux 5.11", "a: b", "# x", "- y", "", "multi\nline",
                                   "'quoted'", "@at", "trailing ", "Authorized use only: logged"])
def test_document_writer_round_trips_any_string(value):
    tree = {"system": {"message": {"pre-login": value}}, "qos": {"x": {"0": {}, "on": "off"}}}
    assert load_tree(dump_document({"version": "5.11"}, tree)) == ({"version": "5.11"}, tree)


def test_comparable_ignores_defaults_newer_keys_and_unmanaged_subtrees():
    managed = managed_set(False)
    _, rendered = load_tree(RENDERED)
    want = managed.managed(rendered)
    running = build_candidate(RENDERED, FACTORY_PLUS, managed).text
    _, have = load_tree(running)
    # NVUE prints a port's type even where nobody set it, and 5.17 adds pfc small-packet-probability
    del rendered["interface"]["lo"]["type"]
    want = managed.managed(rendered)
    have["qos"]["pfc"]["roce-lossless-3m"]["small-packet-probability"] = "100"
    assert comparable(have, managed, version="5.11", intended=want) == want
    # a key the 5.11 model documents, set by hand inside a managed subtree, is a difference
    have["interface"]["swp1"]["link"]["fec"] = "rs"
    got = comparable(have, managed, version="5.11", intended=want)
    assert got != want
    assert first_difference(want, got) == "`interface swp1 link fec` (on the switch, not rendered)"
    # and a changed managed value too
    del have["interface"]["swp1"]["link"]["fec"]
    have["interface"]["swp1"]["link"]["mtu"] = "1500"
    got = comparable(have, managed, version="5.11", intended=want)
    assert first_difference(want, got) == "`interface swp1 link mtu` (rendered '9216', switch '1500')"


def test_first_difference_never_prints_a_hash():
    want = {"system": {"aaa": {"user": {"cumulus": {"hashed-password": HASH}}}}}
    have = {"system": {"aaa": {"user": {"cumulus": {"hashed-password": "$6$other"}}}}}
    assert first_difference(want, have) == "`system aaa user cumulus hashed-password` (differs)"


def _render(tmp_path, extra: str, version: str) -> tuple[object, dict[str, str]]:
    text = textwrap.dedent(f"""\
        fabric: {{name: mt}}
        topology: {{kind: leaf-spine, nodes: 4, rails: 2}}
        switch_os: {{name: cumulus, version: "{version}"}}
        """) + textwrap.dedent(extra)
    path = tmp_path / "fabric.yaml"
    path.write_text(text)
    checked = run_checks(load_intent(path))
    assert checked.plan is not None, [f.one_line() for f in checked.errors]
    files = render_files(checked.plan, text)
    return checked.plan, {k: v for k, v in files.items() if k.endswith("startup.yaml")}


MANAGEMENT = f"""\
management:
  ntp: [10.0.0.10]
  dns: [10.0.0.53]
  syslog: [10.0.0.99]
  banner: "Authorized use only"
  users:
    - {{name: cumulus, role: system-admin, hashed_password: "{HASH}"}}
    - {{name: ops, role: nvue-monitor, ssh_keys: ["ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIO2Ffake ops"]}}
"""


@pytest.mark.parametrize("version", ["5.11", "5.14", "5.15"])
@pytest.mark.parametrize("extra", ["", MANAGEMENT], ids=["no-management", "management"])
def test_everything_the_renderer_emits_is_managed(tmp_path, version, extra):
    """The definition and the templates agree: no rendered key would be compared or carried
    as if it were the switch's own."""
    plan, files = _render(tmp_path, extra, version)
    managed = for_plan(plan)
    assert managed.management == bool(extra)
    for rel, text in files.items():
        _, tree = load_tree(text)
        assert managed.unmanaged(tree) == {}, rel
