"""YAML loading that remembers where every key came from and refuses duplicate keys.

PyYAML silently keeps the last of two equal keys; in a fabric file that silently drops a port or a class.
We compose the node graph (the C composer when libyaml is present), then build plain Python data
ourselves so that every key path maps to a file:line:col for error messages.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import marshal
import os
import re
import stat
import sys
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

import yaml

from fabricgen import __version__
from fabricgen.load.fastyaml import PARSERS, bom_after_start, load_plain, plain_characters
from fabricgen.load.parsecache import (
    blob_may_carry_secret,
    carries_secret,
    read_sealed,
    seal,
    source_digest,
    write_private,
)
from fabricgen.load.parsecache import cache_dir as cache_dir  # where it always was, for fabricgen.build.neighbourhood
from fabricgen.models.diagnostics import INPUT_FILE, Diagnostic, KeyPath, Location, format_key_path
from fabricgen.runtime.forked import contiguous, fork_map, worth_forking

try:  # libyaml makes loading a 4,000-host inventory several times faster
    _Loader: type[yaml.SafeLoader] = yaml.CSafeLoader  # type: ignore[assignment,unused-ignore]
except AttributeError:  # pragma: no cover - depends on how PyYAML was built
    _Loader = yaml.SafeLoader

_SCALARS = yaml.constructor.SafeConstructor()


@dataclass(frozen=True)
class Limit:
    """One bound on what an input file may make fabricgen do, with the environment variable that raises it.

    The defaults leave room ten times over for a 32,768-GPU fabric (bench/make_fabric.py: its hosts.yaml is
    12 MB, 733k nodes, 5 levels deep, no aliases), and stop a hostile file (an alias bomb of a few hundred
    bytes, a recursive alias, /dev/zero) in seconds and well under a gigabyte."""

    variable: str
    default: int
    what: str

    def value(self) -> int:
        """The limit in force: the environment's value when it is a positive integer, else the default (a typo
        in the variable must not turn the bound off)."""
        text = os.environ.get(self.variable, "")
        return int(text) if text.isdecimal() and int(text) > 0 else self.default

    def hint(self) -> str:
        return f"the limit is {self.value():,} {self.what}; raise it with {self.variable}=N if the file is meant " \
            "to be this large"


MAX_FILE_BYTES = Limit("FABRICGEN_MAX_INPUT_BYTES", 128 * 1024 * 1024, "bytes per input file")
MAX_DEPTH = Limit("FABRICGEN_MAX_YAML_DEPTH", 64, "levels of nesting")
MAX_NODES = Limit("FABRICGEN_MAX_YAML_NODES", 8_000_000, "YAML nodes per file, aliases expanded")
MAX_ALIAS_NODES = Limit("FABRICGEN_MAX_YAML_ALIAS_NODES", 1_000_000, "YAML nodes reached through aliases")


class InputFileError(Exception):
    """An input path that is not a readable regular file of bounded size; the message says why."""

    def __init__(self, message: str, hint: str) -> None:
        super().__init__(message)
        self.message, self.hint = message, hint


def read_input(path: Path) -> bytes:
    """The bytes of the input file at ``path``: a regular file of at most MAX_FILE_BYTES.

    Opened without blocking (a FIFO with no writer would hang ``open``), checked on the open descriptor (no
    window between the check and the read), and read at most one byte past the limit (``/dev/zero`` or a file
    that grows while read cannot exhaust memory). Raises InputFileError."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        hint = "give the user running fabricgen read access to it" if exc.errno == errno.EACCES else \
            "check the path"
        raise InputFileError(f"cannot read file: {exc.strerror}", hint) from exc
    kind = os.fstat(fd).st_mode
    if not stat.S_ISREG(kind):
        os.close(fd)
        raise InputFileError(f"not a regular file ({_file_kind(kind)})", "point at a YAML file")
    limit = MAX_FILE_BYTES.value()
    with os.fdopen(fd, "rb") as handle:
        try:
            raw = handle.read(limit + 1)
        except OSError as exc:
            raise InputFileError(f"cannot read file: {exc.strerror}", "check the path") from exc
    if len(raw) > limit:
        raise InputFileError(f"file larger than {limit:,} bytes", MAX_FILE_BYTES.hint())
    return raw


