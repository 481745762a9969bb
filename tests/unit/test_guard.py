"""The guard that reads `nv config diff -o yaml` before any apply (generator/deploy/guard.py),
and the password pre-flight (generator/deploy/preflight.py).

Diffs are written in the format NVUE prints (and the lab's `_diff` produces): `- unset:` /
`- set:` items whose leaves are `{}` (remove/add this key) or a value.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import textwrap
from types import SimpleNamespace

import pytest

from generator.deploy.guard import GuardContext, check_diff, touches_access
from generator.deploy.preflight import PreflightError, check_login_users, password_matches
from generator.plan.model import MgmtUser

NO_MGMT = GuardContext(management=False, mgmt_address=None, deploy_user="cumulus", login_user="cumulus")
MGMT = GuardContext(management=True, mgmt_address="192.168.0.10/20", deploy_user="cumulus", login_user="cumulus")
RUNNING = {
    "interface": {"eth0": {"ip": {"address": {"dhcp": {}}, "vrf": "mgmt"}, "type": "eth"}},
    "system": {"aaa": {"user": {"cumulus": {"role": "system-admin"}, "ops": {"role": "nvue-monitor"}}},
               "control-plane": {"acl": {"acl-default-dos": {"inbound": {}},
                                         "acl-default-whitelist": {"inbound": {}}}}},
    "vrf": {"mgmt": {}},
}


def diff(text: str) -> str:
    return textwrap.dedent(text)


DATA_PLANE_ONLY = diff("""\
    - unset:
        interface:
          swp30: {}
    - set:
        interface:
          swp1:
            link:
              mtu: 9216
        system:
          hostname: leaf1
    """)


def test_a_data_plane_diff_passes_either_way():
    assert check_diff(DATA_PLANE_ONLY, NO_MGMT, RUNNING) is None
    assert check_diff(DATA_PLANE_ONLY, MGMT, RUNNING) is None
    assert check_diff("", NO_MGMT) is None


def test_only_a_diff_touching_the_way_in_needs_a_new_login():
    """touches_access decides whether the post-check logs in afresh (rollout.py)."""
    assert not touches_access(DATA_PLANE_ONLY)
    assert not touches_access(diff("""\
        - set:
            vrf:
              default:
                router:
                  bgp:
                    autonomous-system: 65101
        """))   # vrf default is not vrf mgmt
    for region in ("interface:\n  eth0:\n    ip:\n      gateway: 10.0.0.1",
                   "vrf:\n  mgmt: {}", "system:\n  aaa:\n    user:\n      ops: {}",
                   "system:\n  ssh-server:\n    vrf: mgmt",
                   "system:\n  control-plane:\n    acl:\n      acl-default-dos: {}"):
        for kind in ("set", "unset"):
            assert touches_access(f"- {kind}:\n" + textwrap.indent(region, "    ") + "\n"), (kind, region)
    assert touches_access("- set: [unclosed")          # unreadable: the safe answer


def test_removing_eth0_is_refused_and_named():
    text = diff("""\
        - unset:
            interface:
              eth0: {}
        """)
    refusal = check_diff(text, NO_MGMT, RUNNING)
    assert refusal is not None and "`interface eth0`" in refusal and "no management section" in refusal
    refusal = check_diff(text, MGMT, RUNNING)
    assert refusal is not None and "`interface eth0`" in refusal and "192.168.0.10/20" in refusal


def test_dhcp_to_the_plans_static_address_passes_only_with_management():
    text = diff("""\
        - unset:
            interface:
              eth0:
                ip:
                  address:
                    dhcp: {}
        - set:
            interface:
              eth0:
                ip:
                  address:
                    192.168.0.10/20: {}
                  gateway:
                    192.168.0.1: {}
        """)
    assert check_diff(text, MGMT, RUNNING) is None
    refusal = check_diff(text, NO_MGMT, RUNNING)
    assert refusal is not None and "interface eth0 ip address dhcp" in refusal


def test_an_address_the_plan_does_not_give_is_refused():
    text = diff("""\
        - set:
            interface:
              eth0:
                ipv4:
                  address:
                    10.9.9.9/24: {}
        """)
    refusal = check_diff(text, MGMT, RUNNING)
    assert refusal == ("the diff would set `interface eth0 ipv4 address 10.9.9.9/24`, but the plan gives this "
                       "switch eth0 192.168.0.10/20")


def test_eth0_leaving_vrf_mgmt_is_refused():
    for ctx in (NO_MGMT, MGMT):
        refusal = check_diff(diff("""\
            - unset:
                interface:
                  eth0:
                    ip:
                      vrf: {}
            """), ctx, RUNNING)
        assert refusal is not None and "`interface eth0 ip vrf`" in refusal
        refusal = check_diff(diff("""\
            - set:
                interface:
                  eth0:
                    vrf: default
            """), ctx, RUNNING)
        assert refusal is not None and "`interface eth0 vrf default`" in refusal


def test_removing_the_mgmt_vrf_is_refused():
    refusal = check_diff("- unset:\n    vrf:\n      mgmt: {}\n", MGMT, RUNNING)
    assert refusal is not None and "`vrf mgmt`" in refusal


@pytest.mark.parametrize("path", [
    "    system: {}\n",
    "    system:\n      aaa: {}\n",
    "    system:\n      aaa:\n        user: {}\n",
    "    system:\n      aaa:\n        user:\n          cumulus: {}\n",
])
def test_deleting_the_deploy_user_is_refused(path):
    refusal = check_diff("- unset:\n" + path, MGMT, RUNNING)
    assert refusal is not None and "deleting user cumulus" in refusal


def test_the_logged_in_user_is_protected_as_well_as_the_deploy_user():
    ctx = GuardContext(management=True, mgmt_address="192.168.0.10/20", deploy_user="cumulus", login_user="ops")
    text = "- unset:\n    system:\n      aaa:\n        user:\n          ops: {}\n"
    refusal = check_diff(text, ctx, RUNNING)
    assert refusal is not None and "deleting user ops (the user this deploy is logged in as)" in refusal
    assert check_diff(text, MGMT, RUNNING) is None                     # ops is nobody's login here


def test_changing_a_password_hash_is_not_a_deletion():
    text = ("- unset:\n    system:\n      aaa:\n        user:\n          cumulus:\n            hashed-password: {}\n"
            "- set:\n    system:\n      aaa:\n        user:\n          cumulus:\n            hashed-password: $6$x\n")
    assert check_diff(text, MGMT, RUNNING) is None


def test_removing_a_default_acl_is_refused():
    text = ("- unset:\n    system:\n      control-plane:\n        acl:\n          acl-default-whitelist: {}\n")
    refusal = check_diff(text, MGMT, RUNNING)
    assert refusal is not None and "acl-default-whitelist" in refusal


def test_what_the_switch_does_not_have_cannot_be_lost():
    running = {"interface": {"eth0": {"ip": {"vrf": "mgmt"}}}, "vrf": {"mgmt": {}}}
    # no NVUE users (accounts made outside NVUE), no ACL bindings: unsetting system aaa loses nothing
    assert check_diff("- unset:\n    system:\n      aaa: {}\n", NO_MGMT, running) is None


def test_an_unreadable_diff_is_refused():
    assert "cannot read" in check_diff("- set: [unclosed", NO_MGMT)


# --- pre-flight ---------------------------------------------------------------------------
def _crypt(password: str, salt: str) -> str:
    lib = ctypes.CDLL(ctypes.util.find_library("crypt"))
    lib.crypt.restype = ctypes.c_char_p
    lib.crypt.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
    return lib.crypt(password.encode(), salt.encode()).decode()


def _plan(*users: MgmtUser):
    return SimpleNamespace(management=SimpleNamespace(users=users), deploy_user="cumulus")


def test_password_matches_sha512_and_yescrypt():
    for salt in ("$6$saltsalt$", "$y$j9T$abcdefghijklmnop$"):
        hashed = _crypt("lab-Secret-7f3", salt)
        assert password_matches("lab-Secret-7f3", hashed) is True
        assert password_matches("lab-Secret-7f4", hashed) is False


def test_preflight_refuses_a_hash_of_another_password_without_printing_either():
    hashed = _crypt("something-else", "$6$saltsalt$")
    plan = _plan(MgmtUser("ops", "nvue-monitor", None, ()), MgmtUser("cumulus", "system-admin", hashed, ()))
    with pytest.raises(PreflightError) as exc:
        check_login_users(plan, {"cumulus"}, "lab-Secret-7f3", where=lambda key: f"f.yaml:{len(key)}: ")  # 19 = len(key)
    message = str(exc.value)
    assert message.startswith("f.yaml:19: management.users[1].hashed_password: the switch would lock fabricgen out")
    assert "lab-Secret-7f3" not in message and hashed not in message and "$6$" not in message
    check_login_users(plan, {"cumulus"}, "something-else")           # the right password passes


def test_preflight_refuses_a_password_login_for_a_user_without_hash_or_not_listed():
    plan = _plan(MgmtUser("cumulus", "system-admin", None, ("ssh-ed25519 AAAA ops",)))
    with pytest.raises(PreflightError, match=r"management.users\[0\]: .* has no hashed_password"):
        check_login_users(plan, {"cumulus"}, "pw")
    check_login_users(plan, {"cumulus"}, None)                       # key login: the keys decide
    with pytest.raises(PreflightError, match="logs in as 'admin', which is not in the list"):
        check_login_users(plan, {"admin"}, "pw")
    check_login_users(SimpleNamespace(management=None), {"anyone"}, "pw")   # keeps the switch's users


GW = GuardContext(management=True, mgmt_address="192.168.0.10/20", deploy_user="cumulus", login_user="cumulus",
                  mgmt_gateway="192.168.0.1")


def _gateway_diff(unset: str | None, new: str | None, syntax: str = "ip") -> str:
    items = []
    if unset:
        items.append(f"- unset:\n    interface:\n      eth0:\n        {syntax}:\n          gateway:\n            {unset}: {{}}\n")
    if new:
        items.append(f"- set:\n    interface:\n      eth0:\n        {syntax}:\n          gateway:\n            {new}: {{}}\n")
    return "".join(items)


@pytest.mark.parametrize("syntax", ["ip", "ipv4"])
def test_gateway_is_checked_like_the_address(syntax):
    running = {"interface": {"eth0": {syntax: {"gateway": {"192.168.0.254": {}}}}}}
    assert check_diff(_gateway_diff("192.168.0.254", "192.168.0.1", syntax), GW, running) is None
    assert check_diff(_gateway_diff(None, "192.168.0.1", syntax), GW, {}) is None
    wrong = check_diff(_gateway_diff("192.168.0.254", "192.168.0.9", syntax), GW, running)
    assert "plan's management.gateway is 192.168.0.1" in wrong
    gone = check_diff(_gateway_diff("192.168.0.254", None, syntax), GW, running)
    assert "without setting eth0's gateway to the plan's 192.168.0.1" in gone
    for diff_text in (_gateway_diff("192.168.0.254", None, syntax), _gateway_diff(None, "192.168.0.1", syntax)):
        assert "no management section" in check_diff(diff_text, NO_MGMT, running)
