"""The day-0 inventory CSV: every problem is one line with file:line; the CLI then writes nothing."""

from __future__ import annotations

import os
import subprocess
import threading
from pathlib import Path

import pytest

from generator.day0.inventory import InventoryError, load_inventory, missing_switches, missing_warning
from tests.cli_runner import run_cli
from tests.conftest import example
from tests.day0_support import URL, compiled, inventory, inventory_text


def _plan():
    return compiled("medium")[1]


def _load(tmp_path: Path, text: str):
    path = tmp_path / "inv.csv"
    path.write_text(text)
    return load_inventory(path, _plan())


def test_rows_are_read_and_normalised(tmp_path: Path) -> None:
    plan = _plan()
    inv = _load(tmp_path, inventory_text(plan, switches=3, hosts=2))
    assert list(inv.switches) == [sw.name for sw in plan.switches[:3]]
    assert list(inv.hosts) == [h.name for h in plan.hosts[:2]]
    # the second row was written upper case: stored lower case
    assert inv.switches[plan.switches[1].name].mac == "44:38:39:00:00:01"
    assert [r.line for r in inv.rows] == [2, 3, 4, 5, 6]


def _one_error(tmp_path: Path, rows: list[str]) -> str:
    with pytest.raises(InventoryError) as info:
        _load(tmp_path, "name,serial,mac\n" + "\n".join(rows) + "\n")
    message = str(info.value)
    assert "\n" not in message
    return message


def test_errors_name_file_and_line(tmp_path: Path) -> None:
    sw = [s.name for s in _plan().switches]
    where = f"{tmp_path / 'inv.csv'}:"
    bad_mac = _one_error(tmp_path, [f"{sw[0]},A1,44:38:39:00:00:01", f"{sw[1]},A2,44-38-39-00-00-02"])
    assert bad_mac.startswith(where + "3: mac '44-38-39-00-00-02' is not a MAC address")
    multicast = _one_error(tmp_path, [f"{sw[0]},A1,01:00:5e:00:00:01"])
    assert multicast.startswith(where + "2: mac 01:00:5e:00:00:01 is a multicast")
    dup_mac = _one_error(tmp_path, [f"{sw[0]},A1,44:38:39:00:00:01", "", f"{sw[1]},A2,44:38:39:00:00:01"])
    assert dup_mac.startswith(where + "4: mac 44:38:39:00:00:01 of " + sw[1] + " is also on line 2")
    dup_serial = _one_error(tmp_path, [f"{sw[0]},A1,44:38:39:00:00:01", f"{sw[1]},A1,44:38:39:00:00:02"])
    assert dup_serial.startswith(where + "3: serial A1 of " + sw[1] + " is also on line 2")
    unknown = _one_error(tmp_path, [f"{sw[0]},A1,44:38:39:00:00:01", "spine-99,A2,44:38:39:00:00:02"])
    assert unknown.startswith(where + "3: 'spine-99' is not a switch or host of the plan")
    twice = _one_error(tmp_path, [f"{sw[0]},A1,44:38:39:00:00:01", f"{sw[0]},A2,44:38:39:00:00:02"])
    assert twice.startswith(where + f"3: {sw[0]} is listed twice (first on line 2)")
    fields = _one_error(tmp_path, [f"{sw[0]},A1"])
    assert fields.startswith(where + "2: 2 fields")


def test_header_is_required(tmp_path: Path) -> None:
    with pytest.raises(InventoryError, match=r"inv.csv:1: the header is 'mac,name,serial'"):
        _load(tmp_path, "mac,name,serial\n")


def test_hostile_values_are_rejected(tmp_path: Path) -> None:
    """A name with quotes or a newline (quoted CSV field) never reaches a script or Kea: it is
    no name of the plan. The line is the row's first line."""
    sw = _plan().switches[0].name
    quoted = _one_error(tmp_path, [f"{sw},A1,44:38:39:00:00:01", '"x\'; rm -rf / #\nnext",A2,44:38:39:00:00:02'])
    assert ":3: " in quoted and "is not a switch or host of the plan" in quoted
    serial = _one_error(tmp_path, [f"{sw},$(reboot),44:38:39:00:00:01"])
    assert ":2: serial '$(reboot)'" in serial
    with pytest.raises(InventoryError, match=r"inv.csv:2: not UTF-8"):
        path = tmp_path / "inv.csv"
        path.write_bytes(b"name,serial,mac\n\xff\xfe,A,44:38:39:00:00:01\n")
        load_inventory(path, _plan())


def test_missing_switches_are_one_warning_line() -> None:
    plan = _plan()
    inv = inventory(plan, switches=2)
    missing = missing_switches(inv, plan)
    assert missing == [s.name for s in plan.switches[2:]]
    line = missing_warning(missing, inv)
    assert line is not None and "\n" not in line
    assert line.startswith(f"warning: inventory.csv: {len(missing)} switch(es) have no row")
    assert missing_warning([], inv) is None


def _day0(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    return run_cli("day0", str(example("medium")), "-o", str(tmp_path / "kit"), "--url", URL, *args)


def test_cli_bad_inventory_writes_nothing(tmp_path: Path) -> None:
    sw = _plan().switches[0].name
    bad = tmp_path / "inv.csv"
    bad.write_text(f"name,serial,mac\n{sw},A1,44:38:39:00:00:0g\n")
    r = _day0(tmp_path, "--inventory", str(bad))
    assert r.returncode == 1, r.stdout + r.stderr
    errors = [line for line in r.stderr.splitlines() if line.startswith("error:")]
    assert errors == [f"error: {bad}:2: mac '44:38:39:00:00:0g' is not a MAC address; write eth0's MAC as six hex "
                      "pairs separated by ':', e.g. 44:38:39:00:00:01; nothing written"]
    assert not (tmp_path / "kit").exists()
    assert [p.name for p in tmp_path.iterdir()] == ["inv.csv"]      # no temporary directory left either


def test_cli_usage_errors(tmp_path: Path) -> None:
    r = _day0(tmp_path, "--url", "ftp://h/x")
    assert r.returncode == 2 and "--url 'ftp://h/x': give an http:// or https:// URL" in r.stderr
    r = _day0(tmp_path, "--dhcp-interface", "eth0; reboot")
    assert r.returncode == 2 and "--dhcp-interface 'eth0; reboot'" in r.stderr
    assert not (tmp_path / "kit").exists()


def test_inventory_from_a_pipe(tmp_path: Path) -> None:
    """--inventory <(...) is a FIFO, not a regular file: read it too."""
    plan = _plan()
    fifo = tmp_path / "inv.fifo"
    os.mkfifo(fifo)
    writer = threading.Thread(target=lambda: fifo.write_text(inventory_text(plan, switches=2)))
    writer.start()
    inv = load_inventory(fifo, plan)
    writer.join(10)
    assert len(inv.switches) == 2
    with pytest.raises(InventoryError, match="a directory"):
        load_inventory(tmp_path, plan)