def _file_kind(mode: int) -> str:
    kinds = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
             (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))
    return next((name for test, name in kinds if test(mode)), "not a regular file")


@dataclass
class SourceMap:
    """Key path → location of the key (or value, for list items) that introduced it.

    ``alias`` makes a subtree of another map appear under a prefix of this one without copying it (Nornir
    inheritance points each host's keys at hosts.yaml or groups.yaml; copying would be quadratic). The other
    map may be a document's, built only when a location is first asked for."""

    locations: dict[KeyPath, Location] = field(default_factory=dict)
    aliases: dict[KeyPath, tuple[SourceMap | YamlDocument, KeyPath]] = field(default_factory=dict)

    def add(self, path: KeyPath, location: Location) -> None:
        self.locations[path] = location

    def exact(self, path: KeyPath) -> Location | None:
        """The location recorded for exactly ``path`` (through aliases), or None."""
        return self._find(path, ancestors=False)

    def locate(self, path: KeyPath, fallback: Location) -> Location:
        """The location of ``path`` or of its closest ancestor that we know."""
        return self._find(path, ancestors=True) or fallback

    def _find(self, path: KeyPath, ancestors: bool) -> Location | None:
        for cut in range(len(path), -1, -1):
            prefix = path[:cut]
            found = self.locations.get(prefix)
            if found is not None and (ancestors or cut == len(path)):
                return found
            alias = self.aliases.get(prefix)
            if alias is not None:
                other, at = alias
                target = other.source if isinstance(other, YamlDocument) else other
                return target._find(at + path[cut:], ancestors)
            if not ancestors and cut < len(path):
                continue
        return None

    def graft(self, prefix: KeyPath, other: SourceMap | YamlDocument, other_prefix: KeyPath = ()) -> None:
        """Make ``other``'s subtree at ``other_prefix`` answer for ``prefix`` here. O(1)."""
        self.aliases[prefix] = (other, other_prefix)


class YamlDocument:
    """A loaded file's data. Its source map (key path → line) costs as much as a second parse, and is needed
    only to report a problem, so it is built from the kept text the first time a location is asked for."""

    def __init__(self, data: Any, file: str, text: str, source: SourceMap | None = None,
                 read_alone: bool = False) -> None:
        self.data = data
        self.file = file
        self.text = text
        self._source = source
        self.read_alone = read_alone
        """the data was read entry by entry, each top-level entry on its own (see _load_by_entry)"""
        self.sha256: str | None = None
        """hex sha256 of the very bytes the data was read from (set by :func:`load_yaml`): the manifest's and the
        caches' input hash, so that a file edited while it is read is never recorded under the new bytes"""

    @property
    def source(self) -> SourceMap:
        if self._source is None:
            entries = _EntrySources.of(self) if self.read_alone else None
            self._source = entries if entries is not None else _whole_source(self.text, self.file)
        return self._source

    def at(self, path: KeyPath) -> Location:
        return self.source.locate(path, Location(self.file, 1, 1))


def record_hash(doc: YamlDocument, label: str, hashes: dict[str, str]) -> None:
    """The sha256 of the bytes ``doc`` was read from, as the input hash of ``label``: not of a second read, which
    could see the file as an editor saved it in between (the manifest, the kept inventory and the kept lint
    report would then name bytes that were never parsed)."""
    if doc.sha256 is not None:
        hashes[label] = doc.sha256


def _whole_source(text: str, file: str) -> SourceMap:
    reparsed, _ = parse_yaml(text, file)
    return reparsed.source if reparsed is not None else SourceMap()


