"""Input diagnostics: every problem found while loading, printed as ``FILE:LINE:COL: key.path: message (hint)``.

Loading collects all diagnostics before stopping (a user fixing a 3 a.m. CI failure wants the whole
list, not one error per run); :class:`InputError` carries them to the CLI edge, which prints them and
exits with status 2.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

KeyPath = tuple[str | int, ...]

# The input-error rules of the lint catalog (fabricgen.lint.registry explains each). Every diagnostic carries a
# rule ID, so that `lint`/`render --format json|sarif` report input errors as findings a SARIF viewer shows at
# their line. The text form of these omits the ID: FILE:LINE:COL: key.path: message (hint) is what editors
# and users already read. A diagnostic that is a lint rule's condition found early (DWRR weights, too many
# lossless classes, ...) carries that rule's ID, and its text ends with it: ` [FG-SCH-001]`.
INPUT_FILE = "FG-INP-001"
"""an input file that cannot be read as YAML: missing, unreadable, too large, not UTF-8, a syntax error"""
INPUT_SCHEMA = "FG-INP-002"
"""a value the schema refuses: unknown key, wrong type, out of range, missing required key"""
INPUT_REFERENCE = "FG-INP-003"
"""a name or address that refers to nothing, or to something that does not fit"""
PLATFORM_LIMIT = "FG-INP-004"
"""the intent asks for something a device's platform cannot express"""
DEVICE_FACT_MISSING = "FG-INP-005"
"""a device lacks a fact its platform needs to resolve (a port speed, an ASIC, an RDMA device, ...)"""
CONFIG_UNREADABLE = "FG-INP-006"
"""a config `lint --configs` reads that is not parseable text of its platform's format"""
INPUT_ERROR_IDS = (INPUT_FILE, INPUT_SCHEMA, INPUT_REFERENCE, PLATFORM_LIMIT, DEVICE_FACT_MISSING, CONFIG_UNREADABLE)


@dataclass(frozen=True, order=True)
class Location:
    """A position in an input file (1-based line and column, as editors show them)."""

    file: str
    line: int
    col: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


def format_key_path(path: KeyPath) -> str:
    """``("hosts", "leaf1", "data", "ports", "Ethernet0")`` → ``hosts.leaf1.data.ports.Ethernet0``; a key
    holding anything but printable ASCII is quoted (``repr``), so that a key carrying a line break cannot break
    the diagnostic line it is reported on."""
    return ".".join(f"[{part}]" if isinstance(part, int) else _key(part) for part in path) or "<root>"


def _key(part: str) -> str:
    text = str(part)
    return text if (text.isascii() and text.isprintable()) or _is_quoted(text) else repr(text)


def _is_quoted(text: str) -> bool:
    """A key already quoted by a caller (``repr`` of a string): quoting it again would only add backslashes."""
    return len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"" and one_line(text) == text


# Every code point Python's str.splitlines() (and so an editor or a CI log) breaks a line at.
_LINE_BREAKS = {code: f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
                for code in (0x0A, 0x0B, 0x0C, 0x0D, 0x1C, 0x1D, 0x1E, 0x85, 0x2028, 0x2029)}


def one_line(text: str) -> str:
    """``text`` with every line break written as its escape: a diagnostic is exactly one line."""
    return text.translate(_LINE_BREAKS)


@dataclass(frozen=True)
class Diagnostic:
    """One problem with the input, tied to where it is and how to fix it."""

    location: Location
    key_path: str
    message: str
    hint: str = ""
    rule: str = INPUT_SCHEMA
    """the catalog rule this problem breaks (see INPUT_ERROR_IDS; or a lint rule's ID, found while loading)"""

    def __str__(self) -> str:
        text = f"{self.location}: {self.key_path}: {self.message}"
        text = f"{text} ({self.hint})" if self.hint else text
        return one_line(text if self.rule in INPUT_ERROR_IDS else f"{text} [{self.rule}]")

    def sort_key(self) -> tuple[str, int, int, str, str]:
        # The key path last: problems at one place (a template shared by many hosts) come in a stable order.
        return (self.location.file, self.location.line, self.location.col, self.message, self.key_path)


def folded(diagnostics: Sequence[Diagnostic]) -> list[tuple[Diagnostic, list[Diagnostic]]]:
    """Each diagnostic with the later ones that say the same at the same place (file, line, column, message, hint):
    a port template or group shared by hundreds of devices has one mistake, not hundreds. In order of first
    appearance."""
    groups: dict[tuple[Location, str, str, str], tuple[Diagnostic, list[Diagnostic]]] = {}
    for diagnostic in diagnostics:
        key = (diagnostic.location, diagnostic.message, diagnostic.hint, diagnostic.rule)
        if key in groups:
            groups[key][1].append(diagnostic)
        else:
            groups[key] = (diagnostic, [])
    return list(groups.values())


def folded_lines(diagnostics: Sequence[Diagnostic], shown: int = 5) -> list[str]:
    """The diagnostics as text lines, one per place and problem: repeats at one place are named at the end of the
    first's line (by the first key of each one's key path: the host or group), which stays FILE:LINE:COL: text."""
    lines = []
    for first, same in folded(diagnostics):
        text = str(first)
        if same:
            names = list(dict.fromkeys(d.key_path.split(".", 1)[0] for d in same))
            more = f", and {len(names) - shown} more" if len(names) > shown else ""
            text = one_line(f"{text} [the same at this line for {len(same)} more: {', '.join(names[:shown])}{more}]")
        lines.append(text)
    return lines


class InputError(Exception):
    """Raised when the intent or inventory cannot be used; holds every diagnostic found."""

    def __init__(self, diagnostics: Iterable[Diagnostic]) -> None:
        self.diagnostics: Sequence[Diagnostic] = sorted(set(diagnostics), key=Diagnostic.sort_key)
        super().__init__("\n".join(str(d) for d in self.diagnostics))
