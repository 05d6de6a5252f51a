"""The inventory: what exists. A Nornir SimpleInventory (hosts.yaml, groups.yaml, defaults.yaml) — the same
files deploy uses — whose ``data`` carries each device's role, hardware and cabled ports."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import Field, StringConstraints

from fabricgen.models.common import DeviceName, Hardware, Hostname, IpAddress, PortName, StrictModel, shell_name
from fabricgen.models.units import SpeedMbps

Role = Literal["leaf", "spine", "oob", "gpu-host"]
SWITCH_ROLES: frozenset[str] = frozenset({"leaf", "spine", "oob"})
PeerRef = Annotated[str, StringConstraints(
    pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,62}:[A-Za-z0-9][A-Za-z0-9/._-]{0,63}$")]


class PortSpec(StrictModel):
    speed: SpeedMbps | None = None
    lanes: Annotated[str, StringConstraints(pattern=r"^\d+(,\d+)*$")] | None = Field(
        default=None, description="hardware lane ids, comma separated, as the SKU's port_config.ini lists them. "
                                  "Required on every SONiC port but the management port (SONiC's PORT table needs "
                                  "them; checked at load); elsewhere it only tells the lane rate (EOS `speed 400g-8`, "
                                  "cable reach, 8-lane headroom)")
    peer: PeerRef | None = Field(default=None, description="the other end: `device:port`")
    cable_m: int | None = Field(default=None, ge=1, le=10000, description="cable length in metres (round up)")
    media: Literal["dac", "aec", "aoc", "optic", "copper"] | None = None
    fec: Literal["rs", "fc", "none"] | None = None
    rdma_device: Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_]{1,32}$")] | None = Field(
        default=None, description="RDMA device of a host NIC port, e.g. mlx5_0")


class DeviceData(StrictModel):
    role: Role = Field(description="what the device is in the fabric. A host with no role (after inheritance) and "
                                   "no fabricgen key of its own is not fabricgen's: it is skipped with a note")
    hardware: Hardware | None = Field(
        default=None, description="model / SONiC HWSKU, e.g. ACS-MSN4700. Needed with pfc.headroom.method "
                                  "vendor-table (the SKU's shipped table) and for gearbox delay")
    asic: Annotated[str, StringConstraints(pattern=r"^[a-z0-9-]{1,32}$")] | None = Field(
        default=None, description="switch ASIC family where buffers depend on it: spectrum1 … spectrum6. Required "
                                  "on a SONiC switch (the one platform whose PFC headroom fabricgen computes) with "
                                  "lossless ports under pfc.headroom.method formula: reported with the device and "
                                  "key before anything is rendered. Also picks SONiC's default buffer model")
    sonic_release: Annotated[str, StringConstraints(pattern=r"^\d{6}$")] | None = Field(
        default=None, description="SONiC switch: the release branch its image is built from, e.g. 202411; picks "
                                  "buffermgrd's headroom formula (it changed in 202405). Default: 202411, the "
                                  "release fabricgen targets")
    sonic_buffer_model: Literal["dynamic", "traditional"] | None = Field(
        default=None, description="SONiC switch: its DEVICE_METADATA buffer_model. dynamic: buffermgrd computes "
                                  "lossless headroom itself and fabricgen writes no profiles; traditional: fabricgen "
                                  "writes the profiles. Default: what the vendor's image sets, dynamic on NVIDIA "
                                  "Spectrum, traditional elsewhere")
    lossless_limit: int | None = Field(
        default=None, ge=1, le=8, description="SONiC switch: how many lossless priorities its SKU's buffer templates "
                                              "provision PGs for (device/<vendor>/<platform>/<SKU>/buffers_defaults_"
                                              "*.j2 in sonic-buildimage: lossless PGs 3-4 are 2; 2-4 and 6 are 4). "
                                              "Default: fabricgen's table of known SKUs; an unknown SKU running more "
                                              "than 2 is a warning (FG-PFC-002)")
    mgmt_address: IpAddress | None = Field(
        default=None, description="switch: the management address its config gets, in the intent's "
                                  "management.subnet. Default: Nornir's `hostname`, which must then be an address; "
                                  "set this when `hostname` is a DNS name")
    mgmt_interface: PortName | None = Field(default=None, description="default: the platform's")
    frontend_interface: PortName | None = Field(
        default=None, description="gpu-host: the interface NCCL bootstraps over (never an RDMA NIC)")
    ports: dict[PortName, PortSpec] = Field(default_factory=dict)


class Device(StrictModel):
    """One Nornir host after group/defaults inheritance. Connection keys belong to deploy and are never
    copied into rendered output."""

    name: DeviceName
    hostname: Hostname = Field(description="how Nornir reaches the device: its management address or a DNS name "
                                           "(a switch named by DNS needs data.mgmt_address for its config)")
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



# --- names a platform reads as more than one thing --------------------------------------------------------

# Each switch platform's CLI reads `<letters><n>-<m>` as a range of ports wherever it takes an interface name, so a
# port named `Ethernet1-64` would make `interface Ethernet1-64` + `shutdown` shut all 64. The finding and
# the vendors' range syntax: EOS `interface Ethernet1-4`, `Ethernet1/1-4`; NX-OS `interface ethernet 1/1-4`;
# NVUE `nv set interface swp1-4` (and nvue.yaml keys `swp1-32:`); SONiC's CLI takes `Ethernet0-8` in its
# range-aware commands. No real switch port has a digit-dash-digit in its name.
RANGE_READINGS: dict[str, str] = {
    "eos": "EOS reads `interface Ethernet1-4` (and Ethernet1/1-4) as a range of ports",
    "nxos": "NX-OS reads `interface ethernet 1/1-4` as a range of ports",
    "nvue": "NVUE reads `swp1-4` as a range of ports (in nv set commands and nvue.yaml keys)",
    "sonic": "SONiC's CLI reads `Ethernet0-8` as a range of ports",
}
_RANGE = re.compile(r"\d-\d")
# Linux refuses a netdev name of 16 bytes or more, or one holding '/', ':' or whitespace (net/core/dev.c
# dev_valid_name); the host scripts use the name in /sys/class/net/<name> paths as root.
_NETDEV = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,14}")

Problem = tuple[tuple[str | int, ...], str, str]


def check_device(device: Device) -> list[Problem]:
    """Cross-field rules on one device that its port names' type cannot express, because they depend on its role
    and platform. Returns (key path under the device, message, hint) triples, as :func:`check_intent` does."""
    if device.is_switch:
        return _switch_port_names(device) + _shared_lanes(device)
    return _host_port_names(device)


def _shared_lanes(device: Device) -> list[Problem]:
    """A hardware lane belongs to one port (the SKU's port_config.ini gives each lane once; orchagent cannot create
    two SAI ports on one lane). A template whose `{n}..{n+K}` is one port too wide gives every lane to two."""
    ports = device.data.ports
    lanes = [spec.lanes for spec in ports.values() if spec.lanes]
    every = ",".join(lanes).split(",") if lanes else []
    if len(set(every)) == len(every):  # one join and one set per switch: 105k ports at 32,768 GPUs
        return []
    owner: dict[str, str] = {}
    sharing: list[tuple[str, str]] = []  # (port, what is wrong with its lanes)
    for name, spec in ports.items():
        own = spec.lanes.split(",") if spec.lanes else []
        taken = list(dict.fromkeys(owner[lane] for lane in own if lane in owner))
        repeated = sorted({lane for lane in own if own.count(lane) > 1}, key=int) if len(set(own)) != len(own) else []
        if taken:
            sharing.append((name, f"port {name}'s lanes {spec.lanes} include lanes of {', '.join(taken)}"))
        elif repeated:
            sharing.append((name, f"port {name}'s lanes {spec.lanes} list lane {', '.join(repeated)} twice"))
        for lane in own:
            owner.setdefault(lane, name)
    if not sharing:  # a guard: each repeat the set found is one of the two kinds above
        return []
    # The first port that shares, and how many more: a template's slip is in every port it makes.
    port, problem = sharing[0]
    more = f"; {len(sharing) - 1} more of its ports share lanes too" if len(sharing) > 1 else ""
    return [(("data", "ports", port, "lanes"), f"{problem}{more}",
             "give each hardware lane to one port, once, as the SKU's port_config.ini lists them")]


def _named_ports(device: Device) -> list[tuple[tuple[str | int, ...], str]]:
    """Every port name the device's data holds, with its key path."""
    found: list[tuple[tuple[str | int, ...], str]] = [(("data", "ports", port), port) for port in device.data.ports]
    for key in ("mgmt_interface", "frontend_interface"):
        value = getattr(device.data, key)
        if value is not None:
            found.append((("data", key), value))
    return found


