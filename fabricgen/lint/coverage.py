"""Which roads and platforms each lint rule covers, per port: the "Covers" line of docs/rules.md.

A rule judges settings; the intent road (`fabricgen lint`) has every setting of every platform, resolved from the
intent and inventory. The configs road (`lint --configs`) has what each platform's config reader reads back
(``Capability.port_settings``, the table in docs/rules.md) plus the device-wide QoS and management a switch reader
reads. So a rule covers, on the configs road, the platforms whose reader reads a setting the rule judges: derived
from the readers' own declarations, so the page cannot claim a platform the reader does not read.
"""

from __future__ import annotations

from dataclasses import dataclass

from fabricgen.platforms import get_platform, platform_names


@dataclass(frozen=True)
class Coverage:
    """``roads``: "intent", "configs" or both (input rules: "load"). ``reads``: the per-port settings (names of
    ``Capability.port_settings``) the rule judges; a platform is covered on the configs road when its reader
    reads one. ``scope``: what one finding is about. ``note``: what the reader cannot give, said plainly."""

    roads: tuple[str, ...]
    reads: tuple[str, ...]
    scope: str
    note: str = ""
    readers: tuple[str, ...] = ()  # platforms whose reader reads what the rule judges, where no port setting says so


BOTH = ("intent", "configs")
SWITCH_QOS = ("qos",)
PER_QOS = "each switch port's own QoS (a port whose config binds its own maps, queues or watchdog), else the switch's"
NIC = "each RDMA NIC (device:interface)"
LINK = "each cable (device:port ↔ device:port)"
PORT = "each port (device:port)"
HOST_READERS = ("connectx", "linux-dcb")

