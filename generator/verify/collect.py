"""Read every switch through its napalm driver, in a bounded pool, with a progress bar on a terminal.

One session per switch, in two passes over all switches (issue 26):
- pass 1 (read_switch): counters and PHY counters (read 1), interfaces, LLDP (napalm's detail
  getter: port ID and port description), BGP, facts, environment, transceivers, NTP; on NVUE the
  interface reads inside one `snapshot()` of the interface tree, so the per-port getters cost one
  read, not one per port;
- the counter interval: pass 2 reads a switch's counters again once `interval_s` has passed
  since its read 1 (errors / PFC / ECN compare the two). Every switch's read 1 is in pass 1, so
  the interval is paid once for the fleet, not once per switch or per pool round;
- pass 2 (read_again): counters and PHY counters (read 2: errors / PFC / ECN / FEC / flaps compare
  the two), then BGP again until it is stable: no planned session still connecting and two reads
  in a row agreeing on every session's state and prefix counts, re-read every SETTLE_POLL_S until
  `settle_s` after the first BGP read (a session still connecting, or prefixes still propagating,
  is not yet a finding); then the routes (ECMP), which follow the sessions.
A getter that fails leaves its checks unknown; the others still run. A getter the switch OS's
driver does not have (a driver extra, or NotImplementedError) leaves its checks skipped, with that
reason. A read that did not
complete (timeout, cut output, cut JSON) is retried once on a new session first
(devices/sessions.py), so a busy switch or bastion is never a `failed` finding.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable

from generator.devices.sessions import Session, for_each
from generator.verify.checks import SwitchReading

SETTLE_POLL_S = 1.0


def _one_line(exc: BaseException, password: str | None) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    if isinstance(exc, NotImplementedError):
        text = f"not implemented by this switch OS's driver yet ({text or 'NotImplementedError'})"
    if password:
        text = text.replace(password, "***")
    return text if len(text) < 300 else text[:297] + "..."


class SwitchRead:
    """One switch across both passes: its session, its reading, when read 1 was taken."""

    def __init__(self, name: str, make_driver: Callable, password: str | None):
        self.reading = SwitchReading(name)
        self.session = Session(make_driver)
        self.password = password
        self.started = 0.0
        self.bgp_read = 0.0
        self.counters0 = self.pfc0 = self.phy0 = None

    def get(self, key: str, call: Callable[[object], object]):
        """call(driver) for one getter; on failure its error under `key` (its checks: unknown), None."""
        try:
            return self.session.call(call)
        except Exception as exc:  # noqa: BLE001 - this getter's checks become unknown
            self.reading.errors[key] = _one_line(exc, self.password)
            return None

    def optional(self, key: str, getter: str):
        """driver.GETTER() for a getter not every switch OS's driver has: missing or not implemented
        leaves its checks skipped (reading.unsupported), a failure leaves them unknown."""
        if getattr(self.session.driver, getter, None) is None:
            self.reading.unsupported[key] = f"this switch OS's driver has no {getter}"
            return None
        try:
            return self.session.call(lambda d: getattr(d, getter)())
        except NotImplementedError:
            self.reading.unsupported[key] = f"this switch OS's driver does not implement {getter} yet"
            return None
        except Exception as exc:  # noqa: BLE001 - this getter's checks become unknown
            self.reading.errors[key] = _one_line(exc, self.password)
            return None

    def snapshot(self):
        """The driver's snapshot() (NVUE: one interface-tree read for the per-port getters), if it has one."""
        snap = getattr(self.session.driver, "snapshot", None)
        return snap() if snap is not None else contextlib.nullcontext()


def read_switch(read: SwitchRead) -> None:
    """Pass 1: log in, first counters, interfaces, LLDP, BGP. The session stays open for pass 2."""
    reading = read.reading
    try:
        read.session.open()
    except Exception as exc:  # noqa: BLE001 - an unreachable switch is unknown, never passed
        reading.errors["connect"] = _one_line(exc, read.password)
        return
    get = read.get
    with read.snapshot():
        read.started = time.monotonic()
        read.counters0 = get("counters", lambda d: d.get_interfaces_counters())
        read.pfc0 = get("pfc", lambda d: getattr(d, "get_pfc_ecn_counters", _missing("get_pfc_ecn_counters"))())
        read.phy0 = read.optional("phy", "get_phy_counters")
        reading.interfaces = get("interfaces", lambda d: d.get_interfaces())
        reading.lldp = get("lldp", lldp_neighbors)
    reading.bgp = get("bgp", lambda d: d.get_bgp_neighbors())
    # the settle time runs from this first BGP read, however long the reads around it take
    read.bgp_read = time.monotonic()
    reading.facts = read.optional("facts", "get_facts")
    if getattr(read.session.driver, "nos_release_reading", None) is not None:
        reading.release = read.optional("release", "nos_release_reading")
    reading.environment = read.optional("environment", "get_environment")
    reading.transceivers = read.optional("transceivers", "get_transceivers")
    reading.ntp = read.optional("ntp", "get_ntp_stats")


