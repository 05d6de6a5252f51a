"""The neighbourhood update: `render` into an earlier tree after a commit that edits a few hosts.yaml entries,
without loading, resolving or linting the rest of the fabric (under a second at 32,768 GPUs, where the whole
road takes 7-8 s).

Why the tree it writes is the one the whole road would write:

- **What can change.** A device's resolved model is a function of the intent, groups.yaml, defaults.yaml, its
  own hosts.yaml entry, and, of each device it is cabled to, the role, the declared speed of the far port and
  the cable as either end declares it (fabricgen/resolve reads nothing else). With the first three unchanged
  (their hashes are in the manifest), an edit of entries E can change the models of E and of the neighbours
  whose view of an edited device (its *face*: role and the ports facing them) changed: the set A. Their
  models are resolved again from their entries and their neighbours'; every other file of the tree stays.
- **The input is still valid.** Every entry outside E validated in the previous render and reads the same.
  Every check that spans entries (the peer exists, names back, one cable per port, both ends agree on the
  cable) involves the declaring port and the one it names; those that touch A are run again.
- **Lint still passes.** The previous render linted clean (a forced render is not updated this way). A rule
  looks at one device, one port and the port at its far end, or one cable, except the fabric-wide ones; so
  only findings on the devices whose model changed (C) and on their neighbours' ports facing them can
  change, and those are linted again over C and its neighbours (their models read back from the tree's
  resolved.json). The fabric-wide rules (each declares ``fabric_wide``: the fields it reads) compare devices
  with the fabric's majority; they are not run again when no device of C changed any field they declare, and
  then they find what they found before.
- **The neighbours' peers.** Who a device is cabled to comes from its resolved.json in the tree (both ends'
  declarations already combined), so no index of the fabric needs to be kept besides the render state: each
  entry's digest and each device's role and platform, in the parse cache, keyed by the manifest's bytes.

Outside what this covers — the intent, groups.yaml or defaults.yaml changed, a device added, removed or
renamed, a change to a field the fabric-wide rules compare, any problem in the input, any lint error, a
previous render forced or sharded, no render state (another machine, FABRICGEN_NO_CACHE) — :func:`plan_update`
returns None and the caller takes the whole road, which reports problems with their file and line.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import marshal
import os
import sys
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fabricgen import __version__
from fabricgen.api import RESOLVED_FILE, dump_device, generate_devices
from fabricgen.build.output import MANIFEST, PreviousTree, build_manifest, file_hash, update_output
from fabricgen.lint import Finding, all_rules, lint
from fabricgen.lint.registry import FabricWide
from fabricgen.load.fabric import input_hashes, load_groups, load_intent, validate_hosts
from fabricgen.load.parsecache import keep_newest, read_sealed, seal, source_digest, write_private
from fabricgen.load.sources import DEFAULTS, GROUPS
from fabricgen.load.sources.compact import CABLING_FILE, COLUMNS, DEVICES_FILE, _own_ports, is_compact
from fabricgen.load.yamlsource import (
    Entries,
    InputFileError,
    blob_carries_secret,
    cache_dir,
    cached_entry,
    entry_digest,
    entry_table_path,
    parse_entry,
    read_entry_table,
    read_input,
    starts_with_key,
    top_level_entries,
    write_entry_table,
)
from fabricgen.models.device import DeviceModel, Fabric
from fabricgen.models.inventory import Device, Inventory
from fabricgen.resolve import Resolution, resolve_policy

HOSTS = "inventory/hosts.yaml"
CABLING = f"inventory/{CABLING_FILE}"
STATES_KEPT = 32
STATE_FORMAT = 4  # part of the state's key: a state of another format (or entry digest) is not found
# More edited entries than this and the whole road is faster: it resolves in --jobs processes, this in one.
MAX_EDITED = 200
# Entries edited since the entry table was last written whole, kept in the render state (RenderState.blobs) up to
# this many; an update that would keep more writes the table whole again (10 MB at 32,768 GPUs: 35-55 ms).
MAX_KEPT_EDITS = 200
# A file read whole (below yamlsource.BY_ENTRY_MIN_BYTES it is) has no entry table: up to this many entries are
# parsed one by one after the render to make it (10 ms for a thousand).
RECORD_MAX_ENTRIES = 2_000

Kind = tuple[str, str]  # a device's (role, platform), what the render summary groups by


# --- the render state ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class RenderState:
    """What a render leaves for the next neighbourhood update of its tree, beside the tree itself."""

    entries: dict[str, bytes]
    """device → digest of its hosts.yaml entry's text"""
    kinds: dict[str, Kind]
    blobs: dict[bytes, bytes] = field(default_factory=dict)
    """digest → data (marshalled as in the entry table) of the entries that updates edited since the entry table
    was last written whole: an update records these few here instead of writing the whole table again. None that
    carries a secret, as in the table."""


