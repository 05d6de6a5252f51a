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

from fabricgen import __version__
from fabricgen.model import DeviceModel, NicModel
from fabricgen.platforms import Capability, Platform, hostscript
from fabricgen.platforms.hostscript import dcb_map
from fabricgen.templating import Templates

SCRIPT = "fabricgen-nic.sh"
UNIT = "fabricgen-nic.service"
NCCL_ENV = hostscript.NCCL_ENV
INSTALL_PATH = "/usr/local/sbin/fabricgen-nic.sh"
FILES = hostscript.HostFiles(folder="connectx", script=SCRIPT, unit=UNIT, install_path=INSTALL_PATH)

CAPABILITY = Capability(
    name="connectx",
    kind="host",
    target="NVIDIA ConnectX-6/7 (mlx5) with mlnx-tools (mlnx_qos 1.2), iproute2 dcb; MLNX_OFED or upstream",
    max_mtu=9978,
    mtu_semantics="l3",
    lossless_class_limit=8,
    ecn_threshold_unit="n/a",
    ecn_granularity_bytes=1,
    programs_headroom=False,  # firmware sizes receive buffers unless manual buffer mode is chosen
    mgmt_interface="bmc",
    mgmt_vrf_fixed_name=None,
    watchdog_step_ms=1,
    watchdog_actions=("drop", "forward", "alert"),
    owned_sections=("DCBX mode", "trust", "dscp2prio", "PFC", "ETS (prio_tc/tsa/tcbw)", "netdev MTU",
                    "DCQCN enable (roce_np/roce_rp)", "CNP DSCP and 802.1p priority", "RDMA-CM RoCE ToS and mode"),
    napalm_driver="fabricgen_host",
    deploy=hostscript.HOST_DEPLOY,
    commit_strategy=("script --apply (idempotent, verifies itself, each tool call time-limited) from a boot-time "
                     "systemd unit"),
    port_settings=("rdma_device", "mtu", "trust", "pfc", "prio_tc", "tsa", "tcbw", "dscp2prio", "dcqcn_priorities",
                   "dcqcn_enabled", "cnp_dscp", "cnp_priority", "roce_tos"),
    ets_zero_share="accepted",  # mlx5e_dbcnl_validate_ets: only the ETS sum (100) and 0 % on non-ETS TCs
    output_files=(SCRIPT, UNIT, NCCL_ENV),
    spelling={
        "trust": "mlnx_qos --trust dscp",
        "dscp_map": "mlnx_qos --dscp2prio set,D,P for every DSCP whose APP entry differs (all 64 owned)",
        "queue_map": "mlnx_qos --prio_tc (a class's priority → its TC; other priorities → the catch-all class's TC)",
        "pfc": "mlnx_qos --pfc (8 flags)",
        "ecn": "n/a (NIC is the notification/reaction point)",
        "scheduling": "mlnx_qos --tsa + --tcbw together",
        "mtu": "ip link set dev IF mtu",
        "dcqcn": "ecn/roce_np|roce_rp/enable/<prio>, roce_np/cnp_dscp, cnp_802p_prio (MLNX_OFED) or debugfs",
        "roce_tos": "cma_roce_tos -t, cma_roce_mode -m 2",
        "nccl": "nccl.env: NCCL_IB_TC, NCCL_IB_GID_INDEX, NCCL_IB_HCA, NCCL_SOCKET_IFNAME",
    },
)


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
        " | ".join([dcb_map("prio-tc", qos.prio_tc), dcb_map("tc-tsa", qos.tsa), dcb_map("tc-bw", qos.tcbw)]),
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


from fabricgen.platforms.connectx import reader  # noqa: E402  (at the bottom: reader imports this module)

PLATFORM = Platform(capability=CAPABILITY, render=render, read=reader.read, owned=reader.owned)
