"""What deploy commands decide and report, without the network libraries (the CLI imports this at start-up)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from fabricgen.deploy.journal import Journal
from fabricgen.deploy.progress import Progress, Silent
from fabricgen.schema.inventory import Device

EXIT_OK, EXIT_FAILED_REVERTED, EXIT_USAGE, EXIT_ATTENTION = 0, 1, 2, 3
DIFF_CHANGES, DIFF_ERRORS = 2, 1


@dataclass
class Outcome:
    """What happened to one device. state: unchanged · changes (diff) · confirmed · reverted · restored ·
    failed (nothing changed on it) · attention (may be half-configured: read the message) · untouched."""

    device: str
    state: str
    diff: str = ""
    message: str = ""
    seconds: float = 0.0


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
