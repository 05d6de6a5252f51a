"""The body of nvue.yaml exactly as PyYAML's SafeDumper writes it, for the one shape the NVUE renderer dumps.

``dump(tree)`` equals ``yaml.dump([{"set": tree}], Dumper=yaml.SafeDumper, sort_keys=True,
default_flow_style=False, allow_unicode=False, width=1000)``: PyYAML's pure-Python emitter took half of all
render time, and libyaml's differs from it at the edges (it takes a 128-character key as a simple key, PyYAML
does not). The tree is nested dicts with str keys whose leaves are str, int or ``{}`` (``settings_tree``), so
the output is a block mapping: ``key:`` then the children two spaces deeper, ``key: {}`` for an empty dict,
``key: scalar`` for a leaf, keys sorted.

Scalars are the only delicate part. A str matching ``_PLAIN_SAFE`` is one PyYAML's ``analyze_scalar`` allows
plain in block context and single-quoted: non-empty, printable ASCII, no leading or trailing space, no
indicator (``- ``, ``? ``, ``: ``, ``#``, ``'``, ``"``... at the start; ``: ``, ``:`` at the end, `` #``
anywhere), not ``---`` or ``...``. PyYAML then writes it plain when its resolver reads it back as a string and
single-quoted otherwise (``'0'``, ``'on'``, ``'1e3'``); an int is written with ``str``. Anything else (a str
outside the pattern or longer than ``_MAX_SCALAR``, a bool, a dict reached twice, which PyYAML would write as
an anchor and alias) hands the whole tree to PyYAML itself, so the output never depends on this module
knowing every rule. ``_MAX_SCALAR`` keeps keys under PyYAML's 128-character simple-key limit and, with
``_MAX_INDENT``, every line under the 1000-column width where PyYAML starts folding.

A :class:`Block` in the tree stands for a mapping that many trees hold (the settings every switch shares): its
lines are written the first time and copied after that, and PyYAML, when it writes the tree, gets a copy of the
block's mapping in its place. A :class:`Merged` is a mapping made of a dict's entries and a Block's.

What is mirrored is stock SafeDumper. Libraries may change it for the whole process (junos-eznc, which the NAPALM
plugins load, turns its aliases off): when its representers or resolvers are not PyYAML's own, PyYAML dumps.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from typing import Any, NamedTuple

import yaml
from yaml.representer import SafeRepresenter

# Runs of plain characters taken whole, possessively (each character allows one branch only, so nothing is
# ever given back): the same strings as one character per step, 2-3x faster on every new port description.
_PLAIN_SAFE = re.compile(r"[A-Za-z0-9_/(](?:[A-Za-z0-9_/()+=@.,\-]++|:(?! |\Z)| (?!\Z))*+")
_MAX_SCALAR = 120
_MAX_INDENT = 700  # 700 + 120 + len(": ") + 120 < 1000
_STR = "tag:yaml.org,2002:str"
# The tag PyYAML reads a plain scalar as: SafeDumper's resolver, while it has no resolvers of its own (_stock).
_RESOLVER = yaml.resolver.Resolver()
_resolve: Callable[[type[yaml.Node], str, tuple[bool, bool]], str] = _RESOLVER.resolve
_STOCK_REPRESENTERS = {str: SafeRepresenter.represent_str, int: SafeRepresenter.represent_int,
                       dict: SafeRepresenter.represent_dict, list: SafeRepresenter.represent_list}


class _Unsupported(Exception):
    """A value this module does not prove PyYAML's spelling of: the caller dumps with PyYAML instead."""


