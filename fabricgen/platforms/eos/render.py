"""Arista EOS: CLI text for the sections fabricgen owns, laid out the way Arista's pyavd renders them.

Lossless settings live in one ``qos profile`` applied to data ports with ``service-profile`` (AVD's model),
DSCP→TC maps and the PFC watchdog are global, management sits in its own VRF. Section order, indentation
and ``!`` separators follow pyavd 6.4 (eos_cli_config_gen), which follows EOS 4.35 running-config, so
a diff against a pyavd- or device-produced config shows only real differences.

fabricgen owns the port mode of data ports, because it decides which MTU takes effect. EOS Ethernet
interfaces are switchports until ``no switchport``, and ``mtu`` is the Layer 3 MTU of routed interfaces and
SVIs (Arista EOS manual, "Layer 3 MTU Configuration": "You configure Layer 3 MTU on Layer 3 interfaces and
SVIs using the mtu command"); a switchport's frames follow ``l2 mtu`` instead. So a routed data port (the
RoCE leaf/spine norm, ``PortModel.mode``) is rendered ``mtu N`` + ``no switchport``, a switched one
``l2 mtu N`` + ``switchport``, in the places pyavd puts ``mtu``, ``l2_mtu`` and ``switchport.enabled``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal
from functools import lru_cache
from operator import attrgetter, itemgetter
from typing import Any, NamedTuple

from fabricgen import __version__
from fabricgen.models.device import DeviceModel, QosModel, QueueModel
from fabricgen.platforms.common.memo import by_identity
from fabricgen.platforms.common.templating import Templates

PROFILE = "FABRICGEN_ROCE"

# Queue sub-mode per hardware family: Jericho ("sand", VOQ) platforms use `tx-queue`; Trident/Tomahawk
# shared-buffer platforms split unicast/multicast and take ECN on `uc-tx-queue` (as Arista's pyavd renders
# each model: tests/test_eos_pyavd_parity.py compares byte for byte).
_SAND_FAMILIES = ("7280", "7500R", "7800R", "7020R")
_SAND_MODEL = re.compile("|".join(_SAND_FAMILIES))  # a model naming any of them: one search, not a generator
_MGMT0_FAMILIES = ("7500R", "7800R", "7300X3", "7368X4", "7388X5")

def queue_keyword(hardware: str | None) -> str:
    return "tx-queue" if not hardware or _SAND_MODEL.search(hardware) else "uc-tx-queue"


def natural_key(text: str) -> list[Any]:
    return [int(part) if part.isdigit() else part.lower() for part in re.split(r"(\d+)", text)]


@lru_cache(maxsize=256)  # switches of one model list the same ports: sorted once per port layout
def _natural_order(names: tuple[str, ...]) -> tuple[int, ...]:
    """The positions of ``names`` in natural order."""
    return tuple(sorted(range(len(names)), key=lambda i: natural_key(names[i])))


def seconds(ms: int) -> str:
    """200 → "0.2": EOS takes watchdog timers in seconds."""
    return format((Decimal(ms) / 1000).normalize(), "f")


# Template values are NamedTuples, not dicts: Jinja reads ``a.b`` with getattr first, which fails on a dict
# (an exception per value, most of the render time) before it tries ``a["b"]``. Interfaces, the bulk of a
# switch, are plain tuples the template unpacks in its loop: no attribute lookup at all.

@dataclass(frozen=True)
class Queue:  # not a NamedTuple: its field ``index`` would hide tuple.index (once per fabric: speed is moot)
    index: int
    lines: tuple[str, ...]


class Profile(NamedTuple):
    name: str
    trust: str
    no_drop: tuple[int, ...]
    watchdog: bool
    queue_keyword: str
    queues: tuple[Queue, ...]


class Watchdog(NamedTuple):
    timeout: str
    recovery: str
    polling: str
    action: str


class Vlan(NamedTuple):
    id: int
    name: str


# (shutdown, mtu, l2_mtu, speed, fec, access_vlan, switchport, service_profile): what templates/eos/interface.j2
# renders under an Ethernet interface's description; speed is the `speed` keyword, fec the whole error-correction
# line; switchport is the mode line, "switchport" / "no switchport", or None to leave the port's mode alone.
InterfaceSettings = tuple[bool, int | None, int | None, str | None, str | None, int | None, str | None, str | None]


class IpWords(NamedTuple):
    """EOS spells IPv4 and IPv6 management differently: `ip address`/`ip route` vs `ipv6 ...`."""

    keyword: str
    default: str


class QosLines(NamedTuple):
    """Everything rendered from the fabric's QoS alone: the same on every switch of one queue keyword."""

    profile: Profile
    dscp_map: tuple[str, ...]
    tc_map: tuple[str, ...]
    watchdog: Watchdog | None


def _queue_lines(queue: QueueModel) -> tuple[str, ...]:
    lines = ["priority strict" if queue.scheduler == "strict" else "no priority"]
    if queue.scheduler == "dwrr":
        lines.append(f"bandwidth percent {queue.weight}")
    if queue.ecn:
        lines.append(f"random-detect ecn minimum-threshold {queue.ecn.min_bytes} bytes maximum-threshold "
                     f"{queue.ecn.max_bytes} bytes max-mark-probability {queue.ecn.probability_pct}")
        lines.append("random-detect ecn count")
    return tuple(lines)


