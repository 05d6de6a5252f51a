"""Read Cisco NX-OS CLI (fabricgen's ``nxos.cfg`` or a whole ``show running-config``) back into the DeviceModel.

Owned — what ``owned()`` projects and ``read()`` replaces with what the config says:

* every non-management port (``interface Ethernet…``): ``admin_up`` (absent ``no shutdown`` = down, NX-OS's
  default for Ethernet ports), ``description``, ``access_vlan`` (``switchport access vlan``; None on a routed
  port), ``mode`` (``no switchport`` = routed, ``switchport`` = switched; neither: the global ``system default
  switchport`` makes it switched, else routed — Cisco's Nexus 9000 interfaces guide: 9300-EX (Cloud Scale)
  ports are Layer 3 by default); ``mode`` is owned on the ports whose mode fabricgen decides (data and OOB
  access ports); on data ports (role host/fabric) ``mtu`` (absent = 1500): a Nexus 9000 takes a per-port
  ``mtu`` in both modes, so it is the MTU in effect either way; ``speed_mbps`` from ``speed N`` (Mb/s; ``auto``,
  ``no speed`` or no line: None, the speed is negotiated or the transceiver's, which the config does not state);
  ``fec`` from the last ``fec`` line (``rs-fec``, ``rs-ieee``, ``rs-cons16`` and ``kp-fec`` are Reed-Solomon
  codes: "rs"; ``fc-fec``: "fc"; ``off``: "none"; ``auto``, ``no fec`` or no line: None, NX-OS picks the default
  of the speed and transceiver — see the package docstring for the modes and their sources); and, on a device
  with QoS,
  ``pfc_priorities``/``lossless``: the system's no-drop priorities on a port with ``priority-flow-control mode
  on`` that classifies its input (``service-policy type qos input`` on the port or under ``system qos``),
  else none — ``mode auto`` (the default) depends on DCBX and guarantees nothing; ``tagged_vlans`` on every
  port: the VLANs a ``switchport mode trunk`` port carries tagged (``switchport trunk allowed vlan`` lines in
  order — a list replaces, ``add``/``remove``/``except``/``all``/``none`` edit, no line = all of 1-4094 — less
  the ``switchport trunk native vlan``, default 1, which is untagged), None on routed and access ports;
* each data port's own QoS (``PortModel.qos``; None where the port runs the device's), the *effective* state:
  NX-OS's Modular QoS CLI attaches policies "for the whole system and for individual interfaces" (Cisco NX-OS
  QoS configuration guides, "Modular QoS CLI"; the Nexus 9000 guide's PFC procedure attaches ``service-policy
  type qos input`` in interface mode). Read from the port's block: its ``service-policy type qos input``
  (else the one under ``system qos``) gives its DSCP map and ``trust`` "dscp"; with neither, nothing
  classifies the port's traffic, so it all lands in qos-group 0, the default class (NX-OS's default ingress
  policy; **unverified** against a Nexus 9000 document here), and ``trust`` is "none";
  its ``service-policy type queuing output`` gives its queues (schedulers, weights, ECN) instead of the system
  queuing policy's; on a PFC port its ``priority-flow-control watch-dog-interval off`` turns the watchdog off
  there, and ``on`` turns it on with the global timers where the global line is absent (the guide has both a
  global and an interface form of the command; that the interface form overrides the global one is
  **unverified** here). The watchdog only watches no-drop queues, so the line changes nothing on a port
  without PFC;
* ``qos``, in NX-OS's own terms (see the package docstring for the mapping):
  ``dscp_to_qos_group`` (the type-qos policy most data ports apply: its classes' ``match dscp`` in policy
  order, first match wins, the rest in ``class-default``'s qos-group, 0 when it sets none), ``pfc_cos``
  (``pause pfc-cos P`` in ``c-8q-nqN`` of the system network-qos policy: priority P → qos-group N), the
  queues of the system queuing policy (index, scheduler, DWRR weight, ECN thresholds in bytes, as the renderer
  writes them; ``kbytes``/``mbytes`` read as 1024/1024² bytes, see clitext.BYTE_UNITS), the PFC watchdog (the global
  ``priority-flow-control watch-dog-interval on``; a port that turns it off is that port's ``qos``) and
  ``trust`` ("dscp" when data ports classify with a type-qos policy, else "none");
* ``mgmt``: ``interface`` (mgmt0), ``vrf`` (``vrf member``; absent = ``management``), ``address``, ``gateway``
  (the default route in that VRF's ``vrf context``), ``mtu`` (absent = 1500).

How the model is rebuilt from that: a queue is a ``c-out-8q-q<N>`` class with ``priority [level L]`` (strict)
or a non-zero ``bandwidth remaining percent`` (also ``bandwidth percent``, read as the DWRR weight); classes
left at 0 are unused. A lossless queue's traffic class is its ``pfc-cos``; a lossy queue's is the skeleton's
class on that queue index, else the index. ``dscp_to_tc`` is then DSCP → qos-group → that traffic class,
``tc_to_queue`` the identity plus each queue's class, ``lossless_priorities`` every ``pfc-cos``. The
watchdog's timers are ``interval`` (poll) and interval × ``shutdown-multiplier`` (detection) and
× ``restore-multiplier`` (restoration); a timer line left out takes NX-OS's default (100 ms, ×1, ×2:
**unverified**: no Cisco document read here states them); the action is ``drop``.

Not recoverable, kept from the skeleton: class names (the skeleton's class on that queue index, else
``queue<N>``), ``tc_to_pg``, ``qos.rdma_*``/``cnp_*``, cable/peer/lanes/media of ports, the management VLAN,
hardware/role/name. Not read: the network-qos class MTU (a platform constant, see CLASS_MTU), ``match cos``
and ACL matches in type-qos class-maps (routed RoCE is classified by DSCP; a policy matching only CoS
reads as trust "dscp" with those classes empty), the 4q queuing mode, WRED without ``ecn`` (such a queue reads
as without ECN). ECN thresholds in ``packets`` are no byte count: the queue marks, with thresholds read as written
(``QueueModel.ecn_unconverted``) and not judged. A skeleton without QoS or management stays without.

Brownfield: unknown sections and unknown lines inside known ones are ignored; ``banner`` text is skipped;
``interface ethernet 1/1`` and ranges (``Ethernet1/1-4``, comma lists) are expanded. A skeleton port with no
``interface`` block reads as shut (NX-OS lists every physical port); an Ethernet interface the skeleton
lacks is added as role ``unused``. A recognised line with a value the model cannot take (``mtu jumbo``,
``set qos-group 9``, ``match dscp 99``) raises ``ConfigReadError(file, line, message)``.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from ipaddress import ip_address, ip_interface
from typing import Any, Literal, NamedTuple

from fabricgen.models.device import (
    DeviceModel,
    EcnThresholds,
    EcnUnconverted,
    EcnUnit,
    MgmtModel,
    PortModel,
    QosModel,
    QueueModel,
    WatchdogModel,
)
from fabricgen.platforms import ConfigReadError
from fabricgen.platforms.common import clitext
from fabricgen.platforms.common.clitext import Handler, Node, dispatch, number, refuse_stray_lines, tree
from fabricgen.platforms.common.modelcopy import updated
from fabricgen.platforms.nxos.capability import FILE, MGMT_VRF, QOS_POLICY
from fabricgen.platforms.nxos.render import DATA_ROLES, QUEUES, dscp_groups, natural_key, pfc_groups

DEFAULT_MTU = 1500
# Roles whose port mode fabricgen decides (resolve.ports.port_mode): the mode is owned on these ports only.
MODE_ROLES = ("host", "fabric", "oob-access")
# NX-OS watchdog defaults for lines a running-config leaves out (unverified; see the module docstring).
WATCHDOG_DEFAULTS = {"interval": 100, "shutdown-multiplier": 1, "restore-multiplier": 2}
ALL_VLANS = range(1, 4095)
# `fec` arguments (the NX-OS device YANG model's l1_FECMode, CLI spelling `off` for its fec-off) → PortModel.fec.
# Every Reed-Solomon variant reads as "rs": the model does not tell RS(528,514) from RS(544,514), the renderer
# picks the one the lanes need; `auto` leaves the choice to NX-OS (None).
FEC_WORDS: dict[str, str | None] = {"rs-fec": "rs", "rs-ieee": "rs", "rs-cons16": "rs", "kp-fec": "rs",
                                    "fc-fec": "fc", "off": "none", "fec-off": "none", "auto": None}
# The fastest `speed` NX-OS lists (800G), in Mb/s; a larger number is a typo, not a speed.
MAX_SPEED_MBPS = 800_000
# The device model's threshold unit (ipqos_ThreshUnit) that is no byte count; preset thresholds have no numbers.
OTHER_ECN_UNITS: dict[str, EcnUnit] = {"packets": "packets"}
# DSCP names NX-OS accepts in `match dscp` (RFC 2474/2597/3246 code points).
DSCP_NAMES = {"default": 0, "ef": 46, **{f"cs{n}": 8 * n for n in range(8)},
              **{f"af{c}{d}": 8 * c + 2 * d for c in range(1, 5) for d in range(1, 4)}}


# --- owned ----------------------------------------------------------------------------------------------

def owned(device: DeviceModel) -> dict[str, Any]:
    """The fields nxos.cfg expresses, as plain data (see the module docstring)."""
    return {
        "ports": {p.name: _owned_port(p, device.qos is not None) for p in device.ports if p.role != "mgmt"},
        "qos": _owned_qos(device.qos) if device.qos is not None else None,
        "mgmt": _owned_mgmt(device.mgmt) if device.mgmt is not None else None,
    }


def _owned_port(port: PortModel, with_qos: bool) -> dict[str, Any]:
    entry: dict[str, Any] = {"admin_up": port.admin_up, "description": port.description or None,
                             "access_vlan": port.access_vlan or None}
    if port.role in MODE_ROLES:
        entry["mode"] = port.mode
    entry["tagged_vlans"] = port.tagged_vlans
    if port.role in DATA_ROLES:
        entry |= {"mtu": port.mtu, "speed_mbps": port.speed_mbps, "fec": port.fec}
        if with_qos:
            entry |= {"pfc_priorities": sorted(port.pfc_priorities), "lossless": port.lossless,
                      "qos": None if port.qos is None else _owned_qos(port.qos)}
    return entry


def _owned_qos(qos: QosModel) -> dict[str, Any]:
    """The device's QoS, and a port's own where it differs (``PortModel.qos``)."""
    return {
        "dscp_to_qos_group": dscp_groups(qos),
        "pfc_cos": pfc_groups(qos),
        "queues": [clitext.owned_queue(q) for q in sorted(qos.queues, key=lambda q: q.index)],
        "watchdog": None if qos.watchdog is None else qos.watchdog.model_dump(),
        "trust": qos.trust,
    }


def _owned_mgmt(mgmt: MgmtModel) -> dict[str, Any]:
    return {"interface": mgmt.interface, "vrf": mgmt.vrf, "address": mgmt.address, "gateway": mgmt.gateway,
            "mtu": mgmt.mtu}


# --- the config as a tree -------------------------------------------------------------------------------

def _tree(text: str) -> Node:
    """Indentation is structure in NX-OS CLI; ``!`` lines are comments (``!Command: show running-config``)."""
    return tree(text, FILE, _banner_end)


_BANNER = re.compile(r"banner \S+ (\S)(.*)")


def _banner_end(line: str) -> Callable[[str], bool] | None:
    """``banner motd #`` starts text that runs to the next ``#`` (on the same line or a later one)."""
    if not line.startswith("banner "):  # asked of every line: most are not banners
        return None
    match = _BANNER.fullmatch(line)
    if match is None or match.group(1) in match.group(2):
        return None
    delimiter = match.group(1)
    return lambda text: delimiter in text


