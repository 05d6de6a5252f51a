"""The validated compact inventory, kept for the next load of the same files.

Loading a compact inventory (devices.yaml + cabling.csv, fabricgen.load.sources.compact) is more than parsing:
building every device's ports from its template and the table, Nornir inheritance, pydantic validation of each
device, the platform and name checks, and the cables checked and built from both ends. At 32,768 GPUs that is
1.4 CPU-s of which the parse cache saves 0.1, all of it before the render can start anything in parallel. What
it makes is a function of the inventory files' bytes and of the code that reads them, nothing else: so an
inventory that loaded without a problem is kept, and a load of the same bytes by the same code restores it
(0.3 s) instead of reading it again.

The cache keeps the parse cache's guarantees (fabricgen.load.parsecache):

- **Private.** Its files live in the parse cache's folder (the user's own, 0700; files 0600), written the same
  way, and are not used when that folder cannot be (``FABRICGEN_NO_CACHE``, a folder others may write to).
- **Sealed.** A file is found by a key made of the sha256 of every inventory file as read now, the limits in
  force, and a digest of fabricgen's code (every module of the package, the libraries that validate, Python's
  version): an edited file, an upgraded or edited fabricgen, a new pydantic or a stricter limit all miss. The
  file is sealed to that key and to the digest of its payload (a damaged or moved file is refused).
- **No secrets.** An inventory whose devices carry a password or connection options, or whose Nornir hosts as
  built hold a key that looks like a credential (:func:`~fabricgen.load.parsecache.carries_secret`), is never
  kept: it is loaded in full every time.
- **No pickle.** The payload is marshal's plain values (strings, numbers, lists, dicts, tuples), from which the
  models are rebuilt field by field as validation left them: nothing in the file can name a class or a function.

Where each value was written (the source map) is not kept: it is only needed to word a problem, and a restored
inventory had none. A caller that asks anyway (resolve or lint reporting a problem at an inventory key) gets it
from a full read of the files then (:class:`~fabricgen.load.fabric.FabricInput`).
"""

from __future__ import annotations

import hashlib
import marshal
import sys
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from ipaddress import IPv4Address, IPv6Address
from pathlib import Path
from typing import Any

import pydantic
import pydantic_core
from pydantic import BaseModel

from fabricgen import __version__
from fabricgen.load.fastyaml import PARSERS
from fabricgen.load.parsecache import (
    blob_may_carry_secret,
    cache_dir,
    carries_secret,
    keep_newest,
    mark_used,
    read_sealed,
    seal,
    write_private,
)
from fabricgen.load.sources import DEFAULTS, GROUPS, open_source
from fabricgen.load.sources.compact import CABLING_FILE, DEVICES_FILE, CompactSource
from fabricgen.load.yamlsource import MAX_ALIAS_NODES, MAX_DEPTH, MAX_NODES, Entries, InputFileError, read_input
from fabricgen.models.inventory import Device, DeviceData, Endpoint, Inventory, Link, PortSpec

FORMAT = 1
KEPT = 4
"""inventories kept (the most recently used): one is 13 MB at 32,768 GPUs"""
COMPACT_FILES = (GROUPS, DEFAULTS, DEVICES_FILE, CABLING_FILE)
"""what a compact source reads, in the order it hashes them (the manifest's input hashes keep that order)"""

_MODELS: tuple[type[BaseModel], ...] = (Device, DeviceData, PortSpec)
"""the models a kept inventory holds, by their index in the payload"""
_PLAIN = frozenset({str, int, float, bool, type(None)})
_MODEL_TAGS = frozenset({"P", "M"})
_KIND = {model: index for index, model in enumerate(_MODELS)}
_STR = frozenset({str})

# pydantic's four instance slots, set through their own descriptors (as fabricgen.models.device does): a
# restored model holds what validation left, without validating it again.
_set_dict = BaseModel.__dict__["__dict__"].__set__
_set_fields_set = BaseModel.__dict__["__pydantic_fields_set__"].__set__
_set_extra = BaseModel.__dict__["__pydantic_extra__"].__set__
_set_private = BaseModel.__dict__["__pydantic_private__"].__set__
_new_object = object.__new__


@dataclass(frozen=True)
class Restored:
    """What :func:`~fabricgen.load.fabric.load` made of the inventory files, as it was kept."""

    inventory: Inventory
    entries: Entries | None
    skipped: dict[str, str]
    hashes: dict[str, str]
    """label → sha256 of each inventory file, as load records them"""


@dataclass(frozen=True)
class Key:
    """The inventory files as read now, and the name of the cache file of what they load to."""

    hashes: dict[str, str]
    name: str
    raw_cabling: bytes


