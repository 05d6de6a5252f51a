"""Per-port decisions: role from what the cable reaches, MTU, PFC, headroom, descriptions, access VLAN."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from fabricgen.models.device import HeadroomModel, PortMode, PortModel, PortRole, QosModel
from fabricgen.models.diagnostics import DEVICE_FACT_MISSING, PLATFORM_LIMIT
from fabricgen.models.inventory import Device, Endpoint, PortSpec
from fabricgen.platforms import Capability
from fabricgen.resolve.context import ResolveContext
from fabricgen.resolve.headroom import (
    ASIC_CONSTANTS,
    DEFAULT_SONIC_RELEASE,
    PAUSE_QUANTA,
    SONIC_RELEASES,
    VENDOR_TABLES,
    BufferModel,
    HeadroomInputs,
    default_buffer_model,
    gearbox_delay_ns,
    sonic_headroom,
    vendor_table_headroom,
)

DATA_SWITCH_ROLES = frozenset({"leaf", "spine"})
_DESCRIPTION_PREFIX: dict[str, str] = {"fabric": "P2P", "host": "GPU", "mgmt": "OOB", "oob-access": "MGMT",
                                       "rdma": "LEAF", "bmc": "OOB"}


def mgmt_interface(device: Device, cap: Capability) -> str:
    return device.data.mgmt_interface or cap.mgmt_interface


def port_role(ctx: ResolveContext, device: Device, port: str, cap: Capability) -> PortRole:
    peer = ctx.peer_of(device.name, port)
    return _role(ctx, device, port, cap, peer, ctx.inventory.devices[peer.device].data.role if peer else None)


def _role(ctx: ResolveContext, device: Device, port: str, cap: Capability, peer: Endpoint | None,
          peer_role: str | None) -> PortRole:
    if device.data.role == "gpu-host":
        return _host_port_role(device, port, peer_role)
    return _switch_port_role(ctx, device, port, mgmt_interface(device, cap), peer, peer_role)


def _switch_port_role(ctx: ResolveContext, device: Device, port: str, mgmt_if: str, peer: Endpoint | None,
                      peer_role: str | None) -> PortRole:
    if port == mgmt_if:
        return "mgmt"
    if peer is None or peer_role is None:
        return "unused"
    if device.data.role == "oob":
        return "oob-access"
    return _cabled_data_port_role(ctx, device, port, mgmt_if, peer, peer_role)


def _cabled_data_port_role(ctx: ResolveContext, device: Device, port: str, mgmt_if: str, peer: Endpoint,
                           peer_role: str) -> PortRole:
    """A data switch's port cabled to ``peer``: to a GPU host, to another switch, or (refused) to the OOB network."""
    if peer_role == "oob":
        ctx.problem(("inventory", device.name, "data", "ports", port, "peer"),
                    f"data port {device.name}:{port} is cabled to OOB switch {peer}",
                    f"only the management interface ({mgmt_if}) may reach the OOB network", rule="FG-MGT-004")
        return "unused"
    return "host" if peer_role == "gpu-host" else "fabric"


def _host_port_role(device: Device, port: str, peer_role: str | None) -> PortRole:
    if port == device.data.frontend_interface:
        return "frontend"
    if peer_role == "oob":
        return "bmc"
    if peer_role in DATA_SWITCH_ROLES:
        return "rdma"
    return "unused"


def speed_of(ctx: ResolveContext, spec: PortSpec, peer: Endpoint | None) -> int | None:
    """A port's speed, or its peer's when only the other end of the cable declares one."""
    if spec.speed is not None or peer is None:
        return spec.speed
    return ctx.inventory.devices[peer.device].data.ports[peer.port].speed


_SWITCH_ROLES: tuple[PortRole, ...] = ("mgmt", "unused", "oob-access", "host", "fabric")


@dataclass(frozen=True, slots=True)
class SwitchPortPolicy:
    """What every port of one switch shares, looked up once per device instead of once per port."""

    mgmt_interface: str
    lossless_priorities: tuple[int, ...]
    programs_headroom: bool
    default_cable_m: int
    # Per role, a PortModel's fields in declaration order: what the role decides, and None in those each port
    # decides (name, speed, lanes, FEC, the cable's, description, headroom). A port's fields are a copy with its
    # own filled in: a dict copy and ten stores cost a third of building the 19 entries anew (105k switch ports at
    # 32,768 GPUs). The lists in them are shared by every port (the models are frozen), not 105k copies.
    by_role: dict[str, dict[str, Any]]

    @classmethod
    def of(cls, ctx: ResolveContext, device: Device, cap: Capability, qos: QosModel) -> SwitchPortPolicy:
        intent = ctx.intent
        fabric_mtu, mgmt_mtu, mgmt_vlan = intent.mtu.fabric, intent.mtu.management, intent.management.vlan
        lossless_priorities = qos.lossless_priorities
        lossless_pfc, lossy_pfc = list(lossless_priorities), list[int]()
        by_role: dict[str, dict[str, Any]] = {}
        for role in _SWITCH_ROLES:
            carries_data = role in ("host", "fabric")
            lossless = carries_data and bool(lossless_priorities)
            by_role[role] = {
                "name": None, "role": role, "admin_up": role != "unused", "speed_mbps": None, "lanes": None,
                "fec": None, "mtu": fabric_mtu if carries_data or role == "unused" else mgmt_mtu,
                "peer": None, "cable_m": None, "cable_assumed": None, "media": None, "description": None,
                "lossless": lossless, "pfc_priorities": lossless_pfc if lossless else lossy_pfc, "headroom": None,
                "access_vlan": mgmt_vlan if role == "oob-access" else None, "mode": port_mode(role),
                "tagged_vlans": None, "qos": None,  # what a config can say per port; the intent renders neither
            }
        return cls(mgmt_interface(device, cap), tuple(lossless_priorities), cap.programs_headroom,
                   intent.pfc.headroom.default_cable_m, by_role)


