"""Validate a rendered SONiC ``config_db.json`` against SONiC's own YANG models, as a switch would.

A real switch runs every ``config reload <file>`` and every GCU patch through sonic-yang-mgmt: it
translates config_db form (``{"TABLE": {"k1|k2": {"field": "string"}}}``) into YANG data and lets
libyang validate it; anything that fails is refused.  This module repeats that translation, driven
only by the loaded schema (no hand-kept table list), and reports *every* problem it can find:

1. translation: tables without a model, unknown fields, keys with the wrong number of ``|`` parts;
2. per-value type checks (range, pattern, enum, boolean spelling) with ``lyd_value_validate``, which
   also tells which type a union value resolves to, so it gets the right RFC 7951 JSON encoding;
3. full data validation (must, leafref, mandatory, unique) by parsing the whole tree.  libyang 2.1
   stops at the first semantic error, so the offending leaf/entry is pruned and the tree re-parsed
   until it is clean; leafref errors that only exist because their target was pruned are dropped.

Target: libyang 2.1.x (Debian ``libyang2-dev``) with libyang-python 2.7.1.  SONiC itself now runs
libyang 3 with ``json_string_datatypes``; step 2's type-driven encoding gives the same verdicts here.
Which release's models a config is checked against, and where they come from: fabricgen/validate/models.py.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal

__all__ = ["SonicYangValidator", "YangIssue", "YangUnavailable", "validate_file"]

_INSTALL_HINT: Final = (
    "SONiC YANG validation needs libyang: pip install 'fabricgen[yang]' (Python binding libyang==2.7.1) "
    "and apt-get install libyang2-dev (the libyang 2.1.x C library the binding builds against and loads)"
)

# Leaf-lists that CONFIG_DB stores as one delimited string instead of a JSON list.  These cannot be
# derived from the models; sonic-yang-mgmt (BI src/sonic-yang-mgmt/sonic_yang_ext.py) splits exactly
# these, so any other leaf-list written as a string is refused on the switch and here.
_STRING_LEAF_LISTS: Final[Mapping[tuple[str, str], str]] = {
    ("MIRROR_SESSION", "src_ip"): ",",
    ("NTP", "src_intf"): ";",
    ("BGP_ALLOWED_PREFIXES", "prefixes_v4"): ",",
    ("BGP_ALLOWED_PREFIXES", "prefixes_v6"): ",",
    ("BUFFER_PORT_EGRESS_PROFILE_LIST", "profile_list"): ",",
    ("BUFFER_PORT_INGRESS_PROFILE_LIST", "profile_list"): ",",
    ("PORT", "adv_speeds"): ",",
    ("PORT", "adv_interface_types"): ",",
}

# Each semantic round costs one full parse; a broken render can produce hundreds of identical
# problems, and the first couple of hundred are plenty to act on.
_MAX_SEMANTIC_ROUNDS: Final = 200


# ------------------------------------------------------------------------------------------------
# Public types


@dataclass(frozen=True)
class YangIssue:
    """One reason SONiC would refuse the config."""

    path: str  # "PORT/Ethernet0/mtu", "QUEUE/Ethernet0|3", "FOO_TABLE", or libyang's own data path
    message: str  # libyang's message (or ours for translation problems), human readable

    def __str__(self) -> str:
        return f"{self.path}: {self.message}" if self.path else self.message


class YangUnavailable(RuntimeError):
    """libyang (the Python binding or the C library under it) cannot be imported."""


# ------------------------------------------------------------------------------------------------
# libyang boundary: the only code that touches libyang objects (libyang-python's cffi module has no
# type information, so everything crossing this line is converted to plain Python values).

_LOCATION = re.compile(r'(?P<kind>[Ss]chema|[Dd]ata) location "(?P<path>(?:[^"\[]|\[[^\]]*\])*)"')


@dataclass(frozen=True)
class _LyError:
    message: str
    data_path: str | None  # where in the data tree (most errors)
    schema_path: str | None  # only this for errors about absent nodes (mandatory, min-elements)


@dataclass(frozen=True)
class _ValueCheck:
    error: str | None  # libyang's message when the value does not fit the leaf's type
    json_kind: Literal["int", "bool", "str"]  # how RFC 7951 JSON must encode the value


def _split_location(message: str, location: str) -> _LyError:
    paths = {m["kind"].lower(): m["path"] for m in _LOCATION.finditer(location)}
    return _LyError(message, paths.get("data"), paths.get("schema"))


class _Libyang:
    """One libyang context with every model of a directory loaded."""

    def __init__(self, models_dir: Path) -> None:
        try:
            import libyang
            from _libyang import ffi, lib  # type: ignore[import-not-found,import-untyped,unused-ignore]
        except (ImportError, OSError) as exc:  # OSError: binding present, libyang.so.2 missing
            raise YangUnavailable(f"{_INSTALL_HINT} ({exc})") from exc
        self._ffi: Any = ffi
        self._lib: Any = lib
        int_names = ("INT8", "INT16", "INT32", "UINT8", "UINT16", "UINT32")  # 64-bit ones are JSON strings
        self._int_types = frozenset(getattr(lib, f"LY_TYPE_{name}") for name in int_names)
        # libyang only records *where* an error is when the "path" flag of ly_set_log_clb is on;
        # libyang-python turns it off at import.  Process-wide, harmless: errors just gain a path.
        lib.ly_set_log_clb(ffi.NULL, True)
        self.ctx: Any = libyang.Context(str(models_dir))
        self.modules: list[Any] = []
        for yang_file in sorted(models_dir.glob("*.yang")):
            try:
                self.modules.append(self.ctx.load_module(yang_file.stem.split("@")[0]))
            except libyang.LibyangError as exc:
                raise RuntimeError(f"cannot load SONiC YANG model {yang_file}: {exc}") from exc

    def check_value(self, snode: Any, value: str) -> _ValueCheck:
        """Check ``value`` against the leaf's type; leafref existence is left to full validation."""
        ffi, lib = self._ffi, self._lib
        lib.ly_err_clean(self.ctx.cdata, ffi.NULL)  # only this call's errors below
        raw = value.encode()
        realtype = ffi.new("struct lysc_type **")
        ret = lib.lyd_value_validate(self.ctx.cdata, snode.cdata, raw, len(raw), ffi.NULL, realtype, ffi.NULL)
        errors = self._take_errors()
        if ret not in (lib.LY_SUCCESS, lib.LY_EINCOMPLETE):  # EINCOMPLETE: needs the data tree (leafref)
            return _ValueCheck(errors[0].message if errors else f'invalid value "{value}"', "str")
        basetype = realtype[0].basetype if realtype[0] != ffi.NULL else None
        if basetype in self._int_types:
            return _ValueCheck(None, "int")
        return _ValueCheck(None, "bool" if basetype == lib.LY_TYPE_BOOL else "str")

    def validation_errors(self, yang_json: str) -> list[_LyError]:
        """Parse RFC 7951 JSON strictly and run full validation; [] means valid."""
        ffi, lib = self._ffi, self._lib
        lib.ly_err_clean(self.ctx.cdata, ffi.NULL)  # only this parse's errors below
        raw = yang_json.encode()  # must outlive the ly_in reading it
        data_in = ffi.new("struct ly_in **")
        if lib.ly_in_new_memory(raw, data_in) != lib.LY_SUCCESS:
            return [_LyError("libyang could not read the translated data", None, None)]
        tree = ffi.new("struct lyd_node **")
        parse_opts = lib.LYD_PARSE_STRICT | lib.LYD_PARSE_NO_STATE  # what sonic-yang-mgmt asks for
        validate_opts = lib.LYD_VALIDATE_NO_STATE
        try:
            ret = lib.lyd_parse_data(
                self.ctx.cdata, ffi.NULL, data_in[0], lib.LYD_JSON, parse_opts, validate_opts, tree
            )
        finally:
            lib.ly_in_free(data_in[0], 0)
        errors = self._take_errors()
        lib.lyd_free_all(tree[0])
        if ret == lib.LY_SUCCESS:
            return []
        return errors or [_LyError("libyang rejected the data without saying why", None, None)]

    def leafref_targets(self, snode: Any) -> list[str]:
        """Paths a leaf's leafrefs point at (its own type, or any union member)."""
        return _leafref_paths(snode.type())

    def range_of(self, snode: Any) -> str:
        """The range written on the leaf's own type ("" when it comes from a typedef)."""
        return " | ".join(str(part) for part in snode.type().all_ranges())

    def _take_errors(self) -> list[_LyError]:
        ffi, lib = self._ffi, self._lib
        errors: list[_LyError] = []
        err = lib.ly_err_first(self.ctx.cdata)
        while err:
            message = ffi.string(err.msg).decode() if err.msg else "libyang error"
            location = ffi.string(err.path).decode() if err.path else ""
            errors.append(_split_location(message, location))
            err = err.next
        lib.ly_err_clean(self.ctx.cdata, ffi.NULL)
        return errors


