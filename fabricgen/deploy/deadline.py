"""An overall deadline for each device's step of a push and of a rollback (``--step-deadline``): a device that
stalls (a hung management link, a tool that never returns, a switch's patch sorter that never finishes) cannot
hold its wave, nor a rollback. (``push --resume``'s undo of the interrupted run's commit is part of the device's
push step, under the same deadline.)

Each SSH command already has a deadline of its own (fabricgen/deploy/ssh.py); a device's step is many commands,
logins and waits, and its whole may still run for ever. When a device's step passes its deadline:

- the device is settled as ``attention`` at once (its on-device timer reverts an unconfirmed commit; ``fabricgen
  runs RUN --verify`` reads what the device itself recorded), and the wave's failure count grows;
- every connection its step opened is closed, so a command waiting on the device ends, and no new one can be
  opened for it (the health check's fresh login, the confirm's): a late step can never confirm it;
- the wave stops waiting for that device's worker (:class:`DeadlineRunner`): it goes on with the others and ends
  when they do. The worker thread, left behind (a daemon thread: it never holds the command's exit), ends when
  its blocked call does; what it records is ignored.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from nornir.core.inventory import Host
from nornir.core.task import AggregatedResult, MultiResult, Task

_POLL_S = 0.2
T = TypeVar("T")


def expired_message(seconds: int) -> str:
    return (f"its step passed its deadline of {seconds} s (--step-deadline) and was abandoned, its connections "
            "closed: unless it was confirmed, its on-device timer reverts it (`fabricgen runs RUN --verify` reads "
            "what the device recorded)")


class StepExpired(Exception):
    """A device's step is past its deadline: nothing more is done on it."""


class _Watch:
    def __init__(self, name: str) -> None:
        self.name = name
        self.expired = False  # no new connection for it (track)
        self.settled = False  # its expiry has recorded what became of it: the runner stops waiting for it
        self.drivers: list[Any] = []


class _Registry:
    """Which device each worker thread works on, and the connections each device's step opened."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.local = threading.local()
        self.watches: dict[str, _Watch] = {}

    def current(self) -> _Watch | None:
        watch: _Watch | None = getattr(self.local, "watch", None)
        return watch

    def expired(self, name: str) -> bool:
        with self.lock:
            watch = self.watches.get(name)
            return watch is not None and watch.settled


_REGISTRY = _Registry()


def track(driver: Any) -> Any:
    """Note ``driver`` as opened by the calling thread's device step (closed if the step expires); a device whose
    step already expired gets no new connection (StepExpired)."""
    watch = _REGISTRY.current()
    if watch is None:
        return driver
    with _REGISTRY.lock:
        if not watch.expired:
            watch.drivers.append(driver)
            return driver
    with contextlib.suppress(Exception):
        driver.close()
    raise StepExpired(f"{watch.name}: its step passed its deadline: no new connection is opened for it")


def expired(name: str) -> bool:
    """Whether device ``name``'s step passed its deadline and its expiry recorded what became of it."""
    return _REGISTRY.expired(name)


@contextlib.contextmanager
def watch(name: str, seconds: float, on_expiry: Callable[[str], None]) -> Iterator[None]:
    """Run the calling thread's step for device ``name`` under a deadline of ``seconds``: past it, ``on_expiry``
    (name) is called once (from a timer thread) and the step's connections are closed."""
    item = _Watch(name)
    with _REGISTRY.lock:
        _REGISTRY.watches[name] = item
    _REGISTRY.local.watch = item
    timer = threading.Timer(seconds, _expire, (item, on_expiry))
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
        _REGISTRY.local.watch = None
        with _REGISTRY.lock:
            item.drivers.clear()
            if not item.settled and _REGISTRY.watches.get(name) is item:
                del _REGISTRY.watches[name]


def _expire(item: _Watch, on_expiry: Callable[[str], None]) -> None:
    with _REGISTRY.lock:
        item.expired = True
        drivers, item.drivers = item.drivers, []
    try:
        on_expiry(item.name)
    finally:
        with _REGISTRY.lock:
            item.settled = True
        for driver in drivers:
            with contextlib.suppress(Exception):
                driver.close()


