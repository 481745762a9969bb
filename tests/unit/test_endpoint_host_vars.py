"""The endpoints file's hosts.servers map (written by `lab up --hosts`) as per-host Ansible vars."""

import pytest

from generator.devices.credentials import CredentialsError, endpoint_host_vars


def test_servers_become_host_vars():
    section = {"user": "root", "servers": {"gpu001": {"host": "127.0.0.1", "port": 4022,
                                                      "remote_tmp": "/lab/t", "fabricgen_root": "/ignored"}}}
    assert endpoint_host_vars(section) == {"gpu001": {"ansible_host": "127.0.0.1", "ansible_port": 4022,
                                                      "ansible_remote_tmp": "/lab/t"}}


def test_real_servers_keep_their_inventory_address():
    assert endpoint_host_vars({"user": "root", "ssh_key": "id"}) == {}
    assert endpoint_host_vars(None) == {}


@pytest.mark.parametrize("entry, where", [({"port": 22}, "hosts.servers.gpu001: needs at least `host`"),
                                          ({"host": "h", "port": "x"}, "hosts.servers.gpu001.port")])
def test_a_bad_server_entry_names_its_key(entry, where):
    with pytest.raises(CredentialsError, match=where.replace(".", r"\.")):
        endpoint_host_vars({"servers": {"gpu001": entry}})