def _leafref_paths(ly_type: Any) -> list[str]:
    if ly_type.basename() == "leafref":
        return [str(ly_type.leafref_path())]
    if ly_type.basename() == "union":
        return [path for member in ly_type.union_types() for path in _leafref_paths(member)]
    return []


# ------------------------------------------------------------------------------------------------
# Schema shapes, read once by introspection.  SONiC convention: module sonic-x has one top container
# sonic-x; each child container is a config_db table holding lists (keyed entries) and/or containers
# (fixed-name entries such as DEVICE_METADATA|localhost).


@dataclass(frozen=True)
class _Leaf:
    name: str
    snode: Any  # libyang SLeaf / SLeafList, only handed back to _Libyang
    is_leaf_list: bool


@dataclass(frozen=True)
class _MapInner:
    """Type-1 map (DSCP_TO_TC_MAP, CABLE_LENGTH, ...): each config_db field/value pair is one entry."""

    name: str
    key: _Leaf
    value: _Leaf


@dataclass(frozen=True)
class _Node:
    """A YANG list (``keys`` non-empty) or container directly under a table container."""

    name: str
    keys: tuple[_Leaf, ...]
    leaves: Mapping[str, _Leaf]  # non-key leaves and leaf-lists, choice/case flattened as in JSON
    inner_map: _MapInner | None


