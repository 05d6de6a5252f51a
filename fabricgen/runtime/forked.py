"""Work spread over forked processes: the one way fabricgen parallelises (parsing, rendering, deleting).

Forked workers inherit the parent's memory, so callers put what the workers read into a module global before
calling :func:`fork_map` and pass only small slices and results through the pool.

multiprocessing is imported when a pool of workers is first started: importing it (and its connection module)
costs about as much as click's own import, which a command that forks nothing, or only a :class:`Background`
process, need not pay.
"""

from __future__ import annotations

import contextlib
import gc
import os
import pickle
import signal
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Generic, TypeVar

if TYPE_CHECKING:
    import multiprocessing.process
    from multiprocessing.connection import Connection

T = TypeVar("T")
R = TypeVar("R")


def worth_forking(jobs: int, items: int, min_items: int = 0) -> bool:
    """More than one process asked for, at least two items for each and ``min_items`` in all, and a platform
    that can fork (elsewhere everything runs in this process)."""
    return jobs > 1 and items >= max(2 * jobs, min_items) and can_fork()


def can_fork() -> bool:
    """Whether this platform forks: where multiprocessing offers its "fork" start method (everywhere but Windows),
    asked without importing multiprocessing."""
    return sys.platform != "win32"


def interleaved(items: Sequence[T], jobs: int) -> list[list[T]]:
    """Every jobs-th item per slice: devices of all kinds land in every slice, so the slices cost alike."""
    return [list(items[i::jobs]) for i in range(jobs)]


def contiguous(items: Sequence[T], jobs: int) -> list[list[T]]:
    """Consecutive runs, in order: the results concatenate back into the items' order (none for no items)."""
    size = max(1, -(-len(items) // jobs))
    return [list(items[i:i + size]) for i in range(0, len(items), size)]


def fork_map(work: Callable[[list[T]], R], slices: list[list[T]],
             meanwhile: Callable[[], None] | None = None) -> list[R]:
    """``work`` on each slice, one forked process per slice; results in slice order. ``meanwhile`` runs in this
    process while the workers do; when it raises, or a worker fails, the workers are killed."""
    with Workers[R]() as workers:
        for part in slices:
            workers.start(work, part)
        return workers.results(meanwhile)


class Workers(Generic[R]):
    """Forked worker processes, started one at a time: each sees this process's memory as it is when it starts,
    so a caller can start work on what it has computed so far and go on computing. Leaving the ``with`` block
    kills those still running (after an error; normally :meth:`results` has collected them all).

    Plain processes and pipes, not a multiprocessing Pool: a Pool terminated while its workers are busy can
    hang in terminate() (seen here when lint failed beside the render workers); a killed process cannot.

    ``niceness``: added to each worker's nice value (``os.nice``), for workers that fill the cores this process
    leaves idle while it goes on with the work everything waits for."""

    def __init__(self, niceness: int = 0) -> None:
        import multiprocessing  # see the module's docstring

        self._context = multiprocessing.get_context("fork")
        self._niceness = niceness
        self._running: list[tuple[multiprocessing.process.BaseProcess, Connection]] = []

    def __enter__(self) -> Workers[R]:
        return self

    def start(self, work: Callable[[list[T]], R], part: list[T]) -> None:
        # The collector of a worker must stay off the heap it inherits: its first full collection would walk,
        # and so write to, every object of this process (at 32,768 GPUs, the whole inventory and resolved
        # fabric), and each page it touches is copied, in every worker. Frozen objects are never examined; none
        # needs collecting, as they live until this process is done. Unfrozen when the block ends.
        gc.freeze()
        receive, send = self._context.Pipe(duplex=False)
        process = self._context.Process(target=_work_and_send, args=(work, part, send, self._niceness),
                                        daemon=True)
        process.start()
        send.close()  # the worker holds the only sending end: its death shows as end of file here
        self._running.append((process, receive))

    def results(self, meanwhile: Callable[[], None] | None = None) -> list[R]:
        """Every worker's result, in start order; ``meanwhile`` runs here first, while they work."""
        if meanwhile is not None:
            meanwhile()
        return [_result_of(receive) for _, receive in self._running]

    def __exit__(self, *exc_info: object) -> None:
        for process, receive in self._running:
            if process.is_alive():
                process.kill()
            process.join()
            receive.close()
        self._running = []
        gc.unfreeze()


# What a forked process sends back, the same for Workers and Background: (True, the value its work returned) or
# (False, the exception it raised, or why its result could not be pickled), which the parent raises.
Outcome = tuple[bool, Any]


def _outcome(work: Callable[[], Any]) -> Outcome:
    try:
        return True, work()
    except BaseException as exc:  # every failure goes back to the parent, which raises it
        return False, exc


def _not_transferable(who: str, exc: Exception) -> Outcome:
    """The outcome sent instead of one pickle refused: it says what the result or exception was."""
    return False, RuntimeError(f"{who} result not transferable: {type(exc).__name__}: {exc}")


def _value(outcome: Outcome) -> Any:
    ok, value = outcome
    if not ok:
        raise value
    return value


def _died(who: str) -> RuntimeError:
    return RuntimeError(f"a {who} process died without a result (killed, or out of memory?)")


def _work_and_send(work: Callable[[list[T]], R], part: list[T], send: Connection, niceness: int = 0) -> None:
    def niced_work() -> R:
        if niceness:
            with contextlib.suppress(OSError):  # a priority only: a sandbox that refuses it slows nothing down
                os.nice(niceness)
        return work(part)

    outcome = _outcome(niced_work)  # a Ctrl-C as the worker starts goes back to the parent too
    try:
        send.send(outcome)
    except Exception as exc:  # the result or exception cannot be pickled
        send.send(_not_transferable("worker", exc))


def _result_of(receive: Connection) -> Any:
    try:
        outcome = receive.recv()
    except EOFError:
        raise _died("worker") from None
    return _value(outcome)


class Background(Generic[R]):
    """``work`` run in one forked process while this one goes on; :meth:`result` waits for what it returned (or
    raises what it raised). Made to start early, in a process that has imported little yet (render's check of
    its earlier tree begins before the heavy imports): a bare fork and a pipe, without multiprocessing. Leaving
    the ``with`` block kills the process if it is still running."""

    def __init__(self, work: Callable[[], R]) -> None:
        receive, send = os.pipe()
        pid = os.fork()
        if pid == 0:  # the forked process: it never returns into the caller's code
            status = 1
            try:
                os.close(receive)
                _send_outcome(work, send)
                status = 0
            finally:
                os._exit(status)
        os.close(send)
        self._pid: int | None = pid
        self._receive = receive

    def __enter__(self) -> Background[R]:
        return self

    def result(self) -> R:
        with os.fdopen(os.dup(self._receive), "rb") as pipe:
            sent = pipe.read()  # to the end: the process has written all it will, and closed its end
        self._reap()
        try:
            outcome = pickle.loads(sent)
        except Exception:
            raise _died("background") from None
        return _value(outcome)  # type: ignore[no-any-return]

    def __exit__(self, *exc_info: object) -> None:
        if self._pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self._pid, signal.SIGKILL)
            self._reap()
        os.close(self._receive)

    def _reap(self) -> None:
        if self._pid is not None:
            os.waitpid(self._pid, 0)
            self._pid = None


def _send_outcome(work: Callable[[], Any], send: int) -> None:
    outcome = _outcome(work)
    try:
        data = pickle.dumps(outcome)
    except Exception as exc:  # the result or exception cannot be pickled
        data = pickle.dumps(_not_transferable("background", exc))
    with os.fdopen(send, "wb") as pipe:
        pipe.write(data)
