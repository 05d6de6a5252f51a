"""A validation runbook from the intent, bottom up: first every link and NIC pair alone (perftest), then the
collective (NCCL tests with the environment fabricgen installs), then congestion on purpose while reading the
counters that prove PFC, ECN and CNPs work, each platform in its own commands.

Commands and counter names follow the vendors' documents, cited in the text (never fabricgen's own notes).
"""

from __future__ import annotations

import itertools
from collections import defaultdict

from fabricgen.models.device import DeviceModel, Fabric, NicModel
from fabricgen.report.text import Code, md_cell, md_table, priorities

# platform -> (document, [(what, command, healthy)]); <port> is filled with a cabled data port of the device.
SWITCH_CHECKS: dict[str, tuple[str, list[tuple[str, str, str]]]] = {
    "sonic": ("SONiC Command Reference (sonic-net/sonic-utilities, doc/Command-Reference.md) and the ECN/WRED "
              "statistics HLD (sonic-net/SONiC, doc/qos/ECN_and_WRED_statistics_HLD.md)", [
        ("PFC pause frames per priority", "show pfc counters", "Rx/Tx PFC{p} grow only under congestion; 0 at rest"),
        ("PFC watchdog", "show pfcwd stats", "no storm detected / restored events"),
        ("ECN marks per queue", "show queue wredcounters <port>",
         "EcnMarked grows on the RoCE queue under incast; WredDrp stays 0 on lossless queues"),
        ("Queue drops", "show queue counters <port>", "Drop/pkts 0 on the lossless queues"),
        ("FEC / CRC and port errors", "show interfaces counters", "RX_ERR and RX_DRP do not grow"),
    ]),
    "eos": ("Arista EOS User Manual, chapters \"Data Center Bridging and Flow Control\" and \"Quality of Service\"", [
        ("PFC pause frames per priority", "show priority-flow-control counters",
         "pauses grow only under congestion; 0 at rest"),
        ("PFC watchdog", "show priority-flow-control counters watchdog", "no stuck-queue events"),
        ("ECN marks per queue", "show qos interfaces <port> ecn counters queue",
         "marks grow on the RoCE queue under incast"),
        ("Queue drops", "show interfaces <port> counters queue detail", "no drops on the lossless queues"),
        ("FEC / CRC and port errors", "show interfaces <port> counters errors",
         "FCS and symbol errors stay 0"),
    ]),
    "nvue": ("NVIDIA Cumulus Linux User Guide, \"RDMA over Converged Ethernet - RoCE\" and \"Monitoring Interfaces "
             "and Transceivers with NVUE\" (NVUE show commands)", [
        ("RoCE status: PFC, ECN, buffers", "nv show interface <port> qos roce status",
         "mode lossless, PFC on the RoCE switch-priority, ECN enabled"),
        ("PFC pauses, ECN marks, drops per priority", "nv show interface <port> qos roce counters",
         "pause and ECN counters grow only under congestion; lossless drops stay 0"),
        ("FEC / CRC and port errors", "nv show interface <port> counters", "error and drop counters do not grow"),
        ("PHY: errors FEC did not correct, raw BER", "nv show interface <port> link phy-detail",
         "symbol-errors and effective-errors stay 0 (effective-ber is the uncorrected FEC error rate)"),
    ]),
    "nxos": ("Cisco Nexus 9000 Series NX-OS Quality of Service Configuration Guide (priority flow control, "
             "queuing and scheduling)", [
        ("PFC state and pause frames", "show interface priority-flow-control",
         "PFC on for the data ports; RxPPP/TxPPP grow only under congestion"),
        ("ECN marks and queue drops", "show queuing interface <port>",
         "ECN-marked packets grow on the RoCE queue under incast; no drops on the no-drop class"),
        ("FEC / CRC and port errors", "show interface <port> counters errors", "FCS and input errors stay 0"),
    ]),
}

