"""Which cable explains the low pairs of a burn-in: pure logic, no I/O.

A pair's traffic crosses a known set of cables (burnin.json). A pair at its expected rate clears
every cable it crossed: a weak cable slows every pair over it. So the suspects are the cables of
the low pairs that no good pair crossed; each low pair is explained by the suspects it crossed,
and the fewest suspects that explain every low pair are named (greedy cover: most low pairs
first, ties by cabling.csv row). Each host NIC port meets two peers in the host-leaf rounds
(burnin.py), so a weak host-leaf cable is the one cable its two low pairs share. A low pair
whose every cable was cleared is named as a pair (its NICs or hosts), never pinned on a cable.
"""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT_MIN_FRACTION = 0.95


@dataclass(frozen=True, slots=True)
class Measured:
    pair: str
    cables: tuple[int, ...]
    expected_gbps: float
    measured_gbps: float | None          # None: the pair did not measure (no output, no row)


@dataclass(frozen=True, slots=True)
class Suspect:
    cable: int                          # cabling.csv row
    pairs: tuple[str, ...]              # the low pairs it explains
    worst_fraction: float               # lowest measured / expected among them (0 for a failed pair)


@dataclass(frozen=True, slots=True)
class Attribution:
    suspects: tuple[Suspect, ...]
    unexplained: tuple[str, ...]        # low pairs none of whose cables is a suspect
    low: tuple[str, ...]
    good: int


def fraction(m: Measured) -> float:
    return 0.0 if m.measured_gbps is None or m.expected_gbps <= 0 else m.measured_gbps / m.expected_gbps


def attribute(results: list[Measured], min_fraction: float = DEFAULT_MIN_FRACTION) -> Attribution:
    low = [m for m in results if fraction(m) < min_fraction]
    good = [m for m in results if fraction(m) >= min_fraction]
    cleared = {c for m in good for c in m.cables}
    suspects = {c for m in low for c in m.cables} - cleared
    by_cable: dict[int, list[Measured]] = {}
    for m in low:
        for c in m.cables:
            if c in suspects:
                by_cable.setdefault(c, []).append(m)
    left = {m.pair for m in low if any(c in suspects for c in m.cables)}
    named: list[Suspect] = []
    while left:
        cable = min(by_cable, key=lambda c: (-sum(m.pair in left for m in by_cable[c]), c))
        covered = [m for m in by_cable[cable] if m.pair in left]
        if not covered:
            break
        named.append(Suspect(cable, tuple(sorted(m.pair for m in covered)), min(fraction(m) for m in covered)))
        left -= {m.pair for m in covered}
    unexplained = tuple(sorted(m.pair for m in low if not any(c in suspects for c in m.cables)))
    return Attribution(tuple(named), unexplained, tuple(sorted(m.pair for m in low)), len(good))
