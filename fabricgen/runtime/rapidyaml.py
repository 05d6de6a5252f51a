"""rapidyaml's tree of a text, and that tree written as JSON, for the last text parsed.

`lint --configs` clears an nvue.yaml's nesting depth from rapidyaml's tree written as JSON (fabricgen.lint.configs),
then the NVUE reader reads the same text from the same tree and JSON (fabricgen.platforms.nvue.read): keeping the
last text's both makes that one parse and one emit per file instead of two of each (issue 26 item 7). Both users
only read the trees; rapidyaml's own messages on failure are kept off stderr (its exceptions say what failed).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from typing import Any

try:
    import ryml  # type: ignore[import-untyped]
except ImportError:  # pragma: no cover - rapidyaml is a dependency; callers check for it before asking
    ryml = None

# The text parsed last, its tree, and the tree written as JSON (None: not yet).
_LAST: list[Any] = [b"", None, None]


def parsed_in_arena(raw: bytes) -> Any:
    """``ryml.parse_in_arena(raw)``: rapidyaml's own exception types when it refuses the text. The last text's tree
    is kept, and given again for an equal text."""
    if _LAST[1] is not None and _LAST[0] == raw:
        return _LAST[1]
    with quiet_stderr():  # rapidyaml prints its own message before raising
        tree = ryml.parse_in_arena(raw)
    _LAST[:] = [raw, tree, None]
    return tree


def emitted_json(tree: Any) -> str:
    """``ryml.emit_json(tree)`` (rapidyaml's own exception types when it cannot), kept for the last tree
    parsed_in_arena made."""
    if _LAST[1] is tree and _LAST[2] is not None:
        return str(_LAST[2])
    with quiet_stderr():
        text = str(ryml.emit_json(tree))
    if _LAST[1] is tree:
        _LAST[2] = text
    return text


@contextlib.contextmanager
def quiet_stderr() -> Iterator[None]:
    """File descriptor 2 pointed at /dev/null meanwhile: rapidyaml's C++ writes its messages there."""
    saved = os.dup(2)
    try:
        with open(os.devnull, "wb") as devnull:  # noqa: PTH123 - a file descriptor, not a path's contents
            os.dup2(devnull.fileno(), 2)
            yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
