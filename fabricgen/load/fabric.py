"""load: YAML files → validated pydantic models, with every problem reported as FILE:LINE:COL.

The inventory is a Nornir SimpleInventory. We read the same three files Nornir reads and apply Nornir's
inheritance (host → its groups, depth first → defaults, key by key at the top of ``data``), keeping the
location of every value so that an error inherited from groups.yaml points into groups.yaml.
"""

from __future__ import annotations

import contextlib
import difflib
import hashlib
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from fabricgen.load import inventorycache
from fabricgen.load.sources import HOST_KEYS, open_source
from fabricgen.load.yamlsource import (
    MAX_FILE_BYTES,
    Entries,
    InputFileError,
    SourceMap,
    YamlDocument,
    entries_by_key,
    load_yaml,
    read_input,
    record_hash,
)
from fabricgen.models.diagnostics import (
    DEVICE_FACT_MISSING,
    INPUT_FILE,
    INPUT_REFERENCE,
    INPUT_SCHEMA,
    Diagnostic,
    InputError,
    KeyPath,
    Location,
    format_key_path,
)
from fabricgen.models.intent import PROFILES, Intent, QosClass, check_intent, expand_profile
from fabricgen.models.inventory import (
    Device,
    DeviceData,
    Endpoint,
    Inventory,
    Link,
    PortSpec,
    Problem,
    check_device,
    platform_needs,
)
from fabricgen.platforms import get_platform, platform_names

INVENTORY_FILES = ("hosts.yaml", "groups.yaml", "defaults.yaml")
NORNIR_ATTRIBUTES = ("hostname", "platform", "username", "password", "port", "connection_options")
NAMESPACE = "fabricgen"
"""the key under a Nornir host's ``data`` that may hold fabricgen's keys, in an inventory other automation shares"""
DATA_KEYS = frozenset(DeviceData.model_fields)


@dataclass
class FabricInput:
    """Everything loaded, plus where each value came from (keys start with "intent" or "inventory")."""

    intent: Intent
    inventory: Inventory
    sources: SourceMap
    input_hashes: dict[str, str] = field(default_factory=dict)
    fallback: Location = field(default_factory=lambda: Location("<input>", 1, 1))
    hosts_entries: Entries | None = None
    """hosts.yaml's top-level entries (what the render state records), if the file splits into them"""
    skipped: dict[str, str] = field(default_factory=dict)
    """inventory hosts that are not fabricgen's (another automation's), by name, with the reason"""
    keep: Callable[[], None] | None = None
    """keeps the validated inventory for the next load of the same files (fabricgen.load.inventorycache), when
    it was read and may be kept: the caller calls it where it costs least (render: in a forked worker)"""
    inventory_sources: Callable[[SourceMap], None] | None = None
    """adds where each inventory value was written to ``sources``, when the inventory was restored from the
    cache: done the first time a location in the inventory is asked for (only a problem asks)"""

    def locate(self, path: KeyPath) -> Location:
        if self.inventory_sources is not None and path[:1] == ("inventory",):
            read = self.inventory_sources
            self.inventory_sources = None  # read once, even if reading fails
            read(self.sources)
        found = self.sources.locate(path, self.fallback)
        # A value under the intent that the user never wrote came from `profile:`; point there.
        profile = self.sources.exact(("intent", "profile"))
        if path[:1] == ("intent",) and profile is not None and self.sources.exact(path) is None and \
                found in (self.fallback, self.sources.exact(("intent",))):
            return profile
        return found


def load(intent_path: Path, inventory_dir: Path, *, jobs: int = 1,
         note: Callable[[str], None] | None = None) -> FabricInput:
    """Load and validate both inputs. Raises InputError with every problem found in either. ``jobs``
    processes may share parsing a large inventory file that is not in the parse cache. Inventory hosts that
    are not fabricgen's are skipped, and named in one line given to ``note`` (default: standard error) when the
    inputs load."""
    problems: list[Diagnostic] = []
    sources = SourceMap()
    hashes: dict[str, str] = {}
    skipped: dict[str, str] = {}
    keep: Callable[[], None] | None = None
    read_sources: Callable[[SourceMap], None] | None = None
    inventory: Inventory | None
    try:
        intent = _load_intent(intent_path, sources, problems, hashes)
        key = inventorycache.key_of(inventory_dir)
        restored = inventorycache.restore(key) if key is not None else None
        if restored is not None:
            inventory, entries = restored.inventory, restored.entries
            hashes.update(restored.hashes)
            skipped.update(restored.skipped)
            read_sources = partial(_inventory_sources, inventory_dir)
        else:
            inventory, entries = _load_inventory(inventory_dir, sources, problems, hashes, jobs, skipped)
            # Kept only under the bytes it was read from: a file edited between the key and the read is not.
            if key is not None and inventory is not None and not problems and \
                    all(hashes.get(label) == digest for label, digest in key.hashes.items()):
                keep = inventorycache.keeper(key, inventory, entries, dict(skipped))
    except MemoryError:
        # Within the size bound but beyond this machine's memory (or a ulimit): bad input for here, not a bug.
        raise InputError([Diagnostic(Location(str(inventory_dir), 1, 1), "<file>", "the input does not fit in "
                                     "memory", f"give fabricgen more memory, or lower {MAX_FILE_BYTES.variable} "
                                     "to refuse such files early", INPUT_FILE)]) from None
    if problems or intent is None or inventory is None:
        raise InputError(problems)  # each diagnostic is a line to fix; a peer naming a skipped host says so itself
    if skipped:
        (note or _to_stderr)(skipped_note(skipped))
    return FabricInput(intent, inventory, sources, hashes, Location(str(intent_path), 1, 1), entries, skipped,
                       keep, read_sources)


def _inventory_sources(directory: Path, sources: SourceMap) -> None:
    """Where each value of the inventory at ``directory`` was written, added to ``sources``: the inventory read
    again in full (it loaded without a problem before, and its files are the bytes it was kept for)."""
    _load_inventory(directory, sources, [], {}, 1, {})


