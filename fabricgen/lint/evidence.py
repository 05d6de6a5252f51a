"""What ``lint --configs`` found on disk, beside the models it read: the evidence the FG-EVD rules judge.

Plain data, made by :mod:`fabricgen.lint.configs` (which does the reading) and handed to :func:`fabricgen.lint.lint`.
Linting the resolved fabric passes no evidence: it is complete by construction, and the FG-EVD rules are
silent there. Missing evidence is not a pass: a device without configs, a file that is empty or cut short
and a cabled port the config lacks are findings, unless ``--partial`` leaves devices out on purpose.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from fabricgen.models.device import DeviceModel


@dataclass(frozen=True)
class Gap:
    """A config file that is there but does not hold a whole config: ``problem`` says how, at ``line``."""

    device: str
    path: str
    line: int
    problem: str


@dataclass(frozen=True)
class Conflict:
    """A config file that sets one setting two ways, at ``line`` (on ``port``, a port or NIC; None: device-wide)."""

    device: str
    path: str
    line: int
    problem: str
    port: str | None = None


@dataclass(frozen=True)
class Evidence:
    """``intended``: the devices read from configs, each with its model as the intent resolves it (the skeleton
    its reader started from), so rules can tell what the config dropped. ``missing``: devices whose config is
    not in ``directory``, with what is missing. ``skipped``: devices without configs left out on purpose
    (``--partial``); lint reports nothing about them except where a cable reaches a linted device."""

    directory: str
    intended: Mapping[str, DeviceModel] = field(default_factory=dict)
    missing: Mapping[str, str] = field(default_factory=dict)
    gaps: tuple[Gap, ...] = ()
    skipped: tuple[str, ...] = ()
    conflicts: tuple[Conflict, ...] = ()

    def from_config(self, device: str) -> bool:
        """Whether ``device``'s model was read from its config (rather than resolved from the intent)."""
        return device in self.intended