COVERAGE: dict[str, Coverage] = {
    "FG-BUF-001": Coverage(BOTH, ("cable_m",), "each lossless switch port"),
    "FG-BUF-002": Coverage(BOTH, ("headroom",), LINK, "checked where fabricgen or the config sizes headroom"),
    "FG-BUF-003": Coverage(BOTH, ("headroom", "cable_m"), "each switch"),
    "FG-CFG-001": Coverage(("configs",), ("*",), "each device and each port: every setting its reader reads"),
    "FG-CLS-001": Coverage(BOTH, SWITCH_QOS, PER_QOS),
    "FG-CLS-002": Coverage(BOTH, ("qos", "pfc_priorities", "dscp2prio", "pfc"), f"{PORT}, by its trust and map; "
                           f"{NIC}"),
    "FG-CLS-003": Coverage(BOTH, ("trust",), NIC),
    "FG-CLS-004": Coverage(BOTH, ("dscp2prio", "qos"), f"{NIC} against its switch port's map"),
    "FG-CLS-005": Coverage(BOTH, ("roce_tos",), f"{NIC}; each host's nccl.env"),
    "FG-CLS-007": Coverage(("configs",), (), NIC, readers=HOST_READERS,
                           note="resolve always gives RoCE v2; read from each host script's RoCE mode line"),
    "FG-CLS-006": Coverage(BOTH, SWITCH_QOS, "each switch against the fabric"),
    "FG-ECN-001": Coverage(BOTH, SWITCH_QOS, PER_QOS),
    "FG-ECN-002": Coverage(BOTH, ("qos", "headroom", "pfc_priorities"), PER_QOS,
                           "where the ASIC's buffer size is known (spectrum1-4) or the config sizes the pool; "
                           "the pause point from the lossless profiles' dynamic_th (SONiC configs; else 0) or, on "
                           "Cumulus, the lossless traffic-pool's memory-percent and shared-alpha (NVIDIA's "
                           "defaults where unset; the 50 % fabricgen renders on the intent road); a Cumulus "
                           "switch whose buffer size is unknown gets a warning"),
    "FG-ECN-003": Coverage(BOTH, SWITCH_QOS, PER_QOS),
    "FG-ECN-004": Coverage(BOTH, SWITCH_QOS, PER_QOS),
    "FG-ECN-005": Coverage(BOTH, ("dcqcn_enabled", "dcqcn_priorities"), NIC),
    "FG-ECN-006": Coverage(BOTH, ("cnp_dscp", "cnp_priority", "qos"), f"{NIC}; {PER_QOS}"),
    "FG-ECN-007": Coverage(BOTH, SWITCH_QOS, PER_QOS),
    "FG-ECN-008": Coverage(BOTH, SWITCH_QOS, "each switch against the fabric"),
    "FG-ECN-009": Coverage(BOTH, (), "each host whose platform delegates DCQCN"),
    "FG-ECN-010": Coverage(("configs",), (), PER_QOS, readers=("eos", "nxos"),
                           note="the intent road's thresholds are always bytes; EOS segments or time, NX-OS packets"),
    "FG-EVD-001": Coverage(("configs",), ("*",), "each device"),
    "FG-EVD-002": Coverage(("configs",), ("*",), "each config file, at its line"),
    "FG-EVD-003": Coverage(("configs",), ("admin_up",), PORT),
    "FG-EVD-004": Coverage(("configs",), (), f"{NIC}: each `setting` line of its script, at its line",
                           readers=HOST_READERS),
    "FG-INV-001": Coverage(BOTH, (), LINK, "from the inventory's cabling"),
    "FG-INV-002": Coverage(BOTH, (), PORT, "from the inventory's cabling"),
    "FG-MGT-001": Coverage(BOTH, ("access_vlan", "tagged_vlans"), f"{PORT}: access, native and tagged/allowed VLANs"),
    "FG-MGT-002": Coverage(BOTH, (), "each switch's management interface (read by every switch reader)"),
    "FG-MGT-003": Coverage(("intent",), (), "the intent's subnets"),
    "FG-MGT-004": Coverage(BOTH, (), PORT, "from the inventory's cabling; a BMC on a data leaf is refused at load"),
    "FG-MGT-005": Coverage(BOTH, (), "each host's nccl.env"),
    "FG-MTU-001": Coverage(BOTH, ("mtu",), LINK),
    "FG-MTU-002": Coverage(BOTH, ("mtu",), f"{PORT}; a NIC above the host MTU on its own link"),
    "FG-MTU-003": Coverage(BOTH, ("mtu",), NIC),
    "FG-MTU-004": Coverage(BOTH, ("mtu",), PORT),
    "FG-MTU-005": Coverage(BOTH, ("mtu", "mode"), PORT),
    "FG-PFC-001": Coverage(BOTH, ("pfc_priorities", "pfc"), LINK),
    "FG-PFC-002": Coverage(BOTH, SWITCH_QOS, "each switch", "SONiC: per SKU (known SKUs, data.lossless_limit; "
                                                          "unknown: a warning above 2)"),
    "FG-PFC-003": Coverage(BOTH, ("qos", "pfc_priorities"), "each lossless switch port"),
    "FG-PFC-004": Coverage(BOTH, SWITCH_QOS, PER_QOS),
    "FG-PFC-009": Coverage(("configs",), (), NIC, readers=HOST_READERS,
                           note="resolve always gives host-controlled DCBX; read from each host script's DCBX line"),
    "FG-PFC-005": Coverage(BOTH, ("pfc_priorities", "pfc"), f"{PORT}; {NIC}"),
    "FG-PFC-006": Coverage(BOTH, SWITCH_QOS, PER_QOS),
    "FG-PFC-007": Coverage(BOTH, SWITCH_QOS, "each lossless switch port, by its own PFC priorities",
                           "on the configs road only SONiC has a TC→PG map to read; EOS, NVUE and NX-OS keep the "
                           "intent's"),
    "FG-PFC-008": Coverage(BOTH, SWITCH_QOS, "each lossless switch port, by its own PFC priorities",
                           "on the configs road only SONiC has a PFC priority→queue map to read; the others keep the "
                           "intent's"),
    "FG-PHY-001": Coverage(BOTH, ("speed_mbps",), LINK),
    "FG-PHY-002": Coverage(BOTH, ("fec",), LINK),
    "FG-PHY-003": Coverage(BOTH, ("fec", "speed_mbps"), PORT),
    "FG-PHY-004": Coverage(BOTH, (), LINK, "from the inventory's media and cable length"),
    "FG-SCH-001": Coverage(BOTH, ("qos", "tsa", "tcbw"), f"{PER_QOS}; {NIC}"),
    "FG-SCH-002": Coverage(BOTH, SWITCH_QOS, PER_QOS),
    "FG-SCH-003": Coverage(BOTH, SWITCH_QOS, PER_QOS),
    "FG-SCH-004": Coverage(BOTH, ("tsa", "tcbw", "prio_tc"), NIC),
    "FG-SCH-005": Coverage(BOTH, ("tsa", "tcbw", "prio_tc", "qos"), f"{NIC} against its switch port's queues"),
}


def covered_platforms(coverage: Coverage) -> list[str]:
    """The platforms whose config reader reads a setting the rule judges (all, for "*")."""
    names = platform_names()
    if coverage.readers:
        return list(coverage.readers)
    if "*" in coverage.reads:
        return names
    return [name for name in names if set(coverage.reads) & set(get_platform(name).capability.port_settings)]


def coverage_markdown(rule_id: str) -> str:
    """The "Covers" paragraph of one rule in docs/rules.md ('' for the input rules, which stop the load)."""
    coverage = COVERAGE.get(rule_id)
    if coverage is None:
        return ""
    roads = " and ".join({"intent": "`fabricgen lint` (intent)", "configs": "`lint --configs`"}[road]
                         for road in coverage.roads)
    if "configs" in coverage.roads:
        platforms = covered_platforms(coverage)
        where = (f"; on `lint --configs`: {', '.join(platforms)}" if platforms else
                 "; on `lint --configs` from the inventory and intent (nothing read from the configs)")
    else:
        where = ""
    if "intent" in coverage.roads:
        where = f", every platform on the intent road{where}"
    elif where:
        where = f", on {where.removeprefix('; on `lint --configs`: ')}"
    note = f" {coverage.note[0].upper()}{coverage.note[1:]}." if coverage.note else ""
    return f"Covers: {roads}{where}. Per finding: {coverage.scope}.{note}"