class _EntrySources(SourceMap):
    """The source map of a file read entry by entry (``read_alone``), built one top-level entry at a time: only
    the entries a location is asked in are parsed again. Lint locates every finding, and at 32,768 GPUs the
    findings of a few hundred hosts made `fabricgen lint` parse all of a 12 MB hosts.yaml a second time, with
    PyYAML's marks (about 5 of its 12 s). An entry read alone holds the locations the whole file's parse gives it:
    nothing in it refers to another entry (_load_by_entry made sure), and it starts at a line start, so only its
    line numbers move, by the lines before it. A path outside every entry (the document itself) is asked of the
    whole file's map, as before. One difference: a file that reads entry by entry but is too large for the whole
    parse (FABRICGEN_MAX_YAML_NODES bounds each entry there) is located here, where the whole parse answered
    line 1."""

    def __init__(self, doc: YamlDocument, raw: bytes, spans: dict[str, tuple[int, int, int]]) -> None:
        super().__init__()
        self._doc = doc
        self._spans = spans
        """each top-level key not parsed yet → its entry's (start, end) offsets in the file's bytes, and the
        number of lines before it"""
        self._parsed: set[Any] = set()
        self._raw = raw
        self._whole: SourceMap | None = None

    @classmethod
    def of(cls, doc: YamlDocument) -> _EntrySources | None:
        """The map of ``doc``; None when its text does not split into one entry per key, each starting with its
        key as written (then the whole file is parsed)."""
        raw = doc.text.encode()
        starts = top_level_starts(raw)
        data = doc.data
        if starts is None or not isinstance(data, dict) or len(starts) != len(data):
            return None
        spans: dict[str, tuple[int, int, int]] = {}
        lines, counted = 0, 0
        for key, start, end in zip(data, starts, [*starts[1:], len(raw)], strict=True):
            if not isinstance(key, str) or not starts_with_key(raw[start:end], key):
                return None
            lines += raw.count(b"\n", counted, start)  # one pass over the file for all entries
            counted = start
            spans[key] = (start, end, lines)
        return cls(doc, raw, spans)

    def _find(self, path: KeyPath, ancestors: bool) -> Location | None:
        key = path[0] if path else None
        if key in self._spans:
            self._add_entry(*self._spans.pop(key))
            self._parsed.add(key)
        elif key not in self._parsed:  # the document itself, or a key it does not have
            return self._whole_map()._find(path, ancestors)
        return super()._find(path, ancestors)

    def _add_entry(self, start: int, end: int, lines_before: int) -> None:
        entry, _ = parse_yaml(self._raw[start:end].decode("utf-8"), self._doc.file)
        if entry is None:  # read alone once, it reads alone again; if not, the whole file answers
            self.locations.update(self._whole_map().locations)
            return
        for path, at in entry.source.locations.items():
            if path:
                self.locations.setdefault(path, Location(at.file, at.line + lines_before, at.col))

    def _whole_map(self) -> SourceMap:
        if self._whole is None:
            self._whole = _whole_source(self._doc.text, self._doc.file)
        return self._whole


def _mark(file: str, node: yaml.Node) -> Location:
    return Location(file, node.start_mark.line + 1, node.start_mark.column + 1)


_SHOWN_LEVELS = 8
"""key-path levels a refused node's diagnostic shows"""


def _yaml_problem(where: Location, key_path: str, message: str, hint: str) -> Diagnostic:
    """A problem with a file or its YAML (what this module finds): FG-INP-001, whatever the key."""
    return Diagnostic(where, key_path, message, hint, INPUT_FILE)


class _Refused(Exception):
    """The document breaks a bound (depth, size, aliases); building stops at the first such node."""

    def __init__(self, diagnostic: Diagnostic) -> None:
        super().__init__(str(diagnostic))
        self.diagnostic = diagnostic