def _state_path(manifest: bytes) -> tuple[Path, bytes] | None:
    """Where the render state of the tree with ``manifest`` is kept, and the key it is sealed to."""
    folder = cache_dir()
    if folder is None:
        return None
    key = hashlib.sha256(manifest)
    key.update(f"\0{STATE_FORMAT}\0{__version__}\0{sys.version_info[:2]}".encode())  # marshal's is Python's
    return folder / f"state-{key.hexdigest()}.marshal", key.digest()


def save_state(out: Path, state: RenderState) -> None:
    """Record the state of the tree just written at ``out`` (a cache: failing to write it only costs time)."""
    with contextlib.suppress(OSError):
        found = _state_path((out / MANIFEST).read_bytes())
        if found is None:
            return
        path, key = found
        payload = marshal.dumps({"entries": state.entries, "kinds": state.kinds, "blobs": state.blobs})
        # Sealed like every other cache file (a digest, not a signature: the cache folder's owner is trusted): a
        # damaged, cut-short or hand-edited state (its device kinds make the render summary's role and platform
        # rows) is refused, and the render resolves the whole fabric.
        write_private(path.parent, path.name, seal(key, payload))
        # The most recent states only: one is written per render, and a state is only useful to the next one.
        keep_newest(path.parent, "state-*.marshal", STATES_KEPT)


def _load_state(manifest: bytes) -> RenderState | None:
    found = _state_path(manifest)
    if found is None:
        return None
    payload = read_sealed(*found)
    if payload is None:
        return None
    try:
        raw = marshal.loads(payload)
        entries, kinds, blobs = dict(raw["entries"]), dict(raw["kinds"]), dict(raw["blobs"])
    except (EOFError, ValueError, TypeError, KeyError, AttributeError):
        return None
    if not (_all_of(entries, str, bytes) and _all_of(blobs, bytes, bytes) and
            all(isinstance(name, str) and isinstance(kind, tuple) and len(kind) == 2 and
                all(isinstance(part, str) for part in kind) for name, kind in kinds.items())):
        return None
    return RenderState(entries, kinds, blobs)


def _all_of(mapping: dict[Any, Any], key_type: type, value_type: type) -> bool:
    return all(isinstance(key, key_type) and isinstance(value, value_type) for key, value in mapping.items())


def record_render(out: Path, kinds: dict[str, Kind], hosts: Path, entries: Entries) -> None:
    """After the whole road wrote the tree at ``out``: its render state, and every hosts.yaml entry in the parse
    cache's entry table (the next update compares an edited entry with what it was).

    The update reads an entry on its own; so the state is recorded only for a file each of whose entries reads
    alone as it reads in the file (load read it so, or each is checked here): not for YAML that spans entries
    (an alias of another entry's anchor, a flow collection running on at the start of a line)."""
    digests = {name: entry_digest(text) for name, text in entries.texts.items()}
    if entries.cabling is not None:
        _record_compact(out, kinds, hosts.parent, entries, digests)
        return
    table_path = entry_table_path(hosts)
    if not entries.read_alone:
        if table_path is None or len(digests) > RECORD_MAX_ENTRIES:
            return
        table = read_entry_table(table_path)
        for name, text in entries.texts.items():
            alone = parse_entry(text)
            if not _same({name: entries.data[name]}, alone):
                return
            table[digests[name]] = marshal.dumps(alone)
        write_entry_table(table_path, table)
    save_state(out, RenderState(digests, kinds))


