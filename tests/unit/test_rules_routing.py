"""FG51x routing rules: each triggered by one intent and silent on a close one."""

from __future__ import annotations

from generator.checks.registry import ERROR, RULES, WARNING
from generator.checks.runner import load_rules
from tests.unit.test_rules_common import check, codes, findings, intent

HASH = "$6$fabricgenlab$OqKu8s1.iwmcF01KT9u5xm4I.NCIbdtaGpsXRepyozGYW04mGmSCSYv//RyMxZLJ98uk9N.Iv8BlED6PdN2T/0"


def test_routing_rules_are_explained():
    load_rules()
    for code, severity in (("FG510", ERROR), ("FG511", ERROR), ("FG512", WARNING), ("FG513", ERROR),
                           ("FG514", ERROR), ("FG515", ERROR)):
        assert RULES[code].severity == severity
        assert len(RULES[code].explanation) > 150, code


# FG510 multipath width ------------------------------------------------------------------------

def test_fg510_max_paths_below_widest_ecmp():
    # medium (inventory comment): spine i of group 1 has 32 x 400G global links to spine i of
    # group 2, so 32 equal-cost next hops toward the other group; 16 paths drop half of them
    result = check(intent(**{"routing.max_paths": 16}))
    (f,) = [f for f in result.findings if f.code == "FG510"]
    assert (f.severity, f.path) == ("error", "routing.max_paths")
    widest = result.plan.routing.widest_ecmp
    assert widest == 32
    assert "routing.max_paths 16 " in f.message and "(32 equal-cost" in f.message
    assert "drop 16 path(s)" in f.message and "at least 32" in f.message


def test_fg510_silent_at_and_above_the_widest_group():
    assert "FG510" not in codes(intent(**{"routing.max_paths": 32}))
    assert "FG510" not in codes(intent())              # unset: 128


# FG511 / FG513 adaptive routing and the ASIC -------------------------------------------------

def test_fg511_adaptive_routing_at_800g_on_spectrum4():
    data = intent(**{"routing.adaptive_routing": True, "topology.nic_speed": "800G"})
    (f,) = findings(data, "FG511")
    assert (f.severity, f.path) == ("error", "routing.adaptive_routing")
    assert "800G" in f.message and "200G/400G" in f.message


def test_fg511_silent_at_400g_and_when_off():
    assert "FG511" not in codes(intent(**{"routing.adaptive_routing": True}))
    assert "FG511" not in codes(intent(**{"topology.nic_speed": "800G"}))


def test_fg513_adaptive_routing_needs_spectrum4():
    data = intent(**{"routing.adaptive_routing": True, "topology.switches.spine.model": "SN4700"})
    (f,) = findings(data, "FG513")
    assert "SN4700 (spectrum-3)" in f.message and "SN5600" not in f.message


def test_fg513_silent_on_spectrum4():
    assert "FG513" not in codes(intent(**{"routing.adaptive_routing": True}))


# FG512 reordering warning --------------------------------------------------------------------

def test_fg512_warns_when_adaptive_routing_is_on():
    (f,) = findings(intent(**{"routing.adaptive_routing": True}), "FG512")
    assert (f.severity, f.path) == ("warning", "routing.adaptive_routing")
    assert "out of order" in f.message and "ConnectX-7" in f.message and "switchd" in f.message


def test_fg512_silent_when_off():
    assert "FG512" not in codes(intent())


# FG514 SONiC ---------------------------------------------------------------------------------

def test_fg514_sonic_refuses_bfd_and_adaptive_routing():
    data = intent("medium-sonic", **{"routing.bfd": True, "routing.adaptive_routing": True})
    assert {f.path for f in findings(data, "FG514")} == {"routing.bfd", "routing.adaptive_routing"}


def test_fg514_silent_on_cumulus_and_plain_sonic():
    assert "FG514" not in codes(intent(**{"routing.bfd": True}))
    assert "FG514" not in codes(intent("medium-sonic"))


# FG515 SSH key types -------------------------------------------------------------------------

def _users(key: str) -> dict:
    return {"users": [{"name": "cumulus", "role": "system-admin", "hashed_password": HASH, "ssh_keys": [key]}]}


def test_fg515_fido_key_refused():
    data = intent(management=_users("sk-ssh-ed25519@openssh.com AAAAGnNrLXNzaC1lZDI1NTE5 yubikey"))
    (f,) = findings(data, "FG515")
    assert (f.severity, f.path) == ("error", "management.users[0].ssh_keys")
    assert "sk-ssh-ed25519@openssh.com" in f.message


def test_fg515_silent_for_ed25519():
    assert "FG515" not in codes(intent(management=_users("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIF ops")))