class _Builder:
    """Turns a composed node graph into dicts/lists/scalars, recording locations and duplicate keys.

    PyYAML's composer shares one node between an anchor and its aliases, so the graph may be exponentially
    smaller than the data (an alias bomb) or cyclic (``&a [*a]``): nesting depth, nodes built, nodes built a
    second time (through an alias) are all bounded, and a collection met again inside itself is refused."""

    def __init__(self, file: str) -> None:
        self.file = file
        self.source = SourceMap()
        self.problems: list[Diagnostic] = []
        self.max_depth, self.max_nodes, self.max_alias_nodes = MAX_DEPTH.value(), MAX_NODES.value(), \
            MAX_ALIAS_NODES.value()
        self.nodes = self.alias_nodes = self.inside_alias = 0
        self.built: set[int] = set()
        """ids of the collections built so far (meeting one again means an alias)"""
        self.open: set[int] = set()
        """ids of the collections being built (meeting one of them again means a recursive alias)"""

    def build(self, node: yaml.Node, path: KeyPath) -> Any:
        self._count(node, path)
        if not isinstance(node, yaml.MappingNode | yaml.SequenceNode):
            return self._scalar(node, path)
        if id(node) in self.open:
            self._refuse(node, path, "recursive YAML alias: a collection contains itself",
                         "write the data out; fabricgen's inputs are trees")
        again = id(node) in self.built
        self.built.add(id(node))
        self.open.add(id(node))
        self.inside_alias += again
        try:
            return self._collection(node, path)
        finally:
            self.inside_alias -= again
            self.open.discard(id(node))

    def _collection(self, node: yaml.MappingNode | yaml.SequenceNode, path: KeyPath) -> Any:
        if node.tag not in _COLLECTION_TAGS:
            self._refuse(node, path, f"unsupported YAML tag {_quoted_tag(node.tag)}", "remove the tag")
        if isinstance(node, yaml.MappingNode):
            return self._mapping(node, path)
        items = []
        for index, child in enumerate(node.value):
            self.source.add((*path, index), _mark(self.file, child))
            items.append(self.build(child, (*path, index)))
        return items

    def _count(self, node: yaml.Node, path: KeyPath) -> None:
        self.nodes += 1
        self.alias_nodes += self.inside_alias > 0
        if len(path) > self.max_depth:
            self._refuse(node, path, f"nested more than {self.max_depth} levels deep", MAX_DEPTH.hint())
        if self.nodes > self.max_nodes:
            self._refuse(node, path, f"more than {self.max_nodes:,} YAML nodes", MAX_NODES.hint())
        if self.alias_nodes > self.max_alias_nodes:
            self._refuse(node, path, f"YAML aliases expand to more than {self.max_alias_nodes:,} nodes",
                         MAX_ALIAS_NODES.hint())

    def _refuse(self, node: yaml.Node, path: KeyPath, message: str, hint: str) -> NoReturn:
        # A path cut short: the first levels say where, and a path as deep as the refused one says nothing more.
        shown = format_key_path(path[:_SHOWN_LEVELS]) + (".…" if len(path) > _SHOWN_LEVELS else "")
        raise _Refused(_yaml_problem(_mark(self.file, node), shown, message, hint))

    def _scalar(self, node: yaml.Node, path: KeyPath) -> Any:
        # Calling the tag's constructor directly (not construct_object) keeps no per-node cache alive.
        constructor = _SCALARS.yaml_constructors.get(node.tag)
        if constructor is None or not isinstance(node, yaml.ScalarNode):
            self.problems.append(_yaml_problem(_mark(self.file, node), format_key_path(path),
                                               f"unsupported YAML tag {_quoted_tag(node.tag)}", "remove the tag"))
            return None
        try:
            return constructor(_SCALARS, node)
        except Exception:
            # An explicit tag on text it cannot type (`!!int x`, `!!binary ?`, `!!timestamp 2024-13-99`). PyYAML's
            # constructors trust their resolver and fail each its own way on text it would never have given them
            # (`!!bool x` a KeyError, `!!timestamp x` an AttributeError), so any failure here means "not that type".
            # The value is not quoted: under `password:` (or any key of connection_options) it is a secret.
            self.problems.append(_yaml_problem(_mark(self.file, node), format_key_path(path),
                                               f"the value is not a valid {_quoted_tag(node.tag)}",
                                               "remove the tag, or write a value of that type"))
            return None

    def _mapping(self, node: yaml.MappingNode, path: KeyPath) -> dict[Any, Any]:
        result: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                self.problems.append(
                    _yaml_problem(_mark(self.file, key_node), format_key_path(path), "YAML merge keys (<<) are "
                                  "not supported", "write the keys out, or use groups.yaml for shared values")
                )
                continue
            key = self._scalar(key_node, path)
            if not isinstance(key, str | int) or isinstance(key, bool):
                key = str(key)
            child_path = (*path, key)
            if key in result:
                first = self.source.locations[child_path]
                self.problems.append(
                    _yaml_problem(_mark(self.file, key_node), format_key_path(child_path),
                                  f"duplicate key {key!r} (first defined at line {first.line})",
                                  "YAML keeps only the last one; merge the two entries")
                )
                continue
            self.source.add(child_path, _mark(self.file, key_node))
            result[key] = self.build(value_node, child_path)
        return result


