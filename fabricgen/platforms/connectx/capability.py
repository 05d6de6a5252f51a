"""NVIDIA ConnectX GPU host: the capability record — what fabricgen can express on it, its limits and how it deploys
— and the vendor facts the record rests on."""

from __future__ import annotations

import fabricgen.platforms.common.hostscript as hostscript
from fabricgen.platforms import Capability

SCRIPT = "fabricgen-nic.sh"
UNIT = "fabricgen-nic.service"
NCCL_ENV = hostscript.NCCL_ENV
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
