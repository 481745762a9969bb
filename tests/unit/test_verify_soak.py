"""The soak's judgement over counter samples (pure), and its duration parsing."""

from __future__ import annotations

import pytest

from generator.verify.soak import Sample, growth, parse_duration, report, soak


def c(rx: int = 0, discards: int = 0) -> dict:
    return {"rx_errors": rx, "tx_errors": 0, "rx_discards": discards, "tx_discards": 0}


def test_growth_names_port_counter_and_the_read_that_saw_it():
    samples = [Sample(1000.0, {"swp1": c(), "swp2": c()}, {"swp1": {"fec_uncorrected": 0, "carrier_transitions": None}}),
               Sample(1060.0, {"swp1": c(), "swp2": c()}, {"swp1": {"fec_uncorrected": 0, "carrier_transitions": None}}),
               Sample(1120.0, {"swp1": c(rx=7), "swp2": c()}, {"swp1": {"fec_uncorrected": 3, "carrier_transitions": 5}}),
               Sample(1180.0, {"swp1": c(rx=9), "swp2": c(discards=1)}, None)]
    found, unknown = growth("leaf1", samples)
    assert [(f.port, f.counter, f.growth, f.at) for f in found] == [
        ("swp1", "FEC uncorrected codewords", 3, 1120.0), ("swp1", "rx errors", 7, 1120.0),
        ("swp2", "rx discards", 1, 1180.0)]
    assert found[1].line() == "leaf1 swp1: rx errors +7 by 1970-01-01T00:18:40Z"
    assert unknown == []


def test_a_clean_soak_has_no_finding_and_a_failed_read_is_never_clean():
    clean = {"leaf1": [Sample(t, {"swp1": c(rx=4)}, None) for t in (0.0, 1.0, 2.0)]}
    assert report("f", clean, "table")[1] == 0
    failed = {"leaf1": [Sample(0.0, {"swp1": c()}, None), Sample(1.0, None, None, "timed out")]}
    text, code = report("f", failed, "table")
    assert code == 1 and "unknown: leaf1: read at 00:00:01Z failed: timed out" in text


def test_reads_cover_the_window_and_the_hook_runs_after_each_read():
    class Driver:
        def open(self):
            pass

        def close(self):
            pass

        def get_interfaces_counters(self):
            return {"swp1": c()}

    now = [0.0]
    hooks = []
    samples = soak(["leaf1"], lambda _n: Driver, duration_s=3, interval_s=1, workers=1, after_read=hooks.append,
                   clock=lambda: now[0], sleep=lambda s: now.__setitem__(0, now[0] + s))
    assert len(samples["leaf1"]) == 4 and hooks == [1, 2, 3, 4]


@pytest.mark.parametrize(("text", "seconds"), [("90", 90), ("90s", 90), ("15m", 900), ("2h", 7200), ("0.5s", 0.5)])
def test_durations(text, seconds):
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "0", "-5m", "1d", "8760h", "nan"])
def test_bad_durations_say_how_to_write_one(text):
    with pytest.raises(ValueError, match="duration"):
        parse_duration(text)


def wd(**storms: int) -> dict:
    """get_pfc_watchdog_counters of one switch: {port: {priority 3: storms detected}}."""
    return {port: {3: {"storm_detected": n, "storm_restored": n}} for port, n in storms.items()}


def test_pfc_watchdog_storms_mid_soak_name_port_priority_and_time():
    samples = [Sample(1000.0, {"swp1": c()}, None, watchdog=wd(swp1=2)),
               Sample(1060.0, {"swp1": c()}, None, watchdog={}),          # a queue with no row: none yet
               Sample(1120.0, {"swp1": c()}, None, watchdog=wd(swp1=0, swp7=4)),
               Sample(1180.0, {"swp1": c()}, None, watchdog=wd(swp1=0, swp7=9))]
    found, unknown = growth("leaf1", samples)
    assert [(f.port, f.counter, f.growth, f.at) for f in found] == [("swp7", "PFC watchdog storms, priority 3", 4, 1120.0)]
    text, code = report("f", {"leaf1": samples}, "table")
    assert code == 3 and "PFC storms: leaf1 swp7: PFC watchdog storms, priority 3 +4 by 1970-01-01T00:18:40Z" in text
    clean = [Sample(t, {"swp1": c()}, None, watchdog=wd(swp7=5)) for t in (0.0, 1.0, 2.0)]
    assert growth("leaf1", clean) == ([], [])


def test_a_failed_watchdog_read_is_unknown_never_clean():
    samples = [Sample(0.0, {"swp1": c()}, None, watchdog=wd(swp1=0)),
               Sample(1.0, {"swp1": c()}, None, watchdog_error="CommandFailed: not simulated")]
    text, code = report("f", {"leaf1": samples}, "json")
    assert code == 1 and "PFC watchdog read at 00:00:01Z failed: CommandFailed: not simulated" in text


def test_the_watchdog_is_read_where_the_driver_has_it():
    class Driver:
        storms = [0, 0, 3]

        def open(self):
            pass

        def close(self):
            pass

        def get_interfaces_counters(self):
            return {"swp1": c()}

        def get_pfc_watchdog_counters(self):
            return wd(swp1=Driver.storms.pop(0))

    now = [0.0]
    samples = soak(["leaf1"], lambda _n: Driver, duration_s=2, interval_s=1, workers=1,
                   clock=lambda: now[0], sleep=lambda s: now.__setitem__(0, now[0] + s))
    text, code = report("f", samples, "json")
    assert code == 3 and '"check": "pfc-watchdog"' in text and '"port": "swp1"' in text


def test_the_table_keeps_its_lines_and_escapes_what_the_device_named():
    """`verify --soak` printed the whole table through one escape, so its line breaks came out as
    \\x0a; a port name a device returns with a newline or ESC in it must stay one escaped line."""
    samples = [Sample(0.0, {"swp1": c(), "swp2\n\x1b[2Jforged": c()}, None),
               Sample(1.0, {"swp1": c(rx=2), "swp2\n\x1b[2Jforged": c(rx=1)}, None)]
    text, code = report("f", {"leaf1": samples}, "table")
    assert code == 3
    assert text.splitlines() == [
        "soak of f: 1 switch(es), 2 read(s), 2 finding(s)",
        "error growth: leaf1 swp1: rx errors +2 by 1970-01-01T00:00:01Z",
        "error growth: leaf1 swp2\\x0a\\x1b[2Jforged: rx errors +1 by 1970-01-01T00:00:01Z"]