def _values(text: str, node: Node, high: int, names: Mapping[str, int] | None = None) -> list[int]:
    """``"24-26,48 af41"`` → [24, 25, 26, 48, 34] (NX-OS lists take commas, spaces, ranges, DSCP names)."""
    found: list[int] = []
    for word in re.split(r"[,\s]+", text.strip()):
        if names is not None and word.lower() in names:
            found.append(names[word.lower()])
            continue
        first, _, last = word.partition("-")
        low = number(first, node, 0, high)
        found += range(low, number(last, node, low, high) + 1) if last else [low]
    return found


_ETHERNET = re.compile(r"(?i)e(?:th(?:ernet)?)?\s*(\d+(?:/\d+)*)")
_ETHERNET_RANGE = re.compile(r"(?i)e(?:th(?:ernet)?)?\s*((?:\d+/)*)(\d+)-(\d+)")


def _interface_names(text: str, node: Node) -> list[str]:
    """``Ethernet1/1``, ``ethernet 1/1``, ``Ethernet1/1-4``, ``Ethernet1/1, Ethernet1/3`` → canonical names."""
    names: list[str] = []
    for part in (p.strip() for p in text.split(",")):
        span = _ETHERNET_RANGE.fullmatch(part)
        single = _ETHERNET.fullmatch(part)
        if span is not None:
            first, last = number(span.group(2), node), number(span.group(3), node)
            names += [f"Ethernet{span.group(1)}{n}" for n in range(first, last + 1)]
        elif single is not None:
            names.append(f"Ethernet{single.group(1)}")
        else:
            names.append(part.replace(" ", ""))
    return names