def _record_compact(out: Path, kinds: dict[str, Kind], inventory: Path, entries: Entries,
                    digests: dict[str, bytes]) -> None:
    """A compact inventory's render state: each device's Nornir host as devices.yaml and cabling.csv built it
    (``entries.texts``: name → the host marshalled, as {name: host}) in an entry table of its own, and the
    cabling.csv that built them, which the next update compares line by line with the table as it is then."""
    table_path = compact_table_path(inventory)
    if table_path is None or entries.cabling is None:
        return
    write_entry_table(table_path, {digests[name]: blob for name, blob in entries.texts.items()})
    save_cabling(entries.cabling)
    save_state(out, RenderState(digests, kinds))


def compact_table_path(inventory: Path) -> Path | None:
    """Where the built hosts of the compact inventory at ``inventory`` are kept (not devices.yaml's own entry
    table, which load keeps for a large devices.yaml)."""
    return entry_table_path(inventory / ".compact-hosts")


def _cabling_path(digest: str) -> Path | None:
    folder = cache_dir()
    return folder / f"cabling-{digest}.csv" if folder is not None else None


def save_cabling(raw: bytes) -> None:
    """Keep a cabling.csv's bytes in the cache under their sha256 (the manifest records it), the few most
    recent only: each serves the next update of the tree it was rendered into."""
    digest = hashlib.sha256(raw).hexdigest()
    path = _cabling_path(digest)
    if path is None:
        return
    write_private(path.parent, path.name, seal(source_digest(raw), raw))
    keep_newest(path.parent, "cabling-*.csv", STATES_KEPT)


def saved_cabling(digest: str) -> bytes | None:
    """The cabling.csv whose sha256 (hex) the previous manifest records, if the cache kept it."""
    path = _cabling_path(digest)
    try:
        return read_sealed(path, bytes.fromhex(digest)) if path is not None else None
    except ValueError:
        return None


def _same(a: Any, b: Any) -> bool:
    """Equal and of the same types throughout (``==`` alone takes True for 1, and 1.0 for 1)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(value, b[key]) for key, value in a.items())
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def kinds_of(models: Iterable[DeviceModel]) -> dict[str, Kind]:
    return {device.name: (device.role, device.platform) for device in models}


# --- the plan -----------------------------------------------------------------------------------------------

class _Decline(Exception):
    """This update is not one the neighbourhood covers: take the whole road."""


@dataclass
class UpdatePlan:
    """An update of the tree at ``out``, worked out, not yet written."""

    fabric: str
    files: dict[str, str]
    """the rendered files of the devices whose model changed"""
    kept: dict[str, str]
    """path → hash of every other file of the tree"""
    replaced: dict[str, str]
    """path → hash of the files of the devices whose model changed, as the tree holds them"""
    removed: list[str]
    manifest: str
    state: RenderState
    entry_table: tuple[Path, dict[bytes, bytes], Collection[bytes]] | None
    """the parse cache's entry table written whole, with the edited entries, when the edits the render state keeps
    would be too many (else None: ``state.blobs`` holds them); and the digests of its entries scanned for secrets"""
    cabling: bytes | None = None
    """a compact inventory's cabling.csv as this update read it, to keep for the next one"""
    edited: int = 0
    resolved: int = 0
    linted: int = 0
    """how many hosts.yaml entries were edited, devices resolved again, devices linted again"""

    @property
    def paths(self) -> list[str]:
        return [*self.files, *self.kept]


