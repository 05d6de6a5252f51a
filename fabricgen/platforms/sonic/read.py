"""Read a SONiC ``config_db.json`` back into the DeviceModel: the inverse of the renderer, brownfield-tolerant.

Owned — what ``owned()`` projects and ``read()`` replaces with what the file says:

* every non-management port (PORT): ``admin_up``, ``mtu``, ``speed_mbps``, ``fec``, ``lanes``, ``description``;
  VLAN membership (VLAN_MEMBER ``Vlan<id>|<port>``): ``access_vlan`` (tagging_mode ``untagged`` or
  ``priority_tagged``), ``tagged_vlans`` (``tagged``); and on host/fabric/oob-access ports ``mode``: switched when a
  VLAN member or PORT.mode ``access``/``trunk`` (``config switchport mode``), else routed, PORT.mode's default;
* on data ports (role host/fabric) of a device with QoS: ``pfc_priorities`` (PORT_QOS_MAP ``pfc_enable``),
  ``lossless`` (= PFC on some priority), ``headroom`` xon/xoff/size (BUFFER_PG → BUFFER_PROFILE) and
  ``cable_m`` (CABLE_LENGTH) — with the dynamic buffer model, headroom as the switch computes it (below);
* ``qos``: the four maps (``dscp_to_tc``, ``tc_to_pg``, ``tc_to_queue``, ``pfc_priority_to_queue``), the
  queues' index/scheduler/weight/ECN thresholds (QUEUE → SCHEDULER, WRED_PROFILE) and the PFC watchdog
  (PFC_WD; detection/restoration/action only when some data port has PFC — the renderer writes per-port
  entries only there);
* ``mgmt``: ``interface`` (MGMT_PORT key), ``mtu``, ``vrf`` (MGMT_VRF_CONFIG: ``mgmt`` or ``default``),
  ``address``/``gateway`` (MGMT_INTERFACE; the renderer writes them only as a pair).

Also set by ``read()`` but not compared (derived, or not a field of its own in config_db):
``qos.lossless_priorities`` = union of the ports' ``pfc_enable``; each queue's ``traffic_class`` (inverse of
TC_TO_QUEUE_MAP), ``class_name`` (from the ``scheduler.<class>`` name when it has that form) and ``lossless``.

Not recoverable, kept from the skeleton: port roles, peers, media, ``cable_assumed``, headroom ``method``
(replaced by where the numbers were read, unless buffermgrd's numbers are the skeleton's: then the skeleton's
headroom, which says the same formula sized them), ``qos.rdma_*``/``cnp_*`` (which class is RDMA or CNP is intent,
not config), ``mgmt.vlan``, hardware/asic/role/name. A skeleton without QoS (or management) stays without: a QosModel
needs the RDMA/CNP identity and a MgmtModel the VLAN, neither of which config_db holds. MGMT_PORT
description/speed/admin_status are written by the renderer from the cabling and not read.

Brownfield: tables fabricgen does not own are ignored. The device's maps are the ones the ports actually
reference (the most common reference in PORT_QOS_MAP, else fabricgen's ``ROCE``), so a switch still pointing at
SONiC's ``AZURE`` maps reads as such; its queues and watchdog timers are the QUEUE rows and PFC_WD entry most data
ports have (ties: the first data port's in natural name order).

Each data port's effective QoS — what the switch runs on it — is then read on its own, and where it differs from
the device's, ``port.qos`` holds a copy of the device's QosModel with the differing fields (else None):

* ``trust``/``dscp_to_tc``: the port's ``dscp_to_tc_map``; without one, PORT_QOS_MAP|global's (sonic-swss
  ``orchagent/qosorch.cpp`` handleGlobalQosMap sets it as the switch-level SAI_SWITCH_ATTR_QOS_DSCP_TO_TC_MAP,
  which a port's own overrides); a port with only a ``dot1p_to_tc_map`` trusts the PCP; with neither, nothing
  (SAI ``saiport.h``: port maps default to no map, and every packet takes QOS_DEFAULT_TC 0);
* ``tc_to_pg``/``tc_to_queue``/``pfc_priority_to_queue``: the maps the port's entry binds, ``{}`` when it binds
  none (saiport.h: "Default no map", TC→queue "all packets to queue 0");
* ``queues``: the port's own QUEUE rows (scheduler → SCHEDULER, wred_profile → WRED_PROFILE); none: ``[]``;
* ``watchdog`` (lossless ports): the port's PFC_WD entry, when its ``pfcwd_sw_enable`` covers every priority of
  its ``pfc_enable`` — qosorch.cpp stores pfcwd_sw_enable as the port's watchdog bitmask and pfcwdorch.cpp
  (getLosslessTcsForPort) watches those priorities only; no PFC_WD entry, or a lossless priority left out: None.

Headroom is what the switch reserves, by its buffer model (``DEVICE_METADATA|localhost.buffer_model`` when the
file has it, else the skeleton's, else the vendor image's default):

* a lossless PG (a BUFFER_PG entry whose PGs include a PFC priority) whose profile holds xon/xoff/size: those
  numbers (traditional model, or a static headroom override in the dynamic one);
* dynamic model, PG profile ``NULL``, absent or without numbers: what buffermgrd computes for the port — the
  release's formula (the file's ``VERSIONS|DATABASE`` when it names a known release, else the skeleton's, else
  fabricgen's target) over the port's speed, CABLE_LENGTH, mtu and
  lane count, the file's LOSSLESS_TRAFFIC_PATTERN (else the skeleton's, else the release's template values) and
  shared headroom pool (BUFFER_POOL ``ingress_lossless_pool`` xoff or DEFAULT_LOSSLESS_BUFFER_PARAMETER
  ``over_subscribe_ratio`` above 0; when the file has neither table, the skeleton's: a headroom of xon alone);
* dynamic model, a port without any BUFFER_PG entry in the file (what fabricgen renders: the SKU template owns
  the PGs, and writes a port's lossy ``0`` and lossless ``3-4`` together): the template's ``3-4``, computed as
  above for PFC priorities among them;
* otherwise None: no headroom for the lossless priority.

With the headroom, where the PG pauses: ``dynamic_th`` (the profile's; for a profile buffermgrd makes,
DEFAULT_LOSSLESS_BUFFER_PARAMETER ``default_dynamic_th``; None where the file does not say) and ``pool_bytes``
(BUFFER_POOL size of the profile's pool; None where the config leaves it to the switch). Lint's FG-ECN-002 reads
them; they are not owned (fabricgen writes neither the pool nor the default parameters).

Ports: a skeleton port missing from PORT does not exist on the switch; it keeps its skeleton values except
``admin_up`` = False, so lint sees an intended-up port as down. A PORT entry the skeleton lacks is added as
role ``unused`` with what the file says. Values SONiC leaves to defaults read as those defaults
(``admin_status`` absent = down, ``mtu`` absent = 9100, PFC watchdog 200/200/200 ms drop).

A file that is not JSON, not an object of tables, or holds a number or choice the model cannot take raises
``ConfigReadError(file, line, message)``; the line of a bad value is the line of its key (best effort).
"""

from __future__ import annotations