HOST_CHECKS: dict[str, tuple[str, list[tuple[str, str, str]]]] = {
    "connectx": ("Linux kernel documentation, \"mlx5 ethtool counters\" "
                 "(Documentation/networking/device_drivers/ethernet/mellanox/mlx5/counters.rst), and the RDMA "
                 "hw_counters under /sys/class/infiniband", [
        ("PFC pause frames on the RoCE priority", "ethtool -S <nic> | grep -E 'prio{prio}_pause'",
         "rx/tx_prio{prio}_pause grow only under congestion"),
        ("ECN marks received, CNPs sent and handled",
         "grep -H . /sys/class/infiniband/<rdma>/ports/1/hw_counters/{np_ecn_marked_roce_packets,np_cnp_sent,"
         "rp_cnp_handled,out_of_sequence}",
         "ECN marks and CNPs rise together under incast; out_of_sequence stays near 0 (no loss)"),
        ("Physical errors and drops", "ethtool -S <nic> | grep -E 'rx_crc_errors_phy|rx_symbol_err_phy|"
                                      "rx_discards_phy'", "stay 0"),
    ]),
    "linux-dcb": ("iproute2 dcb-pfc(8): `dcb pfc show` prints the per-priority PFC requests and indications", [
        ("PFC frames sent (requests) and received (indications)", "dcb pfc show dev <nic>",
         "counts on the RoCE priority grow only under congestion"),
        ("NIC counters (names are the driver's)", "ethtool -S <nic>", "error and discard counters stay 0"),
    ]),
}


def runbook(fabric: Fabric) -> str:
    hosts = [device for _, device in sorted(fabric.devices.items()) if device.host is not None and device.host.nics]
    sections = [_intro(fabric), _point_to_point(hosts), _collective(hosts), _congestion(fabric, hosts)]
    return "\n".join(section for section in sections if section)


def _intro(fabric: Fabric) -> str:
    policy = fabric.policy
    facts = ""
    if policy is not None:
        facts = (f"RDMA traffic: DSCP {policy.rdma_dscp}, priority {policy.rdma_priority}, "
                 f"{'lossless (PFC)' if policy.rdma_lossless else 'lossy (ECN only)'}; CNPs: DSCP "
                 f"{policy.cnp_dscp}, priority {policy.cnp_priority}; path MTU {policy.path_mtu}.\n\n")
    return (f"# Validation runbook: {md_cell(fabric.name)}\n\n{facts}"
            "Bottom up, each step only after the one before is clean: (1) every NIC pair alone, (2) the NCCL "
            "collectives, (3) congestion on purpose while reading the counters that prove PFC, ECN and CNPs "
            "work. Run `fabricgen diff` first: a host or switch that does not hold the intent makes every number "
            "below meaningless. Replace `<address of …>` with that NIC's data address.\n")


def _pairs(hosts: list[DeviceModel]) -> list[tuple[DeviceModel, DeviceModel, str]]:
    """A pair under each leaf (same rail, one switch hop) and a pair across each two neighbouring leaves
    (through the spine), so every leaf and every spine path is measured once without n² runs."""
    by_leaf: dict[str, list[DeviceModel]] = defaultdict(list)
    for host in hosts:
        by_leaf[_first_peer(host.host.nics[0]) if host.host else ""].append(host)
    pairs = [(group[0], group[1], f"under {leaf}") for leaf, group in sorted(by_leaf.items()) if len(group) > 1]
    leaves = sorted(by_leaf)
    pairs += [(by_leaf[a][0], by_leaf[b][0], f"{a} → {b}") for a, b in itertools.pairwise(leaves)]
    return pairs


def _first_peer(nic: NicModel) -> str:
    return nic.peer.split(":")[0] if nic.peer else ""


def _point_to_point(hosts: list[DeviceModel]) -> str:
    pairs = _pairs(hosts)
    if not pairs:
        return ""
    lines = ["## 1. Point to point: every NIC pair alone (perftest)", "",
             "perftest's `ib_write_bw` (linux-rdma/perftest): `-d` the RDMA device, `-x` the GID index "
             "(RoCEv2), `--tclass` the traffic class fabricgen sets as RoCE ToS, so the test rides the "
             "lossless class exactly as NCCL will. Healthy: close to line rate (about 90 % or more of the link "
             "speed in Gb/s) with no PFC pauses and no ECN marks on an idle fabric.", ""]
    for server, client, where in pairs:
        lines += _perftest(server, client, where)
    return "\n".join(lines) + "\n"


def _perftest(server: DeviceModel, client: DeviceModel, where: str) -> list[str]:
    assert server.host is not None and client.host is not None
    gid = server.host.nccl_env.get("NCCL_IB_GID_INDEX", "3")
    lines = [f"### {md_cell(server.name)} ↔ {md_cell(client.name)} ({md_cell(where)})", "", "```sh"]
    for s_nic, c_nic in zip(server.host.nics, client.host.nics, strict=False):
        common = f"-x {gid} --tclass={s_nic.roce_tos} -F --report_gbits"
        lines += [f"# on {server.name}: server on {s_nic.interface}",
                  f"ib_write_bw -d {s_nic.rdma_device} {common}",
                  f"# on {client.name}: client on {c_nic.interface}",
                  f"ib_write_bw -d {c_nic.rdma_device} {common} <address of {server.name} {s_nic.interface}>"]
    lines += ["```", ""]
    return lines