# QosModel.trust → the profile's line: EOS trusts `dscp` or `cos` (the VLAN tag's PCP); `no qos trust` trusts neither.
TRUST_LINES = {"dscp": "qos trust dscp", "pcp": "qos trust cos", "none": "no qos trust"}


def _profile(qos: QosModel, keyword: str) -> Profile:
    return Profile(
        name=PROFILE,
        trust=TRUST_LINES[qos.trust],
        no_drop=tuple(qos.lossless_priorities),
        watchdog=qos.watchdog is not None and bool(qos.lossless_priorities),
        queue_keyword=keyword,
        queues=tuple(Queue(q.index, _queue_lines(q)) for q in qos.queues),
    )


def _dscp_map_lines(qos: QosModel) -> tuple[str, ...]:
    by_tc: dict[int, list[int]] = {}
    for dscp, tc in sorted(qos.dscp_to_tc.items()):
        by_tc.setdefault(tc, []).append(dscp)
    lines = [f"{' '.join(map(str, dscps))} to traffic-class {tc}" for tc, dscps in by_tc.items()]
    return tuple(sorted(lines, key=natural_key))


def _tc_map_lines(qos: QosModel, keyword: str) -> tuple[str, ...]:
    used = sorted({q.traffic_class for q in qos.queues})
    return tuple(f"{tc} to {keyword} {qos.tc_to_queue[tc]}" for tc in used)


def _watchdog(qos: QosModel) -> Watchdog | None:
    wd = qos.watchdog
    if wd is None:
        return None
    return Watchdog(timeout=seconds(wd.detection_ms), recovery=seconds(wd.restoration_ms),
                    polling=seconds(wd.poll_ms), action=wd.action if wd.action != "alert" else "notify-only")


@by_identity  # one QosModel per fabric: formatted once, not on every switch
def _qos_lines(qos: QosModel, keyword: str) -> QosLines:
    return QosLines(profile=_profile(qos, keyword), dscp_map=_dscp_map_lines(qos),
                    tc_map=_tc_map_lines(qos, keyword), watchdog=_watchdog(qos))


_DATA_ROLES = ("host", "fabric")


_SWITCHPORT = {"routed": "no switchport", "switched": "switchport", None: None}
# PortModel.fec → the interface line (EOS: `error-correction encoding fire-code|reed-solomon`; the bare `no` form
# turns FEC off, pyavd's `error_correction_encoding.enabled: false`).
FEC_LINES = {"rs": "error-correction encoding reed-solomon", "fc": "error-correction encoding fire-code",
             "none": "no error-correction encoding"}
# From this speed up EOS names the electrical lane count in the speed (`100g-4`, `400g-8`): several lane counts
# give the same rate there.
LANE_SPEED_MBPS = 50_000


def speed_keyword(mbps: int, lanes: str | None) -> str:
    """The EOS `speed` argument for a fixed speed: 400000 → "400g" ("400g-8" on eight lanes), 2500 → "2p5g",
    100 → "100full" (EOS spells sub-gigabit speeds with their duplex)."""
    if mbps < 1000:
        return f"{mbps}full"
    whole, rest = divmod(mbps, 1000)
    word = f"{whole}g" if not rest else f"{whole}p{str(rest).rstrip('0')}g"
    if lanes and mbps >= LANE_SPEED_MBPS:
        word += f"-{len(lanes.split(','))}"
    return word


# The PortModel fields an interface's settings are decided from, read from its __dict__ (where pydantic keeps a
# model's fields; one C call for all eight instead of eight attribute lookups: this runs for every switch port).
_settings_fields = itemgetter("role", "admin_up", "mode", "mtu", "speed_mbps", "lanes", "fec", "access_vlan")
# Those fields' values, in that order.
SettingsKey = tuple[str, bool, str | None, int, int | None, str | None, str | None, int | None]


def interface_settings(key: SettingsKey, profile: str | None) -> InterfaceSettings:
    """An Ethernet interface's settings from its SettingsKey and the QoS profile's name alone (nothing else reaches
    them, which is what lets a port's settings text be looked up by its key)."""
    role, admin_up, mode, mtu, speed_mbps, lanes, fec, access_vlan = key
    data_port = role in _DATA_ROLES
    # The MTU goes where it takes effect in the port's mode: `mtu` (L3) on a routed port, `l2 mtu` on a
    # switchport. A data port of no stated mode is taken as EOS has it, a switchport.
    # Speed and FEC are owned on data ports (the link the RoCE recipe runs over), where pyavd puts `speed` and
    # `error_correction_encoding`.
    routed = mode == "routed"
    return (not admin_up, mtu if data_port and routed else None, mtu if data_port and not routed else None,
            speed_keyword(speed_mbps, lanes) if data_port and speed_mbps else None,
            FEC_LINES[fec] if data_port and fec else None, access_vlan, _SWITCHPORT[mode],
            profile if data_port else None)