# --- sections -------------------------------------------------------------------------------------------

@dataclass
class _Interface:
    node: Node
    pfc_mode: str  # on | off | auto (NX-OS's default)
    watchdog: bool | None  # the interface's own watch-dog-interval line; None = not said
    qos_policy: str | None
    queuing_policy: str | None  # the interface's own `service-policy type queuing output`
    key: tuple[str, ...] = ()  # its lines but the description: interfaces with equal keys read alike
    description: str | None = None


@dataclass
class _Config:
    interfaces: dict[str, _Interface] = field(default_factory=dict)
    dscp_classes: dict[str, set[int]] = field(default_factory=dict)  # type-qos class-map → DSCPs
    group_classes: dict[str, int] = field(default_factory=dict)  # network-qos/queuing class-map → qos-group
    qos_policies: dict[str, Node] = field(default_factory=dict)
    queuing_policies: dict[str, Node] = field(default_factory=dict)
    network_policies: dict[str, Node] = field(default_factory=dict)
    system: dict[str, str] = field(default_factory=dict)  # qos | queuing | network-qos → policy name
    watchdog: dict[str, int] = field(default_factory=dict)
    watchdog_on: bool = False
    routes: list[tuple[str, str]] = field(default_factory=list)  # (vrf, next hop) of default routes
    default_switched: bool = False  # `system default switchport`: ports without a switchport line are Layer 2
    # A qos policy's classification, worked out once per read: every data port binds the same policy (issue 26).
    classifications: dict[str | None, dict[str, Any]] = field(default_factory=dict)
    # What an interface block's lines set on its port (description aside), by those lines and the lossless
    # priorities: each distinct block read once (issue 26 item 7); a block that fails is not kept.
    port_fields: dict[tuple[Any, ...], dict[str, Any]] = field(default_factory=dict)
    # What an interface block's own lines say of its PFC and policies, by _lines_key: asking its lines per block
    # built each block's per-word index, most of reading a Nexus's interfaces (issue 26 item 7).
    interface_reads: dict[tuple[str, ...], tuple[str, bool | None, str | None, str | None]] = field(
        default_factory=dict)


