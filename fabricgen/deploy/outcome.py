"""What deploy commands decide and report, without the network libraries (the CLI imports this at start-up)."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from fabricgen.deploy.journal import Journal
from fabricgen.deploy.progress import Progress, Silent
from fabricgen.models.device import DeviceModel
from fabricgen.models.inventory import Device

EXIT_OK, EXIT_FAILED_REVERTED, EXIT_USAGE, EXIT_ATTENTION = 0, 1, 2, 3
DIFF_CHANGES, DIFF_ERRORS = 2, 1
DEFAULT_STEP_DEADLINE_S = 1800  # push --step-deadline (fabricgen/deploy/deadline.py)


# What each result of push, resume and rollback means, every one verified on the device (docs/platforms.md and
# README print this list).
OUTCOMES: tuple[tuple[str, str], ...] = (
    ("unchanged", "the device already held the intent (its own diff was empty); nothing was sent"),
    ("confirmed", "committed, healthy and confirmed: the device holds the intent, its timer is stopped, and the "
                  "change is saved to survive a reboot (a GPU host's boot unit enabled)"),
    ("reverted", "committed, then undone (a failed health check, a halted wave, or its own timer: the message "
                 "says which, from the device's own record) and read back as before"),
    ("restored", "rollback: the device runs its own revert of the run's commit and reads back as the snapshot "
                 "taken before it; also a commit its timer had already reverted (the device's record says so)"),
    ("failed", "verified unchanged: the device refused or could not take the change, and reads as before"),
    ("attention", "the device may hold part of the change: a restore that failed (the settings that did not "
                  "come back listed first, one a line), a device unreachable after its commit (its own timer "
                  "reverts it), a step past its --step-deadline (abandoned, its wave goes on), or a read-back "
                  "that differs; exit 3"),
    ("untouched", "not started: the push stopped in an earlier wave or the wave was halted"),
    ("skipped", "rollback: drifted since the run, left as it is (--force to roll back)"),
)


@dataclass
class Outcome:
    """What happened to one device. state: unchanged · changes (diff) · confirmed · reverted · restored ·
    failed (nothing changed on it) · attention (may be half-configured: read the message) · untouched."""

    device: str
    state: str
    diff: str = ""
    message: str = ""
    seconds: float = 0.0
    bounced: list[str] = field(default_factory=list)  # ports the change takes admin-down and up again (SONiC GCU)


@dataclass
class PushOptions:
    confirm_timeout: int = 300
    max_failures: int = 0
    workers: int = 8
    health_timeout: int = 30
    soak: int = 0  # seconds between commit and health checks: let the change meet real traffic first
    resume_run: str | None = None  # a pending commit of this run (killed before its confirm) is undone first
    allow_disruptive: bool = False  # (gcu, issue 24) a change that bounces ports (driver.disruption) may be committed
    step_deadline: int = DEFAULT_STEP_DEADLINE_S  # seconds one device's whole step may take (deadline.py)


@dataclass
class Deployment:
    """The devices of one command, with what each should hold: its NAPALM candidate (a switch's rendered config,
    a GPU host's bundle) and the data links whose state the health check compares."""

    devices: dict[str, Device]
    candidates: dict[str, str]
    data_links: dict[str, list[str]] = field(default_factory=dict)
    journal: Journal | None = None
    outcomes: dict[str, Outcome] = field(default_factory=dict)
    progress: Progress = field(default_factory=Silent)
    models: dict[str, DeviceModel] = field(default_factory=dict)  # the intent per device (push's counter soak)
    settled: set[str] = field(default_factory=set)  # devices whose outcome is final (their step's deadline passed)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def record(self, outcome: Outcome, **extra: Any) -> None:
        with self._lock:
            if outcome.device in self.settled:  # a step left behind past its deadline: its outcome stands
                return
            self.outcomes[outcome.device] = outcome
        self._report(outcome, extra)

    def settle(self, outcome: Outcome) -> bool:
        """Record ``outcome`` as the device's last word unless it already has an outcome; later records of it are
        ignored. Whether it was recorded."""
        with self._lock:
            if outcome.device in self.outcomes or outcome.device in self.settled:
                return False
            self.outcomes[outcome.device] = outcome
            self.settled.add(outcome.device)
        self._report(outcome, {})
        return True

    def _report(self, outcome: Outcome, extra: dict[str, Any]) -> None:
        self.progress.device(outcome.device, outcome.state)
        if self.journal is not None:
            self.journal.write(outcome.state, outcome.device, diff=outcome.diff, message=outcome.message,
                               seconds=round(outcome.seconds, 3), **extra)