def switch_ports(ctx: ResolveContext, device: Device, policy: SwitchPortPolicy) -> list[PortModel]:
    """Every port of a switch, in the inventory's order. Runs for 105k ports on a 32,768-GPU fabric: the
    switch's own values are read once, not once per port, and each port's fields start as its role's."""
    name, data = device.name, device.data
    oob_switch = data.role == "oob"
    devices, ends, by_role = ctx.inventory.devices, ctx.ends, policy.by_role
    mgmt_if, programs_headroom, default_cable_m = policy.mgmt_interface, policy.programs_headroom, \
        policy.default_cable_m
    ports = []
    for port, spec in data.ports.items():
        peer, link = ends.get((name, port), _NO_END)
        # _switch_port_role's decisions, with the switch's own role read once.
        if port == mgmt_if:
            role: PortRole = "mgmt"
        elif peer is None:
            role = "unused"
        elif oob_switch:
            role = "oob-access"
        else:
            role = _cabled_data_port_role(ctx, device, port, mgmt_if, peer, devices[peer.device].data.role)
        values = by_role[role].copy()
        given = spec.__dict__  # where pydantic keeps the fields: one attribute lookup for three
        speed = given["speed"]
        if speed is None and peer is not None:
            speed = speed_of(ctx, spec, peer)
        values["name"] = port
        values["speed_mbps"] = speed
        values["lanes"] = given["lanes"]
        values["fec"] = given["fec"]
        cable = None
        if link is not None:
            cable = link.cable_m
            values["media"] = link.media
        if peer is not None:
            values["peer"] = f"{peer.device}:{peer.port}"
            prefix = _DESCRIPTION_PREFIX.get(role)
            if prefix:  # the peer with `_` for its `:` (names hold no `:`: DEVICE_NAME, PORT_NAME)
                values["description"] = f"{prefix}_{peer.device}_{peer.port}"
        lossless = values["lossless"]
        values["cable_m"] = cable if cable is not None or not lossless else default_cable_m
        values["cable_assumed"] = lossless and cable is None
        if lossless and programs_headroom:
            values["headroom"] = _headroom(ctx, device, port, speed, cable, values["mtu"], policy.lossless_priorities)
        ports.append(values)
    # Every dict lists every field in declaration order: the role's dict does.
    return PortModel.all_in_field_order(ports)


_NO_END: tuple[None, None] = (None, None)


def port_mode(role: PortRole) -> PortMode | None:
    """The forwarding mode fabricgen owns on a switch port, which decides the MTU knob that takes effect.

    Data ports are routed: the RoCE leaf/spine norm (one IP subnet per link, ECMP, no spanning tree), and the
    mode whose `mtu` every platform applies to the port. OOB access ports are switched into the management
    VLAN. Other ports (unused, the management interface) stay in the platform's default mode: not ours."""
    if role in ("host", "fabric"):
        return "routed"
    return "switched" if role == "oob-access" else None


