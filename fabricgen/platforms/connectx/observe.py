"""NVIDIA ConnectX (mlx5) host counters: `ethtool -S` per-priority pause and discard counters, the physical
port's FEC and CRC counters, and the RDMA device's hw_counters (congestion notification and retransmission).

Names as the Linux kernel documents them: Documentation/networking/device_drivers/ethernet/mellanox/mlx5/
counters.rst (rx_prio[p]_pause, tx_prio[p]_pause, rx_prio[p]_pause_duration in µs, rx_prio[p]_buf_discard,
rx_prio[p]_cong_discard, rx_prio[p]_marked, rx_discards_phy, rx_crc_errors_phy, rx_corrected_bits_phy,
link_down_events_phy, tx_pause_storm_error_events) and NVIDIA's "Understanding mlx5 Linux Counters" for the
RDMA hw_counters (np_cnp_sent, rp_cnp_handled, rp_cnp_ignored, np_ecn_marked_roce_packets, out_of_sequence,
packet_seq_err, local_ack_timeout_err, out_of_buffer). A counter the driver does not print is simply absent.
"""

from __future__ import annotations

from fabricgen.model import DeviceModel
from fabricgen.observe.hosttext import host_command, split
from fabricgen.observe.model import Reading

# (ethtool name, metric, priority, scale), looked up by name: an mlx5 port prints hundreds of statistics.
_PRIO_STATS = [(f"{direction}_prio{p}_{name}", metric, p, scale) for p in range(8)
               for direction, name, metric, scale in (
                   ("rx", "pause", "pfc_rx_pause", 1.0), ("tx", "pause", "pfc_tx_pause", 1.0),
                   ("rx", "pause_duration", "pfc_rx_pause_duration", 1e-6),  # µs
                   ("rx", "buf_discard", "prio_buffer_discards", 1.0),
                   ("rx", "cong_discard", "prio_congestion_discards", 1.0), ("rx", "marked", "prio_ecn_marked", 1.0))]
PORT_STATS = {"rx_crc_errors_phy": "fcs_errors", "rx_symbol_err_phy": "symbol_errors",
              "rx_corrected_bits_phy": "fec_corrected", "rx_discards_phy": "rx_discards",
              "tx_pause_storm_error_events": "pause_storm_events", "carrier_changes": "carrier_transitions"}
HW_COUNTERS = {"np_cnp_sent": "cnp_sent", "rp_cnp_handled": "cnp_handled", "rp_cnp_ignored": "cnp_ignored",
               "np_ecn_marked_roce_packets": "roce_ecn_marked", "out_of_sequence": "out_of_sequence",
               "packet_seq_err": "packet_seq_errors", "local_ack_timeout_err": "local_ack_timeouts",
               "out_of_buffer": "out_of_buffer"}


def command(device: DeviceModel) -> str:
    return host_command([nic.interface for nic in (device.host.nics if device.host else [])])


def parse(device: str, text: str, rdma_to_interface: dict[str, str]) -> list[Reading]:
    """Readings per NIC interface; an RDMA device's hw_counters are filed under its interface (intent's
    rdma_device ↔ interface), or under the RDMA device's own name when the intent does not know it."""
    interfaces, rdma = split(device, text)
    readings: list[Reading] = []
    for interface, stats in sorted(interfaces.items()):
        readings += ethtool_readings(device, interface, stats)
    for rdma_device, counters in sorted(rdma.items()):
        port = rdma_to_interface.get(rdma_device, rdma_device)
        readings += [Reading(device, port, metric, None, float(counters[name])) for name, metric in HW_COUNTERS.items()
                     if name in counters]
    return readings


def ethtool_readings(device: str, interface: str, stats: dict[str, int]) -> list[Reading]:
    readings = [Reading(device, interface, metric, None, float(stats[name])) for name, metric in PORT_STATS.items()
                if name in stats and stats[name] >= 0]
    for name, metric, priority, scale in _PRIO_STATS:
        value = stats.get(name)
        if value is not None:
            readings.append(Reading(device, interface, metric, priority, value * scale))
    return readings
