"""resolve(intent, inventory) → Fabric: every decision in one place, one DeviceModel per device."""

from __future__ import annotations

import difflib
from ipaddress import ip_address
from typing import Any

from fabricgen.models.device import (
    DeviceModel,
    Fabric,
    MgmtModel,
    PolicyModel,
    PortModel,
    PortRole,
    QosModel,
    WaiverModel,
)
from fabricgen.models.diagnostics import DEVICE_FACT_MISSING, INPUT_REFERENCE, PLATFORM_LIMIT, InputError
from fabricgen.models.intent import Intent
from fabricgen.models.inventory import Device, Inventory
from fabricgen.platforms import Capability, get_platform
from fabricgen.resolve.context import Locator, ResolveContext, no_locations
from fabricgen.resolve.host import resolve_host
from fabricgen.resolve.ports import SwitchPortPolicy, mgmt_interface, port_role, switch_ports
from fabricgen.resolve.qos import resolve_qos

__all__ = ["Resolution", "resolve"]


def resolve(intent: Intent, inventory: Inventory, locate: Locator = no_locations) -> Fabric:
    """Resolve every device. Raises InputError listing every problem found (not just the first)."""
    resolution = Resolution(intent, inventory, locate)
    resolution.resolve(resolution.names)
    return resolution.fabric()


class Resolution:
    """``resolve`` in steps, for a caller that starts work on the first devices (render them in a forked worker)
    while the next ones resolve. Devices resolve independently; resolving them in ``names`` order, in any
    number of steps, finds the same models and reports the same problems in the same order as ``resolve``."""

    def __init__(self, intent: Intent, inventory: Inventory, locate: Locator = no_locations) -> None:
        self.ctx = ResolveContext(intent, inventory, locate)
        self.qos = resolve_qos(intent)
        self.names = sorted(inventory.devices)
        self.devices: dict[str, DeviceModel] = {}

    def resolve(self, names: list[str]) -> bool:
        """Resolve these devices; False when a problem has been found so far (the models may be incomplete)."""
        inventory = self.ctx.inventory
        for name in names:
            self.devices[name] = _resolve_device(self.ctx, inventory.devices[name], self.qos)
        return not self.ctx.problems

    def fabric(self) -> Fabric:
        """The resolved fabric, once every device is; InputError listing every problem found."""
        _check_waived_names(self.ctx)
        if self.ctx.problems:
            raise InputError(self.ctx.problems)
        intent = self.ctx.intent
        return Fabric(name=intent.fabric, devices=dict(sorted(self.devices.items())),
                      policy=resolve_policy(intent, self.qos))


def _check_waived_names(ctx: ResolveContext) -> None:
    """A waiver's device and port exist in the inventory (the port: among its ports, or its management interface):
    a misspelt name waives nothing, and looks as if it did."""
    devices = ctx.inventory.devices
    for index, waiver in enumerate(ctx.intent.lint.waive):
        if waiver.device is None:
            continue
        device = devices.get(waiver.device)
        if device is None:
            _unknown_waived_name(ctx, (index, "device"), f"device {waiver.device!r}", waiver.device, list(devices),
                                 "a device of the inventory, or leave `device` out to waive the rule everywhere")
        elif waiver.port is not None and waiver.port not in device.data.ports and \
                waiver.port != mgmt_interface(device, get_platform(device.platform).capability):
            _unknown_waived_name(ctx, (index, "port"), f"port {waiver.port!r} on {waiver.device}", waiver.port,
                                 list(device.data.ports), f"a port of {waiver.device} in the inventory")


def _unknown_waived_name(ctx: ResolveContext, at: tuple[int, str], what: str, name: str, known: list[str],
                         hint: str) -> None:
    close = difflib.get_close_matches(name, known, n=1)
    ctx.problem(("intent", "lint", "waive", *at), f"the waiver names {what}, which the inventory does not have",
                f"did you mean {close[0]!r}?" if close else f"name {hint}", rule=INPUT_REFERENCE)


def resolve_policy(intent: Intent, qos: QosModel) -> PolicyModel:
    return PolicyModel(
        mgmt_vlan=intent.management.vlan, mgmt_subnet=str(intent.management.subnet), mgmt_vrf=intent.management.vrf,
        data_subnets=[str(net) for net in intent.data_subnets],
        rdma_dscp=qos.rdma_dscp, rdma_priority=qos.rdma_priority, cnp_dscp=qos.cnp_dscp,
        cnp_priority=qos.cnp_priority, tos_ecn_bits=intent.rdma.tos_ecn_bits, dcqcn=intent.rdma.dcqcn,
        rdma_lossless=intent.rdma_class().lossless, headroom_method=intent.pfc.headroom.method,
        small_packet_percent=intent.pfc.headroom.small_packet_percent,
        lossless_mtu=intent.pfc.headroom.lossless_mtu, shared_headroom_pool=intent.pfc.headroom.shared_headroom_pool,
        host_mtu=intent.mtu.host, fabric_mtu=intent.mtu.fabric, path_mtu=intent.rdma.path_mtu,
        class_dscps={name: list(cls.dscp) for name, cls in intent.qos.classes.items() if cls.dscp != "default"},
        waivers=[WaiverModel(**w.model_dump()) for w in intent.lint.waive],
    )