import functools
import json
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from fabricgen.models.device import (
    DeviceModel,
    EcnThresholds,
    HeadroomModel,
    MgmtModel,
    PortModel,
    QosModel,
    QueueModel,
    WatchdogModel,
)
from fabricgen.platforms import PORT_QOS, ConfigReadError
from fabricgen.platforms.common.modelcopy import updated
from fabricgen.platforms.sonic.capability import CAPABILITY
from fabricgen.platforms.sonic.render import CABLE_MAP, LOSSLESS_POOL, MAP, PATTERN
from fabricgen.resolve.headroom import (
    ASIC_CONSTANTS,
    DEFAULT_SONIC_RELEASE,
    PAUSE_QUANTA,
    SONIC_RELEASES,
    BufferModel,
    HeadroomInputs,
    default_buffer_model,
    gearbox_delay_ns,
    sonic_headroom,
)

FILE = "config_db.json"
DATA_ROLES = ("host", "fabric")
MODE_ROLES = ("host", "fabric", "oob-access")  # the roles resolve gives a forwarding mode (resolve.ports.port_mode)
SWITCHPORT_MODES = ("access", "trunk")  # PORT.mode (sonic-port.yang: routed|access|trunk, default routed)
DEFAULT_PORT_MTU = 9100  # SONiC's port default (portmgrd)
DEFAULT_MGMT_MTU = 1500  # Linux default for eth0
assert CAPABILITY.mgmt_mtu_range is not None
MGMT_MTU_RANGE = CAPABILITY.mgmt_mtu_range
# pfcwd's own defaults (sonic-utilities pfcwd/main.py), used for keys a PFC_WD table leaves out.
PFCWD_DEFAULTS = {"poll": 200, "detection": 200, "restoration": 200, "action": "drop"}
WATCHDOG_ACTIONS: dict[str, Literal["drop", "forward", "alert"]] = {"drop": "drop", "forward": "forward",
                                                                     "alert": "alert"}

# (table, PORT_QOS_MAP field, QosModel field) of the four maps, in the order the model declares them.
MAPS = (
    ("DSCP_TO_TC_MAP", "dscp_to_tc_map", "dscp_to_tc"),
    ("TC_TO_PRIORITY_GROUP_MAP", "tc_to_pg_map", "tc_to_pg"),
    ("TC_TO_QUEUE_MAP", "tc_to_queue_map", "tc_to_queue"),
    ("MAP_PFC_PRIORITY_TO_QUEUE", "pfc_to_queue_map", "pfc_priority_to_queue"),
)


# --- owned ----------------------------------------------------------------------------------------------

def owned(device: DeviceModel) -> dict[str, Any]:
    """The fields config_db.json expresses, as plain data (see the module docstring)."""
    with_qos = device.qos is not None
    return {
        "ports": {p.name: _owned_port(p, with_qos) for p in device.ports if p.role != "mgmt"},
        "qos": _owned_qos(device, device.qos) if device.qos is not None else None,
        # What a port that runs the device's QoS (its entry's ``qos`` None) runs, in a port's own view: a port with
        # QoS of its own is compared with this, not with the device view, whose fields are not a port's.
        PORT_QOS: _device_qos_as_ports_run_it(device),
        "mgmt": _owned_mgmt(device.mgmt) if device.mgmt is not None else None,
    }


def _owned_port(port: PortModel, with_qos: bool) -> dict[str, Any]:
    # Empty strings and zero speed are not written (SONiC cannot store empty fields): they read as None.
    entry: dict[str, Any] = {"admin_up": port.admin_up, "mtu": port.mtu, "speed_mbps": port.speed_mbps or None,
                             "fec": port.fec or None, "lanes": port.lanes or None,
                             "description": port.description or None}
    entry |= {"access_vlan": port.access_vlan, "tagged_vlans": port.tagged_vlans or None}
    if port.role in MODE_ROLES:
        entry["mode"] = port.mode
    if with_qos and port.role in DATA_ROLES:
        headroom = port.headroom if port.speed_mbps else None  # no speed, no buffermgrd profile name
        entry |= {"pfc_priorities": sorted(port.pfc_priorities), "lossless": port.lossless, "cable_m": port.cable_m,
                  "headroom": _owned_headroom(headroom), "qos": None if port.qos is None else _owned_port_qos(port.qos)}
    return entry


def _owned_port_qos(qos: QosModel) -> dict[str, Any]:
    """A port's own QoS (PortModel.qos): its classification, maps, queues and watchdog as the switch runs them."""
    watchdog = qos.watchdog
    return {"trust": qos.trust, "dscp_to_tc": dict(qos.dscp_to_tc), "tc_to_pg": dict(qos.tc_to_pg),
            "tc_to_queue": dict(qos.tc_to_queue), "pfc_priority_to_queue": dict(qos.pfc_priority_to_queue),
            "queues": [_owned_queue(q) for q in sorted(qos.queues, key=lambda q: q.index)],
            "watchdog": None if watchdog is None else {"detection_ms": watchdog.detection_ms,
                                                       "restoration_ms": watchdog.restoration_ms,
                                                       "action": watchdog.action}}


def _device_qos_as_ports_run_it(device: DeviceModel) -> dict[str, Any] | None:
    """The switch's QoS in a port's own view, as far as its config_db.json can say it: only with data ports (QUEUE and
    PORT_QOS_MAP entries exist on them alone), and the watchdog only where one of them has PFC (PFC_WD port
    entries likewise), as the switch-wide view has them."""
    data_ports = [p for p in device.ports if p.role in DATA_ROLES]
    if device.qos is None or not data_ports:
        return None
    view = _owned_port_qos(device.qos)
    return view if any(p.pfc_priorities for p in data_ports) else {**view, "watchdog": None}


def _owned_headroom(headroom: HeadroomModel | None) -> dict[str, int] | None:
    return None if headroom is None else {"xon": headroom.xon, "xoff": headroom.xoff, "size": headroom.size}


def _owned_qos(device: DeviceModel, qos: QosModel) -> dict[str, Any]:
    data_ports = [p for p in device.ports if p.role in DATA_ROLES]
    # QUEUE and the per-port PFC_WD entries exist only on data ports: without any, the config cannot say.
    return {
        "dscp_to_tc": dict(qos.dscp_to_tc), "tc_to_pg": dict(qos.tc_to_pg), "tc_to_queue": dict(qos.tc_to_queue),
        "pfc_priority_to_queue": dict(qos.pfc_priority_to_queue),
        "queues": [_owned_queue(q) for q in sorted(qos.queues, key=lambda q: q.index)] if data_ports else [],
        "watchdog": _owned_watchdog(qos.watchdog, any(p.pfc_priorities for p in data_ports)),
    }


def _owned_queue(queue: QueueModel) -> dict[str, Any]:
    ecn = queue.ecn
    return {"index": queue.index, "scheduler": queue.scheduler,
            "weight": queue.weight if queue.scheduler == "dwrr" else None,
            "ecn": None if ecn is None else {"min_bytes": ecn.min_bytes, "max_bytes": ecn.max_bytes,
                                             "probability_pct": ecn.probability_pct}}


