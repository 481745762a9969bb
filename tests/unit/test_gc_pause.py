"""generator/gc_pause.py: the collector paused over a block, what the block built handed to the
oldest generation without a walk (issue 14), cycles still collected, frozen objects left frozen."""

from __future__ import annotations

import gc
import weakref

from generator.gc_pause import gc_paused


class _Node:
    def __init__(self) -> None:
        self.other: _Node | None = None


def _in_generation(obj: object, generation: int) -> bool:
    return any(o is obj for o in gc.get_objects(generation=generation))


def test_block_objects_land_in_the_oldest_generation() -> None:
    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
        built = [[i] for i in range(1000)]
    assert gc.isenabled()
    assert not _in_generation(built[0], 0) and not _in_generation(built[0], 1)
    assert _in_generation(built[0], 2)


def test_cycles_built_in_the_block_are_still_collected() -> None:
    with gc_paused():
        a, b = _Node(), _Node()
        a.other, b.other = b, a
        ref = weakref.ref(a)
        del a, b
    assert ref() is not None                 # a cycle: reference counting alone never frees it
    gc.collect()
    assert ref() is None


def test_a_disabled_collector_stays_disabled() -> None:
    gc.disable()
    try:
        with gc_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_objects_frozen_by_someone_else_stay_frozen() -> None:
    keep = [object() for _ in range(10)]
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        assert frozen > 0
        with gc_paused():
            more = [[i] for i in range(100)]
        assert gc.get_freeze_count() == frozen
        assert _in_generation(more[0], 0) or _in_generation(more[0], 1) or _in_generation(more[0], 2)
    finally:
        gc.unfreeze()
    assert keep
