"""Mutations of one YAML input file for the fuzz suite (tests/test_fuzz.py), each a small frozen record whose
repr says what it did, so that a falsifying example hypothesis prints can be read and replayed by hand.

Three layers, applied in this order to one bundled input file:

* :class:`NodeMutation` — on the YAML node graph (``yaml.compose``), so that types, ranges and structure change
  and YAML's own features appear: explicit tags, anchors and aliases (recursive ones too), duplicate keys,
  merge keys, flow and block style, quoting;
* :class:`TextMutation` — on the serialised text: extra documents, directives, truncation, stray bytes,
  line-break conventions;
* :class:`Encoding` — how the text becomes bytes (UTF-16/32 with and without BOM, a UTF-8 BOM, Latin-1).

:class:`FileKind` replaces the file itself (a directory, an empty file, a symlink, nothing at all).
"""

from __future__ import annotations

import io
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import yaml
from hypothesis import strategies as st

Node = yaml.Node
Side = Literal["item", "key", "value"]
STR_TAG, MERGE_TAG = "tag:yaml.org,2002:str", "tag:yaml.org,2002:merge"


@dataclass(frozen=True)
class Slot:
    """A place in the node graph that holds a node: item ``index`` of a sequence, or the key or value of pair
    ``index`` of a mapping (``parent`` None: the document's root)."""

    parent: yaml.CollectionNode | None
    index: int
    side: Side

    def get(self, root: Node) -> Node:
        if self.parent is None:
            return root
        entry = self.parent.value[self.index]
        if self.side == "item":
            return entry  # type: ignore[no-any-return]
        return entry[0] if self.side == "key" else entry[1]  # type: ignore[no-any-return]

    def set(self, root: Node, node: Node) -> Node:
        """Put ``node`` here; returns the (possibly new) root."""
        if self.parent is None:
            return node
        entry = self.parent.value[self.index]
        if self.side == "item":
            self.parent.value[self.index] = node
        else:
            self.parent.value[self.index] = (node, entry[1]) if self.side == "key" else (entry[0], node)
        return root

    def remove(self) -> None:
        """Remove the item, or the whole pair of a key or value, from its parent."""
        if self.parent is not None:
            del self.parent.value[self.index]

    def duplicate(self) -> None:
        """Repeat the item, or the whole pair (so the mapping holds the same key twice), right after itself."""
        if self.parent is not None:
            self.parent.value.insert(self.index + 1, self.parent.value[self.index])


def slots(root: Node) -> list[Slot]:
    """Every slot of the graph, depth first in document order; each node's children once (aliases can make
    the graph cyclic)."""
    found = [Slot(None, 0, "value")]
    seen: set[int] = set()
    pending: list[Node] = [root]
    while pending:
        node = pending.pop()
        if id(node) in seen or not isinstance(node, yaml.CollectionNode):
            continue
        seen.add(id(node))
        children = _child_slots(node)
        found.extend(children)
        pending.extend(reversed([slot.get(root) for slot in children]))
    return found


def _child_slots(node: yaml.CollectionNode) -> list[Slot]:
    if isinstance(node, yaml.SequenceNode):
        return [Slot(node, index, "item") for index in range(len(node.value))]
    return [Slot(node, index, side) for index in range(len(node.value)) for side in ("key", "value")]


def pick(root: Node, at: int) -> Slot:
    """Slot number ``at`` (modulo their count): strategies draw plain integers, whatever the file's shape."""
    every = slots(root)
    return every[at % len(every)]


def to_node(value: Any) -> Node:
    """A Python value as YAML's safe representer writes it (strings with line breaks or NULs come out
    quoted and escaped, as a user's editor would write them)."""
    return yaml.SafeDumper(io.StringIO()).represent_data(value)


class NodeMutation:
    """One change to the node graph of a document; returns the new root."""

    def apply(self, root: Node) -> Node:
        raise NotImplementedError


@dataclass(frozen=True)
class Replace(NodeMutation):
    """A value of another type, out of range, or of another shape."""

    at: int
    value: Any

    def apply(self, root: Node) -> Node:
        return pick(root, self.at).set(root, to_node(self.value))


@dataclass(frozen=True)
class Drop(NodeMutation):
    """A required key (or list item) missing."""

    at: int

    def apply(self, root: Node) -> Node:
        pick(root, self.at).remove()
        return root


