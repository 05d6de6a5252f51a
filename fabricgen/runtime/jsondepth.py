"""An upper bound of how deep JSON text nests, at C speed, without parsing it (the parsers recurse per level).

`lint --configs` refuses a config nested deeper than any config is (fabricgen.lint.configs) and clears JSON text,
and rapidyaml's tree of an nvue.yaml written as JSON, with this bound before anything parses it; the NVUE reader
asks the same bound of the same JSON text to know that its one-pass road cannot meet its depth limit. The last
text's bound is kept, so that asking again for that text costs nothing (issue 26 item 7).
"""

from __future__ import annotations

import re
from typing import Any

# The JSON strings (possessive: no backtracking into a string that never closes), and what is not a bracket.
_JSON_STRING = re.compile(r'"[^"\\]*+(?:\\.[^"\\]*+)*+"')
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_AS_PARENS = str.maketrans("[{]}", "(())")
_NOT_STRUCTURE = bytes(sorted(set(range(256)) - set(b'[]{}"\\')))  # every byte but brackets, quote, backslash
_QUOTED_BYTES = re.compile(rb'"[^"]*+"')
_BYTES_AS_PARENS = bytes.maketrans(b"[{]}", b"(())")
# The last text asked about (held, so that its identity is not another text's), the limit, and its bound.
_LAST: list[Any] = [None, 0, 0]


def depth_bound(text: str, limit: int) -> int:
    """An upper bound of how deep ``text`` nests, exact up to ``limit``; above it, ``limit + 1`` (the caller's exact
    scan decides). Outside strings, every bracket becomes ( or ); each pass removes every innermost () pair, so a
    text whose pairs are gone after N passes nests N deep within them, plus the unmatched opening brackets left."""
    if _LAST[0] is text and _LAST[1] == limit:
        return int(_LAST[2])
    bound = _depth_bound(text, limit)
    _LAST[:] = [text, limit, bound]
    return bound


def _depth_bound(text: str, limit: int) -> int:
    brackets = _outside_strings(text)
    for passes in range(limit + 1):
        if "()" not in brackets:
            return passes + brackets.count("(")
        brackets = brackets.replace("()", "")
    return limit + 1


def _outside_strings(text: str) -> str:
    """The brackets outside JSON strings, in order, as ( and )."""
    structure = text.encode().translate(None, _NOT_STRUCTURE)  # brackets and quotes only
    if b"\\" in structure:  # an escape: only the string pattern knows which quote ends a string
        return _NOT_BRACKET.sub("", _JSON_STRING.sub("", text)).translate(_AS_PARENS)
    if structure.count(b'"') % 2 == 0:  # without escapes every string is a quote, anything but a quote, a quote.
        # Two quotes side by side are an empty string, or one string's end and the next one's start with no
        # bracket between them (the rest of the text is gone): dropping them leaves the same brackets outside
        # strings. Most strings hold no bracket, so this leaves few quotes, often none, at memchr speed.
        structure = structure.replace(b'""', b"")
        if b'"' in structure:  # strings holding brackets: what lies outside them is every other piece
            structure = b"".join(structure.split(b'"')[::2])
        return structure.translate(_BYTES_AS_PARENS).decode("ascii")
    # a string that never closes: the pattern keeps its quote and what follows
    return _QUOTED_BYTES.sub(b"", structure).translate(_BYTES_AS_PARENS).decode("ascii")