def plan_update(intent: Path, inventory: Path, out: Path, previous: PreviousTree | None,
                extra: dict[str, Any]) -> UpdatePlan | None:
    """The update of ``previous`` (the tree at ``out``) for the current inputs, or None when it is not a
    neighbourhood update."""
    planner = _CompactPlanner if is_compact(inventory) else _Planner
    try:
        return planner(intent, inventory, out, previous, extra).plan()
    except _Decline:
        return None
    except Exception:  # anything unexpected: the whole road gives the right tree, and reports input problems
        if os.environ.get("FABRICGEN_DEBUG"):
            raise
        return None


def apply_update(out: Path, plan: UpdatePlan) -> int:
    """Write the planned update (as an incremental render writes: atomically per file, marked while it runs),
    then the render state. Returns how many files were written."""
    changed = {name: text for name, text in plan.files.items() if plan.replaced.get(name) != file_hash(text)}
    rewritten = update_output(out, changed, plan.removed, plan.manifest)
    save_state(out, plan.state)
    if plan.entry_table is not None:
        write_entry_table(*plan.entry_table)
    if plan.cabling is not None:
        save_cabling(plan.cabling)
    return rewritten


class _Planner:
    """Works out one update; any step that finds it is not a neighbourhood update raises _Decline."""

    def __init__(self, intent: Path, inventory: Path, out: Path, previous: PreviousTree | None,
                 extra: dict[str, Any]) -> None:
        if previous is None or set(extra) != {"renderer"} or previous.manifest.get("renderer") != extra["renderer"]:
            raise _Decline  # no tree, another renderer, or a shard
        if "forced" in previous.manifest or "shard" in previous.manifest:
            raise _Decline
        state = _load_state(previous.raw)
        if state is None:
            raise _Decline
        self.intent_path, self.inventory, self.out, self.previous, self.extra, self.state = \
            intent, inventory, out, previous, extra, state
        self.old_models: dict[str, DeviceModel] = {}

    def plan(self) -> UpdatePlan:
        inputs, edited, digests = self._inputs_and_edits()
        parsed: dict[str, str] = {}
        intent, groups = load_intent(self.intent_path, parsed), load_groups(self.inventory, parsed)
        if intent is None or groups is None or any(inputs.get(label) != digest for label, digest in parsed.items()):
            raise _Decline  # or a file saved since it was hashed: the whole road reads each input once
        if any(waiver.device in edited for waiver in intent.lint.waive):
            raise _Decline  # the edit may rename a port a waiver names: the whole road checks every waiver's names
        self.groups, self.defaults = groups
        affected = self._affected(edited)
        devices, links = self._validated(affected, edited)
        resolution = Resolution(intent, Inventory.model_construct(devices=devices, links=links))
        if not resolution.resolve(sorted(affected)):
            raise _Decline
        models = resolution.devices
        changed = sorted(name for name in affected
                         if file_hash(dump_device(models[name], "json"))
                         != self.previous.files.get(f"{name}/{RESOLVED_FILE}"))
        linted = 0
        if changed:
            linted = self._lint_clean(Fabric(name=intent.fabric, devices={n: models[n] for n in changed},
                                             policy=resolve_policy(intent, resolution.qos)), models, changed)
        plan = self._render(intent.fabric, models, changed, inputs, edited, digests)
        plan.edited, plan.resolved, plan.linted = len(edited), len(affected), linted
        return plan

    # -- which entries changed, and which devices that affects

    def _inputs_and_edits(self) -> tuple[dict[str, str], dict[str, Any], dict[str, bytes]]:
        """The input hashes for the new manifest, and the edited entries' data and digests by name."""
        self.hosts_path = self.inventory / "hosts.yaml"
        try:
            raw = read_input(self.hosts_path)  # read once: what is hashed is what is split
        except InputFileError:
            raise _Decline from None  # a FIFO, /dev/zero, too large: the whole road's load reports it
        inputs = {**input_hashes(self.intent_path, self.inventory, ("groups.yaml", "defaults.yaml")),
                  HOSTS: hashlib.sha256(raw).hexdigest()}
        self._same_inputs_but(inputs, HOSTS)
        return (inputs, *self._edited_entries(raw))

    def _same_inputs_but(self, inputs: dict[str, str], edited_file: str) -> None:
        """Declines unless every input but ``edited_file`` reads as the previous render read it."""
        before = self.previous.manifest.get("inputs", {})
        if inputs.keys() != before.keys() or any(inputs[k] != before[k] for k in inputs if k != edited_file):
            raise _Decline  # the intent, groups.yaml or defaults.yaml changed: any device may have

    def _edited_entries(self, raw: bytes) -> tuple[dict[str, Any], dict[str, bytes]]:
        """The data of the hosts.yaml entries whose text changed, by name, and their digests. Unchanged entries
        were part of a file that loaded, and each read alone as it read in the file (see record_render); an
        edited one must be UTF-8 (rapidyaml does not look at comments) and start with its key as written."""
        entries = top_level_entries(raw)
        if entries is None:
            raise _Decline
        self.texts = {entry_digest(entry): entry for entry in entries}
        if len(self.texts) != len(entries):
            raise _Decline  # two equal entries: a duplicate key
        known = set(self.state.entries.values())
        if sum(digest not in known for digest in self.texts) > MAX_EDITED:
            raise _Decline
        edited: dict[str, Any] = {}
        digests: dict[str, bytes] = {}
        for digest, text in self.texts.items():
            if digest not in known:
                name, data = _one_entry(parse_entry(text))
                if name in edited or not starts_with_key(text, name):
                    raise _Decline
                try:
                    text.decode("utf-8")
                except UnicodeDecodeError:
                    raise _Decline from None
                edited[name], digests[name] = data, digest
        gone = {name for name, digest in self.state.entries.items() if digest not in self.texts}
        if set(edited) != gone:
            raise _Decline  # a device added, removed or renamed

        self.table_path = entry_table_path(self.hosts_path)
        self.table = read_entry_table(self.table_path) if self.table_path else {}
        return edited, digests

    def _affected(self, edited: dict[str, Any]) -> set[str]:
        """The edited devices, and each neighbour whose view of an edited device changed."""
        new = self._devices(edited)
        old_data = {name: self._cached(self.state.entries[name]) for name in edited}
        old = self._devices({name: _one_entry(data)[1] for name, data in old_data.items() if data is not None})
        affected = set(edited)
        self.new_targets: dict[str, set[str]] = {}
        for name, device in new.items():
            targets = {spec.peer.partition(":")[0] for spec in device.data.ports.values() if spec.peer}
            self.new_targets[name] = targets
            before = self._old(name)
            for neighbour in _peers(before) | targets:
                if neighbour not in self.state.entries:
                    raise _Decline  # an unknown peer: load reports it
                if name not in old or _face(old[name], before, neighbour) != _face(device, before, neighbour):
                    affected.add(neighbour)
        return affected

    def _validated(self, affected: set[str], edited: dict[str, Any]) -> tuple[dict[str, Device], list[Any]]:
        """The devices to resolve and their neighbours, validated, and the cables that touch the former."""
        around = set(affected)
        for name in affected:
            around |= _peers(self._old(name)) | self.new_targets.get(name, set())
        found = validate_hosts({name: edited[name] if name in edited else self._entry(name) for name in sorted(around)},
                               self.groups, self.defaults, affected)
        if found is None:
            raise _Decline
        return found

    def _devices(self, entries: dict[str, Any]) -> dict[str, Device]:
        found = validate_hosts(entries, self.groups, self.defaults, set())
        if found is None:
            raise _Decline
        return found[0]

    def _entry(self, name: str) -> Any:
        """An unchanged entry's data: from the parse cache's entry table, else parsed from its text."""
        digest = self.state.entries[name]
        data = self._cached(digest)
        if data is None:
            data = parse_entry(self.texts[digest])
        found, value = _one_entry(data)
        if found != name:
            raise _Decline
        return value

    def _old(self, name: str) -> DeviceModel:
        """The device's model as the tree holds it (resolved.json, written by the previous render)."""
        model = self.old_models.get(name)
        if model is None:
            if f"{name}/{RESOLVED_FILE}" not in self.previous.files:
                raise _Decline
            path = self.out / name / RESOLVED_FILE
            model = self.old_models[name] = DeviceModel.model_validate_json(path.read_bytes())
        return model

    # -- lint, over the changed devices and their neighbours

    def _lint_clean(self, changed_only: Fabric, models: dict[str, DeviceModel], changed: list[str]) -> int:
        """Lint the changed devices and their neighbours; declines at any error the whole road would report.
        Returns how many devices were linted."""
        for name in changed:
            if _wide_fields(self._old(name)) != _wide_fields(models[name]):
                raise _Decline  # the fabric-wide rules may judge differently: lint the whole fabric
        around = set(changed).union(*(_peers(models[name]) for name in changed))
        fabric = changed_only.model_copy(update={"devices": {
            name: models[name] if name in models else self._old(name) for name in sorted(around)}})
        if findings_around(fabric, set(changed), "error"):
            raise _Decline  # the whole road prints the report and stops
        return len(fabric.devices)

    # -- render

    def _render(self, fabric: str, models: dict[str, DeviceModel], changed: list[str], inputs: dict[str, str],
                edited: dict[str, Any], digests: dict[str, bytes]) -> UpdatePlan:
        files = generate_devices(models, changed)
        mine = set(changed)
        kept: dict[str, str] = {}
        replaced: dict[str, str] = {}
        for path, digest in self.previous.files.items():
            (replaced if path.partition("/")[0] in mine else kept)[path] = digest
        removed = sorted(path for path in replaced if path not in files)
        blobs, table = self._edits_kept(self._fresh_blobs(edited, digests), set(self._current_digests(digests)))
        state = RenderState({**self.state.entries, **digests}, {**self.state.kinds, **kinds_of(models.values())},
                            blobs)
        return UpdatePlan(fabric, files, kept, replaced, removed,
                          build_manifest(files, inputs, self.extra, hashes=kept), state, table)

    # -- the parse cache's record of the entries, for the next update

    def _cached(self, digest: bytes) -> Any:
        """The data of the entry with this digest as the parse cache holds it: in the entry table, or among the
        entries edited since the table was written (the render state's blobs); None when neither does."""
        data = cached_entry(self.table, digest)
        return cached_entry(self.state.blobs, digest) if data is None else data

    def _fresh_blobs(self, edited: dict[str, Any], digests: dict[str, bytes]) -> dict[bytes, bytes]:
        """The edited entries' data, marshalled as the entry table holds it, by digest."""
        return {digest: marshal.dumps({name: edited[name]}) for name, digest in digests.items()}

    def _current_digests(self, digests: dict[str, bytes]) -> Collection[bytes]:
        """The digests of the entries of the file as it is now."""
        return self.texts.keys()

    def _edits_kept(self, fresh: dict[bytes, bytes], current: set[bytes]
                    ) -> tuple[dict[bytes, bytes], tuple[Path, dict[bytes, bytes], Collection[bytes]] | None]:
        """Where the next update finds the ``fresh`` entries' data: the new state's blobs (those of every entry
        edited since the table was written, of the file as it is now, ``current``) and, when they would be more
        than :data:`MAX_KEPT_EDITS`, the whole entry table to write instead (then no blobs). An entry whose data
        carries a secret is kept in neither (the cache never holds one): the next update parses it again."""
        kept = {**self.state.blobs, **{digest: blob for digest, blob in fresh.items() if not blob_carries_secret(blob)}}
        blobs = {digest: blob for digest, blob in kept.items() if digest in current and digest not in self.table}
        if len(blobs) <= MAX_KEPT_EDITS or self.table_path is None:
            return blobs, None
        table = {digest: blobs[digest] if digest in blobs else self.table[digest]
                 for digest in current if digest in blobs or digest in self.table}
        return {}, (self.table_path, table, table.keys())  # each scanned: in the table, or just above