def _add_dscp_class(config: _Config, match: re.Match[str], node: Node) -> None:
    sets = [set(_values(m.group(1), child, 63, DSCP_NAMES)) for m, child in node.each(r"match dscp (.+)")]
    if match.group(1) == "match-any":
        config.dscp_classes[match.group(2)] = set().union(*sets)
    else:  # match-all (NX-OS's default): a packet has one DSCP, so every line must list it
        config.dscp_classes[match.group(2)] = set.intersection(*sets) if sets else set()


def _add_group_class(config: _Config, match: re.Match[str], node: Node) -> None:
    group = node.last_int(r"match qos-group (\S+)", 0, 7)
    if group is not None:
        config.group_classes[match.group(1)] = group


def _add_system(config: _Config, _: re.Match[str], node: Node) -> None:
    for match, _child in node.each(r"service-policy type (qos|queuing|network-qos) (?:(?:input|output) )?(\S+)"):
        config.system[match.group(1)] = match.group(2)


def _add_watchdog(config: _Config, match: re.Match[str], node: Node) -> None:
    state = match.group(2)
    if state.isdigit():  # `watch-dog-interval 200`: on, polling every 200 ms (older spelling)
        config.watchdog["interval"] = number(state, node, 1, 60000)
    config.watchdog_on = not match.group(1) and state != "off"


def _add_watchdog_timer(config: _Config, match: re.Match[str], node: Node) -> None:
    config.watchdog[match.group(1)] = number(match.group(2), node, 1, 60000)


def _add_vrf(config: _Config, match: re.Match[str], node: Node) -> None:
    for route, _child in node.each(r"(?:ip|ipv6) route (?:0\.0\.0\.0/0|::/0) (.+)"):
        _add_route(config, match.group(1), route.group(1))


def _add_route(config: _Config, vrf: str, words: str) -> None:
    for word in words.split():  # next hop: the first address (an egress interface may precede it)
        try:
            config.routes.append((vrf, str(ip_address(word))))
        except ValueError:
            continue
        return


def _add_interface(config: _Config, match: re.Match[str], node: Node) -> None:
    key, description = _lines_key(node)
    read = config.interface_reads.get(key)
    if read is None:
        read = config.interface_reads[key] = _interface_read(node)
    intf = _Interface(node, *read, key=key, description=description)
    for name in _interface_names(match.group(1), node):
        config.interfaces[name] = intf


def _interface_read(node: Node) -> tuple[str, bool | None, str | None, str | None]:
    """The interface's PFC mode, its own watch-dog-interval (None: not said), and its qos and queuing policies."""
    mode = node.last(r"(no )?priority-flow-control mode (on|off|auto)(?: .*)?")
    watchdog = node.last(r"(no )?priority-flow-control watch-dog-interval (on|off)")
    policy = node.last(r"service-policy type qos input (\S+)(?: .*)?")
    queuing = node.last(r"service-policy type queuing output (\S+)(?: .*)?")
    return ("auto" if mode is None or mode.group(1) else mode.group(2),
            None if watchdog is None else not watchdog.group(1) and watchdog.group(2) == "on",
            policy.group(1) if policy else None, queuing.group(1) if queuing else None)


def _lines_key(node: Node) -> tuple[tuple[str, ...], str | None]:
    """An interface block's lines but its description (what its reading depends on), and the description: the
    text of its last `description` line, as `description (.+)` reads it. One pass over the lines, without the
    per-word index a pattern builds."""
    lines = []
    description = None
    for child in node.children:
        text = child.text
        if text.startswith("description "):
            description = text[len("description "):]  # lines are stripped: text follows the space
        else:
            lines.append(text)
    return tuple(lines), description


