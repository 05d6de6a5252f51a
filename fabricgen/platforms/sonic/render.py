"""SONiC: config_db.json holding exactly the tables fabricgen owns, built as dicts and serialised sorted.

Target: SONiC 202411 and later. Only fields present in the 202411 YANG models are emitted (nothing added
since: no PFC_WD.pfc_stat_history, no BUFFER_PROFILE.packet_discard_action), and every file is validated
against SONiC's own YANG models (``fabricgen validate``). All values are strings, references are bare names,
one port per key — SONiC's config_db encoding rules.

Lossless headroom follows the switch's buffer model (``DEVICE_METADATA|localhost.buffer_model``, inventory
``sonic_buffer_model``; default what the vendor's image sets: ``dynamic`` on NVIDIA Spectrum, sonic-buildimage
``platform/mellanox/rules.mk``, ``traditional`` elsewhere) and its release (inventory ``sonic_release``, default
202411): buffermgrd's headroom formula changed in 202405 (sonic-swss #3235), see fabricgen/resolve/headroom.py.

* traditional: fabricgen writes the lossless profiles. Names follow buffermgrd's conventions on purpose: a
  profile is ``pg_lossless_<speed>_<cable>_profile`` and the PG key comes from ``pfc_enable``; buffermgrd
  (sonic-swss ``cfgmgr/buffermgr.cpp``) reuses a profile of that name that exists and otherwise creates it
  from the SKU's ``pg_profile_lookup.ini``.
* dynamic: buffermgrd (``cfgmgr/buffermgrdyn.cpp``) computes every lossless PG's headroom from the port's
  speed, cable length and MTU, on the PGs the SKU template declares (sonic-buildimage
  ``files/build_templates/buffers_config.j2``: ``<port>|3-4`` with profile ``NULL``, lossy ``<port>|0``).
  fabricgen writes no BUFFER_PROFILE or BUFFER_PG then, only what the formula reads: CABLE_LENGTH, PORT.mtu,
  ``pfc_enable`` and LOSSLESS_TRAFFIC_PATTERN (the lossless packet size and small-packet share; buffermgrd
  reads it at its next calculation, e.g. a port's speed, cable or MTU change).

The buffer model itself is not written: buffermgrd reads it once when swss starts (sonic-buildimage
``dockers/docker-orchagent/buffermgrd.sh``) and a switch changes model with ``config qos reload``, which
re-renders every buffer table, not with a patch.

BUFFER_POOL is not ours: SONiC's GCU cannot change pools and their sizes are per-SKU, so profiles refer to
the ``ingress_lossless_pool`` every SONiC image defines (see ``BASELINE``).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, NamedTuple

import fabricgen.platforms.common.jsontext as jsontext
from fabricgen.models.device import DeviceModel, HeadroomModel, PortModel, QosModel, QueueModel
from fabricgen.platforms.common.memo import by_identity
from fabricgen.platforms.common.templating import Templates

MAP = "ROCE"  # name of every fabricgen map table entry
CABLE_MAP = "AZURE"  # the CABLE_LENGTH entry name SONiC's templates and buffermgrd use
PATTERN = "AZURE"  # the LOSSLESS_TRAFFIC_PATTERN entry SONiC's templates write (the formula reads the first one)
LOSSLESS_POOL = "ingress_lossless_pool"

# For the deploy work: releases whose GCU (``config apply-patch``) refuses to add a BUFFER_PROFILE entry. Up to
# 202505 sonic-utilities runs every BUFFER_PROFILE change through ``rdma_config_update_validator``
# (generic_config_updater/field_operation_validators.py, gcu_field_operation_validators.conf.json), which allows
# only replacing ``dynamic_th`` or ``xoff`` of an existing profile; 202511 (sonic-utilities #4087) allows adding,
# replacing and removing whole profiles. A traditional-model switch on these releases takes a new lossless
# profile (a new speed or cable length) only through ``config load``/``config reload``, not a patch.
GCU_REFUSES_NEW_BUFFER_PROFILE: frozenset[str] = frozenset({"202305", "202311", "202405", "202411", "202505"})

# Tables the device has and fabricgen refers to without owning; used to validate references.
BASELINE: dict[str, Any] = {"BUFFER_POOL": {LOSSLESS_POOL: {"type": "ingress", "mode": "dynamic"}}}

_s = str  # config_db values are strings; the builtin itself, not a function around it: called ~300 times a switch


def _pg_keys(priorities: list[int]) -> list[str]:
    """Contiguous runs as buffermgrd writes them: [3, 4, 6] → ["3-4", "6"]."""
    runs: list[list[int]] = []
    for prio in sorted(priorities):
        if runs and prio == runs[-1][-1] + 1:
            runs[-1].append(prio)
        else:
            runs.append([prio])
    return [f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]) for run in runs]


@lru_cache(maxsize=4096)  # the same port names and lossless priorities on every switch
def _pg_table_keys(port: str, priorities: tuple[int, ...]) -> tuple[str, ...]:
    """The port's BUFFER_PG keys: ``<port>|<pg>``."""
    return tuple(f"{port}|{key}" for key in _pg_keys(list(priorities)))