def _owned_watchdog(watchdog: WatchdogModel | None, per_port: bool) -> dict[str, Any] | None:
    if watchdog is None:
        return None
    entry: dict[str, Any] = {"poll_ms": watchdog.poll_ms}
    if per_port:
        entry |= {"detection_ms": watchdog.detection_ms, "restoration_ms": watchdog.restoration_ms,
                  "action": watchdog.action}
    return entry


def _owned_mgmt(mgmt: MgmtModel) -> dict[str, Any]:
    paired = bool(mgmt.address and mgmt.gateway)
    return {"interface": mgmt.interface, "vrf": mgmt.vrf, "mtu": mgmt.mtu,
            "address": mgmt.address if paired else None, "gateway": mgmt.gateway if paired else None}


# --- parsing helpers ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Db:
    """The parsed file plus its text, so that a bad value can be reported at the line of its key."""

    tables: dict[str, Any]
    text: str
    # Tables already checked, and maps already read: every port of a switch binds the same few maps, and checking
    # or converting them again per port made reading a 64-port config cost 64 times one map.
    checked: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    maps: dict[tuple[str, str], dict[int, int]] = field(default_factory=dict)
    # _per_port's index of a table (QUEUE is asked for twice), and pfc_enable texts already read.
    per_port: dict[str, dict[str, list[tuple[list[int], str, dict[str, Any]]]]] = field(default_factory=dict)
    pfc: dict[str, list[int]] = field(default_factory=dict)

    def table(self, name: str) -> dict[str, dict[str, Any]]:
        found = self.checked.get(name)
        if found is not None:
            return found
        table = self.tables.get(name, {})
        if not isinstance(table, dict) or not all(isinstance(v, dict) for v in table.values()):
            raise self.error(f"table {name} must map keys to objects of fields", name)
        self.checked[name] = table
        return table

    def error(self, message: str, *path: str) -> ConfigReadError:
        return ConfigReadError(FILE, _line_of(self.text, path), message)

    def number(self, value: Any, *path: str) -> int:
        if value.__class__ is str and value in _NUMBERS:  # the same few texts on every port: read once
            return _NUMBERS[value]
        text = str(value).strip()
        if not _INTEGER.fullmatch(text):
            raise self.error(f"{'|'.join(path)}: expected a number, found {value!r}", *path)
        if value.__class__ is str and len(_NUMBERS) < 4096:
            _NUMBERS[value] = int(text)
        return int(text)

    def number_in(self, value: Any, low: int, high: int, yang: str, *path: str) -> int:
        """number(), within ``low``-``high`` as the release's YANG model ``yang`` ranges the leaf (sonic-cfggen and
        GCU refuse a config outside it; a switch never runs one)."""
        number = self.number(value, *path)
        if not low <= number <= high:
            raise self.error(f"{'|'.join(path)}: {number} is outside {low}..{high} ({yang})", *path)
        return number

    def ints(self, values: Iterable[Any], *path: str) -> list[int]:
        return [self.number(v, *path) for v in values]


_INTEGER = re.compile(r"-?\d+")
_NUMBERS: dict[str, int] = {}  # texts _Db.number read well: a text that is a number is one in every file


def _line_of(text: str, path: Iterable[str]) -> int:
    """1-based line of the last of ``path``'s keys found in order (pretty-printed JSON: one key per line)."""
    lines = text.splitlines()
    found, start = 1, 0
    for key in path:
        needle = json.dumps(key) + ":"
        for index in range(start, len(lines)):
            if needle in lines[index]:
                found, start = index + 1, index + 1
                break
    return found


def _parse(files: Mapping[str, str]) -> _Db:
    if FILE not in files:
        raise ConfigReadError(FILE, 0, "file missing")
    text = files[FILE]
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigReadError(FILE, exc.lineno, f"not JSON: {exc.msg} (column {exc.colno})") from exc
    if not isinstance(data, dict):
        raise ConfigReadError(FILE, 1, "expected a JSON object of tables")
    return _Db(data, text)


def _natural(name: str) -> list[Any]:
    """The natural sort key of a name (Ethernet4 before Ethernet16); a switch's port names are the same on every
    switch of a fabric: each is split once (the key is only compared, never changed)."""
    key = _NATURAL.get(name)
    if key is None:
        key = [int(part) if part.isdigit() else part for part in _NUMBER_RUNS.split(name)]
        if len(_NATURAL) < 65536:
            _NATURAL[name] = key
    return key


_NUMBER_RUNS = re.compile(r"(\d+)")
_NATURAL: dict[str, list[Any]] = {}


def _ref(value: Any) -> str:
    """A reference as its bare name: SONiC before 202012 wrote ``[BUFFER_PROFILE|name]``."""
    if value.__class__ is str and value in _REFS:  # every port names the same few maps and schedulers
        return _REFS[value]
    text = str(value).strip()
    if text.startswith("[") and text.endswith("]"):
        text = text[1:-1].split("|", 1)[-1]
    if value.__class__ is str and len(_REFS) < 4096:
        _REFS[value] = text
    return text


_REFS: dict[str, str] = {}  # reference texts _ref read


def _index_range(db: _Db, text: str, *path: str) -> list[int]:
    """``"3"`` → [3], ``"3-4"`` → [3, 4] (queue and PG keys)."""
    first, _, last = text.partition("-")
    low = db.number(first, *path)
    return list(range(low, db.number(last, *path) + 1)) if last else [low]


def _per_port(db: _Db, table: str) -> dict[str, list[tuple[list[int], str, dict[str, Any]]]]:
    """``port|index`` keyed tables (QUEUE, BUFFER_PG) as port → [(indices, key, entry)]; the old
    ``EthernetA,EthernetB|0-2`` form is expanded too. Built once per table and read, never changed."""
    found = db.per_port.get(table)
    if found is not None:
        return found
    index: dict[str, list[tuple[list[int], str, dict[str, Any]]]] = db.per_port.setdefault(table, {})
    ranges: dict[str, list[int]] = {}  # every port names the same few suffixes ("0", "3-4"): each read once
    for key, entry in db.table(table).items():
        ports, sep, suffix = key.partition("|")
        if not sep:
            continue  # not a per-port key: not ours to interpret
        indices = ranges.get(suffix)
        if indices is None:
            indices = ranges[suffix] = _index_range(db, suffix, table, key)
        if "," not in ports:
            index.setdefault(ports, []).append((indices, key, entry))
            continue
        for port in ports.split(","):
            index.setdefault(port, []).append((indices, key, entry))
    return index


# --- buffer model ---------------------------------------------------------------------------------------

# The lossless PGs of SONiC's dynamic-model templates (sonic-buildimage files/build_templates/buffers_config.j2).
TEMPLATE_LOSSLESS_PGS = frozenset({3, 4})


