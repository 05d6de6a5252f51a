"""Everything rules look at, indexed once so each rule is one pass over devices or links (linear in links)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property

from fabricgen.model import DeviceModel, Fabric, NicModel, PolicyModel, PortModel
from fabricgen.platforms import Capability, get_platform

DATA_ROLES = frozenset({"host", "fabric", "rdma"})


@dataclass(frozen=True)
class End:
    device: DeviceModel
    port: PortModel

    @property
    def name(self) -> str:
        return f"{self.device.name}:{self.port.name}"

    @property
    def nic(self) -> NicModel | None:
        if self.device.host is None:
            return None
        return next((n for n in self.device.host.nics if n.interface == self.port.name), None)

    def pfc_set(self) -> frozenset[int]:
        """Priorities this end pauses on: a NIC's PFC vector, or a switch port's PFC priorities."""
        nic = self.nic
        if nic is not None:
            return frozenset(prio for prio, flag in enumerate(nic.pfc) if flag)
        return frozenset(self.port.pfc_priorities)

    def mtu(self) -> int:
        nic = self.nic
        return nic.mtu if nic is not None else self.port.mtu


@dataclass(frozen=True)
class Link:
    a: End
    b: End


@dataclass
class LintContext:
    fabric: Fabric

    @property
    def policy(self) -> PolicyModel | None:
        return self.fabric.policy

    def devices(self) -> Iterator[DeviceModel]:
        for name in sorted(self.fabric.devices):
            yield self.fabric.devices[name]

    def switches(self) -> Iterator[DeviceModel]:
        return (d for d in self.devices() if d.host is None)

    def hosts(self) -> Iterator[DeviceModel]:
        return (d for d in self.devices() if d.host is not None)

    def capability(self, device: DeviceModel) -> Capability:
        return get_platform(device.platform).capability

    @cached_property
    def ports(self) -> dict[tuple[str, str], End]:
        return {(d.name, p.name): End(d, p) for d in self.devices() for p in d.ports}

    @cached_property
    def links(self) -> list[Link]:
        """Each cable once, from the `peer` fields of both ends. O(ports)."""
        seen: set[frozenset[tuple[str, str]]] = set()
        links: list[Link] = []
        for key, end in self.ports.items():
            if end.port.peer is None:
                continue
            device, _, port = end.port.peer.partition(":")
            other = self.ports.get((device, port))
            if other is None:
                continue  # FG-INV-001 reports it
            pair = frozenset((key, (device, port)))
            if pair not in seen:
                seen.add(pair)
                links.append(Link(end, other))
        return links

    def data_links(self) -> Iterator[Link]:
        return (link for link in self.links if link.a.port.role in DATA_ROLES and link.b.port.role in DATA_ROLES)

    def peer_of(self, end: End) -> End | None:
        if end.port.peer is None:
            return None
        device, _, port = end.port.peer.partition(":")
        return self.ports.get((device, port))