def _collective(hosts: list[DeviceModel]) -> str:
    if not hosts:
        return ""
    names = ",".join(host.name for host in hosts)
    return "\n".join([
        "## 2. Collectives: NCCL tests", "",
        "With the environment fabricgen installs on every host (`/etc/fabricgen/nccl.env`), run NVIDIA's "
        "nccl-tests `all_reduce_perf` and `alltoall_perf` (github.com/NVIDIA/nccl-tests) across all hosts. "
        "Healthy: the bus bandwidth (busbw) of large messages reaches the same fraction of line rate on every "
        "run, and `NCCL_DEBUG=INFO` shows the NET/IB transport on the expected RDMA devices and GID index.", "",
        "```sh",
        "set -a; . /etc/fabricgen/nccl.env; set +a",
        f"mpirun -H {names} -x NCCL_DEBUG=INFO $(sed -n 's/^\\([A-Z_]*\\)=.*/-x \\1/p' /etc/fabricgen/nccl.env) "
        "all_reduce_perf -b 8 -e 8G -f 2 -g 1",
        f"mpirun -H {names} $(sed -n 's/^\\([A-Z_]*\\)=.*/-x \\1/p' /etc/fabricgen/nccl.env) "
        "alltoall_perf -b 8 -e 4G -f 2 -g 1",
        "```", ""])


def _congestion(fabric: Fabric, hosts: list[DeviceModel]) -> str:
    lines = ["## 3. Congestion on purpose: counters that prove the lossless recipe", "",
             "Run several `alltoall_perf` (or many `ib_write_bw` clients to one server: incast) at once, read these "
             "before and after, and compare. Healthy: ECN marks on the switches and CNPs on the NICs rise "
             "together; PFC pauses appear but stay short (no watchdog events); nothing is dropped on the "
             "lossless queue; error counters do not move.", "",
             "fabricgen reads the same counters on every device at once: `fabricgen observe --baseline "
             "before-incast` before, `fabricgen observe` after, then `fabricgen health --baseline before-incast` "
             "judges the window bottom up (physical, link, congestion control, host) against this intent. "
             "`fabricgen docs` then shows each link's latest verdict and its counter trends in the fabric report: "
             "[Health](fabric.html#health).", ""]
    devices = [device for _, device in sorted(fabric.devices.items()) if device.role in ("leaf", "spine")]
    by_platform: dict[str, list[DeviceModel]] = defaultdict(list)
    for device in devices + hosts:
        by_platform[device.platform].append(device)
    for platform in sorted(by_platform):
        lines += _platform_checks(platform, by_platform[platform], fabric)
    return "\n".join(lines) + "\n"


def _platform_checks(platform: str, devices: list[DeviceModel], fabric: Fabric) -> list[str]:
    source, checks = SWITCH_CHECKS.get(platform) or HOST_CHECKS.get(platform) or ("", [])
    if not checks:
        return []
    example = devices[0]
    port, rdma = _example_port(example)
    prio = str(fabric.policy.rdma_priority) if fabric.policy else "3"
    names = ", ".join(device.name for device in devices[:6]) + (" …" if len(devices) > 6 else "")
    rows = [(what, _fill(command, port, rdma, prio), _fill(healthy, port, rdma, prio))
            for what, command, healthy in checks]
    return [f"### {platform} ({md_cell(names)})", "", f"Source: {source}. Example port: `{port}` of "
            f"{md_cell(example.name)}; lossless priorities: "
            f"{priorities(example.qos.lossless_priorities) if example.qos else prio}.", "",
            md_table(("Check", "Command", "Healthy"),
                     [(what, Code(command), healthy) for what, command, healthy in rows])]


def _example_port(device: DeviceModel) -> tuple[str, str]:
    if device.host is not None and device.host.nics:
        return device.host.nics[0].interface, device.host.nics[0].rdma_device
    cabled = [port.name for port in device.ports if port.peer and port.role in ("host", "fabric")]
    return (cabled[0] if cabled else "<port>"), ""


def _fill(text: str, port: str, rdma: str, prio: str) -> str:
    return text.replace("<port>", port).replace("<nic>", port).replace("<rdma>", rdma or "<rdma>") \
        .replace("{prio}", prio)