@dataclass(frozen=True)
class _Table:
    module: str
    name: str
    lists: Mapping[int, _Node]  # by key count: the number of "|" parts a config_db key must have
    containers: Mapping[str, _Node]


def _children(snode: Any, *keywords: str) -> list[Any]:
    # children() walks through choice/case like lys_getnext, which is also how JSON flattens them.
    return [child for child in snode.children() if child.keyword() in keywords]


def _leaf(snode: Any) -> _Leaf:
    return _Leaf(str(snode.name()), snode, snode.keyword() == "leaf-list")


def _key_leaves(list_snode: Any) -> list[_Leaf]:
    return [_leaf(key) for key in list_snode.keys()]  # noqa: SIM118 - libyang SList.keys(), not a dict


def _read_inner_map(snode: Any, leaves: Mapping[str, _Leaf]) -> _MapInner | None:
    inner = _children(snode, "list")
    if leaves or len(inner) != 1:
        return None
    keys = _key_leaves(inner[0])
    values = [_leaf(c) for c in _children(inner[0], "leaf") if not c.is_key()]
    if len(keys) != 1 or len(values) != 1:
        return None
    return _MapInner(str(inner[0].name()), keys[0], values[0])


def _read_node(snode: Any) -> _Node:
    keys = tuple(_key_leaves(snode)) if snode.keyword() == "list" else ()
    key_names = {k.name for k in keys}
    leaves = {
        leaf.name: leaf
        for leaf in map(_leaf, _children(snode, "leaf", "leaf-list"))
        if leaf.name not in key_names
    }
    return _Node(str(snode.name()), keys, leaves, _read_inner_map(snode, leaves))


def _read_table(module: str, snode: Any) -> _Table:
    lists = {len(node.keys): node for node in map(_read_node, _children(snode, "list"))}
    containers = {node.name: node for node in map(_read_node, _children(snode, "container"))}
    return _Table(module, str(snode.name()), lists, containers)


