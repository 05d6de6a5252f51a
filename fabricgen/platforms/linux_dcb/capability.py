"""Linux dcb GPU host: the capability record — what fabricgen can express on it, its limits and how it deploys — and
the vendor facts the record rests on."""

from __future__ import annotations

import fabricgen.platforms.common.hostscript as hostscript
from fabricgen.platforms import Capability

SCRIPT = "fabricgen-dcb.sh"
UNIT = "fabricgen-dcb.service"
NCCL_ENV = hostscript.NCCL_ENV
CAPABILITY = Capability(
    name="linux-dcb",
    kind="host",
    target="Debian 12 (kernel 6.1, iproute2 6.1 dcb) with a NIC driver that has IEEE dcbnl ops (bnxt_en/bnxt_re "
           "for BCM57608); dcb apptrust where iproute2 >= 6.2 and the driver have it",
    max_mtu=9500,  # bnxt_en BNXT_MAX_MTU (bnxt.h); other drivers differ (mlx5 9978): the lowest common bound here
    mtu_semantics="l3",
    lossless_class_limit=8,  # the dcbnl PFC mask has 8 bits; a driver's pfc-cap may be lower (the script says so)
    ecn_threshold_unit="n/a",
    ecn_granularity_bytes=1,
    programs_headroom=False,  # firmware sizes receive buffers; bnxt_en has no dcbnl buffer ops
    mgmt_interface="bmc",
    mgmt_vrf_fixed_name=None,
    watchdog_step_ms=1,  # the PFC watchdog is the switches' (no dcbnl interface for one on a host), as for connectx
    watchdog_actions=("drop", "forward", "alert"),
    delegated_features=("dcqcn",),  # no generic interface: bnxt_re configfs / niccli
    owned_sections=("DCBX mode (host ieee)", "ETS (prio-tc/tc-tsa/tc-bw)", "PFC (prio-pfc)",
                    "DSCP APP entries (all 64 DSCPs)", "APP trust order (where iproute2 and the driver have it)",
                    "netdev MTU", "RDMA-CM RoCE ToS and mode"),
    napalm_driver="fabricgen_host",
    deploy=hostscript.HOST_DEPLOY,
    commit_strategy=("script --apply (idempotent, verifies itself, each tool call time-limited) from a boot-time "
                     "systemd unit"),
    port_settings=("rdma_device", "mtu", "trust", "dscp2prio", "pfc", "prio_tc", "tsa", "tcbw", "roce_tos"),
    # bnxt_en's bnxt_ets_validate: "rejecting ETS config starving a TC"; the lowest common bound of the drivers.
    ets_zero_share="refused",
    output_files=(SCRIPT, UNIT, NCCL_ENV),
    spelling={
        "trust": "dcb app dscp-prio entries for all 64 DSCPs (+ dcb apptrust set ... order dscp where supported)",
        "dscp_map": "dcb app del/add dev IF dscp-prio D:P (one priority per DSCP)",
        "queue_map": "dcb ets set dev IF prio-tc (a class's priority → its TC; other priorities → the catch-all "
                     "class's TC)",
        "pfc": "dcb pfc set dev IF prio-pfc (8 entries)",
        "ecn": "n/a (NIC is the notification/reaction point)",
        "scheduling": "dcb ets set dev IF tc-tsa + tc-bw together",
        "mtu": "ip link set dev IF mtu",
        "roce_tos": "rdma_cm configfs ports/1/default_roce_tos and default_roce_mode",
        "nccl": "nccl.env: NCCL_IB_TC, NCCL_IB_GID_INDEX, NCCL_IB_HCA, NCCL_SOCKET_IFNAME",
    },
)