@dataclass(frozen=True)
class Duplicate(NodeMutation):
    """A key given twice, or a list item repeated."""

    at: int

    def apply(self, root: Node) -> Node:
        pick(root, self.at).duplicate()
        return root


@dataclass(frozen=True)
class Move(NodeMutation):
    """A subtree written under the wrong parent: taken from one place, put in place of another."""

    source: int
    target: int

    def apply(self, root: Node) -> Node:
        source, target = pick(root, self.source), pick(root, self.target)
        moved = source.get(root)
        root = target.set(root, moved)
        if source.parent is not None and source.parent is not target.parent:
            source.remove()
        return root


@dataclass(frozen=True)
class Wrap(NodeMutation):
    """The wrong container: a value inside a one-item list, or under a one-key mapping."""

    at: int
    container: Literal["list", "mapping"]

    def apply(self, root: Node) -> Node:
        slot = pick(root, self.at)
        inner = slot.get(root)
        outer: Node = yaml.SequenceNode("tag:yaml.org,2002:seq", [inner]) if self.container == "list" else \
            yaml.MappingNode("tag:yaml.org,2002:map", [(yaml.ScalarNode(STR_TAG, "wrapped"), inner)])
        return slot.set(root, outer)


@dataclass(frozen=True)
class Unwrap(NodeMutation):
    """The wrong container the other way: a list or mapping replaced by its first member (or by null)."""

    at: int

    def apply(self, root: Node) -> Node:
        slot = pick(root, self.at)
        node = slot.get(root)
        if not isinstance(node, yaml.CollectionNode):
            return root
        first = node.value[0] if node.value else yaml.ScalarNode("tag:yaml.org,2002:null", "")
        return slot.set(root, first[1] if isinstance(first, tuple) else first)


@dataclass(frozen=True)
class Alias(NodeMutation):
    """One node in two places: an anchor and an alias; a recursive alias when the source holds the target."""

    source: int
    target: int

    def apply(self, root: Node) -> Node:
        return pick(root, self.target).set(root, pick(root, self.source).get(root))


@dataclass(frozen=True)
class Tag(NodeMutation):
    """An explicit tag: a standard one that may not fit the value (``!!int x``), a Python one a safe loader
    must refuse, or a local one."""

    at: int
    tag: str

    def apply(self, root: Node) -> Node:
        pick(root, self.at).get(root).tag = self.tag
        return root


@dataclass(frozen=True)
class Style(NodeMutation):
    """Flow or block collections; plain, quoted, literal or folded scalars (quoting turns ``400`` into a
    string)."""

    at: int
    style: str | None

    def apply(self, root: Node) -> Node:
        node = pick(root, self.at).get(root)
        if isinstance(node, yaml.CollectionNode):
            node.flow_style = self.style is not None
        elif isinstance(node, yaml.ScalarNode):
            node.style = self.style
            if self.style:  # a quoted scalar resolves as a string
                node.tag = STR_TAG
        return root


@dataclass(frozen=True)
class RenameKey(NodeMutation):
    """A key of another type or spelling (numeric host keys, a boolean, null, a near-miss name)."""

    at: int
    key: Any

    def apply(self, root: Node) -> Node:
        slot = pick(root, self.at)
        if slot.parent is None or slot.side == "item":
            return root
        return Slot(slot.parent, slot.index, "key").set(root, to_node(self.key))


@dataclass(frozen=True)
class Merge(NodeMutation):
    """A merge key (``<<: *anchor``) into a mapping, of a mapping, a list of them, or something else."""

    at: int
    source: int

    def apply(self, root: Node) -> Node:
        target = pick(root, self.at).get(root)
        if isinstance(target, yaml.MappingNode):
            target.value.append((yaml.ScalarNode(MERGE_TAG, "<<"), pick(root, self.source).get(root)))
        return root


def serialise(root: Node) -> str:
    """The document as text; anchors and aliases wherever one node sits in two places."""
    return yaml.serialize(root, Dumper=yaml.CSafeDumper, allow_unicode=True, width=100)


class TextMutation:
    def apply(self, text: str) -> str:
        raise NotImplementedError