@dataclass(frozen=True)
class _Buffers:
    """What buffermgrd sizes a dynamic-model headroom with, device-wide."""

    model: BufferModel
    release: str
    asic: str | None
    lossless_mtu: int
    small_packet_percent: int
    shared_headroom_pool: bool
    gearbox_delay_ns: int  # the platform's (buffermgrd reads it from STATE_DB PERIPHERAL_TABLE, not the config)
    dynamic_th: int | None  # DEFAULT_LOSSLESS_BUFFER_PARAMETER default_dynamic_th: the profiles buffermgrd makes
    pool_bytes: int | None  # BUFFER_POOL ingress_lossless_pool size, where the config sizes the pool
    # _computed_headroom's answers in this read, by what varies from port to port (speed, cable, MTU, lanes, PGs):
    # a switch's ports come in a few kinds, and the formula's inputs were built and hashed per port.
    computed: dict[tuple[Any, ...], HeadroomModel | None] = field(default_factory=dict, compare=False)


def _buffers(db: _Db, skeleton: DeviceModel) -> _Buffers:
    known = [p.headroom for p in skeleton.ports if p.headroom is not None]
    release = (_release(db) or next((h.release for h in known if h.release in SONIC_RELEASES), None)
               or DEFAULT_SONIC_RELEASE)
    mtu, percent = _traffic_pattern(db, known, release)
    return _Buffers(model=_buffer_model(db, known, skeleton.asic), release=release, asic=skeleton.asic,
                    lossless_mtu=mtu, small_packet_percent=percent,
                    shared_headroom_pool=_shared_headroom_pool(db, known),
                    gearbox_delay_ns=gearbox_delay_ns(skeleton.hardware),
                    dynamic_th=_default_dynamic_th(db), pool_bytes=_pool_bytes(db, LOSSLESS_POOL))


def _default_dynamic_th(db: _Db) -> int | None:
    """DEFAULT_LOSSLESS_BUFFER_PARAMETER's default_dynamic_th (the first entry by name), which buffermgrd gives the
    lossless profiles it makes; None when the file does not say (the SKU template's then applies)."""
    params = db.table("DEFAULT_LOSSLESS_BUFFER_PARAMETER")
    name = min(params, default=None)
    if name is None or "default_dynamic_th" not in params[name]:
        return None
    return _dynamic_th(db, params[name]["default_dynamic_th"], "DEFAULT_LOSSLESS_BUFFER_PARAMETER", name,
                       "default_dynamic_th")


def _dynamic_th(db: _Db, value: Any, *path: str) -> int:
    """A dynamic_th: an exponent -8..7 (sonic-buffer-profile.yang; alpha = 2^dynamic_th)."""
    th = db.number(value, *path)
    if not -8 <= th <= 7:
        raise db.error(f"{'|'.join(path)}: {th} is outside -8..7 (an exponent: alpha = 2^dynamic_th)", *path)
    return th


def _pool_bytes(db: _Db, pool: str) -> int | None:
    """BUFFER_POOL|<pool> size; None when the config leaves the pool's size to the switch (dynamic model)."""
    entry = db.table("BUFFER_POOL").get(pool, {})
    return db.number(entry["size"], "BUFFER_POOL", pool, "size") if "size" in entry else None


def _release(db: _Db) -> str | None:
    """The release a saved CONFIG_DB names: sonic-utilities' db_migrator writes its schema version, named after
    the release branch (``VERSIONS|DATABASE`` ``VERSION: version_202411_02``), at every boot. None when absent or
    not a release whose formula is known."""
    version = str(db.table("VERSIONS").get("DATABASE", {}).get("VERSION", ""))
    match = re.fullmatch(r"version_(\d{6})_\d+", version)
    return match.group(1) if match and match.group(1) in SONIC_RELEASES else None


def _buffer_model(db: _Db, known: list[HeadroomModel], asic: str | None) -> BufferModel:
    value = db.table("DEVICE_METADATA").get("localhost", {}).get("buffer_model")
    if value is None:
        return next((h.buffer_model for h in known if h.buffer_model), None) or default_buffer_model(asic)
    if value not in ("dynamic", "traditional"):
        raise db.error(f"DEVICE_METADATA|localhost: buffer_model {value!r} is not dynamic or traditional",
                       "DEVICE_METADATA", "localhost", "buffer_model")
    return "dynamic" if value == "dynamic" else "traditional"


def _traffic_pattern(db: _Db, known: list[HeadroomModel], release: str) -> tuple[int, int]:
    """(lossless MTU, small-packet percentage) the formula reads: the file's entry (``AZURE``, else the first
    by name), else the skeleton's, else what the release's template writes."""
    template = SONIC_RELEASES[release]
    entries = db.table("LOSSLESS_TRAFFIC_PATTERN")
    name = PATTERN if PATTERN in entries else min(entries, default=None)
    if name is not None:
        path = ("LOSSLESS_TRAFFIC_PATTERN", name)
        entry = entries[name]
        return (db.number(entry.get("mtu", template.template_lossless_mtu), *path, "mtu"),
                db.number(entry.get("small_packet_percentage", template.template_small_packet_percent), *path,
                          "small_packet_percentage"))
    for headroom in known:
        if headroom.lossless_mtu is not None and headroom.small_packet_percent is not None:
            return headroom.lossless_mtu, headroom.small_packet_percent
    return template.template_lossless_mtu, template.template_small_packet_percent


def _shared_headroom_pool(db: _Db, known: list[HeadroomModel]) -> bool:
    """As the formula decides it: the lossless pool has a shared headroom size (xoff) or an over-subscribe
    ratio is set. A file with neither table keeps the skeleton's: with a shared pool a PG reserves xon alone."""
    pools, params = db.table("BUFFER_POOL"), db.table("DEFAULT_LOSSLESS_BUFFER_PARAMETER")
    if not pools and not params:
        return any(h.size == h.xon for h in known)
    xoff = db.number(pools.get(LOSSLESS_POOL, {}).get("xoff", 0), "BUFFER_POOL", LOSSLESS_POOL, "xoff")
    param = params[min(params)] if params else {}
    ratio = db.number(param.get("over_subscribe_ratio", 0), "DEFAULT_LOSSLESS_BUFFER_PARAMETER",
                      "over_subscribe_ratio")
    return xoff > 0 or ratio > 0


# --- ports ----------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class _PortTables:
    port: dict[str, dict[str, Any]]
    qos: dict[str, dict[str, Any]]
    cables: dict[str, Any]
    pgs: dict[str, list[tuple[list[int], str, dict[str, Any]]]]
    profiles: dict[str, dict[str, Any]]
    buffers: _Buffers
    vlans: dict[str, list[tuple[int, str]]]  # port -> (VLAN id, tagging_mode) of its VLAN_MEMBER entries


def _port_tables(db: _Db, skeleton: DeviceModel) -> _PortTables:
    cable_entries = db.table("CABLE_LENGTH")
    cables = cable_entries.get(CABLE_MAP) or next((cable_entries[k] for k in sorted(cable_entries)), {})
    return _PortTables(db.table("PORT"), db.table("PORT_QOS_MAP"), cables, _per_port(db, "BUFFER_PG"),
                       db.table("BUFFER_PROFILE"), _buffers(db, skeleton), _vlan_members(db))


