"""What every resolve step shares: the inputs and a place to report problems with their source location."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from fabricgen.diagnostics import Diagnostic, KeyPath, Location, format_key_path
from fabricgen.schema.intent import Intent
from fabricgen.schema.inventory import Inventory

Locator = Callable[[KeyPath], Location]


def no_locations(path: KeyPath) -> Location:
    """Locator for inputs built in code (tests, API users): the key path is the only pointer."""
    return Location("<input>", 0, 0)


@dataclass
class ResolveContext:
    intent: Intent
    inventory: Inventory
    locate: Locator = no_locations
    problems: list[Diagnostic] = field(default_factory=list)

    def problem(self, path: KeyPath, message: str, hint: str = "") -> None:
        """Record a problem; ``path`` starts with ``"intent"`` or ``"inventory"``."""
        self.problems.append(Diagnostic(self.locate(path), format_key_path(path[1:]), message, hint))