def key_of(directory: Path) -> Key | None:
    """The cache key of the inventory at ``directory``: None when it is not a compact inventory, a file cannot
    be read, or there is no cache."""
    if cache_dir() is None or not isinstance(open_source(directory), CompactSource):
        return None
    hashes: dict[str, str] = {}
    raw_cabling = b""
    digest = hashlib.sha256(f"fabricgen-inventory/{FORMAT}\0compact\0".encode() + code_digest())
    limits = [limit.value() for limit in (MAX_DEPTH, MAX_NODES, MAX_ALIAS_NODES)]
    digest.update(f"{limits}\0".encode())
    for name in COMPACT_FILES:
        path = directory / name
        if name in (GROUPS, DEFAULTS) and not path.exists():
            digest.update(f"{name}: absent\0".encode())
            continue
        try:
            raw = read_input(path)
        except InputFileError:
            return None  # load reports it
        hashes[f"inventory/{name}"] = hashlib.sha256(raw).hexdigest()
        digest.update(f"{name}: {hashes[f'inventory/{name}']}\0".encode())
        if name == CABLING_FILE:
            raw_cabling = raw
    return Key(hashes, f"inventory-{digest.hexdigest()}.marshal", raw_cabling)


@cache
def code_digest() -> bytes:
    """sha256 over every module of the fabricgen package and the versions of what parses, validates and
    marshals: what a kept inventory was made by (10 ms: 160 files)."""
    package = Path(__file__).resolve().parents[1]
    digest = hashlib.sha256(f"{__version__}\0{sys.version}\0{pydantic.VERSION}\0{pydantic_core.__version__}\0"
                            f"{PARSERS}\0".encode())
    for path in sorted(package.rglob("*.py")):
        digest.update(f"{path.relative_to(package).as_posix()}\0".encode())
        digest.update(path.read_bytes())
    return digest.digest()


def restore(key: Key) -> Restored | None:
    """The inventory kept under ``key``; None when none is (or it is damaged, or of another format)."""
    folder = cache_dir()
    if folder is None:
        return None
    path = folder / key.name
    payload = read_sealed(path, hashlib.sha256(key.name.encode()).digest())
    if payload is None:
        return None
    try:
        restored = _decode(marshal.loads(payload), key)
    except (EOFError, ValueError, TypeError, KeyError, IndexError):
        return None
    mark_used(path)
    return restored


def keeper(key: Key, inventory: Inventory, entries: Entries | None,
           skipped: dict[str, str]) -> Callable[[], None]:
    """What keeps this inventory under ``key`` when called (render calls it in one of its forked workers, off
    the path the render waits on: encoding 32,768 GPUs' devices is 0.3 s)."""
    return lambda: keep(key, inventory, entries, skipped)


def keep(key: Key, inventory: Inventory, entries: Entries | None, skipped: dict[str, str]) -> None:
    """Keep the inventory ``key``'s files loaded to, unless something in it looks like a secret or is not plain
    data (then nothing is written, and the next load reads the files)."""
    folder = cache_dir()
    if folder is None or _carries_secret(inventory, entries):
        return
    try:
        payload = marshal.dumps(_encode(inventory, entries, skipped))
    except _NotPlain:
        return
    write_private(folder, key.name, seal(hashlib.sha256(key.name.encode()).digest(), payload))
    keep_newest(folder, "inventory-*.marshal", KEPT)


def _carries_secret(inventory: Inventory, entries: Entries | None) -> bool:
    """A device with credentials, or a Nornir host as built whose keys look like one (keys other automation
    keeps beside fabricgen's, which the devices leave out)."""
    if any(device.password is not None or device.connection_options is not None
           for device in inventory.devices.values()):
        return True
    if entries is None:
        return False
    # The parse cache's byte scan first (a key it does not find is in no blob), then only the blobs it flags.
    flagged = [blob for blob in entries.texts.values() if blob_may_carry_secret(blob)]
    try:
        return any(carries_secret(marshal.loads(blob)) for blob in flagged)
    except (EOFError, ValueError, TypeError):
        return True


# --- the payload --------------------------------------------------------------------------------------------

class _NotPlain(Exception):
    """A value the payload cannot hold as plain data (a type a later schema added): the inventory is not kept."""


