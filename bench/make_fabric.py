#!/usr/bin/env python3
"""Write an intent + Nornir inventory for a rail-optimised two-tier RoCE fabric of N GPUs (deterministic).

    python bench/make_fabric.py --gpus 32768 -o /tmp/fabric-32k

writes the fabric twice, in both inventory forms, which render the same tree: inventory/ (a Nornir
SimpleInventory: hosts.yaml lists every port) and compact/ (devices.yaml with one port template per NOS and host
kind, plus cabling.csv with one line per cable).

N/8 hosts with 8 rail NICs at 400G. Each rail has its own plane: leaves with 64 ports (32 down to 32 hosts,
32 up), spines with 64 ports (each leaf reaches 32 of its plane's spines once). OOB switches (48 ports) take
every BMC and every switch management port. Platforms are mixed like the bundled mixed example: leaves cycle
SONiC / EOS / NVUE / NX-OS by plane, spines alternate SONiC / EOS, hosts alternate ConnectX / generic dcb.
Cables: DAC 2-3 m in the rack, optics 20-150 m to the spines.
"""

from __future__ import annotations

import argparse
import shutil
from dataclasses import dataclass, field
from ipaddress import IPv4Network
from pathlib import Path

GPUS_PER_HOST = 8
HOSTS_PER_LEAF = 32
UPLINKS_PER_LEAF = 32
SPINE_PORTS = 64
OOB_PORTS = 48
LEAF_PLATFORMS = ("sonic", "eos", "nvue", "nxos")
SPINE_PLATFORMS = ("sonic", "eos")
ROOT = Path(__file__).resolve().parent.parent

GROUPS = """\
leaf_sonic: {platform: sonic, data: {role: leaf, hardware: Mellanox-SN5600-O128, asic: spectrum4, mgmt_interface: eth0}}
leaf_eos: {platform: eos, data: {role: leaf, hardware: DCS-7060X5-64S}}
leaf_nvue: {platform: nvue, data: {role: leaf, hardware: SN5600, asic: spectrum4, mgmt_interface: eth0}}
leaf_nxos: {platform: nxos, data: {role: leaf, hardware: N9K-C9364D-GX2A, mgmt_interface: mgmt0}}
spine_sonic: {platform: sonic, data: {role: spine, hardware: Mellanox-SN5600-O128, asic: spectrum4, mgmt_interface: eth0}}
spine_eos: {platform: eos, data: {role: spine, hardware: DCS-7060X5-64S}}
oob: {platform: eos, data: {role: oob, hardware: DCS-7010TX-48}}
host_connectx: {platform: connectx, data: {role: gpu-host, hardware: ConnectX-7, frontend_interface: eno1}}
host_dcb: {platform: linux-dcb, data: {role: gpu-host, hardware: BCM57608, frontend_interface: eno1}}
"""


def port_name(platform: str, index: int) -> str:
    """Front-panel port `index` (0-based) as the NOS names it."""
    return {"sonic": f"Ethernet{8 * index}", "eos": f"Ethernet{index + 1}/1", "nvue": f"swp{index + 1}",
            "nxos": f"Ethernet1/{index + 1}"}[platform]


def mgmt_name(platform: str) -> str:
    return {"sonic": "eth0", "eos": "Management1", "nvue": "eth0", "nxos": "mgmt0"}[platform]


@dataclass
class Port:
    name: str
    settings: list[str]
    """the port's settings as hosts.yaml writes them (`speed: 400G`, ...), without its cable"""
    peer: str | None = None
    cable: int | None = None
    media: str | None = None


@dataclass
class Host:
    name: str
    hostname: str
    group: str
    template: str
    """the compact form's port template for this host's ports"""
    ports: list[Port] = field(default_factory=list)


def front_port(platform: str, index: int, peer: str | None = None, cable: int | None = None,
               media: str | None = None) -> Port:
    settings = ["speed: 400G", "fec: rs"]
    if platform == "sonic":
        settings.append(f'lanes: "{",".join(str(8 * index + k) for k in range(8))}"')
    return Port(port_name(platform, index), settings, peer, cable, media)


class Addresses:
    def __init__(self) -> None:
        self._mgmt = IPv4Network("10.128.0.0/16").hosts()
        next(self._mgmt)  # .1 is the gateway
        self._front = IPv4Network("10.64.0.0/16").hosts()

    def mgmt(self) -> str:
        return str(next(self._mgmt))

    def front(self) -> str:
        return str(next(self._front))


