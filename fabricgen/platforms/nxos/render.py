"""Cisco NX-OS (Nexus 9000): CLI text for the sections fabricgen owns, in NX-OS's 8-queue ("8q") system classes.

Sources: the syntax follows Microsoft's reference ToR QoS policy for Nexus
(``Azure/AzureLocal-Supportability:TSG/Networking/Top-Of-Rack-Switch/Reference-TOR-QOS-Policy-Configuration.md``,
a complete config run on NX-OS 10.3.x), with the RoCE class in place of its storage class: a ``type qos``
policy classifies DSCP into qos-groups on every data port, a ``type network-qos`` policy makes a qos-group
no-drop (``pause pfc-cos``) and sets its MTU system-wide, a ``type queuing`` policy schedules and ECN-marks the
egress queues, ``system qos`` attaches the last two, and data ports turn PFC on with
``priority-flow-control mode on``.

How the intent maps onto the 8q system classes (one rule, applied by the renderer and inverted by the reader):

* qos-group = the class's egress queue (``QueueModel.index``, i.e. ``tc_to_queue[priority]``; equal to the
  priority unless the intent sets ``queue``). In 8q mode qos-group n *is* ingress class ``c-8q-nq<n>`` and
  egress queue ``c-out-8q-q<n>`` (n = 0 is ``…-default``): NX-OS has no separate TC→queue map, so the TC
  itself is not visible on the box, only the qos-group it lands in.
* DSCP → qos-group: ``dscp_to_tc`` then ``tc_to_queue``. Each qos-group but one gets a ``match dscp``
  class-map; the qos-group with the most DSCPs (ties: the lowest) is ``class-default``, so the 64 code
  points are covered without listing the default class's 60-odd values.
* CoS: a lossless priority p whose class egresses on queue q becomes ``pause pfc-cos p`` in ``c-8q-nq<q>``:
  PFC frames for CoS p pause qos-group q and congestion of qos-group q sends PFC on CoS p. Routed RoCE is
  untagged, so no CoS is matched or rewritten; the priority only exists in PFC frames.
* ECN: ``random-detect … bytes`` — the thresholds in exact bytes, so the box marks at the intent's depth.
  (Earlier releases of fabricgen wrote whole kbytes rounded down: 5,000 B became 4 KB, 18 % early.) ``bytes`` is
  a threshold unit of NX-OS itself: Cisco's NX-OS device YANG model (``Cisco-NX-OS-device.yang``, published by
  Cisco for 10.3(10) in YangModels/yang ``vendor/cisco/nx/10.3-10``) has the QoS threshold unit type
  ``ipqos_ThreshUnit`` = ``none | packets | bytes | kbytes | mbytes`` (exactly the units ``random-detect``
  thresholds are written with) and the threshold value type ``ipqos_ThreshVal`` 0..52,428,800, so the intent's
  byte counts are said as they are and no rounding is needed. (Which DME attribute carries the type, and the QoS
  guide's own syntax line for ``random-detect``, were not readable here.)
* Port mode: fabricgen owns the mode of data ports, because it decides which MTU applies. Data ports are routed
  (``no switchport``, the RoCE leaf/spine norm) and carry ``mtu N``; OOB access ports are ``switchport``.
  Cisco's "Configure and Verify Maximum Transmission Unit on Nexus Platforms" (doc 118994): a Layer 3 port
  takes its MTU per port (``no switchport`` + ``mtu 9216``); a Nexus 9000 Layer 2 port takes a per-port ``mtu``
  too, but only 1500 or the ``system jumbomtu`` (9216 by default, the value CLASS_MTU assumes) — "ERROR: MTU can
  only be default or system jumbo MTU". ``check`` refuses a switched data port at any other MTU.
* Scheduling: strict queues get ``priority level N`` (level 1 = the highest strict queue index, served
  first, as SONiC/Spectrum order strict queues), DWRR queues ``bandwidth remaining percent W``; the queues the
  intent does not use keep ``bandwidth remaining percent 0`` as in the reference template. Several strict
  levels: the NX-OS device YANG model types ``priority level`` as ``ipqos_PriorityLevel`` 1..8.
* Speed and FEC (data ports, the links RoCE runs over; other ports keep the transceiver's defaults): ``speed N``
  with N in Mb/s (``speed 400000``; NX-OS's own CLI speaks Mb/s, e.g. ``speed 1000``/``speed 10000`` in Cisco's
  NX-OS Ansible collection; the device YANG model's ``l1`` speed enumeration runs 100M … 400G, 800G), and
  ``fec <mode>``. The FEC modes are the device YANG model's ``l1_FECMode`` (``auto | fc-fec | rs-fec | fec-off |
  rs-ieee | rs-cons16 | kp-fec``, kp-fec being "KP-Fec CL119") with the CLI spelling the NX-OS help prints
  (Cisco bug CSCvy03375 quotes ``fec ?`` on a Nexus 9500: ``auto``, ``fc-fec`` "CL74(25/50G)", ``off``
  "Turn FEC off", ``rs-fec`` "CL91(100G) or Consortium 1.5 (25/50G)"). Which RS-FEC a port runs follows its lane
  signalling: RS(528,514) (``rs-fec``, IEEE 802.3 Clause 91) on 25G-NRZ lanes (10/25/50/100G), RS(544,514)
  (``kp-fec``, Clauses 119/134, the "KP4" FEC) on PAM4 lanes of 50G and more, i.e. 200G and 400G ports, or any
  port whose inventory lanes make ≥ 50G each. ``fc`` is ``fec fc-fec`` (Clause 74), ``none`` is ``fec off``.

Target: NX-OS 10.3(x), standalone (not ACI), Nexus 9000 Cloud Scale in the default 8q queuing mode.
"""

