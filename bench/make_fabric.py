#!/usr/bin/env python3
"""Write an intent + Nornir inventory for a rail-optimised two-tier RoCE fabric of N GPUs (deterministic).

    python bench/make_fabric.py --gpus 32768 -o /tmp/fabric-32k

N/8 hosts with 8 rail NICs at 400G. Each rail has its own plane: leaves with 64 ports (32 down to 32 hosts,
32 up), spines with 64 ports (each leaf reaches 32 of its plane's spines once). OOB switches (48 ports) take
every BMC and every switch management port. Platforms are mixed like the bundled mixed example: leaves cycle
SONiC / EOS / NVUE / NX-OS by plane, spines alternate SONiC / EOS, hosts alternate ConnectX / generic dcb.
Cables: DAC 2-3 m in the rack, optics 20-150 m to the spines.
"""

from __future__ import annotations

import argparse
import shutil
from collections.abc import Iterator
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


def port_line(platform: str, index: int, peer: str | None = None, cable: int | None = None,
              media: str | None = None) -> str:
    fields = ["speed: 400G", "fec: rs"]
    if platform == "sonic":
        fields.append(f'lanes: "{",".join(str(8 * index + k) for k in range(8))}"')
    if peer:
        fields += [f'peer: "{peer}"', f"cable_m: {cable}", f"media: {media}"]
    return f"      {port_name(platform, index)}: {{{', '.join(fields)}}}"


class Addresses:
    def __init__(self) -> None:
        self._mgmt = IPv4Network("10.128.0.0/16").hosts()
        next(self._mgmt)  # .1 is the gateway
        self._front = IPv4Network("10.64.0.0/16").hosts()

    def mgmt(self) -> str:
        return str(next(self._mgmt))

    def front(self) -> str:
        return str(next(self._front))