class _Encoder:
    """Models as ("M", model, fields, fields set, values): the field names and the set of fields given are
    each kept once and named by their index (every port of a template shares them). Values are plain, lists,
    dicts, or an address as ("4" | "6", text): validated data holds no tuples of its own, so a tuple is always
    one of these."""

    def __init__(self) -> None:
        self.fields: dict[tuple[str, ...], int] = {}
        self.sets: dict[frozenset[str], int] = {}

    def model(self, model: BaseModel) -> tuple[Any, ...]:
        kind = _KIND[type(model)]
        if model.__pydantic_extra__ is not None or model.__pydantic_private__ is not None:
            raise _NotPlain
        values = model.__dict__
        names = self.fields.setdefault(tuple(values), len(self.fields))
        given = self.sets.setdefault(frozenset(model.__pydantic_fields_set__), len(self.sets))
        if _PLAIN.issuperset(map(type, values.values())):  # most models: a port's settings
            return "P", kind, names, given, tuple(values.values())
        return "M", kind, names, given, tuple(self.value(value) for value in values.values())

    def value(self, value: Any) -> Any:
        kind = type(value)
        if kind in _PLAIN:
            return value
        if kind is list:
            return [self.value(item) for item in value]
        if kind is dict:
            if not _STR.issuperset(map(type, value)):
                raise _NotPlain
            # A device's ports, encoded without a call per port to find out they are models.
            model, encode = self.model, self.value
            return {key: model(item) if type(item) in _KIND else encode(item) for key, item in value.items()}
        if kind in _KIND:
            return self.model(value)
        if kind is IPv4Address or kind is IPv6Address:
            return (str(value.version), str(value))
        raise _NotPlain


def _encode(inventory: Inventory, entries: Entries | None, skipped: dict[str, str]) -> tuple[Any, ...]:
    encoder = _Encoder()
    devices = [encoder.model(device) for device in inventory.devices.values()]
    links = [(link.a.device, link.a.port, link.b.device, link.b.port, link.cable_m, link.media)
             for link in inventory.links]
    kept_entries = None if entries is None else (entries.texts, entries.read_alone, entries.cabling is not None)
    if entries is not None and entries.data:
        raise _NotPlain  # a compact source's entries hold no data of their own (the hosts are in texts)
    fields = sorted(encoder.fields, key=encoder.fields.__getitem__)
    sets = sorted(encoder.sets, key=encoder.sets.__getitem__)
    return FORMAT, fields, sets, devices, links, kept_entries, skipped


class _Decoder:
    def __init__(self, fields: list[tuple[str, ...]], sets: list[frozenset[str]]) -> None:
        self.fields = fields
        self.sets = [set(given) for given in sets]  # shared by the models that had equal ones: they are frozen

    def model(self, row: tuple[Any, ...]) -> BaseModel:
        tag, kind, names, given, values = row
        if tag == "M":
            values = [self.value(value) for value in values]
        elif tag != "P":
            raise ValueError(f"not a model: {tag!r}")
        fields = self.fields[names]
        if len(fields) != len(values):
            raise ValueError("fields and values differ in number")
        model: BaseModel = _new_object(_MODELS[kind])
        _set_dict(model, dict(zip(fields, values, strict=False)))  # lengths checked above
        _set_fields_set(model, self.sets[given])
        _set_extra(model, None)
        _set_private(model, None)
        return model

    def value(self, value: Any) -> Any:
        kind = type(value)
        if kind is tuple:
            if value[0] in _MODEL_TAGS:
                return self.model(value)
            return IPv4Address(value[1]) if value[0] == "4" else IPv6Address(value[1])
        if kind is list:
            return [self.value(item) for item in value]
        if kind is dict:
            # A device's ports, decoded without a call per port to find out they are models.
            model, decode = self.model, self.value
            return {key: model(item) if type(item) is tuple and item[0] in _MODEL_TAGS else decode(item)
                    for key, item in value.items()}
        return value


def _decode(payload: Any, key: Key) -> Restored:
    version, fields, sets, devices, links, kept_entries, skipped = payload
    if version != FORMAT:
        raise ValueError("another format")
    decoder = _Decoder(fields, sets)
    restored: dict[str, Device] = {}
    for row in devices:
        device = decoder.model(row)
        if not isinstance(device, Device):
            raise TypeError("not a device")
        restored[device.name] = device
    cables = [Link(Endpoint(a, a_port), Endpoint(b, b_port), cable_m, media)
              for a, a_port, b, b_port, cable_m, media in links]
    entries = None
    if kept_entries is not None:
        texts, read_alone, with_cabling = kept_entries
        entries = Entries(texts, {}, read_alone, key.raw_cabling if with_cabling else None)
    return Restored(Inventory.model_construct(devices=restored, links=cables), entries, dict(skipped),
                    dict(key.hashes))