def _read_tables(modules: Iterable[Any]) -> dict[str, _Table]:
    tables: dict[str, _Table] = {}
    for module in modules:
        name = str(module.name())
        for top in _children(module, "container"):
            if top.name() != name:  # helper/ietf modules: not config_db tables
                continue
            for table in _children(top, "container"):
                tables[str(table.name())] = _read_table(name, table)
    return tables


# ------------------------------------------------------------------------------------------------
# Translated document: config_db entries in YANG form, kept per entry so problems can be pruned.

_Ident = tuple[str, str, tuple[str, ...]]  # (table, YANG list/container, key values as libyang prints)


@dataclass
class _Entry:
    table: _Table
    node: _Node
    key: str  # config_db key as written
    from_baseline: bool
    key_values: dict[str, Any] = field(default_factory=dict)
    fields: dict[str, Any] = field(default_factory=dict)
    inner: dict[str, dict[str, Any]] = field(default_factory=dict)  # Type-1 map: config field -> entry

    @property
    def ident(self) -> _Ident:
        return (self.table.name, self.node.name, tuple(str(v) for v in self.key_values.values()))

    def path(self, leaf: str | None = None) -> str:
        return f"{self.table.name}/{self.key}" + (f"/{leaf}" if leaf is not None else "")

    def to_yang(self) -> dict[str, Any]:
        data = {**self.key_values, **self.fields}
        if self.node.inner_map and self.inner:
            data[self.node.inner_map.name] = list(self.inner.values())
        return data


@dataclass(frozen=True)
class _Spot:
    """Where a libyang data path lands in the document."""

    entry: _Entry
    leaf: str | None = None  # a field of the entry, or a leaf of the Type-1 map pair
    inner_key: str | None = None  # a Type-1 map pair

    @property
    def path(self) -> str:
        return self.entry.path(self.inner_key if self.inner_key is not None else self.leaf)


@dataclass(frozen=True)
class _Segment:
    name: str  # without module prefix
    values: tuple[str, ...]  # predicate values, in key order


_PREDICATE = re.compile(r"""\[[^=\]]+=(?P<q>['"])(?P<v>.*?)(?P=q)\]""")


def _path_segments(path: str) -> list[_Segment]:
    """Split a libyang path on "/" outside predicates (key values may contain "/", e.g. prefixes)."""
    parts: list[str] = []
    current: list[str] = []
    quote, depth = "", 0
    for char in path:
        if quote:
            quote = "" if char == quote else quote
        elif depth and char in "'\"":
            quote = char
        elif char in "[]":
            depth += 1 if char == "[" else -1
        elif char == "/" and not depth:
            parts.append("".join(current))
            current = []
            continue
        current.append(char)
    parts.append("".join(current))
    return [_segment(part) for part in parts if part]


def _segment(part: str) -> _Segment:
    name = part.split("[", 1)[0].rsplit(":", 1)[-1]
    return _Segment(name, tuple(m["v"] for m in _PREDICATE.finditer(part)))