def _vlan_members(db: _Db) -> dict[str, list[tuple[int, str]]]:
    """VLAN_MEMBER ``Vlan<id>|<port>`` entries by port (sonic-vlan.yang: tagging_mode, mandatory, is tagged,
    untagged or priority_tagged)."""
    members: dict[str, list[tuple[int, str]]] = {}
    for key, entry in db.table("VLAN_MEMBER").items():
        vlan, sep, port = key.partition("|")
        if not sep or not re.fullmatch(r"Vlan\d+", vlan):
            raise db.error(f"VLAN_MEMBER|{key}: expected a key like Vlan100|Ethernet0", "VLAN_MEMBER", key)
        mode = str(entry.get("tagging_mode", ""))
        if mode not in ("tagged", "untagged", "priority_tagged"):
            raise db.error(f"VLAN_MEMBER|{key}: tagging_mode {mode!r} is not tagged, untagged or priority_tagged",
                           "VLAN_MEMBER", key)
        members.setdefault(port, []).append((int(vlan.removeprefix("Vlan")), mode))
    return members


def _read_ports(db: _Db, skeleton: DeviceModel) -> list[PortModel]:
    tables = _port_tables(db, skeleton)
    ports: list[PortModel] = []
    for port in skeleton.ports:
        entry = tables.port.get(port.name)
        if port.role == "mgmt":
            ports.append(port)  # eth0 lives in MGMT_PORT: see _read_mgmt
        elif entry is None:
            ports.append(updated(port, {"admin_up": False}))  # not in PORT: the port does not exist
        else:
            ports.append(_read_port(db, tables, port, entry))
    known = {p.name for p in skeleton.ports}
    for name in sorted(set(tables.port) - known, key=_natural):
        blank = PortModel(name=name, role="unused", admin_up=False, mtu=DEFAULT_PORT_MTU)
        ports.append(_read_port(db, tables, blank, tables.port[name]))
    return ports


def _read_port(db: _Db, tables: _PortTables, port: PortModel, entry: dict[str, Any]) -> PortModel:
    name = port.name
    pfc = _pfc_enable(db, tables.qos.get(name, {}), name)
    speed = entry.get("speed")
    fields: dict[str, Any] = {
        "admin_up": str(entry.get("admin_status", "down")) == "up",
        "mtu": db.number_in(entry.get("mtu", DEFAULT_PORT_MTU), 68, 9216, "sonic-port.yang", "PORT", name, "mtu"),
        "speed_mbps": db.number_in(speed, 1, _max_speed(tables.buffers.release), "sonic-port.yang of "
                                   f"{tables.buffers.release}", "PORT", name, "speed") if speed is not None else None,
        "fec": _text(entry.get("fec")), "lanes": _text(entry.get("lanes")),
        "description": _text(entry.get("description")),
        "pfc_priorities": pfc, "lossless": bool(pfc),
        "cable_m": _cable(db, tables.cables.get(name), name),
    }
    fields["headroom"] = _same_headroom(port.headroom, _headroom(db, tables, name, pfc, fields))
    fields |= _vlan_fields(tables.vlans.get(name, []), str(entry.get("mode", "routed")), port.role)
    return updated(port, fields)


def _max_speed(release: str) -> int:
    """PORT speed's upper bound in the release's sonic-port.yang (`range 1..800000` in 202411, 1..1600000 from
    202511); a release whose models fabricgen has not read gets the widest."""
    return _MAX_SPEED.get(release, 1_600_000)


_MAX_SPEED = {"202411": 800_000}


def _same_headroom(intended: HeadroomModel | None, found: HeadroomModel | None) -> HeadroomModel | None:
    """``found``, or the skeleton's headroom where the two differ only in how they say they were sized (the same
    buffermgrd numbers for the same inputs): the port then reads back equal to its resolved model, and lint
    compares it in one step instead of setting by setting (issue 26 item 7)."""
    if intended is None or found is None or intended is found:
        return found
    key = (id(intended), id(found))  # both are shared: resolve's per port kind, _buffermgrd_headroom's cache
    hit = _SAME_HEADROOM.get(key)
    if hit is None or hit[0] is not intended or hit[1] is not found:
        same = updated(found, {"method": intended.method}) == intended
        if len(_SAME_HEADROOM) >= 1024:
            _SAME_HEADROOM.clear()
        hit = _SAME_HEADROOM[key] = (intended, found, same)
    return intended if hit[2] else found


# (intended, found, whether they differ only in method), by their ids; the objects are held so ids stay theirs.
_SAME_HEADROOM: dict[tuple[int, int], tuple[HeadroomModel, HeadroomModel, bool]] = {}


def _vlan_fields(members: list[tuple[int, str]], mode: str, role: str) -> dict[str, Any]:
    """access_vlan (the untagged membership; ``priority_tagged`` is the untagged VLAN sent with an 802.1p tag),
    tagged_vlans, and — for the roles with a forwarding mode — mode: switched when PORT.mode is access/trunk or the
    port is a VLAN member (sonic-vlan.yang refuses a VLAN member in INTERFACE), else routed (PORT.mode's default)."""
    untagged = sorted(vid for vid, tagging in members if tagging != "tagged")
    tagged = sorted(vid for vid, tagging in members if tagging == "tagged")
    fields: dict[str, Any] = {"access_vlan": untagged[0] if untagged else None, "tagged_vlans": tagged or None}
    if role in MODE_ROLES:
        fields["mode"] = "switched" if members or mode in SWITCHPORT_MODES else "routed"
    return fields


def _text(value: Any) -> str | None:
    return str(value) if value not in (None, "") else None


def _pfc_enable(db: _Db, entry: dict[str, Any], port: str) -> list[int]:
    text = str(entry.get("pfc_enable", "")).strip()
    known = db.pfc.get(text)  # every lossless port says "3,4": read once (a bad text is never kept)
    if known is not None:
        return list(known)
    priorities = sorted(set(db.ints((p for p in text.split(",") if p.strip()), "PORT_QOS_MAP", port, "pfc_enable")))
    if any(not 0 <= p <= 7 for p in priorities):
        raise db.error(f"PORT_QOS_MAP|{port}: pfc_enable {text!r} is not a list of priorities 0-7",
                       "PORT_QOS_MAP", port, "pfc_enable")
    db.pfc[text] = priorities
    return list(priorities)


def _cable(db: _Db, value: Any, port: str) -> int | None:
    if value is None:
        return None
    if value.__class__ is str and value in _CABLES:  # a fabric has a few lengths: each text read once
        return _CABLES[value]
    match = _CABLE.fullmatch(str(value))
    if match is None:
        raise db.error(f"CABLE_LENGTH: {port} length {value!r} is not like `40m`", "CABLE_LENGTH", port)
    if value.__class__ is str and len(_CABLES) < 4096:
        _CABLES[value] = int(match.group(1))
    return int(match.group(1))


_CABLE = re.compile(r"\s*(\d+)\s*m?\s*")
_CABLES: dict[str, int] = {}  # CABLE_LENGTH texts _cable read well