# Top-level lines fabricgen reads; everything else is someone else's configuration.
_TOP: list[tuple[re.Pattern[str], Handler[_Config]]] = [
    (re.compile(r"class-map (?:type qos )?(?:(match-all|match-any) )?(\S+)"), _add_dscp_class),
    (re.compile(r"class-map type (?:network-qos|queuing) (?:match-(?:all|any) )?(\S+)"), _add_group_class),
    (re.compile(r"policy-map (?:type qos )?(\S+)"), lambda c, m, n: c.qos_policies.__setitem__(m.group(1), n)),
    (re.compile(r"policy-map type queuing (\S+)"), lambda c, m, n: c.queuing_policies.__setitem__(m.group(1), n)),
    (re.compile(r"policy-map type network-qos (\S+)"),
     lambda c, m, n: c.network_policies.__setitem__(m.group(1), n)),
    (re.compile(r"system qos"), _add_system),
    (re.compile(r"(no )?priority-flow-control watch-dog-interval (on|off|\d+)"), _add_watchdog),
    (re.compile(r"priority-flow-control watch-dog (interval|shutdown-multiplier|restore-multiplier) (\S+)"),
     _add_watchdog_timer),
    (re.compile(r"vrf context (\S+)"), _add_vrf),
    (re.compile(r"(?:ip|ipv6) route (?:0\.0\.0\.0/0|::/0) (.+)"), lambda c, m, n: _add_route(c, "default", m.group(1))),
    (re.compile(r"interface (.+)"), _add_interface),
    (re.compile(r"(no )?system default switchport"),
     lambda c, m, n: setattr(c, "default_switched", m.group(1) is None)),
]


def _parse(files: Mapping[str, str]) -> _Config:
    if FILE not in files:
        raise ConfigReadError(FILE, 0, "file missing")
    root = _tree(files[FILE])
    refuse_stray_lines(root, _BLOCK_ONLY, "`interface`, a QoS policy's `class`")
    return dispatch(root, _TOP, _Config())


# Lines of an interface (or a QoS policy's class, or `system qos`), which mean nothing at the top level (NX-OS's
# global PFC commands are `priority-flow-control watch-dog...`/`auto-restore`/`fixed-restore`, its global
# switchport one `system default switchport`: not matched).
_BLOCK_ONLY = re.compile(
    r"(?:no |default )?(?:(?:mtu|speed|shutdown|shut|description|fec|service-policy|channel-group"
    r"|switchport (?:mode|access|trunk)|priority-flow-control mode)(?: |$)|switchport$)")


# --- qos-groups -----------------------------------------------------------------------------------------

def _group(name: str, config: _Config) -> int | None:
    """``c-8q-nq3`` / ``c-out-8q-q3`` → 3, ``…-default`` → 0, a user class-map → its ``match qos-group``."""
    match = re.fullmatch(r"c-(?:out-)?8q-n?q(\d|-default)", name)
    if match is not None:
        return 0 if match.group(1) == "-default" else int(match.group(1))
    return config.group_classes.get(name)


def _policy_dscp_groups(config: _Config, policy: Node | None) -> dict[int, int]:
    """DSCP → qos-group for all 64 code points: classes in policy order, first match wins."""
    found: dict[int, int] = {}
    default = 0
    for match, child in policy.each(r"class (?:type qos )?(\S+)") if policy else ():
        group = child.last_int(r"set qos-group (\S+)", 0, 7)
        if match.group(1) == "class-default":
            default = group if group is not None else default
        elif group is not None:
            for dscp in sorted(config.dscp_classes.get(match.group(1), set())):
                found.setdefault(dscp, group)
    return {dscp: found.get(dscp, default) for dscp in range(64)}


def _pfc(config: _Config) -> dict[int, int]:
    """pfc-cos → qos-group of the system network-qos policy (none: NX-OS's default policy pauses nothing)."""
    policy = config.network_policies.get(config.system.get("network-qos", ""))
    pause: dict[int, int] = {}
    for match, child in policy.each(r"class type network-qos (\S+)") if policy else ():
        group = _group(match.group(1), config)
        for cos, node in child.each(r"pause (?:.* )?pfc-cos (\S+)"):
            for prio in _values(cos.group(1), node, 7):
                pause[prio] = group if group is not None else prio
    return dict(sorted(pause.items()))


# --- ports ----------------------------------------------------------------------------------------------

def _read_port(config: _Config, port: PortModel, intf: _Interface, lossless: list[int]) -> PortModel:
    key = (tuple(lossless), intf.key)
    fields = config.port_fields.get(key)
    if fields is None:
        fields = config.port_fields[key] = _port_fields(config, intf, lossless)
    return updated(port, {**fields, "description": intf.description})


def _port_fields(config: _Config, intf: _Interface, lossless: list[int]) -> dict[str, Any]:
    """What the interface block's lines set on its port, its description aside (its QoS policies and PFC mode
    are read from those lines too)."""
    node = intf.node
    shutdown = node.last_of(r"(no )?shutdown", r"(no )?shut")
    switchport = node.last(r"(no )?switchport")
    vlan = node.last_int(r"switchport access vlan (\S+)", 1, 4094)
    classified = intf.qos_policy is not None or "qos" in config.system
    pfc = lossless if intf.pfc_mode == "on" and classified else []
    routed = _routed(config, node, switchport)
    return {
        "admin_up": shutdown is not None and shutdown.group(1) is not None,  # Ethernet ports default to shut
        # A Nexus 9000 applies a per-port `mtu` in both modes (Layer 2: 1500 or the system jumbomtu only).
        "mtu": node.last_int(r"mtu (\S+)", 68, 65535) or DEFAULT_MTU,
        "speed_mbps": _speed_mbps(node), "fec": _fec(node),
        "access_vlan": None if routed else vlan,
        "pfc_priorities": pfc, "lossless": bool(pfc),
        "mode": "routed" if routed else "switched",
        "tagged_vlans": None if routed else _tagged_vlans(node),
        "qos": None,  # set by _with_port_qos once the device's QoS is known
    }


