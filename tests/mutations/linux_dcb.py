"""fabricgen-dcb.sh, damaged on one NIC: its values edited, its lines gone, stray lines added."""

from __future__ import annotations

from fabricgen.platforms.linux_dcb.capability import SCRIPT

from mutations import Mutation
from mutations._hostnic import ScriptMutations

nic = ScriptMutations(SCRIPT)

MUTATIONS: dict[str, dict[str, Mutation]] = {
    "rdma_device": {"change": nic.edit(lambda n: (f"rdma={n.rdma_device}", f"rdma={n.rdma_device}9"))},
    "mtu": {
        "change": nic.edit(lambda n: (f"mtu '{n.mtu}'", "mtu '1500'")),
        "add": nic.add('ip link set dev "$ifname" mtu 1500'),
    },
    "trust": {"change": nic.edit(lambda n: (f'apptrust "$ifname" {n.trust}', 'apptrust "$ifname" pcp'))},
    "dscp2prio": {
        "change": nic.edit(lambda n: (f" 10:{n.dscp2prio[10]} ", f" 10:{(n.dscp2prio[10] + 5) % 8} ")),
        # No entry: unmatched traffic, priority 0 (so the DSCP taken is one the intent puts elsewhere).
        "remove": nic.edit(lambda n: next((f" {d}:{p} ", " ") for d, p in sorted(n.dscp2prio.items()) if p)),
        "add": nic.add('dcb app add dev "$ifname" dscp-prio 30:3'),
    },
    "pfc": {
        "change": nic.edit(lambda n: ("prio-pfc 0:off 1:off", "prio-pfc 0:off 1:on")),
        "add": nic.add('bounded dcb pfc set dev "$ifname" prio-pfc all:on'),  # through the script's time limit
    },
    "prio_tc": {"change": nic.edit(lambda n: (f"prio-tc 0:{n.prio_tc[0]} 1:{n.prio_tc[1]}",
                                              f"prio-tc 0:{n.prio_tc[0]} 1:7"))},
    "tsa": {"change": nic.edit(lambda n: (f"tc-tsa 0:{n.tsa[0]}", "tc-tsa 0:strict"))},
    "tcbw": {"change": nic.edit(lambda n: (f"tc-bw 0:{n.tcbw[0]} 1:{n.tcbw[1]} 2:{n.tcbw[2]}",
                                           f"tc-bw 0:{n.tcbw[0] + n.tcbw[2]} 1:{n.tcbw[1]} 2:0"))},
    "roce_tos": {
        "change": nic.edit(lambda n: (f"'{n.roce_tos}'", "'106'")),
        "add": nic.add('write_file "$port/default_roce_tos" 0'),
    },
}
