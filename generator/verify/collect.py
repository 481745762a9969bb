"""Read every switch through its napalm driver, in a thread pool, with a progress bar on a terminal.

Per switch: counters and PHY counters (read 1), interfaces, LLDP (napalm's detail getter: port
ID and port description), BGP, facts, environment, transceivers, NTP; then counters again once
`interval_s` has passed since read 1 (errors / PFC / ECN / FEC / flaps compare the two); then,
while a planned BGP session is still not established, BGP again every SETTLE_POLL_S until
`settle_s` after the first BGP read (a session still connecting is not yet a finding); then the
routes (ECMP), which follow the sessions. A getter that fails leaves its checks unknown; the
others still run. A getter the switch OS's driver does not have (a driver extra, or
NotImplementedError) leaves its checks skipped, with that reason.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed

from generator.verify.checks import SwitchReading

SETTLE_POLL_S = 1.0


def _one_line(exc: BaseException, password: str | None) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    if isinstance(exc, NotImplementedError):
        text = f"not implemented by this switch OS's driver yet ({text or 'NotImplementedError'})"
    if password:
        text = text.replace(password, "***")
    return text if len(text) < 300 else text[:297] + "..."


def read_switch(name: str, make_driver: Callable, password: str | None, *, interval_s: float, settle_s: float,
                pending: Callable[[SwitchReading], list[str]]) -> SwitchReading:
    reading = SwitchReading(name)
    try:
        driver = make_driver()
        driver.open()
    except Exception as exc:  # noqa: BLE001 - an unreachable switch is unknown, never passed
        reading.errors["connect"] = _one_line(exc, password)
        return reading
    try:
        def get(key: str, call):
            try:
                return call()
            except Exception as exc:  # noqa: BLE001 - this getter's checks become unknown
                reading.errors[key] = _one_line(exc, password)
                return None

        def optional(key: str, getter: str):
            call = getattr(driver, getter, None)
            if call is None:
                reading.unsupported[key] = f"this switch OS's driver has no {getter}"
                return None
            try:
                return call()
            except NotImplementedError:
                reading.unsupported[key] = f"this switch OS's driver does not implement {getter} yet"
                return None
            except Exception as exc:  # noqa: BLE001 - this getter's checks become unknown
                reading.errors[key] = _one_line(exc, password)
                return None

        started = time.monotonic()
        counters0 = get("counters", driver.get_interfaces_counters)
        pfc0 = get("pfc", getattr(driver, "get_pfc_ecn_counters", _missing("get_pfc_ecn_counters")))
        phy0 = optional("phy", "get_phy_counters")
        reading.interfaces = get("interfaces", driver.get_interfaces)
        reading.lldp = get("lldp", lambda: lldp_neighbors(driver))
        reading.bgp = get("bgp", driver.get_bgp_neighbors)
        # the settle time runs from this first BGP read, however long the reads before it took
        bgp_read = time.monotonic()
        reading.facts = optional("facts", "get_facts")
        reading.environment = optional("environment", "get_environment")
        reading.transceivers = optional("transceivers", "get_transceivers")
        reading.ntp = optional("ntp", "get_ntp_stats")
        time.sleep(max(0.0, started + interval_s - time.monotonic()))
        reading.interval_s = time.monotonic() - started
        counters1 = get("counters", driver.get_interfaces_counters) if counters0 is not None else None
        pfc1 = get("pfc", driver.get_pfc_ecn_counters) if pfc0 is not None else None
        phy1 = optional("phy", "get_phy_counters") if phy0 is not None else None
        if counters0 is not None and counters1 is not None:
            reading.counters = (counters0, counters1)
        if pfc0 is not None and pfc1 is not None:
            reading.pfc = (pfc0, pfc1)
        if phy0 is not None and phy1 is not None:
            reading.phy = (phy0, phy1)
        while reading.bgp is not None and pending(reading) and time.monotonic() - bgp_read < settle_s:
            time.sleep(min(SETTLE_POLL_S, max(0.0, settle_s - (time.monotonic() - bgp_read))))
            reading.bgp = get("bgp", driver.get_bgp_neighbors)
        # the routes BGP installed: read once the planned sessions are up (or the settle time is over)
        reading.routes = optional("routes", "get_route_next_hops")
    finally:
        try:
            driver.close()
        except Exception:  # noqa: BLE001 - what we read stays valid
            pass
    return reading


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
                  interval_s: float, settle_s: float, pending, concurrency: int) -> dict[str, SwitchReading]:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    readings: dict[str, SwitchReading] = {}
    progress = Progress(TextColumn("reading switches"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                        console=Console(stderr=True), transient=True, disable=not sys.stderr.isatty())
    with progress, ThreadPoolExecutor(max_workers=max(1, min(concurrency, len(names) or 1)),
                                      thread_name_prefix="verify") as pool:
        task = progress.add_task("read", total=len(names))
        futures = {pool.submit(read_switch, n, make_driver(n), password, interval_s=interval_s, settle_s=settle_s,
                               pending=pending): n for n in names}
        for future in as_completed(futures):
            reading = future.result()
            readings[reading.name] = reading
            progress.advance(task)
    return readings