from __future__ import annotations

import re
from functools import lru_cache
from ipaddress import ip_address
from typing import Any, NamedTuple

from fabricgen import __version__
from fabricgen.models.device import DeviceModel, PortModel, QosModel, QueueModel, WatchdogModel
from fabricgen.platforms.common.memo import by_identity
from fabricgen.platforms.common.templating import Templates
from fabricgen.platforms.nxos.capability import CAPABILITY, FILE, NETWORK_POLICY, QOS_POLICY, QUEUING_POLICY

QUEUES = 8  # 8q mode: qos-groups 0..7
DATA_ROLES = ("host", "fabric")
# The MTUs a Nexus 9000 Layer 2 port accepts: the default and the `system jumbomtu` (default 9216; Cisco doc
# 118994). fabricgen does not render `system jumbomtu`, so it takes the default.
L2_PORT_MTUS = (1500, 9216)
# network-qos class MTU. The Azure Local reference sets 9216 on every class it lists ("setting the MTU to
# 9216 also initiates buffer carving for the ingress queue"); the port MTU is then enforced by the interface.
CLASS_MTU = 9216

def natural_key(text: str) -> list[Any]:
    return [int(part) if part.isdigit() else part.lower() for part in re.split(r"(\d+)", text)]


def nq_class(group: int) -> str:
    return "c-8q-nq-default" if group == 0 else f"c-8q-nq{group}"


def out_class(group: int) -> str:
    return "c-out-8q-q-default" if group == 0 else f"c-out-8q-q{group}"


def qos_group(qos: QosModel, tc: int) -> int:
    """The qos-group (= egress queue) of a traffic class."""
    return qos.tc_to_queue.get(tc, tc)


def dscp_groups(qos: QosModel) -> dict[int, int]:
    """DSCP → qos-group, as the type-qos policy expresses it."""
    return {dscp: qos_group(qos, tc) for dscp, tc in sorted(qos.dscp_to_tc.items())}


def pfc_groups(qos: QosModel) -> dict[int, int]:
    """Lossless priority (pfc-cos) → the qos-group it pauses (``pfc_priority_to_queue``, = ``tc_to_queue``)."""
    return {prio: qos.pfc_priority_to_queue.get(prio, qos_group(qos, prio)) for prio in sorted(qos.lossless_priorities)}