_COLLECTION_TAGS = frozenset(("tag:yaml.org,2002:map", "tag:yaml.org,2002:seq"))


def _quoted_tag(tag: str) -> str:
    """A tag as a message shows it: short (`!!int`) for YAML's own, quoted when it holds anything unprintable."""
    short = "!!" + tag.removeprefix("tag:yaml.org,2002:") if tag.startswith("tag:yaml.org,2002:") else tag
    return short if short.isascii() and short.isprintable() else repr(short)


def load_yaml(path: Path, display_name: str | None = None,
              jobs: int = 1) -> tuple[YamlDocument | None, list[Diagnostic]]:
    """Load one YAML file. Returns the document (None if unusable) and the problems found.

    Four ways, fastest first: the parse cache (same bytes, same fabricgen: see :func:`cache_dir`); for a
    large file that changed, the cache of its top-level entries (:func:`_load_by_entry`: a commit that edits
    one host of a 12 MB hosts.yaml parses that host only, and a large file nobody parsed yet is parsed in
    ``jobs`` processes); the rapidyaml fast path for plain YAML (fabricgen.load.fastyaml); and PyYAML, which has
    the last word on anything else and reports every problem with its line."""
    name = display_name or str(path)
    try:
        raw = read_input(path)
        text = raw.decode("utf-8")
    except InputFileError as exc:
        return None, [_yaml_problem(Location(name, 1, 1), "<file>", exc.message, exc.hint)]
    except UnicodeDecodeError as exc:
        return None, [_yaml_problem(Location(name, 1, 1), "<file>", f"not UTF-8 text: {exc.reason}",
                                    "save the file as UTF-8")]
    source = source_digest(raw)
    key = _cache_key(source)
    found, data = _cache_get(key, source)
    read_alone = found and _cache_has(f"{key}.read-alone")
    if not found and len(raw) >= BY_ENTRY_MIN_BYTES:
        found, data = _load_by_entry(raw, path, jobs)
        read_alone = found
        if read_alone:
            _cache_mark(f"{key}.read-alone")
    if not found:
        found, data = load_plain(raw, MAX_DEPTH.value(), MAX_NODES.value())
    if found:
        _cache_put(key, source, data)
        doc: YamlDocument | None = YamlDocument(data, name, text, read_alone=read_alone)
        problems: list[Diagnostic] = []
    else:
        doc, problems = parse_yaml(text, name)
        if doc is not None and not problems:
            _cache_put(key, source, doc.data)
    if doc is not None:
        doc.sha256 = source.hex()
    return doc, problems


BY_ENTRY_MIN_BYTES = 256 * 1024
# A top-level entry starts at a line whose first character can begin a mapping key: not indentation, a
# comment, a sequence dash or document marker, a directive, the end of a flow collection, or the `?` / `:`
# of an explicit key.
_ENTRY_START = re.compile(rb"\n[^\s#\-%.\]}?:]")


def _load_by_entry(raw: bytes, path: Path, jobs: int = 1) -> tuple[bool, Any]:
    """A top-level mapping read entry by entry, each entry's data cached by its bytes.

    Every entry must read alone, through the fast path, as a one-key mapping, and no key may repeat; anything
    else (a sequence at the top, a flow collection or quoted scalar running across lines at column 0, an
    anchor used in another entry, a duplicate) returns (False, None) and the whole file is read normally."""
    entries = top_level_entries(raw)
    if entries is None:
        return False, None
    table_path = entry_table_path(path)
    previous = read_entry_table(table_path) if table_path else {}
    digests = [entry_digest(entry) for entry in entries]
    missing = {digest: entry for digest, entry in zip(digests, entries, strict=True)
               if cached_entry(previous, digest) is None}
    parsed = dict(zip(missing, _parse_entries(list(missing.values()), jobs), strict=True))
    table: dict[bytes, bytes] = {}
    data: dict[Any, Any] = {}
    for digest in digests:
        value = parsed[digest] if digest in parsed else cached_entry(previous, digest)
        if not isinstance(value, dict) or len(value) != 1:
            return False, None  # declined by the fast path, or not one key
        if digest not in parsed:
            table[digest] = previous[digest]
        elif not blob_carries_secret(blob := marshal.dumps(value)):  # else parsed every run (parsecache.py)
            table[digest] = blob
        ((key, item),) = value.items()
        if key in data:
            return False, None
        data[key] = item
    if table_path is not None and table.keys() != previous.keys():
        write_entry_table(table_path, table, clean=table.keys())  # each scanned above, or read from the table
    return True, data


