"""Pause Python's cyclic garbage collector while building large acyclic structures.

A 98k-GPU plan is ~1.5 M small objects (ports, links, NICs, strings, tuples). Each
allocation burst triggers collections that walk every live container again: ~2 s of a
large compile and check run (issue 14). Plans are trees of frozen dataclasses and tuples
(no reference cycles), so reference counting frees them; the collector runs as usual
once the block is left.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused() -> Iterator[None]:
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        # What the block allocated is still the youngest generation: the first collection after
        # gc.enable() would walk all of it (~0.3 s for a 98k-GPU plan, issue 14). freeze + unfreeze
        # moves every tracked object into the oldest generation ("put them back into the oldest
        # generation", gc docs) without a walk; cycles among them are still found by the next full
        # collection. Skipped when something else froze objects: unfreeze would release those.
        if gc.get_freeze_count() == 0:
            gc.freeze()
            gc.unfreeze()
        if was_enabled:
            gc.enable()
