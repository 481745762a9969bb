"""Issue 23, item 2: no invented switch-side tools. Every command the drivers send runs a program
the NOS ships (NVUE's `nv`, sonic-utilities, systemd, coreutils), never a fabricgen helper."""

from __future__ import annotations

import dataclasses
import shlex

import pytest

from generator.devices.commands import NVUE_GENERATIONS, SHA256SUM, SONIC, NvueCommands

# Cumulus Linux 5.x runs FRR as its routing suite (vtysh is FRR's shell: NVIDIA's "FRRouting" page) on
# Debian (coreutils' cat): the --day0 evidence reads (day0_evidence.py) use both
CUMULUS_STOCK = {"nv", "sha256sum", "vtysh", "cat"}
SONIC_STOCK = {"config", "sonic-cfggen", "show", "cat", "systemd-run", "systemctl", "portstat", "docker",
               "vtysh", "sha256sum"}
NOT_COMMANDS = {"confirm_description", "reload_description", "message_option", "revert_rollback",
                "revert_reload"}


def programs(commands) -> dict[str, str]:
    out = {}
    for field in dataclasses.fields(commands):
        value = getattr(commands, field.name)
        if field.name in NOT_COMMANDS or not isinstance(value, str) or " " not in value or value.startswith("/"):
            continue
        argv = shlex.split(value)
        out[field.name] = argv[1] if argv[0] == "sudo" else argv[0]
    return out


@pytest.mark.parametrize("commands", [c for _, c in NVUE_GENERATIONS], ids=lambda c: c.generation)
def test_cumulus_commands_are_stock(commands: NvueCommands):
    found = programs(commands)
    assert "confirm_yes" in found and "apply_confirm" in found
    assert {k: v for k, v in found.items() if v not in CUMULUS_STOCK} == {}


def test_sonic_commands_are_stock():
    found = programs(SONIC)
    assert found["run_timer"] == "systemd-run" and found["stop_unit"] == "systemctl"
    assert {k: v for k, v in found.items() if v not in SONIC_STOCK} == {}
    # what the timer runs is sonic-utilities' own `config`
    assert SONIC.revert_rollback.split()[0] == SONIC.revert_reload.split()[0] == "config"
    assert SHA256SUM.split()[0] == "sha256sum"

