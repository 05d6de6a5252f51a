"""SONiC: config_db.json holding exactly the tables fabricgen owns, built as dicts and serialised sorted.

Target: SONiC 202411 and later. Only fields present in the 202411 YANG models are emitted (nothing added
since: no PFC_WD.pfc_stat_history, no BUFFER_PROFILE.packet_discard_action), and every file is validated
against SONiC's own YANG models (``fabricgen validate``). All values are strings, references are bare names,
one port per key — SONiC's config_db encoding rules.

Names follow buffermgrd's conventions on purpose: a lossless PG profile is ``pg_lossless_<speed>_<cable>_profile``
and the PG key comes from ``pfc_enable``, otherwise buffermgrd (traditional buffer model) overwrites them.
BUFFER_POOL is not ours: SONiC's GCU cannot change pools and their sizes are per-SKU, so profiles refer to
the ``ingress_lossless_pool`` every SONiC image defines (see ``BASELINE``).
"""

from __future__ import annotations

from typing import Any

from fabricgen.model import DeviceModel, PortModel, QosModel, QueueModel
from fabricgen.platforms import Capability, Platform, jsontext
from fabricgen.templating import Templates

MAP = "ROCE"  # name of every fabricgen map table entry
CABLE_MAP = "AZURE"  # the CABLE_LENGTH entry name SONiC's templates and buffermgrd use
LOSSLESS_POOL = "ingress_lossless_pool"

OWNED_TABLES = (
    "PORT", "PORT_QOS_MAP", "DSCP_TO_TC_MAP", "TC_TO_PRIORITY_GROUP_MAP", "TC_TO_QUEUE_MAP",
    "MAP_PFC_PRIORITY_TO_QUEUE", "WRED_PROFILE", "SCHEDULER", "QUEUE", "BUFFER_PROFILE", "BUFFER_PG",
    "CABLE_LENGTH", "PFC_WD", "MGMT_PORT", "MGMT_INTERFACE", "MGMT_VRF_CONFIG",
)

# Tables the device has and fabricgen refers to without owning; used to validate references.
BASELINE: dict[str, Any] = {"BUFFER_POOL": {LOSSLESS_POOL: {"type": "ingress", "mode": "dynamic"}}}

CAPABILITY = Capability(
    name="sonic",
    kind="switch",
    target="SONiC 202411 or later (config_db.json; YANG models of sonic-buildimage)",
    max_mtu=9216,
    mtu_semantics="l3",
    lossless_class_limit=2,  # SONiC's own templates use lossless TCs 3 and 4 at most
    ecn_threshold_unit="bytes",
    ecn_granularity_bytes=1,
    programs_headroom=True,
    mgmt_interface="eth0",
    mgmt_vrf_fixed_name="mgmt",  # interfaces.j2 always builds Linux VRF `mgmt` (table 6000)
    watchdog_step_ms=1,
    watchdog_actions=("drop", "forward", "alert"),
    owned_sections=OWNED_TABLES,
    commit_strategy="GCU: config checkpoint → config apply-patch (owned tables) → config rollback on failure",
    output_files=("config_db.json",),
    spelling={
        "trust": "PORT_QOS_MAP|<port>.dscp_to_tc_map (DSCP trust is implied)",
        "dscp_map": "DSCP_TO_TC_MAP|ROCE (all 64 code points)",
        "queue_map": "TC_TO_QUEUE_MAP, TC_TO_PRIORITY_GROUP_MAP, MAP_PFC_PRIORITY_TO_QUEUE",
        "pfc": "PORT_QOS_MAP|<port>.pfc_enable",
        "pfc_watchdog": "PFC_WD|<port> + PFC_WD|GLOBAL.POLL_INTERVAL, pfcwd_sw_enable",
        "headroom": "BUFFER_PROFILE pg_lossless_<speed>_<cable>_profile, BUFFER_PG, CABLE_LENGTH",
        "ecn": "WRED_PROFILE (ecn_all, bytes) on QUEUE|<port>|<q>",
        "scheduling": "SCHEDULER type STRICT / DWRR weight on QUEUE",
        "mtu": "PORT.mtu",
        "mgmt": "MGMT_VRF_CONFIG (VRF mgmt), MGMT_INTERFACE, MGMT_PORT",
    },
)


def _s(value: int | str) -> str:
    return str(value)


def _pg_keys(priorities: list[int]) -> list[str]:
    """Contiguous runs as buffermgrd writes them: [3, 4, 6] → ["3-4", "6"]."""
    runs: list[list[int]] = []
    for prio in sorted(priorities):
        if runs and prio == runs[-1][-1] + 1:
            runs[-1].append(prio)
        else:
            runs.append([prio])
    return [f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]) for run in runs]


def _data_ports(device: DeviceModel) -> list[PortModel]:
    return [p for p in device.ports if p.role in ("host", "fabric")]


