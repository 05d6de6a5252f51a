"""Sorted, indented JSON text exactly as ``json.dumps(data, indent=N, sort_keys=True)`` writes it, made by orjson.

CPython's json falls back to its pure-Python encoder whenever ``indent`` is set, which made these dumps a third
of render time. orjson writes the same bytes for the data fabricgen dumps (dicts with str keys, lists, str, int,
bool, None), with two exceptions that ``dumps`` detects and hands to json instead:

* text outside printable ASCII: json (``ensure_ascii``) escapes every other character, DEL included, as
  ``\\uXXXX``; orjson writes it raw. Newlines are fine: orjson escapes them inside strings, so every raw
  newline is the indentation's.
* data orjson refuses: non-str keys (json converts them, sorting by the original key), ints beyond 64 bits,
  and types json would refuse anyway (dataclasses, datetimes: passed through so orjson refuses them too).

Floats are not in that list because the data has none (tests/test_jsontext.py checks every model field):
orjson spells some differently (``1e16`` vs ``1e+16``, NaN as ``null``).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

import orjson
import pydantic_core
from pydantic import BaseModel

from fabricgen.platforms.common.memo import by_identity

_OPTIONS = (orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS | orjson.OPT_PASSTHROUGH_DATACLASS
            | orjson.OPT_PASSTHROUGH_DATETIME)


def dumps(data: Any, indent: int = 2) -> str:
    """``json.dumps(data, indent=indent, sort_keys=True)`` (ensure_ascii on, json's default), byte for byte.
    ``indent`` is 2 or 4: orjson indents by 2, so 4 doubles the leading spaces of every line."""
    if indent not in (2, 4):
        raise ValueError(f"indent {indent}: only 2 and 4 are supported")
    raw = _orjson(data)
    if raw is None:
        return json.dumps(data, indent=indent, sort_keys=True)
    return (raw if indent == 2 else _double_indent(data, raw)).decode("ascii")


def model_dumps(model: BaseModel, shared: Collection[str] = ()) -> str:
    """``dumps(model.model_dump(mode="json", exclude_none=True))``, byte for byte. The fields named in ``shared``
    hold objects many models share (every device holds the fabric's one QosModel, every NIC of a fabric the same
    DSCP map and ETS lists): each such object is dumped once, and its text reused (an orjson Fragment, indented
    for its depth) in every model holding it. A name is a path of fields: "qos", or "host.nics.*.dscp2prio"
    ("*": each item of a list)."""
    tree = _path_tree(tuple(shared))
    plain = model.model_dump(mode="json", exclude_none=True, exclude=tree.exclude)
    if not _graft(model, plain, tree.below, 2):
        return dumps(model.model_dump(mode="json", exclude_none=True))
    raw = _orjson(plain)
    if raw is None:
        return json.dumps(model.model_dump(mode="json", exclude_none=True), indent=2, sort_keys=True)
    return raw.decode("ascii")


@dataclass(frozen=True)
class _PathTree:
    below: dict[str, _PathTree | None]
    """each step's paths below it; None where the step is a shared field itself"""
    exclude: dict[str, Any]
    """the same as pydantic's nested ``exclude`` ("*" is its "__all__")"""


@functools.cache
def _path_tree(names: tuple[str, ...]) -> _PathTree:
    below: dict[str, Any] = {}
    for name in names:
        node = below
        *steps, field = name.split(".")
        if field == "*" or "" in (*steps, field):
            raise ValueError(f"shared field {name!r}: a path of field names, each '*' followed by a field")
        for step in steps:
            node = node.setdefault(step, {})
        node[field] = None
    return _as_tree(below)


def _as_tree(below: dict[str, Any]) -> _PathTree:
    trees = {step: None if paths is None else _as_tree(paths) for step, paths in below.items()}
    exclude = {"__all__" if step == "*" else step: True if tree is None else tree.exclude
               for step, tree in trees.items()}
    return _PathTree(trees, exclude)


def _graft(model: Any, plain: Any, below: dict[str, _PathTree | None], shift: int) -> bool:
    """Put the shared text of every field ``below`` names (the fields of ``model``, or of each item where the
    step is "*") into ``plain``, the dump of ``model`` that left them out; a field's key is ``shift`` spaces in.
    False when orjson refuses one of their values."""
    for step, tree in below.items():
        if step == "*":
            assert tree is not None  # "*" is never a path's last step: _path_tree makes it so
            if not all(_graft(item, plain_item, tree.below, shift + 2)
                       for item, plain_item in zip(model, plain, strict=True)):
                return False
            continue
        value = getattr(model, step)
        if value is None:  # exclude_none leaves it out of the whole dump too
            continue
        if tree is not None:
            if not _graft(value, plain[step], tree.below, shift + 2):
                return False
            continue
        fragment = _fragment(value, shift)
        if fragment is None:
            return False
        plain[step] = fragment
    return True


@by_identity
def _fragment(value: Any, shift: int) -> orjson.Fragment | None:
    """``value`` as orjson writes it as a field whose key is ``shift`` spaces in (its inner lines that much
    deeper); None when orjson refuses it. The caller's _orjson checks the whole text, this part included, for
    what json escapes."""
    if isinstance(value, BaseModel):
        plain = value.model_dump(mode="json", exclude_none=True)
    else:  # a field's plain value as model_dump(mode="json", exclude_none=True) converts it (dict[int, int] keys
        # become str; a list of models leaves out their None fields)
        plain = pydantic_core.to_jsonable_python(value, by_alias=False, exclude_none=True)
    try:
        raw = orjson.dumps(plain, option=_OPTIONS)
    except orjson.JSONEncodeError:
        return None
    return orjson.Fragment(raw.replace(b"\n", b"\n" + b" " * shift))


def _orjson(data: Any) -> bytes | None:
    """orjson's indent-2 sorted text of ``data``, or None where json would write something else."""
    try:
        raw = orjson.dumps(data, option=_OPTIONS)
    except orjson.JSONEncodeError:
        return None
    # What json's ensure_ascii escapes and orjson does not: non-ASCII and DEL. Control characters orjson escapes
    # itself (as json does, spelled alike), so the only raw one left is the indentation's newline.
    if not raw.isascii() or b"\x7f" in raw:
        return None
    return raw


def _double_indent(data: Any, raw: bytes) -> bytes:
    """``raw`` (orjson's indent-2 text of ``data``) with every line's leading spaces doubled (2k -> 4k).

    Outside strings the text has single spaces only (after ``:``) besides the indentation, so when no string
    holds two spaces in a row -- the compact text, spaces only inside strings, says so -- every double space is
    indentation and one replace doubles it all. Otherwise: one depth per pass (_double_by_depth). The compact
    text is not sorted: the strings are the same in any order, and sorting was 40 % of that dump."""
    if b"  " not in orjson.dumps(data, option=_OPTIONS & ~(orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS)):
        return raw.replace(b"  ", b"    ")
    return _double_by_depth(raw)


def _double_by_depth(raw: bytes) -> bytes:
    """Every line's leading spaces doubled, whatever the strings hold. Before pass ``d`` a line of depth k >= d
    starts with 2k + 2(d - 1) >= 4d - 2 spaces and one of depth k < d with 4k <= 4d - 4, so the pass adds 2
    spaces to exactly the lines of depth >= d. Only indentation follows a raw newline: orjson escapes newlines
    inside strings."""
    depth = 1
    while True:
        deeper = raw.replace(b"\n" + b" " * (4 * depth - 2), b"\n" + b" " * (4 * depth))
        if len(deeper) == len(raw):
            return raw
        raw, depth = deeper, depth + 1
