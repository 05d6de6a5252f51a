"""NVIDIA ConnectX GPU host: an idempotent bash script (mlnx_qos, mlx5 DCQCN/CNP sysfs, RoCE ToS), a systemd
unit that re-applies it at boot (mlnx_qos settings do not survive a reboot or driver reload) and nccl.env.

Every mlnx_qos call respects mlnx_qos 1.2's rules (mlnx-tools python/mlnx_qos): lists of exactly 8 values,
``--trust`` and ``--dscp2prio`` never in one call, ``--tsa`` and ``--tcbw`` always together with zero
bandwidth on strict TCs and an ETS sum of exactly 100, and an explicit ``--prio_tc`` because the mlx5 default
maps priority 0 to TC 1.

The DSCP map is owned whole: under DSCP trust mlx5 holds one DCB APP entry per DSCP (``--trust dscp`` installs
DSCP d → d>>3 for all 64; ``mlx5e_dcbnl_ieee_setapp`` replaces a DSCP's entry), and the host must classify every
code point as its leaf does, so the script compares all 64 entries (``dcb -N app show``) and sets each one that
differs in one ``mlnx_qos`` call (``--dscp2prio`` repeats: optparse ``action="append"`` in mlnx_qos).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import NamedTuple

import fabricgen.platforms.common.hostscript as hostscript
from fabricgen import __version__
from fabricgen.models.device import DeviceModel, NicModel
from fabricgen.platforms.common.hostscript import dcb_map
from fabricgen.platforms.common.templating import Templates
from fabricgen.platforms.connectx.capability import SCRIPT, UNIT

INSTALL_PATH = "/usr/local/sbin/fabricgen-nic.sh"
FILES = hostscript.HostFiles(folder="connectx", script=SCRIPT, unit=UNIT, install_path=INSTALL_PATH)

def _csv(values: Sequence[int | str]) -> str:
    return ",".join(str(v) for v in values)


class DcqcnEntry(NamedTuple):
    prio: int
    value: int


class NicContext(NamedTuple):
    """What the script template says about one NIC."""

    interface: str
    function: str
    rdma_device: str
    mtu: int
    peer: str
    # The rest comes from the NIC's QoS alone (_qos_context).
    trust: str
    pfc_arg: str
    pfc_want: str
    prio_tc_arg: str
    tsa_arg: str
    tcbw_arg: str
    zero_bw_tcs: str
    ets_want: str
    dscp_entries: str  # " D:P" for each of the 64 DSCPs, the arguments of dscp_setting; empty under PCP trust
    dcqcn: tuple[DcqcnEntry, ...]
    cnp_dscp: int
    cnp_priority: int
    roce_tos: int


# NicContext's fields from trust on
QosContext = tuple[str, str, str, str, str, str, str, str, str, tuple[DcqcnEntry, ...], int, int, int]


def nic_context(nic: NicModel) -> NicContext:
    return NicContext(*(hostscript.nic_identity(nic) + _qos_context(hostscript.NicQos.of(nic))))


@lru_cache(maxsize=64)  # one NicQos per fabric: formatted once, not on each of thousands of NICs
def _qos_context(qos: hostscript.NicQos) -> QosContext:
    pfc_flags = ["on" if flag else "off" for flag in qos.pfc]
    return (
        qos.trust,
        _csv(qos.pfc),
        dcb_map("prio-pfc", pfc_flags),
        _csv(qos.prio_tc),
        _csv(qos.tsa),
        _csv(qos.tcbw),
        # TCs set to 0 %: mlx5 may read them back as 100 (strict) or as a share of the zero-BW group.
        " ".join(str(tc) for tc, bw in enumerate(qos.tcbw) if bw == 0),
        " | ".join(hostscript.ets_maps(qos.prio_tc, qos.tsa, qos.tcbw)),
        "".join(f" {dscp}:{prio}" for dscp, prio in qos.dscp2prio) if qos.trust == "dscp" else "",
        tuple(DcqcnEntry(p, 1 if qos.dcqcn_enabled else 0) for p in qos.dcqcn_priorities),
        qos.cnp_dscp,
        qos.cnp_priority,
        qos.roce_tos,
    )


def render_env(device: DeviceModel) -> str:
    """nccl.env under ConnectX's header comment (hostscript.render_env writes the rest)."""
    return hostscript.render_env(device, [
        f"# fabricgen {__version__}: NCCL settings that match the fabric's RoCE class ({device.name})"])


def render(device: DeviceModel, templates: Templates) -> dict[str, str]:
    """The script, its boot-time unit and nccl.env (the layout every host platform shares: hostscript)."""
    return FILES.render(device, nic_context, render_env(device), templates)