class _CompactPlanner(_Planner):
    """The update of a tree rendered from a compact inventory, after an edit of cable lengths or media in
    cabling.csv: each edited line sets its cable on its a-end port, so its a-end device is the edited entry
    (built as the previous render built it, the edit applied), and the base planner takes it from there (the
    b-end device reads the cable through its face). Any other edit — devices.yaml, a line added, removed or
    moved, a cable's ends changed, a length or media set or cleared — takes the whole road."""

    def _inputs_and_edits(self) -> tuple[dict[str, str], dict[str, Any], dict[str, bytes]]:
        try:
            raw = read_input(self.inventory / CABLING_FILE)
        except InputFileError:
            raise _Decline from None
        inputs = {**input_hashes(self.intent_path, self.inventory, (GROUPS, DEFAULTS, DEVICES_FILE)),
                  CABLING: hashlib.sha256(raw).hexdigest()}
        self._same_inputs_but(inputs, CABLING)
        earlier = saved_cabling(self.previous.manifest["inputs"][CABLING])
        self.table_path = compact_table_path(self.inventory)
        if earlier is None or self.table_path is None:
            raise _Decline
        self.table = read_entry_table(self.table_path)
        self.texts = {}
        self.cabling = raw
        edited = self._edited_hosts(earlier, raw)
        self.blobs = {name: marshal.dumps({name: host}) for name, host in edited.items()}
        return inputs, edited, {name: entry_digest(blob) for name, blob in self.blobs.items()}

    def _edited_hosts(self, earlier: bytes, raw: bytes) -> dict[str, Any]:
        """The hosts whose cables the edited lines changed, with those cables set as the whole road sets them."""
        # Compared as bytes (3 MB at 32,768 GPUs: decoding both whole took longer than the rest of the step); an
        # edited line is decoded alone and must be one printable line, so that it numbers the lines as load's
        # str.splitlines() does, and the unchanged ones read as they did in a table that loaded.
        before, after = earlier.splitlines(), raw.splitlines()
        if len(before) != len(after):
            raise _Decline  # a cable added or removed (or a line): a re-cabling
        lines = [(old, new) for old, new in zip(before, after, strict=True) if old != new]
        if len(lines) > MAX_EDITED:
            raise _Decline
        hosts: dict[str, Any] = {}
        for old, new in lines:
            was, now = _plain_cable(old), _plain_cable(new)
            if was is None or now is None or was[:4] != now[:4]:
                raise _Decline  # not a cable line on both sides, or its ends changed
            device, port, b_device, b_port = now[:4]
            host = hosts[device] if device in hosts else self._entry(device)
            spec = _own_ports(host).get(port)
            if not isinstance(spec, dict) or spec.get("peer") != f"{b_device}:{b_port}" or \
                    spec.get("cable_m") != _cable_length(was[4]) or spec.get("media") != was[5]:
                raise _Decline  # the line did not set this cable (the previous render built otherwise)
            spec["cable_m"], spec["media"] = _cable_length(now[4]), now[5]
            hosts[device] = host
        return hosts

    def _entry(self, name: str) -> Any:
        """A host as the previous render built it, from the compact entry table."""
        if name not in self.state.entries:
            raise _Decline
        found, value = _one_entry(self._cached(self.state.entries[name]))
        if found != name:
            raise _Decline
        return value

    def _fresh_blobs(self, edited: dict[str, Any], digests: dict[str, bytes]) -> dict[bytes, bytes]:
        return {digests[name]: blob for name, blob in self.blobs.items()}

    def _current_digests(self, digests: dict[str, bytes]) -> Collection[bytes]:
        return {**self.state.entries, **digests}.values()

    def plan(self) -> UpdatePlan:
        plan = super().plan()
        plan.cabling = self.cabling
        return plan


