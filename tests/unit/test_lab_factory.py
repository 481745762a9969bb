"""The lab's factory tree and management checks, against NVUE's own object model (nvueschema)."""

from __future__ import annotations

import importlib
import shutil
import subprocess
import typing

import pytest
from pydantic import BaseModel

from generator.lab import factory
from generator.lab.factory import Management, factory_config, management_loss
from generator.lab.schema import MODEL_FILE, load_rows, schema_for, validate_tree, version_key

HASH = "$6$abcdefgh$yAZqZrP1EjPpKumk.AADT1SzpnetlIH1GmPytlMxCyPJGINv35vR1C.MbdYEBDHj8GVUVGQM/bT6YBWCm.4C9/"
STATIC = Management("192.168.0.10/20", "192.168.0.1", "static")
DHCP = Management("192.0.2.10/24", "192.0.2.1", "dhcp")


def model(version: str):
    return importlib.import_module(f"nvueschema.models.v{version.replace('.', '_')}").NvueConfig


def _unwrap(annotation):
    while True:
        origin = typing.get_origin(annotation)
        if origin is typing.Annotated:
            annotation = typing.get_args(annotation)[0]
        elif origin is typing.Union:
            args = [a for a in typing.get_args(annotation) if a is not type(None)]
            for arg in args:
                inner = _unwrap(arg)
                if typing.get_origin(inner) is dict or (isinstance(inner, type) and issubclass(inner, BaseModel)):
                    return inner
            return _unwrap(args[0])
        else:
            return annotation


def in_model(version: str, tokens: list[str]) -> bool:
    """Is the path (`*` for any key) a key path of that release's object model?"""
    node = model(version)
    for token in tokens:
        node = _unwrap(node)
        if isinstance(node, type) and issubclass(node, BaseModel):
            fields = {(f.alias or n): f for n, f in node.model_fields.items()}
            if token not in fields:
                return False
            node = fields[token].annotation
        elif typing.get_origin(node) is dict:
            node = typing.get_args(node)[1]
        else:
            return False
    return True


@pytest.mark.parametrize("version", ["5.11", "5.15"])
@pytest.mark.parametrize("mgmt", [STATIC, DHCP], ids=["static", "dhcp"])
def test_factory_tree_round_trips_through_the_object_model(version, mgmt):
    tree = factory_config(version, "leaf01", mgmt, {"cumulus": HASH})
    dumped = model(version).model_validate(tree).model_dump(by_alias=True, exclude_unset=True)
    assert dumped == tree  # no key the release does not know, no value it refuses
    validate_tree(schema_for(version), tree)  # and the lab's own path check accepts it


def test_factory_tree_per_generation():
    old = factory_config("5.11", "leaf01", STATIC, {"cumulus": HASH})
    new = factory_config("5.15", "leaf01", STATIC, {"cumulus": HASH})
    # nvue_renames_515.tsv: ip address/gateway -> ipv4 address/gateway, ip vrf -> interface vrf.
    assert old["interface"]["eth0"] == {"ip": {"address": {"192.168.0.10/20": {}},
                                               "gateway": {"192.168.0.1": {}}, "vrf": "mgmt"}, "type": "eth"}
    assert new["interface"]["eth0"] == {"ipv4": {"address": {"192.168.0.10/20": {}},
                                                 "gateway": {"192.168.0.1": {}}}, "type": "eth", "vrf": "mgmt"}
    # ip address dhcp -> ipv4 dhcp-client state enabled
    assert factory_config("5.11", "x", DHCP, {})["interface"]["eth0"]["ip"]["address"] == {"dhcp": {}}
    assert factory_config("5.15", "x", DHCP, {})["interface"]["eth0"]["ipv4"] == {
        "dhcp-client": {"state": "enabled"}}
    assert old["system"] == new["system"] == {
        "aaa": {"user": {"cumulus": {"hashed-password": HASH, "role": "system-admin"}}},
        "api": {"state": "enabled"},
        "control-plane": {"acl": {"acl-default-dos": {"inbound": {}}, "acl-default-whitelist": {"inbound": {}}}},
        "hostname": "leaf01",
        "ssh-server": {"state": "enabled"},
    }


