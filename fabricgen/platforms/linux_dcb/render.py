"""Generic Linux GPU host (any NIC driver with IEEE dcbnl ops, no vendor tool): an idempotent bash script that
programs the NIC through the kernel's DCB netlink with iproute2 ``dcb``, a systemd unit that re-applies it at
boot (dcbnl settings live in the driver and are lost at reboot or driver reload) and nccl.env.

Facts and their sources: iproute2 6.1's dcb(8), dcb-ets(8), dcb-pfc(8) and dcb-app(8) man pages (Debian 12),
and code read for this platform, named where it matters -- bnxt_dcb.c at torvalds/linux 0898782
(drivers/net/ethernet/broadcom/bnxt/), iproute2's dcb/dcb_app.c at 00d59f4 and dcb_ets.c at 12d41d0,
net/dcb/dcbnl.c.

* ETS before PFC, 8 explicit entries each: ``dcb ets set ... prio-tc/tc-tsa/tc-bw`` then ``dcb pfc set ...
  prio-pfc``. ``dcb`` keeps unnamed array entries from the kernel, so every entry is written. bnxt_en (the mixed
  example's BCM57608) refuses PFC until ETS is set and refuses more lossless TCs than its ``pfc-cap``
  (``bnxt_hwrm_queue_pfc_cfg``).
* Trust DSCP = DSCP APP entries. There is no firmware default DSCP map behind dcbnl, so the script installs one
  entry for **every** DSCP 0-63: the NicModel's map, which is the switches' DSCP→TC map (an unlisted DSCP goes
  to the catch-all class's priority, as on the leaf), so every host classifies every DSCP as its leaf does.
* ETS: a priority no class uses is mapped to the catch-all class's TC, and TCs no priority maps to are strict
  with 0 % (resolve.host.nic_ets): bnxt_en refuses ETS TCs at 0 % beside an ETS total of 100 ("rejecting ETS
  config starving a TC", ``bnxt_ets_validate``; kernels before b74c2a2e check all 8 TCs, later ones the TCs in
  use), and accepts strict TCs at 0 %. The APP table
  is a table, not an array (dcb-app(8)): ``add`` of DSCP 26 -> 3 keeps an existing 26 -> 0. The script gives
  ``replace`` semantics -- one priority per DSCP -- with ``dcb app del`` then ``dcb app add``: a DSCP with an
  unwanted entry loses all its entries, then gets the wanted one, so the driver's last write for it is an add.
  iproute2's own ``replace`` adds first and deletes last (dcb/dcb_app.c ``dcb_cmd_app_replace``), and bnxt_en's
  delapp writes the DSCP's hardware entry with mask 0 (``bnxt_hwrm_queue_dscp2pri_cfg``) even when another
  entry for that DSCP stays in the table; ``dcb_cmd_app_replace`` also exits 0 after "Could not add new APP
  entries". Only DSCP entries are owned; other selectors (e.g. ``dgram-port-prio 4791``) are left as found.
  ``dcb apptrust set ... order dscp`` is used where iproute2 (>= 6.2) and the driver have it (in the kernel only
  lan966x, sparx5 and DSA implement ``dcbnl_setapptrust``); elsewhere the script says so.
* PFC ``delay`` is left alone: dcb-pfc(8) says round-trip delay in bits, mlx5 reads the same field as cable
  metres (en_dcbnl.c ``mlx5e_dcbnl_ieee_setpfc``), bnxt_en stores it and never uses it; receive buffers are
  firmware-sized.
* DCQCN and CNP have no dcbnl interface: the script prints the values for the vendor tool (for
  Broadcom: bnxt_re configfs ``cc/`` or niccli) and changes nothing -- it does not pretend.
* RoCE ToS and mode: RDMA-CM configfs ``rdma_cm/<dev>/ports/1/default_roce_tos`` / ``default_roce_mode``
  written directly, as mlnx-tools' cma_roce_tos does; affects RDMA-CM users, not NCCL.
* Every setting is read back after apply: dcbnl ignores an attribute whose driver op is missing and answers
  success (net/dcb/dcbnl.c ``dcbnl_ieee_set``), so an exit status alone proves nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import NamedTuple

import fabricgen.platforms.common.hostscript as hostscript
from fabricgen import __version__
from fabricgen.models.device import DeviceModel, NicModel
from fabricgen.platforms.common.hostscript import dcb_map
from fabricgen.platforms.common.templating import Templates
from fabricgen.platforms.linux_dcb.capability import SCRIPT, UNIT

INSTALL_PATH = "/usr/local/sbin/fabricgen-dcb.sh"
FILES = hostscript.HostFiles(folder="linux_dcb", script=SCRIPT, unit=UNIT, install_path=INSTALL_PATH)

def dscp_map(nic: NicModel) -> dict[int, int]:
    """The priority of every DSCP the NIC is to trust (NicModel's dscp2prio holds all 64); none under PCP trust."""
    return _dscp_map(nic.trust, nic.dscp2prio)


def _dscp_map(trust: str, dscp2prio: Mapping[int, int]) -> dict[int, int]:
    if trust != "dscp":
        return {}
    # A DSCP without an entry is what dcbnl does with it: unmatched traffic, priority 0.
    return {dscp: dscp2prio.get(dscp, 0) for dscp in range(64)}


class NicContext(NamedTuple):
    """What the script template says about one NIC."""

    interface: str
    function: str
    rdma_device: str
    mtu: int
    peer: str
    # The rest comes from the NIC's QoS alone (_qos_context).
    ets: str
    zero_bw_tcs: str
    pfc: str
    tcs: int
    lossless: int
    dscp_args: str
    trust: str
    dcqcn: str
    cnp: str
    roce_tos: int


QosContext = tuple[str, str, str, int, int, str, str, str, str, int]  # NicContext's fields from ets on


def nic_context(nic: NicModel) -> NicContext:
    return NicContext(*(hostscript.nic_identity(nic) + _qos_context(hostscript.NicQos.of(nic))))


@lru_cache(maxsize=64)  # one NicQos per fabric: formatted once, not on each of thousands of NICs
def _qos_context(qos: hostscript.NicQos) -> QosContext:
    pfc_flags = ["on" if flag else "off" for flag in qos.pfc]
    ets = hostscript.ets_maps(qos.prio_tc, qos.tsa, qos.tcbw)
    dcqcn = ", ".join(str(prio) for prio in sorted(qos.dcqcn_priorities)) or "none"
    dscp_prio = _dscp_map(qos.trust, dict(qos.dscp2prio))
    return (
        " ".join(ets),
        # TCs set to 0 %: a driver may read them back as 100 (mlx5 strict TCs) or as a share of a zero-BW group.
        " ".join(str(tc) for tc, bw in enumerate(qos.tcbw) if bw == 0),
        dcb_map("prio-pfc", pfc_flags),
        max(qos.prio_tc) + 1,
        sum(qos.pfc),
        # Leading space per entry: `dscp_setting "$ifname"` alone (no entries) flushes the DSCP APP entries.
        "".join(f" {dscp}:{prio}" for dscp, prio in sorted(dscp_prio.items())),
        qos.trust,
        f"DCQCN {'on' if qos.dcqcn_enabled else 'off'} for priority {dcqcn}",
        f"CNP DSCP {qos.cnp_dscp} and 802.1p priority {qos.cnp_priority}",
        qos.roce_tos,
    )


def render_env(device: DeviceModel) -> str:
    """nccl.env under this platform's header, which also says what NCCL_IB_TC and NCCL_IB_HCA hold."""
    return hostscript.render_env(device, [
        f"# fabricgen {__version__}: NCCL settings of {device.name} that match the fabric's RoCE class",
        "# NCCL_IB_TC is the ToS byte (DSCP << 2); NCCL_IB_HCA: the RDMA devices fabricgen-dcb.sh configures."])


def render(device: DeviceModel, templates: Templates) -> dict[str, str]:
    """The script, its boot-time unit and nccl.env (the layout every host platform shares: hostscript)."""
    return FILES.render(device, nic_context, render_env(device), templates)
