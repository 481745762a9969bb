"""`management:`, `routing:` and `nccl.min_version` in the intent: loader errors, FG501/FG502, the plan.

Intents go through the real loader (file text, so line numbers are real) and the real rule runner.
"""

from __future__ import annotations

import textwrap
import warnings
from pathlib import Path

import pytest

from generator.checks.runner import run_checks
from generator.intent.loader import IntentError, load_intent
from tests.conftest import example

LAB_HASH = "$6$fabricgenlab$OqKu8s1.iwmcF01KT9u5xm4I.NCIbdtaGpsXRepyozGYW04mGmSCSYv//RyMxZLJ98uk9N.Iv8BlED6PdN2T/0"
KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGJ0ZXN0a2V5Zm9yZmFicmljZ2Vu ops@bastion"


def _write(tmp_path: Path, extra: str, base: str = "small") -> Path:
    path = tmp_path / "fabric.yaml"
    path.write_text(example(base).read_text() + textwrap.dedent(extra))
    return path


def _base_lines(base: str = "small") -> int:
    return len(example(base).read_text().splitlines())


def test_lab_hash_is_the_documented_password():
    """The examples' hash must really be crypt('fabricgen-lab'): the README tells users so."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        import crypt as c
        assert c.crypt("fabricgen-lab", LAB_HASH) == LAB_HASH


def test_plaintext_password_is_one_line_with_its_place(tmp_path):
    path = _write(tmp_path, """
        management:
          users:
            - name: cumulus
              role: system-admin
              password: CumulusLinux!
        """)
    with pytest.raises(IntentError) as exc:
        load_intent(path)
    (problem,) = exc.value.problems
    assert problem.path == "management.users[0].password"
    assert problem.line == _base_lines() + 6
    assert "hashed_password" in problem.message and "mkpasswd" in problem.message
    assert "CumulusLinux!" not in str(exc.value)        # the secret is never echoed


def test_plaintext_password_anywhere_is_refused(tmp_path):
    path = _write(tmp_path, """
        deploy:
          user: cumulus
          password: hunter2
        """)
    with pytest.raises(IntentError) as exc:
        load_intent(path)
    assert exc.value.problems[0].path == "deploy.password"
    assert "hunter2" not in str(exc.value)


@pytest.mark.parametrize("bad", ["plain", "$1$abcdefgh$md5isweak", "$6$short"])
def test_hash_must_be_sha512_or_yescrypt(tmp_path, bad):
    path = _write(tmp_path, f"""
        management:
          users:
            - {{name: cumulus, role: system-admin, hashed_password: "{bad}"}}
        """)
    with pytest.raises(IntentError) as exc:
        load_intent(path)
    assert exc.value.problems[0].path == "management.users[0].hashed_password"
    assert "mkpasswd" in exc.value.problems[0].message


def test_ssh_key_must_be_a_public_key_line(tmp_path):
    path = _write(tmp_path, """
        management:
          users:
            - {name: cumulus, role: system-admin, ssh_keys: ["-----BEGIN OPENSSH PRIVATE KEY-----"]}
        """)
    with pytest.raises(IntentError) as exc:
        load_intent(path)
    assert exc.value.problems[0].path == "management.users[0].ssh_keys"


def test_users_without_the_deploy_user_is_fg501(tmp_path):
    path = _write(tmp_path, f"""
        management:
          users:
            - {{name: ops, role: system-admin, hashed_password: "{LAB_HASH}"}}
        """)
    result = run_checks(load_intent(path))
    (finding,) = [f for f in result.errors if f.code == "FG501"]
    assert finding.path == "management.users" and "'cumulus'" in finding.message
    assert finding.line == _base_lines() + 3


def test_user_without_credentials_is_fg502(tmp_path):
    path = _write(tmp_path, """
        management:
          users:
            - {name: cumulus, role: system-admin}
        """)
    result = run_checks(load_intent(path))
    assert [f.path for f in result.errors if f.code == "FG502"] == ["management.users[0]"]


def test_duplicate_user_is_refused(tmp_path):
    path = _write(tmp_path, f"""
        management:
          users:
            - {{name: cumulus, role: system-admin, hashed_password: "{LAB_HASH}"}}
            - {{name: cumulus, role: nvue-monitor, ssh_keys: ["{KEY}"]}}
        """)
    with pytest.raises(IntentError, match="listed twice"):
        load_intent(path)


def test_management_compiles_into_the_plan(tmp_path):
    path = _write(tmp_path, f"""
        management:
          ntp: [192.0.2.123, ntp.example.net]
          dns: [192.0.2.53]
          syslog: [192.0.2.99]
          timezone: Europe/Berlin
          banner: Authorised access only
          users:
            - {{name: cumulus, role: system-admin, hashed_password: "{LAB_HASH}", ssh_keys: ["{KEY}"]}}
        """)
    result = run_checks(load_intent(path))
    assert not result.errors
    m = result.plan.management
    # small: addressing.management 192.168.0.0/24 -> default gateway is its first address
    assert (m.prefix_len, m.gateway) == (24, "192.168.0.1")
    assert m.ntp == ("192.0.2.123", "ntp.example.net") and m.dns == ("192.0.2.53",)
    assert m.users[0].ssh_keys == (KEY,)


def test_no_management_section_means_keep_the_switchs_own():
    result = run_checks(load_intent(example("small")))
    assert result.plan.management is None


@pytest.mark.parametrize("extra, path", [
    ("management:\n  gateway: 192.168.0.300\n", "management.gateway"),
    ("management:\n  dns: [dns.example.net]\n", "management.dns"),
    ("management:\n  ntp: ['bad host!']\n", "management.ntp"),
    ("routing:\n  max_paths: 129\n", "routing.max_paths"),
    ("routing:\n  max_paths: 0\n", "routing.max_paths"),
    ("nccl:\n  min_version: latest\n", "nccl.min_version"),
])
def test_bad_values_name_their_key(tmp_path, extra, path):
    with pytest.raises(IntentError) as exc:
        load_intent(_write(tmp_path, extra))
    assert exc.value.problems[0].path == path


def test_routing_defaults_and_widest_ecmp():
    plan = run_checks(load_intent(example("medium"))).plan
    assert plan.routing.max_paths == 128 and not plan.routing.max_paths_set
    # medium (dragonfly-plus, 2 groups): a leaf has 2 x 8 uplinks (16 next hops), but spine i of
    # group 1 reaches group 2 over 32 parallel global links to spine i of group 2: the widest set
    leaf = next(s for s in plan.switches if s.role == "leaf")
    assert len([p for p in plan.ports_of(leaf.name) if p.tier != "host-leaf"]) == 16
    spine = next(s for s in plan.switches if s.role == "spine")
    assert len([p for p in plan.ports_of(spine.name) if p.tier == "global"]) == 32
    assert plan.routing.widest_ecmp == 32


@pytest.mark.parametrize(("role", "expected"), [
    ("", "has no role, and the default is nvue-monitor"),
    ("role: nvue-monitor,", "has role nvue-monitor (read-only)"),
])
def test_read_only_deploy_user_is_fg504(tmp_path, role, expected):
    path = _write(tmp_path, f"""
        management:
          users:
            - {{name: cumulus, {role} hashed_password: "{LAB_HASH}"}}
        """)
    result = run_checks(load_intent(path))
    (finding,) = [f for f in result.errors if f.code == "FG504"]
    assert finding.path == "management.users[0].role"
    assert expected in finding.message and "system-admin" in finding.message
    assert LAB_HASH not in finding.message


@pytest.mark.parametrize("role", ["system-admin", "nvue-admin"])
def test_deploy_user_that_can_apply_passes_fg504(tmp_path, role):
    path = _write(tmp_path, f"""
        management:
          users:
            - {{name: cumulus, role: {role}, hashed_password: "{LAB_HASH}"}}
            - {{name: audit, ssh_keys: ["{KEY}"]}}
        """)
    result = run_checks(load_intent(path))
    assert not [f for f in result.findings if f.code == "FG504"]    # a read-only non-deploy user is fine


def _gateway_findings(tmp_path, gateway: str, base: str = "small"):
    path = _write(tmp_path, f"""
        management:
          gateway: {gateway}
        """, base)
    return [f for f in run_checks(load_intent(path)).errors if f.code == "FG505"]


@pytest.mark.parametrize(("gateway", "expected"), [
    ("10.9.9.1", "outside addressing.management 192.168.0.0/24"),
    ("192.168.0.0", "network address"),
    ("192.168.0.255", "broadcast address"),
])
def test_unusable_management_gateway_is_fg505(tmp_path, gateway, expected):
    (finding,) = _gateway_findings(tmp_path, gateway)
    assert finding.path == "management.gateway" and expected in finding.message
    assert finding.line == _base_lines() + 3


def test_gateway_on_a_switch_address_is_fg505(tmp_path):
    """The address is taken from the compiled plan, not from a formula in the test."""
    from generator.plan.compile import compile_plan

    plan = compile_plan(load_intent(example("small")).intent)
    switch, host = plan.switches[-1], plan.hosts[0]
    (finding,) = _gateway_findings(tmp_path, switch.mgmt_ip)
    assert f"{switch.name}'s own management address" in finding.message
    (finding,) = _gateway_findings(tmp_path, host.mgmt_ip)
    assert f"{host.name}'s own management address" in finding.message
    assert _gateway_findings(tmp_path, "192.168.0.1") == []
