"""The fast path for plain YAML: rapidyaml parses, PyYAML's own resolver types the scalars.

PyYAML (even with libyaml) reads about 2 MB/s here, because every event and node becomes a Python object with
two marks; a 32,768-GPU inventory is 12 MB of hosts.yaml. rapidyaml parses the same text in C++ in tens of
milliseconds, and walking its tree costs a tenth of PyYAML's load.

PyYAML stays the reference: this path only answers for the plain subset of YAML that both read the same way
(block and flow collections, plain and quoted scalars without escapes, comments) and declines anything else —
anchors, tags, block scalars, merge keys, document markers, duplicate keys, tabs, syntax errors — so that the
caller falls back to PyYAML, which produces the exact value or the exact error message.
tests/test_fastyaml.py checks both paths give equal data on generated documents and on every bundled input.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

try:
    import ryml  # type: ignore[import-untyped]
except ImportError:  # pragma: no cover - rapidyaml is a dependency; without it PyYAML does all the work
    ryml = None

# The parsers that read fabricgen's inputs, by version: what is parsed, and what is kept of it (the parse cache,
# the kept inventory and lint report), may change with either, so their keys name both.
PARSERS = (f"PyYAML {yaml.__version__} (libyaml {yaml.__with_libyaml__}), "
           f"rapidyaml {getattr(ryml, '__version__', '?') if ryml is not None else 'absent'}")

# Text the two parsers might read differently sends the whole file to PyYAML: escapes in quoted scalars,
# tabs (PyYAML refuses them as indentation), characters PyYAML refuses as unprintable (C0 and C1 controls,
# U+FFFE/U+FFFF) or reads as line breaks (U+0085, U+2028, U+2029), directives and document markers.
_NOT_PLAIN_CHARS = (
    rb"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\\\t]|\xc2[\x80-\x9f]|\xe2\x80[\xa8\xa9]|\xef\xbf[\xbe\xbf]"
    # A carriage return on its own ends a line for PyYAML (YAML's b-carriage-return), not for rapidyaml:
    # `1\r:` is a syntax error to one and {1: None} to the other. CRLF line ends read alike.
    rb"|\r(?!\n)")
# Also directives and document markers, and a colon touching a flow indicator (`[1:]`, `[:1]`): libyaml
# refuses some of these ("found unexpected ':'") where rapidyaml reads a key.
# Explicit keys (`? key`, and `?` opening a flow entry) too: the two disagree on where such a key ends
# (`?\n-1`, `{?1}`); and a flow entry that starts with a colon (`[ :1]`), which libyaml refuses.
_NOT_PLAIN_TEXT = re.compile(_NOT_PLAIN_CHARS + rb"|^(?:%|---|\.\.\.)|:[\[\]{},]|[\[\]{},]:|\?(?:[ \r\n]|$)"
                             rb"|[\[{,][ \r\n]*[?:]", re.MULTILINE)
# _NOT_PLAIN_TEXT, searched for in pieces that the bytes type and the regex engine scan fast: one regex with
# alternatives tries each at every position (0.5-0.9 s on a 12 MB hosts.yaml, a tenth of its cold parse).
# tests/test_fastyaml.py checks that both answer alike.
_ODD_BYTES = bytes([*range(0x00, 0x0a), 0x0b, 0x0c, *range(0x0e, 0x20), 0x7f, ord("\\")])  # tab is 0x09
_EVERY_OTHER_BYTE = bytes(sorted(set(range(256)) - set(_ODD_BYTES)))
_ODD_SEQUENCES = re.compile(rb"\xc2[\x80-\x9f]|\xe2\x80[\xa8\xa9]|\xef\xbf[\xbe\xbf]")
_LONE_CR = re.compile(rb"\r(?!\n)")
_MARKER_AFTER_BREAK = re.compile(rb"\n(?:%|---|\.\.\.)")
_COLON_BEFORE_FLOW = re.compile(rb":[\[\]{},]")
_EXPLICIT_KEY = re.compile(rb"\?(?:[ \r\n]|$)", re.MULTILINE)
# `[\[\]{},]:` and `[\[{,][ \r\n]*[?:]` start with a character class, which the regex engine tries at every
# position (0.1-0.2 s on 12 MB). With those characters mapped to NUL (the text holds none, checked first), and
# for the second spaces and line breaks dropped, each is a search for a literal NUL: ten times faster.
_FLOW_TO_NUL = bytes.maketrans(b"[]{},", b"\0" * 5)
_OPENERS_TO_NUL = bytes.maketrans(b"[{,", b"\0" * 3)
_NUL_COLON = re.compile(rb"\0:")
_NUL_INDICATOR = re.compile(rb"\0[?:]")


def _odd_characters(raw: bytes) -> bool:
    """Whether ``_NOT_PLAIN_CHARS`` matches somewhere in ``raw``."""
    return bool(
        raw.translate(None, _EVERY_OTHER_BYTE)  # NUL among them: _not_plain's translations rely on its absence
        or (any(lead in raw for lead in (b"\xc2", b"\xe2", b"\xef")) and _ODD_SEQUENCES.search(raw))
        or (b"\r" in raw and _LONE_CR.search(raw)))


def _not_plain(raw: bytes) -> bool:
    """Whether ``_NOT_PLAIN_TEXT`` matches somewhere in ``raw``."""
    return bool(
        _odd_characters(raw)
        or raw.startswith((b"%", b"---", b"...")) or _MARKER_AFTER_BREAK.search(raw)
        or _COLON_BEFORE_FLOW.search(raw) or _NUL_COLON.search(raw.translate(_FLOW_TO_NUL))
        or (b"?" in raw and _EXPLICIT_KEY.search(raw))
        or _NUL_INDICATOR.search(raw.translate(_OPENERS_TO_NUL, b" \r\n")))


def plain_characters(raw: bytes) -> bool:
    """Whether ``raw`` holds none of the characters the two parsers might read differently (see above)."""
    return not _odd_characters(raw)

_RESOLVER = yaml.resolver.Resolver()
_CONSTRUCTOR = yaml.constructor.SafeConstructor()
_IMPLICIT = (True, False)


class _NotPlain(Exception):
    """The document needs PyYAML (duplicate key, unsupported construct)."""


def load_plain(raw: bytes, max_depth: int = 64, max_nodes: int = 8_000_000) -> tuple[bool, Any]:
    """(True, data) if the fast path read ``raw`` exactly as PyYAML's safe loader would; (False, None) otherwise,
    and also when the data nests more than ``max_depth`` levels or holds more than ``max_nodes`` nodes (PyYAML's
    path then reports it: both paths enforce the same bounds)."""
    if ryml is None or not raw.strip() or _not_plain(raw) or bom_after_start(raw):
        return False, None
    try:
        with _quiet_stderr():  # rapidyaml prints its own message before raising; PyYAML reports instead
            tree = ryml.parse_in_arena(raw)
        if tree.size() > max_nodes:  # counted as yamlsource's builder counts: one per value, the root included
            return False, None
        return True, _Walker(tree, max_depth).document()
    except (_NotPlain, ryml.ExceptionBasic, RecursionError, UnicodeDecodeError):
        # RecursionError: nesting deeper than we walk. UnicodeDecodeError: not UTF-8, which load reports.
        return False, None


def bom_after_start(raw: bytes) -> bool:
    """A byte-order mark anywhere but first: rapidyaml reads it into a key, PyYAML refuses it. (One byte's
    search first: memchr, a tenth of the three bytes' search on 12 MB.)"""
    return raw.find(b"\xef", 1) != -1 and raw.find(b"\xef\xbb\xbf", 1) != -1


@contextlib.contextmanager
def _quiet_stderr() -> Iterator[None]:
    saved = os.dup(2)
    try:
        with Path(os.devnull).open("wb") as devnull:
            os.dup2(devnull.fileno(), 2)
            yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


@lru_cache(maxsize=4096)
def _plain_scalar(text: str) -> Any:
    """A plain (unquoted) scalar typed exactly as PyYAML types it: YAML 1.1 ints, bools, nulls, floats.

    PyYAML never yields a plain scalar that starts with an indicator (`[]{},#&*!|>'"%@` and a backtick, or
    `-?:` before a space), holds a line break or " #" (a comment), or has space around it; rapidyaml
    sometimes does (stray flow indicators, flow collections running over lines), so such text means the two
    disagree and PyYAML decides."""
    if text[:1] in _INDICATORS or (text[:1] in ("-", "?", ":") and text[1:2] in ("", " ")) or "\n" in text or \
            "\r" in text or " #" in text or text != text.strip(" "):
        raise _NotPlain
    tag = _RESOLVER.resolve(yaml.ScalarNode, text, _IMPLICIT)  # type: ignore[no-untyped-call]
    if tag not in _TYPED:
        raise _NotPlain  # a merge key (<<), a timestamp, a '=' value: PyYAML's path decides what they mean
    return _CONSTRUCTOR.yaml_constructors[tag](_CONSTRUCTOR, yaml.ScalarNode(tag, text))


_INDICATORS = frozenset("[]{},#&*!|>'\"%@`")
_TYPED = {f"tag:yaml.org,2002:{kind}" for kind in ("null", "bool", "int", "float", "str")}


# PyYAML takes a key without `?` only when its ':' comes within 1024 characters of where the key starts (YAML
# 1.1's limit on simple keys); rapidyaml has no limit. Bytes are at least as many as characters, and the margin
# leaves room for quotes and spaces before the ':', so a longer key always goes to PyYAML.
_LONGEST_SIMPLE_KEY = 1000


class _Walker:
    """Tree → dicts, lists and scalars. One type() call per node; children by sibling links. The extension's
    functions are bound once: its Python wrapper methods would double the cost of a 300k-node walk."""

    def __init__(self, tree: Any, max_depth: int) -> None:
        self.tree = tree
        self.depth, self.max_depth = 0, max_depth
        """the key-path length of the collection being walked; deeper than the bound, PyYAML's path reports it"""
        native = ryml.ryml._ryml
        self.type, self.key, self.val = native.Tree_type, native.Tree_key, native.Tree_val
        self.first_child, self.next_sibling = native.Tree_first_child, native.Tree_next_sibling
        self.none = ryml.NONE
        self.map_flag, self.seq_flag = ryml.MAP, ryml.SEQ
        self.key_quoted, self.val_quoted = ryml.KEYQUO, ryml.VALQUO
        # Anchors, aliases, tags and block scalars: PyYAML's path.
        self.not_plain = (ryml.KEYANCH | ryml.VALANCH | ryml.KEYREF | ryml.VALREF | ryml.KEYTAG | ryml.VALTAG
                          | ryml.KEY_LITERAL | ryml.KEY_FOLDED | ryml.VAL_LITERAL | ryml.VAL_FOLDED)

    def document(self) -> Any:
        root = self.tree.root_id()
        kind = self.type(self.tree, root)
        # Explicit documents (a stream is DOC-flagged children under a SEQ-like root), and anything but a
        # mapping or sequence at the top (a lone scalar, or nothing but comments): PyYAML's path.
        if kind & ryml.DOC or (kind & ryml.STREAM) == ryml.STREAM or not kind & (self.map_flag | self.seq_flag):
            raise _NotPlain
        return self.node(root, kind)

    def node(self, node: int, kind: int) -> Any:
        if kind & self.not_plain:
            raise _NotPlain
        if not kind & (self.map_flag | self.seq_flag):
            return _scalar(self.val(self.tree, node), kind & self.val_quoted)
        if self.depth >= self.max_depth:
            raise _NotPlain  # its items would be nested deeper than the bound
        self.depth += 1
        try:
            return self.mapping(node) if kind & self.map_flag else self.sequence(node)
        finally:
            self.depth -= 1

    def sequence(self, node: int) -> list[Any]:
        tree, kind_of, items = self.tree, self.type, []
        child = self.first_child(tree, node)
        while child != self.none:
            items.append(self.node(child, kind_of(tree, child)))
            child = self.next_sibling(tree, child)
        return items

    def mapping(self, node: int) -> dict[Any, Any]:
        tree, kind_of, result = self.tree, self.type, {}
        child = self.first_child(tree, node)
        while child != self.none:
            kind = kind_of(tree, child)
            text = self.key(tree, child)
            if not (kind & self.key_quoted or text):
                raise _NotPlain  # an empty plain key (`: 1`): PyYAML refuses it
            if len(text) > _LONGEST_SIMPLE_KEY:
                raise _NotPlain  # PyYAML refuses it: "could not find expected ':'"
            key = _scalar(text, kind & self.key_quoted)
            if not isinstance(key, str | int) or isinstance(key, bool):
                key = str(key)  # what the reference builder does with odd keys
            if key in result:
                raise _NotPlain  # PyYAML's path reports the duplicate with both lines
            result[key] = self.node(child, kind)
            child = self.next_sibling(tree, child)
        return result


def _scalar(text: Any, quoted: int) -> Any:
    value = "" if text is None else str(text, "utf-8")
    return value if quoted else _plain_scalar(value)
