"""Per-device fault injection, re-read from DIR/faults/<name>.json at every use.

Keys (all optional):
  refuse_auth: bool           every password is rejected
  drop_after_commands: int    the connection is cut when command N+1 arrives
  apply_error: str | bool     `nv config apply` / `config replace` fail with this message
  apply_error_status: int     the exit status of that failure (default 1); 0: `nv config apply`
                              prints the Error and exits 0 without applying, as NVUE can
                              (DEVICE_STATE.md: netlab PR 1726)
  delay: float                seconds of sleep before each command's output
  hold: "any" | "pending"     a command line is held (not run, no output) while this is set:
                              "any" every line, "pending" a line that arrives while a commit waits
                              for confirmation; DIR/faults/<name>.held exists while one is held, so a
                              test acts at that point (a signal mid-wave) instead of racing a timer
  counters: {port: {pfc_rx_pause|pfc_tx_pause: {priority: rate}, ecn_marked: {traffic class: rate},
                    pfc_wd_storm: {priority: rate}}}
                              per-second rates the port's PFC pause / ECN-marked counters grow at,
                              and PFC storms its watchdog detects (each one restored again) where
                              the switch's config enables the watchdog on that port
                              (control.raise_counters / control.pfc_storms set them; the world
                              integrates them)
  switch: {os_version, ntp, psu, fans, temperature_c}
  ports: {port: {rx_power_dbm, tx_power_dbm, module_temperature_c, fec_ber, link_flaps}}
                              what `lab up --faults FILE` gives this switch (fault_file.py validates
                              the file); the platform answers read them (platform_oper.py)
  host: {rails_down: [netdev], pcp_trust: [netdev]}
                              a lab GPU server's faults (fault_file.py; gpu_host.apply_host_faults)

Tests flip faults mid-run by rewriting the file (control.set_faults does it atomically).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

KNOWN_KEYS = {"refuse_auth", "drop_after_commands", "apply_error", "apply_error_status", "delay", "hold", "counters",
              "switch", "ports", "host"}
HOLD_MODES = ("any", "pending")
COUNTER_KINDS = ("pfc_rx_pause", "pfc_tx_pause", "ecn_marked", "pfc_wd_storm")


@dataclass(frozen=True)
class Faults:
    refuse_auth: bool = False
    drop_after_commands: int | None = None
    apply_error: str | None = None
    apply_error_status: int = 1
    delay: float = 0.0
    hold: str | None = None
    counters: dict | None = None
    switch: dict | None = None
    ports: dict | None = None
    host: dict | None = None

    @classmethod
    def from_dict(cls, data: dict) -> Faults:
        unknown = set(data) - KNOWN_KEYS
        if unknown:
            raise ValueError(f"unknown fault keys {sorted(unknown)}; known: {sorted(KNOWN_KEYS)}")
        apply_error = data.get("apply_error")
        if apply_error is True:
            apply_error = "Config apply failed (injected fault)"
        drop = data.get("drop_after_commands")
        hold = data.get("hold")
        if hold is not None and hold not in HOLD_MODES:
            raise ValueError(f"hold: give one of {', '.join(HOLD_MODES)}, not {hold!r}")
        return cls(
            refuse_auth=bool(data.get("refuse_auth", False)),
            drop_after_commands=None if drop is None else int(drop),
            apply_error=str(apply_error) if apply_error else None,
            apply_error_status=int(data.get("apply_error_status", 1)),
            delay=float(data.get("delay", 0.0) or 0.0),
            hold=hold,
            counters=_counters(data.get("counters") or {}),
            switch=_mapping(data.get("switch"), "switch"),
            ports=_mapping(data.get("ports"), "ports"),
            host=_mapping(data.get("host"), "host"),
        )


def _counters(data: dict) -> dict:
    """{port: {kind: {priority: rate}}} with priorities 0-7 and rates >= 0, or ValueError."""
    out: dict = {}
    for port, kinds in data.items():
        if not isinstance(kinds, dict):
            raise ValueError(f"counters.{port}: give {{kind: {{priority: rate}}}}")
        for kind, per in kinds.items():
            if kind not in COUNTER_KINDS or not isinstance(per, dict):
                raise ValueError(f"counters.{port}.{kind}: kinds are {', '.join(COUNTER_KINDS)}")
            for priority, rate in per.items():
                if str(priority) not in {str(p) for p in range(8)} or float(rate) < 0:
                    raise ValueError(f"counters.{port}.{kind}.{priority}: priority 0-7, rate >= 0")
                out.setdefault(str(port), {}).setdefault(kind, {})[int(priority)] = float(rate)
    return out


def _mapping(value, key: str) -> dict:
    if value is not None and not isinstance(value, dict):
        raise ValueError(f"{key}: give a mapping (fault_file.py lists its keys)")
    return dict(value or {})


def fault_file(directory: Path, device: str) -> Path:
    return Path(directory) / "faults" / f"{device}.json"


def held_file(directory: Path, device: str) -> Path:
    """Exists while the device holds a command line (fault `hold`)."""
    return Path(directory) / "faults" / f"{device}.held"


def write_faults(directory: Path, device: str, faults: dict) -> None:
    Faults.from_dict(faults)  # refuse typos before a test silently runs without its fault
    path = fault_file(directory, device)
    path.parent.mkdir(parents=True, exist_ok=True)
    from generator.common.atomic_write import write_atomic

    write_atomic(path, json.dumps(faults), mode=0o600, fsync=False)      # never through a planted link


class FaultSource:
    """Cached reader: only re-parses the file when its mtime or size changes."""

    def __init__(self, path: Path):
        self.path = path
        self._stamp: tuple[int, int] | None = None
        self._faults = Faults()

    def current(self) -> Faults:
        try:
            st = self.path.stat()
        except FileNotFoundError:
            self._stamp, self._faults = None, Faults()
            return self._faults
        stamp = (st.st_mtime_ns, st.st_size)
        if stamp != self._stamp:
            try:
                self._faults = Faults.from_dict(json.loads(self.path.read_text() or "{}"))
                self._stamp = stamp
            except (ValueError, OSError):
                pass  # a half-written file: keep the previous faults until the next read
        return self._faults