def skipped_note(skipped: dict[str, str]) -> str:
    """One line naming the inventory hosts fabricgen skipped, and why."""
    names = ", ".join(f"{name} ({reason})" for name, reason in sorted(skipped.items()))
    return f"note: {len(skipped)} inventory host(s) skipped, not fabricgen's: {names}"


def _to_stderr(line: str) -> None:
    print(line, file=sys.stderr)


def load_intent(path: Path, hashes: dict[str, str] | None = None) -> Intent | None:
    """The intent alone; None at any problem (the caller then runs :func:`load`, which reports it). ``hashes``:
    where to record the sha256 of the bytes it was read from, as :func:`load` records it."""
    problems: list[Diagnostic] = []
    intent = _load_intent(path, SourceMap(), problems, {} if hashes is None else hashes)
    return None if problems else intent


def load_groups(directory: Path, hashes: dict[str, str] | None = None,
                ) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """groups.yaml's and defaults.yaml's data ({} for a file that is absent); None at any problem. ``hashes``: as
    for :func:`load_intent`."""
    found: dict[str, dict[str, Any]] = {}
    for name in INVENTORY_FILES[1:]:
        path = directory / name
        if not path.exists():
            found[name] = {}
            continue
        doc, problems = load_yaml(path)
        if doc is None or problems or not isinstance(doc.data, dict | None):
            return None
        if hashes is not None:
            record_hash(doc, f"inventory/{name}", hashes)
        found[name] = doc.data or {}
    return found["groups.yaml"], found["defaults.yaml"]


def input_hashes(intent_path: Path, inventory_dir: Path, inventory_files: tuple[str, ...] = INVENTORY_FILES,
                 ) -> dict[str, str]:
    """What :func:`load` records in ``FabricInput.input_hashes`` for these files as they are now: label → sha256 of
    each input file present (of the inventory, those named). A check before a load: load records the hashes of
    the bytes it parsed, which an editor's save may have changed since."""
    hashes: dict[str, str] = {}
    _hash(intent_path, f"intent/{intent_path.name}", hashes)
    for name in inventory_files:
        if (inventory_dir / name).exists():
            _hash(inventory_dir / name, f"inventory/{name}", hashes)
    return hashes


def _hash(path: Path, label: str, hashes: dict[str, str]) -> None:
    with contextlib.suppress(InputFileError):  # an unreadable, unbounded or odd file is reported by load_yaml
        hashes[label] = hashlib.sha256(read_input(path)).hexdigest()


# --- intent -------------------------------------------------------------------------------------------

def _load_intent(path: Path, sources: SourceMap, problems: list[Diagnostic],
                 hashes: dict[str, str]) -> Intent | None:
    doc, found = load_yaml(path)
    problems += found
    if doc is None:
        return None
    record_hash(doc, f"intent/{path.name}", hashes)
    if not isinstance(doc.data, dict):
        problems.append(Diagnostic(doc.at(()), "<root>", "the intent must be a mapping",
                                   "start with `fabric: <name>`"))
        return None
    sources.graft(("intent",), doc)
    data = expand_profile(doc.data)
    profile_at = doc.at(("profile",)) if "profile" in doc.data else None
    misnamed = _misnamed_profile_parts(doc)
    problems += [problem for problem, _ in misnamed]
    covered = [cause for _, cause in misnamed]
    intent: Intent | None = _validate(Intent, data, lambda loc: _intent_location(doc, loc, profile_at), problems,
                                      consequence=lambda loc, kind: any(cause(loc, kind) for cause in covered))
    if intent is None or misnamed:
        return None
    for key_path, message, hint, rule in check_intent(intent):
        problems.append(Diagnostic(_intent_location(doc, key_path, profile_at), format_key_path(key_path),
                                   message, hint, rule))
    return intent


def _intent_location(doc: YamlDocument, path: KeyPath, profile_at: Location | None) -> Location:
    # A value the user did not write came from the profile: point at `profile:`.
    if profile_at is not None and doc.source.exact(path) is None:
        return profile_at
    return doc.at(path)


# --- a misnamed profile, or a misnamed class of one ------------------------------------------------------------

Consequence = Callable[[tuple[Any, ...], str], bool]
"""Whether a pydantic error (its ``loc`` and ``type``) only repeats a problem already reported."""


def _misnamed_profile_parts(doc: YamlDocument) -> list[tuple[Diagnostic, Consequence]]:
    """An unknown ``profile:`` name, and a class the intent overrides under a profile that the profile does not
    have and that is no whole class of its own: each one problem, naming the wrong name and the accepted ones,
    with the pydantic errors it causes (the keys the profile would have given, "missing") left out."""
    raw = doc.data
    name = raw.get("profile")
    if name is None:
        return []
    if not isinstance(name, str) or name not in PROFILES:
        close = difflib.get_close_matches(str(name), list(PROFILES), n=1)
        known = ", ".join(sorted(PROFILES))
        hint = f"did you mean {close[0]!r}? " if close else ""
        given = {key for profile in PROFILES.values() for key in profile}
        problem = Diagnostic(doc.at(("profile",)), "profile", f"unknown profile {_shown(name)}",
                             f"{hint}the profiles are: {known} (`fabricgen profile list`)")
        return [(problem, lambda loc, kind: loc[:1] == ("profile",) or (kind == "missing" and len(loc) == 1
                                                                        and loc[0] in given))]
    return [_misnamed_class(doc, name, class_name) for class_name in _incomplete_new_classes(raw, name)]