class DeadlineRunner:
    """Nornir's ThreadedRunner, except that it stops waiting for a host whose step expired (:func:`watch`): that
    host's result is left out (the step's own expiry recorded what became of it), a fresh worker takes its place
    for the hosts still queued, and the workers are daemon threads, so one stuck for good never holds the
    command's exit either."""

    def __init__(self, num_workers: int = 20) -> None:
        self.num_workers = num_workers

    def run(self, task: Task, hosts: list[Host]) -> AggregatedResult:
        with _REGISTRY.lock:  # an earlier step's expiry of these hosts is not this step's
            for host in hosts:
                _REGISTRY.watches.pop(host.name, None)
        batch = _Batch(task, hosts)
        for _ in range(min(max(1, self.num_workers), len(hosts))):
            batch.worker()
        batch.wait()
        result = AggregatedResult(task.name)
        for name, answer in batch.answers().items():
            result[name] = answer
        return result


class _Batch:
    """One step over hosts: a queue the workers take hosts from, and the answers they give."""

    def __init__(self, task: Task, hosts: list[Host]) -> None:
        self.task = task
        self.names = [host.name for host in hosts]
        self.lock = threading.Lock()
        self.queued = deque(hosts)
        self.done: dict[str, MultiResult] = {}
        self.replaced: set[str] = set()

    def worker(self) -> None:
        threading.Thread(target=self._work, daemon=True, name="fabricgen-device").start()

    def _work(self) -> None:
        while True:
            with self.lock:
                if not self.queued:
                    return
                host = self.queued.popleft()
            answer = self.task.copy().start(host)
            with self.lock:
                self.done[host.name] = answer

    def wait(self) -> None:
        """Until every host has answered or is stuck past its deadline (a stuck worker replaced once)."""
        while True:
            with self.lock:
                finished, left = set(self.done), bool(self.queued)
            stuck = {name for name in self.names if name not in finished and expired(name)}
            for name in sorted(stuck - self.replaced):
                self.replaced.add(name)
                if left:
                    self.worker()
            if all(name in finished or name in stuck for name in self.names):
                return
            time.sleep(_POLL_S)

    def answers(self) -> dict[str, MultiResult]:
        with self.lock:
            return {name: self.done[name] for name in self.names if name in self.done}


def each_under_deadline(names: list[str], work: Callable[[str], T], seconds: float, expired_result: Callable[[str], T],
                        workers: int) -> dict[str, T]:
    """``work(name)`` for each name, ``workers`` at a time on daemon threads, each under :func:`watch`: a name whose
    work passes ``seconds`` gets ``expired_result(name)`` at once, its connections are closed, and the others go
    on without it (a fresh worker takes the names queued behind it); what its work returns later is ignored. An
    exception ``work`` raises is raised here, unless its name had expired already."""
    batch = _Each(names, work, seconds, expired_result)
    for _ in range(min(max(1, workers), len(names))):
        batch.worker()
    return batch.wait()


class _Each:
    """The batch of :func:`each_under_deadline`: a queue of names, their results, the first error."""

    def __init__(self, names: list[str], work: Callable[[str], T], seconds: float,
                 expired_result: Callable[[str], T]) -> None:
        self.names = list(names)
        self.work, self.seconds, self.expired_result = work, seconds, expired_result
        self.done = threading.Condition()
        self.queued = deque(names)
        self.results: dict[str, Any] = {}
        self.errors: dict[str, BaseException] = {}

    def worker(self) -> None:
        threading.Thread(target=self._work, daemon=True, name="fabricgen-device").start()

    def _work(self) -> None:
        while True:
            with self.done:
                if not self.queued:
                    return
                name = self.queued.popleft()
            try:
                with watch(name, self.seconds, self._expire):
                    result = self.work(name)
            except Exception as exc:  # raised in the caller's thread (wait), as a thread pool would
                self._settle(name, error=exc)
            else:
                self._settle(name, result=result)

    def _expire(self, name: str) -> None:
        result = self.expired_result(name)
        with self.done:
            more = bool(self.queued) and name not in self.results
        self._settle(name, result=result)
        if more:  # its worker is stuck: another takes the names queued behind it
            self.worker()

    def _settle(self, name: str, result: Any = None, error: BaseException | None = None) -> None:
        with self.done:
            if name in self.results or name in self.errors:
                return  # the first word on a name stands: its expiry, or its work's own result
            if error is not None:
                self.errors[name] = error
            else:
                self.results[name] = result
            self.done.notify_all()

    def wait(self) -> dict[str, Any]:
        with self.done:
            self.done.wait_for(lambda: all(name in self.results or name in self.errors for name in self.names))
            if self.errors:
                raise next(iter(self.errors.values()))
            return {name: self.results[name] for name in self.names}