def ranges(values: list[int]) -> str:
    """[16, 24, 25, 26, 40] → "16,24-26,40" (NX-OS match dscp syntax)."""
    runs: list[list[int]] = []
    for value in sorted(values):
        if runs and value == runs[-1][-1] + 1:
            runs[-1].append(value)
        else:
            runs.append([value])
    return ",".join(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]) for run in runs)


def watchdog_multipliers(wd: WatchdogModel) -> tuple[int, int]:
    """(shutdown-multiplier, restore-multiplier) of the poll interval."""
    return wd.detection_ms // wd.poll_ms, wd.restoration_ms // wd.poll_ms


# --- what NX-OS cannot say (resolve refuses the rest through the capability record) -----------------------

def check(device: DeviceModel) -> None:
    """Refuse a model this renderer could only express by changing it. Resolve already enforces the capability
    record; these are constraints the record has no field for yet (proposed: a capability flag
    ``watchdog_timers_in_polls`` that resolve checks, so the intent is refused with its location)."""
    qos = device.qos
    if qos is not None and qos.watchdog is not None:
        _check_watchdog(qos.watchdog)
    lossless = sorted(qos.lossless_priorities) if qos else []
    for port in device.ports:
        if port.pfc_priorities and sorted(port.pfc_priorities) != lossless:
            raise ValueError(f"platform nxos pauses the system no-drop classes on every PFC port: {port.name} "
                             f"cannot have priorities {port.pfc_priorities} of {lossless}")
        if port.role in DATA_ROLES and port.mode == "switched" and port.mtu not in L2_PORT_MTUS:
            raise ValueError(f"platform nxos takes only MTU {' or '.join(map(str, L2_PORT_MTUS))} on a Layer 2 "
                             f"port: switched data port {port.name} cannot have MTU {port.mtu} (route it)")


def _check_watchdog(wd: WatchdogModel) -> None:
    if wd.detection_ms % wd.poll_ms or wd.restoration_ms % wd.poll_ms:
        raise ValueError(f"platform nxos sets PFC watchdog detection and restoration as multiples of the "
                         f"poll interval: {wd.detection_ms}/{wd.restoration_ms} ms are not multiples of "
                         f"{wd.poll_ms} ms")
    if wd.action not in CAPABILITY.watchdog_actions:
        raise ValueError(f"platform nxos has no PFC watchdog action {wd.action!r}")


# --- context ----------------------------------------------------------------------------------------------
# Template values are NamedTuples, not dicts: Jinja reads ``a.b`` with getattr first, which fails on a dict
# (an exception per value) before it tries ``a["b"]``. Interfaces, the bulk of a switch, are plain tuples the
# template unpacks in its loop. The QoS part is the same on every switch of a fabric: built once (by_identity).

class QosClass(NamedTuple):
    name: str
    dscp: str
    group: int


class QueuingClass(NamedTuple):
    name: str
    lines: tuple[str, ...]


class NetworkClass(NamedTuple):
    name: str
    pause: str | None
    mtu: int


class QosContext(NamedTuple):
    policy: str
    network_policy: str
    queuing_policy: str
    classes: tuple[QosClass, ...]
    default_group: int
    network: tuple[NetworkClass, ...]
    queuing: tuple[QueuingClass, ...]


class Watchdog(NamedTuple):
    interval: int
    shutdown: int
    restore: int


class Vlan(NamedTuple):
    id: int
    name: str


class Mgmt(NamedTuple):
    vrf: str
    interface: str
    description: str
    address: str | None
    gateway: str | None
    mtu: int
    keyword: str
    default: str


# (name, description, shutdown, switchport, access_vlan, pfc, watchdog, mtu, speed, fec, service_policy):
# templates/nxos's order; switchport is the mode line, "switchport" / "no switchport", or None to leave the port's
# mode alone; speed and fec are the arguments of `speed` and `fec`.
Interface = tuple[str, str | None, bool, str | None, int | None, str | None, bool, int | None, int | None,
                  str | None, str | None]
