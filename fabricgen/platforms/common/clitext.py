"""Indented CLI text (an EOS or NX-OS running-config) as a tree of lines, for the platforms' readers.

Both CLIs nest a block's lines under it by indentation, comment with ``!`` and carry banners whose free text
must not be read as commands, and both readers hand each top-level block to the handler of its first line.
What ends a banner, and which other lines are noise, differ per CLI: those are parameters, so the tree walk and
the dispatch are written once and both readers get the same fixes.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from fabricgen.models.device import EcnThresholds, EcnUnconverted, EcnUnit, QueueModel
from fabricgen.platforms import ConfigReadError

# Given a command line just read: None when it opens no banner, else a test of each later (stripped) line that
# says whether the banner's text ends with it. Lines up to and including that one are skipped.
BannerEnd = Callable[[str], Callable[[str], bool] | None]
C = TypeVar("C")  # a reader's record of what the config says
# Bytes per unit of a queue-length threshold (`random-detect … kbytes`) on both CLIs; fabricgen writes bytes, and a
# brownfield config may use any of these. Neither vendor's reference configs say whether a kbyte is 1,000 or 1,024
# bytes (unverified); 1,024 is taken. Segments, packets and time units are no byte count and are not here.
BYTE_UNITS = {"bytes": 1, "kbytes": 1024, "mbytes": 1024 * 1024}


@dataclass(slots=True)
class Node:
    """One CLI line and the lines indented under it; it knows its file so that errors can name it."""

    text: str
    line: int
    file: str
    children: list[Node] = field(default_factory=list)
    # The children by their command word (the first word; after a leading `no`, the second), made on the first
    # `each` with a pattern whose command word is fixed: a port's block is asked a dozen patterns, and each
    # scanned every child with a regex (issue 26 item 7).
    _by_word: dict[str, list[Node]] | None = field(default=None, repr=False, compare=False)

    def error(self, message: str) -> ConfigReadError:
        """An error at this line that quotes it, since a running-config line alone says what was meant."""
        return ConfigReadError(self.file, self.line, f"{message}: `{self.text}`")

    def each(self, pattern: str) -> Iterator[tuple[re.Match[str], Node]]:
        """Children matching ``pattern`` in order (later lines win where callers keep the last)."""
        compiled, word = _COMPILED.get(pattern) or _compiled(pattern)
        children = self.children if word is None else self._with_word(word)
        for child in children:
            match = compiled.fullmatch(child.text)
            if match is not None:
                yield match, child

    def _with_word(self, word: str) -> list[Node]:
        """The children whose command word is ``word``, in order: the only ones a pattern whose command word it is
        can match in full."""
        by_word = self._by_word
        if by_word is None:
            by_word = self._by_word = {}
            for child in self.children:
                words = child.text.split(" ", 2)
                by_word.setdefault(words[1] if words[0] == "no" and len(words) > 1 else words[0], []).append(child)
        return by_word.get(word, [])

    def last(self, pattern: str) -> re.Match[str] | None:
        """The last child matching ``pattern``: a CLI applies a repeated line's last value."""
        found = None
        for match, _ in self.each(pattern):
            found = match
        return found

    def last_of(self, *patterns: str) -> re.Match[str] | None:
        """The last child matching any of ``patterns``: a command and the abbreviations typed for it (the CLI takes
        `shut` for `shutdown`; a running-config prints the whole word, a hand edit often does not)."""
        found, at = None, -1
        for pattern in patterns:
            for match, child in self.each(pattern):
                if child.line > at:
                    found, at = match, child.line
        return found

    def last_int(self, pattern: str, low: int, high: int) -> int | None:
        """The number in group 1 of the last child matching ``pattern``; a bad one is reported at its line."""
        found = None
        for match, child in self.each(pattern):
            found = number(match.group(1), child, low, high)
        return found