class Block:
    """A mapping placed in many trees, written once per indentation. Its mapping must not change after that."""

    __slots__ = ("_bounds", "_entries", "_text", "tree")

    def __init__(self, tree: dict[str, Any]) -> None:
        self.tree = tree
        self._text: dict[int, str] = {}  # indent -> lines; one indent in practice (a block sits at one path)
        self._entries: dict[str, Any] | None = None
        self._bounds: tuple[Any, Any] | None = None

    def text(self, indent: int) -> str:
        """The lines of the non-empty mapping, its keys at column ``indent`` (raises _Unsupported as _mapping)."""
        text = self._text.get(indent)
        if text is None:
            lines: list[str] = []
            _mapping(self.tree, indent, lines, {id(self.tree)})
            text = self._text[indent] = "\n".join(lines)
        return text

    @property
    def entries(self) -> dict[str, Any]:
        """The mapping's entries, each mapping among them a Block of its own: to put beside other entries."""
        if self._entries is None:
            self._entries = {key: Block(value) if type(value) is dict else value for key, value in self.tree.items()}
        return self._entries

    def bounds(self) -> tuple[Any, Any]:
        """The first and the last key of the non-empty mapping (raises TypeError for keys of mixed types)."""
        if self._bounds is None:
            self._bounds = min(self.tree), max(self.tree)
        return self._bounds


class Merged(NamedTuple):
    """A mapping of ``own``'s entries and ``shared``'s (the settings of one switch and those it shares), keys
    apart. ``own`` belongs to this mapping alone: it may change, ``shared`` may not."""

    own: dict[str, Any]
    shared: Block

    def expanded(self) -> dict[str, Any]:
        """The same mapping as one dict, to add entries to."""
        return {**self.own, **self.shared.entries}


def dump(tree: dict[str, Any]) -> str:
    """``yaml.dump([{"set": tree}], ...)`` as the module docstring says, byte for byte."""
    try:
        if not _stock():
            raise _Unsupported
        lines = ["- set:"]
        _mapping(tree, 4, lines, {id(tree)})
    except _Unsupported:
        return yaml.dump([{"set": _plain(tree, {})}], Dumper=yaml.SafeDumper, sort_keys=True,
                         default_flow_style=False, allow_unicode=False, width=1000)
    if len(lines) == 1:
        return "- set: {}\n"
    lines.append("")
    return "\n".join(lines)


def _stock() -> bool:
    """Whether SafeDumper still represents and resolves what this module writes as stock PyYAML does."""
    representers = yaml.SafeDumper.yaml_representers
    return ("yaml_implicit_resolvers" not in yaml.SafeDumper.__dict__
            and all(representers.get(kind) is function for kind, function in _STOCK_REPRESENTERS.items()))


def _plain(node: Any, copies: dict[int, Any]) -> Any:
    """``node`` with every Block replaced by a copy of its mapping, for PyYAML. A dict is rebuilt only when it
    holds a Block, once however often it is reached, so the dicts PyYAML writes as anchors and aliases stay."""
    if type(node) is Block:
        return copy.deepcopy(node.tree)
    if type(node) is Merged:
        if id(node) not in copies:
            copies[id(node)] = {**_plain(node.own, copies), **copy.deepcopy(node.shared.tree)}
        return copies[id(node)]
    if type(node) is not dict:
        return node
    if id(node) not in copies:
        children = {key: _plain(value, copies) for key, value in node.items()}
        same = all(children[key] is value for key, value in node.items())
        copies[id(node)] = node if same else children
    return copies[id(node)]


def _mapping(node: dict[str, Any], indent: int, lines: list[str], seen: set[int]) -> None:
    """The lines of non-empty ``node``, its keys at column ``indent``. The loop is the hot path of nvue.yaml:
    each branch is one type test and one append, a known word one dict lookup (``_written``)."""
    if indent > _MAX_INDENT:
        raise _Unsupported
    margin = _MARGINS[indent]
    try:
        keys = sorted(node)
    except TypeError:  # keys of mixed types: PyYAML then keeps the dict's order
        raise _Unsupported from None
    append = lines.append
    for key in keys:
        if type(key) is not str:  # before the cache, which takes 1 and True for the same key
            raise _Unsupported  # a key PyYAML would sort or spell differently
        value = node[key]
        prefix = margin + (_written.get(key) or _str_scalar(key))
        kind = type(value)
        if kind is str:
            append(prefix + ": " + (_written.get(value) or _str_scalar(value)))
        elif kind is int:  # exactly int: a bool is written true/false
            append(f"{prefix}: {value}")
        elif kind is Block:
            append(f"{prefix}:\n{value.text(indent + 2)}" if value.tree else prefix + ": {}")
        elif kind is Merged:
            _merged(prefix, value, indent + 2, lines, seen)
        else:
            _dict(prefix, value, indent + 2, lines, seen)


