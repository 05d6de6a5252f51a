"""Lint rules are small registered functions with stable IDs.

A rule gets the :class:`LintContext` (the resolved fabric, its links and capabilities, all indexed once) and
yields :class:`Finding`\\ s that name the device, the port and the peer end, and say how to fix it. IDs are
stable forever (``FG-<TOPIC>-NNN``): waivers, CI baselines and SARIF history refer to them.

A rule looks at one device, its ports and the far end of each (the neighbourhood update lints a changed device
with only its cabled neighbours around it), unless it is listed in ``neighbourhood.FABRIC_WIDE_RULES``: a rule
that compares a device with devices it is not cabled to must be. tests/test_lint_cases.py checks every other
rule against its failing fixtures.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from fabricgen.lint.context import LintContext

Severity = Literal["error", "warning", "info"]
SEVERITY_ORDER: dict[str, int] = {"error": 0, "warning": 1, "info": 2}
KeyPath = tuple[str | int, ...]


@dataclass(frozen=True)
class Finding:
    rule: str
    severity: Severity
    device: str
    message: str
    fix: str
    port: str | None = None
    peer: str | None = None
    source: KeyPath | None = field(default=None, compare=False)  # where in intent/inventory to point
    # Where in a config file to point, (path, line): set by rules that know the line (FG-EVD-002); other
    # findings on a device read from configs point at the first line naming their port.
    where: tuple[str, int] | None = field(default=None, compare=False)

    @property
    def subject(self) -> str:
        here = f"{self.device}:{self.port}" if self.port else self.device
        return f"{here} ↔ {self.peer}" if self.peer else here


RuleFn = Callable[["LintContext", "Rule"], Iterable[Finding]]


@dataclass(frozen=True)
class Rule:
    id: str
    name: str
    severity: Severity
    summary: str
    explanation: str
    check: RuleFn

    def finding(self, device: str, message: str, fix: str, *, port: str | None = None, peer: str | None = None,
                source: KeyPath | None = None, severity: Severity | None = None,
                where: tuple[str, int] | None = None) -> Finding:
        return Finding(self.id, severity or self.severity, device, message, fix, port, peer, source, where)


RULES: dict[str, Rule] = {}
_ID = re.compile(r"^FG-[A-Z]{3}-\d{3}$")
_NAME = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")


def rule(rule_id: str, name: str, severity: Severity, summary: str) -> Callable[[RuleFn], RuleFn]:
    """Register a check. Its docstring is the long explanation: the why, then the fix."""

    def register(check: RuleFn) -> RuleFn:
        if not _ID.match(rule_id) or not _NAME.match(name):
            raise ValueError(f"bad rule id/name {rule_id!r}/{name!r}")
        if rule_id in RULES or any(r.name == name for r in RULES.values()):
            raise ValueError(f"rule {rule_id} / {name} registered twice")
        explanation = inspect.cleandoc(check.__doc__ or "")
        RULES[rule_id] = Rule(rule_id, name, severity, summary, explanation, check)
        return check

    return register


def all_rules() -> list[Rule]:
    import fabricgen.lint.rules  # noqa: F401  (registers every rule module)

    return [RULES[key] for key in sorted(RULES)]
