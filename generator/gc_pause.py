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
        if was_enabled:
            gc.enable()
