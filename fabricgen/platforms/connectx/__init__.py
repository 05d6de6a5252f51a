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
from fabricgen.platforms import Capability, Platform
from fabricgen.templating import Templates

SCRIPT = "fabricgen-nic.sh"
UNIT = "fabricgen-nic.service"
NCCL_ENV = "nccl.env"
INSTALL_PATH = "/usr/local/sbin/fabricgen-nic.sh"

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


def _dcb_line(keyword: str, values: Sequence[Any]) -> str:
    """How `dcb ... show` prints an 8-entry map, e.g. ``prio-pfc 0:off 1:off 2:off 3:on ...``."""
    return " ".join([keyword] + [f"{index}:{value}" for index, value in enumerate(values)])


def nic_context(nic: NicModel) -> dict[str, Any]:
    q = shlex.quote
    pfc_flags = ["on" if flag else "off" for flag in nic.pfc]
    prio = nic.dcqcn_priorities
    return {
        "interface": q(nic.interface),
        "function": "nic_" + "".join(c if c.isalnum() else "_" for c in nic.interface),
        "rdma_device": q(nic.rdma_device),
        "mtu": nic.mtu,
        "trust": nic.trust,
        "pfc_arg": _csv(nic.pfc),
        "pfc_want": _dcb_line("prio-pfc", pfc_flags),
        "prio_tc_arg": _csv(nic.prio_tc),
        "tsa_arg": _csv(nic.tsa),
        "tcbw_arg": _csv(nic.tcbw),
        # TCs set to 0 %: mlx5 may read them back as 100 (strict) or as a share of the zero-BW group.
        "zero_bw_tcs": " ".join(str(tc) for tc, bw in enumerate(nic.tcbw) if bw == 0),
        "ets_want": " | ".join([_dcb_line("prio-tc", nic.prio_tc), _dcb_line("tc-tsa", nic.tsa),
                                _dcb_line("tc-bw", nic.tcbw)]),
        "dscp2prio": [{"dscp": d, "prio": p} for d, p in sorted(nic.dscp2prio.items())],
        "dcqcn": [{"prio": p, "value": 1 if nic.dcqcn_enabled else 0} for p in prio],
        "cnp_dscp": nic.cnp_dscp,
        "cnp_priority": nic.cnp_priority,
        "roce_tos": nic.roce_tos,
        "peer": nic.peer or "no peer in inventory",
    }


def render_script(device: DeviceModel, templates: Templates) -> str:
    assert device.host is not None
    return templates.render("connectx/fabricgen-nic.sh.j2", version=__version__, device=device,
                            nics=[nic_context(nic) for nic in device.host.nics])


def render_env(device: DeviceModel) -> str:
    assert device.host is not None
    lines = [f"# fabricgen {__version__}: NCCL settings that match the fabric's RoCE class ({device.name})",
             "# Load with `set -a; . ./nccl.env; set +a`, or copy the lines into /etc/nccl.conf."]
    lines += [f"{key}={value}" for key, value in sorted(device.host.nccl_env.items())]
    return "\n".join(lines) + "\n"


def render(device: DeviceModel, templates: Templates) -> dict[str, str]:
    return {
        SCRIPT: render_script(device, templates),
        UNIT: templates.render("connectx/fabricgen-nic.service.j2", version=__version__, device=device,
                               install_path=INSTALL_PATH),
        NCCL_ENV: render_env(device),
    }


from fabricgen.platforms.connectx import reader  # noqa: E402  (at the bottom: reader imports this module)

PLATFORM = Platform(capability=CAPABILITY, render=render, read=reader.read, owned=reader.owned)