# The readers' patterns, compiled: a dict lookup per call where re.compile's own cache costs a few checks more
# (each port of a switch asks a dozen patterns of its block; issue 26 item 7). Readers use a fixed set.
# With each pattern, the command word of every line it matches in full (None: not fixed).
_COMPILED: dict[str, tuple[re.Pattern[str], str | None]] = {}
_DIGITS = re.compile(r"\d+")
# A pattern's leading literal word, after an optional "(no )?": letters, digits and dashes, then a space, the end,
# or a group that starts with a space.
_LEADING_WORD = re.compile(r"(?:\(no \)\?)?([A-Za-z0-9-]+)(?= |$|\(\?: )")


def _compiled(pattern: str) -> tuple[re.Pattern[str], str | None]:
    if len(_COMPILED) > 512:  # a fixed set of patterns; the bound only guards against a caller that builds them
        _COMPILED.clear()
    found = _COMPILED[pattern] = (re.compile(pattern), command_word(pattern))
    return found


def command_word(pattern: str) -> str | None:
    """The command word of every line ``pattern`` matches in full: its leading literal word, which a line starts
    with, or has after `no ` where the pattern allows one. None when the pattern does not fix it (a leading group,
    class, escape or quantifier) or it is `no` itself."""
    leading = _LEADING_WORD.match(pattern)
    return None if leading is None or leading.group(1) == "no" else leading.group(1)


def number(text: str, node: Node, low: int = 0, high: int = 2**31) -> int:
    """``text`` as a whole number in ``low``-``high``; anything else is an error at ``node``'s line, not a
    Python ValueError, so a bad value in a config names where it is."""
    if not _DIGITS.fullmatch(text) or not low <= int(text) <= high:
        raise node.error(f"expected a number {low}-{high}, found {text!r}")
    return int(text)


def tree(text: str, file: str, banner_end: BannerEnd, skipped: Collection[str] = (),
         banner_word: str = "banner ", canonical: Callable[[str], str] | None = None) -> Node:
    """The config's lines nested by indentation (a root Node holds the top level). Blank lines, ``!`` lines
    (comments or separators), the ``skipped`` lines and banner text are left out. ``canonical`` gives a top-level
    line as the CLI prints it (`int et1/1` is `interface Ethernet1/1`), so that a block entered again as typed
    merges with the first (see _merge_repeated_blocks). ``banner_end`` is asked only
    of lines that start with ``banner_word`` (both CLIs open a banner with `banner `): a config is mostly not
    banners, and this loop runs once per line of every switch (issue 26 item 7)."""
    root = Node("", 0, file)
    stack: list[tuple[int, Node]] = [(-1, root)]
    top_indent, top = -1, root
    ends_banner: Callable[[str], bool] | None = None
    line_number = 0
    for raw in text.splitlines():
        line_number += 1
        stripped = raw.strip()
        if ends_banner is not None:
            ends_banner = None if ends_banner(stripped) else ends_banner
            continue
        if not stripped or stripped[0] == "!" or stripped in skipped:
            continue
        if "  " in stripped and not stripped.startswith("description "):
            stripped = " ".join(stripped.split())  # the CLI reads words: `mtu  9100` is `mtu 9100`
        indent = len(raw) - len(raw.lstrip(" "))
        if indent == 0 and canonical is not None:
            stripped = canonical(stripped)
        while top_indent >= indent:
            stack.pop()
            top_indent, top = stack[-1]
        node = Node(stripped, line_number, file)
        top.children.append(node)
        stack.append((indent, node))
        top_indent, top = indent, node
        if stripped.startswith(banner_word):
            ends_banner = banner_end(stripped)
    _merge_repeated_blocks(root)
    return root


