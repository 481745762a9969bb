"""The running-config hash a saved plan pins (devices/running_digest.py): what the switch is configured
with, not how it printed it."""

from __future__ import annotations

import pytest

from generator.devices.running_digest import running_sha256
from generator.drift.normalize import ConfigParseError

NVUE = """- header:
    model: SN5600
    nvue-api-version: nvue_v1
    rev-id: 1.0
    version: Cumulus Linux 5.11.0
- set:
    interface:
      swp1:
        link: {mtu: 9216, state: {up: {}}}
    system: {hostname: leaf01}
"""


def test_nvue_header_and_spelling_do_not_count():
    base = running_sha256("cumulus", NVUE)
    assert running_sha256("cumulus", NVUE.replace("rev-id: 1.0", "rev-id: 7.0")) == base
    assert running_sha256("cumulus", NVUE.replace("mtu: 9216", "mtu: '9216'")) == base
    assert running_sha256("cumulus", NVUE.replace("mtu: 9216", "mtu: 1500")) != base
    # an edit outside what fabricgen manages counts too: the candidate keeps it
    assert running_sha256("cumulus", NVUE.replace("hostname: leaf01", "hostname: leaf99")) != base


def test_sonic_key_order_does_not_count():
    one = '{"PORT": {"Ethernet0": {"mtu": "9100", "speed": "400000"}}, "DEVICE_METADATA": {}}'
    two = '{"DEVICE_METADATA": {}, "PORT": {"Ethernet0": {"speed": "400000", "mtu": "9100"}}}'
    assert running_sha256("sonic", one) == running_sha256("sonic", two)
    assert running_sha256("sonic", one) != running_sha256("sonic", one.replace("9100", "1500"))


def test_an_unreadable_running_config_is_an_error_not_a_hash():
    with pytest.raises(ConfigParseError):
        running_sha256("sonic", "{not json")
