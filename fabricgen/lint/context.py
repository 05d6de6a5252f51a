"""Everything rules look at, indexed once so each rule is one pass over devices or links (linear in links).

Built eagerly, in two passes over the ports. At 32,768 GPUs (146k ports, 71k links) the cost of a rule is the
cost of touching every port, and reading a field of a pydantic model (an instance ``__dict__`` somewhere in a
heap of a million objects) costs several times a slot read. So each port's fields that rules read are copied
once into a slotted :class:`End`, with the facts derived from them (its NIC, PFC set, MTU, the End its
``peer`` names), each NIC's into a :class:`Nic`, and the 42 rules then read those.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cached_property, partial

from fabricgen.lint.evidence import Evidence
from fabricgen.models.device import DeviceModel, Fabric, HeadroomModel, NicModel, PolicyModel, PortModel
from fabricgen.platforms import Capability, get_platform

DATA_ROLES = frozenset({"host", "fabric", "rdma"})


class End:
    """One port of one device: the port's fields rules read, copied into slots, and facts derived once.

    ``port`` stays available for what only findings need. ``index`` is the End's position in
    :attr:`LintContext.ends` (-1 for a port whose device:port name repeats an earlier one, see _Index); the End
    a port's ``peer`` names is ``LintContext.peers[index]``, kept outside the End because two ends naming each
    other would otherwise make a reference cycle per cable."""

    __slots__ = ("access_vlan", "cable_assumed", "cable_m", "device", "fec", "headroom", "index", "lanes",
                 "lossless", "media", "mtu", "name", "nic", "peer_ref", "pfc", "pfc_priorities", "port",
                 "port_mtu", "qos", "role", "speed_mbps")

    def __init__(self, device: DeviceModel, port: PortModel, nic: NicModel | None, pfc_sets: _PfcSets,
                 index: int) -> None:
        self.device = device
        self.port = port
        self.index = index
        self.name = f"{device.name}:{port.name}"
        self.role = port.role
        self.peer_ref: str | None = port.peer  # `device:port` as the inventory wrote it
        self.speed_mbps = port.speed_mbps
        self.lanes = port.lanes
        self.fec = port.fec
        self.port_mtu = port.mtu
        self.cable_m = port.cable_m
        self.cable_assumed = port.cable_assumed
        self.media = port.media
        self.lossless = port.lossless
        self.headroom: HeadroomModel | None = port.headroom
        self.access_vlan = port.access_vlan
        # The QoS in effect on this port: its own where its config binds other maps, trust, queues or watchdog
        # (a reader's port.qos), else the device's.
        self.qos = port.qos if port.qos is not None else device.qos
        # The port's own pfc_priorities as a shared tuple (same items, order and length as the list) and set.
        self.pfc_priorities, port_pfc = pfc_sets.of_priorities(port.pfc_priorities)
        self.nic = nic  # the host's RDMA NIC on this port; None on switches and on a host's other ports
        # Priorities this end pauses on: a NIC's PFC vector, or a switch port's PFC priorities.
        self.pfc = pfc_sets.of_nic(nic) if nic is not None else port_pfc
        self.mtu = nic.mtu if nic is not None else port.mtu


class Nic:
    """One RDMA NIC of a host: the NicModel fields rules read, copied into slots once (as End does for ports).
    The TSA and ETS-share vectors become tuples, so rules can key on them."""

    __slots__ = ("cnp_dscp", "cnp_priority", "dcbx", "dcqcn_enabled", "dcqcn_priorities", "dscp2prio", "interface",
                 "mtu", "peer", "pfc", "prio_tc", "roce_mode", "roce_tos", "tcbw", "trust", "tsa")

    def __init__(self, nic: NicModel) -> None:
        self.interface = nic.interface
        self.peer = nic.peer
        self.mtu = nic.mtu
        self.trust = nic.trust
        self.pfc = nic.pfc
        self.tsa = tuple(nic.tsa)
        self.prio_tc = tuple(nic.prio_tc)
        self.tcbw = tuple(nic.tcbw)
        self.dscp2prio = nic.dscp2prio
        self.dcqcn_priorities = nic.dcqcn_priorities
        self.dcqcn_enabled = nic.dcqcn_enabled
        self.cnp_dscp = nic.cnp_dscp
        self.cnp_priority = nic.cnp_priority
        self.roce_tos = nic.roce_tos
        self.roce_mode = nic.roce_mode
        self.dcbx = nic.dcbx


# One cable: (a, b), `a` being the end listed first in device/port order.
Link = tuple[End, End]
# A device and its ports' Ends, in port order.
DevicePorts = tuple[DeviceModel, list[End]]


class _PfcSets:
    """PFC priorities interned by their values: a fabric has a handful of distinct ones over 100k+ ports, so
    sharing one object per distinct value saves both the work and the allocations, and keeps them in cache."""

    def __init__(self) -> None:
        self._nic: dict[tuple[int, ...], frozenset[int]] = {}
        self._port: dict[tuple[int, ...], tuple[tuple[int, ...], frozenset[int]]] = {}

    def of_nic(self, nic: NicModel) -> frozenset[int]:
        key = tuple(nic.pfc)
        found = self._nic.get(key)
        if found is None:
            found = self._nic[key] = frozenset(prio for prio, flag in enumerate(nic.pfc) if flag)
        return found

    def of_priorities(self, priorities: list[int]) -> tuple[tuple[int, ...], frozenset[int]]:
        key = tuple(priorities)
        found = self._port.get(key)
        if found is None:
            found = self._port[key] = (key, frozenset(key))
        return found


def _nics_by_interface(device: DeviceModel) -> dict[str, NicModel]:
    """The NIC on each interface; the first one listed wins, as a linear search would find it."""
    nics: dict[str, NicModel] = {}
    for nic in device.host.nics if device.host is not None else []:
        nics.setdefault(nic.interface, nic)
    return nics


def _device_ports(devices: Sequence[DeviceModel]) -> tuple[list[DevicePorts], list[End], dict[str, End]]:
    """Every port of every device as an End, numbered in device/port order: per device, in one list, and by
    `device:port` name (a later duplicate name replacing the earlier one)."""
    pfc_sets = _PfcSets()
    per_device: list[DevicePorts] = []
    ends: list[End] = []
    for device in devices:
        nics = _nics_by_interface(device)
        first = len(ends)
        own = [End(device, port, nics.get(port.name) if nics else None, pfc_sets, first + offset)
               for offset, port in enumerate(device.ports)]
        ends.extend(own)
        per_device.append((device, own))
    return per_device, ends, {end.name: end for end in ends}


class _Index:
    """The ports rules sweep, one per `device:port` name, and the End a `peer` reference names.

    A reference resolves by splitting at its first colon, (device, port). Keyed by the text `device:port`
    instead, one lookup answers exactly the same whenever no device name contains a colon and no two ports
    share a name on one device — what the inventory schema guarantees. A model that breaks either (hand-edited,
    read back from configs) takes the general path: keyed by the pair, a later duplicate replacing the earlier
    one in its place, and only the survivors swept."""

    def __init__(self, devices: Sequence[DeviceModel], device_ports: list[DevicePorts], ends: list[End],
                 by_name: dict[str, End]) -> None:
        self._by_name: dict[str, End] | None = None
        self._by_pair: dict[tuple[str, str], End] = {}
        self.resolve: Callable[[str], End | None]
        if len(by_name) == len(ends) and not any(":" in device.name for device in devices):
            self.ends = ends
            self.ends_by_device = [(device, own) for device, own in device_ports if own]
            self._by_name = by_name
            self.resolve = by_name.get
            return
        self._by_pair = {(end.device.name, end.port.name): end for end in ends}
        for end in ends:
            end.index = -1  # not swept, unless it is the one kept for its name
        self.ends = list(self._by_pair.values())
        for index, end in enumerate(self.ends):
            end.index = index
        self.ends_by_device = _runs(self.ends)
        self.resolve = partial(_resolve_pair, self._by_pair)  # not a bound method: no cycle through self

    def get(self, device: str, port: str) -> End | None:
        if self._by_name is not None:
            return self._by_name.get(f"{device}:{port}")
        return self._by_pair.get((device, port))


def _resolve_pair(by_pair: dict[tuple[str, str], End], ref: str) -> End | None:
    device, _, port = ref.partition(":")
    return by_pair.get((device, port))


def _runs(ends: list[End]) -> list[DevicePorts]:
    """`ends` cut into consecutive runs of one device (the same order, so sweeping the runs sweeps `ends`)."""
    runs: list[DevicePorts] = []
    for end in ends:
        if not runs or runs[-1][0] is not end.device:
            runs.append((end.device, []))
        runs[-1][1].append(end)
    return runs


def _cabling(ends: list[End], resolve: Callable[[str], End | None]) -> tuple[list[End | None], list[Link], list[Link]]:
    """The End each end's `peer` names (aligned with `ends`; None: no peer, or one that does not exist), each
    cable once, from the `peer` fields of both ends, and the cables between data ports. One pass, O(ports).

    A cable is listed from its first end in port order: skipped at the second end when the first, earlier, end
    named this one back."""
    peers: list[End | None] = []
    links: list[Link] = []
    data_links: list[Link] = []
    for end in ends:
        other = resolve(end.peer_ref) if end.peer_ref is not None else None
        peers.append(other)
        if other is None:
            continue  # no peer, or FG-INV-001 reports it
        if other.index < end.index and peers[other.index] is end:
            continue
        link = (end, other)
        links.append(link)
        if end.role in DATA_ROLES and other.role in DATA_ROLES:
            data_links.append(link)
    return peers, links, data_links


class LintContext:
    """The fabric as rules read it.

    ``ends`` are the ports rules sweep (one per device:port name), ``ends_by_device`` the same in runs per
    device (for rules that look something up per device once, not per port), ``switch_ports`` every port of
    every switch (what the device's own ``ports`` list holds), ``peers[i]`` the End ``ends[i]`` is cabled to,
    ``host_nics`` every host with its NICs, in the host's order. ``evidence``: what ``lint --configs`` found on
    disk (None when linting the resolved fabric)."""

    def __init__(self, fabric: Fabric, evidence: Evidence | None = None) -> None:
        self.fabric = fabric
        self.evidence = evidence
        self.policy: PolicyModel | None = fabric.policy
        self.devices: list[DeviceModel] = [fabric.devices[name] for name in sorted(fabric.devices)]
        self.switches: list[DeviceModel] = [d for d in self.devices if d.host is None]
        self.hosts: list[DeviceModel] = [d for d in self.devices if d.host is not None]
        self.host_nics: list[tuple[DeviceModel, list[Nic]]] = [
            (d, [Nic(nic) for nic in d.host.nics] if d.host is not None else []) for d in self.hosts]
        device_ports, ends, by_name = _device_ports(self.devices)
        self.switch_ports: list[DevicePorts] = [(d, own) for d, own in device_ports if d.host is None]
        self._index = _Index(self.devices, device_ports, ends, by_name)
        self.ends: list[End] = self._index.ends
        self.ends_by_device: list[DevicePorts] = self._index.ends_by_device
        self.peers: list[End | None]
        self.links: list[Link]
        self.data_links: list[Link]  # links whose both ends carry data (host, fabric or RDMA ports)
        self.peers, self.links, self.data_links = _cabling(self.ends, self._index.resolve)
        self._capabilities: dict[str, Capability] = {}
        self._switch_ports_by_name = {device.name: own for device, own in self.switch_ports}
        self._intended_ports: dict[str, dict[str, PortModel]] = {}
        self._as_resolved: dict[str, bool] = {}

    def read_as_resolved(self, name: str) -> bool:
        """Whether device ``name``, read from its config, equals its resolved model (a deep comparison, asked by
        FG-CFG-001 and FG-EVD-003 of every device: made once). False without evidence or without the device."""
        known = self._as_resolved.get(name)
        if known is None:
            intended = self.evidence.intended.get(name) if self.evidence is not None else None
            found = self.fabric.devices.get(name)
            known = self._as_resolved[name] = intended is not None and found is not None and found == intended
        return known

    @cached_property
    def switch_own_qos_ports(self) -> list[DevicePorts]:
        """:attr:`switch_ports` with each switch's ports cut to those whose QoS is their own (a reader's
        ``port.qos``, not the switch's): the ports the QoS rules check one by one, found once for all ten of them
        (a resolved fabric has none, over 105k switch ports at 32,768 GPUs)."""
        return [(device, [end for end in own if end.qos is not device.qos]) for device, own in self.switch_ports]

    def switch_ports_of(self, device: DeviceModel) -> list[End]:
        """Every port of switch ``device`` (none for a host)."""
        return self._switch_ports_by_name.get(device.name, [])

    def end(self, device: str, port: str) -> End | None:
        return self._index.get(device, port)

    def peer_of(self, end: End) -> End | None:
        """The End a swept end (one of `ends`) is cabled to."""
        return self.peers[end.index]

    def from_config(self, device: DeviceModel) -> bool:
        """Whether ``device`` was read from its config: a finding on it is the device's to fix, not the intent's."""
        return self.evidence is not None and self.evidence.from_config(device.name)

    def intended(self, device: DeviceModel) -> DeviceModel | None:
        """``device`` as the intent resolves it, when ``device`` was read from its config; else None."""
        return self.evidence.intended.get(device.name) if self.evidence is not None else None

    def intended_port(self, device: DeviceModel, port: str) -> PortModel | None:
        """Port ``port`` of ``device`` as the intent resolves it (see :meth:`intended`); None when not read from its
        config or the intent has no such port. Indexed per device on first use: rules ask once per link."""
        intended = self.intended(device)
        if intended is None:
            return None
        ports = self._intended_ports.get(device.name)
        if ports is None:
            ports = self._intended_ports[device.name] = {}
            for found in intended.ports:
                ports.setdefault(found.name, found)  # the first of a name, as a search in order finds it
        return ports.get(port)

    def capability(self, device: DeviceModel) -> Capability:
        """Memoised per platform name: the registry answers the same record for every device of a platform."""
        found = self._capabilities.get(device.platform)
        if found is None:
            found = self._capabilities[device.platform] = get_platform(device.platform).capability
        return found