@dataclass(frozen=True)
class Documents(TextMutation):
    """YAML streams: a second document, an empty one, a directive, an explicit end."""

    form: Literal["twice", "second-empty", "leading-empty", "directive", "end-marker", "scalar-second"]

    def apply(self, text: str) -> str:
        forms: dict[str, Callable[[str], str]] = {
            "twice": lambda body: f"{body}---\n{body}",
            "second-empty": lambda body: f"{body}---\n",
            "leading-empty": lambda body: f"---\n...\n---\n{body}",
            "directive": lambda body: f"%YAML 1.1\n%TAG !x! tag:example.com,2000:\n---\n{body}",
            "end-marker": lambda body: f"{body}...\n",
            "scalar-second": lambda body: f"{body}--- just a string\n",
        }
        return forms[self.form](text)


@dataclass(frozen=True)
class Splice(TextMutation):
    """Text cut at, or inserted at, a relative position: truncated files, stray tabs, control characters,
    unbalanced brackets and quotes, very long lines."""

    where: float
    insert: str
    cut: bool

    def apply(self, text: str) -> str:
        at = int(len(text) * self.where)
        return text[:at] + self.insert + ("" if self.cut else text[at:])


@dataclass(frozen=True)
class LongLine(TextMutation):
    """``size`` characters without a line break inserted at a relative position (its repr stays short, unlike a
    Splice of the same text)."""

    where: float
    size: int

    def apply(self, text: str) -> str:
        return Splice(self.where, "x" * self.size, cut=False).apply(text)


@dataclass(frozen=True)
class LineBreaks(TextMutation):
    """Line breaks of another convention (CRLF, CR, NEL, LS, PS)."""

    newline: str

    def apply(self, text: str) -> str:
        return text.replace("\n", self.newline)


@dataclass(frozen=True)
class Encoding:
    """How the text reaches the disk; ``garbage`` bytes (invalid UTF-8 among them) go in at ``where``."""

    codec: str
    garbage: bytes = b""
    where: float = 0.0

    def encode(self, text: str) -> bytes:
        bom, codec = (b"\xef\xbb\xbf", "utf-8") if self.codec == "utf-8-bom" else (b"", self.codec)
        # Lone surrogates (spliced in by a TextMutation) pass through the UTF codecs as the invalid bytes an
        # editor bug would write; the 8-bit codecs write what they cannot encode as "?".
        raw = bom + text.encode(codec, errors="surrogatepass" if codec.startswith("utf") else "replace")
        at = int(len(raw) * self.where)
        return raw[:at] + self.garbage + raw[at:]


@dataclass(frozen=True)
class FileKind:
    """The input file replaced by something that is not a regular YAML file (or by a symlink to one)."""

    kind: Literal["directory", "empty", "whitespace", "comment-only", "missing", "symlink-to-file",
                  "symlink-to-directory", "dangling-symlink", "dev-null", "null-document"]

    def make(self, path: Path) -> None:
        original = path.read_bytes()
        path.unlink()
        makers: dict[str, Callable[[], object]] = {
            "directory": path.mkdir,
            "empty": lambda: path.write_bytes(b""),
            "whitespace": lambda: path.write_bytes(b" \n\t\n\n"),
            "comment-only": lambda: path.write_bytes(b"# nothing but a comment\n"),
            "missing": lambda: None,
            "symlink-to-file": lambda: self._link_to_copy(path, original),
            "symlink-to-directory": lambda: path.symlink_to(path.parent),
            "dangling-symlink": lambda: path.symlink_to(path.with_name("nowhere.yaml")),
            "dev-null": lambda: path.symlink_to(os.devnull),
            "null-document": lambda: path.write_bytes(b"~\n"),
        }
        makers[self.kind]()

    @staticmethod
    def _link_to_copy(path: Path, original: bytes) -> None:
        real = path.with_name(f"real-{path.name}")
        real.write_bytes(original)
        path.symlink_to(real.name)


# --- strategies -------------------------------------------------------------------------------------------

