"""What deploy commands decide and report, without the network libraries (the CLI imports this at start-up)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from fabricgen.deploy.journal import Journal
from fabricgen.deploy.progress import Progress, Silent
from fabricgen.models.inventory import Device

EXIT_OK, EXIT_FAILED_REVERTED, EXIT_USAGE, EXIT_ATTENTION = 0, 1, 2, 3
DIFF_CHANGES, DIFF_ERRORS = 2, 1


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
                  "reverts it), or a read-back that differs; exit 3"),
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

    def record(self, outcome: Outcome, **extra: Any) -> None:
        self.outcomes[outcome.device] = outcome
        self.progress.device(outcome.device, outcome.state)
        if self.journal is not None:
            self.journal.write(outcome.state, outcome.device, diff=outcome.diff, message=outcome.message,
                               seconds=round(outcome.seconds, 3), **extra)
