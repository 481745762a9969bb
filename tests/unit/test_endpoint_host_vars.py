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


def test_a_limit_is_narrowed_to_the_servers_as_ansible_reads_it():
    """Ansible splits a pattern with a comma on commas only: the intersection must be its own term."""
    from ansible.inventory.manager import split_host_pattern

    from generator.devices.credentials import SERVERS_GROUP, endpoint_overlay, servers_only

    assert servers_only(None) == SERVERS_GROUP
    assert split_host_pattern(servers_only("gpu001,gpu004")) == ["gpu001", "gpu004", f"&{SERVERS_GROUP}"]
    assert endpoint_overlay({"gpu001": {"ansible_port": 2201}})["all"]["children"] == {
        SERVERS_GROUP: {"hosts": {"gpu001": {}}}}
