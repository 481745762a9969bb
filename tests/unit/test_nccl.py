"""NCCL plan and nccl.conf: NCCL's own parsing rules (src/misc/param.cc)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from generator.intent.loader import load_intent, parse_yaml, validate_data
from generator.plan.compile import compile_plan
from generator.plan.nccl import build_nccl, gid_check_index, nccl_param_names
from generator.plan.qos import build_qos
from generator.render.hosts import render_host

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = ("small", "medium", "large")


def parse_nccl_conf(text: str) -> dict[str, str]:
    """What NCCL's setEnvFile() makes of a file: getline per line, skip lines starting
    with '#', drop one trailing '\\n', skip lines without '=', key = bytes before the
    first '=', value = everything after it (verbatim, 1023 bytes max), setenv without
    overwrite (the first occurrence wins)."""
    env: dict[str, str] = {}
    for line in text.splitlines(keepends=True):
        if line.startswith("#"):
            continue
        if line.endswith("\n"):
            line = line[:-1]
        if "=" not in line:
            continue
        key, value = line.split("=", 1)
        env.setdefault(key[:1023], value[:1023])
    return env


def _intent(**changes):
    loaded = load_intent(REPO / "inventories" / "small" / "fabric.yaml")
    data = yaml.safe_load(loaded.text)
    for path, value in changes.items():
        node = data
        *parents, last = path.split(".")
        for p in parents:
            node = node.setdefault(p, {})
        node[last] = value
    text = yaml.safe_dump(data)
    data, lines = parse_yaml(text, "t.yaml")
    return validate_data(data, lines, "t.yaml")


def test_param_list_is_names_only_and_matches_reference(shared_dir):
    names = nccl_param_names()
    ref = {line.strip() for line in (shared_dir / "reference/nccl_params.txt").read_text().splitlines()
           if line.strip() and not line.startswith("#")}
    assert names == ref
    assert all(n.startswith("NCCL_") and n == n.strip() for n in names)


@pytest.mark.parametrize("name", EXAMPLES)
def test_rendered_nccl_conf_parses_with_nccl_rules(name):
    plan = compile_plan(load_intent(REPO / "inventories" / name / "fabric.yaml").intent)
    text = render_host(plan, plan.hosts[0])[f"hosts/{plan.hosts[0].name}/nccl.conf"]
    assert text.endswith("\n") and "\r" not in text
    body = [line for line in text.splitlines() if not line.startswith("#")]
    assert all("=" in line and " " not in line and '"' not in line and "'" not in line for line in body)
    assert not any(line.startswith("export") for line in body)
    env = parse_nccl_conf(text)
    assert len(env) == len(body), "a key appears twice: NCCL would ignore the second"
    assert set(env) <= nccl_param_names()
    assert dict(plan.nccl.settings) == env
    rdma = [nic.rdma for nic in plan.hosts[0].nics]
    assert env["NCCL_IB_HCA"] == "=" + ",".join(f"{r}:1" for r in rdma)
    assert env["NCCL_IB_TC"] == str(plan.qos.roce_dscp << 2) == "104"
    # exact names (leading '='): the host's management interface, or a container's eth0
    assert env["NCCL_SOCKET_IFNAME"] == "=eno1,eth0"
    # the examples pin no NCCL version, so the RoCEv2/IPv4 index is written for NCCL < 2.21
    assert env["NCCL_IB_GID_INDEX"] == "3"


@pytest.mark.parametrize(("kind", "cross_nic", "qps"), [
    ("single-switch", None, None),
    ("leaf-spine", None, "4"),
    ("rail-optimized", "0", "4"),
    ("three-tier", "0", "4"),
    ("dragonfly-plus", "0", "4"),
])
def test_topology_decides_cross_nic_and_qps(kind, cross_nic, qps):
    intent = _intent(**{"topology.kind": kind})
    env = dict(build_nccl(intent, build_qos(intent.roce)).settings)
    assert env.get("NCCL_CROSS_NIC") == cross_nic
    assert env.get("NCCL_IB_QPS_PER_CONNECTION") == qps


def test_user_settings_merge_last_in_place_and_never_raise():
    intent = _intent(**{"topology.kind": "rail-optimized",
                        "nccl.settings": {"NCCL_IB_TC": 106, "NCCL_DEBUG": "WARN", "NCCL_IB_DISABLE": False,
                                          "NCCL_NOT_A_THING": "x", "NCCL_IB_RETRY_CNT": 99}})
    settings = build_nccl(intent, build_qos(intent.roce)).settings
    keys = [k for k, _ in settings]
    assert keys[:5] == ["NCCL_IB_HCA", "NCCL_IB_TC", "NCCL_SOCKET_IFNAME", "NCCL_CROSS_NIC",
                        "NCCL_IB_QPS_PER_CONNECTION"]
    env = dict(settings)
    assert env["NCCL_IB_TC"] == "106" and keys.count("NCCL_IB_TC") == 1
    assert env["NCCL_DEBUG"] == "WARN" and env["NCCL_IB_DISABLE"] == "0"
    assert env["NCCL_NOT_A_THING"] == "x" and env["NCCL_IB_RETRY_CNT"] == "99"   # rules FG301/FG302 report


def test_hca_list_follows_rail_order_and_tos_follows_dscp():
    intent = _intent(**{"roce.dscp": 24, "hosts.rails": [{"netdev": "eth5", "rdma": "mlx5_10"},
                                                         {"netdev": "eth6", "rdma": "mlx5_1"}]})
    env = dict(build_nccl(intent, build_qos(intent.roce)).settings)
    assert env["NCCL_IB_HCA"] == "=mlx5_10:1,mlx5_1:1"
    assert env["NCCL_IB_TC"] == "96"


def test_parser_follows_param_cc():
    text = "# c\nA=1\nB = 2\nnoequals\n\nA=3\nC=x=y\n#D=4\nE="
    assert parse_nccl_conf(text) == {"A": "1", "B ": " 2", "C": "x=y", "E": ""}


def _conf(intent) -> str:
    plan = compile_plan(intent)
    return render_host(plan, plan.hosts[0])[f"hosts/{plan.hosts[0].name}/nccl.conf"]


# NCCL < 2.21 defaults NCCL_IB_GID_INDEX to 0 (link-local RoCEv1); 2.21 and later default
# to -1 = auto-select RoCEv2 (NVIDIA/nccl src/transport/net_ib). Versions compare as
# numbers: 2.3 is older than 2.21, 2.100 newer.
@pytest.mark.parametrize(("min_version", "gid"), [
    (None, "3"),
    ("2.18.3", "3"),
    ("2.20.99", "3"),
    ("2.3", "3"),
    ("2.21", None),
    ("2.21.0", None),
    ("2.23.4", None),
    ("2.100", None),
    ("3.0", None),
])
def test_gid_index_follows_the_oldest_nccl(min_version, gid):
    intent = _intent(**({"nccl.min_version": min_version} if min_version else {}))
    env = parse_nccl_conf(_conf(intent))
    assert env.get("NCCL_IB_GID_INDEX") == gid
    assert gid_check_index(build_nccl(intent, build_qos(intent.roce))) == (None if gid is None else 3)


@pytest.mark.parametrize(("min_version", "value", "checked"), [
    (None, 5, 5),
    ("2.18.3", "0x4", 4),
    ("2.23.4", 3, 3),
    ("2.23.4", -1, None),
    (None, -1, None),                 # FG319 refuses it; the script then looks for any RoCEv2 IPv4 GID
    (None, "three", None),            # FG302 refuses it
])
def test_user_gid_index_wins_once_in_place(min_version, value, checked):
    changes = {"nccl.settings": {"NCCL_IB_GID_INDEX": value, "NCCL_DEBUG": "WARN"}}
    if min_version:
        changes["nccl.min_version"] = min_version
    intent = _intent(**changes)
    text = _conf(intent)
    assert [line for line in text.splitlines() if line.startswith("NCCL_IB_GID_INDEX")] == [
        f"NCCL_IB_GID_INDEX={value}"]
    assert parse_nccl_conf(text)["NCCL_IB_GID_INDEX"] == str(value)
    assert gid_check_index(build_nccl(intent, build_qos(intent.roce))) == checked


def test_gid_index_sits_with_the_defaults_before_user_keys():
    intent = _intent(**{"topology.kind": "rail-optimized", "nccl.settings": {"NCCL_DEBUG": "WARN"}})
    keys = [k for k, _ in build_nccl(intent, build_qos(intent.roce)).settings]
    assert keys == ["NCCL_IB_HCA", "NCCL_IB_TC", "NCCL_SOCKET_IFNAME", "NCCL_CROSS_NIC",
                    "NCCL_IB_QPS_PER_CONNECTION", "NCCL_IB_GID_INDEX", "NCCL_DEBUG"]
