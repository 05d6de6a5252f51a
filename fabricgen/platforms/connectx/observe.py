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

import re

from fabricgen.model import DeviceModel
from fabricgen.observe.hosttext import host_command, split
from fabricgen.observe.model import Reading, reading

_PRIO = re.compile(r"^(rx|tx)_prio([0-7])_(pause|pause_duration|buf_discard|cong_discard|marked)$")
_PRIO_METRIC = {("rx", "pause"): "pfc_rx_pause", ("tx", "pause"): "pfc_tx_pause",
                ("rx", "pause_duration"): "pfc_rx_pause_duration", ("rx", "buf_discard"): "prio_buffer_discards",
                ("rx", "cong_discard"): "prio_congestion_discards", ("rx", "marked"): "prio_ecn_marked"}
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
        readings += [reading(device, port, metric, counters[name]) for name, metric in HW_COUNTERS.items()
                     if name in counters]
    return readings


def ethtool_readings(device: str, interface: str, stats: dict[str, int]) -> list[Reading]:
    readings = [reading(device, interface, metric, stats[name]) for name, metric in PORT_STATS.items()
                if name in stats and stats[name] >= 0]
    for name, value in stats.items():
        match = _PRIO.match(name)
        metric = _PRIO_METRIC.get((match.group(1), match.group(3))) if match else None
        if match and metric:
            number = value / 1e6 if metric == "pfc_rx_pause_duration" else value
            readings.append(reading(device, interface, metric, number, int(match.group(2))))
    return readings