def _data_ports(device: DeviceModel) -> list[PortModel]:
    return [p for p in device.ports if p.role in ("host", "fabric")]


# What the fabric's one QosModel decides is the same on every switch: built once per fabric (by_identity). Its
# entries, like the other memoized ones below, are shared between switches' tables (see build_config_db).

class _QosTables(NamedTuple):
    maps: dict[str, dict[str, str]]  # table name -> the ROCE map
    schedulers: dict[str, Any]
    wred: dict[str, Any]
    queue_indices: tuple[int, ...]  # the queues a port's QUEUE entries are keyed by
    queues: tuple[dict[str, str], ...]  # their entries, the same on every port
    watchdog: dict[str, str] | None  # a PFC_WD port entry
    queue_rows: dict[str, dict[str, dict[str, str]]]  # port name -> its QUEUE rows, made on first use

    def rows_of(self, port: str) -> dict[str, dict[str, str]]:
        """The QUEUE rows of ``port``: ``<port>|<queue>`` and the queue's entry (the same port names on every
        switch: made once per name)."""
        rows = self.queue_rows.get(port)
        if rows is None:
            keys = (f"{port}|{index}" for index in self.queue_indices)
            rows = self.queue_rows[port] = dict(zip(keys, self.queues, strict=True))
        return rows


@by_identity
def _qos_shared(qos: QosModel) -> _QosTables:
    def as_map(mapping: dict[int, int]) -> dict[str, str]:
        return {_s(k): _s(v) for k, v in mapping.items()}

    maps = {"DSCP_TO_TC_MAP": as_map(qos.dscp_to_tc), "TC_TO_PRIORITY_GROUP_MAP": as_map(qos.tc_to_pg),
            "TC_TO_QUEUE_MAP": as_map(qos.tc_to_queue), "MAP_PFC_PRIORITY_TO_QUEUE": as_map(qos.pfc_priority_to_queue)}
    wd = qos.watchdog
    watchdog = None if wd is None else {"action": wd.action, "detection_time": _s(wd.detection_ms),
                                        "restoration_time": _s(wd.restoration_ms)}
    return _QosTables(maps, _schedulers(qos), _wred_profiles(qos), tuple(queue.index for queue in qos.queues),
                      tuple(_queue_entry(queue) for queue in qos.queues), watchdog, {})


def _port_table(device: DeviceModel) -> dict[str, Any]:
    table: dict[str, Any] = {}
    for port in device.ports:
        if port.role == "mgmt":
            continue
        entry = _port_entry(port.admin_up, port.mtu, port.lanes, port.speed_mbps, port.fec)
        table[port.name] = {**entry, "description": port.description} if port.description else entry
    return table


@lru_cache(maxsize=4096)  # the same ports (lanes, speed) on every switch of a model; the description is a port's own
def _port_entry(admin_up: bool, mtu: int, lanes: str | None, speed_mbps: int | None, fec: str | None) -> dict[str, str]:
    entry = {"admin_status": "up" if admin_up else "down", "mtu": _s(mtu)}
    if lanes:
        entry["lanes"] = lanes
    if speed_mbps:
        entry["speed"] = _s(speed_mbps)
    if fec:
        entry["fec"] = fec
    return entry