def _plain_cable(raw: bytes) -> list[str] | None:
    """A line's six fields when it is a cable written plainly (UTF-8, printable, no quotes, spaces or comment)
    with a length and a media: the only lines whose edit this update reads as the whole road does."""
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if not line or line[0] == "#" or not line.isprintable() or any(char in line for char in ' "'):
        return None
    fields = line.split(",")
    return fields if len(fields) == len(COLUMNS) and all(fields) else None


def _cable_length(text: str) -> Any:
    return int(text) if text.isdecimal() else text  # as compact._Builder._cable sets it


def findings_around(fabric: Fabric, changed: set[str], severity: str | None = None) -> list[Finding]:
    """What lint finds about the ``changed`` devices, given a ``fabric`` of them and every device cabled to them:
    findings of every rule but the fabric-wide ones that are on a changed device or on a port cabled to one
    (of one ``severity``, or all). Each such rule reads a device, its ports and the far end of each: so these
    are the findings a lint of the whole fabric makes about them (tests/test_lint_cases.py checks it on every
    rule's failing fixtures)."""
    report = lint(fabric, [rule for rule in all_rules() if rule.fabric_wide is None])
    wanted = [finding for finding in report.findings if severity is None or finding.severity == severity]
    facing = _facing(fabric, changed) if wanted else {}
    return [finding for finding in wanted if finding.device in changed or (finding.device, finding.port) in facing]