def entry_digest(entry: bytes) -> bytes:
    """The key of one top-level entry's text in the entry table (and in the render state). sha256 runs on the
    CPU's SHA instructions: 11 ms for 12 MB in 5,750 entries, where blake2b took 18."""
    return hashlib.sha256(entry).digest()[:16]


def entry_table_path(path: Path) -> Path | None:
    """Where the entry table of the file at ``path`` lives: one table per file and fabricgen/Python version
    (what a version parsed stays its own). None without a cache."""
    folder = cache_dir()
    return folder / f"entries-{_cache_key(source_digest(os.fsencode(path.absolute())))}.marshal" if folder else None


def read_entry_table(file: Path) -> dict[bytes, bytes]:
    """digest → the entry's data, marshalled on its own: reading the table is one cheap pass over bytes
    (9 ms for 5,750 entries), and only the entries a caller asks for are decoded. Each entry is found by the
    digest of its text as read now; the table as a whole is sealed (fabricgen.load.parsecache) to its name."""
    payload = read_sealed(file, _table_source(file))
    if payload is None:
        return {}
    try:
        table = marshal.loads(payload)
    except (EOFError, ValueError, TypeError):
        return {}
    if not isinstance(table, dict) or not all(isinstance(blob, bytes) for blob in table.values()):
        return {}
    return table


def cached_entry(table: dict[bytes, bytes], digest: bytes) -> Any:
    """The data of the entry with this digest, None when the table does not hold it (or holds it damaged)."""
    blob = table.get(digest)
    if blob is None:
        return None
    try:
        return marshal.loads(blob)
    except (EOFError, ValueError, TypeError):
        return None


def write_entry_table(file: Path, table: dict[bytes, bytes], clean: Collection[bytes] = ()) -> None:
    """Write the table, without the entries that carry a secret (fabricgen.load.parsecache): whoever made it.
    ``clean``: the digests whose blobs are known to carry none (scanned already, or read back from a table this
    wrote) — the scan of 5,750 blobs is 0.1 s, most of an update of a 32,768-GPU inventory's table."""
    kept = {digest: blob for digest, blob in table.items() if digest in clean or not blob_carries_secret(blob)}
    write_private(file.parent, file.name, seal(_table_source(file), marshal.dumps(kept)))


def _table_source(file: Path) -> bytes:
    """What an entry table is sealed to: its own name (which the digest of the file's path makes)."""
    return source_digest(file.name.encode())


def blob_carries_secret(blob: bytes) -> bool:
    """Whether an entry's marshalled data carries a secret (a key that looks like a credential), or is damaged:
    never written to the cache."""
    if not blob_may_carry_secret(blob):
        return False
    try:
        return carries_secret(marshal.loads(blob))
    except (EOFError, ValueError, TypeError):
        return True  # damaged: not written either


@dataclass(frozen=True)
class Entries:
    """A loaded file's top-level entries, for the render state (fabricgen/build/neighbourhood.py)."""

    texts: dict[str, bytes]
    """each top-level key → its entry's text"""
    data: dict[str, Any]
    """the file's data, as load read it"""
    read_alone: bool
    """load read every entry on its own, so each entry's data is what its text reads as alone"""
    cabling: bytes | None = None
    """a compact inventory's cabling.csv; then ``texts`` holds each host as built, marshalled as {name: host}"""


