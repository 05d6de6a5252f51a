"""Input diagnostics: every problem found while loading, printed as ``FILE:LINE:COL: key.path: message (hint)``.

Loading collects all diagnostics before stopping (a user fixing a 3 a.m. CI failure wants the whole
list, not one error per run); :class:`InputError` carries them to the CLI edge, which prints them and
exits with status 2.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

KeyPath = tuple[str | int, ...]


@dataclass(frozen=True, order=True)
class Location:
    """A position in an input file (1-based line and column, as editors show them)."""

    file: str
    line: int
    col: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


def format_key_path(path: KeyPath) -> str:
    """``("hosts", "leaf1", "data", "ports", "Ethernet0")`` → ``hosts.leaf1.data.ports.Ethernet0``."""
    return ".".join(f"[{part}]" if isinstance(part, int) else str(part) for part in path) or "<root>"


@dataclass(frozen=True)
class Diagnostic:
    """One problem with the input, tied to where it is and how to fix it."""

    location: Location
    key_path: str
    message: str
    hint: str = ""

    def __str__(self) -> str:
        text = f"{self.location}: {self.key_path}: {self.message}"
        return f"{text} ({self.hint})" if self.hint else text

    def sort_key(self) -> tuple[str, int, int, str]:
        return (self.location.file, self.location.line, self.location.col, self.message)


class InputError(Exception):
    """Raised when the intent or inventory cannot be used; holds every diagnostic found."""

    def __init__(self, diagnostics: Iterable[Diagnostic]) -> None:
        self.diagnostics: Sequence[Diagnostic] = sorted(set(diagnostics), key=Diagnostic.sort_key)
        super().__init__("\n".join(str(d) for d in self.diagnostics))