_SWITCHPORT = {"routed": "no switchport", "switched": "switchport", None: None}

# PortModel.fec → the `fec` argument; "rs" depends on the lanes' signalling (fec_keyword).
FEC_KEYWORDS = {"fc": "fc-fec", "none": "off"}
# A lane this fast or faster is PAM4, whose RS-FEC is RS(544,514) (`kp-fec`, IEEE 802.3 Clauses 119/134); slower
# lanes are 25G NRZ with RS(528,514) (`rs-fec`, Clause 91).
PAM4_LANE_MBPS = 50_000
# A port whose lanes the inventory does not give is taken with its speed's commonest lanes: NRZ up to 100G
# (100GBASE-*4: 4 × 25G), PAM4 above (200G = 4 × 50G, 400G = 8 × 50G). The same reading as the physical lint rules.
NRZ_PORT_UPTO_MBPS = 100_000


def pam4_lanes(speed_mbps: int | None, lanes: str | None) -> bool:
    """Whether the port signals PAM4 (see PAM4_LANE_MBPS); a port of unknown speed is not taken as PAM4."""
    if speed_mbps is None:
        return False
    if lanes:
        return speed_mbps // (lanes.count(",") + 1) >= PAM4_LANE_MBPS
    return speed_mbps > NRZ_PORT_UPTO_MBPS


def fec_keyword(fec: str, speed_mbps: int | None, lanes: str | None) -> str:
    """The `fec` argument for PortModel.fec: RS-FEC is `kp-fec` on PAM4 lanes, `rs-fec` on NRZ ones."""
    if fec == "rs":
        return "kp-fec" if pam4_lanes(speed_mbps, lanes) else "rs-fec"
    return FEC_KEYWORDS[fec]


def _class_map_names(queues: list[QueueModel]) -> dict[int, str]:
    """qos-group → class-map name, FG_<CLASS> (suffixed with the group when two names fold to one)."""
    upper = [q.class_name.upper() for q in queues]
    return {q.index: f"FG_{q.class_name.upper()}" + (f"_Q{q.index}" if upper.count(q.class_name.upper()) > 1 else "")
            for q in queues}


def _classification(qos: QosModel) -> tuple[tuple[QosClass, ...], int]:
    """The class-maps of every qos-group but the default one, and the default qos-group."""
    by_group: dict[int, list[int]] = {}
    for dscp, group in dscp_groups(qos).items():
        by_group.setdefault(group, []).append(dscp)
    default = min(by_group, key=lambda g: (-len(by_group[g]), g)) if by_group else 0
    names = _class_map_names(qos.queues)
    classes = tuple(QosClass(names.get(group, f"FG_QOS_GROUP_{group}"), ranges(dscps), group)
                    for group, dscps in sorted(by_group.items()) if group != default)
    return classes, default


def _queue_lines(queue: QueueModel | None, level: int | None) -> tuple[str, ...]:
    if queue is None:
        return ("bandwidth remaining percent 0",)
    strict = queue.scheduler == "strict"
    lines = [f"priority level {level}" if strict else f"bandwidth remaining percent {queue.weight}"]
    if queue.ecn is not None:
        ecn = queue.ecn
        lines.append(f"random-detect minimum-threshold {ecn.min_bytes} bytes maximum-threshold "
                     f"{ecn.max_bytes} bytes drop-probability {ecn.probability_pct} weight 0 ecn")
    return tuple(lines)


def _queuing(qos: QosModel) -> tuple[QueuingClass, ...]:
    by_index = {q.index: q for q in qos.queues}
    strict = sorted((q.index for q in qos.queues if q.scheduler == "strict"), reverse=True)
    order = [*range(QUEUES - 1, 0, -1), 0]  # q7 … q1, q-default: NX-OS's own policy order
    return tuple(QueuingClass(out_class(group), _queue_lines(by_index.get(group),
                                                            strict.index(group) + 1 if group in strict else None))
                 for group in order)