# Values at and beyond the edges of every range the schema has (VLANs, DSCP, priorities, MTU, percentages,
# byte sizes, speeds), of every type YAML can produce, and strings a platform would misread.
EDGE_INTS = st.sampled_from([-1, 0, 1, 7, 8, 63, 64, 100, 101, 4094, 4095, 4096, 9216, 2**31, 2**63, 10**30, -(2**63)])
ODD_STRINGS = st.integers(4_000, 6_000).map(lambda size: "x" * size) | st.sampled_from([
    "", " ", "0", "-1", "1e3", "0x10", "yes", "no", "on", "null", "~", "NaN", "400G", "400g", "4000G", "1T", "-5G",
    "Ethernet1-64", "swp1-64", "Ethernet1/1-64", "../../etc/passwd", "/..", "2001:db8::21%x", "192.0.2.1/33",
    "a\nshutdown", "a\rb", "a\x0bb", "a\x85b", "a\u2028b", "a\x00b", "$(reboot)", "`id`", "'\"", "é", "🙂",
    "12:30:00", "2026-01-01", "<<", "*a", "&a", "!!int 3",
])
SCALARS = st.one_of(
    EDGE_INTS, st.integers(), st.floats(), st.booleans(), st.none(), ODD_STRINGS, st.text(max_size=30),
    st.binary(max_size=10),
)
VALUES = st.recursive(SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.one_of(ODD_STRINGS, st.integers(), st.text(max_size=8)), inner,
                                                 max_size=3)), max_leaves=6)
TAGS = st.sampled_from([
    "tag:yaml.org,2002:int", "tag:yaml.org,2002:float", "tag:yaml.org,2002:bool", "tag:yaml.org,2002:null",
    "tag:yaml.org,2002:str", "tag:yaml.org,2002:binary", "tag:yaml.org,2002:timestamp", "tag:yaml.org,2002:seq",
    "tag:yaml.org,2002:map", "tag:yaml.org,2002:set", "tag:yaml.org,2002:omap", "tag:yaml.org,2002:pairs",
    "tag:yaml.org,2002:python/object/apply:os.system", "tag:yaml.org,2002:python/name:os.getcwd", "!local",
    "!", "tag:example.com,2000:thing",
])
AT = st.integers(min_value=0, max_value=10_000)

NODE_MUTATIONS: st.SearchStrategy[NodeMutation] = st.one_of(
    st.builds(Replace, AT, VALUES),
    st.builds(Replace, AT, SCALARS),
    st.builds(Drop, AT),
    st.builds(Duplicate, AT),
    st.builds(Move, AT, AT),
    st.builds(Wrap, AT, st.sampled_from(["list", "mapping"])),
    st.builds(Unwrap, AT),
    st.builds(Alias, AT, AT),
    st.builds(Tag, AT, TAGS),
    st.builds(Style, AT, st.sampled_from([None, "'", '"', "|", ">", ""])),
    st.builds(RenameKey, AT, st.one_of(EDGE_INTS, st.booleans(), st.none(), ODD_STRINGS, st.floats())),
    st.builds(Merge, AT, AT),
)

TEXT_MUTATIONS: st.SearchStrategy[TextMutation] = st.one_of(
    st.builds(Documents, st.sampled_from(["twice", "second-empty", "leading-empty", "directive", "end-marker",
                                          "scalar-second"])),
    st.builds(Splice, st.floats(0, 1), st.one_of(
        st.sampled_from(["", "\t", "\x00", "\x1b[2J", "[", "{", "'", '"', "&", "*", "!", "%", "@", "`", "|", ">",
                         ": ", "- ", "? ", "\ufeff", "\ud800", "&a [*a]", "*nowhere"]),
        st.text(max_size=20)), st.booleans()),
    st.builds(LongLine, st.floats(0, 1), st.integers(90_000, 110_000)),
    st.builds(LineBreaks, st.sampled_from(["\r\n", "\r", "\x85", "\u2028", "\u2029", "\x0b", "\x0c"])),
)

ENCODINGS = st.one_of(
    st.just(Encoding("utf-8")),
    st.builds(Encoding, st.sampled_from(["utf-8-bom", "utf-16", "utf-16-le", "utf-16-be", "utf-32", "latin-1",
                                         "cp1252"])),
    st.builds(Encoding, st.just("utf-8"), st.sampled_from([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xf4\x90\x80\x80",
                                                           b"\x00", b"\xfe\xff", b"\x80abc"]) | st.binary(max_size=8),
              st.floats(0, 1)),
)

FILE_KINDS = st.builds(FileKind, st.sampled_from(["directory", "empty", "whitespace", "comment-only", "missing",
                                                  "symlink-to-file", "symlink-to-directory", "dangling-symlink",
                                                  "dev-null", "null-document"]))