def _incomplete_new_classes(raw: dict[str, Any], profile: str) -> list[str]:
    """Classes under qos.classes that ``profile`` lacks and that miss a key every class needs."""
    qos = raw.get("qos")
    classes = qos.get("classes") if isinstance(qos, dict) else None
    if not isinstance(classes, dict):
        return []
    known = PROFILES[profile]["qos"]["classes"]
    required = [key for key, info in QosClass.model_fields.items() if info.is_required()]
    return [str(name) for name, value in classes.items() if name not in known and isinstance(value, dict | None)
            and any(key not in (value or {}) for key in required)]


def _misnamed_class(doc: YamlDocument, profile: str, name: str) -> tuple[Diagnostic, Consequence]:
    known = sorted(PROFILES[profile]["qos"]["classes"])
    close = difflib.get_close_matches(name, known, n=1)
    required = [key for key, info in QosClass.model_fields.items() if info.is_required()]
    hint = (f"did you mean {close[0]!r}? " if close else "") + \
        f"profile {profile}'s classes are {', '.join(known)}; a new class needs {', '.join(required)}"
    path = ("qos", "classes", name)
    problem = Diagnostic(doc.at(path), format_key_path(tuple(map(_printable, path))),
                         f"class {name!r} is not one of profile {profile}'s classes", hint)
    return problem, lambda loc, kind: kind == "missing" and loc[:3] == path


def _shown(value: Any) -> str:
    """A refused scalar as a message quotes it: short, and on one line."""
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:37]}..."


# --- pydantic errors → diagnostics ----------------------------------------------------------------------

