"""NVIDIA Cumulus NVUE: the capability record — what fabricgen can express on it, its limits and how it deploys —
and the vendor facts the record rests on."""

from __future__ import annotations

from dataclasses import dataclass

from fabricgen.models.device import AlphaRatio, LosslessPoolModel
from fabricgen.platforms import Capability

COMMANDS = "nvue.commands"
YAML_FILE = "nvue.yaml"
@dataclass(frozen=True)
class Release:
    """The NVUE spellings that differ between Cumulus Linux releases (only the ones rendered here)."""

    version: str
    ip_family: dict[int, str]  # address family container under interface: 4 -> "ipv4"
    interface_vrf: tuple[str, ...]  # path under `interface <if>` that puts it in a VRF
    dhcp_client_state: tuple[str, ...] | None  # under the family container; None: no such leaf
    enable: str = "enable"  # qos pfc tx/rx, congestion-control ecn, interface qos pfc-watchdog state
    disable: str = "disable"
    disabled: str = "disabled"  # the 5.15 on/off -> enabled/disabled renames

    @property
    def label(self) -> str:
        return f"NVIDIA Cumulus Linux {self.version}"


RELEASES: dict[str, Release] = {
    "5.15": Release(version="5.15", ip_family={4: "ipv4", 6: "ipv6"}, interface_vrf=("vrf",),
                    dhcp_client_state=("dhcp-client", "state")),
}
RELEASE = RELEASES["5.15"]

# Buffer pools, as NVIDIA's Cumulus Linux 5.14 User Guide, "Quality of Service" page, documents them
# (https://docs.nvidia.com/networking-ethernet-software/cumulus-linux-514/Layer-1-and-Switch-Ports/Quality-of-Service/):
# `qos traffic-pool <pool> memory-percent` is the pool's share of the switch's shared buffer ("Flow Control
# Buffers": `default-lossless memory-percent 50` is `ingress_service_pool.1.percent = 50.0`; "Advanced Buffer
# Tuning": default-lossless and roce-lossless are ingress/egress pool 1, default-lossy pool 0). "Cumulus Linux
# allocates 100% of the buffer memory to the default-lossy traffic pool by default", and lossless PGs then stay in
# pool 0 (qos_infra.conf, "Default Configuration Files": `#flow_control.ingress_service_pool = 0`,
# `ingress_service_pool.0.percent = 100`). One lossless PG may take alpha × the pool's free buffer, alpha 1
# unless `qos advance-buffer-config default-global ingress-lossless-buffer shared-alpha` says otherwise
# (qos_infra.conf: "Ingress buffer dynamic buffering alpha for lossless PGs (if any; Default: ALPHA_1)"; "Each
# shared buffer pool can use a maximum of [total_buffer * (alpha / (alpha+1))]").
LOSSLESS_POOL_PERCENT = 50  # what fabricgen renders: "Flow Control Buffers", default-lossless 50 + default-lossy 50
DEFAULT_LOSSY_POOL_PERCENT = 100
LOSSLESS_ALPHA: AlphaRatio = "1"
# `nv set qos roce` (lossless mode) gives roce-lossless half the buffer: `nv show qos roce`, "RoCE pool config",
# roce-reserved-ingress Dynamic 50% for switch priority 3 (Cumulus Linux 5.9 User Guide, "RDMA over Converged
# Ethernet - RoCE", "Verify RoCE Configuration", https://docs.nvidia.com/networking-ethernet-software/
# cumulus-linux-59/Layer-1-and-Switch-Ports/Quality-of-Service/RDMA-over-Converged-Ethernet-RoCE/);
# lossless-single-ipool keeps lossy and lossless in one ingress pool, lossy-default-ingress 100% for switch
# priorities 0-7 (the 5.15 page, "Single Shared Buffer Pool" and its `nv show qos roce`).
ROCE_LOSSLESS_POOL_PERCENT = 50
RENDERED_POOL = LosslessPoolModel(
    percent=LOSSLESS_POOL_PERCENT, alpha=LOSSLESS_ALPHA,
    method=f"traffic-pool default-lossless memory-percent {LOSSLESS_POOL_PERCENT} as fabricgen renders it; "
           "shared-alpha not rendered: NVIDIA's default for lossless PGs")

