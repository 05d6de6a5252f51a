"""Push's counter soak: a committed device's RoCE counters, read right after its commit and again after `--soak S`,
judged (fabricgen/observe/soak.py) before it is confirmed.

The field report's advice after a change or a reboot — check layer 1 before letting traffic in, and archive
before/after data with every tuning change — as one step of push, per device, between its commit and its
confirm: :meth:`CounterSoak.wait` reads the counters on the commit's own login (PFC pauses and pause time, ECN
marks, queue drops and discards, FEC corrected/uncorrected, CRC, flaps: whatever the platform's reader in
fabricgen/observe/collect.py returns), then sleeps the soak; :meth:`CounterSoak.judge` reads them again on the
health check's fresh login and returns the verdict's problems, which push treats as any failed health check:
the device is reverted (explicitly, or by its own on-device timer when it cannot be reached) and its outcome
says why, with the counters that grew.

Kept with the run: ``runs/<run>/soak/<device>.before.json`` and ``.after.json`` (every reading), the same two
readings in the counter history (observe.sqlite beside ``runs/``: one snapshot each, with the run's id and the
phase, so a device's history holds the counters of every change made to it), and two journal events per device:
``soak-start`` (how many readings, the soak's length, or why the counters are not read) and ``soak`` (healthy or
not, the problems, the measured window). A device whose platform has no counter reader, or
whose counters cannot be read right after its commit, is soaked by time only: the journal and its outcome's
message say so. Counters read before the soak but not after fail the device (it stopped answering what it
answered a soak earlier).
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from typing import Any

from fabricgen.deploy.outcome import Deployment, PushOptions
from fabricgen.models.device import DeviceModel
from fabricgen.observe.collect import read_device
from fabricgen.observe.model import DeviceSnapshot, Reading, Snapshot
from fabricgen.observe.soak import SoakLimits, soak_verdict
from fabricgen.observe.store import History, StoreError, history_path

# Devices soak in parallel (one thread each): their history writes go one at a time, so none waits on SQLite's
# file lock (a connection per write: sqlite3 connections stay in the thread that made them).
_HISTORY_LOCK = threading.Lock()


def soak_path(device: str, phase: str) -> str:
    """Where a run keeps a device's soak reading (relative to the run's directory); phase: before or after."""
    return f"soak/{device}.{phase}.json"


class CounterSoak:
    """One device's soak within push: :meth:`wait` after the commit, :meth:`judge` with the health check."""

    def __init__(self, deployment: Deployment, name: str, options: PushOptions,
                 limits: SoakLimits | None = None) -> None:
        self.deployment = deployment
        self.name = name
        self.options = options
        self.limits = limits or SoakLimits()
        self.model: DeviceModel | None = deployment.models.get(name)
        self.before: list[Reading] | None = None
        self.read_at = 0.0
        # Each command of a reading within the health checks' limit, and within a third of what the device's revert
        # timer leaves after the soak: two readings and the health checks must fit before the timer fires (a
        # reading is one command, except NVUE's: one per data port; docs/observe.md).
        self.read_limit = min(float(options.health_timeout), max(1.0, (options.confirm_timeout - options.soak) / 3))
        self.note = ""  # why the counters were not judged (the outcome's message says it when nothing else does)

    def wait(self, driver: Any) -> None:
        """The first reading, on the commit's login, then the soak itself. No soak asked: nothing is read."""
        seconds = self.options.soak
        if not seconds:
            return
        if self.model is None:
            self.note = "counters not checked during the soak: the device's intent was not given to push"
        else:
            try:
                before = read_device(driver, self.model, self.read_limit)
            except Exception as exc:
                self.note = f"counters not checked during the soak: {_one_line(exc)}"
            else:
                if before:
                    self.before, self.read_at = before, time.monotonic()
                    self._save("before", before)
                else:
                    self.note = "counters not checked during the soak: the device reported none"
        self._journal("soak-start", soak_s=seconds, readings=None if self.before is None else len(self.before),
                      **({"not_read": self.note} if self.note else {}))
        time.sleep(seconds)

    def judge(self, driver: Any) -> list[str]:
        """The second reading, on the health check's fresh login (None: the device could not be reached, which
        the health check already reports), and what grew beyond the limits."""
        if self.before is None or self.model is None:
            return []
        if driver is None:
            self._journal("soak", healthy=None, problems=[], not_read="no login after the soak (the health check "
                                                                       "reports it)")
            return []
        try:
            after = read_device(driver, self.model, self.read_limit)
        except Exception as exc:
            problem = f"counters read before the soak could not be read after it: {_one_line(exc)}"
            self._journal("soak", healthy=False, problems=[problem])
            return [problem]
        window = time.monotonic() - self.read_at
        self._save("after", after)
        verdict = soak_verdict(self.before, after, self.model, seconds=window, limits=self.limits)
        self._journal("soak", healthy=verdict.healthy, problems=verdict.problems, window_s=round(window, 3),
                      readings=len(after))
        return [] if verdict.healthy else [verdict.reason]

    def _journal(self, event: str, **data: Any) -> None:
        if self.deployment.journal is not None:
            self.deployment.journal.write(event, self.name, **data)

    def _save(self, phase: str, readings: list[Reading]) -> None:
        if self.deployment.journal is None or self.model is None:
            return
        taken_at = time.time()
        document = {"device": self.name, "platform": self.model.platform, "phase": phase,
                    "taken_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(taken_at)),
                    "readings": [{"port": r.port, "metric": r.metric, "index": r.index, "value": r.value}
                                 for r in readings]}
        self.deployment.journal.save(soak_path(self.name, phase), json.dumps(document, indent=1) + "\n")
        self._store(phase, Snapshot(taken_at, {self.name: DeviceSnapshot(self.name, self.model.platform, readings)}))

    def _store(self, phase: str, snapshot: Snapshot) -> None:
        """The reading into the counter history beside the journal. A history that cannot be written does not
        fail the push (the run keeps the reading in soak/); the journal says why it is missing there."""
        journal = self.deployment.journal
        assert journal is not None
        try:
            with _HISTORY_LOCK:
                history = History(history_path(journal.directory.parent))
                try:
                    history.add(snapshot, run_id=journal.run_id, phase=phase)
                finally:
                    history.close()
        except (StoreError, sqlite3.Error, OSError) as exc:
            self._journal("soak-unstored", phase=phase, reason=_one_line(exc))


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:300] or type(exc).__name__