def _switch_port_names(device: Device) -> list[Problem]:
    # One search over all of the names first (a digit-dash-digit cannot span the line breaks joining them): at
    # 32,768 GPUs, 105k switch ports and none of them a range.
    data = device.data
    if not _RANGE.search("\n".join([*data.ports, data.mgmt_interface or "", data.frontend_interface or ""])):
        return []
    reading = RANGE_READINGS.get(device.platform, "a switch CLI reads `<name><n>-<m>` as a range of ports")
    return [(path, f"port name {name!r} reads as a range of ports: {reading}",
             "name one port, as the switch shows it (e.g. Ethernet1 or Ethernet1/1)")
            for path, name in _named_ports(device) if _RANGE.search(name)]


def _host_port_names(device: Device) -> list[Problem]:
    problems: list[Problem] = []
    by_shell_name: dict[str, str] = {}
    for path, name in _named_ports(device):
        if not _NETDEV.fullmatch(name):
            problems.append((path, f"{name!r} is not a Linux interface name",
                             "at most 15 letters, digits, '.', '_', '-' (no '/'), as `ip link` shows it"))
        if path[1] != "ports":
            continue
        # A name of letters and digits alone is its own shell name (41k host ports at 32,768 GPUs, most of them
        # so); the shell name of any other holds a '_', so it cannot be such a name.
        other = by_shell_name.setdefault(name if name.isalnum() else shell_name(name), name)
        if other != name:
            problems.append((path, f"ports {other!r} and {name!r} differ only in '.', '-', '_' or '/': the host "
                             f"script would configure both in one shell function", "rename one of them"))
    return problems


