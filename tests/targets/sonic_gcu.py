"""SONiC's own Generic Config Updater (sonic-utilities ``generic_config_updater``) run here, on a real Redis.

The SONiC lab target (tests/targets/sonic.py) answers ``config apply-patch``/``replace``/``checkpoint``/
``rollback`` by calling this module, which imports sonic-utilities' GCU of the switch's release from
``<vendor data>/sonic-gcu/sonic-utilities-<release>`` (PYTHONPATH; never copied) and SONiC's ``sonic_yang`` from
``<vendor data>/sonic-gcu/sonic-yang-mgmt-master``, with the release's YANG models from
``<vendor data>/sonic-yang/releases/<release>/models`` (the vendor-data folder: ``$FABRICGEN_VENDOR_DATA``, else
``shared`` beside the checkout). Without ``<vendor data>/sonic-gcu`` (a fresh clone) the same
layout is read from fabricgen's cache (:func:`locate`): ``<cache>/sonic-gcu/``, which ``fabricgen validate
--fetch-gcu <release>`` fills, and ``<cache>/sonic-yang/<release>/models``, which ``--fetch-models <release>``
fills. ``<cache>`` is the user's (``$FABRICGEN_LAB_CACHE_DIR``, which tests/conftest.py sets to the cache
folder the run started with before it points FABRICGEN_CACHE_DIR at a throw-away one). CONFIG_DB and
STATE_DB are databases 4 and 6 of a real
``redis-server`` (Debian's), as on a switch (sonic-swss-common ``common/database_config.json``).

GCU imports pieces that exist only inside a SONiC image. These are the adapters, each the thinnest stand-in for
what GCU calls, and nothing of GCU's own logic (field rules, sorter, YANG validation, change applier):

* ``swsscommon.swsscommon.ConfigDBConnector`` (``connect``, ``set_entry``, ``get_config``): sonic-swss-common's
  C++ connector has no wheel; here redis-py over the same key layout (``TABLE|key`` hashes, ``field@`` lists,
  ``NULL``/``NULL`` for an entry without fields: swss-common ``common/configdb.h`` ``typed_to_raw``/``raw_to_typed``).
* ``swsscommon.swsscommon.DBConnector``/``Table.hget``: STATE_DB reads of GCU's PORT validator, over redis-py.
* ``sonic-cfggen -d --print-data`` / ``-d -v DEVICE_METADATA.localhost.hwsku`` (sonic-config-engine; GCU runs
  it as a program): the target's ``sonic-cfggen`` tool, CONFIG_DB as JSON through the connector above.
* ``sonic_py_common.device_info`` (``get_sonic_version_info``: ``asic_type`` and ``build_version`` decide the
  RDMA field rules; ``is_chassis``): the switch's ``/etc/sonic/sonic_version.yml`` as the target writes it.
* ``sonic_py_common.multi_asic``: a single-ASIC switch (``is_multi_asic`` False, namespace list ``[""]``).
* ``sonic_py_common.logger.Logger``: syslog becomes ``$SONIC_TARGET_STATE/syslog``; console lines as SONiC prints.
* ``sonic_yang`` and ``yang``: the releases' GCU (202411-202511) was written for sonic_yang over the libyang-1
  SWIG bindings (``import yang``), which no registry here has. sonic-yang-mgmt master (libyang-python) runs on
  Debian's libyang 2.1 with PyPI ``libyang==2.7.1``; its ``SonicYang`` is used unchanged except that ``root``
  also answers the four libyang-1 node calls GCU's ``PathAddressing`` makes (``tree_for``,
  ``find_path(x).data()``, ``tree_dfs``, ``schema().nodetype()``), and ``yang.LYS_LEAF`` exists for it.
* GCU's ``YANG_DIR`` (``/usr/local/yang-models`` on a switch) is pointed at the release's models.

Release models: ``<vendor data>/sonic-yang/releases`` holds 202411 and 202511; a 202505 switch is validated with
202411's models (the closest older set), which ``models_for`` says.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import re
import sys
import time
import types
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import redis

from fabricgen.load.parsecache import cache_folder
from fabricgen.validate.gcu import cached_gcu, fetch_gcu_command, gcu_cache_root
from fabricgen.validate.models import fetch_command

# The vendor-data folder: FABRICGEN_VENDOR_DATA, else a folder `shared` beside the checkout (tests/conftest.py).
SHARED = Path(os.environ.get("FABRICGEN_VENDOR_DATA") or Path(__file__).resolve().parents[3] / "shared")
RELEASES = ("202411", "202505", "202511")
LAB_CACHE_VAR = "FABRICGEN_LAB_CACHE_DIR"  # the user's cache folder, where --fetch-gcu/--fetch-models put things
_RELEASE_FOLDER = re.compile(r"\d{6}")  # a release's models folder (not a fetch's .fetch-* work folder)


@dataclass(frozen=True)
class GcuPaths:
    """What the lab puts on sys.path for one release: sonic-utilities' folder and sonic-yang-mgmt's."""

    utilities: Path
    yang_mgmt: Path


@dataclass(frozen=True)
class Located:
    """Where GCU and the release models are read from: the vendor-data folder (``cache`` None), else the cache."""

    shared: Path
    gcu_root: Path  # holds sonic-utilities-<release>/ and sonic-yang-mgmt-master/
    model_releases: Path  # holds <release>/models/
    cache: Path | None

    def code(self, release: str) -> GcuPaths:
        return GcuPaths(self.gcu_root / f"sonic-utilities-{release}", self.gcu_root / "sonic-yang-mgmt-master")

    def models_for(self, release: str) -> Path:
        """The release's YANG models, or the closest older release's when there is none for it."""
        older = sorted(path.name for path in self.model_releases.iterdir()
                       if _RELEASE_FOLDER.fullmatch(path.name) and path.name <= release) \
            if self.model_releases.is_dir() else []
        return self.model_releases / (older[-1] if older else release) / "models"

    def missing(self, release: str) -> str | None:
        """Why GCU of ``release`` or its models cannot be read from here (naming the fetch commands), or None."""
        fetch = (f"fetch it with `{fetch_gcu_command(release)}` and the release's YANG models with "
                 f"`{fetch_command(release)}`")
        if self.cache is None:
            for path in (self.code(release).utilities / "generic_config_updater", self.code(release).yang_mgmt):
                if not path.is_dir():
                    return f"{path} is absent: SONiC's generic_config_updater runs the SONiC target; {fetch}"
        else:
            warnings: list[str] = []
            if cached_gcu(release, self.cache, warnings.append) is None:
                return warnings[0] if warnings else (
                    f"SONiC's generic_config_updater of {release} is neither in {self.shared / 'sonic-gcu'} (the "
                    f"vendor-data folder; a fresh clone has none) nor in {self.gcu_root}: {fetch}")
        if not any(self.models_for(release).glob("*.yang")):
            return f"no SONiC YANG models in {self.models_for(release)}: fetch them with `{fetch_command(release)}`"
        return None


def lab_cache() -> Path:
    """The cache folder the lab reads fetched GCU and models from (module docstring)."""
    return Path(os.environ.get(LAB_CACHE_VAR) or cache_folder())


def locate(shared: Path = SHARED, cache: Path | None = None) -> Located:
    """``shared``/sonic-gcu when it is there (CI's), else the cache (``cache``, default :func:`lab_cache`)."""
    if (shared / "sonic-gcu").is_dir():
        return Located(shared, shared / "sonic-gcu", shared / "sonic-yang" / "releases", None)
    cache = cache or lab_cache()
    return Located(shared, gcu_cache_root(cache), cache / "sonic-yang", cache)


LOCATED = locate()
GCU_ROOT = LOCATED.gcu_root
SONIC_YANG_MGMT = LOCATED.code(RELEASES[0]).yang_mgmt
MODEL_RELEASES = LOCATED.model_releases
CONFIG_DB, STATE_DB = 4, 6  # sonic-swss-common common/database_config.json
DATABASES = {"CONFIG_DB": CONFIG_DB, "STATE_DB": STATE_DB}
SOCKET_VAR = "SONIC_REDIS_SOCKET"
VERSION_VAR = "SONIC_VERSION_FILE"
SYSLOG_VAR = "SONIC_SYSLOG"


def unavailable(release: str = RELEASES[0]) -> str | None:
    """Why SONiC's GCU of ``release`` cannot run here (then tests skip, or fail under FABRICGEN_REQUIRE_SHARED)."""
    reason = LOCATED.missing(release)
    if reason is not None:
        return reason
    try:
        import libyang  # noqa: F401
    except ImportError as exc:
        return f"libyang is not importable ({exc}): SONiC's sonic_yang needs it"
    return None


def models_for(release: str) -> Path:
    """The release's YANG models, or the closest older release's when there is none for it."""
    return LOCATED.models_for(release)


# --- CONFIG_DB in Redis (swss-common's key layout) ---------------------------------------------------------

def connect(database: int) -> Any:
    """A redis-py client of one database, answering str (redis-py's stubs type it bytes | str)."""
    return redis.Redis(unix_socket_path=os.environ[SOCKET_VAR], db=database, decode_responses=True)


def typed_to_raw(entry: Mapping[str, Any]) -> dict[str, str]:
    if not entry:
        return {"NULL": "NULL"}
    return {(f"{name}@" if isinstance(value, list) else name): (",".join(value) if isinstance(value, list)
                                                               else str(value)) for name, value in entry.items()}


def raw_to_typed(raw: Mapping[str, str]) -> dict[str, Any]:
    typed: dict[str, Any] = {}
    for name, value in raw.items():
        if name == "NULL":
            continue
        if name.endswith("@"):
            typed[name[:-1]] = value.split(",") if value else []
        else:
            typed[name] = value
    return typed


def read_config(db: Any) -> dict[str, dict[str, Any]]:
    """CONFIG_DB as sonic-cfggen ``-d --print-data`` prints it: table → key (``|``-joined) → fields."""
    keys = sorted(db.keys("*"))
    pipe = db.pipeline()
    for key in keys:
        pipe.hgetall(key)
    config: dict[str, dict[str, Any]] = {}
    for key, raw in zip(keys, pipe.execute(), strict=True):
        table, _, name = key.partition("|")
        if name:
            config.setdefault(table, {})[name] = raw_to_typed(raw)
    return config


def write_config(db: Any, config: Mapping[str, Mapping[str, Any]]) -> None:
    """Replace the whole database with ``config`` (``config reload`` of a file)."""
    pipe = db.pipeline()
    pipe.flushdb()
    for table, entries in config.items():
        for key, entry in entries.items():
            pipe.hset(f"{table}|{key}", mapping=typed_to_raw(entry))
    pipe.execute()


class ConfigDBConnector:
    """swsscommon's ConfigDBConnector: the calls GCU's change applier makes."""

    def __init__(self, use_unix_socket_path: bool = True, namespace: str = "", **_: Any) -> None:
        self.db: Any = None

    def connect(self, wait_for_init: bool = True, retry_on: bool = False) -> None:
        self.db = connect(CONFIG_DB)

    def _db(self) -> Any:
        if self.db is None:
            raise RuntimeError("ConfigDBConnector: connect() first")
        return self.db

    def set_entry(self, table: str, key: str | tuple[str, ...], data: Mapping[str, Any] | None) -> None:
        name = f"{table}|{'|'.join(key) if isinstance(key, tuple) else key}"
        pipe = self._db().pipeline()
        pipe.delete(name)
        if data is not None:
            pipe.hset(name, mapping=typed_to_raw(data))
        pipe.execute()

    def get_config(self) -> dict[str, dict[str, Any]]:
        return read_config(self._db())


class DBConnector:
    """swsscommon's DBConnector by database name (STATE_DB for GCU's PORT validator)."""

    def __init__(self, name: str, *_: Any) -> None:
        self.db = connect(DATABASES[name])


class Table:
    def __init__(self, connector: DBConnector, table: str) -> None:
        self.db, self.table = connector.db, table

    def hget(self, key: str, field: str) -> tuple[bool, str | None]:
        value: str | None = self.db.hget(f"{self.table}|{key}", field)
        return value is not None, value


# --- sonic_py_common ---------------------------------------------------------------------------------------

def sonic_version_info() -> dict[str, str]:
    """device_info.get_sonic_version_info: /etc/sonic/sonic_version.yml (``key: 'value'`` lines)."""
    text = Path(os.environ[VERSION_VAR]).read_text()
    return {m.group(1): m.group(2) for m in re.finditer(r"^(\w+):\s*'?([^'\n]*)'?$", text, re.MULTILINE)}


class Logger:
    """sonic_py_common.logger.Logger: syslog (here a file) and, when asked, the console."""

    LOG_PRIORITY_ERROR, LOG_PRIORITY_WARNING, LOG_PRIORITY_NOTICE, LOG_PRIORITY_INFO, LOG_PRIORITY_DEBUG = 3, 4, 5, 6, 7

    def __init__(self, log_identifier: str | None = None, *_: Any, **__: Any) -> None:
        self.identifier = log_identifier or "python"
        self.minimum = self.LOG_PRIORITY_NOTICE

    def set_min_log_priority(self, priority: int) -> None:
        self.minimum = priority

    def set_min_log_priority_debug(self) -> None:
        self.minimum = self.LOG_PRIORITY_DEBUG

    def set_min_log_priority_info(self) -> None:
        self.minimum = self.LOG_PRIORITY_INFO

    def set_min_log_priority_notice(self) -> None:
        self.minimum = self.LOG_PRIORITY_NOTICE

    def log(self, priority: int, msg: str, also_print_to_console: bool = False) -> None:
        if priority > self.minimum:
            return
        log = os.environ.get(SYSLOG_VAR)
        if log:
            with Path(log).open("a") as stream:
                stream.write(f"{self.identifier}: {msg}\n")
        if also_print_to_console:
            print(msg)

    def log_error(self, msg: str, also_print_to_console: bool = False) -> None:
        self.log(self.LOG_PRIORITY_ERROR, msg, also_print_to_console)

    def log_warning(self, msg: str, also_print_to_console: bool = False) -> None:
        self.log(self.LOG_PRIORITY_WARNING, msg, also_print_to_console)

    def log_notice(self, msg: str, also_print_to_console: bool = False) -> None:
        self.log(self.LOG_PRIORITY_NOTICE, msg, also_print_to_console)

    def log_info(self, msg: str, also_print_to_console: bool = False) -> None:
        self.log(self.LOG_PRIORITY_INFO, msg, also_print_to_console)

    def log_debug(self, msg: str, also_print_to_console: bool = False) -> None:
        self.log(self.LOG_PRIORITY_DEBUG, msg, also_print_to_console)


# --- sonic_yang on libyang-python, with the libyang-1 node calls GCU makes ------------------------------------

LYS_LEAF = "leaf"  # the shim ``yang`` module's constant; compared only with _Schema.nodetype()


class _Schema:
    def __init__(self, node: Any) -> None:
        self.node = node

    def nodetype(self) -> str:
        import libyang

        return LYS_LEAF if isinstance(self.node, libyang.SLeaf) else type(self.node).__name__


class _Libyang1Node:
    """A libyang-python DNode that also answers libyang-1's ``tree_for``/``find_path().data()``/``tree_dfs``/
    ``schema().nodetype()``; every other attribute is the DNode's own (sonic_yang passes it to libyang-python)."""

    def __init__(self, node: Any) -> None:
        self._node = node

    def __getattr__(self, name: str) -> Any:
        return getattr(self._node, name)

    def __bool__(self) -> bool:
        return True

    def tree_for(self) -> list[_Libyang1Node]:
        return [_Libyang1Node(node) for node in self._node.first_sibling().siblings()]

    def find_path(self, xpath: str) -> _NodeSet:
        return _NodeSet([_Libyang1Node(node) for node in self._node.find_all(xpath)])

    def tree_dfs(self) -> Iterator[_Libyang1Node]:
        return (_Libyang1Node(node) for node in self._node.iter_tree())

    def schema(self) -> _Schema:
        return _Schema(self._node.schema())


class _NodeSet:
    def __init__(self, nodes: list[_Libyang1Node]) -> None:
        self.nodes = nodes

    def data(self) -> list[_Libyang1Node]:
        return self.nodes


def _sonic_yang_module() -> types.ModuleType:
    """sonic-yang-mgmt's sonic_yang, loaded under its own name, with ``SonicYang.root`` wrapped."""
    sys.path.insert(0, str(SONIC_YANG_MGMT))
    spec = importlib.util.spec_from_file_location("sonic_yang", SONIC_YANG_MGMT / "sonic_yang.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["sonic_yang"] = module
    spec.loader.exec_module(module)
    original = module.SonicYang

    def get_root(self: Any) -> Any:
        node = self.__dict__.get("_root")
        return None if node is None else _Libyang1Node(node)

    def set_root(self: Any, node: Any) -> None:
        self.__dict__["_root"] = node._node if isinstance(node, _Libyang1Node) else node

    original.root = property(get_root, set_root)
    build_map = original._createDBTableToModuleMap

    def create_map(self: Any) -> None:
        build_map(self)
        for entry in self.confDbYangMap.values():
            entry["container"] = _yin_container(self, entry["container"])

    original._createDBTableToModuleMap = create_map
    load_models = original.loadYangModel

    def load_yang_models(self: Any) -> Any:
        loaded = load_models(self)
        _read_prefixes(self.ctx, Path(self.yang_dir))
        return loaded

    original.loadYangModel = load_yang_models
    original.__copy__ = _borrowing_copy
    destroy = original.__del__

    def release(self: Any) -> None:
        if not self.__dict__.get("_borrowed"):
            destroy(self)
        elif self.__dict__.get("_root") is not None and self.__dict__["_root"] is not self.__dict__["_lent_root"]:
            self.__dict__["_root"].free()

    original.__del__ = release
    return module


def _borrowing_copy(self: Any) -> Any:
    """``copy.copy`` of a SonicYang (GCU's ConfigWrapper copies its loaded-models instance for every check): the
    copy shares the libyang context, as SWIG's reference-counted libyang-1 context was shared, so only the
    original destroys it; a copy frees only a data tree of its own."""
    cls: Any = type(self)
    clone = cls.__new__(cls)
    clone.__dict__.update(self.__dict__)
    clone.__dict__.update(_borrowed=True, _lent_root=self.__dict__.get("_root"))
    return clone


def _json_string_datatypes(context: Any, text: str) -> str:
    """libyang 3's ``LYD_PARSE_JSON_STRING_DATATYPES`` (every value a JSON string, as config_db writes them) for
    libyang 2, which wants RFC 7951 JSON: each string becomes the JSON type libyang resolves its value to."""
    data = json.loads(text)
    for name, value in data.items():
        module, _, top = name.partition(":")
        schema = next(iter(context.find_path(f"/{module}:{top}")), None)
        if schema is not None:
            data[name] = _typed(context, schema, value)
    return json.dumps(data)


def _typed(context: Any, schema: Any, value: Any) -> Any:
    import libyang

    if isinstance(schema, libyang.SList) and isinstance(value, list):
        return [_typed_children(context, schema, item) for item in value]
    if isinstance(schema, libyang.SLeafList) and isinstance(value, list):
        return [_typed_leaf(context, schema, item) for item in value]
    if isinstance(schema, libyang.SLeaf):
        return _typed_leaf(context, schema, value)
    return _typed_children(context, schema, value)


def _typed_children(context: Any, schema: Any, value: Any) -> Any:
    if not isinstance(value, dict):
        return value
    children = _data_children(schema)
    return {name: _typed(context, children[name.rpartition(":")[2]], item)
            if name.rpartition(":")[2] in children else item for name, item in value.items()}


def _data_children(schema: Any) -> dict[str, Any]:
    """The data children (libyang-python 2's ``children()`` already looks through choice and case)."""
    return {child.name(): child for child in schema.children()}


_INT_TYPES = ("INT8", "INT16", "INT32", "UINT8", "UINT16", "UINT32")  # 64-bit numbers stay JSON strings


def _typed_leaf(context: Any, schema: Any, value: Any) -> Any:
    from _libyang import ffi, lib  # type: ignore[import-not-found,unused-ignore]

    if isinstance(value, bool):
        value = "true" if value else "false"
    elif isinstance(value, int | float):
        value = str(value)  # sonic_yang's own conversion already made a number of it; libyang decides below
    if not isinstance(value, str):
        return value
    raw = value.encode()
    realtype = ffi.new("struct lysc_type **")
    done = lib.lyd_value_validate(context.cdata, schema.cdata, raw, len(raw), ffi.NULL, realtype, ffi.NULL)
    lib.ly_err_clean(context.cdata, ffi.NULL)
    if done not in (lib.LY_SUCCESS, lib.LY_EINCOMPLETE) or realtype[0] == ffi.NULL:
        return value  # invalid: libyang's own parse reports it
    base = realtype[0].basetype
    if base in {getattr(lib, f"LY_TYPE_{name}") for name in _INT_TYPES}:
        return int(value, 10) if re.fullmatch(r"[+-]?\d+", value) else value
    if base == lib.LY_TYPE_BOOL:
        return value == "true"
    return value


def _libyang2_parse_data_mem() -> None:
    """sonic_yang calls ``Context.parse_data_mem(..., json_string_datatypes=True)`` (libyang-python 3)."""
    libyang: Any = importlib.import_module("libyang")

    original = libyang.Context.parse_data_mem
    if getattr(original, "adapted", False):
        return

    def parse_data_mem(self: Any, data: str, fmt: str, *args: Any, json_string_datatypes: bool = False,
                       **kwargs: Any) -> Any:
        if json_string_datatypes and fmt == "json":
            data = _json_string_datatypes(self, data)
        return original(self, data, fmt, *args, **kwargs)

    parse_data_mem.adapted = True  # type: ignore[attr-defined]
    libyang.Context.parse_data_mem = parse_data_mem
    # sonic_yang's YIN-shape view asks ``children(with_choice=True)`` and tests ``isinstance(node, ly.SChoice)``:
    # libyang-python 2's ``children()`` always looks through choice and case (a leaf in a case is listed as a
    # leaf, where GCU's PathAddressing looks first anyway) and has no SChoice class, so both are no-ops here.
    libyang.SChoice = getattr(libyang, "SChoice", type("SChoice", (), {}))
    for cls in (libyang.Module, libyang.SContainer, libyang.SList, libyang.SRpcInOut):
        cls.children = _ignoring_choice_options(cls.children)


_BACKLINKS: dict[Any, list[str]] = {}  # per libyang context: every leafref leaf's data path
_TARGETS: dict[tuple[Any, str], list[str]] = {}


def _libyang2_backlinks(libyang: Any) -> None:
    """libyang-python 3's ``Context.find_backlinks_paths(None)`` (every leafref node) and
    ``find_leafref_path_target_paths(path)`` (what a leafref points at), which sonic_yang's dependency search
    uses, for libyang 2: the schema walked once per context, each leafref's path resolved with the import
    prefixes its module declares (read from the model files, as libyang-python 2 does not expose them)."""

    def find_backlinks_paths(self: Any, match_path: str | None = None, match_ancestors: bool = False) -> list[str]:
        if self.cdata not in _BACKLINKS:
            _BACKLINKS[self.cdata] = [_pattern_free(node.data_path()) for node in _schema_nodes(self)
                                      if isinstance(node, libyang.SLeaf | libyang.SLeafList) and _lref_paths(node)]
        return list(_BACKLINKS[self.cdata])

    def find_leafref_path_target_paths(self: Any, path: str) -> list[str]:
        key = (self.cdata, path)
        if key not in _TARGETS:
            node = next(iter(self.find_path(path)), None)
            found = [] if node is None else [_resolve(self, node, lref) for lref in _lref_paths(node)]
            _TARGETS[key] = [target.schema_path() for target in found if target is not None]
        return list(_TARGETS[key])

    libyang.Context.find_backlinks_paths = find_backlinks_paths
    libyang.Context.find_leafref_path_target_paths = find_leafref_path_target_paths


def _schema_nodes(context: Any) -> Iterator[Any]:
    for module_name in _MODULE_PREFIXES.get(context.cdata, {}):
        module = context.get_module(module_name)
        stack = list(module.children()) if module is not None else []
        while stack:
            node = stack.pop()
            yield node
            if hasattr(node, "children"):
                stack.extend(node.children())


def _lref_paths(node: Any) -> list[tuple[str, str]]:
    """(leafref path, the leaf's module) of a leaf's type or its union members."""
    found: list[tuple[str, str]] = []
    todo = [node.type()]
    while todo:
        kind = todo.pop()
        if kind.basename() == "leafref":
            found.append((str(kind.leafref_path()), node.module().name()))
        elif kind.basename() == "union":
            todo.extend(kind.union_types())
    return found


_MODULE_PREFIXES: dict[Any, dict[str, dict[str, str]]] = {}  # context → module → prefix → module


def _read_prefixes(context: Any, models: Path) -> None:
    table: dict[str, dict[str, str]] = {}
    for model in sorted(models.glob("*.yang")):
        text = model.read_text()
        name = re.search(r"^\s*module\s+([\w-]+)", text, re.MULTILINE)
        if name is None:
            continue
        own = re.search(r"^\s*prefix\s+\"?([\w-]+)", text, re.MULTILINE)
        prefixes = {own.group(1): name.group(1)} if own else {}
        for imported, prefix in re.findall(r"import\s+([\w-]+)\s*\{[^}]*?prefix\s+\"?([\w-]+)", text):
            prefixes[prefix] = imported
        table[name.group(1)] = prefixes
    _MODULE_PREFIXES[context.cdata] = table


def _pattern_free(path: str) -> str:
    return re.sub(r"\[[^\]]*\]", "", path)


def _resolve(context: Any, node: Any, lref: tuple[str, str]) -> Any:
    """The schema node a leafref path points at (predicates dropped: they filter instances, not nodes)."""
    path, module = lref
    table = _MODULE_PREFIXES.get(context.cdata, {})
    # The leaf's module's own and imported prefixes; a path written in another module's typedef or grouping
    # uses that module's prefixes, which SONiC keeps unique (each module's own prefix).
    prefixes = {own: name for name, known in table.items() for own, target in known.items() if target == name}
    prefixes.update(table.get(module, {}))
    here: list[tuple[str, str]] = []
    if not path.startswith("/"):  # relative to the leaf itself
        current = module
        for part in _pattern_free(node.data_path()).split("/")[1:]:
            owner, _, name = part.rpartition(":")
            current = owner or current
            here.append((current, name))
    for step in (step for step in _pattern_free(path).split("/") if step):
        if step == "..":
            here.pop()
            continue
        prefix, _, name = step.rpartition(":")
        here.append((prefixes.get(prefix, module) if prefix else (here[-1][0] if here else module), name))
    return next(iter(context.find_path("/" + "/".join(f"{owner}:{name}" for owner, name in here))), None)


def _ignoring_choice_options(children: Any) -> Any:
    def adapted(self: Any, *args: Any, with_choice: bool = False, with_case: bool = False, **kwargs: Any) -> Any:
        return children(self, *args, **kwargs)

    return adapted


class _YinView:
    """The YIN-shaped dict (xmltodict of ``print_mem("yin")``) of one table container, which the releases' GCU
    reads from ``confDbYangMap[table]["container"]`` (``model.get("list")``, ``model["@name"]``), built by
    sonic_yang's own ``_yjson_node`` on first use."""

    def __init__(self, sonic_yang: Any, snode: Any) -> None:
        self.sonic_yang, self.snode = sonic_yang, snode
        self.yin: dict[str, Any] | None = None

    def view(self) -> dict[str, Any]:
        if self.yin is None:
            self.yin = dict(self.sonic_yang._yjson_node(self.snode)[1])
        return self.yin


def _yin_container(sonic_yang: Any, snode: Any) -> Any:
    """An SContainer (for sonic_yang's translation) that also reads as its YIN dict (for GCU)."""
    libyang: Any = importlib.import_module("libyang")

    class YinSContainer(libyang.SContainer):  # type: ignore[misc]
        def __init__(self, view: _YinView) -> None:
            super().__init__(view.snode.context, view.snode.cdata)
            self.yin = view

        def get(self, key: str, default: Any = None) -> Any:
            return self.yin.view().get(key, default)

        def __getitem__(self, key: str) -> Any:
            return self.yin.view()[key]

        def __contains__(self, key: object) -> bool:
            return key in self.yin.view()

    return YinSContainer(_YinView(sonic_yang, snode))


def _module(name: str, **attributes: Any) -> types.ModuleType:
    module = types.ModuleType(name)
    module.__dict__.update(attributes)
    sys.modules[name] = module
    return module


def install(release: str) -> types.ModuleType:
    """Import GCU of ``release`` with the adapters in place; its ``generic_updater`` module."""
    swsscommon = _module("swsscommon.swsscommon", ConfigDBConnector=ConfigDBConnector, DBConnector=DBConnector,
                         Table=Table)
    _module("swsscommon", swsscommon=swsscommon)
    common = {
        "logger": _module("sonic_py_common.logger", Logger=Logger),
        "multi_asic": _module("sonic_py_common.multi_asic", DEFAULT_NAMESPACE="", is_multi_asic=lambda: False,
                              get_namespace_list=lambda namespace=None: [""]),
        "device_info": _module("sonic_py_common.device_info", get_sonic_version_info=sonic_version_info,
                               is_chassis=lambda: False, is_multi_npu=lambda: False),
    }
    _module("sonic_py_common", **common)
    _module("yang", LYS_LEAF=LYS_LEAF)
    _libyang2_parse_data_mem()
    _libyang2_backlinks(importlib.import_module("libyang"))
    _sonic_yang_module()
    sys.path.insert(0, str(GCU_ROOT / f"sonic-utilities-{release}"))
    gu_common: Any = importlib.import_module("generic_config_updater.gu_common")
    gu_common.YANG_DIR = str(models_for(release))
    return importlib.import_module("generic_config_updater.generic_updater")


def wait_for_socket(path: str, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if redis.Redis(unix_socket_path=path).ping():
                return
        except (redis.ConnectionError, FileNotFoundError):
            time.sleep(0.05)
    raise TimeoutError(f"redis-server did not answer on {path} within {timeout:.0f} s")


def dumps(config: Any) -> str:
    return json.dumps(config, indent=4, sort_keys=True)
