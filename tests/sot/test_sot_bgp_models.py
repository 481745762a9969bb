"""`fabricgen sot` against a live Nautobot that runs the nautobot-bgp-models app (issue 37: "ASNs
(the nautobot-bgp-models app when installed, else a custom field)"): each switch's ASN is a BGP
routing instance with its loopback as router ID, counted here through Nautobot's REST API, not
through the code under test. The server is conftest's `nautobot_bgp` (the app's tables are
migrated into the same cached database the plain server restores)."""

from __future__ import annotations

import pytest

from generator.sot.nautobot import Nautobot
from generator.sot.push import push, remove_fabric
from tests.cli_runner import run_cli
from tests.sot.test_sot_sync import _desired, _env, _small

pytestmark = pytest.mark.xdist_group("nautobot")


def test_asns_are_routing_instances_where_the_app_runs(nautobot_bgp, tmp_path):
    nb = Nautobot(nautobot_bgp.url, nautobot_bgp.token)
    assert "nautobot_bgp_models" in nb.apps()
    name = nautobot_bgp.fresh_fabric("sotbgp")
    intent = _small(tmp_path, name, 4)
    plan, desired = _desired(intent)
    try:
        first = run_cli("sot", "push", str(intent), "--url", nautobot_bgp.url, env=_env(nautobot_bgp))
        assert first.returncode == 0, first.stderr
        switches = [sw.name for sw in plan.switches]
        instances = {r["device"]["name"]: r for r in nb.list("/api/plugins/bgp/routing-instances/", device=switches, depth=1)}
        for sw in plan.switches:
            got = instances[sw.name]
            assert got["autonomous_system"]["asn"] == sw.asn
            assert got["router_id"]["address"] == f"{sw.loopback}/32"
            assert got["status"]["name"] == "Active"
        # the custom field is not written where the app holds the ASN
        leaf = nb.list("/api/dcim/devices/", name=plan.switches[0].name, location=name)[0]
        assert not (leaf.get("custom_fields") or {}).get("bgp_asn")
        before = nb.writes
        assert push(nb, desired).writes == 0 and nb.writes == before
        diff = run_cli("sot", "diff", str(intent), "--url", nautobot_bgp.url, env=_env(nautobot_bgp))
        assert diff.returncode == 0 and "Nautobot matches the plan" in diff.stdout, diff.stdout + diff.stderr
        # an ASN changed in Nautobot by hand is a change the next diff reports and push puts back
        victim = instances[plan.switches[0].name]
        other = nb.asn_ids({64999})[64999]
        nb.update("/api/plugins/bgp/routing-instances/", [{"id": victim["id"], "autonomous_system": other}])
        diff = run_cli("sot", "diff", str(intent), "--url", nautobot_bgp.url, env=_env(nautobot_bgp))
        assert diff.returncode == 3 and f"asn: 64999 -> {plan.switches[0].asn}" in diff.stdout, diff.stdout
        assert +push(nb, desired).written == {"BGP routing instance changed": 1}
    finally:
        remove_fabric(nb, desired)
    # a routing instance PROTECTs its device: removing the fabric removed them first
    assert not nb.list("/api/dcim/devices/", name=[sw.name for sw in plan.switches])
    assert not nb.list("/api/plugins/bgp/routing-instances/", q=name)