def _headroom(ctx: ResolveContext, device: Device, port: str, speed: int | None, cable: int | None,
              mtu: int, lossless_priorities: tuple[int, ...]) -> HeadroomModel | None:
    path = ("inventory", device.name, "data", "ports", port)
    policy = ctx.intent.pfc.headroom
    cable_m = cable if cable is not None else policy.default_cable_m
    if speed is None:
        ctx.problem((*path, "speed"), f"lossless port {device.name}:{port} has no speed",
                    "set speed (e.g. 400G) on this port or its peer", rule=DEVICE_FACT_MISSING)
        return None
    buffers = ctx.once(f"sonic-buffers:{device.name}", lambda: _sonic_buffers(ctx, device, lossless_priorities))
    if buffers is None:
        return None
    release, buffer_model = buffers
    if policy.method == "vendor-table":
        headroom = _vendor_headroom(ctx, device, port, speed, cable_m)
        return headroom.model_copy(update={"buffer_model": buffer_model}) if headroom else None
    asic = device.data.asic
    if asic not in ASIC_CONSTANTS or speed not in PAUSE_QUANTA:
        ctx.problem(("inventory", device.name, "data", "asic"),
                    f"no headroom constants for ASIC {asic!r} at {speed} Mb/s on {device.name}",
                    f"set data.asic to one of {', '.join(sorted(ASIC_CONSTANTS))}", rule=DEVICE_FACT_MISSING)
        return None
    lane_list = device.data.ports[port].lanes
    lanes = len(lane_list.split(",")) if lane_list else 4
    return _sonic_headroom(asic, HeadroomInputs(
        speed_mbps=speed, cable_m=cable_m, port_mtu=mtu, lanes=lanes, lossless_mtu=policy.lossless_mtu,
        small_packet_percent=policy.small_packet_percent, shared_headroom_pool=policy.shared_headroom_pool,
        gearbox_delay_ns=gearbox_delay_ns(device.data.hardware)), release, buffer_model)


# Thousands of ports share speed, cable and MTU; the models are frozen, so ports can share one result.
_sonic_headroom = lru_cache(maxsize=4096)(sonic_headroom)

# The lossless PGs SONiC's buffer templates give every port in the dynamic buffer model (sonic-buildimage
# files/build_templates/buffers_config.j2: BUFFER_PG "<port>|3-4" with profile NULL); fabricgen does not own them.
DYNAMIC_TEMPLATE_PGS = frozenset({3, 4})


def _sonic_buffers(ctx: ResolveContext, device: Device,
                   lossless_priorities: tuple[int, ...]) -> tuple[str, BufferModel] | None:
    """The device's SONiC release and buffer model (inventory data, else the defaults), checked once per device;
    None when the release is one whose formula fabricgen does not know."""
    data = device.data
    release = data.sonic_release or DEFAULT_SONIC_RELEASE
    if release not in SONIC_RELEASES:
        ctx.problem(("inventory", device.name, "data", "sonic_release"),
                    f"no headroom formula known for SONiC release {release} on {device.name}",
                    f"set data.sonic_release to one of {', '.join(SONIC_RELEASES)}", rule=PLATFORM_LIMIT)
        return None
    buffer_model = data.sonic_buffer_model or default_buffer_model(data.asic)
    if buffer_model == "dynamic":
        _check_dynamic_model(ctx, device, lossless_priorities)
    return release, buffer_model


def _check_dynamic_model(ctx: ResolveContext, device: Device, lossless_priorities: tuple[int, ...]) -> None:
    """In the dynamic model buffermgrd sizes headroom by formula on the PGs the SKU template declares lossless."""
    path = ("inventory", device.name, "data", "sonic_buffer_model")
    hint = "set data.sonic_buffer_model: traditional (and reload the switch's buffer configuration)"
    # Each problem is located at the intent key asking what the model cannot do (the buffer model is often not
    # written at all: the image's default), and names the device and its model.
    if ctx.intent.pfc.headroom.method == "vendor-table":
        ctx.problem(("intent", "pfc", "headroom", "method"), f"{device.name} uses SONiC's dynamic buffer model, "
                    "where buffermgrd computes headroom by formula: pfc.headroom.method vendor-table cannot apply",
                    f"use method formula, or {hint}", rule=PLATFORM_LIMIT)
    outside = sorted(set(lossless_priorities) - DYNAMIC_TEMPLATE_PGS)
    if outside:
        cause = next((name for name, cls in ctx.intent.qos.classes.items()
                      if cls.lossless and cls.priority == outside[0]), None)
        where = ("intent", "qos", "classes", cause, "lossless") if cause is not None else path
        ctx.problem(where, f"{device.name} uses SONiC's dynamic buffer model, whose templates reserve headroom "
                    f"only on PGs 3-4: lossless priority {', '.join(map(str, outside))} would get none",
                    f"make priorities 3/4 lossless, or {hint}", rule=PLATFORM_LIMIT)


def _vendor_headroom(ctx: ResolveContext, device: Device, port: str, speed: int,
                     cable_m: int) -> HeadroomModel | None:
    sku = device.data.hardware or ""
    if sku not in VENDOR_TABLES:
        ctx.problem(("inventory", device.name, "data", "hardware"),
                    f"no shipped headroom table for hardware {sku!r}",
                    f"use pfc.headroom.method: formula, or one of {', '.join(sorted(VENDOR_TABLES))}",
                    rule=PLATFORM_LIMIT)
        return None
    headroom = vendor_table_headroom(sku, speed, cable_m)
    if headroom is None:
        ctx.problem(("inventory", device.name, "data", "ports", port, "cable_m"),
                    f"{sku}'s table has no row for {speed} Mb/s with a cable of {cable_m} m or longer",
                    "use pfc.headroom.method: formula", rule=PLATFORM_LIMIT)
    return headroom
