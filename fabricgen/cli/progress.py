"""What render and lint show while a large fabric takes its time: one bar on stderr, on a terminal only.

A fabric of a few hundred devices renders in about a second, and a bar that flashes by is noise; from
:data:`LARGE_FABRIC` devices up (bench/make_fabric.py's rail-optimised fabric has 1,438 devices at 8,192 GPUs,
2,875 at 16,384) the bar names the phase — resolve (devices counted), lint, render and write — so a long
run shows it is moving. Nothing is shown when stderr is not a terminal (piped, redirected), under CI (``$CI``
set, as GitHub Actions, GitLab CI and most other runners set it), or when stdout carries a machine report
(``--format json`` / ``sarif``): :func:`for_fabric` then returns :class:`Quiet`, whose calls cost nothing.

The bar is redrawn at each step (a phase begins, a chunk of devices is resolved), never by a timer: rich's
auto-refresh is a thread, and render forks its workers while resolving; a fork taken while that thread holds
the console's lock would leave the lock held in the worker. The bar is transient: it is erased when the work
ends, before the command prints its summary.
"""

from __future__ import annotations

import os
import sys
from types import TracebackType
from typing import Any, Protocol

LARGE_FABRIC = 2000
"""devices from which a render or lint takes long enough (> ~1 s after loading) for a bar to be worth showing"""


class Steps(Protocol):
    """What a long command reports: a phase beginning (with its number of devices, when it counts them), and
    devices done in the current phase."""

    def phase(self, name: str, devices: int | None = None) -> None: ...

    def advance(self, devices: int) -> None: ...

    def __enter__(self) -> Steps: ...

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None: ...


class Quiet:
    """No bar: every report is ignored."""

    def phase(self, name: str, devices: int | None = None) -> None:
        pass

    def advance(self, devices: int) -> None:
        pass

    def __enter__(self) -> Quiet:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        pass


class Bar:
    """One rich progress bar on stderr: ``<command>: <phase>``, a bar (pulsing while the phase does not count
    devices), devices done of the phase's total, and the time since the command's bar appeared."""

    def __init__(self, command: str) -> None:
        # Imported here: the commands that never show a bar (every small fabric, every pipe) do not load it.
        from rich.console import Console
        from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

        self._command = command
        # stdout is left alone (not redirected above the bar): it may be a pipe to another program.
        self._progress = Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.fields[count]}"),
                                  TimeElapsedColumn(), console=Console(stderr=True), auto_refresh=False,
                                  transient=True, redirect_stdout=False)
        self._task = self._progress.add_task(command, total=None, count="")

    def __enter__(self) -> Bar:
        self._progress.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self._progress.stop()

    def phase(self, name: str, devices: int | None = None) -> None:
        self._update(description=f"{self._command}: {name}", total=devices, completed=0,
                     count=f"0/{devices:,} devices" if devices else "")

    def advance(self, devices: int) -> None:
        task = self._progress.tasks[0]
        done = int(task.completed) + devices
        self._update(completed=done, count=f"{done:,}/{int(task.total or 0):,} devices")

    def _update(self, **fields: Any) -> None:
        self._progress.update(self._task, **fields)
        self._progress.refresh()


def for_fabric(command: str, devices: int, machine_output: bool) -> Steps:
    """A bar for ``command`` working on ``devices`` devices, when a person is watching a long run; else
    :class:`Quiet`."""
    if machine_output or devices < LARGE_FABRIC or os.environ.get("CI") or not sys.stderr.isatty():
        return Quiet()
    return Bar(command)
