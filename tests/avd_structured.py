"""The AVD structured config (pyavd 6.4's eos_cli_config_gen input) of a resolved fabricgen DeviceModel: the EOS
parity test (tests/test_eos_pyavd_parity.py) and the benchmark's side-by-side (bench/run.py) both render it with
pyavd. Built from the model, never from fabricgen's text. No pytest here: the benchmark imports it with only the
`parity` extra installed.
"""

from __future__ import annotations

from decimal import Decimal
from ipaddress import ip_address, ip_interface
from typing import Any

from fabricgen.models.device import DeviceModel, MgmtModel, PortModel, QosModel, QueueModel
from fabricgen.platforms.eos.render import PROFILE

# AVD's names for the management VLAN and interface description (eos_designs conventions).
MGMT_VLAN_NAME = "OOB_MGMT"
MGMT_DESCRIPTION = "OOB_MANAGEMENT"
# SONiC-flavoured watchdog actions of the model → EOS actions. "forward" has no EOS equivalent: it is passed
# through unchanged so that pyavd's validation reports it.
WATCHDOG_ACTION = {"drop": "drop", "alert": "notify-only"}
DATA_ROLES = ("host", "fabric")  # ports that carry RoCE traffic: MTU, speed, FEC and the lossless profile apply
# QosModel.trust → AVD's qos_profiles[].trust ("disabled" renders `no qos trust`).
AVD_TRUST = {"dscp": "dscp", "pcp": "cos", "none": "disabled"}
# PortModel.fec → AVD's ethernet_interfaces[].error_correction_encoding.
AVD_FEC: dict[str, dict[str, bool]] = {"rs": {"enabled": True, "reed_solomon": True},
                                       "fc": {"enabled": True, "fire_code": True}, "none": {"enabled": False}}
# The queue sub-mode of each Arista switch the tests render, written here rather than asked of fabricgen (whose
# mapping would otherwise agree with itself). EOS's QoS CLI is per ASIC family: Jericho ("sand", VOQ) platforms
# configure `tx-queue N`, Trident/Tomahawk (unicast and multicast queues apart) `uc-tx-queue N` (the EOS manual's
# per-ASIC "Quality of Service" sections; AVD models both as qos_profiles[].tx_queues / uc_tx_queues).
QUEUE_KEYWORD = {
    "DCS-7280DR3-24": "tx-queue",  # 7280R3: Jericho2 (the bundled spines)
    "DCS-7800R3-36P": "tx-queue",  # 7800R3 line card: Jericho2
    "DCS-7060X5-64S": "uc-tx-queue",  # 7060X5: Tomahawk 4 (the mixed example's EOS leaf)
    "DCS-7050CX3-32S": "uc-tx-queue",  # 7050X3: Trident 3
}
# AVD's key for each sub-mode.
AVD_QUEUES_KEY = {"tx-queue": "tx_queues", "uc-tx-queue": "uc_tx_queues"}


def queue_keyword_of(device: DeviceModel) -> str:
    assert device.hardware in QUEUE_KEYWORD, f"{device.name}: add {device.hardware!r} to QUEUE_KEYWORD"
    return QUEUE_KEYWORD[device.hardware]


def seconds(ms: int) -> str:
    """Watchdog timers: EOS (and AVD) take seconds with up to two or three decimals; 200 ms → "0.2"."""
    return str(Decimal(ms) / 1000)


def avd_queue(queue: QueueModel) -> dict[str, Any]:
    data: dict[str, Any] = {
        "id": queue.index,
        "priority": "priority strict" if queue.scheduler == "strict" else "no priority",
    }
    if queue.scheduler == "dwrr":
        data["bandwidth_percent"] = queue.weight
    if queue.ecn:
        threshold = {"units": "bytes", "min": queue.ecn.min_bytes, "max": queue.ecn.max_bytes,
                     "max_probability": queue.ecn.probability_pct}
        data["random_detect"] = {"ecn": {"threshold": threshold, "count": True}}
    return data


def avd_qos_profile(device: DeviceModel, qos: QosModel) -> dict[str, Any]:
    profile: dict[str, Any] = {"name": PROFILE, "trust": AVD_TRUST[qos.trust]}
    if qos.lossless_priorities:
        profile["priority_flow_control"] = {
            "enabled": True,
            "priorities": [{"priority": prio, "no_drop": True} for prio in qos.lossless_priorities],
            **({"watchdog": {"enabled": True}} if qos.watchdog else {}),
        }
    profile[AVD_QUEUES_KEY[queue_keyword_of(device)]] = [avd_queue(q) for q in qos.queues]
    return profile