class _Doc:
    def __init__(self) -> None:
        self.entries: dict[_Ident, _Entry] = {}
        # What pruning removed, so follow-on errors caused only by the removal are not reported.
        self.removed_keys: set[tuple[str, str, str, str]] = set()  # (table, list, key leaf, value)
        self.removed_fields: set[tuple[_Ident, str]] = set()

    def add(self, entry: _Entry) -> None:
        self.entries[entry.ident] = entry

    def to_yang_json(self) -> str:
        modules: dict[str, dict[str, dict[str, Any]]] = {}
        for entry in self.entries.values():
            module = entry.table.module
            nodes = modules.setdefault(f"{module}:{module}", {}).setdefault(entry.table.name, {})
            if entry.node.keys:
                nodes.setdefault(entry.node.name, []).append(entry.to_yang())
            else:
                nodes[entry.node.name] = entry.to_yang()
        return json.dumps(modules)

    def locate(self, data_path: str) -> _Spot | None:
        segments = _path_segments(data_path)
        if len(segments) < 3:
            return None
        entry = self.entries.get((segments[1].name, segments[2].name, segments[2].values))
        if entry is None or len(segments) == 3:
            return None if entry is None else _Spot(entry)
        inner = entry.node.inner_map
        if inner is not None and segments[3].name == inner.name and segments[3].values:
            inner_leaf = segments[4].name if len(segments) > 4 else None
            return _Spot(entry, leaf=inner_leaf, inner_key=segments[3].values[0])
        return _Spot(entry, leaf=segments[3].name)

    def leaf_at(self, spot: _Spot) -> tuple[_Leaf, Any] | None:
        """Schema leaf and current JSON value at a spot, when the spot is a leaf the config set."""
        entry, inner = spot.entry, spot.entry.node.inner_map
        if inner is not None and spot.inner_key is not None:
            values = entry.inner.get(spot.inner_key, {})
            leaves = {inner.key.name: inner.key, inner.value.name: inner.value}
        else:
            values = {**entry.key_values, **entry.fields}
            leaves = {**{k.name: k for k in entry.node.keys}, **entry.node.leaves}
        leaf = leaves.get(spot.leaf or "")
        return (leaf, values[leaf.name]) if leaf is not None and leaf.name in values else None

    def lacking(self, schema_path: str) -> list[_Spot]:
        """Entries of the list/container named by a schema path that do not have its leaf."""
        names = [s.name for s in _path_segments(schema_path)]
        if len(names) != 4:
            return []
        table, node, leaf = names[1:]
        entries = [e for e in self.entries.values() if (e.table.name, e.node.name) == (table, node)]
        return [_Spot(e, leaf=leaf) for e in entries if leaf not in e.fields and leaf not in e.key_values]

    def prune(self, spot: _Spot) -> None:
        entry = spot.entry
        if spot.inner_key is not None and entry.inner.pop(spot.inner_key, None) is not None:
            return
        if spot.leaf is not None and spot.leaf in entry.fields:
            del entry.fields[spot.leaf]
            self.removed_fields.add((entry.ident, spot.leaf))
            return
        # The entry itself, a key leaf, or an implicit (default) leaf: only dropping the entry helps.
        self.remove_entry(entry)

    def remove_entry(self, entry: _Entry) -> None:
        if self.entries.pop(entry.ident, None) is None:
            return
        for leaf, value in entry.key_values.items():
            self.removed_keys.add((entry.table.name, entry.node.name, leaf, str(value)))


# ------------------------------------------------------------------------------------------------
# config_db -> YANG translation (collects every problem, never stops at the first)


def _config_text(raw: Any) -> str | None:
    """The string CONFIG_DB would hold: ConfigDBConnector writes str(value), so true -> "True"."""
    if isinstance(raw, str):
        return raw
    if isinstance(raw, bool | int | float):
        return str(raw)
    return None


