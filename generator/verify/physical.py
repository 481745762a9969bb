"""Physical-layer checks: optics, FEC, link flaps, hardware (PSUs, fans, temperature sensors).

Inputs are the driver getters' models (devices/oper.py): napalm's get_environment and
the extras get_transceivers / get_phy_counters, so the checks do not know which OS answered.

Optics alarm limits are the module's own (CMIS and SFF-8636 keep vendor alarm thresholds in the
module's threshold page) when it reports them; else DEFAULT_LIMITS, our choice for 400G/800G
QSFP112/OSFP optics: power within IEEE 802.3's PMD ranges for these rates (average launch and
receive power at most +4 dBm; the lowest receive minimum, of the multimode SR variants, around
-9 dBm; we alarm below -10 dBm receive and -8 dBm transmit), module case temperature within the
commercial class's 0-70 C plus the 5 C margin modules commonly set as alarm limits (-5..75 C).
A DAC is passive copper: it has no DOM, so only presence and type are checked.

FEC: RS(544,514) "KP4" FEC (IEEE 802.3 clause 119) corrects up to a pre-FEC BER of about 2.4e-4;
corrected codewords grow on every healthy PAM4 link, so they are not a finding by themselves.
A finding is uncorrected codewords rising between the two reads (frames lost), or a pre-FEC BER
above PRE_FEC_BER_MAX, two decades under the correction limit: the link still runs clean, and
that is when to replace the optic or clean the fibre.
"""

from __future__ import annotations

from generator.verify.checks import SwitchReading
from generator.verify.expected import Expectations
from generator.verify.model import ERROR, WARNING, Finding

DEFAULT_LIMITS = {"rx_power_dbm": (-10.0, 4.0), "tx_power_dbm": (-8.0, 4.0), "temperature_c": (-5.0, 75.0)}
PRE_FEC_BER_MAX = 1e-6
FLAP_TRANSITIONS_MAX = 4      # carrier changes since the counters were cleared: two down/up cycles
_WHAT = {"rx_power_dbm": ("Rx power", "dBm"), "tx_power_dbm": ("Tx power", "dBm"),
         "temperature_c": ("module temperature", "C")}


def check_optics(reading: SwitchReading, exp: Expectations) -> list[Finding]:
    name, modules = reading.name, reading.transceivers or {}
    findings = []
    for port in sorted(exp.ports.get(name, {})):
        module = modules.get(port) or {}
        planned = exp.cables.get((name, port), "")
        if not module.get("present"):
            findings.append(Finding("optics", name, port, f"{planned or 'a'} module present", "no transceiver",
                                    ERROR, f"{port} on {name}: no transceiver (planned {planned or 'a cable'})"))
            continue
        media = module.get("media") or ""
        if planned and media and media != planned:
            findings.append(Finding("optics", name, port, planned, media, ERROR,
                                    f"{port} on {name}: a {media} is plugged in, the plan has a {planned}"))
        limits = DEFAULT_LIMITS | dict(module.get("thresholds") or {})
        readings = {"rx_power_dbm": module.get("rx_power_dbm") or [], "tx_power_dbm": module.get("tx_power_dbm") or [],
                    "temperature_c": [] if module.get("temperature_c") is None else [module["temperature_c"]]}
        for key, values in readings.items():
            low, high = limits[key]
            outside = [(lane, v) for lane, v in enumerate(values, 1) if not low <= v <= high]
            if not outside:
                continue
            what, unit = _WHAT[key]
            if key == "temperature_c":
                lanes = f"{outside[0][1]:g} {unit}"
            elif len(outside) > 1 and len({v for _, v in outside}) == 1:
                lanes = f"{outside[0][1]:g} {unit} (lanes {', '.join(str(lane) for lane, _ in outside)})"
            else:
                lanes = ", ".join(f"{v:g} {unit} (lane {lane})" for lane, v in outside)
            findings.append(Finding("optics", name, port, f"{what} {low:g}..{high:g} {unit}", lanes, ERROR,
                                    f"{port} on {name}: {what} {lanes}, outside the module's alarm limits "
                                    f"{low:g}..{high:g} {unit}"))
    return findings


def check_fec(reading: SwitchReading, exp: Expectations, ber_max: float = PRE_FEC_BER_MAX) -> list[Finding]:
    before, after = reading.phy
    findings = []
    for port in sorted(exp.ports.get(reading.name, {})):
        if port not in before or port not in after:
            continue
        lost = after[port]["fec_uncorrected"] - before[port]["fec_uncorrected"]
        ber = after[port]["pre_fec_ber"]
        if lost > 0:
            observed = f"+{lost} uncorrected FEC codewords in {reading.interval_s:.1f}s"
            findings.append(Finding("fec", reading.name, port, "no uncorrected codewords", observed, ERROR,
                                    f"{port} on {reading.name}: {observed} (frames lost)"))
        elif ber is not None and ber > ber_max:
            corrected = after[port]["fec_corrected"] - before[port]["fec_corrected"]
            observed = f"pre-FEC BER {ber:.1e} (+{corrected} corrected codewords in {reading.interval_s:.1f}s)"
            findings.append(Finding("fec", reading.name, port, f"pre-FEC BER <= {ber_max:.0e}", observed, WARNING,
                                    f"{port} on {reading.name}: {observed}"))
    return findings


def check_flaps(reading: SwitchReading, exp: Expectations, limit: int = FLAP_TRANSITIONS_MAX) -> list[Finding]:
    before, after = reading.phy
    findings = []
    for port in sorted(exp.ports.get(reading.name, {})):
        if port not in before or port not in after or after[port]["carrier_transitions"] is None:
            continue
        total = after[port]["carrier_transitions"]
        rising = total - before[port]["carrier_transitions"]
        if rising > 0 or total > limit:
            observed = (f"{rising} carrier changes in {reading.interval_s:.1f}s" if rising > 0
                        else f"{total} carrier changes since the counters were cleared")
            findings.append(Finding("flaps", reading.name, port, f"<= {limit} carrier changes, none while checked",
                                    observed, ERROR,
                                    f"{port} on {reading.name} flaps: {observed} (clear the counters after a repair)"))
    return findings


def check_hardware(reading: SwitchReading) -> list[Finding]:
    env, name = reading.environment or {}, reading.name
    findings = []
    for psu, data in sorted((env.get("power") or {}).items()):
        if not data.get("status"):
            findings.append(Finding("hardware", name, psu, "PSU ok", "failed", ERROR, f"{psu} on {name} has failed"))
    for fan, data in sorted((env.get("fans") or {}).items()):
        if not data.get("status"):
            findings.append(Finding("hardware", name, fan, "fan ok", "failed", ERROR, f"{fan} on {name} has failed"))
    for sensor, data in sorted((env.get("temperature") or {}).items()):
        if data.get("is_critical") or data.get("is_alert"):
            level = "critical" if data.get("is_critical") else "above its alarm limit"
            observed = f"{data.get('temperature', 0.0):g} C, {level}"
            findings.append(Finding("hardware", name, sensor, "temperature below its alarm limit", observed, ERROR,
                                    f"sensor {sensor} on {name}: {observed}"))
    return findings