def _speed_mbps(node: Node) -> int | None:
    """The fixed speed of the last `speed` line in Mb/s; None for `speed auto …`, `no speed` or none (negotiated:
    the config does not say which)."""
    found = list(node.each(r"(no )?speed(?: (\S+))?(?: .*)?"))
    if not found:
        return None
    match, child = found[-1]
    if match.group(1) or match.group(2) in (None, "auto"):
        return None
    return number(match.group(2), child, 10, MAX_SPEED_MBPS)


def _fec(node: Node) -> str | None:
    """The FEC the last `fec` line holds the port to (FEC_WORDS); None for `auto`, `no fec` or none."""
    found = list(node.each(r"(no )?fec(?: (\S+))?"))
    if not found:
        return None
    match, child = found[-1]
    if match.group(1) or match.group(2) is None:
        return None
    if match.group(2) not in FEC_WORDS:
        raise child.error(f"expected a FEC mode ({', '.join(FEC_WORDS)}), found {match.group(2)!r}")
    return FEC_WORDS[match.group(2)]


def _tagged_vlans(node: Node) -> list[int] | None:
    """The VLANs a trunk port carries tagged: ``switchport trunk allowed vlan`` lines in order (a plain list
    replaces, ``add``/``remove``/``except``/``all``/``none`` edit; no line = all of 1-4094), less the native
    VLAN (``switchport trunk native vlan``, default 1), which is untagged. None unless ``switchport mode trunk``
    (NX-OS's default mode is access)."""
    mode = node.last(r"switchport mode (\S+)")
    if mode is None or mode.group(1) != "trunk":
        return None
    allowed = set(ALL_VLANS)
    for match, child in node.each(r"switchport trunk allowed vlan (.+)"):
        allowed = _allowed_vlans(match.group(1).strip(), child, allowed)
    native = node.last_int(r"switchport trunk native vlan (\S+)", 1, 4094) or 1
    return sorted(allowed - {native})


def _allowed_vlans(text: str, node: Node, allowed: set[int]) -> set[int]:
    verb, _, rest = text.partition(" ")
    if verb in ("all", "none"):
        return set(ALL_VLANS) if verb == "all" else set()
    if verb in ("add", "remove", "except"):
        listed = set(_values(rest, node, 4094))
        return {"add": allowed | listed, "remove": allowed - listed, "except": set(ALL_VLANS) - listed}[verb]
    return set(_values(text, node, 4094))


def _routed(config: _Config, node: Node, switchport: re.Match[str] | None) -> bool:
    """The port's mode: its own `[no] switchport` line; else Layer 2 settings on it (`switchport mode …`,
    `switchport access vlan …`) make it switched; else the system default (routed unless `system default
    switchport`)."""
    if switchport is not None:
        return switchport.group(1) is not None
    if node.last(r"switchport (?:mode|access vlan|trunk) .+") is not None:
        return False
    return not config.default_switched


def _read_ports(config: _Config, skeleton: DeviceModel, lossless: list[int]) -> list[PortModel]:
    ports: list[PortModel] = []
    for port in skeleton.ports:
        intf = config.interfaces.get(port.name)
        if port.role == "mgmt":
            ports.append(port)  # read into mgmt
        elif intf is None:
            # NX-OS lists every port: one without a block is not configured (shut, routed, NX-OS's defaults)
            ports.append(updated(port, {"admin_up": False, "tagged_vlans": None, "qos": None,
                                                 "speed_mbps": None, "fec": None}))
        else:
            ports.append(_read_port(config, port, intf, lossless))
    known = {p.name for p in skeleton.ports}
    # Only the names to add are sorted: not a natural_key for each of the switch's own ports (issue 26 item 7).
    for name in sorted((n for n in config.interfaces if n not in known and n.startswith("Ethernet")), key=natural_key):
        blank = PortModel(name=name, role="unused", admin_up=False, mtu=DEFAULT_MTU)
        ports.append(_read_port(config, blank, config.interfaces[name], lossless))
    return ports


# --- qos ------------------------------------------------------------------------------------------------

def _main_policy(config: _Config, ports: list[PortModel]) -> Node | None:
    """The type-qos policy most data ports apply (``system qos`` counts for ports without one)."""
    fallback = config.system.get("qos")
    applied = [config.interfaces[p.name].qos_policy or fallback for p in ports
               if p.role in DATA_ROLES and p.name in config.interfaces]
    counts = Counter(name for name in applied if name in config.qos_policies)
    if counts:
        return config.qos_policies[min(counts, key=lambda name: (-counts[name], name))]
    return config.qos_policies.get(fallback or QOS_POLICY)


