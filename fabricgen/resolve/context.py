"""What every resolve step shares: the inputs and a place to report problems with their source location."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from fabricgen.models.diagnostics import INPUT_SCHEMA, Diagnostic, KeyPath, Location, format_key_path
from fabricgen.models.intent import Intent
from fabricgen.models.inventory import Endpoint, Inventory, Link

Locator = Callable[[KeyPath], Location]
T = TypeVar("T")


def no_locations(path: KeyPath) -> Location:
    """Locator for inputs built in code (tests, API users): the key path is the only pointer."""
    return Location("<input>", 0, 0)


@dataclass
class ResolveContext:
    intent: Intent
    inventory: Inventory
    locate: Locator = no_locations
    problems: list[Diagnostic] = field(default_factory=list)
    # (device, port) → (the other end, the cable): the one index every port decision reads, built once.
    ends: dict[tuple[str, str], tuple[Endpoint, Link]] = field(init=False, repr=False)
    _memo: dict[str, Any] = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        self.ends = {}
        for link in self.inventory.links:
            self.ends[(link.a.device, link.a.port)] = (link.b, link)
            self.ends[(link.b.device, link.b.port)] = (link.a, link)

    def peer_of(self, device: str, port: str) -> Endpoint | None:
        end = self.ends.get((device, port))
        return end[0] if end else None

    def once(self, key: str, compute: Callable[[], T]) -> T:
        """A fabric-wide value (same for every device) computed the first time it is asked for."""
        if key not in self._memo:
            self._memo[key] = compute()
        value: T = self._memo[key]
        return value

    def problem(self, path: KeyPath, message: str, hint: str = "", *, rule: str = INPUT_SCHEMA) -> None:
        """Record a problem; ``path`` starts with ``"intent"`` or ``"inventory"``. ``rule``: the catalog rule it
        breaks (fabricgen.models.diagnostics' input-error IDs, or a lint rule whose condition resolve finds first)."""
        self.problems.append(Diagnostic(self.locate(path), format_key_path(path[1:]), message, hint, rule))
