"""Work spread over forked processes: the one way fabricgen parallelises (parsing, rendering, deleting).

Forked workers inherit the parent's memory, so callers put what the workers read into a module global before
calling :func:`fork_map` and pass only small slices and results through the pool.
"""

from __future__ import annotations

import gc
import multiprocessing
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")


def worth_forking(jobs: int, items: int, min_items: int = 0) -> bool:
    """More than one process asked for, at least two items for each and ``min_items`` in all, and a platform
    that can fork (elsewhere everything runs in this process)."""
    return jobs > 1 and items >= max(2 * jobs, min_items) and "fork" in multiprocessing.get_all_start_methods()


def interleaved(items: Sequence[T], jobs: int) -> list[list[T]]:
    """Every jobs-th item per slice: devices of all kinds land in every slice, so the slices cost alike."""
    return [list(items[i::jobs]) for i in range(jobs)]


def contiguous(items: Sequence[T], jobs: int) -> list[list[T]]:
    """Consecutive runs, in order: the results concatenate back into the items' order."""
    size = -(-len(items) // jobs)
    return [list(items[i:i + size]) for i in range(0, len(items), size)]


def fork_map(work: Callable[[list[T]], R], slices: list[list[T]], jobs: int,
             meanwhile: Callable[[], None] | None = None) -> list[R]:
    """``work`` on each slice in a pool of ``jobs`` forked processes; results in slice order. ``meanwhile`` runs
    in this process while the workers do; if it raises, the workers are stopped and nothing is returned."""
    with _heap_frozen(), multiprocessing.get_context("fork").Pool(jobs) as pool:
        pending = pool.map_async(work, slices)
        if meanwhile is not None:
            meanwhile()
        return pending.get()


@contextmanager
def _heap_frozen() -> Iterator[None]:
    """Keep the collector of every worker off the heap it inherits.

    A worker's first full collection would walk, and so write to, every object of the parent (at 32,768 GPUs,
    the whole inventory and resolved fabric): each page it touches is copied, once per worker. Frozen objects
    are never examined; nothing needs collecting among them, as they live until the parent is done."""
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()