_INTERFACE_TEMPLATE = "eos/interface.j2"
_KEPT = 1024  # distinct port settings kept per profile: a fabric has a handful (host, fabric, unused, OOB ports)
# What interface.j2 is rendered with in place of a port's name and description, to find their places in its text.
_NAME_MARK, _DESCRIPTION_MARK = "\x00name\x00", "\x00description\x00"


def _interfaces(ports: list[dict[str, Any]], profile: str | None, templates: Templates) -> str:
    """Every Ethernet interface's block, one after the other, from the ports' fields. Most ports of a fabric share
    their settings: interface.j2 is rendered once per distinct settings (and whether the port has a description),
    and each port's block is that text with the port's name and description in their places."""
    described = templates.pieces(_INTERFACE_TEMPLATE, (profile, True))
    bare = templates.pieces(_INTERFACE_TEMPLATE, (profile, False))
    blocks: list[str] = []
    for values in ports:
        name, description, key = values["name"], values["description"], _settings_fields(values)
        if description:
            head, middle, tail = described.get(key) or _pieces(values, key, profile, templates)
            blocks.append(f"{head}{name}{middle}{description}{tail}")
        else:
            head, tail = bare.get(key) or _pieces(values, key, profile, templates)
            blocks.append(f"{head}{name}{tail}")
    # Joined here, not by a loop in device.cfg.j2: a template loop costs a generator step and a dict per port.
    return "".join(blocks)


def _pieces(port: dict[str, Any], key: SettingsKey, profile: str | None, templates: Templates) -> tuple[str, ...]:
    """interface.j2's text for ``key`` (with a description or without, as ``port``, a port's fields, has), split
    at the places of the name and the description; kept for the ports that share them. Checked against ``port``'s
    own rendering, so that a template that used the name or description otherwise than printing it fails here, not
    silently."""
    name, description = port["name"], port["description"]
    described = bool(description)
    kept = templates.pieces(_INTERFACE_TEMPLATE, (profile, described))
    if len(kept) >= _KEPT:
        kept.clear()
    settings = dict(zip(_SETTINGS_NAMES, interface_settings(key, profile), strict=True))
    template = templates.template(_INTERFACE_TEMPLATE)  # not Templates.render: its first parameter is `name`
    text = template.render(name=_NAME_MARK, description=_DESCRIPTION_MARK if described else None, **settings)
    head, _, rest = text.partition(_NAME_MARK)
    pieces = (head, *rest.split(_DESCRIPTION_MARK)) if described else (head, rest)
    own = template.render(name=name, description=description, **settings)
    if len(pieces) != 2 + described or _NAME_MARK in rest or own != name.join(pieces[:2]) + (
            f"{description}{pieces[2]}" if described else ""):
        raise RuntimeError(f"{_INTERFACE_TEMPLATE} must print the name and description as they are, once each")
    kept[key] = pieces
    return pieces


_SETTINGS_NAMES = ("shutdown", "mtu", "l2_mtu", "speed", "fec", "access_vlan", "switchport", "service_profile")


# A port's fields: its __dict__, where pydantic keeps them (a dict read per field, not a model attribute lookup).
_fields_of = attrgetter("__dict__")
_name_of = itemgetter("name")


def _ethernet(device: DeviceModel) -> list[dict[str, Any]]:
    """The fields of the switch's ports but management, in natural order (Ethernet2 before Ethernet10)."""
    ports = [values for values in map(_fields_of, device.ports) if values["role"] != "mgmt"]
    return [ports[i] for i in _natural_order(tuple(map(_name_of, ports)))]


_IPV4 = IpWords(keyword="ip", default="0.0.0.0/0")
_IPV6 = IpWords(keyword="ipv6", default="::/0")


def _ip_words(address: str | None) -> IpWords:
    """IPv6 words for an IPv6 address: resolve writes the address from a parsed one, and of valid addresses only
    IPv6 ones hold a `:`."""
    return _IPV6 if address is not None and ":" in address else _IPV4


def build_context(device: DeviceModel, templates: Templates) -> dict[str, Any]:
    qos = _qos_lines(device.qos, queue_keyword(device.hardware)) if device.qos else None
    mgmt = device.mgmt
    profile = qos.profile.name if qos else None
    return {
        "version": __version__,
        "device": device,
        "profile": qos.profile if qos else None,
        "vlans": [Vlan(mgmt.vlan, "OOB_MGMT")] if mgmt and device.role == "oob" else [],
        "interfaces": _interfaces(_ethernet(device), profile, templates),
        "mgmt": mgmt,
        "mgmt_description": "OOB_MANAGEMENT",
        "ip": _ip_words(mgmt.address if mgmt else None),
        "dscp_map": qos.dscp_map if qos else (),
        "tc_map": qos.tc_map if qos else (),
        "watchdog": qos.watchdog if qos else None,
    }


def render(device: DeviceModel, templates: Templates) -> dict[str, str]:
    return {"eos.cfg": templates.render("eos/device.cfg.j2", **build_context(device, templates))}
