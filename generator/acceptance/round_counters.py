"""Switch counters around a burn-in round: which cable showed errors while the round ran.

A weak leaf-spine cable carries a few of many pairs' ECMP flows, so no pair's rate shows it
(attribution.py); the switch port at its receiving end does: frames that arrive corrupted count
as FCS errors there (IEEE 802.3 30.3.1.1.6 aFrameCheckSequenceErrors), read as napalm's
rx_errors. Snapshots are {switch: {port: napalm get_interfaces_counters row}} taken before and
after a round (burnin/<round>/counters-before.json, -after.json); any growth of rx/tx errors or
discards on a port of a cable the round used names that cable, with the port and the growth.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

ERROR_KEYS = ("rx_errors", "tx_errors", "rx_discards", "tx_discards")
MAX_BYTES = 64 << 20


@dataclass(frozen=True, slots=True)
class CounterFinding:
    cable: int
    round: str
    device: str
    port: str
    counter: str
    growth: int


def snapshot_paths(directory: Path, round_id: str) -> tuple[Path, Path]:
    base = directory / "burnin" / round_id
    return base / "counters-before.json", base / "counters-after.json"


def load_snapshot(path: Path) -> dict:
    """{switch: {port: {counter: int}}}; ValueError naming the file."""
    if not path.is_file() or path.stat().st_size > MAX_BYTES:
        raise ValueError(f"{path}: not a counter snapshot file")
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ValueError(f"{path}: unreadable counter snapshot ({exc})") from None
    if not isinstance(doc, dict) or not all(isinstance(v, dict) for v in doc.values()):
        raise ValueError(f"{path}: a counter snapshot is {{switch: {{port: counters}}}}")
    return doc


def round_findings(cables: dict[str, dict], round_id: str, used: set[int], before: dict, after: dict
                   ) -> list[CounterFinding]:
    """Error growth during the round on either switch end of a cable the round used."""
    out = []
    for row in sorted(used):
        cable = cables[str(row)]
        for end in (cable["a"], cable["b"]):
            device, port = end.split(":", 1)
            then, now = (before.get(device) or {}).get(port), (after.get(device) or {}).get(port)
            if not isinstance(then, dict) or not isinstance(now, dict):
                continue
            for key in ERROR_KEYS:
                try:
                    grew = int(now.get(key, 0) or 0) - int(then.get(key, 0) or 0)
                except (TypeError, ValueError):
                    continue
                if grew > 0:
                    out.append(CounterFinding(row, round_id, device, port, key.replace("_", " "), grew))
    return out
