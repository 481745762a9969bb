"""The verify collector's logic (generator/verify/collect.py, devices/sessions.py) with scripted
drivers: what a read that did not complete becomes, and when BGP counts as settled. The real
drivers against the lab are in tests/integration/test_verify_lab.py."""

from __future__ import annotations

from napalm.base.exceptions import ConnectionClosedException

from generator.devices.ssh import CommandFailed, ReadIncomplete
from generator.verify import collect


def _bgp(*states: tuple[str, bool, int]) -> dict:
    return {"global": {"router_id": "10.0.0.1", "peers": {
        nid: {"is_up": up, "is_enabled": True, "address_family": {"ipv4": {"received_prefixes": rx,
                                                                             "sent_prefixes": 1}}}
        for nid, up, rx in states}}}


class Scripted:
    """A driver whose getters answer from lists, one entry per call (an exception is raised)."""

    opened = 0

    def __init__(self, script: dict[str, list]):
        self.script = script
        self.closed = False

    def open(self):
        Scripted.opened += 1

    def close(self):
        self.closed = True

    def _next(self, getter: str):
        answer = self.script[getter].pop(0) if len(self.script[getter]) > 1 else self.script[getter][0]
        if isinstance(answer, Exception):
            raise answer
        return answer

    def get_interfaces_counters(self):
        return self._next("counters")

    def get_pfc_ecn_counters(self):
        return self._next("pfc")

    def get_interfaces(self):
        return self._next("interfaces")

    def get_lldp_neighbors(self):
        return self._next("lldp")

    def get_bgp_neighbors(self):
        return self._next("bgp")


def _script(**changes) -> dict[str, list]:
    script = {"counters": [{"swp1": {"rx_errors": 0}}], "pfc": [{}], "interfaces": [{"swp1": {"is_up": True}}],
              "lldp": [{}], "bgp": [_bgp(("swp1", True, 5))]}
    script.update(changes)
    return script


def _read(script: dict[str, list], *, settle_s: float = 0.0, planned: tuple[str, ...] = ("swp1",)):
    driver = Scripted(script)
    read = collect.SwitchRead("leaf1", lambda: driver, "pw")

    def pending(reading):
        peers = ((reading.bgp or {}).get("global") or {}).get("peers") or {}
        return [n for n in planned if not (peers.get(n) or {}).get("is_up")]

    collect.read_switch(read)
    collect.read_again(read, interval_s=0.0, settle_s=settle_s, pending=pending)
    return read.reading, driver


def test_a_cut_read_is_retried_once_on_a_new_session_and_then_counts():
    Scripted.opened = 0
    reading, _ = _read(_script(interfaces=[ReadIncomplete("`nv show interface -o json` failed, its output was "
                                                          "cut"), {"swp1": {"is_up": True}}]))
    assert reading.errors == {}
    assert reading.interfaces == {"swp1": {"is_up": True}}
    assert Scripted.opened == 2          # the login, then the new session of the retry


def test_a_read_that_fails_twice_is_unknown_with_its_reason_never_an_answer():
    cut = ConnectionClosedException("127.0.0.1:22: no prompt after ['nv', 'show'] within 20s")
    reading, driver = _read(_script(interfaces=[cut, cut]))
    assert reading.interfaces is None
    assert reading.errors == {"interfaces": "127.0.0.1:22: no prompt after ['nv', 'show'] within 20s"}
    assert reading.counters is not None and reading.bgp is not None      # the other getters still count
    assert driver.closed


def test_an_answer_of_the_device_is_not_retried():
    Scripted.opened = 0
    reading, _ = _read(_script(lldp=[CommandFailed("`nv show interface swp1 lldp -o json` failed, exit status 1"),
                                     {}]))
    assert "exit status 1" in reading.errors["lldp"]
    assert Scripted.opened == 1


def test_bgp_is_read_until_two_reads_agree_and_no_planned_session_is_connecting(monkeypatch):
    # the scripted reads change per read, not per second: the poll's one-second pause is not what
    # is tested here (2 s of waiting)
    monkeypatch.setattr(collect, "SETTLE_POLL_S", 0.01)
    connecting, up_3, up_5 = _bgp(("swp1", False, 0)), _bgp(("swp1", True, 3)), _bgp(("swp1", True, 5))
    reading, _ = _read(_script(bgp=[connecting, up_3, up_5, up_5, connecting]), settle_s=30.0)
    # connecting -> established with prefixes still arriving -> settled: the last stable read counts
    assert reading.bgp == up_5


def test_bgp_still_connecting_after_the_settle_time_is_what_is_reported():
    connecting = _bgp(("swp1", False, 0))
    reading, _ = _read(_script(bgp=[connecting]), settle_s=0.0)
    assert reading.bgp == connecting and "bgp" not in reading.errors


def test_the_counter_reads_are_two_and_a_failed_second_read_leaves_errors_unknown():
    reading, _ = _read(_script(counters=[{"swp1": {"rx_errors": 1}}, ReadIncomplete("cut"), ReadIncomplete("cut")]))
    assert reading.counters is None and reading.errors["counters"] == "cut"


def _read_all(console, streamed):
    return collect.read_switches(["leaf1", "leaf2"], lambda n: (lambda: Scripted(_script())), "pw",
                                 interval_s=0.0, settle_s=0.0, pending=lambda r: [], workers=2,
                                 streamed=streamed, console=console)


def test_on_a_terminal_each_switch_s_failures_are_shown_as_its_reads_end():
    import io

    from rich.console import Console

    screen = io.StringIO()
    seen = []

    def streamed(name, reading):
        seen.append((name, reading.counters is not None and reading.bgp is not None))
        return [f"bgp: {name}: expected established, observed idle"] if name == "leaf2" else []

    readings = _read_all(Console(file=screen, force_terminal=True, width=100), streamed)
    # called once per switch, after its second pass (both counter reads and BGP are in)
    assert sorted(seen) == [("leaf1", True), ("leaf2", True)] and sorted(readings) == ["leaf1", "leaf2"]
    assert "bgp: leaf2: expected established, observed idle" in screen.getvalue()


def test_not_on_a_terminal_nothing_is_streamed_the_report_has_it_all():
    import io

    from rich.console import Console

    screen = io.StringIO()
    calls = []
    _read_all(Console(file=screen, force_terminal=False), lambda n, r: calls.append(n) or ["x"])
    assert calls == [] and screen.getvalue() == ""
