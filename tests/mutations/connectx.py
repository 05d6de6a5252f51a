"""fabricgen-nic.sh, damaged on one NIC: its values edited, its lines gone, stray lines added."""

from __future__ import annotations

from fabricgen.platforms.connectx.capability import SCRIPT

from mutations import Mutation
from mutations._hostnic import ScriptMutations, csv

nic = ScriptMutations(SCRIPT)

MUTATIONS: dict[str, dict[str, Mutation]] = {
    "rdma_device": {"change": nic.edit(lambda n: (f"rdma={n.rdma_device}", f"rdma={n.rdma_device}9"))},
    "mtu": {
        "change": nic.edit(lambda n: (f"mtu '{n.mtu}'", "mtu '1500'")),
        "add": nic.add('ip link set dev "$ifname" mtu 1500'),
    },
    "trust": {
        "change": nic.edit(lambda n: (f"--trust '{n.trust}'", "--trust 'pcp'")),
        "add": nic.add('bounded mlnx_qos -i "$ifname" --trust pcp'),  # through the script's time limit
    },
    "pfc": {
        "change": nic.edit(lambda n: (f"--pfc '{csv(n.pfc)}'", f"--pfc '{1 - n.pfc[0]},{csv(n.pfc[1:])}'")),
        "add": nic.add('mlnx_qos -i "$ifname" --pfc 1,1,1,1,1,1,1,1'),
    },
    "prio_tc": {"change": nic.edit(lambda n: (f"--prio_tc '{csv(n.prio_tc)}'", f"--prio_tc '7,{csv(n.prio_tc[1:])}'"))},
    "tsa": {"change": nic.edit(lambda n: (f"--tsa '{csv(n.tsa)}'", f"--tsa 'strict,{csv(n.tsa[1:])}'"))},
    "tcbw": {"change": nic.edit(lambda n: (f"--tcbw '{csv(n.tcbw)}'",
                                          f"--tcbw '{n.tcbw[0] + n.tcbw[2]},{n.tcbw[1]},0,{csv(n.tcbw[3:])}'"))},
    "dscp2prio": {
        "change": nic.edit(lambda n: (f" 10:{n.dscp2prio[10]} ", f" 10:{(n.dscp2prio[10] + 5) % 8} ")),
        "remove": nic.drop(r"^  dscp_setting "),  # the table keeps what --trust dscp installs: DSCP>>3
        "add": nic.add('mlnx_qos -i "$ifname" --dscp2prio set,30,3'),
    },
    "dcqcn_priorities": {
        "change": nic.edit(lambda n: (f"enable/{n.dcqcn_priorities[0]}'", f"enable/{n.dcqcn_priorities[0] + 1}'")),
        "remove": nic.drop(r"roce_(np|rp)/enable/"),
        "add": nic.add("cc_setting \"$ifname\" 'dcqcn np prio 5' 'roce_np/enable/5' '' '1'"),
    },
    "dcqcn_enabled": {"change": nic.edit(lambda n: (f"roce_np/enable/{n.dcqcn_priorities[0]}' '' '1'",
                                                   f"roce_np/enable/{n.dcqcn_priorities[0]}' '' '0'"))},
    "cnp_dscp": {"change": nic.edit(lambda n: (f"'np_cnp_dscp' '{n.cnp_dscp}'", "'np_cnp_dscp' '46'"))},
    "cnp_priority": {"change": nic.edit(lambda n: (f"'np_cnp_prio' '{n.cnp_priority}'", "'np_cnp_prio' '5'"))},
    "roce_tos": {
        "change": nic.edit(lambda n: (f"-t '{n.roce_tos}'", "-t '106'")),
        "add": nic.add('cma_roce_tos -d "$rdma" -p 1 -t 0'),
    },
}
