"""NVIDIA ConnectX GPU host: an idempotent bash script (mlnx_qos, mlx5 DCQCN/CNP sysfs, RoCE ToS), a systemd
unit that re-applies it at boot (mlnx_qos settings do not survive a reboot or driver reload) and nccl.env.

Every mlnx_qos call respects mlnx_qos 1.2's rules (mlnx-tools python/mlnx_qos): lists of exactly 8 values,
``--trust`` and ``--dscp2prio`` never in one call, ``--tsa`` and ``--tcbw`` always together with zero
bandwidth on strict TCs and an ETS sum of exactly 100, and an explicit identity ``--prio_tc`` because the
mlx5 default maps priority 0 to TC 1.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from typing import Any

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
    commit_strategy="script --apply (idempotent, verifies itself) from a boot-time systemd unit",
    output_files=(SCRIPT, UNIT, NCCL_ENV),
    spelling={
        "trust": "mlnx_qos --trust dscp",
        "dscp_map": "mlnx_qos --dscp2prio set,D,P (only where P ≠ D>>3)",
        "queue_map": "mlnx_qos --prio_tc (identity)",
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


def nic_context(nic: NicModel) -> dict[str, Any]:
    q = shlex.quote
    pfc_flags = ["on" if flag else "off" for flag in nic.pfc]
    prio = nic.dcqcn_priorities
    return {
        "interface": q(nic.interface),
        "function": hostscript.nic_function(nic.interface),
        "rdma_device": q(nic.rdma_device),
        "mtu": nic.mtu,
        "trust": nic.trust,
        "pfc_arg": _csv(nic.pfc),
        "pfc_want": dcb_map("prio-pfc", pfc_flags),
        "prio_tc_arg": _csv(nic.prio_tc),
        "tsa_arg": _csv(nic.tsa),
        "tcbw_arg": _csv(nic.tcbw),
        # TCs set to 0 %: mlx5 may read them back as 100 (strict) or as a share of the zero-BW group.
        "zero_bw_tcs": " ".join(str(tc) for tc, bw in enumerate(nic.tcbw) if bw == 0),
        "ets_want": " | ".join([dcb_map("prio-tc", nic.prio_tc), dcb_map("tc-tsa", nic.tsa),
                                dcb_map("tc-bw", nic.tcbw)]),
        "dscp2prio": [{"dscp": d, "prio": p} for d, p in sorted(nic.dscp2prio.items())],
        "dcqcn": [{"prio": p, "value": 1 if nic.dcqcn_enabled else 0} for p in prio],
        "cnp_dscp": nic.cnp_dscp,
        "cnp_priority": nic.cnp_priority,
        "roce_tos": nic.roce_tos,
        "peer": nic.peer or "no peer in inventory",
    }


def render_env(device: DeviceModel) -> str:
    """nccl.env under ConnectX's header comment (hostscript.render_env writes the rest)."""
    return hostscript.render_env(device, [
        f"# fabricgen {__version__}: NCCL settings that match the fabric's RoCE class ({device.name})"])


def render(device: DeviceModel, templates: Templates) -> dict[str, str]:
    """The script, its boot-time unit and nccl.env (the layout every host platform shares: hostscript)."""
    return FILES.render(device, nic_context, render_env(device), templates)


from fabricgen.platforms.connectx import reader  # noqa: E402  (at the bottom: reader imports this module)

PLATFORM = Platform(capability=CAPABILITY, render=render, read=reader.read, owned=reader.owned)