MAX_MTU = 9216  # `link mtu`: "Interface MTU (default:9216 | integer:552 - 9216)" (NVUE-CLI page)
CAPABILITY = Capability(
    name="nvue",
    kind="switch",
    target=f"{RELEASE.label} (NVUE; nv set commands and nv config patch YAML)",
    max_mtu=MAX_MTU,
    mtu_semantics="l3",  # `link mtu` is the Linux netdev MTU: IP packet size, Ethernet header not counted
    # One lossless pool (default-lossless, or roce-lossless with `qos roce`) and one lossless priority group
    # ("QoS currently supports a single lossless priority group", NVUE reference, shared-headroom-pool): a PFC
    # profile accepts several priorities (`switch-priority 3,5`) but they would share one PG's headroom and
    # pool, not be two independent lossless classes.
    lossless_class_limit=1,
    ecn_threshold_unit="bytes",  # `min-threshold`/`max-threshold` take whole bytes
    ecn_granularity_bytes=1,  # as configured; the ASIC rounds on its own (Spectrum-4: 150000 -> 159744 B)
    programs_headroom=False,  # Cumulus sizes headroom from `cable-length`; fabricgen renders only the length
    headroom_from_cable=True,
    lossless_pool=RENDERED_POOL,
    mgmt_interface="eth0",
    mgmt_vrf_fixed_name="mgmt",  # management VRF `mgmt` is on by default and eth0 is in it
    watchdog_step_ms=1,  # `polling-interval` in ms; detection = robustness x polling-interval (see render)
    watchdog_actions=("drop",),  # the watchdog "discards new incoming packets to this egress queue"
    watchdog_timers_in_polls=("detection_ms",),  # detection = robustness × polling-interval
    owned_sections=(
        "qos mapping default-global (trust, dscp)", "qos egress-queue-mapping default-global",
        "qos traffic-pool default-lossless, default-lossy (memory-percent)",
        "qos pfc pfc-sp<priorities>-<cable>m", "qos pfc-watchdog", "qos congestion-control default-global",
        "qos egress-scheduler default-global",
        "interface swp*: type, description, link state, link speed, link fec, link mtu, bridge access, qos pfc "
        "profile, qos pfc-watchdog", "interface eth0: type, vrf, ipv4|ipv6 address and dhcp-client, link mtu",
        "vrf <management vrf> router static default route", "bridge domain br_default vlan (access VLANs)",
    ),
    napalm_driver="fabricgen_nvue",
    deploy={
        "diff": "the owned subtree as nv config patch files (unset, then set; SFTP) in a fresh pending revision, nv "
            "config diff, then the revision detached and deleted",
        "commit": "the same patch applied with nv config apply --confirm <T>s -y (NVUE's own revert timer)",
        "confirm": "one shell on the switch under fabricgen's lock there (the apply takes it too): the apply waiting "
            "for its confirm checked to be this run's, nv config apply --confirm-yes -y, the run's fate recorded, "
            "then nv config save",
        "rollback": "a pending commit: --confirm-no; a confirmed one: nv config apply <the revision before "
            "fabricgen-<run>>",
        "save": "nv config save on confirm",
        "lab": "real: OpenSSH, SFTP, NVIDIA's NVUE 5.15 object model validating every applied revision; emulated: nv "
            "revisions, apply with confirm, history, save in tests/targets/nvue.py",
    },
    commit_strategy="the owned scope of the applied config vs nvue.yaml (the ports it names) as nv config patch "
                    "files (unset, then set) in a fresh pending revision -> nv config diff -> nv config apply "
                    "--confirm <T>s -y -m fabricgen-<run> (NVUE rolls back by itself unless confirmed) -> checks -> "
                    "nv config apply --confirm-yes + nv config save; later rollback: nv config history -> nv config "
                    "apply <revision before fabricgen-<run>>",
    output_files=(YAML_FILE, COMMANDS),  # nvue.yaml first: the file read back and the one lint points at
    # Each port's effective state as reader.py reads it: `qos` is the QoS in effect on the port where its own
    # bindings (mapping, egress-scheduler, congestion-control profile; watchdog) differ from the switch's.
    port_settings=("admin_up", "description", "speed_mbps", "fec", "mode", "access_vlan", "tagged_vlans", "mtu",
                   "pfc_priorities", "lossless", "cable_m", "qos"),
    port_anchor=r"^[ \t]*interface:",  # the set block's interfaces: qos and bridge name ports too
    config_words={
        "admin_up": "{port} > state", "mtu": "{port} > mtu", "speed_mbps": "{port} > speed",
        "fec": "{port} > fec", "description": "{port} > description", "pfc_priorities": "{port} > pfc",
        "lossless": "{port} > pfc", "qos": "{port} > qos", "access_vlan": "{port} > bridge",
        "tagged_vlans": "{port} > bridge", "mode": "{port} > bridge",
    },
    device_words={
        "qos.queues": "egress-scheduler", "qos.queues.ecn": "congestion-control",
        "qos.tc_to_queue": "egress-queue-mapping",
    },
    spelling={
        "trust": "qos mapping default-global trust l3 (DSCP; l2: PCP, port: none)",
        "dscp_map": "qos mapping default-global dscp <list> switch-priority N (all 64)",
        "queue_map": "qos egress-queue-mapping default-global switch-priority N traffic-class Q",
        "pfc": "qos pfc pfc-sp<P>-<L>m switch-priority, tx/rx enable; interface qos pfc profile",
        "pfc_watchdog": "qos pfc-watchdog polling-interval + robustness (detection = product); interface qos "
                        "pfc-watchdog state enable; restores after one polling interval without pauses",
        "headroom": "computed by Cumulus from qos pfc <profile> cable-length (rendered per port group)",
        "ecn": "qos congestion-control default-global traffic-class Q ecn, min-/max-threshold (bytes), "
               "probability",
        "scheduling": "qos egress-scheduler default-global traffic-class Q mode strict | dwrr + bw-percent",
        "mtu": "interface swpN link mtu",
        "mgmt": "interface eth0 vrf mgmt, ipv4 address; vrf mgmt router static 0.0.0.0/0 via <gw>",
    },
)
