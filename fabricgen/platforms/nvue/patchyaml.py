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

What is mirrored is stock SafeDumper. Libraries may change it for the whole process (junos-eznc, which the NAPALM
plugins load, turns its aliases off): when its representers or resolvers are not PyYAML's own, PyYAML dumps.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache
from typing import Any

import yaml
from yaml.representer import SafeRepresenter

_PLAIN_SAFE = re.compile(r"[A-Za-z0-9_/(](?:[A-Za-z0-9_/()+=@.,\-]|:(?! |\Z)| (?!\Z))*")
_MAX_SCALAR = 120
_MAX_INDENT = 700  # 700 + 120 + len(": ") + 120 < 1000
_STR = "tag:yaml.org,2002:str"
# The tag PyYAML reads a plain scalar as: SafeDumper's resolver, while it has no resolvers of its own (_stock).
_resolve: Callable[[type[yaml.Node], str, tuple[bool, bool]], str] = yaml.resolver.Resolver().resolve
_STOCK_REPRESENTERS = {str: SafeRepresenter.represent_str, int: SafeRepresenter.represent_int,
                       dict: SafeRepresenter.represent_dict, list: SafeRepresenter.represent_list}


class _Unsupported(Exception):
    """A value this module does not prove PyYAML's spelling of: the caller dumps with PyYAML instead."""


def dump(tree: dict[str, Any]) -> str:
    """``yaml.dump([{"set": tree}], ...)`` as the module docstring says, byte for byte."""
    try:
        if not _stock():
            raise _Unsupported
        lines = ["- set:"]
        _mapping(tree, 4, lines, {id(tree)})
    except _Unsupported:
        return yaml.dump([{"set": tree}], Dumper=yaml.SafeDumper, sort_keys=True, default_flow_style=False,
                         allow_unicode=False, width=1000)
    if len(lines) == 1:
        return "- set: {}\n"
    lines.append("")
    return "\n".join(lines)


def _stock() -> bool:
    """Whether SafeDumper still represents and resolves what this module writes as stock PyYAML does."""
    representers = yaml.SafeDumper.yaml_representers
    return ("yaml_implicit_resolvers" not in yaml.SafeDumper.__dict__
            and all(representers.get(kind) is function for kind, function in _STOCK_REPRESENTERS.items()))


def _mapping(node: dict[str, Any], indent: int, lines: list[str], seen: set[int]) -> None:
    """The lines of non-empty ``node``, its keys at column ``indent``."""
    if indent > _MAX_INDENT:
        raise _Unsupported
    margin = " " * indent
    try:
        items = sorted(node.items())
    except TypeError:  # keys of mixed types: PyYAML then keeps the dict's order
        raise _Unsupported from None
    for key, value in items:
        prefix = margin + _scalar(key)
        if type(value) is dict:
            if id(value) in seen:
                raise _Unsupported
            seen.add(id(value))
            if value:
                lines.append(prefix + ":")
                _mapping(value, indent + 2, lines, seen)
            else:
                lines.append(prefix + ": {}")
        else:
            lines.append(prefix + ": " + _leaf(value))


def _leaf(value: Any) -> str:
    if type(value) is int:  # exactly int: a bool is written true/false
        return str(value)
    if type(value) is str:
        return _str_scalar(value)
    raise _Unsupported


def _scalar(text: str) -> str:
    if type(text) is not str:  # before the cache, which takes 1 and True for the same key
        raise _Unsupported  # a key PyYAML would sort or spell differently
    return _str_scalar(text)


@lru_cache(maxsize=8192)  # path words (interface, link, mtu, swp1...) repeat on every device
def _str_scalar(text: str) -> str:
    if len(text) > _MAX_SCALAR or _PLAIN_SAFE.fullmatch(text) is None:
        raise _Unsupported
    if _resolve(yaml.ScalarNode, text, (True, False)) == _STR:
        return text
    return f"'{text}'"  # _PLAIN_SAFE has no quote to double