def _wred_name(queue: QueueModel) -> str:
    return f"ecn_{queue.class_name}"


def _scheduler_name(queue: QueueModel) -> str:
    return f"scheduler.{queue.class_name}"


@lru_cache(maxsize=64)  # one entry per set of PFC priorities, watchdog on or off
def _port_qos(priorities: tuple[int, ...], watchdog: bool) -> dict[str, str]:
    """A PORT_QOS_MAP port entry."""
    entry = {"dscp_to_tc_map": MAP, "tc_to_pg_map": MAP, "tc_to_queue_map": MAP, "pfc_to_queue_map": MAP,
             "pfc_enable": ",".join(map(str, priorities))}
    if watchdog and priorities:
        entry["pfcwd_sw_enable"] = entry["pfc_enable"]
    return entry


def _qos_tables(ports: list[PortModel], qos: QosModel) -> dict[str, Any]:
    shared = _qos_shared(qos)
    watchdog = qos.watchdog is not None
    port_qos: dict[str, Any] = {"global": {"dscp_to_tc_map": MAP}}
    queues: dict[str, Any] = {}
    for port in ports:
        port_qos[port.name] = _port_qos(tuple(port.pfc_priorities), watchdog)
        queues.update(shared.rows_of(port.name))
    maps = {name: {MAP: roce} for name, roce in shared.maps.items()}
    tables: dict[str, Any] = {"PORT_QOS_MAP": port_qos, **maps, "SCHEDULER": shared.schedulers}
    if queues:
        tables["QUEUE"] = queues
    if shared.wred:
        tables["WRED_PROFILE"] = shared.wred
    return tables


def _queue_entry(queue: QueueModel) -> dict[str, str]:
    entry = {"scheduler": _scheduler_name(queue)}
    if queue.ecn:
        entry["wred_profile"] = _wred_name(queue)
    return entry


def _schedulers(qos: QosModel) -> dict[str, Any]:
    return {_scheduler_name(q): {"type": "STRICT"} if q.scheduler == "strict"
            else {"type": "DWRR", "weight": _s(q.weight or 1)} for q in qos.queues}


def _wred_profiles(qos: QosModel) -> dict[str, Any]:
    profiles: dict[str, Any] = {}
    for queue in qos.queues:
        if queue.ecn is None:
            continue
        profile = {"ecn": "ecn_all"}
        for colour in ("green", "yellow", "red"):
            profile[f"wred_{colour}_enable"] = "true"
            profile[f"{colour}_min_threshold"] = _s(queue.ecn.min_bytes)
            profile[f"{colour}_max_threshold"] = _s(queue.ecn.max_bytes)
            profile[f"{colour}_drop_probability"] = _s(queue.ecn.probability_pct)
        profiles[_wred_name(queue)] = profile
    return profiles


def _buffer_tables(ports: list[PortModel]) -> dict[str, Any]:
    profiles: dict[str, HeadroomModel] = {}
    pgs: dict[str, Any] = {}
    cables: dict[str, str] = {}
    patterns: set[tuple[int, int]] = set()
    for port in ports:
        cable, speed, headroom = port.cable_m, port.speed_mbps, port.headroom
        if cable is not None:
            cables[port.name] = _cable_length(cable)
        if headroom is None or speed is None:
            continue
        if headroom.buffer_model == "dynamic":
            patterns.add(_traffic_pattern(headroom))
            continue  # buffermgrd computes the profile and the SKU template holds the PGs
        name, pg = _lossless_profile(speed, cable)
        previous = profiles.get(name)
        # Ports sharing speed and cable share buffermgrd's profile name: keep the largest headroom.
        if previous is None or headroom.size > previous.size:
            profiles[name] = headroom
        for key in _pg_table_keys(port.name, tuple(port.pfc_priorities)):
            pgs[key] = pg
    tables: dict[str, Any] = {}
    if profiles:
        tables["BUFFER_PROFILE"] = {name: _buffer_profile(h.size, h.xon, h.xoff) for name, h in profiles.items()}
        tables["BUFFER_PG"] = pgs
    if cables:
        tables["CABLE_LENGTH"] = {CABLE_MAP: cables}
    if patterns:
        # One pattern per switch (resolve sizes every port by the intent's); the largest, should that ever change.
        mtu, percent = max(patterns)
        tables["LOSSLESS_TRAFFIC_PATTERN"] = {PATTERN: {"mtu": _s(mtu), "small_packet_percentage": _s(percent)}}
    return tables