def entries_by_key(doc: YamlDocument) -> Entries | None:
    """The entries of a loaded file; None when its text does not split into exactly one entry per key, each
    starting with its key as written."""
    entries = top_level_entries(doc.text.encode())
    data = doc.data
    if entries is None or not isinstance(data, dict) or len(entries) != len(data):
        return None
    found: dict[str, bytes] = {}
    for key, entry in zip(data, entries, strict=True):
        if not isinstance(key, str) or not starts_with_key(entry, key):
            return None
        found[key] = entry
    return Entries(found, data, doc.read_alone)


def starts_with_key(entry: bytes, key: str) -> bool:
    """Whether an entry's text starts with ``key`` as written, plain, then its colon."""
    written = key.encode()
    return entry.startswith(written) and entry[len(written):].lstrip(b" ")[:1] == b":"


PARALLEL_MIN_ENTRIES = 2_000


def _parse_entries(entries: list[bytes], jobs: int) -> list[Any]:
    """Each entry's data, None where the fast path declines. A cold 32,768-GPU hosts.yaml is 5,750 entries and
    4 s of tree walking in Python: ``jobs`` forked processes share it. The data comes back as marshal bytes,
    which load several times faster than the pickled objects a pool would otherwise send."""
    if not worth_forking(jobs, len(entries), PARALLEL_MIN_ENTRIES):
        return _parse_slice(entries)
    parts = fork_map(_parse_slice_marshalled, contiguous(entries, jobs))
    return [value for part in parts for value in marshal.loads(part)]


def parse_entry(entry: bytes) -> Any:
    """One entry's data through the fast path; None where it declines."""
    found, value = load_plain(entry, MAX_DEPTH.value(), MAX_NODES.value())
    return value if found else None


def _parse_slice(entries: list[bytes]) -> list[Any]:
    depth, nodes = MAX_DEPTH.value(), MAX_NODES.value()
    return [value if found else None for found, value in (load_plain(entry, depth, nodes) for entry in entries)]


def _parse_slice_marshalled(entries: list[bytes]) -> bytes:
    return marshal.dumps(_parse_slice(entries))


def top_level_entries(raw: bytes) -> list[bytes] | None:
    """``raw`` cut before each line that starts a top-level key; None unless everything before the first such
    line is comments (and the `---` that yamllint asks for) that both parsers read alike, and no byte-order
    mark follows the start (rapidyaml drops one at the start of an entry read alone, PyYAML keeps it)."""
    starts = top_level_starts(raw)
    return None if starts is None else [raw[start:end] for start, end in zip(starts, [*starts[1:], len(raw)],
                                                                              strict=True)]


def top_level_starts(raw: bytes) -> list[int] | None:
    """Where each of :func:`top_level_entries`' entries starts in ``raw``; None where that is None."""
    # A line break followed by an entry's first character: the regex engine looks for the line break with a
    # fast search, where `^` under MULTILINE tries every position (11 ms instead of 80 ms on 12 MB).
    starts = [match.start() + 1 for match in _ENTRY_START.finditer(raw)]
    if raw[:1] and _ENTRY_START.match(b"\n" + raw[:1]):
        starts.insert(0, 0)
    if len(starts) < 2 or bom_after_start(raw):
        return None
    head = raw[:starts[0]]
    try:
        head.decode("utf-8")
    except UnicodeDecodeError:
        return None
    header = [line.strip() for line in head.splitlines()]
    content = [line for line in header if line and not line.startswith(b"#")]
    if content not in ([], [b"---"]) or not plain_characters(head):  # a NEL in a comment is a line break
        return None
    return starts


def _cache_key(source: bytes) -> str:
    """The name of the cache entry of bytes whose sha256 is ``source``."""
    # Only data is cached (locations are rebuilt from the text when needed), so the file's name is not part of
    # the key; fabricgen's, Python's and the parsers' versions are (marshal's format is Python's; an upgraded
    # parser may read the same bytes otherwise), and so are the limits in force (data cached under generous
    # limits must not pass stricter ones unchecked).
    digest = hashlib.sha256(source)
    limits = [limit.value() for limit in (MAX_DEPTH, MAX_NODES, MAX_ALIAS_NODES)]
    digest.update(f"\0{__version__}\0{sys.version_info[:2]}\0{PARSERS}\0{limits}".encode())
    return digest.hexdigest()