def _validate(model: type[BaseModel], data: Any, locate: Any, problems: list[Diagnostic],
              prefix: KeyPath = (), spelling: Callable[[KeyPath], KeyPath] | None = None,
              consequence: Consequence | None = None) -> Any:
    """``data`` as ``model``, or None with each problem added to ``problems``; ``spelling`` turns a key path of
    ``data`` into the one the file holds, where they differ; an error ``consequence`` says is the consequence of
    a problem already reported is left out."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        for error in exc.errors(include_url=False):
            loc = _input_path(data, error["loc"])
            if consequence is not None and consequence(loc, str(error["type"])):
                continue
            message, hint = _explain(model, loc, error)
            shown = tuple(map(_printable, prefix + (spelling(loc) if spelling else loc)))
            # A validator that is a lint rule's condition names the rule (schema.intent's model validators).
            rule = str((error.get("ctx") or {}).get("rule", INPUT_SCHEMA))
            problems.append(Diagnostic(locate(loc), format_key_path(shown), message, hint, rule))
        return None


def _printable(part: Any) -> Any:
    """A key of the input as a key path shows it: quoted (``repr``) when it holds anything but printable ASCII, so
    that a refused key carrying a line break cannot break the diagnostic line it is reported on."""
    if isinstance(part, str) and not (part.isascii() and part.isprintable()):
        return repr(part)
    return part


def _input_path(data: Any, loc: tuple[Any, ...]) -> tuple[Any, ...]:
    """pydantic's error location as a key path of ``data``: without the parts pydantic inserts (a union member's
    name, ``[key]``), told apart from the input's own keys by walking the input (a user's key may be spelt
    ``a[1]`` or ``function-after``)."""
    path: list[Any] = []
    current: Any = data
    for part in loc:
        if _holds(current, part):
            current = current[part]
        elif _is_union_tag(part):
            continue
        else:
            current = None  # a key the input lacks (a missing one), or a value pydantic made of the input
        path.append(part)
    return tuple(path)


def _holds(value: Any, part: Any) -> bool:
    """``value`` (a mapping or a list of the input) has ``part`` as a key or index."""
    if isinstance(value, dict):
        return part in value
    return isinstance(value, list) and isinstance(part, int) and 0 <= part < len(value)


def _is_union_tag(part: Any) -> bool:
    # pydantic inserts the union member's name into `loc` ("list[...]", "literal['default']").
    return isinstance(part, str) and ("[" in part or part in ("function-before", "function-after"))


def _explain(model: type[BaseModel], loc: tuple[Any, ...], error: Any) -> tuple[str, str]:
    kind = error["type"]
    if kind in ("extra_forbidden", "missing") and not loc:  # no key to name: pydantic's own words
        return str(error["msg"]), _value_hint(error)
    if kind == "extra_forbidden":
        allowed = _allowed_keys(model, loc[:-1])
        close = difflib.get_close_matches(str(loc[-1]), allowed, n=1)
        hint = f"did you mean {close[0]!r}?" if close else f"allowed keys: {', '.join(allowed)}"
        return f"unknown key {loc[-1]!r}", hint
    if kind == "missing":
        return f"missing required key {loc[-1]!r}", "add it (see `fabricgen schema`)"
    message = str(error["msg"]).removeprefix("Value error, ")
    return message, _value_hint(error)


def _value_hint(error: Any) -> str:
    ctx = error.get("ctx") or {}
    if "hint" in ctx:  # the schema's own types say how to fix their values (fabricgen.models.common.refuse)
        return str(ctx["hint"])
    if "expected" in ctx:
        return f"expected {ctx['expected']}"
    if "pattern" in ctx:
        return "use letters, digits, '-', '_' (names end up in device configs)"
    return ""


def _allowed_keys(model: type[BaseModel], loc: tuple[Any, ...]) -> list[str]:
    """Walk the schema along ``loc`` to the model whose keys were expected there."""
    current: Any = model
    for part in loc:
        if isinstance(current, type) and issubclass(current, BaseModel):
            field_info = _field_by_key(current, str(part))
            current = _unwrap(field_info.annotation) if field_info else None
        elif _is_dict_annotation(current):
            current = _unwrap(current.__args__[1])
        else:
            return []
    if isinstance(current, type) and issubclass(current, BaseModel):
        return sorted(f.alias or name for name, f in current.model_fields.items())
    return []


def _field_by_key(model: type[BaseModel], key: str) -> Any:
    for name, info in model.model_fields.items():
        if key in (name, info.alias):
            return info
    return None


def _is_dict_annotation(annotation: Any) -> bool:
    return getattr(annotation, "__origin__", None) is dict


def _unwrap(annotation: Any) -> Any:
    """Optional[X] → X; Annotated[X, ...] → X."""
    args = getattr(annotation, "__args__", ())
    if getattr(annotation, "__metadata__", None) is not None:
        return _unwrap(annotation.__origin__)
    if args and type(None) in args:
        return _unwrap(next(a for a in args if a is not type(None)))
    return annotation


# --- inventory ------------------------------------------------------------------------------------------

@dataclass
class _InventoryFiles:
    hosts: dict[str, Any]
    groups: dict[str, Any]
    defaults: dict[str, Any]
    docs: dict[str, YamlDocument]


def _read_inventory_files(directory: Path, problems: list[Diagnostic], hashes: dict[str, str],
                          jobs: int) -> _InventoryFiles | None:
    docs: dict[str, YamlDocument] = {}
    for name in INVENTORY_FILES:
        path = directory / name
        if not path.exists():
            if name == "hosts.yaml":
                problems.append(Diagnostic(Location(str(path), 1, 1), "<file>", "inventory has no hosts.yaml",
                                           "point -i at a Nornir SimpleInventory directory", INPUT_FILE))
            continue
        doc, found = load_yaml(path, jobs=jobs)
        problems += found
        if doc is not None:
            record_hash(doc, f"inventory/{name}", hashes)
        if doc is not None and doc.data is None:
            doc.data = {}  # an empty document (`---` alone): no entries, as for an empty file
        if doc is not None and not isinstance(doc.data, dict):
            problems.append(Diagnostic(doc.at(()), "<root>", f"{name} must be a mapping", "see Nornir's "
                                       "SimpleInventory format"))
            doc = None
        if doc is not None:
            docs[name] = doc
    if "hosts.yaml" not in docs:
        return None
    data = {name: (docs[name].data if name in docs else {}) for name in INVENTORY_FILES}
    hosts = _entries(docs.get("hosts.yaml"), "host", problems)
    groups = _entries(docs.get("groups.yaml"), "group", problems)
    if not docs["hosts.yaml"].data:
        problems.append(Diagnostic(docs["hosts.yaml"].at(()), "<root>", "hosts.yaml defines no hosts",
                                   "add the fabric's devices (see Nornir's SimpleInventory format)"))
    return _InventoryFiles(hosts, groups, data["defaults.yaml"] or {}, docs)


def _entries(doc: YamlDocument | None, kind: str, problems: list[Diagnostic]) -> dict[str, Any]:
    """hosts.yaml's (or groups.yaml's) entries that have Nornir's shape, a name (a string) → a mapping or
    nothing; each other entry is reported and left out, so that inheritance only ever reads mappings. A group's
    own `groups` must list names (a host's is validated with the host)."""
    if doc is None:
        return {}
    entries: dict[str, Any] = {}
    for name, entry in doc.data.items():
        if not isinstance(name, str):
            problems.append(Diagnostic(doc.at((name,)), str(name), f"a {kind} name must be a string, not "
                                       f"{type(name).__name__} {name!r}", f'quote it: "{name}":'))
        elif entry is not None and not isinstance(entry, dict):
            problems.append(Diagnostic(doc.at((name,)), format_key_path((_printable(name),)), f"a {kind} entry "
                                       f"must be a mapping, not {type(entry).__name__}",
                                       "write its keys under it (hostname, platform, groups, data)"))
        else:
            entries[name] = entry or {}
            if kind == "group":
                _check_group_names(doc, name, entries[name], problems)
    return entries


def _check_group_names(doc: YamlDocument, name: str, entry: dict[str, Any], problems: list[Diagnostic]) -> None:
    groups = entry.get("groups")
    if groups is None or (isinstance(groups, list) and all(isinstance(group, str) for group in groups)):
        return
    problems.append(Diagnostic(doc.at((name, "groups")), format_key_path((_printable(name), "groups")),
                               "groups must be a list of group names", "write it as a list: groups: [name, ...]"))


def _names(groups: Any) -> list[Any]:
    """A `groups` value as inheritance walks it: a list, or nothing (what is not a list is reported elsewhere)."""
    return groups if isinstance(groups, list) else []


def _group_chain(files: _InventoryFiles, groups: list[Any], seen: tuple[str, ...] = ()) -> list[str]:
    """Groups in Nornir's lookup order: each group, then its parents, depth first."""
    chain: list[str] = []
    for group in groups:
        name = str(group)
        if name in seen or name not in files.groups:
            continue
        chain.append(name)
        chain += _group_chain(files, _names(files.groups[name].get("groups")), (*seen, name))
    return chain


@dataclass
class _MissingGroup:
    """A group some host or group names that groups.yaml does not define: reported once, at the first place
    naming it, with every host that lacks it (directly or through one of its groups)."""

    name: str
    file: str
    path: KeyPath
    hosts: list[str] = field(default_factory=list)

    def diagnostic(self, files: _InventoryFiles) -> Diagnostic:
        doc = files.docs.get(self.file)
        where = doc.at(self.path) if doc is not None else Location("<inventory>", 1, 1)
        defined = sorted(files.groups)
        close = difflib.get_close_matches(self.name, defined, n=1, cutoff=0.5)  # spines → spine_group: 0.59
        hint = f"did you mean {close[0]!r}?" if close else \
            f"define it in groups.yaml, {'whose groups are ' + ', '.join(defined) if defined else 'which has none'}"
        named_by = ", ".join(self.hosts[:8]) + (f" and {len(self.hosts) - 8} more" if len(self.hosts) > 8 else "")
        return Diagnostic(where, format_key_path(tuple(map(_printable, self.path))),
                          f"group {self.name!r} is not defined in groups.yaml (hosts without it: {named_by})", hint,
                          INPUT_REFERENCE)


def _missing_groups(files: _InventoryFiles) -> list[_MissingGroup]:
    """Every group named by a host (or by a group a host is in) that groups.yaml lacks, in the order hosts.yaml
    first names them; Nornir itself refuses such an inventory."""
    missing: dict[str, _MissingGroup] = {}
    for host, entry in files.hosts.items():
        for name, file, path in _group_references(files, host, entry):
            group = missing.setdefault(name, _MissingGroup(name, file, path))
            if host not in group.hosts:
                group.hosts.append(host)
    return list(missing.values())


def _group_references(files: _InventoryFiles, host: str, entry: dict[str, Any]) -> list[tuple[str, str, KeyPath]]:
    """The undefined groups ``host`` inherits from: each name, and the file and key path naming it."""
    found: list[tuple[str, str, KeyPath]] = []
    pending: list[tuple[Any, str, KeyPath]] = [(entry.get("groups"), "hosts.yaml", (host, "groups"))]
    seen: set[str] = set()
    while pending:
        groups, file, at = pending.pop(0)
        for index, group in enumerate(_names(groups)):
            name = str(group)
            if name in seen:
                continue
            seen.add(name)
            if name in files.groups:
                pending.append((files.groups[name].get("groups"), "groups.yaml", (name, "groups")))
            else:
                found.append((name, file, (*at, index)))
    return found


def _effective_host(files: _InventoryFiles, name: str, sources: SourceMap) -> _Host:
    """One host with Nornir inheritance applied; records each value's origin under ("inventory", name)."""
    host = files.hosts[name]
    layers: list[_Layer] = [_Layer(host, "hosts.yaml", (name,), own=True)]
    for group in _group_chain(files, _names(host.get("groups"))):
        layers.append(_Layer(files.groups[group], "groups.yaml", (group,), own=True))
    layers.append(_Layer(files.defaults, "defaults.yaml", (), own=False))
    effective: dict[str, Any] = {"name": name, "groups": host.get("groups") or []}
    _graft(sources, files, "hosts.yaml", (name,), ("inventory", name))
    for layer in layers:
        for attr in NORNIR_ATTRIBUTES:
            if attr in layer.entry and attr not in effective:
                effective[attr] = layer.entry[attr]
                _graft(sources, files, layer.file, (*layer.prefix, attr), ("inventory", name, attr))
    data = _HostData(name)
    for layer in layers:
        data.inherit(layer, files, sources)
    effective["data"] = data.chosen()
    skipped = data.skip_reason()
    problems = [] if skipped else data.problems(files) + _unknown_host_keys(files, name)
    return _Host(effective, data.namespace is not None, skipped, problems)


def _unknown_host_keys(files: _InventoryFiles, name: str) -> list[Diagnostic]:
    """A key of a fabricgen host's entry that Nornir does not read (it ignores them): a misspelt `hostnme` would
    otherwise surface as a missing hostname, or not at all when a group gives one."""
    problems = []
    for key in files.hosts[name]:
        if key not in HOST_KEYS:
            close = difflib.get_close_matches(str(key), HOST_KEYS, n=1)
            where = files.docs["hosts.yaml"].at((name, key)) if "hosts.yaml" in files.docs else \
                Location("<inventory>", 1, 1)
            problems.append(Diagnostic(where, format_key_path((_printable(name), _printable(key))),
                                       f"unknown key {key!r} (Nornir reads {', '.join(HOST_KEYS)})",
                                       f"did you mean {close[0]!r}?" if close else "move it under data"))
    return problems


@dataclass(frozen=True, slots=True)
class _Layer:
    """One place a host's keys come from: its hosts.yaml entry, one of its groups, or defaults.yaml."""

    entry: dict[str, Any]
    file: str
    prefix: KeyPath
    own: bool
    """the host's entry or one of its groups: keys written here make the host fabricgen's (defaults.yaml's do
    not: they apply to every host of an inventory other automation shares)"""


@dataclass
class _Host:
    """A host after inheritance: what is validated as a :class:`Device`, or why it is skipped or refused."""

    effective: dict[str, Any]
    namespaced: bool
    skipped: str | None
    problems: list[Diagnostic]


@dataclass
class _HostData:
    """A host's ``data`` as fabricgen reads it, inherited key by key (host → groups → defaults), in one of two
    layouts, decided per host from the places it inherits from:

    - the namespace: when the host, one of its groups or defaults.yaml has ``data.fabricgen``, fabricgen reads
      only that mapping (merged key by key, although Nornir itself takes a top-level ``data`` key whole), and
      the other keys under ``data`` belong to other automation and are ignored; a host whose own entry and
      groups write no ``data.fabricgen`` and that gets no role is not fabricgen's (so ``data: {fabricgen: {}}``
      in defaults.yaml switches a shared inventory to this layout without claiming every host);
    - flat (no ``data.fabricgen`` anywhere it inherits from): every key under ``data`` is fabricgen's, so a
      misspelt key stays an error; a host with no fabricgen key of its own and no role is not fabricgen's.

    A fabricgen host with keys in both places (``data.ports`` beside ``data.fabricgen``) is refused, naming
    both: fabricgen cannot tell which was meant. Where each key was written is recorded under one path,
    ``("inventory", host, "data", key)``, whatever the layout, so every later stage locates a key without
    knowing the layout."""

    host: str
    flat: dict[str, Any] = field(default_factory=dict)
    namespace: dict[str, Any] | None = None
    opted_out: _Where | None = None
    opt_out_word: str = "null"
    bad_namespace: _Where | None = None
    first_flat_key: _Where | None = None
    first_namespace: _Where | None = None
    # a fabricgen key written in the host's own entry or one of its groups, in either layout
    claimed_flat: bool = False
    claimed_namespace: bool = False

    def inherit(self, layer: _Layer, files: _InventoryFiles, sources: SourceMap) -> None:
        data = layer.entry.get("data")
        if not isinstance(data, dict):
            return  # absent (or not a mapping, which the host's schema check reports where it matters)
        for key, value in data.items():
            if key == NAMESPACE:
                self._namespace_layer(value, layer, files, sources)
            elif key not in self.flat:
                self.flat[key] = value
                _graft(sources, files, layer.file, (*layer.prefix, "data", key), ("inventory", self.host, "data", key))
                if key in DATA_KEYS:
                    self.claimed_flat |= layer.own
                    self.first_flat_key = self.first_flat_key or _Where(layer.file, (*layer.prefix, "data", key))

    def _namespace_layer(self, value: Any, layer: _Layer, files: _InventoryFiles, sources: SourceMap) -> None:
        where = _Where(layer.file, (*layer.prefix, "data", NAMESPACE))
        if value is None or value is False:
            # The most specific layer that writes `fabricgen:` decides, as Nornir's own inheritance would.
            if self.namespace is None and self.opted_out is None:
                self.opted_out, self.opt_out_word = where, "false" if value is False else "null"
            return
        if not isinstance(value, dict):
            self.bad_namespace = self.bad_namespace or where
            return
        if self.opted_out is not None:
            return
        self.namespace = self.namespace if self.namespace is not None else {}
        self.first_namespace = self.first_namespace or where
        self.claimed_namespace |= layer.own
        for key, item in value.items():
            if key not in self.namespace:
                self.namespace[key] = item
                _graft(sources, files, layer.file, (*where.path, key), ("inventory", self.host, "data", key))

    def chosen(self) -> dict[str, Any]:
        """The keys fabricgen validates: the namespace's when the host has one, else every key under data."""
        return self.namespace if self.namespace is not None else self.flat

    def skip_reason(self) -> str | None:
        """Why the host is not fabricgen's, or None when it is: it says `fabricgen: null` (or false), or it has no
        role and no fabricgen key of its own (defaults.yaml's apply to every host, and do not count)."""
        if self.opted_out is not None:
            return f"data.{NAMESPACE}: {self.opt_out_word} in {self.opted_out.file}"
        claimed = self.claimed_namespace if self.namespace is not None else self.claimed_flat
        if self.bad_namespace is None and self.chosen().get("role") is None and not claimed:
            return "no fabricgen role"
        return None

    def problems(self, files: _InventoryFiles) -> list[Diagnostic]:
        if self.skip_reason() is not None:
            return []
        if self.bad_namespace is not None:
            return [Diagnostic(self.bad_namespace.locate(files), f"{self.host}.data.{NAMESPACE}",
                               f"data.{NAMESPACE} must be a mapping of fabricgen's keys",
                               f"write its keys under it (role, ports, ...), or `{NAMESPACE}: null` for a host "
                               "fabricgen does not configure")]
        if self.namespace is None or self.first_flat_key is None:
            return []
        flat, namespace = self.first_flat_key, self.first_namespace
        assert namespace is not None
        key = flat.path[-1]
        # Each named by the file that holds it: a compact inventory's hosts are in devices.yaml, not hosts.yaml.
        here, there = flat.locate(files), namespace.locate(files)
        return [Diagnostic(here, f"{self.host}.data.{key}",
                           f"fabricgen's keys are both directly under data (data.{key}, {Path(here.file).name}) and "
                           f"under data.{NAMESPACE} ({Path(there.file).name}:{there.line}); fabricgen cannot "
                           f"tell which layout is meant", f"keep one layout for the host and its groups: move "
                           f"data.{key} into data.{NAMESPACE}")]


@dataclass(frozen=True, slots=True)
class _Where:
    file: str
    path: KeyPath

    def locate(self, files: _InventoryFiles) -> Location:
        doc = files.docs.get(self.file)
        return doc.at(self.path) if doc is not None else Location("<inventory>", 1, 1)


def _graft(sources: SourceMap, files: _InventoryFiles, file: str, at: KeyPath, to: KeyPath) -> None:
    doc = files.docs.get(file)
    if doc is not None:
        sources.graft(to, doc, at)


def _load_inventory(directory: Path, sources: SourceMap, problems: list[Diagnostic], hashes: dict[str, str],
                    jobs: int, skipped: dict[str, str]) -> tuple[Inventory | None, Entries | None]:
    files, from_files = _read_inventory(directory, problems, hashes, jobs)
    if files is None:
        return None, None
    missing = _missing_groups(files)
    problems += [group.diagnostic(files) for group in missing]
    # A host without one of its groups lacks what the group gives (platform, role, ...): each of its other
    # problems, and each peer naming it, would only repeat the missing group's error.
    # So is a host refused for a problem of its own: its peers' entries naming it are checked once it loads.
    unresolved = {host for group in missing for host in group.hosts}
    devices: dict[str, Device] = {}
    for name in files.hosts:
        if name in unresolved:
            continue
        host = _effective_host(files, name, sources)
        problems += host.problems
        if host.skipped is not None:
            skipped[name] = host.skipped
            continue
        if host.problems:
            unresolved.add(name)
            continue
        device = _validate(Device, host.effective, lambda loc, n=name: sources.locate(
            ("inventory", n, *loc), Location(str(directory / "hosts.yaml"), 1, 1)), problems, (str(name),),
            _namespaced if host.namespaced else None)
        if device is None:
            unresolved.add(name)
            continue
        problems += _check_platform(device, sources, host.namespaced)
        problems += _check_device(device, sources, host.namespaced)
        devices[device.name] = device
    links = _build_links(devices, sources, problems, skipped=frozenset(skipped), unresolved=frozenset(unresolved))
    if not devices and not problems:
        problems.append(_none_is_fabricgens(files, skipped))
    if problems:
        return None, None
    hosts = files.docs["hosts.yaml"]
    # every part validated above
    # A compact inventory's hosts document carries the hosts it built (fabricgen.load.sources.compact).
    entries = entries_by_key(hosts) if from_files else getattr(hosts, "entries", None)
    return Inventory.model_construct(devices=devices, links=links), entries


def _none_is_fabricgens(files: _InventoryFiles, skipped: dict[str, str]) -> Diagnostic:
    """The problem of an inventory whose every host was skipped as another automation's: there is nothing to
    render, lint or push, and a role missing from a shared group is the likely cause."""
    name, reason = next(iter(sorted(skipped.items())))
    more = f" and {len(skipped) - 1} more" if len(skipped) > 1 else ""
    return Diagnostic(files.docs["hosts.yaml"].at(()), "<root>",
                      f"none of the inventory's hosts is fabricgen's: each was skipped ({name}: {reason}{more})",
                      "give each device fabricgen manages its role (data.role, on the host or one of its groups); "
                      "a host without one belongs to other automation")


# --- inventory sources (issue 29): which source `-i` names; all of them give the same Nornir data -----------

def _read_inventory(directory: Path, problems: list[Diagnostic], hashes: dict[str, str],
                    jobs: int) -> tuple[_InventoryFiles | None, bool]:
    """The inventory's Nornir hosts, groups and defaults from the source ``-i`` names (see
    fabricgen.load.sources), and whether it is the SimpleInventory files (whose hosts.yaml entries the
    render state records for the neighbourhood update)."""
    source = open_source(directory)
    if source is None:
        return _read_inventory_files(directory, problems, hashes, jobs), True
    read = source.read(problems, hashes, jobs)
    return (None if read is None else _InventoryFiles(read.hosts, read.groups, read.defaults, read.docs)), False


def _namespaced(path: KeyPath) -> KeyPath:
    """A key path under a device as its file spells it when the host keeps fabricgen's keys in the namespace."""
    return ("data", NAMESPACE, *path[1:]) if path[:1] == ("data",) else path


def validate_hosts(hosts: dict[str, Any], groups: dict[str, Any], defaults: dict[str, Any],
                   focus: set[str]) -> tuple[dict[str, Device], list[Link]] | None:
    """Some hosts of an inventory whose other hosts were valid as they stand: each validated as :func:`load`
    validates it, and the cables made by or naming a device in ``focus`` checked and built as load builds
    them (``hosts`` must hold those devices' peers). None at any problem, or when one of them is a host load
    skips: the caller then loads everything, which reports it with its file and line."""
    if not (_well_shaped(hosts) and _well_shaped(groups)):
        return None
    files = _InventoryFiles({name: entry or {} for name, entry in hosts.items()},
                            {name: entry or {} for name, entry in groups.items()}, defaults, {})
    sources, problems = SourceMap(), list[Diagnostic]()
    if any(_group_references(files, name, files.hosts[name]) for name in hosts):
        return None
    devices: dict[str, Device] = {}
    for name in hosts:
        host = _effective_host(files, name, sources)
        if host.skipped is not None or host.problems:
            return None
        device = _validate(Device, host.effective, _nowhere, problems)
        if device is None or _check_platform(device, sources) or _check_device(device, sources):
            return None
        devices[name] = device
    links = _build_links(devices, sources, problems, focus)
    return None if problems else (devices, links)


def _well_shaped(entries: dict[Any, Any]) -> bool:
    """Every entry has the shape :func:`_entries` lets through (a string → a mapping or nothing)."""
    return all(isinstance(name, str) and isinstance(entry, dict | None) for name, entry in entries.items())


def _nowhere(path: KeyPath) -> Location:
    return Location("<inventory>", 1, 1)


def _check_platform(device: Device, sources: SourceMap, namespaced: bool = False) -> list[Diagnostic]:
    """The platform is one fabricgen renders, and the device has the facts that platform needs."""
    if device.platform not in platform_names():
        where = sources.locate(("inventory", device.name, "platform"), Location("<inventory>", 1, 1))
        return [Diagnostic(where, f"{device.name}.platform", f"unknown platform {device.platform!r}",
                           f"one of: {', '.join(platform_names())}")]
    mgmt = get_platform(device.platform).capability.mgmt_interface
    return _diagnostics(device, sources, namespaced, platform_needs(device, mgmt), DEVICE_FACT_MISSING)


def _check_device(device: Device, sources: SourceMap, namespaced: bool = False) -> list[Diagnostic]:
    """The device's names that its platform or host script would read as more than one thing."""
    return _diagnostics(device, sources, namespaced, check_device(device), INPUT_SCHEMA)


def _diagnostics(device: Device, sources: SourceMap, namespaced: bool, found: list[Problem],
                 rule: str) -> list[Diagnostic]:
    shown = _namespaced if namespaced else (lambda path: path)
    return [Diagnostic(sources.locate(("inventory", device.name, *path), Location("<inventory>", 1, 1)),
                       format_key_path((device.name, *map(_printable, shown(path)))), message, hint, rule)
            for path, message, hint in found]


# --- links ----------------------------------------------------------------------------------------------

def _build_links(devices: dict[str, Device], sources: SourceMap, problems: list[Diagnostic],
                 focus: set[str] | None = None, skipped: frozenset[str] = frozenset(),
                 unresolved: frozenset[str] = frozenset()) -> list[Link]:
    """Cables from `peer` declarations on either end; both ends must exist and agree. With ``focus``, only the
    declarations made by or naming a device in it (``devices`` holds those devices and their peers). A peer
    among the ``skipped`` hosts (in the inventory, but not fabricgen's) is reported as such; one among the
    ``unresolved`` hosts (a group of theirs is missing, reported already) is not checked."""
    claimed: dict[tuple[str, str], tuple[str, str]] = {}
    links: dict[tuple[tuple[str, str], tuple[str, str]], Link] = {}
    reporter_at = _LinkReporter(sources, problems, skipped, unresolved).at
    for device in sorted(devices.values(), key=lambda d: d.name):
        name = device.name
        for port, spec in device.data.ports.items():
            if spec.peer is not None and (focus is None or name in focus or spec.peer.partition(":")[0] in focus):
                _declared_peer(devices, claimed, links, (name, port), spec, reporter_at)
    return sorted(links.values(), key=lambda link: (link.a.device, link.a.port))


def _declared_peer(devices: dict[str, Device], claimed: dict[tuple[str, str], tuple[str, str]],
                   links: dict[tuple[tuple[str, str], tuple[str, str]], Link], here: tuple[str, str], spec: PortSpec,
                   reporter_at: Callable[[tuple[str, str]], _PortReporter]) -> None:
    """One `peer` entry: checked, and its cable recorded. Runs 70k times at 32,768 GPUs, so the common case
    (a good entry) is decided inline, and the reporter of ``here``'s entry (``reporter_at``) and the helpers
    below are made only to word a problem."""
    assert spec.peer is not None
    name, _, port = spec.peer.partition(":")
    far_device = devices.get(name)
    far = far_device.data.ports.get(port) if far_device is not None else None
    if far is None:
        _peer_endpoint(spec.peer, devices, reporter_at(here))  # reports which part is unknown
        return
    there = (name, port)
    if there == here:
        reporter_at(here)("a port cannot be its own peer", "name the device:port at the other end of the cable")
        return
    # Each end claimed by this cable (written out, not looped: 140k claims at 32,768 GPUs).
    previous = claimed.setdefault(here, there)
    if previous != there:
        _used_twice(reporter_at(here), here, previous, there)
    previous = claimed.setdefault(there, here)
    if previous != here:
        _used_twice(reporter_at(here), there, previous, here)
    if far.peer is not None and far.peer != f"{here[0]}:{here[1]}":
        reporter_at(here)(f"{here[0]}:{here[1]} says its peer is {there[0]}:{there[1]}, but that port says its peer "
                          f"is {far.peer}", "make both ends name each other (or declare the link on one end only)")
    a, b, spec_a, spec_b = (here, there, spec, far) if here < there else (there, here, far, spec)
    key = (a, b)
    if key in links:
        return  # declared on both ends: recorded at the first
    cable_a, cable_b, media_a, media_b = spec_a.cable_m, spec_b.cable_m, spec_a.media, spec_b.media
    if cable_a is not None and cable_b is not None and cable_a != cable_b:
        _ends_disagree(reporter_at(here), a, b, "cable_m", cable_a, cable_b)
    if media_a is not None and media_b is not None and media_a != media_b:
        _ends_disagree(reporter_at(here), a, b, "media", media_a, media_b)
    links[key] = Link(Endpoint(*a), Endpoint(*b), cable_a if cable_a is not None else cable_b, media_a or media_b)


def _used_twice(report: _PortReporter, end: tuple[str, str], previous: tuple[str, str],
                other: tuple[str, str]) -> None:
    report(f"port {end[0]}:{end[1]} is used twice: cabled to {previous[0]}:{previous[1]} and to "
           f"{other[0]}:{other[1]}", "a port takes one cable; fix one of the peer entries", PORT_USED_TWICE)


def _ends_disagree(report: _PortReporter, a: tuple[str, str], b: tuple[str, str], attr: str, va: Any,
                   vb: Any) -> None:
    report(f"the two ends of {a[0]}:{a[1]} ↔ {b[0]}:{b[1]} disagree on {attr}: {va} vs {vb}",
           f"one cable has one {attr}; set it on one end only")


# The lint rules (fabricgen.lint.rules.inventory) whose conditions the link checks below find while loading.
LINK_END_DISAGREES, PORT_USED_TWICE = "FG-INV-001", "FG-INV-002"


@dataclass(frozen=True, slots=True)
class _LinkReporter:
    """Where the problems with `peer` entries go: one per load, whose :meth:`at` makes the reporter of one entry
    only when that entry has a problem (70k entries at 32,768 GPUs, few with one)."""

    sources: SourceMap
    problems: list[Diagnostic]
    skipped: frozenset[str] = frozenset()
    unresolved: frozenset[str] = frozenset()

    def at(self, here: tuple[str, str]) -> _PortReporter:
        return _PortReporter(self, ("inventory", here[0], "data", "ports", here[1], "peer"))


@dataclass(frozen=True, slots=True)
class _PortReporter:
    """Reports a problem with one `peer` entry, at the entry."""

    link: _LinkReporter
    path: KeyPath

    @property
    def skipped(self) -> frozenset[str]:
        return self.link.skipped

    @property
    def unresolved(self) -> frozenset[str]:
        return self.link.unresolved

    def __call__(self, message: str, hint: str, rule: str = LINK_END_DISAGREES) -> None:
        where = self.link.sources.locate(self.path, Location("<inventory>", 1, 1))
        self.link.problems.append(Diagnostic(where, format_key_path(self.path[1:]), message, hint, rule))


def _peer_endpoint(peer: str, devices: dict[str, Device], report: _PortReporter) -> tuple[str, str] | None:
    name, _, port = peer.partition(":")
    if name in report.unresolved:
        return None  # the host's missing group is the error to fix; its ports are unknown until then
    if name in report.skipped:
        report(f"peer device {name!r} is in the inventory but not one fabricgen configures (it has no fabricgen "
               "role, so it was skipped)", f"give {name} a fabricgen role (data.{NAMESPACE}.role or data.role), "
               "or remove this peer")
        return None
    if name not in devices:
        close = difflib.get_close_matches(name, list(devices), n=1)
        report(f"unknown peer device {name!r}", f"did you mean {close[0]!r}?" if close else
               "add the device to hosts.yaml")
        return None
    if port not in devices[name].data.ports:
        close = difflib.get_close_matches(port, list(devices[name].data.ports), n=1)
        report(f"{name} has no port {port!r}", f"did you mean {close[0]!r}?" if close else
               f"add {port} under {name}.data.ports")
        return None
    return name, port
