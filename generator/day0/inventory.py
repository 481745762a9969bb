"""The day-0 inventory: which box on the floor is which planned device.

`name,serial,mac` (DESIGN.md, "The inventory CSV"): one row per switch, mac = eth0's MAC in
any case, `:` separated. Rows may also name GPU servers of the plan: their management NIC then
gets a DHCP reservation too. Every problem is one InventoryError `file:line: what; what to do`,
raised before anything is written.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass
from pathlib import Path

from generator.common.errors import FabricgenError
from generator.plan.model import FabricPlan

HEADER = ("name", "serial", "mac")
_MAC = re.compile(r"\A[0-9a-f]{2}(:[0-9a-f]{2}){5}\Z")
# Serial numbers are printed on a label and read back by `nv show platform` / `show platform
# syseeprom`: letters, digits and a few separators. Anything else is a copy-paste accident.
_SERIAL = re.compile(r"\A[A-Za-z0-9][A-Za-z0-9._/-]{0,63}\Z")
LIMIT = 16 << 20          # a 10k-device inventory is well under 1 MB


class InventoryError(FabricgenError, ValueError):
    """One line naming file:line, what is wrong and what to do."""


@dataclass(frozen=True, slots=True)
class Row:
    name: str
    serial: str
    mac: str          # normalised: lower case, `:` separated
    line: int
    kind: str         # switch | host


@dataclass(frozen=True, slots=True)
class Inventory:
    path: str
    rows: tuple[Row, ...]

    @property
    def switches(self) -> dict[str, Row]:
        return {r.name: r for r in self.rows if r.kind == "switch"}

    @property
    def hosts(self) -> dict[str, Row]:
        return {r.name: r for r in self.rows if r.kind == "host"}


EMPTY = Inventory("", ())


def _mac(value: str, where: str) -> str:
    mac = value.strip().lower()
    if not _MAC.match(mac):
        raise InventoryError(f"{where}: mac {value!r} is not a MAC address; write eth0's MAC as six "
                             "hex pairs separated by ':', e.g. 44:38:39:00:00:01")
    first = int(mac[:2], 16)
    if first & 1 or mac == "00:00:00:00:00:00":
        # a NIC's own address is unicast (IEEE 802: the I/G bit of the first octet is 0)
        raise InventoryError(f"{where}: mac {mac} is a multicast or zero address, not a NIC's; "
                             "copy eth0's MAC from the switch's label or `ip link show eth0`")
    return mac


def parse_inventory(text: str, path: str, plan: FabricPlan) -> Inventory:
    """The rows of TEXT checked against PLAN; InventoryError on the first problem."""
    switches = {sw.name for sw in plan.switches}
    hosts = {h.name for h in plan.hosts}
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    try:
        header = next(reader, None)
    except csv.Error as exc:
        raise InventoryError(f"{path}:1: not CSV ({exc}); the first line must be name,serial,mac") from None
    if header is None or tuple(h.strip().lower() for h in header) != HEADER:
        got = ",".join(header) if header else "nothing"
        raise InventoryError(f"{path}:1: the header is {got[:80]!r}; the first line must be name,serial,mac")
    rows: list[Row] = []
    seen_name: dict[str, int] = {}
    seen_mac: dict[str, int] = {}
    seen_serial: dict[str, int] = {}
    while True:
        line = reader.line_num + 1
        try:
            fields = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            raise InventoryError(f"{path}:{line}: not CSV ({exc}); one row is name,serial,mac") from None
        if not fields or all(not f.strip() for f in fields):
            continue
        where = f"{path}:{line}"
        if len(fields) != 3:
            raise InventoryError(f"{where}: {len(fields)} fields; a row is name,serial,mac")
        name, serial, mac = (f.strip() for f in fields)
        if name in switches:
            kind = "switch"
        elif name in hosts:
            kind = "host"
        else:
            raise InventoryError(f"{where}: {name[:64]!r} is not a switch or host of the plan; use the names "
                                 f"`fabricgen render` gives (e.g. {sorted(switches)[0] if switches else '?'}) "
                                 "or remove the row")
        if name in seen_name:
            raise InventoryError(f"{where}: {name} is listed twice (first on line {seen_name[name]}); "
                                 "keep one row per device")
        if not _SERIAL.match(serial):
            raise InventoryError(f"{where}: serial {serial[:64]!r} of {name} is not a serial number "
                                 "(letters, digits, '.', '_', '/', '-'); copy it from the label")
        if serial in seen_serial:
            raise InventoryError(f"{where}: serial {serial} of {name} is also on line {seen_serial[serial]}; "
                                 "each box has its own serial: check both rows against the labels")
        norm = _mac(mac, where)
        if norm in seen_mac:
            raise InventoryError(f"{where}: mac {norm} of {name} is also on line {seen_mac[norm]}; "
                                 "each eth0 has its own MAC: check both rows against the labels")
        seen_name[name], seen_serial[serial], seen_mac[norm] = line, line, line
        rows.append(Row(name, serial, norm, line, kind))
    return Inventory(path, tuple(rows))


def load_inventory(path: str | Path, plan: FabricPlan) -> Inventory:
    """Read and check the inventory file at PATH against PLAN."""
    shown = str(path)
    try:
        p = Path(path)
        if not p.exists():
            raise InventoryError(f"{shown}: no such file; give the inventory CSV (name,serial,mac)")
        if p.is_dir():
            raise InventoryError(f"{shown}: a directory; give the inventory CSV (name,serial,mac)")
        with p.open("rb") as fh:          # a pipe too (--inventory <(...))
            data = fh.read(LIMIT + 1)
        if len(data) > LIMIT:
            raise InventoryError(f"{shown}: larger than {LIMIT >> 20} MB; is this the inventory CSV?")
    except OSError as exc:
        raise InventoryError(f"{shown}: cannot read: {exc.strerror or exc}") from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise InventoryError(f"{shown}:{line}: not UTF-8 text; save the inventory as UTF-8 CSV") from None
    if "\0" in text:
        line = text[: text.index("\0")].count("\n") + 1
        raise InventoryError(f"{shown}:{line}: a NUL byte; save the inventory as UTF-8 CSV")
    return parse_inventory(text, shown, plan)


def missing_switches(inventory: Inventory, plan: FabricPlan) -> list[str]:
    """The plan's switches without a row, in plan order."""
    have = inventory.switches
    return [sw.name for sw in plan.switches if sw.name not in have]


def missing_warning(missing: list[str], inventory: Inventory, shown: int = 8) -> str | None:
    """ONE warning line naming the switches that get no reservation, or None."""
    if not missing:
        return None
    more = f" and {len(missing) - shown} more" if len(missing) > shown else ""
    source = inventory.path or "no --inventory"
    return (f"warning: {source}: {len(missing)} switch(es) have no row and get no DHCP reservation: "
            f"{', '.join(missing[:shown])}{more}; add name,serial,mac rows to provision them through ZTP")


__all__ = ["EMPTY", "HEADER", "Inventory", "InventoryError", "Row", "load_inventory", "missing_switches",
           "missing_warning", "parse_inventory"]