class _Translator:
    def __init__(self, tables: Mapping[str, _Table], ly: _Libyang) -> None:
        self._tables = tables
        self._ly = ly
        self.doc = _Doc()
        self.issues: list[YangIssue] = []

    def _issue(self, path: str, message: str, from_baseline: bool = False) -> None:
        suffix = " [entry comes from the baseline]" if from_baseline else ""
        self.issues.append(YangIssue(path, message + suffix))

    def add_table(self, name: str, rows: Any, baseline_keys: frozenset[tuple[str, str]]) -> None:
        table = self._tables.get(name)
        if table is None:
            self._issue(name, f"table {name} has no YANG model; SONiC's config reload refuses it")
        elif not isinstance(rows, Mapping):
            self._issue(name, "a table must be a JSON object of entries")
        elif not rows:
            self._issue(name, "empty table: CONFIG_DB cannot hold one and GCU refuses it; omit the table")
        else:
            for key, row in rows.items():
                self._add_row(table, str(key), row, (name, str(key)) in baseline_keys)

    def _add_row(self, table: _Table, key: str, row: Any, from_baseline: bool) -> None:
        path = f"{table.name}/{key}"
        if not isinstance(row, Mapping):
            self._issue(path, "an entry must be a JSON object of field/value strings", from_baseline)
            return
        node = self._node_for(table, key, from_baseline)
        if node is None:
            return
        entry = _Entry(table, node, key, from_baseline)
        parts = key.split("|") if node.keys else []
        if not self._fill_keys(entry, parts):
            return
        if node.inner_map is not None:
            self._fill_map(entry, node.inner_map, row)
        else:
            self._fill_fields(entry, row, dict(zip((k.name for k in node.keys), parts, strict=True)))
        self.doc.add(entry)

    def _node_for(self, table: _Table, key: str, from_baseline: bool) -> _Node | None:
        if key in table.containers:
            return table.containers[key]
        node = table.lists.get(len(key.split("|")))
        if node is None:
            self._issue(f"{table.name}/{key}", _shape_hint(table, key), from_baseline)
        return node

    def _fill_keys(self, entry: _Entry, parts: list[str]) -> bool:
        for leaf, part in zip(entry.node.keys, parts, strict=True):
            value, error = self._encode(leaf, part)
            if error is not None:
                self._issue(entry.path(), f"key {leaf.name} {part!r}: {error}", entry.from_baseline)
                return False
            entry.key_values[leaf.name] = value
        return True

    def _fill_fields(self, entry: _Entry, row: Mapping[str, Any], key_parts: Mapping[str, str]) -> None:
        for name, raw in row.items():
            leaf = entry.node.leaves.get(name)
            if name in key_parts:
                # A field repeating a key leaf is harmless when it agrees with the key.
                if _config_text(raw) != key_parts[name]:
                    message = f"field repeats key leaf {name} with a different value"
                    self._issue(entry.path(name), message, entry.from_baseline)
            elif leaf is None:
                message = f"unknown field {name!r}: YANG {entry.node.name} has no such leaf (strict)"
                self._issue(entry.path(name), message, entry.from_baseline)
            else:
                value = self._leaf_value(entry, leaf, raw)
                if value is not None:
                    entry.fields[name] = value

    def _fill_map(self, entry: _Entry, inner: _MapInner, row: Mapping[str, Any]) -> None:
        for map_key, raw in row.items():
            pair = self._map_pair(inner, str(map_key), raw)
            if isinstance(pair, str):
                self._issue(entry.path(str(map_key)), pair, entry.from_baseline)
            else:
                entry.inner[str(map_key)] = pair

    def _map_pair(self, inner: _MapInner, map_key: str, raw: Any) -> dict[str, Any] | str:
        """The inner list entry for one map field/value pair, or why there is none."""
        key_value, error = self._encode(inner.key, map_key)
        if error is not None:
            return f"{inner.key.name} {map_key!r}: {error}"
        text = _config_text(raw)
        if text is None:
            return f"{inner.value.name}: a map value must be a single string"
        value, error = self._encode(inner.value, text)
        if error is not None:
            return f"{inner.value.name}: {error}"
        return {inner.key.name: key_value, inner.value.name: value}

    def _leaf_value(self, entry: _Entry, leaf: _Leaf, raw: Any) -> Any:
        """JSON value for a leaf or leaf-list, or None after recording why it cannot be one."""
        texts = self._leaf_list_texts(entry, leaf, raw) if leaf.is_leaf_list else [_config_text(raw)]
        if texts is None:
            return None
        values = []
        for text in texts:
            if text is None:
                self._issue(entry.path(leaf.name), "expected a string value", entry.from_baseline)
                return None
            value, error = self._encode(leaf, text)
            if error is not None:
                self._issue(entry.path(leaf.name), error, entry.from_baseline)
                self.doc.removed_fields.add((entry.ident, leaf.name))  # a "mandatory" error would repeat it
                return None
            values.append(value)
        if not leaf.is_leaf_list:
            return values[0]
        return values or None  # an empty leaf-list is simply absent

    def _leaf_list_texts(self, entry: _Entry, leaf: _Leaf, raw: Any) -> list[str | None] | None:
        if isinstance(raw, list | tuple):
            return [_config_text(item) for item in raw]
        separator = _STRING_LEAF_LISTS.get((entry.table.name, leaf.name))
        if isinstance(raw, str) and separator is not None:
            return [item.strip() for item in raw.split(separator) if item.strip()]
        message = f"{leaf.name} is a YANG leaf-list: write it as a JSON list of strings"
        self._issue(entry.path(leaf.name), message, entry.from_baseline)
        return None

    def _encode(self, leaf: _Leaf, text: str) -> tuple[Any, str | None]:
        """RFC 7951 JSON for a config_db string, by the type libyang resolves it to."""
        check = self._ly.check_value(leaf.snode, text)
        if check.error is not None:
            allowed = self._ly.range_of(leaf.snode) if "range" in check.error else ""
            return None, check.error + (f" (allowed: {allowed})" if allowed else "")
        if check.json_kind == "int":
            return _as_int(text), None
        if check.json_kind == "bool":
            return text == "true", None
        return text, None  # strings, enums, 64-bit numbers, decimal64, unions of those