def concerns(finding: Finding, devices: set[str], fabric: Fabric) -> bool:
    """Whether ``finding`` is on one of ``devices`` or on a port cabled to one of them."""
    return finding.device in devices or (finding.device, finding.port) in _facing(fabric, devices)


def _facing(fabric: Fabric, devices: set[str]) -> set[tuple[str, str | None]]:
    """Every (device, port) whose cable reaches one of ``devices``."""
    return {(device.name, port.name) for device in fabric.devices.values() for port in device.ports
            if port.peer is not None and port.peer.partition(":")[0] in devices}


def _one_entry(data: Any) -> tuple[str, Any]:
    if not isinstance(data, dict) or len(data) != 1:
        raise _Decline  # the fast path declined it, or not one key: load reads the file whole
    ((name, value),) = data.items()
    if not isinstance(name, str):
        raise _Decline
    return name, value


def _peers(model: DeviceModel) -> set[str]:
    return {port.peer.partition(":")[0] for port in model.ports if port.peer}


def _face(device: Device, before: DeviceModel, neighbour: str) -> tuple[Any, ...]:
    """What resolving ``neighbour`` reads of ``device``: its role and the ports that faced the neighbour or
    now name it (their speed, and the cable they declare)."""
    ports = {port.name for port in before.ports if port.peer and port.peer.partition(":")[0] == neighbour}
    ports |= {name for name, spec in device.data.ports.items() if spec.peer and
              spec.peer.partition(":")[0] == neighbour}
    specs = device.data.ports
    return device.data.role, [(name, specs[name].model_dump() if name in specs else None) for name in sorted(ports)]


def _wide_fields(device: DeviceModel) -> tuple[Any, ...]:
    """Every field of a device the fabric-wide rules read, as they declare it."""
    return _wide_reads().read(device)


@functools.cache
def _wide_reads() -> FabricWide:
    return FabricWide.union(rule.fabric_wide for rule in all_rules() if rule.fabric_wide is not None)