def test_model_path_rows_are_in_the_object_model_from_their_release_on():
    # Each model module takes seconds to import: check the first release, the one before it, and
    # the two generations the lab and the examples use.
    rows = load_rows(MODEL_FILE)
    assert rows
    for path, since, until in rows:
        claimed = {since, "5.11", "5.15"}
        claimed = {r for r in claimed if version_key(r) >= version_key(since)
                   and (not until or version_key(r) <= version_key(until))}
        missing = sorted(r for r in claimed if not in_model(r, path.split()))
        assert not missing, f"{path}: not in the object model of {missing}"
        major, minor = version_key(since)
        assert not in_model(f"{major}.{minor - 1}", path.split()), f"{path}: documented before {since}"


def _eth0(config):
    return config["interface"]["eth0"]


@pytest.mark.parametrize("version", ["5.11", "5.15"])
def test_management_loss(version):
    new = version == "5.15"
    ip = "ipv4" if new else "ip"

    def fresh(mgmt=STATIC):
        return factory_config(version, "leaf01", mgmt, {})

    assert management_loss(fresh(), version, STATIC) is None
    config = fresh()
    _eth0(config)[ip]["address"] = {"192.168.0.99/20": {}}
    assert "changed from 192.168.0.10/20 to 192.168.0.99/20" in management_loss(config, version, STATIC)
    config = fresh()
    del _eth0(config)[ip]["address"]
    assert "no address" in management_loss(config, version, STATIC)
    config = fresh()
    (_eth0(config) if new else _eth0(config)["ip"])["vrf"] = "default"
    assert "not in the mgmt VRF" in management_loss(config, version, STATIC)
    config = fresh()
    (_eth0(config) if new else _eth0(config)["ip"]).pop("vrf")
    assert "not in the mgmt VRF" in management_loss(config, version, STATIC)
    assert management_loss({}, version, STATIC) == "interface eth0 is not configured"

    # DHCP: the lease comes back while the client runs; a static copy of the lease also keeps it.
    assert management_loss(fresh(DHCP), version, DHCP) is None
    config = fresh(DHCP)
    _eth0(config)[ip]["address"] = {"192.0.2.10/24": {}}
    _eth0(config)[ip].pop("dhcp-client", None)
    assert management_loss(config, version, DHCP) is None
    config = fresh(DHCP)
    if new:
        _eth0(config)["ipv4"] = {"dhcp-client": {"state": "disabled"}}
    else:
        _eth0(config)["ip"]["address"] = {"10.0.0.5/24": {}}
    assert "no DHCP client" in management_loss(config, version, DHCP)


def test_management_refuses_bad_addresses():
    with pytest.raises(ValueError, match="prefix length"):
        Management("192.168.0.10/32")
    with pytest.raises(ValueError, match="outside"):
        Management("192.168.0.10/24", "10.0.0.1")
    with pytest.raises(ValueError, match="static or dhcp"):
        Management("192.168.0.10/24", mode="bootp")
    assert factory.lease_for(0).address == "192.0.2.10/24" and factory.lease_for(1).ip == "192.0.2.11"


def test_password_hash_checks_with_crypt():
    # A hash made by a different tool (openssl passwd -6) must check, as NVUE's hashes do.
    assert factory.check_password("fabricgen-lab", HASH)
    assert not factory.check_password("fabricgen-lab2", HASH)
    made = factory.hash_password("s3cret")
    assert made.startswith("$6$") and factory.check_password("s3cret", made)
    assert not factory.check_password("s3cret", "*") and not factory.check_password("", "")
    if shutil.which("openssl"):
        salt = made.split("$")[2]
        assert subprocess.run(["openssl", "passwd", "-6", "-salt", salt, "s3cret"], capture_output=True,
                              text=True, check=True).stdout.strip() == made


def test_crypt_needs_no_python_crypt_module(monkeypatch):
    # Python's crypt module is gone in 3.13 (PEP 594): hashes go through libcrypt by ctypes
    import builtins

    real_import = builtins.__import__

    def no_crypt(name, *args, **kwargs):
        if name == "crypt":
            raise ImportError("no module named crypt")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_crypt)
    assert factory.check_password("fabricgen-lab", HASH)
    assert not factory.check_password("wrong", HASH)

