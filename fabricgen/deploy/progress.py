"""What a push shows while it runs: a live table on a terminal (rich), plain lines in CI or when piped.

The engine reports two things: a wave starting (its devices) and a device reaching a state (committed, then
confirmed / reverted / failed / attention / unchanged / untouched). Devices report from worker threads.
"""

from __future__ import annotations

import sys
import threading
from collections import Counter
from typing import Protocol

from rich.console import Console, Group
from rich.live import Live
from rich.table import Table
from rich.text import Text

from fabricgen.deploy.journal import escape

_STYLE = {"committed": "yellow", "confirmed": "green", "unchanged": "dim", "reverted": "red", "failed": "red",
          "attention": "bold red", "untouched": "dim"}


class Progress(Protocol):
    def wave(self, number: int, total: int, devices: list[str]) -> None: ...
    def device(self, name: str, state: str) -> None: ...
    def close(self) -> None: ...


class Silent:
    def wave(self, number: int, total: int, devices: list[str]) -> None:
        pass

    def device(self, name: str, state: str) -> None:
        pass

    def close(self) -> None:
        pass


class Lines:
    """One line per event on stderr: what a CI log keeps."""

    def __init__(self) -> None:
        self._lock = threading.Lock()

    def wave(self, number: int, total: int, devices: list[str]) -> None:
        self._print(f"wave {number}/{total}: {len(devices)} device(s)")

    def device(self, name: str, state: str) -> None:
        self._print(f"  {escape(name)}: {state}")  # names reach a terminal: no control characters

    def _print(self, line: str) -> None:
        with self._lock:
            print(line, file=sys.stderr, flush=True)

    def close(self) -> None:
        pass


class LiveTable:
    """The current wave's devices, one line each, and the counts of the whole push so far."""

    def __init__(self, total_devices: int) -> None:
        self._lock = threading.Lock()
        self._total = total_devices
        self._states: dict[str, str] = {}
        self._wave: list[str] = []
        self._title = ""
        self._live = Live(self._render(), console=Console(stderr=True), refresh_per_second=8)
        self._live.start()

    def wave(self, number: int, total: int, devices: list[str]) -> None:
        with self._lock:
            self._wave, self._title = devices, f"wave {number}/{total}"
            for name in devices:
                self._states.setdefault(name, "pushing")
            self._live.update(self._render())

    def device(self, name: str, state: str) -> None:
        with self._lock:
            self._states[name] = state
            self._live.update(self._render())

    def _render(self) -> Group:
        table = Table(title=self._title, show_edge=False, title_justify="left")
        table.add_column("device")
        table.add_column("state")
        for name in self._wave:
            state = self._states.get(name, "")
            table.add_row(Text(escape(name)), Text(state, style=_STYLE.get(state, "")))  # text, never markup
        counts = Counter(state for state in self._states.values() if state != "pushing")
        summary = ", ".join(f"{count} {state}" for state, count in sorted(counts.items()))
        return Group(table, Text(f"{sum(counts.values())}/{self._total} devices done" +
                                 (f": {summary}" if summary else "")))

    def close(self) -> None:
        self._live.stop()


def for_terminal(total_devices: int, machine_output: bool) -> Progress:
    """A live table on a terminal, plain lines otherwise, nothing when stdout carries JSON for a machine."""
    if machine_output:
        return Silent()
    return LiveTable(total_devices) if sys.stderr.isatty() else Lines()
