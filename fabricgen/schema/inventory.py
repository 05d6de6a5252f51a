"""The inventory: what exists. A Nornir SimpleInventory (hosts.yaml, groups.yaml, defaults.yaml) — the same
files deploy uses — whose ``data`` carries each device's role, hardware and cabled ports."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import Field, StringConstraints

from fabricgen.schema.common import DeviceName, PortName, StrictModel, Text
from fabricgen.units import SpeedMbps

Role = Literal["leaf", "spine", "oob", "gpu-host"]
SWITCH_ROLES: frozenset[str] = frozenset({"leaf", "spine", "oob"})
PeerRef = Annotated[str, StringConstraints(
    pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,62}:[A-Za-z0-9][A-Za-z0-9/._-]{0,63}$")]


class PortSpec(StrictModel):
    speed: SpeedMbps | None = None
    lanes: Annotated[str, StringConstraints(pattern=r"^\d+(,\d+)*$")] | None = Field(
        default=None, description="SONiC lane ids, comma separated")
    peer: PeerRef | None = Field(default=None, description="the other end: `device:port`")
    cable_m: int | None = Field(default=None, ge=1, le=10000, description="cable length in metres (round up)")
    media: Literal["dac", "aec", "aoc", "optic", "copper"] | None = None
    fec: Literal["rs", "fc", "none"] | None = None
    rdma_device: Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_]{1,32}$")] | None = Field(
        default=None, description="RDMA device of a host NIC port, e.g. mlx5_0")


class DeviceData(StrictModel):
    role: Role
    hardware: Text | None = Field(default=None, description="model / SONiC HWSKU, e.g. ACS-MSN4700")
    asic: Annotated[str, StringConstraints(pattern=r"^[a-z0-9-]{1,32}$")] | None = Field(
        default=None, description="switch ASIC family where buffers depend on it, e.g. spectrum3")
    sonic_release: Annotated[str, StringConstraints(pattern=r"^\d{6}$")] | None = Field(
        default=None, description="SONiC switch: the release branch its image is built from, e.g. 202411; picks "
                                  "buffermgrd's headroom formula (it changed in 202405). Default: 202411, the "
                                  "release fabricgen targets")
    sonic_buffer_model: Literal["dynamic", "traditional"] | None = Field(
        default=None, description="SONiC switch: its DEVICE_METADATA buffer_model. dynamic: buffermgrd computes "
                                  "lossless headroom itself and fabricgen writes no profiles; traditional: fabricgen "
                                  "writes the profiles. Default: what the vendor's image sets, dynamic on NVIDIA "
                                  "Spectrum, traditional elsewhere")
    mgmt_interface: PortName | None = Field(default=None, description="default: the platform's")
    frontend_interface: PortName | None = Field(
        default=None, description="gpu-host: the interface NCCL bootstraps over (never an RDMA NIC)")
    ports: dict[PortName, PortSpec] = Field(default_factory=dict)


class Device(StrictModel):
    """One Nornir host after group/defaults inheritance. Connection keys belong to deploy and are never
    copied into rendered output."""

    name: DeviceName
    hostname: str = Field(description="management address (Nornir's `hostname`)")
    platform: str
    groups: list[str] = Field(default_factory=list)
    data: DeviceData
    username: str | None = None
    password: str | None = Field(default=None, repr=False)
    port: int | None = None
    connection_options: dict[str, Any] | None = Field(default=None, repr=False)

    @property
    def role(self) -> Role:
        return self.data.role

    @property
    def is_switch(self) -> bool:
        return self.data.role in SWITCH_ROLES


# Endpoints and links are derived by load from validated `peer` entries, never written by a user, so they
# are plain slotted dataclasses: a 32,768-GPU fabric has 71k links, and pydantic models cost 10x to build.
@dataclass(frozen=True, slots=True)
class Endpoint:
    device: str
    port: str

    def __str__(self) -> str:
        return f"{self.device}:{self.port}"


@dataclass(frozen=True, slots=True)
class Link:
    """A cable, declared on one end or both. Length and media belong to the cable, not to a port."""

    a: Endpoint
    b: Endpoint
    cable_m: int | None = None
    media: str | None = None


class Inventory(StrictModel):
    devices: dict[DeviceName, Device]
    links: list[Link]