def _read_ecn(node: Node) -> EcnThresholds | EcnUnconverted | None:
    pattern = (r"random-detect minimum-threshold (\S+) (\S+) maximum-threshold (\S+) (\S+)"
               r"(?: drop-probability (\S+))?(?: weight \S+)?( ecn)?")
    found = list(node.each(pattern))
    if not found:
        return None
    match, child = found[-1]
    low, low_unit, high, high_unit, probability, ecn = match.groups()
    if not ecn:
        return None  # WRED without ecn drops instead of marking
    percent = number(probability, child, 0, 100) if probability else 100
    return clitext.ecn_thresholds(low, low_unit, high, high_unit, percent, child, OTHER_ECN_UNITS)


def _scheduled(node: Node) -> bool:
    """Strict, or a non-zero bandwidth share: a queue the fabric uses (bandwidth 0 = unused)."""
    return _strict(node) or bool(_weight(node))


def _strict(node: Node) -> bool:
    return node.last(r"priority(?: level [1-7])?") is not None


def _weight(node: Node) -> int | None:
    weight = node.last_int(r"bandwidth remaining percent (\S+)", 0, 100)
    return weight if weight is not None else node.last_int(r"bandwidth percent (\S+)", 0, 100)


def _read_queue(node: Node, group: int, tc: int, name: str, lossless: bool) -> QueueModel:
    strict = _strict(node)
    scheduler: Literal["strict", "dwrr"] = "strict" if strict else "dwrr"
    return QueueModel(index=group, traffic_class=tc, class_name=name, lossless=lossless, scheduler=scheduler,
                      weight=None if strict else _weight(node), **clitext.ecn_fields(_read_ecn(node)))


def _traffic_classes(skeleton: QosModel, pfc: dict[int, int], queued: list[int]) -> dict[int, int]:
    """qos-group → a distinct traffic class for each of the 8 groups (so DSCP → TC → queue composes back to
    the qos-group): a no-drop group's lowest pfc-cos, then the skeleton's class on that queue, the index, or the
    lowest free TC."""
    tc_of: dict[int, int] = {}
    for prio, group in sorted(pfc.items()):
        tc_of.setdefault(group, prio)
    preferred = {q.index: q.traffic_class for q in skeleton.queues}
    for group in [*queued, *range(QUEUES)]:
        if group not in tc_of:
            taken = set(tc_of.values())
            tc_of[group] = next(tc for tc in (preferred.get(group), group, *range(QUEUES))
                                if tc is not None and tc not in taken)
    return tc_of


def _queue_classes(config: _Config, name: str | None) -> dict[int, Node]:
    """qos-group → its class in the queuing policy ``name``, for the queues the policy uses (see _scheduled)."""
    policy = config.queuing_policies.get(name or "")
    classes = {}
    for match, child in policy.each(r"class type queuing (\S+)") if policy else ():
        group = _group(match.group(1), config)
        if group is not None:
            classes[group] = child
    return {group: node for group, node in classes.items() if _scheduled(node)}


def _queues(used: Mapping[int, Node], tc_of: Mapping[int, int], skeleton: QosModel,
            pfc: Mapping[int, int]) -> list[QueueModel]:
    names = {q.index: q.class_name for q in skeleton.queues}
    return [_read_queue(used[g], g, tc_of[g], names.get(g, f"queue{g}"), g in pfc.values()) for g in sorted(used)]


def _watchdog_timers(config: _Config) -> WatchdogModel:
    timers = WATCHDOG_DEFAULTS | config.watchdog
    poll = timers["interval"]
    return WatchdogModel(detection_ms=poll * timers["shutdown-multiplier"],
                         restoration_ms=poll * timers["restore-multiplier"], poll_ms=poll, action="drop")


class _DeviceQos(NamedTuple):
    qos: QosModel
    tc_of: dict[int, int]  # qos-group → traffic class, all 8 groups (ports read their maps through it too)
    pfc: dict[int, int]


def _read_qos(config: _Config, skeleton: QosModel, ports: list[PortModel], pfc: dict[int, int]) -> _DeviceQos:
    used = _queue_classes(config, config.system.get("queuing"))
    tc_of = _traffic_classes(skeleton, pfc, sorted(used))
    policy = _main_policy(config, ports)
    groups = _policy_dscp_groups(config, policy)
    qos = updated(skeleton, {
        "trust": "none" if policy is None else "dscp",  # NX-OS classifies by the DSCP class-maps it is given
        "dscp_to_tc": {dscp: tc_of[group] for dscp, group in groups.items()},
        "tc_to_queue": {tc: group for group, tc in sorted(tc_of.items(), key=lambda item: item[1])},
        "pfc_priority_to_queue": {**skeleton.pfc_priority_to_queue, **pfc},
        "lossless_priorities": sorted(pfc),
        "queues": _queues(used, tc_of, skeleton, pfc),
        # The global line arms the watchdog on every PFC port; a port that turns it off is read into port.qos.
        "watchdog": _watchdog_timers(config) if config.watchdog_on else None,
    })
    return _DeviceQos(qos, tc_of, pfc)