def _resolve_device(ctx: ResolveContext, device: Device, qos: QosModel) -> DeviceModel:
    cap = get_platform(device.platform).capability
    ctx.once(f"limits:{cap.name}", lambda: _check_platform_limits(ctx, cap))
    if cap.lossless_limit_per_sku is not None:
        data = device.data
        ctx.once(f"lossless:{cap.name}:{data.hardware}:{data.lossless_limit}",
                 lambda: _check_sku_lossless_limit(ctx, cap, device))
    if device.role == "gpu-host":
        return _resolve_gpu_host(ctx, device, qos, cap)
    ports = switch_ports(ctx, device, SwitchPortPolicy.of(ctx, device, cap, qos))
    carries_data = device.role in ("leaf", "spine")
    return DeviceModel.from_resolve({
        "name": device.name, "role": device.role, "platform": device.platform, "hardware": device.data.hardware,
        "asic": device.data.asic, "lossless_limit": device.data.lossless_limit, "mgmt": _mgmt(ctx, device, cap),
        "qos": qos if carries_data else None, "ports": ports, "host": None,
    })


def _resolve_gpu_host(ctx: ResolveContext, device: Device, qos: QosModel, cap: Capability) -> DeviceModel:
    roles = {port: port_role(ctx, device, port, cap) for port in device.data.ports}
    host = resolve_host(ctx, device, [p for p, role in roles.items() if role == "rdma"], qos)
    ports = [PortModel.from_resolve(_host_port(ctx, device, port, role)) for port, role in roles.items()]
    return DeviceModel.from_resolve({
        "name": device.name, "role": device.role, "platform": device.platform, "hardware": device.data.hardware,
        "asic": device.data.asic, "lossless_limit": device.data.lossless_limit, "mgmt": None, "qos": qos,
        "ports": ports, "host": host,
    })


def _host_port(ctx: ResolveContext, device: Device, port: str, role: PortRole) -> dict[str, Any]:
    spec = device.data.ports[port]
    peer, link = ctx.ends.get((device.name, port), (None, None))
    rdma = role == "rdma"
    rdma_class = ctx.once("rdma_class", ctx.intent.rdma_class)
    # One list for every RDMA port and one for every other (the models are frozen): 41k host ports at 32,768 GPUs.
    rdma_pfc, other_pfc = ctx.once("host-port-pfc", lambda: ([rdma_class.priority], list[int]()))
    # Every PortModel field, in its order, so that from_resolve takes its fast path.
    return {"name": port, "role": role, "admin_up": role != "unused", "speed_mbps": spec.speed, "lanes": None,
            "fec": spec.fec, "mtu": ctx.intent.mtu.host if rdma else ctx.intent.mtu.management,
            "peer": str(peer) if peer else None, "cable_m": link.cable_m if link else None, "cable_assumed": False,
            "media": link.media if link else None, "description": None,
            "lossless": rdma and bool(rdma_class.lossless), "pfc_priorities": rdma_pfc if rdma else other_pfc,
            "headroom": None, "access_vlan": None, "mode": None, "tagged_vlans": None, "qos": None}


def _mgmt(ctx: ResolveContext, device: Device, cap: Capability) -> MgmtModel:
    mgmt = ctx.intent.management
    address = None
    # The address the switch's config gets: data.mgmt_address, else Nornir's hostname when it is an address (a
    # DNS name is fine for reaching the device, and is not checked against the subnet).
    given, key = (device.data.mgmt_address, ("data", "mgmt_address")) if device.data.mgmt_address else \
        (device.hostname, ("hostname",))
    try:
        ip = ip_address(given)
    except ValueError:
        ctx.problem(("inventory", device.name, *key), f"switch {device.name}'s hostname {device.hostname!r} is a "
                    "DNS name, and its config needs its management address",
                    f"set data.mgmt_address to its address in {mgmt.subnet}", rule=DEVICE_FACT_MISSING)
    else:
        if ip not in mgmt.subnet:
            ctx.problem(("inventory", device.name, *key),
                        f"management address {ip} is outside management subnet {mgmt.subnet}",
                        "fix the address or intent management.subnet", rule=INPUT_REFERENCE)
        address = f"{ip}/{mgmt.subnet.prefixlen}"  # ip_interface's text: the address as parsed, its prefix
    return MgmtModel.from_resolve({"vrf": cap.mgmt_vrf_fixed_name or mgmt.vrf, "interface": mgmt_interface(device, cap),
                                   "address": address, "gateway": str(mgmt.gateway), "vlan": mgmt.vlan,
                                   "mtu": ctx.intent.mtu.management})