def _merge_repeated_blocks(node: Node) -> None:
    """A block entered again (a second ``interface Ethernet1`` further down: a hand edit appended to a config is
    often written so) adds its lines to the first, as the CLI applies them: in order, later lines winning. Lines
    without a block of their own stay as they are, repeats included (their order decides), and a block is not
    merged across a ``no``/``default`` of it, which resets what came before. A config without repeats costs one
    set of its top-level lines; only merged blocks are looked into."""
    children = node.children
    if len({child.text for child in children}) == len(children):
        return
    kept: list[Node] = []
    first: dict[str, Node] = {}  # a block's text → its first node, while no reset of it came between
    merged: dict[int, Node] = {}
    for child in children:
        if child.text.startswith(("no ", "default ")):
            first.pop(child.text.split(" ", 1)[1], None)
        earlier = first.get(child.text)
        if earlier is not None and (earlier.children or child.children):
            earlier.children.extend(child.children)
            merged[id(earlier)] = earlier
            continue
        first.setdefault(child.text, child)
        kept.append(child)
    node.children = kept
    for block in merged.values():  # their lines may repeat a block too (a policy-map's class, entered twice)
        _merge_repeated_blocks(block)


def refuse_stray_lines(root: Node, stray: re.Pattern[str], blocks: str) -> None:
    """A top-level line that only a block sets (``stray`` matches it: `mtu 9000` at column 0 after an `interface`
    block; ``blocks`` names the kinds of block it may belong to) is refused at its line. The CLI applies a line in
    the mode the lines before it entered, whatever its indentation; the readers nest a block's lines by
    indentation, so such a line was read as someone else's top-level configuration and dropped, in silence. A
    running-config prints every line of a block indented under it."""
    for node in root.children:
        if stray.match(node.text):
            raise node.error(f"a line of a block ({blocks}) at the top level (column 0): lint reads a block by its "
                             "indentation and cannot tell which one it configures (the CLI applies it in the mode "
                             "the lines before it entered); indent it under the line that opens its block, as a "
                             "running-config prints it")


# What a top-level line means to a reader: its pattern, and the handler that records the block in the reader's
# record (the match, for the line's values, and the block's Node, for the lines under it).
Handler = Callable[[C, re.Match[str], Node], None]


def dispatch(root: Node, handlers: Sequence[tuple[re.Pattern[str], Handler[C]]], record: C) -> C:
    """Each top-level block to the first handler whose pattern matches its whole line. A block no pattern
    matches is someone else's configuration (a running-config has far more than fabricgen owns): skipped."""
    for node in root.children:
        for pattern, handler in handlers:
            match = pattern.fullmatch(node.text)
            if match is not None:
                handler(record, match, node)
                break
    return record


# --- what both CLIs' readers make of a queue ------------------------------------------------------------------

def ecn_thresholds(low: str, low_unit: str, high: str, high_unit: str, percent: int, node: Node,
                   other_units: Mapping[str, EcnUnit]) -> EcnThresholds | EcnUnconverted | None:
    """A `random-detect` line's thresholds: bytes when both units are (BYTE_UNITS); as written when both are one
    of the platform's ``other_units``, which are no byte count; else None (not read). Numbers are checked at
    ``node``'s line."""
    if low_unit in BYTE_UNITS and high_unit in BYTE_UNITS:
        return EcnThresholds(min_bytes=number(low, node) * BYTE_UNITS[low_unit],
                             max_bytes=number(high, node) * BYTE_UNITS[high_unit], probability_pct=percent)
    if low_unit == high_unit and low_unit in other_units:
        return EcnUnconverted(min=number(low, node), max=number(high, node), unit=other_units[low_unit],
                              probability_pct=percent)
    return None


def ecn_fields(ecn: EcnThresholds | EcnUnconverted | None) -> dict[str, Any]:
    """A queue's two ECN fields for what ecn_thresholds read: one set, the other None (thresholds that replace
    others replace them whole, in whichever unit each is written)."""
    return {"ecn": ecn if isinstance(ecn, EcnThresholds) else None,
            "ecn_unconverted": ecn if isinstance(ecn, EcnUnconverted) else None}


def owned_queue(queue: QueueModel) -> dict[str, Any]:
    """A queue as both CLIs' owned views have it (its weight only where it is DWRR)."""
    return {"index": queue.index, "scheduler": queue.scheduler,
            "weight": queue.weight if queue.scheduler == "dwrr" else None,
            "ecn": None if queue.ecn is None else queue.ecn.model_dump(),
            "ecn_unconverted": None if queue.ecn_unconverted is None else queue.ecn_unconverted.model_dump()}