def _headroom(db: _Db, tables: _PortTables, port: str, pfc: list[int],
              fields: dict[str, Any]) -> HeadroomModel | None:
    """What the switch reserves for the port's lossless PG: the first BUFFER_PG entry whose PGs include a PFC
    priority (lossy PG 0 entries of a brownfield switch are skipped by that). See the module docstring."""
    dynamic = tables.buffers.model == "dynamic"
    pgs = tables.pgs.get(port, [])
    for indices, key, entry in sorted(pgs, key=lambda item: _natural(item[1])):
        if not set(indices) & set(pfc):
            continue
        name = _ref(entry.get("profile", ""))
        profile = tables.profiles.get(name, {})
        if all(field in profile for field in ("xon", "xoff", "size")):
            return _profile_headroom(db, name, profile, key, tables.buffers)
        # NULL, absent or a profile without numbers: buffermgrd computes it (dynamic), or nothing does.
        return _computed_headroom(tables.buffers, fields, f"BUFFER_PG|{key}") if dynamic else None
    if dynamic and not pgs and pfc and set(pfc) <= TEMPLATE_LOSSLESS_PGS:
        return _computed_headroom(tables.buffers, fields, "the SKU template's BUFFER_PG 3-4")
    return None


def _profile_headroom(db: _Db, name: str, profile: dict[str, Any], key: str, buffers: _Buffers) -> HeadroomModel:
    path = ("BUFFER_PROFILE", name)
    pool = _ref(profile.get("pool", LOSSLESS_POOL))
    return HeadroomModel(xon=db.number(profile["xon"], *path, "xon"), xoff=db.number(profile["xoff"], *path, "xoff"),
                         size=db.number(profile["size"], *path, "size"),
                         method=f"read from {FILE} BUFFER_PROFILE|{name} (via BUFFER_PG|{key})",
                         dynamic_th=_dynamic_th(db, profile["dynamic_th"], *path, "dynamic_th")
                         if "dynamic_th" in profile else None,
                         pool_bytes=buffers.pool_bytes if pool == LOSSLESS_POOL else _pool_bytes(db, pool))


def _computed_headroom(buffers: _Buffers, fields: dict[str, Any], pgs: str) -> HeadroomModel | None:
    """The headroom buffermgrd computes for a port of the dynamic model; None where it cannot (no speed or cable
    length) or fabricgen does not know the ASIC's constants."""
    speed, cable, lanes = fields["speed_mbps"], fields["cable_m"], fields["lanes"]
    if buffers.asic not in ASIC_CONSTANTS or speed not in PAUSE_QUANTA or cable is None:
        return None
    lane_count = lanes.count(",") + 1 if lanes else 0
    key = (speed, cable, fields["mtu"], lane_count, pgs)
    if key in buffers.computed:
        return buffers.computed[key]
    params = HeadroomInputs(speed_mbps=speed, cable_m=cable, port_mtu=fields["mtu"], lanes=lane_count,
                            lossless_mtu=buffers.lossless_mtu, small_packet_percent=buffers.small_packet_percent,
                            shared_headroom_pool=buffers.shared_headroom_pool,
                            gearbox_delay_ns=buffers.gearbox_delay_ns)
    found = buffers.computed[key] = _buffermgrd_headroom(buffers.asic, params, buffers.release, pgs,
                                                         buffers.dynamic_th, buffers.pool_bytes)
    return found


@functools.lru_cache(maxsize=1024)  # ports of one speed, cable length and MTU get one model (not mutated)
def _buffermgrd_headroom(asic: str, params: HeadroomInputs, release: str, pgs: str, dynamic_th: int | None,
                         pool_bytes: int | None) -> HeadroomModel:
    headroom = sonic_headroom(asic, params, release, "dynamic")
    return updated(headroom, {"method": f"computed from {FILE} as buffermgrd does ({pgs}): "
                                                 f"{headroom.method}", "dynamic_th": dynamic_th,
                                       "pool_bytes": pool_bytes})


# --- qos ------------------------------------------------------------------------------------------------

def _data_ports(ports: list[PortModel]) -> list[PortModel]:
    return sorted((p for p in ports if p.role in DATA_ROLES), key=lambda p: _natural(p.name))


def _map_name(db: _Db, field: str, ports: list[PortModel]) -> str:
    """The map the data ports reference most (ties: by name); fabricgen's own when nothing references one."""
    port_qos = db.table("PORT_QOS_MAP")
    refs = [_ref(port_qos[p.name][field]) for p in ports if field in port_qos.get(p.name, {})]
    if field in port_qos.get("global", {}):
        refs.append(_ref(port_qos["global"][field]))
    if not refs:
        return MAP
    counts = Counter(refs)
    return min(counts, key=lambda name: (-counts[name], name))


def _read_map(db: _Db, table: str, field: str, ports: list[PortModel]) -> dict[int, int]:
    name = _map_name(db, field, ports)
    entries = db.table(table).get(name, {})
    return {db.number(k, table, name, k): db.number(v, table, name, k) for k, v in entries.items()}


def _read_qos(db: _Db, skeleton: QosModel, ports: list[PortModel]) -> QosModel:
    data_ports = _data_ports(ports)
    maps = {model_field: _read_map(db, table, field, data_ports) for table, field, model_field in MAPS}
    lossless = sorted({prio for port in ports for prio in port.pfc_priorities})
    queues = _read_queues(db, skeleton, data_ports, maps["tc_to_queue"], lossless)
    watchdog = _read_watchdog(db, skeleton.watchdog, data_ports)
    trusts = Counter(_port_trust(db, db.table("PORT_QOS_MAP").get(p.name, {})) for p in data_ports)
    trust = max(trusts, key=lambda word: (trusts[word], word == "dscp")) if trusts else "dscp"
    return updated(skeleton, {**maps, "lossless_priorities": lossless, "queues": queues,
                                       "watchdog": watchdog, "trust": trust})


def _reference_entries(per_port: Mapping[str, list[Any]], data_ports: list[PortModel]) -> list[Any]:
    """Entries of the first data port that has any, else of the first port that has any (natural order)."""
    for port in data_ports:
        if per_port.get(port.name):
            return per_port[port.name]
    for name in sorted(per_port, key=_natural):
        if per_port[name]:
            return per_port[name]
    return []


def _majority_entries(per_port: Mapping[str, list[Any]], data_ports: list[PortModel]) -> list[Any]:
    """The entries most data ports have (compared without their keys, which name the port; ties: the first data
    port's in natural order), else _reference_entries: the device's value, so that one port's own stands out."""
    candidates = [per_port[p.name] for p in data_ports if per_port.get(p.name)]
    if not candidates:
        return _reference_entries(per_port, data_ports)
    index_texts: dict[int, str] = {}  # repr of each indices list: _per_port shares one list per key suffix
    keys = [_entries_key(entries, index_texts) for entries in candidates]  # once per port (a few reprs)
    counts = Counter(keys)
    best = max(range(len(candidates)), key=lambda at: counts[keys[at]])  # max keeps the first of equals
    return candidates[best]


def _entries_key(entries: list[Any], index_texts: dict[int, str]) -> tuple[tuple[str, str], ...]:
    """The entries as a multiset of their texts: equal for ports whose rows are equal in any order. A tuple of
    the texts, not their repr: the same equality, without writing every text again per port. ``index_texts``:
    the repr of each indices list seen in this call, by its id (the lists are alive for the call)."""
    found = []
    for item in entries:
        if item.__class__ is tuple:
            indices = item[0]
            text = index_texts.get(id(indices))
            if text is None:
                text = index_texts[id(indices)] = repr(indices)
            found.append((text, repr(item[-1])))
        else:
            found.append(("", repr(item)))
    found.sort()
    return tuple(found)