def _maps(qos: QosModel) -> dict[str, Any]:
    def as_map(mapping: dict[int, int]) -> dict[str, Any]:
        return {MAP: {_s(k): _s(v) for k, v in mapping.items()}}

    return {
        "DSCP_TO_TC_MAP": as_map(qos.dscp_to_tc),
        "TC_TO_PRIORITY_GROUP_MAP": as_map(qos.tc_to_pg),
        "TC_TO_QUEUE_MAP": as_map(qos.tc_to_queue),
        "MAP_PFC_PRIORITY_TO_QUEUE": as_map(qos.pfc_priority_to_queue),
    }


def _port_table(device: DeviceModel) -> dict[str, Any]:
    table: dict[str, Any] = {}
    for port in device.ports:
        if port.role == "mgmt":
            continue
        entry = {"admin_status": "up" if port.admin_up else "down", "mtu": _s(port.mtu)}
        if port.lanes:
            entry["lanes"] = port.lanes
        if port.speed_mbps:
            entry["speed"] = _s(port.speed_mbps)
        if port.fec:
            entry["fec"] = port.fec
        if port.description:
            entry["description"] = port.description
        table[port.name] = entry
    return table


def _wred_name(queue: QueueModel) -> str:
    return f"ecn_{queue.class_name}"


def _scheduler_name(queue: QueueModel) -> str:
    return f"scheduler.{queue.class_name}"


def _qos_tables(device: DeviceModel, qos: QosModel) -> dict[str, Any]:
    ports = _data_ports(device)
    port_qos: dict[str, Any] = {"global": {"dscp_to_tc_map": MAP}}
    queues: dict[str, Any] = {}
    per_queue = [(queue.index, _queue_entry(queue)) for queue in qos.queues]  # the same on every port
    for port in ports:
        entry = {"dscp_to_tc_map": MAP, "tc_to_pg_map": MAP, "tc_to_queue_map": MAP, "pfc_to_queue_map": MAP,
                 "pfc_enable": ",".join(str(p) for p in port.pfc_priorities)}
        if qos.watchdog and port.pfc_priorities:
            entry["pfcwd_sw_enable"] = entry["pfc_enable"]
        port_qos[port.name] = entry
        for index, queue_entry in per_queue:
            queues[f"{port.name}|{index}"] = dict(queue_entry)  # a copy: each key its own entry, as SONiC's
    tables: dict[str, Any] = {"PORT_QOS_MAP": port_qos, **_maps(qos), "SCHEDULER": _schedulers(qos)}
    if queues:
        tables["QUEUE"] = queues
    wred = _wred_profiles(qos)
    if wred:
        tables["WRED_PROFILE"] = wred
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


def _buffer_tables(device: DeviceModel) -> dict[str, Any]:
    profiles: dict[str, Any] = {}
    pgs: dict[str, Any] = {}
    cables: dict[str, str] = {}
    for port in _data_ports(device):
        if port.cable_m is not None:
            cables[port.name] = f"{port.cable_m}m"
        if port.headroom is None or port.speed_mbps is None:
            continue
        name = f"pg_lossless_{port.speed_mbps}_{port.cable_m}m_profile"
        candidate: dict[str, Any] = {"pool": LOSSLESS_POOL, "size": port.headroom.size, "xon": port.headroom.xon,
                     "xoff": port.headroom.xoff}
        previous = profiles.get(name)
        # Ports sharing speed and cable share buffermgrd's profile name: keep the largest headroom.
        if previous is None or candidate["size"] > previous["size"]:
            profiles[name] = candidate
        for key in _pg_keys(port.pfc_priorities):
            pgs[f"{port.name}|{key}"] = {"profile": name}
    tables: dict[str, Any] = {}
    if profiles:
        tables["BUFFER_PROFILE"] = {name: {k: _s(v) for k, v in {**p, "dynamic_th": 0}.items()}
                                    for name, p in profiles.items()}
        tables["BUFFER_PG"] = pgs
    if cables:
        tables["CABLE_LENGTH"] = {CABLE_MAP: cables}
    return tables


def _watchdog(device: DeviceModel, qos: QosModel) -> dict[str, Any]:
    if qos.watchdog is None:
        return {}
    wd = qos.watchdog
    table: dict[str, Any] = {"GLOBAL": {"POLL_INTERVAL": _s(wd.poll_ms)}}
    for port in _data_ports(device):
        if port.pfc_priorities:
            table[port.name] = {"action": wd.action, "detection_time": _s(wd.detection_ms),
                                "restoration_time": _s(wd.restoration_ms)}
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
    """The owned config_db tables of one SONiC switch (empty tables left out: SONiC cannot store them)."""
    tables: dict[str, Any] = {"PORT": _port_table(device)}
    if device.qos is not None:
        tables |= _qos_tables(device, device.qos) | _buffer_tables(device) | _watchdog(device, device.qos)
    tables |= _mgmt(device)
    return {name: table for name, table in tables.items() if table}


def render(device: DeviceModel, templates: Templates) -> dict[str, str]:
    text = jsontext.dumps(build_config_db(device), indent=4)  # = json.dumps(indent=4, sort_keys=True)
    return {"config_db.json": text + "\n"}


from fabricgen.platforms.sonic import reader  # noqa: E402  (at the bottom: reader imports this module)

PLATFORM = Platform(capability=CAPABILITY, render=render, read=reader.read, owned=reader.owned)
