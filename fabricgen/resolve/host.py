"""GPU-host decisions: per-NIC mlnx_qos settings that mirror the switches, DCQCN/CNP, RoCE ToS, NCCL env."""

from __future__ import annotations

from typing import Any, Literal, NamedTuple

from fabricgen.models.device import HostModel, NicModel, QosModel
from fabricgen.models.diagnostics import DEVICE_FACT_MISSING
from fabricgen.models.intent import Intent, QosClass
from fabricgen.models.inventory import Device
from fabricgen.resolve.context import ResolveContext
from fabricgen.resolve.headroom import mlx5_xoff
from fabricgen.resolve.ports import speed_of
from fabricgen.resolve.qos import dscp_owner


class NicEts(NamedTuple):
    """A NIC's priority → TC map and its TCs' TSA and ETS shares, as mlnx_qos and ``dcb ets`` take them."""

    prio_tc: tuple[int, ...]
    tsa: tuple[Literal["strict", "ets"], ...]
    tcbw: tuple[int, ...]


def nic_ets(intent: Intent) -> NicEts:
    """An ETS layout every supported NIC driver accepts: each class keeps TC = its priority; a priority no class
    uses is mapped to the TC of the class unlisted traffic falls into (the switches' DSCP map sends every unlisted
    code point there too), so no traffic can reach a TC no class owns. Those TCs are strict with 0 % -- all zero,
    what dcbnl reads before any set -- rather than ETS with 0 %: ETS TCs at 0 % beside an ETS total of 100 are
    refused by bnxt_en ("rejecting ETS config starving a TC", bnxt_dcb.c ``bnxt_ets_validate``), while strict TCs
    with 0 % pass it and mlx5 (``mlx5e_dbcnl_validate_ets``: non-ETS TCs need 0 %). Strict class TCs carry the
    explicit 0 mlnx_qos demands."""
    classes = intent.qos.classes
    catch_all = _catch_all_class(intent)
    used = {cls.priority for cls in classes.values()}
    prio_tc = tuple(prio if prio in used else catch_all.priority for prio in range(8))
    tsa: list[Literal["strict", "ets"]] = ["strict"] * 8
    tcbw = [0] * 8
    for cls in classes.values():
        if not cls.scheduling.strict:
            tsa[cls.priority] = "ets"
            tcbw[cls.priority] = cls.scheduling.weight or 0
    return NicEts(prio_tc, tuple(tsa), tuple(tcbw))


def _catch_all_class(intent: Intent) -> QosClass:
    """The class of every DSCP no class lists (`dscp: default`); without one, all 64 are listed and the class of
    DSCP 0, best effort, takes the priorities no class uses."""
    owner = dscp_owner(intent)
    default = next((cls for cls in intent.qos.classes.values() if cls.dscp == "default"), None)
    return default if default is not None else intent.qos.classes[owner[0]]


# Names BMCs and host management ports go by (IPMI, Dell iDRAC, HPE iLO, Lenovo XCC, generic mgmt/bmc).
_MANAGEMENT_NAMES = ("bmc", "ipmi", "idrac", "ilo", "xcc", "mgmt")
_SLOWEST_RDMA_MBPS = 10_000  # a port at 1G is a management port: no RoCE NIC a GPU fabric uses runs that slow


def looks_like_management_port(port: str, speed_mbps: int | None) -> bool:
    """Whether a host port cabled to a data switch is in fact a BMC or management port: its name says so, or it
    runs below 10G."""
    return port.lower().startswith(_MANAGEMENT_NAMES) or (speed_mbps is not None and speed_mbps < _SLOWEST_RDMA_MBPS)


def _why(port: str, speed_mbps: int | None) -> str:
    if port.lower().startswith(_MANAGEMENT_NAMES):
        return f"its name {port!r}"
    return f"{speed_mbps} Mb/s"