def build(gpus: int) -> tuple[list[str], int]:
    hosts = gpus // GPUS_PER_HOST
    per_leaf = min(HOSTS_PER_LEAF, hosts)
    if hosts < 1 or hosts % per_leaf:
        raise SystemExit(f"--gpus must be 8..256 in steps of 8, or a multiple of {GPUS_PER_HOST * HOSTS_PER_LEAF}")
    leaves_per_rail = hosts // per_leaf
    spines_per_rail = max(1, leaves_per_rail * UPLINKS_PER_LEAF // SPINE_PORTS)
    addr = Addresses()
    lines: list[str] = []
    mgmt_targets: list[str] = []
    for rail in range(GPUS_PER_HOST):
        leaf_platform = LEAF_PLATFORMS[rail % len(LEAF_PLATFORMS)]
        for leaf in range(leaves_per_rail):
            lines += list(_leaf(rail, leaf, leaf_platform, spines_per_rail, addr, mgmt_targets))
        for spine in range(spines_per_rail):
            lines += list(_spine(rail, spine, addr, mgmt_targets))
    for host in range(hosts):
        lines += list(_host(host, hosts, addr, mgmt_targets))
    lines += list(_oob(mgmt_targets, addr))
    return lines, len(mgmt_targets)


def _leaf(rail: int, leaf: int, platform: str, spines: int, addr: Addresses,
          mgmt: list[str]) -> Iterator[str]:
    name = f"r{rail}-leaf{leaf}"
    mgmt.append(f"{name}:{mgmt_name(platform)}")
    yield from (f"{name}:", f"  hostname: {addr.mgmt()}", f"  groups: [leaf_{platform}]", "  data:", "    ports:",
                f"      {mgmt_name(platform)}: {{speed: 1G}}")
    for down in range(HOSTS_PER_LEAF):
        yield port_line(platform, down)  # the host declares this link
    for up in range(UPLINKS_PER_LEAF):
        # Uplink number k of the plane goes to spine k mod S, port k div S: every spine port used once.
        k = leaf * UPLINKS_PER_LEAF + up
        spine, spine_port = k % spines, k // spines
        cable = 20 + (rail * 7 + leaf * 13 + up * 3) % 131
        spine_platform = SPINE_PLATFORMS[(rail + spine) % 2]
        peer = f"r{rail}-spine{spine}:{port_name(spine_platform, spine_port)}"
        yield port_line(platform, HOSTS_PER_LEAF + up, peer, cable, "optic")
    yield ""


def _spine(rail: int, spine: int, addr: Addresses, mgmt: list[str]) -> Iterator[str]:
    platform = SPINE_PLATFORMS[(rail + spine) % 2]
    name = f"r{rail}-spine{spine}"
    mgmt.append(f"{name}:{mgmt_name(platform)}")
    yield from (f"{name}:", f"  hostname: {addr.mgmt()}", f"  groups: [spine_{platform}]", "  data:", "    ports:",
                f"      {mgmt_name(platform)}: {{speed: 1G}}")
    yield from (port_line(platform, index) for index in range(SPINE_PORTS))
    yield ""


def _host(host: int, hosts: int, addr: Addresses, mgmt: list[str]) -> Iterator[str]:
    name = f"gpu{host:05d}"
    kind = "connectx" if host % 2 == 0 else "dcb"
    mgmt.append(f"{name}:bmc")
    yield from (f"{name}:", f"  hostname: {addr.front()}", f"  groups: [host_{kind}]", "  data:", "    ports:")
    leaf = host // min(HOSTS_PER_LEAF, hosts)
    down = host % min(HOSTS_PER_LEAF, hosts)
    for rail in range(GPUS_PER_HOST):
        platform = LEAF_PLATFORMS[rail % len(LEAF_PLATFORMS)]
        device = f"mlx5_{rail}" if kind == "connectx" else f"bnxt_re{rail}"
        peer = f"r{rail}-leaf{leaf}:{port_name(platform, down)}"
        yield (f"      rail{rail}: {{rdma_device: {device}, speed: 400G, fec: rs, peer: \"{peer}\", "
               f"cable_m: {2 + (host + rail) % 2}, media: dac}}")
    yield from ("      bmc: {speed: 1G}", "      eno1: {}", "")


def _oob(targets: list[str], addr: Addresses) -> Iterator[str]:
    for index in range(0, len(targets), OOB_PORTS):
        yield from (f"oob{index // OOB_PORTS}:", f"  hostname: {addr.mgmt()}", "  groups: [oob]", "  data:",
                    "    ports:")
        for port, target in enumerate(targets[index:index + OOB_PORTS], 1):
            yield f'      Ethernet{port}: {{speed: 1G, peer: "{target}", cable_m: 5, media: copper}}'
        yield ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gpus", type=int, required=True)
    parser.add_argument("-o", "--out", type=Path, required=True)
    args = parser.parse_args()
    lines, managed = build(args.gpus)
    inventory = args.out / "inventory"
    inventory.mkdir(parents=True, exist_ok=True)
    (inventory / "hosts.yaml").write_text("\n".join(lines) + "\n")
    (inventory / "groups.yaml").write_text(GROUPS)
    (inventory / "defaults.yaml").write_text("data: {}\n")
    intent = (ROOT / "intent" / "mixed.yaml").read_text()
    intent = intent.replace("fabric: mixed-vendor", f"fabric: rail-{args.gpus}")
    intent = intent.replace("subnet: 192.0.2.0/24", "subnet: 10.128.0.0/16").replace(
        "gateway: 192.0.2.1", "gateway: 10.128.0.1")
    (args.out / "intent.yaml").write_text(intent)
    shutil.copy(ROOT / "intent" / "fabricgen-intent.schema.json", args.out / "fabricgen-intent.schema.json")
    print(f"{args.gpus} GPUs: {args.gpus // GPUS_PER_HOST} hosts, {managed} managed devices → {args.out}")


if __name__ == "__main__":
    main()