def _dict(prefix: str, value: Any, indent: int, lines: list[str], seen: set[int]) -> None:
    """The lines of the entry ``prefix`` whose value is a dict, its keys at column ``indent``."""
    if type(value) is not dict or id(value) in seen:  # a dict reached twice: PyYAML writes an anchor and alias
        raise _Unsupported
    seen.add(id(value))
    if value:
        lines.append(prefix + ":")
        _mapping(value, indent, lines, seen)
    else:
        lines.append(prefix + ": {}")


def _merged(prefix: str, node: Merged, indent: int, lines: list[str], seen: set[int]) -> None:
    """The lines of the entry ``prefix`` whose value is ``node``, its keys at column ``indent``."""
    own, shared = node
    if id(own) in seen:  # as a dict reached twice
        raise _Unsupported
    seen.add(id(own))
    if not own and not shared.tree:
        lines.append(prefix + ": {}")
        return
    lines.append(prefix + ":")
    if not shared.tree:
        _mapping(own, indent, lines, seen)
    elif not own:
        lines.append(shared.text(indent))
    else:
        _own_and_shared(own, shared, indent, lines, seen)


def _own_and_shared(own: dict[str, Any], shared: Block, indent: int, lines: list[str], seen: set[int]) -> None:
    """The lines of a Merged holding both: the Block's as one text when ``own``'s keys all sort before its keys
    or all after them, else entry by entry. A port's description (one str, before link and qos) is written
    here as it would be in _mapping, without the call."""
    try:
        first, last = shared.bounds()
        before = max(own) < first
        after = not before and min(own) > last
    except TypeError:  # keys of mixed types
        raise _Unsupported from None
    if not before and not after:
        _mapping({**own, **shared.entries}, indent, lines, seen)
        return
    if after:
        lines.append(shared.text(indent))
    key, value = next(iter(own.items())) if len(own) == 1 else (None, None)
    if type(key) is str and type(value) is str and indent <= _MAX_INDENT:
        lines.append(f"{_MARGINS[indent]}{_written.get(key) or _str_scalar(key)}: "
                     f"{_written.get(value) or _str_scalar(value)}")
    else:
        _mapping(own, indent, lines, seen)
    if before:
        lines.append(shared.text(indent))


_MARGINS = [" " * indent for indent in range(_MAX_INDENT + 1)]
# Each str as written, for the words that repeat on every device (interface, link, mtu, swp1...). A dict, not an
# lru_cache: a hit is one lookup, not a call. Emptied when full: port descriptions are new on every switch.
_written: dict[str, str] = {}
_WRITTEN_MAX = 8192


def _read_as_str(text: str) -> bool:
    """Whether PyYAML reads ``text`` (non-empty) back as a string. Resolver.resolve tries only the patterns
    filed under the text's first character, and those under None (any): with none there (a port description
    starts with a letter no bool, null or number starts with) and no path resolvers, it is a string. That
    saves the call, half the time of writing a new scalar."""
    implicit = _RESOLVER.yaml_implicit_resolvers  # first character -> [(tag, pattern)]; looked up as resolve does
    if text[0] not in implicit and None not in implicit and not _RESOLVER.yaml_path_resolvers:
        return True
    return _resolve(yaml.ScalarNode, text, (True, False)) == _STR


def _str_scalar(text: str) -> str:
    """``text`` (a str) as PyYAML writes it in block context, remembered in ``_written``."""
    if len(text) > _MAX_SCALAR or _PLAIN_SAFE.fullmatch(text) is None:
        raise _Unsupported
    written = text if _read_as_str(text) else f"'{text}'"  # _PLAIN_SAFE has no quote to double
    if len(_written) >= _WRITTEN_MAX:
        _written.clear()
    _written[text] = written
    return written