def _traffic_pattern(headroom: HeadroomModel) -> tuple[int, int]:
    """(lossless MTU, small-packet percentage) of a dynamic-model headroom; resolve always sets both."""
    if headroom.lossless_mtu is None or headroom.small_packet_percent is None:
        raise ValueError(f"dynamic-model headroom without its traffic pattern: {headroom.method}")
    return headroom.lossless_mtu, headroom.small_packet_percent


@lru_cache(maxsize=1024)  # a fabric's cables come in a few lengths
def _cable_length(cable_m: int) -> str:
    return f"{cable_m}m"


@lru_cache(maxsize=1024)  # a fabric's ports come in a few speeds and cable lengths
def _lossless_profile(speed_mbps: int, cable_m: int | None) -> tuple[str, dict[str, str]]:
    """buffermgrd's name for the lossless PG profile of ``speed_mbps`` and ``cable_m``, and a BUFFER_PG entry
    that refers to it."""
    name = f"pg_lossless_{speed_mbps}_{cable_m}m_profile"
    return name, {"profile": name}


@lru_cache(maxsize=1024)  # a fabric's headrooms come in a few sizes (speed, cable length)
def _buffer_profile(size: int, xon: int, xoff: int) -> dict[str, str]:
    return {"pool": LOSSLESS_POOL, "size": _s(size), "xon": _s(xon), "xoff": _s(xoff), "dynamic_th": "0"}


def _watchdog(ports: list[PortModel], qos: QosModel) -> dict[str, Any]:
    entry = _qos_shared(qos).watchdog
    if qos.watchdog is None or entry is None:
        return {}
    table: dict[str, Any] = {"GLOBAL": {"POLL_INTERVAL": _s(qos.watchdog.poll_ms)}}
    for port in ports:
        if port.pfc_priorities:
            table[port.name] = entry
    return {"PFC_WD": table}


def _mgmt(device: DeviceModel) -> dict[str, Any]:
    if device.mgmt is None:
        return {}
    mgmt = device.mgmt
    port = next((p for p in device.ports if p.role == "mgmt"), None)
    entry: dict[str, str] = {"admin_status": "up", "alias": mgmt.interface, "mtu": _s(mgmt.mtu)}
    if port is not None and port.speed_mbps in (10, 100, 1000):
        entry["speed"] = _s(port.speed_mbps)
    if port is not None and port.description:
        entry["description"] = port.description
    tables: dict[str, Any] = {
        "MGMT_PORT": {mgmt.interface: entry},
        "MGMT_VRF_CONFIG": {"vrf_global": {"mgmtVrfEnabled": "true"}},
    }
    if mgmt.address and mgmt.gateway:
        tables["MGMT_INTERFACE"] = {f"{mgmt.interface}|{mgmt.address}": {"gwaddr": mgmt.gateway}}
    return tables


def build_config_db(device: DeviceModel) -> dict[str, Any]:
    """The owned config_db tables of one SONiC switch (empty tables left out: SONiC cannot store them), the
    caller's to change: every entry a copy (entries hold strings only), not the one other switches share."""
    return {name: {key: entry.copy() for key, entry in table.items()} for name, table in _tables(device).items()}


def _tables(device: DeviceModel) -> dict[str, Any]:
    """build_config_db's tables, with the entries that many switches share (memoized) as they are: to write."""
    tables: dict[str, Any] = {"PORT": _port_table(device)}
    if device.qos is not None:
        ports = _data_ports(device)
        tables |= _qos_tables(ports, device.qos) | _buffer_tables(ports) | _watchdog(ports, device.qos)
    tables |= _mgmt(device)
    return {name: table for name, table in tables.items() if table}


def render(device: DeviceModel, templates: Templates) -> dict[str, str]:
    text = jsontext.dumps(_tables(device), indent=4)  # = json.dumps(indent=4, sort_keys=True)
    return {"config_db.json": text + "\n"}