def resolve_nic(ctx: ResolveContext, device: Device, port: str, qos: QosModel) -> NicModel | None:
    """One RDMA NIC of a host."""
    spec = device.data.ports[port]
    path = ("inventory", device.name, "data", "ports", port)
    peer, link = ctx.ends.get((device.name, port), (None, None))
    if looks_like_management_port(port, spec.speed):
        # Never "set rdma_device" here: following that renders a RoCE script for a BMC and makes a data leaf's
        # port lossless at 1G, with lint clean. The cable is what is wrong.
        ctx.problem((*path, "peer"), f"{device.name}:{port} looks like a BMC or management port "
                    f"({_why(port, spec.speed)}) but is cabled to data switch port {peer}: the management plane "
                    "would ride the RoCE fabric",
                    "cable it to the OOB switch (an oob-role device); only RDMA NICs go to leaves",
                    rule="FG-MGT-004")
        return None
    if spec.rdma_device is None:
        ctx.problem((*path,), f"host port {device.name}:{port} is cabled to data switch port {peer}, so it is an RDMA "
                    "NIC, but has no rdma_device", "if it is an RDMA NIC: set rdma_device (`rdma link show` lists "
                    "them, e.g. mlx5_0); if it is a BMC or management port: cable it to the OOB switch instead",
                    rule=DEVICE_FACT_MISSING)
        return None
    speed = speed_of(ctx, spec, peer)
    shared = ctx.once(f"nic-shared:{id(qos)}", lambda: _shared_nic_fields(ctx.intent, qos))
    mtu = shared["mtu"]
    # Every field given, in its order: from_resolve's fast path (32k NICs).
    return NicModel.from_resolve({
        "interface": port, "rdma_device": spec.rdma_device, **shared,
        "cable_m": link.cable_m if link else None, "peer": str(peer) if peer else None,
        "xoff_bytes": mlx5_xoff(speed or 0, link.cable_m if link else None, mtu),
        # Read from a host's config only.
        "roce_mode": None, "dcbx": None,
    })


def _shared_nic_fields(intent: Intent, qos: QosModel) -> dict[str, Any]:
    """The NicModel fields every RDMA NIC of the fabric has alike, in field order, made once: each NIC refers to
    the same lists (the models are frozen), not to 32k copies of them (at 32,768 GPUs, 160k lists)."""
    ets = nic_ets(intent)
    rdma = intent.rdma
    return {
        "mtu": intent.mtu.host, "trust": "dscp",
        "pfc": [1 if prio in qos.lossless_priorities else 0 for prio in range(8)],
        "prio_tc": list(ets.prio_tc), "tsa": list(ets.tsa), "tcbw": list(ets.tcbw),
        # The host classifies all 64 code points exactly as its leaf does, never by the firmware's DSCP>>3.
        "dscp2prio": qos.dscp_to_tc,
        "dcqcn_priorities": [qos.rdma_priority], "dcqcn_enabled": rdma.dcqcn,
        "cnp_dscp": qos.cnp_dscp, "cnp_priority": qos.cnp_priority,
        "roce_tos": qos.rdma_dscp << 2 | rdma.tos_ecn_bits,
    }


def resolve_host(ctx: ResolveContext, device: Device, rdma_ports: list[str], qos: QosModel) -> HostModel:
    """What a GPU host's scripts set: its NICs and NCCL's environment."""
    nics = [nic for port in rdma_ports if (nic := resolve_nic(ctx, device, port, qos)) is not None]
    frontend = device.data.frontend_interface
    if frontend is None:
        ctx.problem(("inventory", device.name, "data"), f"GPU host {device.name} has no frontend_interface",
                    "set data.frontend_interface: the interface NCCL bootstraps over (not an RDMA NIC)",
                    rule=DEVICE_FACT_MISSING)
    env = {
        "NCCL_IB_TC": str(qos.rdma_dscp << 2 | ctx.intent.rdma.tos_ecn_bits),
        "NCCL_IB_GID_INDEX": str(ctx.intent.rdma.gid_index),
        # "=" asks NCCL for exact names: mlx5_1 must not also match mlx5_10.
        "NCCL_IB_HCA": "=" + ",".join(f"{nic.rdma_device}:1" for nic in nics),
        "NCCL_SOCKET_IFNAME": f"={frontend}" if frontend else "",
    }
    return HostModel.from_resolve({"nics": nics, "nccl_env": env, "path_mtu": ctx.intent.rdma.path_mtu})