def _read_queues(db: _Db, skeleton: QosModel, data_ports: list[PortModel], tc_to_queue: dict[int, int],
                 lossless: list[int]) -> list[QueueModel]:
    return _queues_of(db, skeleton, _majority_entries(_per_port(db, "QUEUE"), data_ports), tc_to_queue, lossless)


def _queues_of(db: _Db, skeleton: QosModel, entries: list[Any], tc_to_queue: dict[int, int],
               lossless: list[int]) -> list[QueueModel]:
    by_index = {index: entry for indices, _, entry in entries for index in indices}
    old_names = {q.index: q.class_name for q in skeleton.queues}
    queues: list[QueueModel] = []
    for index in sorted(by_index):
        entry = by_index[index]
        scheduler, weight, class_name = _scheduler(db, _ref(entry.get("scheduler", "")))
        tcs = sorted(tc for tc, queue in tc_to_queue.items() if queue == index)
        tc = tcs[0] if tcs else index
        queues.append(QueueModel(
            index=index, traffic_class=tc, class_name=class_name or old_names.get(index, f"queue{index}"),
            lossless=tc in lossless, scheduler=scheduler, weight=weight,
            ecn=_ecn(db, _ref(entry["wred_profile"])) if "wred_profile" in entry else None))
    return _percent_shares(queues)


def _percent_shares(queues: list[QueueModel]) -> list[QueueModel]:
    """DWRR weights as the share of the link each queue gets, in percent. SAI's DWRR weights are relative (1/1 is
    two equal halves, as 50/50 is), so a brownfield SCHEDULER with 5/4/1 runs what the intent's 50/40/10 asks:
    shares summing to 100 by the largest remainder, so fabricgen's own percentages read back unchanged."""
    weights = {q.index: q.weight for q in queues if q.scheduler == "dwrr" and q.weight}
    total = sum(weights.values())
    if not weights or total == 100:
        return queues
    exact = {index: weight * 100 / total for index, weight in weights.items()}
    shares = {index: int(value) for index, value in exact.items()}
    by_remainder = sorted(exact, key=lambda index: (-(exact[index] - shares[index]), index))
    for index in by_remainder[:100 - sum(shares.values())]:
        shares[index] += 1
    return [updated(q, {"weight": shares[q.index]}) if q.index in shares else q for q in queues]


def _scheduler(db: _Db, name: str) -> tuple[Literal["strict", "dwrr"], int | None, str | None]:
    """(scheduler, weight, class name) of a SCHEDULER entry. No scheduler: SAI's default round robin."""
    entry = db.table("SCHEDULER").get(name, {})
    class_name = name.removeprefix("scheduler.") if name.startswith("scheduler.") else None
    if str(entry.get("type", "")).upper() == "STRICT":
        return "strict", None, class_name
    if entry.get("weight") is None:
        return "dwrr", None, class_name
    weight = db.number(entry["weight"], "SCHEDULER", name, "weight")
    if not 1 <= weight <= 100:  # sonic-scheduler.yang: leaf weight, uint8 range "1..100"
        raise db.error(f"SCHEDULER|{name}|weight: {weight} is outside 1-100 (sonic-scheduler.yang)", "SCHEDULER",
                       name, "weight")
    return "dwrr", weight, class_name


def _ecn(db: _Db, name: str) -> EcnThresholds | None:
    """Green thresholds of a WRED profile that marks (``ecn`` other than ``ecn_none``); fabricgen writes the
    same numbers for every colour."""
    profile = db.table("WRED_PROFILE").get(name, {})
    if profile.get("ecn", "ecn_none") == "ecn_none":
        return None
    if "green_min_threshold" not in profile or "green_max_threshold" not in profile:
        return None
    path = ("WRED_PROFILE", name)
    return EcnThresholds(min_bytes=db.number(profile["green_min_threshold"], *path, "green_min_threshold"),
                         max_bytes=db.number(profile["green_max_threshold"], *path, "green_max_threshold"),
                         probability_pct=db.number(profile.get("green_drop_probability", 100), *path,
                                                "green_drop_probability"))


def _read_watchdog(db: _Db, skeleton: WatchdogModel | None, data_ports: list[PortModel]) -> WatchdogModel | None:
    table = db.table("PFC_WD")
    if not table:
        return None
    poll = db.number(table.get("GLOBAL", {}).get("POLL_INTERVAL", PFCWD_DEFAULTS["poll"]), "PFC_WD", "GLOBAL")
    ports = {name: [entry] for name, entry in table.items() if name != "GLOBAL"}
    entries = _majority_entries(ports, data_ports)
    if not entries:
        # GLOBAL only: the timers of no port are configured; owned() does not compare them either.
        if skeleton is not None:
            return updated(skeleton, {"poll_ms": poll})
        return WatchdogModel(detection_ms=PFCWD_DEFAULTS["detection"], restoration_ms=PFCWD_DEFAULTS["restoration"],
                             poll_ms=poll, action="drop")
    return _watchdog_entry(db, entries[0], poll)


def _watchdog_entry(db: _Db, entry: dict[str, Any], poll: int) -> WatchdogModel:
    """A PFC_WD port entry's timers and action (pfcwdorch.cpp createEntry; absent keys: pfcwd's defaults)."""
    action = WATCHDOG_ACTIONS.get(str(entry.get("action", PFCWD_DEFAULTS["action"])))
    if action is None:
        raise db.error(f"PFC_WD: action {entry.get('action')!r} is not one of {', '.join(WATCHDOG_ACTIONS)}",
                       "PFC_WD", "action")
    return WatchdogModel(
        detection_ms=db.number(entry.get("detection_time", PFCWD_DEFAULTS["detection"]), "PFC_WD", "detection_time"),
        restoration_ms=db.number(entry.get("restoration_time", PFCWD_DEFAULTS["restoration"]), "PFC_WD",
                              "restoration_time"),
        poll_ms=poll, action=action)


# --- a port's own QoS -----------------------------------------------------------------------------------

def _with_port_qos(db: _Db, device: QosModel, skeleton: QosModel, ports: list[PortModel]) -> list[PortModel]:
    """Each data port with ``qos`` set where what the switch runs on it differs from the device's QoS (the maps,
    queues and watchdog most data ports have); every other port with ``qos`` None."""
    queue_rows = _per_port(db, "QUEUE")
    same: set[tuple[Any, ...]] = set()  # bindings found to run the device's QoS (see _binding)
    read = []
    for port in ports:
        if port.role not in DATA_ROLES:
            read.append(port if port.role == "mgmt" else updated(port, {"qos": None}))
            continue
        binding = _binding(db, port, queue_rows)
        if binding is not None and binding in same:
            read.append(port if port.qos is None else updated(port, {"qos": None}))
            continue
        effective = _port_classes(db, db.table("PORT_QOS_MAP").get(port.name, {}))
        effective["queues"] = _queues_of(db, skeleton, queue_rows.get(port.name, []), device.tc_to_queue,
                                         device.lossless_priorities)
        if port.pfc_priorities:
            effective["watchdog"] = _port_watchdog(db, port)
        differing = {name: value for name, value in effective.items() if getattr(device, name) != value}
        if not differing and binding is not None:
            same.add(binding)
        read.append(updated(port, {"qos": updated(device, differing) if differing else None}))
    return read


