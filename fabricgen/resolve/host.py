"""GPU-host decisions: per-NIC mlnx_qos settings that mirror the switches, DCQCN/CNP, RoCE ToS, NCCL env."""

from __future__ import annotations

from typing import Literal

from fabricgen.model import HostModel, NicModel, QosModel
from fabricgen.resolve.context import ResolveContext
from fabricgen.resolve.headroom import mlx5_xoff
from fabricgen.resolve.ports import speed_of
from fabricgen.resolve.qos import dscp_owner
from fabricgen.schema.inventory import Device


def nic_ets(ctx: ResolveContext) -> tuple[list[Literal["strict", "ets"]], list[int]]:
    """TSA and bandwidth per TC (TC = priority). Unused TCs are ETS with 0 %, which mlx5 accepts and which
    keeps stray host traffic out of strict priority; strict TCs carry an explicit 0 as mlnx_qos demands."""
    tsa: list[Literal["strict", "ets"]] = ["ets"] * 8
    tcbw = [0] * 8
    for cls in ctx.intent.qos.classes.values():
        if cls.scheduling.strict:
            tsa[cls.priority] = "strict"
        else:
            tcbw[cls.priority] = cls.scheduling.weight or 0
    return tsa, tcbw


def nic_dscp2prio(ctx: ResolveContext) -> dict[int, int]:
    """Trust DSCP maps DSCP d to priority d>>3 on ConnectX; set only the class DSCPs that must differ."""
    classes = ctx.intent.qos.classes
    overrides: dict[int, int] = {}
    for dscp, name in sorted(dscp_owner(ctx.intent).items()):
        cls = classes[name]
        if cls.dscp != "default" and dscp >> 3 != cls.priority:
            overrides[dscp] = cls.priority
    return overrides


def resolve_nic(ctx: ResolveContext, device: Device, port: str, qos: QosModel) -> NicModel | None:
    """One RDMA NIC of a host."""
    spec = device.data.ports[port]
    path = ("inventory", device.name, "data", "ports", port)
    if spec.rdma_device is None:
        ctx.problem((*path,), f"RDMA port {device.name}:{port} has no rdma_device",
                    "set rdma_device (e.g. mlx5_0; see `rdma link show`)")
        return None
    peer, link = ctx.ends.get((device.name, port), (None, None))
    speed = speed_of(ctx, spec, peer)
    tsa, tcbw = ctx.once("nic_ets", lambda: nic_ets(ctx))
    rdma = ctx.intent.rdma
    mtu = ctx.intent.mtu.host
    return NicModel.from_resolve({
        "interface": port, "rdma_device": spec.rdma_device, "mtu": mtu, "trust": "dscp",
        "pfc": [1 if prio in qos.lossless_priorities else 0 for prio in range(8)],
        "prio_tc": list(range(8)), "tsa": list(tsa), "tcbw": list(tcbw),
        "dscp2prio": dict(ctx.once("nic_dscp2prio", lambda: nic_dscp2prio(ctx))),
        "dcqcn_priorities": [qos.rdma_priority], "dcqcn_enabled": rdma.dcqcn,
        "cnp_dscp": qos.cnp_dscp, "cnp_priority": qos.cnp_priority,
        "roce_tos": qos.rdma_dscp << 2 | rdma.tos_ecn_bits,
        "cable_m": link.cable_m if link else None, "peer": str(peer) if peer else None,
        "xoff_bytes": mlx5_xoff(speed or 0, link.cable_m if link else None, mtu),
    })


def resolve_host(ctx: ResolveContext, device: Device, rdma_ports: list[str], qos: QosModel) -> HostModel:
    """What a GPU host's scripts set: its NICs and NCCL's environment."""
    nics = [nic for port in rdma_ports if (nic := resolve_nic(ctx, device, port, qos)) is not None]
    frontend = device.data.frontend_interface
    if frontend is None:
        ctx.problem(("inventory", device.name, "data"), f"GPU host {device.name} has no frontend_interface",
                    "set data.frontend_interface: the interface NCCL bootstraps over (not an RDMA NIC)")
    env = {
        "NCCL_IB_TC": str(qos.rdma_dscp << 2 | ctx.intent.rdma.tos_ecn_bits),
        "NCCL_IB_GID_INDEX": str(ctx.intent.rdma.gid_index),
        # "=" asks NCCL for exact names: mlx5_1 must not also match mlx5_10.
        "NCCL_IB_HCA": "=" + ",".join(f"{nic.rdma_device}:1" for nic in nics),
        "NCCL_SOCKET_IFNAME": f"={frontend}" if frontend else "",
    }
    return HostModel.from_resolve({"nics": nics, "nccl_env": env, "path_mtu": ctx.intent.rdma.path_mtu})