# --- what a platform cannot render a device without ----------------------------------------------------------

# Facts the schema leaves optional (other platforms do without them) but that one platform needs on every port it
# writes: found at load, naming the device, key and fix, before anything is rendered or validated.
PORT_FACTS_NEEDED: dict[str, tuple[str, str, str]] = {
    "sonic": ("lanes", "SONiC's PORT table needs each port's lanes (sonic-port.yang: `leaf lanes` is mandatory "
              "except on chassis and VOQ systems)",
              "add lanes: the port's hardware lanes as the SKU's port_config.ini lists them, e.g. \"0,1,2,3\""),
}


def platform_needs(device: Device, mgmt_interface: str) -> list[Problem]:
    """The facts ``device``'s platform needs that it lacks, as (key path under the device, message, hint). The
    management port (``data.mgmt_interface``, else the platform's ``mgmt_interface``) is not a front-panel port
    and needs none."""
    needed = PORT_FACTS_NEEDED.get(device.platform)
    if needed is None:
        return []
    key, why, hint = needed
    mgmt = device.data.mgmt_interface or mgmt_interface
    return [(("data", "ports", port, key), f"port {device.name}:{port} has no {key}: {why}", hint)
            for port, spec in device.data.ports.items() if port != mgmt and getattr(spec, key) is None]