def read_again(read: SwitchRead, *, interval_s: float, settle_s: float,
               pending: Callable[[SwitchReading], list[str]]) -> None:
    """Pass 2: the second counters once `interval_s` has passed since read 1, then BGP until stable."""
    reading = read.reading
    if "connect" in reading.errors:
        return
    try:
        time.sleep(max(0.0, read.started + interval_s - time.monotonic()))
        get = read.get
        with read.snapshot():
            reading.interval_s = time.monotonic() - read.started
            counters1 = get("counters", lambda d: d.get_interfaces_counters()) if read.counters0 is not None else None
            pfc1 = get("pfc", lambda d: d.get_pfc_ecn_counters()) if read.pfc0 is not None else None
            phy1 = read.optional("phy", "get_phy_counters") if read.phy0 is not None else None
        if read.counters0 is not None and counters1 is not None:
            reading.counters = (read.counters0, counters1)
        if read.pfc0 is not None and pfc1 is not None:
            reading.pfc = (read.pfc0, pfc1)
        if read.phy0 is not None and phy1 is not None:
            reading.phy = (read.phy0, phy1)
        previous = reading.bgp
        while previous is not None:
            current = get("bgp", lambda d: d.get_bgp_neighbors())
            if current is None:              # the re-read failed: keep what was read, say so
                reading.errors.pop("bgp", None)
                break
            reading.bgp = current
            if not pending(reading) and _bgp_state(current) == _bgp_state(previous):
                break
            if time.monotonic() - read.bgp_read >= settle_s:
                break
            previous = current
            time.sleep(min(SETTLE_POLL_S, max(0.0, settle_s - (time.monotonic() - read.bgp_read))))
        # the routes BGP installed: read once the planned sessions are stable (or the settle time is over)
        reading.routes = read.optional("routes", "get_route_next_hops")
    finally:
        read.session.close()


def _bgp_state(bgp: dict) -> dict:
    """What must hold still across two reads: each session's state and prefix counts (not uptimes)."""
    peers = ((bgp or {}).get("global") or {}).get("peers") or {}
    return {nid: (p.get("is_up"), p.get("is_enabled"),
                  {af: (c.get("received_prefixes"), c.get("sent_prefixes"))
                   for af, c in (p.get("address_family") or {}).items() if isinstance(c, dict)})
            for nid, p in peers.items() if isinstance(p, dict)}


def lldp_neighbors(driver) -> dict[str, list[dict]]:
    """{local port: [{hostname, port, port_description}]}: the remote system name, port ID and port
    description of napalm's get_lldp_neighbors_detail. The description matters for hosts: lldpd
    announces a host port's MAC as its port ID and the netdev as its description unless configured
    with `portidsubtype ifname` (lldpcli(8)). A driver without the detail getter gives napalm's
    get_lldp_neighbors (system name and port ID only)."""
    detail = getattr(driver, "get_lldp_neighbors_detail", None)
    try:
        found = detail() if detail is not None else None
    except NotImplementedError:
        found = None
    if found is None:
        return driver.get_lldp_neighbors()
    return {str(port): [{"hostname": str(n.get("remote_system_name") or ""), "port": str(n.get("remote_port") or ""),
                         "port_description": str(n.get("remote_port_description") or "")}
                        for n in neighbors if isinstance(n, dict)]
            for port, neighbors in found.items() if isinstance(neighbors, list)}


def _missing(name: str):
    def call():
        raise NotImplementedError(name)
    return call


def read_switches(names: list[str], make_driver: Callable[[str], Callable], password: str | None, *,
                  interval_s: float, settle_s: float, pending, workers: int,
                  streamed: Callable[[str, SwitchReading], list[str]] | None = None,
                  console=None) -> dict[str, SwitchReading]:
    """Both passes under one progress bar (2 steps per switch) on a terminal; as each switch's
    pass 2 ends, the lines STREAMED gives for its reading (its failed checks) are printed above the
    bar, so a person sees a broken switch while the others are still read. Not on a terminal (CI,
    a log, a pipe): no bar and nothing streamed; the report has it all."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    console = console or Console(stderr=True)
    live = console.is_terminal
    reads = {n: SwitchRead(n, make_driver(n), password) for n in names}
    progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                        console=console, transient=True, disable=not live)

    def finished(name: str) -> None:
        progress.advance(task)
        if live and streamed is not None:
            for line in streamed(name, reads[name].reading):
                progress.console.print(line, markup=False, highlight=False)

    try:
        with progress:
            task = progress.add_task("reading switches", total=2 * len(names))
            for_each(names, lambda n: read_switch(reads[n]), workers, lambda _: progress.advance(task))
            progress.update(task, description="counters again, BGP settled")
            for_each(names, lambda n: read_again(reads[n], interval_s=interval_s, settle_s=settle_s,
                                                 pending=pending), workers, finished)
    finally:
        for read in reads.values():      # an interrupt between the passes leaves no session open
            read.session.close()
    return {n: reads[n].reading for n in names}