def _binding(db: _Db, port: PortModel, queue_rows: Mapping[str, list[Any]]) -> tuple[Any, ...] | None:
    """Everything of the port's own that _with_port_qos reads (its PORT_QOS_MAP entry, its QUEUE rows without their
    keys, its PFC priorities and PFC_WD entry); the rest it reads is device-wide. Ports with equal bindings run
    the same QoS, so it is worked out once per binding, not once per port (issue 26 item 7). None: a value that
    is not hashable (a list in a hand-edited file), so the port is read on its own."""
    rows = tuple((tuple(indices), tuple(entry.items())) for indices, _, entry in queue_rows.get(port.name, []))
    watchdog = db.table("PFC_WD").get(port.name) if port.pfc_priorities else None
    binding = (tuple(db.table("PORT_QOS_MAP").get(port.name, {}).items()), rows, tuple(port.pfc_priorities),
               None if watchdog is None else tuple(watchdog.items()))
    try:
        hash(binding)
    except TypeError:
        return None
    return binding


def _port_classes(db: _Db, entry: dict[str, Any]) -> dict[str, Any]:
    """Trust and the four maps the port's PORT_QOS_MAP entry binds. A map the entry leaves out is no map (saiport.h:
    SAI_PORT_ATTR_QOS_*_MAP "Default no map", e.g. TC→queue: "all packets to queue 0"), except the DSCP map: without
    the port's own, PORT_QOS_MAP|global's applies (qosorch.cpp handleGlobalQosMap sets the switch-level
    SAI_SWITCH_ATTR_QOS_DSCP_TO_TC_MAP, which a port-level map overrides). A port with a dot1p_to_tc_map and no DSCP
    map of its own trusts the 802.1p PCP; with no map at all nothing: every packet in TC 0 (QOS_DEFAULT_TC 0)."""
    fields: dict[str, Any] = {model_field: _bound_map(db, table, entry.get(field))
                              for table, field, model_field in MAPS[1:]}
    dscp_map = entry.get("dscp_to_tc_map")
    if dscp_map is None and "dot1p_to_tc_map" not in entry:
        dscp_map = db.table("PORT_QOS_MAP").get("global", {}).get("dscp_to_tc_map")
    if dscp_map is not None:
        return fields | {"trust": "dscp", "dscp_to_tc": _bound_map(db, "DSCP_TO_TC_MAP", dscp_map)}
    return fields | {"trust": "pcp" if "dot1p_to_tc_map" in entry else "none", "dscp_to_tc": {}}


def _port_trust(db: _Db, entry: dict[str, Any]) -> str:
    """The trust _port_classes reads from the entry, without reading its maps."""
    dscp_map = entry.get("dscp_to_tc_map")
    if dscp_map is None and "dot1p_to_tc_map" not in entry:
        dscp_map = db.table("PORT_QOS_MAP").get("global", {}).get("dscp_to_tc_map")
    if dscp_map is not None:
        return "dscp"
    return "pcp" if "dot1p_to_tc_map" in entry else "none"


def _bound_map(db: _Db, table: str, reference: Any) -> dict[int, int]:
    if reference is None:
        return {}
    name = _ref(reference)
    found = db.maps.get((table, name))
    if found is None:
        entries = db.table(table).get(name, {})
        found = db.maps[(table, name)] = {db.number(k, table, name, k): db.number(v, table, name, k)
                                          for k, v in entries.items()}
    return dict(found)  # each port's own copy: models built from it must not share a mutable map


def _port_watchdog(db: _Db, port: PortModel) -> WatchdogModel | None:
    """The watchdog on a lossless port: its PFC_WD entry starts it on the priorities of pfcwd_sw_enable (qosorch.cpp
    stores that bitmask; pfcwdorch.cpp getLosslessTcsForPort watches those and nothing without it). Read as armed
    when it watches every PFC priority of the port; otherwise a lossless priority runs unwatched: None."""
    table = db.table("PFC_WD")
    entry = table.get(port.name)
    qos_entry = db.table("PORT_QOS_MAP").get(port.name, {})
    text = str(qos_entry.get("pfcwd_sw_enable", ""))
    watched = set(db.ints((p for p in text.split(",") if p.strip()), "PORT_QOS_MAP", port.name, "pfcwd_sw_enable"))
    if entry is None or not set(port.pfc_priorities) <= watched:
        return None
    poll = db.number(table.get("GLOBAL", {}).get("POLL_INTERVAL", PFCWD_DEFAULTS["poll"]), "PFC_WD", "GLOBAL")
    return _watchdog_entry(db, entry, poll)


# --- management -----------------------------------------------------------------------------------------

def _read_mgmt(db: _Db, skeleton: MgmtModel | None) -> MgmtModel | None:
    """None when the skeleton has none (the VLAN is not in config_db) or the file has no MGMT_PORT."""
    ports = db.table("MGMT_PORT")
    if skeleton is None or not ports:
        return None
    addresses = {key.partition("|")[2]: (key.partition("|")[0], entry)
                 for key, entry in db.table("MGMT_INTERFACE").items() if "|" in key}
    with_address = sorted(iface for iface, _ in addresses.values() if iface in ports)
    interface = skeleton.interface if skeleton.interface in ports else (with_address or sorted(ports))[0]
    mine = {address: entry for address, (iface, entry) in addresses.items() if iface == interface}
    address = _pick_address(sorted(mine), skeleton.address)
    vrf_enabled = str(db.table("MGMT_VRF_CONFIG").get("vrf_global", {}).get("mgmtVrfEnabled", "false")) == "true"
    return updated(skeleton, {
        "interface": interface, "vrf": "mgmt" if vrf_enabled else "default",
        "mtu": db.number_in(ports[interface].get("mtu", DEFAULT_MGMT_MTU), *MGMT_MTU_RANGE, "sonic-mgmt_port.yang",
                            "MGMT_PORT", interface, "mtu"),
        "address": address, "gateway": _text(mine[address].get("gwaddr")) if address else None,
    })


def _pick_address(addresses: list[str], wanted: str | None) -> str | None:
    """The address of the skeleton's family (IPv4 or IPv6) when there are both, else the first."""
    if not addresses:
        return None
    want_v6 = wanted is not None and ":" in wanted
    return next((a for a in addresses if (":" in a) == want_v6), addresses[0])


# --- read -----------------------------------------------------------------------------------------------

def read(skeleton: DeviceModel, files: Mapping[str, str]) -> DeviceModel:
    """``skeleton`` with every owned field replaced by what config_db.json says."""
    db = _parse(files)
    ports = _read_ports(db, skeleton)
    qos = _read_qos(db, skeleton.qos, ports) if skeleton.qos is not None else None
    if qos is not None and skeleton.qos is not None:
        ports = _with_port_qos(db, qos, skeleton.qos, ports)
    return updated(skeleton, {"ports": ports, "qos": qos, "mgmt": _read_mgmt(db, skeleton.mgmt)})