# --- per-port QoS -----------------------------------------------------------------------------------------

def _with_port_qos(config: _Config, port: PortModel, device: _DeviceQos, skeleton: QosModel) -> PortModel:
    """``port`` with ``qos`` set when what its interface binds differs from the device's QoS (see the module
    docstring: classification policy, queuing policy, watchdog)."""
    intf = config.interfaces.get(port.name)
    if intf is None or port.role not in DATA_ROLES:
        return port
    update = {
        **_port_classification(config, intf, device.tc_of),
        "queues": (device.qos.queues if intf.queuing_policy is None else
                   _queues(_queue_classes(config, intf.queuing_policy), device.tc_of, skeleton, device.pfc)),
        "watchdog": _port_watchdog(config, port, intf, device.qos.watchdog),
    }
    if all(getattr(device.qos, name) == value for name, value in update.items()):
        return port  # what model_copy(update) == device.qos would say, without a copy per port
    return updated(port, {"qos": updated(device.qos, update)})


def _port_classification(config: _Config, intf: _Interface, tc_of: Mapping[int, int]) -> dict[str, Any]:
    """The port's trust and DSCP map: its own ``service-policy type qos input``, else the one under ``system
    qos``; with neither, nothing classifies the port's traffic and every packet lands in qos-group 0."""
    name = intf.qos_policy or config.system.get("qos")
    found = config.classifications.get(name)  # tc_of is the device's: one per read, like config
    if found is None:
        found = config.classifications[name] = _classification(config, name, tc_of)
    return found


def _classification(config: _Config, name: str | None, tc_of: Mapping[int, int]) -> dict[str, Any]:
    if name is None:
        return {"trust": "none", "dscp_to_tc": {dscp: tc_of[0] for dscp in range(64)}}
    groups = _policy_dscp_groups(config, config.qos_policies.get(name))
    return {"trust": "dscp", "dscp_to_tc": {dscp: tc_of[group] for dscp, group in groups.items()}}


def _port_watchdog(config: _Config, port: PortModel, intf: _Interface,
                   device: WatchdogModel | None) -> WatchdogModel | None:
    """The interface's own watch-dog-interval line overrides the global one on a PFC port (the watchdog only
    watches no-drop queues, so on a port without PFC the line changes nothing)."""
    if not port.pfc_priorities or intf.watchdog is None:
        return device
    if not intf.watchdog:
        return None
    return device or _watchdog_timers(config)


# --- management -----------------------------------------------------------------------------------------

def _read_mgmt(config: _Config, skeleton: MgmtModel | None) -> MgmtModel | None:
    if skeleton is None:
        return None
    names = sorted((n for n in config.interfaces if n.lower().startswith("mgmt") or n == skeleton.interface),
                   key=natural_key)
    if not names:
        return None
    name = skeleton.interface if skeleton.interface in names else names[0]
    node = config.interfaces[name].node
    vrf_line = node.last(r"vrf member (\S+)")
    vrf = vrf_line.group(1) if vrf_line else MGMT_VRF
    address = _mgmt_address(node, skeleton.address)
    v6 = address is not None and ":" in address
    hops = [hop for route_vrf, hop in config.routes if route_vrf == vrf]
    gateway = next((hop for hop in hops if (":" in hop) == v6), hops[0] if hops else None)
    return updated(skeleton, {"interface": name, "vrf": vrf, "address": address, "gateway": gateway,
                                       "mtu": node.last_int(r"mtu (\S+)", 68, 65535) or DEFAULT_MTU})


def _mgmt_address(node: Node, wanted: str | None) -> str | None:
    """The interface's address of the skeleton's family if it has both (``dhcp`` reads as None)."""
    found: list[str] = []
    for match, _ in node.each(r"ipv?6? address (\S+)(?: .*)?"):
        try:
            found.append(str(ip_interface(match.group(1))))
        except ValueError:
            continue
    want_v6 = wanted is not None and ":" in wanted
    return next((a for a in found if (":" in a) == want_v6), found[0] if found else None)


# --- read -----------------------------------------------------------------------------------------------

def read(skeleton: DeviceModel, files: Mapping[str, str]) -> DeviceModel:
    """``skeleton`` with every owned field replaced by what nxos.cfg says."""
    config = _parse(files)
    pfc = _pfc(config) if skeleton.qos is not None else {}
    ports = _read_ports(config, skeleton, sorted(pfc))
    qos = None
    if skeleton.qos is not None:
        device = _read_qos(config, skeleton.qos, ports, pfc)
        ports = [_with_port_qos(config, port, device, skeleton.qos) for port in ports]
        qos = device.qos
    return updated(skeleton, {"ports": ports, "qos": qos, "mgmt": _read_mgmt(config, skeleton.mgmt)})
