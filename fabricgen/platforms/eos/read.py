"""Read Arista EOS CLI (fabricgen's ``eos.cfg`` or a whole running-config) back into the DeviceModel.

Each port reads as the *effective state* it runs with: a line the config leaves out reads as what EOS does
without it, never as the intent's value.

Owned — what ``owned()`` projects and ``read()`` replaces with what the config says:

* every non-management port (``interface ...`` blocks): ``admin_up`` (``shutdown``; absent = up, the EOS
  default), ``description``, ``mode`` (``no switchport`` = routed; else switched: EOS Ethernet interfaces are
  switchports by default), owned on the ports whose mode fabricgen decides (data and OOB access ports), and VLAN
  membership: ``access_vlan`` (``switchport access vlan`` of an access-mode switchport; None on a routed port or a
  trunk) and ``tagged_vlans`` (a switchport under ``switchport mode trunk``: its ``switchport trunk allowed vlan``
  list, all VLANs 1-4094 without one, less the native VLAN — ``switchport trunk native vlan``, default 1 —
  unless ``switchport trunk native vlan tag`` tags it too; None on access ports and routed ports, where the
  trunk lines do nothing). An access switchport without ``switchport access vlan`` is in VLAN 1 on EOS; it reads
  as None (not set), as the unused ports fabricgen leaves alone are;
* on data ports (role host/fabric): ``mtu``, the MTU that *takes effect in the port's mode*: on a routed port
  its ``mtu`` (absent = ``interface defaults`` ``mtu`` or 1500); on a switchport its ``l2 mtu``, never its
  ``mtu`` (EOS's ``mtu`` is the L3 MTU of routed interfaces and SVIs). A switchport without ``l2 mtu`` reads
  as DEFAULT_L2_MTU: the platform's own L2 limit is not in the config, and fabricgen will not credit an unset
  one with the intended jumbo MTU. ``speed_mbps`` from ``speed`` (``400g``, ``400g-8``, ``2p5g``, ``100full``,
  the older ``forced 100gfull``; ``auto`` or no line: None, the speed is negotiated or the transceiver's
  default, which the config does not state). ``fec`` from the error-correction lines in order (``error-correction
  encoding reed-solomon`` = rs, ``fire-code`` = fc, ``no error-correction encoding`` = none; no line, or both
  encodings allowed: None, EOS picks the default of the speed and transceiver). Cable length is not in an EOS
  config (EOS does not size headroom from it) and is not read;
* on data ports of a device with QoS: ``pfc_priorities``/``lossless`` — from the ``qos profile`` applied with
  ``service-profile`` and the interface's own ``priority-flow-control on`` / ``no priority-flow-control`` /
  ``priority-flow-control priority N no-drop|drop`` lines, which override the profile as they do on EOS. This is
  how "the lossless profile is applied" shows in the model: a data port without it has no PFC priorities. And
  ``qos``, the QoS in effect on the port where it differs from the device's (else None): the trust (the
  interface's ``qos trust dscp|cos`` / ``no qos trust``, else its profile's, else EOS's default for the mode:
  DSCP on a routed port, CoS on a switchport), the queues of *its* profile (a port bound to another profile, or
  to none, has that profile's queues, or none: EOS's defaults), with the ECN thresholds of the interface's own
  ``tx-queue``/``uc-tx-queue`` blocks replacing the profile's on that queue, and the watchdog as its profile arms
  it (a port without a profile has none). DSCP and traffic-class maps are global on EOS (``qos map``): a port
  cannot have its own;
* ``qos``: ``trust`` (the profile's ``qos trust``; without one, DSCP, EOS's default on the routed data ports the
  profile is made for), ``dscp_to_tc`` (all 64: ``qos map dscp``, over EOS's default DSCP-to-traffic-class
  map for the DSCPs no such line maps, see DEFAULT_DSCP_TO_TC), ``tc_to_queue`` of the TCs the queues use (``qos map
  traffic-class``), ``lossless_priorities`` (the profile's ``no-drop`` priorities under ``priority-flow-control
  on``), the queues' index/scheduler/weight/ECN (the profile's ``tx-queue``/``uc-tx-queue`` blocks; a block
  without ``no priority`` is strict, EOS's default) and the PFC watchdog (global timers and action);
* ``mgmt``: ``interface``, ``vrf`` (absent = ``default``), ``address`` (``ip``/``ipv6 address``), ``gateway``
  (the default route in that VRF).

The device-wide values come from *the* profile: the one most data ports apply (ties: by name), else
fabricgen's ``FABRICGEN_ROCE``. A watchdog whose timers are configured but which the profile does not arm
(``priority-flow-control pause watchdog`` missing while it has no-drop priorities) reads as None.

Vendor sources: the interface lines and their order are pyavd 6.4's (eos_cli_config_gen ``ethernet_interfaces``:
``speed``, ``error_correction_encoding``, ``switchport.trunk``, ``qos.trust``, ``tx_queues``), which Arista keeps
equal to EOS running-config output; the defaults (switchports by default, access mode by default, a trunk allowing
all VLANs with native VLAN 1, routed ports trusting DSCP and switchports CoS) are the Arista EOS User Manual's
("Ethernet Ports", "VLANs": switchport trunk allowed vlan / native vlan, "Quality of Service": port trust default).

Not recoverable, kept from the skeleton: class names (queues are named by the skeleton's class on that
queue index, else ``queue<N>``), ``qos.rdma_*``/``cnp_*``, ``tc_to_pg`` and ``pfc_priority_to_queue`` (EOS
has no such maps), cable length/peer/media/lanes of ports, the speed and FEC of ports other than data ports
where the config sets none (fabricgen renders them on data ports only), the management VLAN and MTU,
hardware/role/name.
A TC the config does not map to a tx-queue reads as egressing on the queue of its own number: the model's
convention for a TC a map leaves out, which lint applies on every platform (``tc_to_queue.get(tc, tc)``).
ECN thresholds in ``kbytes``/``mbytes`` read as 1024/1024² bytes (clitext.BYTE_UNITS); in ``segments``,
``milliseconds`` or ``microseconds`` they are no byte count: the queue marks, with thresholds read as written
(``QueueModel.ecn_unconverted``) and not judged. Watchdog timers the config leaves out keep the skeleton's
value, and an action other than ``drop``/``notify-only`` (``errdisable``) is not expressible and keeps the
skeleton's action. A skeleton without QoS or management stays without.

Brownfield: unknown sections and unknown lines inside known ones are ignored (a running-config has far more
than fabricgen owns); ``banner`` text is skipped. Ports: a skeleton port with no ``interface`` block keeps
its skeleton values except ``admin_up`` = False and no PFC (EOS lists every physical interface, so it does
not exist, and a port that does not exist is not lossless); an ``Ethernet`` interface the skeleton lacks is
added as role ``unused``. Other interface types (Loopback, Vlan, Port-Channel) are added only when the skeleton
has them.

A recognised line with a value the model cannot take (``mtu jumbo``, ``qos map dscp 99 ...``, ``switchport
trunk allowed vlan 5000``) raises ``ConfigReadError(file, line, message)``.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from ipaddress import ip_address, ip_interface
from typing import Any, Literal

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
from fabricgen.platforms.common.ownedviews import SharedViews
from fabricgen.platforms.eos.render import PROFILE, natural_key

FILE = "eos.cfg"
DATA_ROLES = ("host", "fabric")
DEFAULT_MTU = 1500  # EOS's L3 MTU unless `interface defaults` says otherwise
# What a switchport without `l2 mtu` reads as. Its real limit is platform-specific and not in the config; 1500,
# the Ethernet MTU, is the most fabricgen assumes, so lint reports the port instead of guessing jumbo frames pass.
DEFAULT_L2_MTU = 1500
# Roles whose port mode fabricgen decides (resolve.ports.port_mode): the mode is owned on these ports only.
MODE_ROLES = ("host", "fabric", "oob-access")
WATCHDOG_ACTIONS: dict[str, Literal["drop", "alert"]] = {"drop": "drop", "notify-only": "alert"}
Trust = Literal["dscp", "pcp", "none"]
TRUST_WORDS: dict[str, Trust] = {"dscp": "dscp", "cos": "pcp"}
# The trust of a port that neither it nor its profile states: EOS trusts DSCP on routed ports, CoS on switchports.
DEFAULT_TRUST: dict[bool, Trust] = {True: "dscp", False: "pcp"}
FEC_WORDS = {"reed-solomon": "rs", "fire-code": "fc"}
# ECN threshold units EOS offers that are no byte count (segments; time on Jericho, `microseconds` among them).
OTHER_ECN_UNITS: dict[str, EcnUnit] = {"segments": "segments", "microseconds": "microseconds",
                                       "milliseconds": "milliseconds"}
VLAN_IDS = range(1, 4095)
# Watchdog fields for a config that configures only some of them and a skeleton that has none (the intent
# schema's defaults).
WATCHDOG_FALLBACK = WatchdogModel(detection_ms=200, restoration_ms=200, poll_ms=100, action="drop")


def _default_tc(dscp: int) -> int:
    """EOS's default traffic class of a DSCP: its class selector (DSCP 8n..8n+7 → TC n), but for 0-7 and 8-15,
    which trade places (best effort, DSCP 0, runs in TC 1 above CS1's TC 0)."""
    selector = dscp >> 3
    return {0: 1, 1: 0}.get(selector, selector)


# The traffic class of a DSCP no `qos map dscp` line maps: the default DSCP-to-traffic-class map of the Arista EOS
# User Manual, chapter "Quality of Service" (https://www.arista.com/en/um-eos/eos-quality-of-service), given in
# each platform family's section (Arad, Jericho, FM6000, Petra, Trident and Tomahawk, Trident II and Helix) and
# the same in all of them: DSCP 0-7 → TC 1, 8-15 → TC 0, 16-23 → 2, 24-31 → 3, 32-39 → 4, 40-47 → 5, 48-55 → 6,
# 56-63 → 7. A `qos map dscp` line replaces the entries of the DSCPs it names and no others.
DEFAULT_DSCP_TO_TC: dict[int, int] = {dscp: _default_tc(dscp) for dscp in range(64)}
_OWN_QUEUES: dict[int, int] = {tc: tc for tc in range(8)}  # a TC no map line names: its own queue number


# --- owned ----------------------------------------------------------------------------------------------

def owned(device: DeviceModel) -> dict[str, Any]:
    """The fields eos.cfg expresses, as plain data (see the module docstring). Read-only: the views of ports that
    are the same objects as in the last device projected are that projection's (platforms.common.ownedviews)."""
    with_qos = device.qos is not None
    projection = _VIEWS.begin()
    return {
        "ports": {p.name: projection.port(p, with_qos, _owned_port) for p in device.ports if p.role != "mgmt"},
        "qos": _VIEWS.same_qos(_owned_qos(device.qos)) if device.qos is not None else None,
        "mgmt": _owned_mgmt(device.mgmt) if device.mgmt is not None else None,
    }


_VIEWS = SharedViews()


def _owned_port(port: PortModel, with_qos: bool) -> dict[str, Any]:
    entry: dict[str, Any] = {"admin_up": port.admin_up, "description": port.description or None,
                             "access_vlan": port.access_vlan or None,
                             "tagged_vlans": vlan_ranges(port.tagged_vlans) if port.tagged_vlans else None}
    if port.role in MODE_ROLES:
        entry["mode"] = port.mode
    if port.role in DATA_ROLES:
        entry |= {"mtu": port.mtu, "speed_mbps": port.speed_mbps, "fec": port.fec}
        if with_qos:
            entry |= {"pfc_priorities": sorted(port.pfc_priorities), "lossless": port.lossless,
                      # The port's own QoS, projected as the device's; None: it runs the device's (lint then
                      # compares the device's in its place, so only what differs is reported).
                      "qos": None if port.qos is None else _owned_qos(port.qos)}
    return entry


def vlan_ranges(vlans: list[int]) -> str:
    """[2, 3, 4, 10] → "2-4,10", as EOS prints VLAN lists (a trunk of all VLANs is one short range, not 4093 ids)."""
    runs: list[list[int]] = []
    for vlan in sorted(vlans):
        if runs and vlan == runs[-1][1] + 1:
            runs[-1][1] = vlan
        else:
            runs.append([vlan, vlan])
    return ",".join(str(low) if low == high else f"{low}-{high}" for low, high in runs)


def _owned_qos(qos: QosModel) -> dict[str, Any]:
    used = sorted({q.traffic_class for q in qos.queues})
    watchdog = qos.watchdog
    return {
        "trust": qos.trust,
        # What the switch does: a DSCP the model leaves out keeps EOS's default class, as a config without its line.
        "dscp_to_tc": {dscp: qos.dscp_to_tc.get(dscp, DEFAULT_DSCP_TO_TC[dscp]) for dscp in range(64)},
        "tc_to_queue": {tc: qos.tc_to_queue.get(tc) for tc in used},
        "lossless_priorities": sorted(qos.lossless_priorities),
        "queues": [clitext.owned_queue(q) for q in sorted(qos.queues, key=lambda q: q.index)],
        "watchdog": None if watchdog is None else watchdog.model_dump(),
    }


def _owned_mgmt(mgmt: MgmtModel) -> dict[str, Any]:
    return {"interface": mgmt.interface, "vrf": mgmt.vrf, "address": mgmt.address, "gateway": mgmt.gateway}


# --- the config as a tree -------------------------------------------------------------------------------

def _tree(text: str) -> Node:
    """Indentation is structure in EOS CLI; ``!`` lines are separators or comments, ``end`` closes the config."""
    return tree(text, FILE, _banner_end, skipped=("end",), canonical=_canonical_line)


def _canonical_line(line: str) -> str:
    """A top-level `interface` line (or its `no`/`default`) as a running-config prints it: the keyword whole, the
    interface name canonical (canonical_interface)."""
    if not line.startswith(("int", "no int", "default int")):
        return line
    if line.startswith("interface ") and " " not in line[10:] and line[10:].startswith(_CANONICAL_PREFIXES):
        return line  # what fabricgen and a running-config write: no regex
    typed = _INTERFACE_LINE.fullmatch(line)
    return f"{typed.group(1)}interface {canonical_interface(typed.group(2))}" if typed else line


# `interface` as typed: any prefix of the word from `int` on (EOS takes any unique one; `in` is also `ip`'s).
_INTERFACE_LINE = re.compile(r"((?:no |default )?)int(?:e|er|erf|erfa|erfac|erface)? (\S+(?: \d\S*)?)")


def _banner_end(line: str) -> Callable[[str], bool] | None:
    """``banner ...`` text runs to a line ``EOF``, whatever it says."""
    return (lambda text: text == "EOF") if line.startswith("banner ") else None


def _int_list(text: str, node: Node, high: int) -> list[int]:
    """``"0 1 2-5"`` → [0, 1, 2, 3, 4, 5] (EOS may print ranges)."""
    values: list[int] = []
    for word in text.split():
        first, _, last = word.partition("-")
        low = number(first, node, 0, high)
        values += range(low, number(last, node, 0, high) + 1) if last else [low]
    return values


def _ms(text: str, node: Node) -> int:
    """``0.2`` (seconds, as EOS takes watchdog timers) → 200."""
    try:
        value = Decimal(text) * 1000
    except InvalidOperation:
        value = Decimal("NaN")
    if not value.is_finite() or value != value.to_integral_value() or value < 0:
        raise node.error(f"expected seconds with at most three decimals, found {text!r}")
    return int(value)


# --- sections -------------------------------------------------------------------------------------------

@dataclass
class _Pfc:
    """PFC as a profile or an interface states it: ``on`` None means "not said here"."""

    on: bool | None = None
    no_drop: set[int] = field(default_factory=set)
    drop: set[int] = field(default_factory=set)


def _read_pfc(node: Node) -> _Pfc:
    pfc = _Pfc()
    for match, _ in node.each(r"(no )?priority-flow-control(?: mode)?(?: (on|off))?"):
        if match.group(1) or match.group(2):
            pfc.on = not match.group(1) and match.group(2) == "on"
    for match, child in node.each(r"priority-flow-control priority (\S+) (no-drop|drop)"):
        prio = number(match.group(1), child, 0, 7)
        (pfc.no_drop if match.group(2) == "no-drop" else pfc.drop).add(prio)
        (pfc.drop if match.group(2) == "no-drop" else pfc.no_drop).discard(prio)
    return pfc


@dataclass
class _Profile:
    pfc: _Pfc
    watchdog: bool
    queues: dict[int, Node]
    trust: Trust | None  # None: the profile has no `qos trust` line

    @property
    def lossless(self) -> list[int]:
        return sorted(self.pfc.no_drop) if self.pfc.on else []


def _tx_queues(node: Node) -> dict[int, Node]:
    return {number(m.group(1), child, 0, 7): child for m, child in node.each(r"(?:uc-)?tx-queue (\S+)")}


def _read_trust(node: Node) -> Trust | None:
    """The last ``qos trust dscp|cos`` / ``no qos trust`` line under ``node``; None without one."""
    match = node.last(r"(no )?qos trust(?: (dscp|cos))?")
    if match is None or not (match.group(1) or match.group(2)):
        return None
    return "none" if match.group(1) else TRUST_WORDS[match.group(2)]


def _read_profile(node: Node) -> _Profile:
    return _Profile(_read_pfc(node), node.last(r"priority-flow-control pause watchdog") is not None,
                    _tx_queues(node), _read_trust(node))


@dataclass
class _Interface:
    node: Node
    pfc: _Pfc
    profile: str | None
    key: tuple[str, ...] = ()  # its lines but the description: interfaces with equal keys read alike
    description: str | None = None


@dataclass
class _Config:
    interfaces: dict[str, _Interface] = field(default_factory=dict)
    profiles: dict[str, _Profile] = field(default_factory=dict)
    dscp_to_tc: dict[int, int] = field(default_factory=dict)
    tc_to_queue: dict[int, int] = field(default_factory=dict)
    watchdog: dict[str, Any] = field(default_factory=dict)
    routes: list[tuple[str | None, str]] = field(default_factory=list)  # (vrf, next hop) of default routes
    default_mtu: int = DEFAULT_MTU
    # A profile's queues, read once per (profile, lossless priorities): every data port applies the same profile,
    # and reading its tx-queue blocks again per port was most of reading a switch (issue 26 item 7).
    queues: dict[tuple[int, tuple[int, ...]], list[QueueModel]] = field(default_factory=dict)
    # What an interface block's lines set on its port, by those lines (its description aside): a switch's ports
    # differ in little more than their description, so each distinct block is read once (issue 26 item 7).
    # Only a read that succeeds is kept; a block that fails fails again at its own line.
    port_fields: dict[tuple[str, ...], dict[str, Any]] = field(default_factory=dict)
    interface_reads: dict[tuple[str, ...], tuple[_Pfc, str | None]] = field(default_factory=dict)  # by _lines_key
    # The QoS in effect on a port without qos trust or tx-queue lines of its own: by (profile, routed).
    port_qos: dict[tuple[str | None, bool], QosModel | None] = field(default_factory=dict)
    # Whether an interface block has qos trust or tx-queue lines of its own, by _lines_key: asking its lines per
    # port built each block's per-word index, most of reading an EOS switch's ports (issue 26 item 7).
    own_qos_lines: dict[tuple[str, ...], bool] = field(default_factory=dict)
    watchdogs: dict[int | None, WatchdogModel | None] = field(default_factory=dict)  # by id(profile)


def _add_interface(config: _Config, name: str, node: Node) -> None:
    name = canonical_interface(name)
    if name == "defaults":  # `interface defaults` holds defaults, not an interface
        config.default_mtu = node.last_int(r"mtu (\S+)", 68, 65535) or config.default_mtu
        return
    key, description = _lines_key(node)
    read = config.interface_reads.get(key)
    if read is None:
        profile = node.last(r"service-profile (\S+)")
        read = config.interface_reads[key] = (_read_pfc(node), profile.group(1) if profile else None)
    config.interfaces[name] = _Interface(node, read[0], read[1], key, description)


def canonical_interface(name: str) -> str:
    """An interface name as `show running-config` prints it, from a name as typed: EOS takes a type in any case and
    any prefix that is unique among its types, and a space before the number (`ethernet63/1`, `Et 63/1`, `ma1`), and
    prints the whole type."""
    if name.startswith(_CANONICAL_PREFIXES) and " " not in name:  # as a running-config or fabricgen writes them
        return name
    typed = _TYPED_NAME.fullmatch(name)
    if typed is None:
        return name
    prefix = typed.group(1).lower()
    types = [kind for kind in _INTERFACE_TYPES if kind.lower().startswith(prefix)]
    return types[0] + typed.group(2) if len(types) == 1 else name


# EOS's interface types (`interface ?` on EOS 4.3x); a typed prefix names one when it is unique among them.
_INTERFACE_TYPES = ("Ethernet", "Management", "Port-Channel", "Loopback", "Vlan", "Vxlan", "Tunnel", "Recirc-Channel",
                    "Dps", "Fabric")
_CANONICAL_PREFIXES = ("Ethernet", "Management", "Port-Channel", "Loopback", "Vlan", "Vxlan", "defaults")
_TYPED_NAME = re.compile(r"([A-Za-z-]+) ?(\d\S*)")


def _lines_key(node: Node) -> tuple[tuple[str, ...], str | None]:
    """An interface block's lines but its description (what its reading depends on), and the description:
    the text of its last `description` line, as `description (.+)` reads it. One pass over the lines, without
    the per-word index a pattern builds (issue 26 item 7)."""
    lines = []
    description = None
    for child in node.children:
        text = child.text
        if text.startswith("description "):
            if len(text) > len("description "):
                description = text[len("description "):]
        else:
            lines.append(text)
    return tuple(lines), description


def _add_dscp_map(config: _Config, match: re.Match[str], node: Node) -> None:
    tc = number(match.group(2), node, 0, 7)
    for dscp in _int_list(match.group(1), node, 63):
        config.dscp_to_tc[dscp] = tc


def _add_tc_map(config: _Config, match: re.Match[str], node: Node) -> None:
    queue = number(match.group(2), node, 0, 7)
    for tc in _int_list(match.group(1), node, 7):
        config.tc_to_queue[tc] = queue


def _add_watchdog(config: _Config, match: re.Match[str], node: Node) -> None:
    key, value = match.group(1), match.group(2)
    if key == "action":
        if value in WATCHDOG_ACTIONS:  # errdisable has no DeviceModel equivalent: see the docstring
            config.watchdog["action"] = WATCHDOG_ACTIONS[value]
    else:
        config.watchdog[key] = _ms(value, node)


def _add_route(config: _Config, match: re.Match[str], node: Node) -> None:
    for word in match.group(3).split():  # next hop: the first address (an egress interface may precede it)
        try:
            config.routes.append((match.group(1), str(ip_address(word))))
        except ValueError:
            continue
        return


# Top-level lines fabricgen reads; everything else is someone else's configuration.
_TOP: list[tuple[re.Pattern[str], Handler[_Config]]] = [
    (re.compile(r"qos profile (\S+)"), lambda c, m, n: c.profiles.__setitem__(m.group(1), _read_profile(n))),
    (re.compile(r"interface (\S+)"), lambda c, m, n: _add_interface(c, m.group(1), n)),  # as _canonical_line writes
    (re.compile(r"qos map dscp (.+?) to traffic-class (\S+)(?: .*)?"), _add_dscp_map),
    (re.compile(r"qos map traffic-class (.+?) to (?:uc-)?tx-queue (\S+)"), _add_tc_map),
    (re.compile(r"priority-flow-control pause watchdog (?:default )?(timeout|recovery-time|polling-interval|action) "
                r"(\S+)"), _add_watchdog),
    (re.compile(r"(?:ip|ipv6) route (?:vrf (\S+) )?(0\.0\.0\.0/0|::/0) (.+)"), _add_route),
]


def _parse(files: Mapping[str, str]) -> _Config:
    if FILE not in files:
        raise ConfigReadError(FILE, 0, "file missing")
    root = _tree(files[FILE])
    refuse_stray_lines(root, _BLOCK_ONLY, "`interface`, `qos profile`")
    return dispatch(root, _TOP, _Config())


# Lines of an interface or QoS-profile block, which mean nothing at the top level (EOS's global PFC commands are
# `priority-flow-control all off` and `priority-flow-control pause watchdog ...`, its global switchport ones
# `switchport default mode ...` and `switchport port-security ...`: not matched).
_BLOCK_ONLY = re.compile(
    r"(?:no |default )?(?:(?:mtu|speed|shutdown|shut|description|error-correction|service-profile|uc-tx-queue"
    r"|tx-queue|channel-group|qos trust|switchport (?:mode|access|trunk)"
    r"|priority-flow-control (?:on|off|mode|priority))(?: |$)|switchport$)")


# --- ports ----------------------------------------------------------------------------------------------

def _port_pfc(config: _Config, intf: _Interface) -> list[int]:
    """The interface's own PFC lines override the applied profile's, as on EOS."""
    profile = config.profiles.get(intf.profile) if intf.profile else None
    base = profile.pfc if profile else _Pfc()
    on = intf.pfc.on if intf.pfc.on is not None else bool(base.on)
    priorities = (base.no_drop - intf.pfc.drop) | intf.pfc.no_drop
    return sorted(priorities) if on else []


def _read_port(config: _Config, port: PortModel, intf: _Interface) -> PortModel:
    fields = config.port_fields.get(intf.key)
    if fields is None:
        fields = config.port_fields[intf.key] = _port_fields(config, intf)
    if port.role not in DATA_ROLES:
        # fabricgen renders speed and FEC on data ports only: elsewhere a config without them keeps the skeleton's
        # (the speed a management port negotiates is not in the config).
        fields = {key: value for key, value in fields.items() if value is not None or key not in _DATA_PORT_ONLY}
    return updated(port, {**fields, "description": intf.description})


_DATA_PORT_ONLY = frozenset({"speed_mbps", "fec"})


def _port_fields(config: _Config, intf: _Interface) -> dict[str, Any]:
    """What the interface block sets on its port, its description aside: a function of its lines alone (the
    profile it names and the PFC it states are read from them), in one read of one config."""
    node = intf.node
    shutdown = node.last_of(r"(no )?shutdown", r"(no )?shut")
    vlan = node.last_int(r"switchport access vlan (\S+)", 1, 4094)
    switchport = node.last(r"(no )?switchport")
    routed = switchport is not None and switchport.group(1) is not None  # `no switchport`: no VLANs at all
    trunk = not routed and _switchport_mode(node) == "trunk"  # a trunk's untagged VLAN is its native one
    pfc = _port_pfc(config, intf)
    return {
        "admin_up": shutdown is None or shutdown.group(1) is not None,
        "mtu": _effective_mtu(config, node, routed),
        "speed_mbps": _speed_mbps(node), "fec": _fec(node),
        "access_vlan": vlan if not routed and not trunk else None,
        "tagged_vlans": _tagged_vlans(node) if trunk else None,
        "pfc_priorities": pfc, "lossless": bool(pfc),
        "mode": "routed" if routed else "switched",
    }


def _switchport_mode(node: Node) -> str:
    mode = node.last(r"switchport mode (\S+)")
    return mode.group(1) if mode else "access"  # EOS: a switchport is an access port until told otherwise


def _speed_mbps(node: Node) -> int | None:
    """The fixed speed of `speed` (``400g``, ``400g-8``, ``2p5g``, ``100full``, the older ``forced 100gfull``);
    None without one or for ``auto`` (negotiated: the config does not say which)."""
    line = node.last(r"speed (?:forced )?(\S+)(?: .*)?")
    if line is None:
        return None
    gigabits = re.fullmatch(r"(\d+)(?:p(\d+))?g(?:full)?(?:-\d+)?", line.group(1))
    if gigabits:
        fraction = gigabits.group(2) or ""
        return int(gigabits.group(1)) * 1000 + (int(fraction.ljust(3, "0")) if fraction else 0)
    megabits = re.fullmatch(r"(\d+)full", line.group(1))
    return int(megabits.group(1)) if megabits else None


def _fec(node: Node) -> str | None:
    """The FEC the port is held to, the interface's error-correction lines taken in order: ``no error-correction
    encoding`` turns FEC off ("none"); one encoding enabled is that encoding; none or both enabled leave the
    choice to EOS (None: the default for the transceiver and speed, or negotiation between the two)."""
    enabled: set[str] = set()
    off = False
    for match, _ in node.each(r"(no )?error-correction encoding(?: (reed-solomon|fire-code))?"):
        negated, word = match.group(1) is not None, match.group(2)
        if word is None:
            enabled, off = set(), negated
        elif negated:
            enabled.discard(FEC_WORDS[word])
        else:
            enabled.add(FEC_WORDS[word])
            off = False
    if off:
        return "none"
    return next(iter(enabled)) if len(enabled) == 1 else None


def _tagged_vlans(node: Node) -> list[int] | None:
    """The VLANs a trunk carries tagged: its allowed VLANs (all without `switchport trunk allowed vlan`) but the
    native one (VLAN 1 unless `switchport trunk native vlan N`; `native vlan tag` tags it too). None: none."""
    allowed = set(VLAN_IDS)
    for match, child in node.each(r"switchport trunk allowed vlan (.+)"):  # the last line is the list
        allowed = _vlan_set(match.group(1), child)
    native = node.last(r"switchport trunk native vlan (\S+)")
    if native is None or native.group(1) != "tag":
        allowed.discard(node.last_int(r"switchport trunk native vlan (\d+)", 1, 4094) or 1)
    return sorted(allowed) or None


def _vlan_set(text: str, node: Node) -> set[int]:
    """``1-10,20`` / ``all`` / ``none`` as EOS prints an allowed-VLAN list."""
    if text == "all":
        return set(VLAN_IDS)
    if text == "none":
        return set()
    found: set[int] = set()
    for item in text.replace(" ", "").split(","):
        first, _, last = item.partition("-")
        low = number(first, node, 1, 4094)
        found.update(range(low, number(last, node, low, 4094) + 1) if last else [low])
    return found


def _effective_mtu(config: _Config, node: Node, routed: bool) -> int:
    """The MTU that applies in the port's mode: `mtu` (L3) on a routed port, `l2 mtu` on a switchport. Both are
    read, so a bad value on either line is reported whatever the mode."""
    mtu = node.last_int(r"mtu (\S+)", 68, 65535)
    l2_mtu = node.last_int(r"l2 mtu (\S+)", 64, 65535)  # EOS CLI: `l2 mtu <64-65535>`
    if routed:
        return mtu or config.default_mtu
    return l2_mtu or DEFAULT_L2_MTU


def _absent_port(port: PortModel) -> PortModel:
    """A skeleton port the config has no `interface` block for: EOS lists every physical interface, so the
    device does not have it. Down, and with none of the skeleton's PFC: a port that does not exist pauses
    nothing, and reading it as lossless would report its watchdog and maps as if it ran the intent."""
    return updated(port, {"admin_up": False, "pfc_priorities": [], "lossless": False})


def _read_ports(config: _Config, skeleton: DeviceModel) -> list[PortModel]:
    ports: list[PortModel] = []
    for port in skeleton.ports:
        intf = config.interfaces.get(port.name)
        if port.role == "mgmt":
            ports.append(port)  # the Management interface is read into mgmt
        elif intf is None:
            ports.append(_absent_port(port))
        else:
            ports.append(_read_port(config, port, intf))
    known = {p.name for p in skeleton.ports}
    # Only the names to add are sorted: not a natural_key for each of the switch's own ports (issue 26 item 7).
    for name in sorted((n for n in config.interfaces if n not in known and n.startswith("Ethernet")), key=natural_key):
        blank = PortModel(name=name, role="unused", admin_up=False, mtu=config.default_mtu)
        ports.append(_read_port(config, blank, config.interfaces[name]))
    return ports


# --- qos ------------------------------------------------------------------------------------------------

def _main_profile(config: _Config, ports: list[PortModel]) -> _Profile | None:
    applied = [config.interfaces[p.name].profile for p in ports
               if p.role in DATA_ROLES and p.name in config.interfaces]
    counts = Counter(name for name in applied if name in config.profiles)
    if counts:
        return config.profiles[min(counts, key=lambda name: (-counts[name], name))]
    return config.profiles.get(PROFILE)


def _read_queue(node: Node, index: int, tc: int, class_name: str, lossless: bool) -> QueueModel:
    dwrr = node.last(r"(no )?priority(?: strict)?")  # EOS tx-queues are strict until `no priority`
    weight = node.last_int(r"bandwidth percent (\S+)", 0, 100)
    scheduler: Literal["strict", "dwrr"] = "dwrr" if dwrr is not None and dwrr.group(1) else "strict"
    return QueueModel(index=index, traffic_class=tc, class_name=class_name, lossless=lossless, scheduler=scheduler,
                      weight=weight if scheduler == "dwrr" else None, **clitext.ecn_fields(_read_ecn(node)))


def _read_ecn(node: Node) -> EcnThresholds | EcnUnconverted | None:
    pattern = (r"random-detect ecn minimum-threshold (\S+) (\S+) maximum-threshold (\S+) (\S+)"
               r"(?: max-mark-probability (\S+))?(?: .*)?")
    for match, child in node.each(pattern):
        low, low_unit, high, high_unit, probability = match.groups()
        # Without max-mark-probability EOS marks every packet at the maximum threshold.
        percent = number(probability, child, 1, 100) if probability else 100
        ecn = clitext.ecn_thresholds(low, low_unit, high, high_unit, percent, child, OTHER_ECN_UNITS)
        if ecn is not None:
            return ecn
    return None


def _read_queues(config: _Config, profile: _Profile | None, skeleton: QosModel,
                 lossless: list[int]) -> list[QueueModel]:
    """The profile's queues (the same list, shared, for every port that applies it: models are not mutated)."""
    if profile is None:
        return []
    key = (id(profile), tuple(lossless))  # the profile lives as long as config does; skeleton is one per read
    found = config.queues.get(key)
    if found is None:
        found = config.queues[key] = _profile_queues(config, profile, skeleton, lossless)
    return found


def _profile_queues(config: _Config, profile: _Profile, skeleton: QosModel, lossless: list[int]) -> list[QueueModel]:
    names = {q.index: q.class_name for q in skeleton.queues}
    queues = []
    for index in sorted(profile.queues):
        tcs = sorted(tc for tc, queue in config.tc_to_queue.items() if queue == index)
        tc = tcs[0] if tcs else index
        queues.append(_read_queue(profile.queues[index], index, tc, names.get(index, f"queue{index}"),
                                  tc in lossless))
    return queues


def _read_watchdog(config: _Config, profile: _Profile | None, skeleton: WatchdogModel | None) -> WatchdogModel | None:
    """The watchdog a profile arms (one object per profile: its ports compare it by identity first)."""
    key = id(profile) if profile is not None else None
    if key not in config.watchdogs:
        config.watchdogs[key] = _profile_watchdog(config, profile, skeleton)
    return config.watchdogs[key]


def _profile_watchdog(config: _Config, profile: _Profile | None,
                      skeleton: WatchdogModel | None) -> WatchdogModel | None:
    if not config.watchdog or (profile is not None and profile.lossless and not profile.watchdog):
        return None  # no timers, or the profile has lossless priorities and does not arm the watchdog
    base = skeleton or WATCHDOG_FALLBACK
    timers = config.watchdog
    return WatchdogModel(detection_ms=timers.get("timeout", base.detection_ms),
                         restoration_ms=timers.get("recovery-time", base.restoration_ms),
                         poll_ms=timers.get("polling-interval", base.poll_ms),
                         action=timers.get("action", base.action))


def _read_qos(config: _Config, skeleton: QosModel, ports: list[PortModel]) -> QosModel:
    profile = _main_profile(config, ports)
    if profile is not None:
        lossless = profile.lossless
    else:  # PFC configured on interfaces only
        lossless = sorted({prio for port in ports if port.role in DATA_ROLES for prio in port.pfc_priorities})
    return updated(skeleton, {
        # The profile's trust, else EOS's for the routed data ports the profile is made for.
        "trust": profile.trust if profile is not None and profile.trust else DEFAULT_TRUST[True],
        "dscp_to_tc": DEFAULT_DSCP_TO_TC | config.dscp_to_tc,  # keys 0-63 in order: the default's
        # Made explicit so that a config read back as rendered is its resolved model (see the module docstring).
        "tc_to_queue": _OWN_QUEUES | dict(sorted(config.tc_to_queue.items())),
        "lossless_priorities": lossless,
        "queues": _read_queues(config, profile, skeleton, lossless),
        "watchdog": _read_watchdog(config, profile, skeleton.watchdog),
    })


# --- per-port QoS --------------------------------------------------------------------------------------

def _port_qos(config: _Config, intf: _Interface, routed: bool, qos: QosModel, skeleton: QosModel) -> QosModel | None:
    """The QoS in effect on one data port: ``qos`` (the device's) with the trust, queues and watchdog of the port's
    own profile and lines; None where they are the device's. A port without trust or tx-queue lines of its own runs
    what its profile and mode give: worked out once per (profile, mode)."""
    own_lines = config.own_qos_lines.get(intf.key)
    if own_lines is None:  # a function of the block's top-level lines, its key (a description matches neither)
        own_lines = config.own_qos_lines[intf.key] = intf.node.last(r"(no )?qos trust(?: (dscp|cos))?") is not None \
            or bool(_tx_queues(intf.node))
    if own_lines:
        return _port_qos_of(config, intf, routed, qos, skeleton)
    key = (intf.profile, routed)
    if key not in config.port_qos:
        config.port_qos[key] = _port_qos_of(config, intf, routed, qos, skeleton)
    return config.port_qos[key]


def _port_qos_of(config: _Config, intf: _Interface, routed: bool, qos: QosModel,
                 skeleton: QosModel) -> QosModel | None:
    profile = config.profiles.get(intf.profile) if intf.profile else None
    trust = _read_trust(intf.node) or (profile.trust if profile else None) or DEFAULT_TRUST[routed]
    queues = _with_interface_ecn(_read_queues(config, profile, skeleton, qos.lossless_priorities), intf.node,
                                 skeleton, qos.lossless_priorities)
    watchdog = _read_watchdog(config, profile, skeleton.watchdog) if profile else None
    if trust == qos.trust and queues == qos.queues and watchdog == qos.watchdog:
        return None
    return updated(qos, {"trust": trust, "queues": queues, "watchdog": watchdog})


def _with_interface_ecn(queues: list[QueueModel], node: Node, skeleton: QosModel,
                        lossless: list[int]) -> list[QueueModel]:
    """``queues`` with the ECN thresholds of the interface's own ``tx-queue N`` blocks, which replace the
    profile's on that queue (a queue the profile leaves alone is EOS's default: strict, with that ECN)."""
    own = _tx_queues(node)
    if not own:
        return queues
    by_index = {q.index: q for q in queues}
    names = {q.index: q.class_name for q in skeleton.queues}
    for index, child in own.items():
        ecn = _read_ecn(child)
        if ecn is None:
            continue
        queue = by_index.get(index) or QueueModel(index=index, traffic_class=index, class_name=names.get(
            index, f"queue{index}"), lossless=index in lossless, scheduler="strict")
        by_index[index] = updated(queue, clitext.ecn_fields(ecn))
    return [by_index[index] for index in sorted(by_index)]


def _with_port_qos(config: _Config, ports: list[PortModel], qos: QosModel, skeleton: QosModel) -> list[PortModel]:
    read = []
    for port in ports:
        intf = config.interfaces.get(port.name)
        if intf is not None and port.role in DATA_ROLES:
            port = updated(port, {"qos": _port_qos(config, intf, port.mode == "routed", qos, skeleton)})
        read.append(port)
    return read


# --- management -----------------------------------------------------------------------------------------

def _read_mgmt(config: _Config, skeleton: MgmtModel | None) -> MgmtModel | None:
    management = sorted((n for n in config.interfaces if n.startswith("Management")), key=natural_key)
    if skeleton is None or not management:
        return None
    name = skeleton.interface if skeleton.interface in management else management[0]
    node = config.interfaces[name].node
    vrf_line = node.last(r"vrf (?:forwarding )?(\S+)")
    vrf = vrf_line.group(1) if vrf_line else "default"
    address = _mgmt_address(node, skeleton.address)
    v6 = address is not None and ":" in address
    hops = [hop for route_vrf, hop in config.routes if (route_vrf or "default") == vrf]
    gateway = next((hop for hop in hops if (":" in hop) == v6), hops[0] if hops else None)
    return updated(skeleton, {"interface": name, "vrf": vrf, "address": address, "gateway": gateway})


def _mgmt_address(node: Node, wanted: str | None) -> str | None:
    """The interface's primary address of the skeleton's family if it has both (``dhcp`` reads as None)."""
    found: list[str] = []
    for match, _ in node.each(r"ipv?6? address (\S+)"):
        try:
            found.append(str(ip_interface(match.group(1))))
        except ValueError:
            continue
    want_v6 = wanted is not None and ":" in wanted
    return next((a for a in found if (":" in a) == want_v6), found[0] if found else None)


# --- read -----------------------------------------------------------------------------------------------

def read(skeleton: DeviceModel, files: Mapping[str, str]) -> DeviceModel:
    """``skeleton`` with every owned field replaced by what eos.cfg says."""
    config = _parse(files)
    ports = _read_ports(config, skeleton)
    qos = _read_qos(config, skeleton.qos, ports) if skeleton.qos is not None else None
    if qos is not None and skeleton.qos is not None:
        ports = _with_port_qos(config, ports, qos, skeleton.qos)
    return updated(skeleton, {"ports": ports, "qos": qos, "mgmt": _read_mgmt(config, skeleton.mgmt)})