def _check_sku_lossless_limit(ctx: ResolveContext, cap: Capability, device: Device) -> None:
    """Where the limit is the SKU's: more lossless classes than a known SKU (or the inventory's declaration) takes
    are refused, once per SKU. An unknown SKU's limit is not guessed: lint warns instead (FG-PFC-002)."""
    data = device.data
    limit = cap.lossless_limit(data.hardware, data.lossless_limit)
    lossless = [name for name, cls in ctx.intent.qos.classes.items() if cls.lossless]
    if limit is None or len(lossless) <= limit:
        return
    if data.lossless_limit is not None:
        ctx.problem(("inventory", device.name, "data", "lossless_limit"), f"{len(lossless)} lossless classes "
                    f"({', '.join(lossless)}) but {device.name} declares {limit} (data.lossless_limit)",
                    "make fewer classes lossless", rule="FG-PFC-002")
    else:
        ctx.problem(("intent", "qos", "classes"), f"{len(lossless)} lossless classes ({', '.join(lossless)}) but "
                    f"{cap.name} SKU {data.hardware} provisions {limit}", "make fewer classes lossless",
                    rule="FG-PFC-002")


def _check_platform_limits(ctx: ResolveContext, cap: Capability) -> None:
    """Intent features a platform cannot express: checked once per platform in use, and the messages name the
    platform, so a 4,000-host fabric reports each problem once."""
    intent = ctx.intent
    key = "host" if cap.kind == "host" else "fabric"
    mtu = intent.mtu.host if cap.kind == "host" else intent.mtu.fabric
    if mtu > cap.max_mtu:
        ctx.problem(("intent", "mtu", key), f"MTU {mtu} exceeds the maximum of platform {cap.name} "
                    f"({cap.max_mtu})", f"lower mtu.{key} to {cap.max_mtu} or less", rule="FG-MTU-004")
    if cap.mgmt_mtu_range is not None and not cap.mgmt_mtu_range[0] <= intent.mtu.management <= cap.mgmt_mtu_range[1]:
        low, high = cap.mgmt_mtu_range
        ctx.problem(("intent", "mtu", "management"), f"management MTU {intent.mtu.management} is outside what platform "
                    f"{cap.name} takes for its management port ({low}..{high})",
                    f"set mtu.management to {low}..{high}", rule=PLATFORM_LIMIT)
    lossless = [name for name, cls in intent.qos.classes.items() if cls.lossless]
    if len(lossless) > cap.lossless_class_limit and cap.lossless_limit_per_sku is None:  # else per SKU, below
        ctx.problem(("intent", "qos", "classes"), f"{len(lossless)} lossless classes ({', '.join(lossless)}) "
                    f"but platform {cap.name} supports {cap.lossless_class_limit}", "make fewer classes lossless",
                    rule="FG-PFC-002")
    wd = intent.pfc.watchdog
    if wd.enabled and wd.action not in cap.watchdog_actions:
        ctx.problem(("intent", "pfc", "watchdog", "action"), f"platform {cap.name} has no PFC watchdog action "
                    f"{wd.action!r}", f"use one of: {', '.join(cap.watchdog_actions)}", rule=PLATFORM_LIMIT)
    for name, value in (("detection_ms", wd.detection_ms), ("restoration_ms", wd.restoration_ms),
                        ("poll_ms", wd.poll_ms)):
        if wd.enabled and value % cap.watchdog_step_ms:
            ctx.problem(("intent", "pfc", "watchdog", name), f"platform {cap.name} sets PFC watchdog timers in "
                        f"{cap.watchdog_step_ms} ms steps", f"use a multiple of {cap.watchdog_step_ms}",
                        rule=PLATFORM_LIMIT)
    for name in cap.watchdog_timers_in_polls if wd.enabled else ():
        if getattr(wd, name) % wd.poll_ms:
            ctx.problem(("intent", "pfc", "watchdog", name), f"platform {cap.name} sets the PFC watchdog's "
                        f"{name.removesuffix('_ms')} as a multiple of poll_ms ({wd.poll_ms} ms)",
                        f"use a multiple of {wd.poll_ms}", rule=PLATFORM_LIMIT)