def _as_int(text: str) -> int | str:
    try:
        return int(text, 10)
    except ValueError:  # libyang accepted a spelling Python does not: let the full parse judge it
        return text


def _shape_hint(table: _Table, key: str) -> str:
    shapes = [f"{n.name} keyed {'|'.join(k.name for k in n.keys)}" for n in table.lists.values()]
    shapes += [f"container {name}" for name in table.containers]
    parts = len(key.split("|"))
    return f"no YANG list or container of {table.name} matches a key with {parts} part(s); model has: " + (
        "; ".join(shapes) or "nothing"
    )


# ------------------------------------------------------------------------------------------------
# Full validation loop


def _leafref_targets(ly: _Libyang, spot: _Spot, leaf: _Leaf) -> list[tuple[str, str, str]]:
    """(table, list, key leaf) each leafref of ``leaf`` may point at."""
    targets = []
    for path in ly.leafref_targets(leaf.snode):
        names = [s.name for s in _path_segments(path)]
        if len(names) >= 2:
            # Relative leafrefs ("../../X_LIST/name") stay inside the referencing table.
            table = names[-3] if len(names) >= 3 and names[-3] != ".." else spot.entry.table.name
            targets.append((table, names[-2], names[-1]))
    return targets


def _is_reference_error(message: str) -> bool:
    # libyang reports a failed leafref inside a union only as "Invalid union value".
    return "leafref" in message or message.startswith("Invalid union value")


def _reference_issue(ly: _Libyang, doc: _Doc, spot: _Spot, message: str) -> YangIssue | None:
    """The issue for a leafref error; None when its target was pruned earlier (reported then)."""
    found = doc.leaf_at(spot)
    if found is None:
        return _spot_issue(spot, message)
    leaf, value = found
    values = [str(v) for v in (value if isinstance(value, list) else [value])]
    targets = _leafref_targets(ly, spot, leaf)
    if any((*target, v) in doc.removed_keys for target in targets for v in values):
        return None
    if targets and message.startswith("Invalid union value"):
        tables = ", ".join(sorted({table for table, _, _ in targets}))
        message += f" (no such {tables} entry, and not another value the union allows)"
    return _spot_issue(spot, message)


def _resolve(ly: _Libyang, doc: _Doc, error: _LyError) -> tuple[list[YangIssue], bool]:
    """Turn one libyang error into issues and prune what caused it; False when nothing can be pruned."""
    if error.data_path is not None:
        spot = doc.locate(error.data_path)
        if spot is None:
            return [YangIssue(error.data_path, error.message)], False
        if _is_reference_error(error.message):
            issue = _reference_issue(ly, doc, spot, error.message)
        else:
            issue = _spot_issue(spot, error.message)
        issues = [issue] if issue is not None else []
        doc.prune(spot)
        return issues, True
    spots = doc.lacking(error.schema_path or "")
    if not spots:
        return [YangIssue(error.schema_path or "", error.message)], False
    issues = []
    for spot in spots:
        # A mandatory leaf we dropped for a type error was reported then; say it once.
        if (spot.entry.ident, spot.leaf) not in doc.removed_fields:
            issues.append(_spot_issue(spot, error.message))
        doc.remove_entry(spot.entry)
    return issues, True


