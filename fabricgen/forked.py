"""Work spread over forked processes: the one way fabricgen parallelises (parsing, rendering, deleting).

Forked workers inherit the parent's memory, so callers put what the workers read into a module global before
calling :func:`fork_map` and pass only small slices and results through the pool.
"""

from __future__ import annotations

import gc
import multiprocessing
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from multiprocessing.connection import Connection
from typing import Any, TypeVar

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


def fork_map(work: Callable[[list[T]], R], slices: list[list[T]],
             meanwhile: Callable[[], None] | None = None) -> list[R]:
    """``work`` on each slice, one forked process per slice; results in slice order. ``meanwhile`` runs in this
    process while the workers do; when it raises, or a worker fails, the workers are killed.

    Plain processes and pipes, not a multiprocessing Pool: a Pool terminated while its workers are busy can
    hang in terminate() (seen here when lint failed beside the render workers); a killed process cannot."""
    context = multiprocessing.get_context("fork")
    workers: list[tuple[multiprocessing.process.BaseProcess, Connection]] = []
    with _heap_frozen():
        try:
            for part in slices:
                receive, send = context.Pipe(duplex=False)
                process = context.Process(target=_work_and_send, args=(work, part, send), daemon=True)
                process.start()
                send.close()  # the worker holds the only sending end: its death shows as end of file here
                workers.append((process, receive))
            if meanwhile is not None:
                meanwhile()
            return [_result_of(receive) for _, receive in workers]
        finally:
            for worker, pipe in workers:
                if worker.is_alive():
                    worker.kill()
                worker.join()
                pipe.close()


def _work_and_send(work: Callable[[list[T]], R], part: list[T], send: Connection) -> None:
    try:
        outcome: tuple[bool, Any] = (True, work(part))
    except BaseException as exc:  # every failure goes back to the parent, which raises it
        outcome = (False, exc)
    try:
        send.send(outcome)
    except Exception as exc:  # the result or exception cannot be pickled: say what it was
        send.send((False, RuntimeError(f"worker result not transferable: {type(exc).__name__}: {exc}")))


def _result_of(receive: Connection) -> Any:
    try:
        ok, value = receive.recv()
    except EOFError:
        raise RuntimeError("a worker process died without a result (killed, or out of memory?)") from None
    if not ok:
        raise value
    return value


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