def avd_qos_maps(device: DeviceModel, qos: QosModel) -> dict[str, Any]:
    dscps_by_tc: dict[int, list[int]] = {}
    for dscp in sorted(qos.dscp_to_tc):
        dscps_by_tc.setdefault(qos.dscp_to_tc[dscp], []).append(dscp)
    dscp_map = [f"{' '.join(map(str, dscps))} to traffic-class {tc}" for tc, dscps in sorted(dscps_by_tc.items())]
    keyword = queue_keyword_of(device)
    classes = sorted({q.traffic_class for q in qos.queues})  # only classes that own a queue are mapped
    tc_map = [f"{tc} to {keyword} {qos.tc_to_queue[tc]}" for tc in classes]
    return {"map": {"dscp": dscp_map, "traffic_class": tc_map}}


def avd_speed(port: PortModel) -> str:
    """AVD's ``speed`` is EOS's word for it: whole gigabits (``400g``), with the lane count from 50G up when the
    inventory lists the lanes (``400g-8``)."""
    assert port.speed_mbps is not None and port.speed_mbps % 1000 == 0, f"{port.name}: not a whole-gigabit speed"
    lanes = f"-{len(port.lanes.split(','))}" if port.lanes and port.speed_mbps >= 50_000 else ""
    return f"{port.speed_mbps // 1000}g{lanes}"


def avd_ethernet_interface(port: PortModel, qos: QosModel | None) -> dict[str, Any]:
    """AVD's keys for one port: a routed data port takes ``mtu`` (EOS's L3 MTU) and ``switchport.enabled: false``,
    a switched one ``l2_mtu`` and ``switchport.enabled: true``; a port of no mode gets no switchport key. Data ports
    also take ``speed`` and ``error_correction_encoding`` when the inventory gives them."""
    data: dict[str, Any] = {"name": port.name, "shutdown": not port.admin_up}
    if port.description:
        data["description"] = port.description
    if port.role in DATA_ROLES:
        data["mtu" if port.mode == "routed" else "l2_mtu"] = port.mtu
        if port.speed_mbps:
            data["speed"] = avd_speed(port)
        if port.fec:
            data["error_correction_encoding"] = AVD_FEC[port.fec]
        if qos:
            data["service_profile"] = PROFILE
    if port.mode is not None:
        data["switchport"] = {"enabled": port.mode == "switched"}
    if port.access_vlan is not None:
        data.setdefault("switchport", {}).update(mode="access", access_vlan=port.access_vlan)
    return data


def avd_management(mgmt: MgmtModel) -> dict[str, Any]:
    """Management VRF, interface and default route; AVD keys IPv6 apart (``ipv6_address``, ``ipv6_static_routes``)."""
    interface: dict[str, Any] = {"name": mgmt.interface, "description": MGMT_DESCRIPTION, "shutdown": False,
                                 "vrf": mgmt.vrf}
    if mgmt.address:
        v6 = ip_interface(mgmt.address).version == 6
        interface["ipv6_address" if v6 else "ip_address"] = mgmt.address
    data: dict[str, Any] = {
        "vrfs": [{"name": mgmt.vrf, "ip_routing": False}],
        "management_interfaces": [interface],
    }
    if mgmt.gateway:
        v6 = ip_address(mgmt.gateway).version == 6
        route = {"vrf": mgmt.vrf, "prefix": "::/0" if v6 else "0.0.0.0/0", "next_hop": mgmt.gateway}
        data["ipv6_static_routes" if v6 else "static_routes"] = [route]
    return data


def avd_vlans(device: DeviceModel) -> list[dict[str, Any]]:
    """Every VLAN an access port sits in (on the example: the management VLAN of the OOB switch)."""
    mgmt_vlan = device.mgmt.vlan if device.mgmt else None
    ids = sorted({p.access_vlan for p in device.ports if p.access_vlan is not None})
    return [{"id": vid, "name": MGMT_VLAN_NAME if vid == mgmt_vlan else f"VLAN{vid}"} for vid in ids]


def structured_config(device: DeviceModel) -> dict[str, Any]:
    qos = device.qos
    config: dict[str, Any] = {"hostname": device.name}
    if qos:
        config["qos_profiles"] = [avd_qos_profile(device, qos)]
        config["qos"] = avd_qos_maps(device, qos)
        if qos.watchdog:
            wd = qos.watchdog
            config["priority_flow_control"] = {"watchdog": {
                "action": WATCHDOG_ACTION.get(wd.action, wd.action),
                "timeout": seconds(wd.detection_ms),
                "recovery_time": seconds(wd.restoration_ms),
                "polling_interval": seconds(wd.poll_ms),
            }}
    if vlans := avd_vlans(device):
        config["vlans"] = vlans
    config["ethernet_interfaces"] = [avd_ethernet_interface(p, qos) for p in device.ports if p.role != "mgmt"]
    if device.mgmt:
        config.update(avd_management(device.mgmt))
    return config