def _cache_get(key: str, source: bytes) -> tuple[bool, Any]:
    """The cached data of the bytes whose digest is ``source``; an entry that is damaged or was not made from
    those bytes is deleted (so that this run writes a good one) and the file parsed again."""
    folder = cache_dir()
    if folder is None:
        return False, None
    path = folder / f"{key}.marshal"
    payload = read_sealed(path, source)
    try:
        # marshal: plain data only, and several times faster to read back than pickle or JSON.
        return (True, marshal.loads(payload)) if payload is not None else (False, None)
    except (EOFError, ValueError, TypeError):
        payload = None
    finally:
        if payload is None:
            with contextlib.suppress(OSError):
                path.unlink(missing_ok=True)
    return False, None


def _cache_has(name: str) -> bool:
    folder = cache_dir()
    return folder is not None and (folder / name).exists()


def _cache_mark(name: str) -> None:
    """An empty file whose name records a fact about a cached file (that it reads entry by entry)."""
    folder = cache_dir()
    if folder is not None and not (folder / name).exists():
        write_private(folder, name, b"")


def _cache_put(key: str, source: bytes, data: Any) -> None:
    """Cache ``data``, parsed from the bytes whose digest is ``source``, unless it carries a secret."""
    folder = cache_dir()
    if folder is None or (folder / f"{key}.marshal").exists():
        return
    try:
        blob = marshal.dumps(data)
    except ValueError:  # data marshal cannot write: not cached
        return
    if blob_may_carry_secret(blob) and carries_secret(data):
        return  # parsed on every run instead (fabricgen.load.parsecache)
    write_private(folder, f"{key}.marshal", seal(source, blob))


def _syntax_message(exc: yaml.MarkedYAMLError) -> str:
    """PyYAML's problem, then its context (what it was reading, and from where when that is elsewhere): `did not
    find expected ',' or ']' (while parsing a flow sequence started at line 2, column 16)`."""
    problem = exc.problem or exc.context or "unreadable YAML"
    if not exc.problem or not exc.context:
        return problem
    context, mark, at = exc.context, exc.context_mark, exc.problem_mark
    if mark is not None and (at is None or (mark.line, mark.column) != (at.line, at.column)):
        context += f" started at line {mark.line + 1}, column {mark.column + 1}"
    return f"{problem} ({context})"


def _syntax_hint(text: str, mark: yaml.Mark | None) -> str:
    """How to fix it; a tab where YAML expects spaces is said in words, since no editor shows it."""
    if mark is not None:
        lines = text.splitlines()
        line = lines[mark.line] if mark.line < len(lines) else ""
        indentation = line[:len(line) - len(line.lstrip(" \t"))]
        if "\t" in indentation or line[mark.column:mark.column + 1] == "\t":
            return "a tab character: YAML indents with spaces only; replace the tab with spaces"
    return "check indentation and quoting around this position"


def parse_yaml(text: str, name: str) -> tuple[YamlDocument | None, list[Diagnostic]]:
    try:
        node = yaml.compose(text, Loader=_Loader)
    except RecursionError:  # PyYAML's pure-Python composer recurses once per level (libyaml stops at 1,000)
        return None, [_yaml_problem(Location(name, 1, 1), "<yaml>", "nested too deep to parse", MAX_DEPTH.hint())]
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = Location(name, mark.line + 1, mark.column + 1) if mark else Location(name, 1, 1)
        return None, [_yaml_problem(where, "<yaml>", f"YAML syntax error: {_syntax_message(exc)}",
                                    _syntax_hint(text, mark))]
    except yaml.YAMLError as exc:
        return None, [_yaml_problem(Location(name, 1, 1), "<yaml>", f"YAML error: {exc}", "fix the YAML syntax")]
    builder = _Builder(name)
    try:
        data = {} if node is None else builder.build(node, ())
    except _Refused as refused:
        return None, [refused.diagnostic]
    return YamlDocument(data, name, text, builder.source), builder.problems