def _spot_issue(spot: _Spot, message: str) -> YangIssue:
    suffix = " [entry comes from the baseline]" if spot.entry.from_baseline else ""
    return YangIssue(spot.path, message + suffix)


def _semantic_issues(ly: _Libyang, doc: _Doc) -> list[YangIssue]:
    issues: list[YangIssue] = []
    for _ in range(_MAX_SEMANTIC_ROUNDS):
        errors = ly.validation_errors(doc.to_yang_json())
        if not errors:
            return issues
        found, progressed = _resolve(ly, doc, errors[0])
        issues.extend(found)
        if not progressed:
            return issues
    issues.append(YangIssue("", f"stopped after {_MAX_SEMANTIC_ROUNDS} validation errors; fix these first"))
    return issues


# ------------------------------------------------------------------------------------------------
# Entry points


def _merge(
    config_db: Mapping[str, Any], baseline: Mapping[str, Any] | None
) -> tuple[dict[str, Any], frozenset[tuple[str, str]]]:
    """Baseline tables under the config; a config entry replaces the baseline entry of the same key."""
    merged: dict[str, Any] = {}
    from_baseline: set[tuple[str, str]] = set()
    for table, rows in (baseline or {}).items():
        merged[table] = dict(rows) if isinstance(rows, Mapping) else rows
        from_baseline.update((table, str(key)) for key in _keys(rows))
    for table, rows in config_db.items():
        base = merged.get(table)
        merged[table] = {**base, **rows} if isinstance(base, Mapping) and isinstance(rows, Mapping) else rows
        from_baseline.difference_update((table, str(key)) for key in _keys(rows))
        if not isinstance(rows, Mapping):
            from_baseline.difference_update((table, str(key)) for key in _keys(base))
    return merged, frozenset(from_baseline)


def _keys(rows: Any) -> Iterator[Any]:
    return iter(rows) if isinstance(rows, Mapping) else iter(())


def _dedupe(issues: Iterable[YangIssue]) -> list[YangIssue]:
    return list(dict.fromkeys(issues))


class SonicYangValidator:
    """SONiC's YANG models loaded once into libyang; reuse one instance (loading takes ~0.3 s).

    Not thread-safe: libyang's error list lives in the shared context.
    """

    def __init__(self, models_dir: Path) -> None:
        models_dir = Path(models_dir)
        if not any(models_dir.glob("*.yang")):
            raise FileNotFoundError(f"no SONiC YANG models (*.yang) in {models_dir}")
        self.models_dir = models_dir
        self._ly = _Libyang(models_dir)
        self._tables = _read_tables(self._ly.modules)

    @property
    def table_names(self) -> frozenset[str]:
        """Every config_db table some loaded model describes."""
        return frozenset(self._tables)

    def validate(
        self, config_db: Mapping[str, Any], baseline: Mapping[str, Any] | None = None
    ) -> list[YangIssue]:
        """Every reason SONiC would refuse ``config_db`` (merged over ``baseline``); [] when valid."""
        if not isinstance(config_db, Mapping) or (baseline is not None and not isinstance(baseline, Mapping)):
            return [YangIssue("", "config_db and baseline must be JSON objects of tables")]
        merged, baseline_keys = _merge(config_db, baseline)
        translator = _Translator(self._tables, self._ly)
        for table, rows in merged.items():
            translator.add_table(str(table), rows, baseline_keys)
        return _dedupe([*translator.issues, *_semantic_issues(self._ly, translator.doc)])


def validate_file(
    path: Path, validator: SonicYangValidator, baseline: Mapping[str, Any] | None = None
) -> list[YangIssue]:
    """Validate a config_db.json file; unreadable JSON is an issue, a missing file an OSError."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        return [YangIssue(str(path), f"not valid JSON: {exc}")]
    if not isinstance(data, dict):
        return [YangIssue(str(path), "config_db.json must hold a JSON object of tables")]
    return validator.validate(data, baseline)