def _network(qos: QosModel) -> tuple[NetworkClass, ...]:
    pause: dict[int, list[int]] = {}
    for prio, group in pfc_groups(qos).items():
        pause.setdefault(group, []).append(prio)
    groups = [*sorted({q.index for q in qos.queues} - {0}, reverse=True), 0]  # nq-default always: the catch-all
    return tuple(NetworkClass(nq_class(g), ",".join(map(str, pause[g])) if g in pause else None, CLASS_MTU)
                 for g in groups)


@by_identity  # one QosModel per fabric: formatted once, not on every switch
def _qos(qos: QosModel) -> QosContext:
    classes, default = _classification(qos)
    return QosContext(policy=QOS_POLICY, network_policy=NETWORK_POLICY, queuing_policy=QUEUING_POLICY,
                      classes=classes, default_group=default, network=_network(qos), queuing=_queuing(qos))


def _interface(port: PortModel, qos: QosModel | None) -> Interface:
    data_port = port.role in DATA_ROLES
    with_qos = data_port and qos is not None
    # Speed and FEC are owned on data ports, the links the RoCE recipe runs over; other ports keep what the
    # transceiver negotiates. A port whose inventory states neither gets neither line (NX-OS's `auto`).
    return (
        port.name,
        port.description,
        not port.admin_up,
        _SWITCHPORT[port.mode],
        port.access_vlan,
        ("on" if port.pfc_priorities else "off") if with_qos else None,
        with_qos and bool(port.pfc_priorities) and qos is not None and qos.watchdog is not None,
        port.mtu if data_port else None,
        port.speed_mbps if data_port else None,
        fec_keyword(port.fec, port.speed_mbps, port.lanes) if data_port and port.fec else None,
        QOS_POLICY if with_qos else None,
    )


@lru_cache(maxsize=256)  # switches of one model list the same ports: sorted once per port layout
def _natural_order(names: tuple[str, ...]) -> tuple[int, ...]:
    """The positions of ``names`` in natural order."""
    return tuple(sorted(range(len(names)), key=lambda i: natural_key(names[i])))


def _ethernet(device: DeviceModel) -> list[PortModel]:
    """The switch's ports but management, in natural order (Ethernet1/2 before Ethernet1/10)."""
    ports = [p for p in device.ports if p.role != "mgmt"]
    return [ports[i] for i in _natural_order(tuple(p.name for p in ports))]


def _mgmt(device: DeviceModel) -> Mgmt | None:
    mgmt = device.mgmt
    if mgmt is None:
        return None
    v6 = mgmt.address is not None and ip_address(mgmt.address.split("/")[0]).version == 6
    return Mgmt(vrf=mgmt.vrf, interface=mgmt.interface, description="OOB_MANAGEMENT", address=mgmt.address,
                gateway=mgmt.gateway, mtu=mgmt.mtu, keyword="ipv6" if v6 else "ip",
                default="::/0" if v6 else "0.0.0.0/0")


def build_context(device: DeviceModel) -> dict[str, Any]:
    check(device)
    qos = device.qos
    wd = qos.watchdog if qos else None
    shutdown, restore = watchdog_multipliers(wd) if wd else (0, 0)
    mgmt = device.mgmt
    return {
        "version": __version__,
        "device": device,
        "qos": _qos(qos) if qos else None,
        "watchdog": Watchdog(wd.poll_ms, shutdown, restore) if wd else None,
        "vlans": [Vlan(mgmt.vlan, "OOB_MGMT")] if mgmt and device.role == "oob" else [],
        "interfaces": [_interface(p, qos) for p in _ethernet(device)],
        "mgmt": _mgmt(device),
    }


def render(device: DeviceModel, templates: Templates) -> dict[str, str]:
    return {FILE: templates.render("nxos/nxos.cfg.j2", **build_context(device))}