def build(gpus: int) -> tuple[list[Host], int]:
    hosts = gpus // GPUS_PER_HOST
    per_leaf = min(HOSTS_PER_LEAF, hosts)
    if hosts < 1 or hosts % per_leaf:
        raise SystemExit(f"--gpus must be 8..256 in steps of 8, or a multiple of {GPUS_PER_HOST * HOSTS_PER_LEAF}")
    leaves_per_rail = hosts // per_leaf
    spines_per_rail = max(1, leaves_per_rail * UPLINKS_PER_LEAF // SPINE_PORTS)
    addr = Addresses()
    devices: list[Host] = []
    mgmt_targets: list[str] = []
    for rail in range(GPUS_PER_HOST):
        leaf_platform = LEAF_PLATFORMS[rail % len(LEAF_PLATFORMS)]
        for leaf in range(leaves_per_rail):
            devices.append(_leaf(rail, leaf, leaf_platform, spines_per_rail, addr, mgmt_targets))
        for spine in range(spines_per_rail):
            devices.append(_spine(rail, spine, addr, mgmt_targets))
    for host in range(hosts):
        devices.append(_host(host, hosts, addr, mgmt_targets))
    devices += _oob(mgmt_targets, addr)
    return devices, len(mgmt_targets)


def _leaf(rail: int, leaf: int, platform: str, spines: int, addr: Addresses, mgmt: list[str]) -> Host:
    name = f"r{rail}-leaf{leaf}"
    mgmt.append(f"{name}:{mgmt_name(platform)}")
    device = Host(name, addr.mgmt(), f"leaf_{platform}", f"switch_{platform}",
                  [Port(mgmt_name(platform), ["speed: 1G"])])
    device.ports += [front_port(platform, down) for down in range(HOSTS_PER_LEAF)]  # the host declares this link
    for up in range(UPLINKS_PER_LEAF):
        # Uplink number k of the plane goes to spine k mod S, port k div S: every spine port used once.
        k = leaf * UPLINKS_PER_LEAF + up
        spine, spine_port = k % spines, k // spines
        cable = 20 + (rail * 7 + leaf * 13 + up * 3) % 131
        spine_platform = SPINE_PLATFORMS[(rail + spine) % 2]
        peer = f"r{rail}-spine{spine}:{port_name(spine_platform, spine_port)}"
        device.ports.append(front_port(platform, HOSTS_PER_LEAF + up, peer, cable, "optic"))
    return device


def _spine(rail: int, spine: int, addr: Addresses, mgmt: list[str]) -> Host:
    platform = SPINE_PLATFORMS[(rail + spine) % 2]
    name = f"r{rail}-spine{spine}"
    mgmt.append(f"{name}:{mgmt_name(platform)}")
    return Host(name, addr.mgmt(), f"spine_{platform}", f"switch_{platform}",
                [Port(mgmt_name(platform), ["speed: 1G"]), *(front_port(platform, i) for i in range(SPINE_PORTS))])


def _host(host: int, hosts: int, addr: Addresses, mgmt: list[str]) -> Host:
    name = f"gpu{host:05d}"
    kind = "connectx" if host % 2 == 0 else "dcb"
    mgmt.append(f"{name}:bmc")
    device = Host(name, addr.front(), f"host_{kind}", f"host_{kind}")
    leaf = host // min(HOSTS_PER_LEAF, hosts)
    down = host % min(HOSTS_PER_LEAF, hosts)
    for rail in range(GPUS_PER_HOST):
        platform = LEAF_PLATFORMS[rail % len(LEAF_PLATFORMS)]
        rdma = f"mlx5_{rail}" if kind == "connectx" else f"bnxt_re{rail}"
        peer = f"r{rail}-leaf{leaf}:{port_name(platform, down)}"
        device.ports.append(Port(f"rail{rail}", [f"rdma_device: {rdma}", "speed: 400G", "fec: rs"], peer,
                                 2 + (host + rail) % 2, "dac"))
    device.ports += [Port("bmc", ["speed: 1G"]), Port("eno1", [])]
    return device


def _oob(targets: list[str], addr: Addresses) -> list[Host]:
    switches = []
    for index in range(0, len(targets), OOB_PORTS):
        served = targets[index:index + OOB_PORTS]
        switch = Host(f"oob{index // OOB_PORTS}", addr.mgmt(), "oob", f"oob_{len(served)}")
        switch.ports = [Port(f"Ethernet{port}", ["speed: 1G"], target, 5, "copper")
                        for port, target in enumerate(served, 1)]
        switches.append(switch)
    return switches


# --- the two inventory forms --------------------------------------------------------------------------------

def hosts_yaml(devices: list[Host]) -> str:
    """The Nornir SimpleInventory's hosts.yaml: every port, its cable declared on one end."""
    lines: list[str] = []
    for device in devices:
        lines += [f"{device.name}:", f"  hostname: {device.hostname}", f"  groups: [{device.group}]", "  data:",
                  "    ports:"]
        for port in device.ports:
            settings = list(port.settings)
            if port.peer:
                settings += [f'peer: "{port.peer}"', f"cable_m: {port.cable}", f"media: {port.media}"]
            lines.append(f"      {port.name}: {{{', '.join(settings)}}}")
        lines.append("")
    return "\n".join(lines) + "\n"


def compact_templates(platforms: set[str], oob_sizes: set[int]) -> list[str]:
    """The compact form's port templates: one per switch NOS (leaves and spines have the same 64 ports), one per
    host kind, one per OOB switch size."""
    lines = ["templates:"]
    # Range keys quoted: YAML reads them plain too, but quoted they stay on fabricgen's fast YAML path.
    ranges = {"sonic": '"Ethernet{0..504..8}": {speed: 400G, fec: rs, lanes: "{n}..{n+7}"}',
              "eos": '"Ethernet{1..64}/1": {speed: 400G, fec: rs}', "nvue": '"swp{1..64}": {speed: 400G, fec: rs}',
              "nxos": '"Ethernet1/{1..64}": {speed: 400G, fec: rs}'}
    for platform in sorted(platforms):
        lines += [f"  switch_{platform}:", f"    {mgmt_name(platform)}: {{speed: 1G}}", f"    {ranges[platform]}"]
    for kind, rdma in (("connectx", "\"mlx5_{n}\""), ("dcb", "\"bnxt_re{n}\"")):
        rails = f'"rail{{0..{GPUS_PER_HOST - 1}}}"'
        lines += [f"  host_{kind}:", f"    {rails}: {{rdma_device: {rdma}, speed: 400G, fec: rs}}",
                  "    bmc: {speed: 1G}", "    eno1: {}"]
    for size in sorted(oob_sizes):
        lines += [f"  oob_{size}:", f'    "Ethernet{{1..{size}}}": {{speed: 1G}}']
    return lines


def devices_yaml(devices: list[Host]) -> str:
    platforms = {device.template.removeprefix("switch_") for device in devices if device.template.startswith("switch_")}
    oob_sizes = {len(device.ports) for device in devices if device.group == "oob"}
    lines = ["# fabricgen compact inventory: port templates and devices; the cables are in cabling.csv",
             *compact_templates(platforms, oob_sizes), "devices:"]
    lines += [f"  {device.name}: {{hostname: {device.hostname}, groups: [{device.group}], template: {device.template}}}"
              for device in devices]
    return "\n".join(lines) + "\n"


def cabling_csv(devices: list[Host]) -> str:
    rows = ["a_device,a_port,b_device,b_port,cable_m,media"]
    for device in devices:
        for port in device.ports:
            if port.peer:
                far_device, _, far_port = port.peer.partition(":")
                rows.append(f"{device.name},{port.name},{far_device},{far_port},{port.cable},{port.media}")
    return "\n".join(rows) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gpus", type=int, required=True)
    parser.add_argument("-o", "--out", type=Path, required=True)
    args = parser.parse_args()
    devices, managed = build(args.gpus)
    inventory, compact = args.out / "inventory", args.out / "compact"
    for folder in (inventory, compact):
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "groups.yaml").write_text(GROUPS)
        (folder / "defaults.yaml").write_text("data: {}\n")
    (inventory / "hosts.yaml").write_text(hosts_yaml(devices))
    (compact / "devices.yaml").write_text(devices_yaml(devices))
    (compact / "cabling.csv").write_text(cabling_csv(devices))
    intent = (ROOT / "intent" / "mixed.yaml").read_text()
    intent = intent.replace("fabric: mixed-vendor", f"fabric: rail-{args.gpus}")
    intent = intent.replace("subnet: 192.0.2.0/24", "subnet: 10.128.0.0/16").replace(
        "gateway: 192.0.2.1", "gateway: 10.128.0.1")
    (args.out / "intent.yaml").write_text(intent)
    shutil.copy(ROOT / "intent" / "fabricgen-intent.schema.json", args.out / "fabricgen-intent.schema.json")
    print(f"{args.gpus} GPUs: {args.gpus // GPUS_PER_HOST} hosts, {managed} managed devices → {args.out}")


if __name__ == "__main__":
    main()
