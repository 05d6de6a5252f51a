"""NVIDIA ConnectX (mlx5) host counters: `ethtool -S` per-priority pause and discard counters, the physical
port's FEC and CRC counters, and the RDMA device's hw_counters (congestion notification and retransmission).

Names as the Linux kernel documents them: Documentation/networking/device_drivers/ethernet/mellanox/mlx5/
counters.rst (rx_prio[p]_pause, tx_prio[p]_pause, rx_prio[p]_pause_duration in µs, rx_prio[p]_buf_discard,
rx_prio[p]_cong_discard, rx_prio[p]_marked, rx_discards_phy, rx_crc_errors_phy, rx_corrected_bits_phy,
rx_pcs_symbol_err_phy: "symbol errors that wasn't corrected by FEC correction algorithm or that FEC algorithm was
not active on this interface",
link_down_events_phy, tx_pause_storm_error_events) and NVIDIA's "Understanding mlx5 Linux Counters" for the
RDMA hw_counters (np_cnp_sent, rp_cnp_handled, rp_cnp_ignored, np_ecn_marked_roce_packets, out_of_sequence,
packet_seq_err, local_ack_timeout_err, out_of_buffer). A counter the driver does not print is simply absent.
"""

from __future__ import annotations

from fabricgen.models.device import DeviceModel
from fabricgen.observe.hosttext import ethtool_sections, host_command, hw_counters
from fabricgen.observe.model import ParseError, Reading

# (ethtool name, metric, priority, scale), looked up by name: an mlx5 port prints hundreds of statistics.
_PRIO_STATS = [(f"{direction}_prio{p}_{name}", metric, p, scale) for p in range(8)
               for direction, name, metric, scale in (
                   ("rx", "pause", "pfc_rx_pause", 1.0), ("tx", "pause", "pfc_tx_pause", 1.0),
                   ("rx", "pause_duration", "pfc_rx_pause_duration", 1e-6),  # µs
                   ("rx", "buf_discard", "prio_buffer_discards", 1.0),
                   ("rx", "cong_discard", "prio_congestion_discards", 1.0), ("rx", "marked", "prio_ecn_marked", 1.0))]
PORT_STATS = {"rx_crc_errors_phy": "fcs_errors", "rx_symbol_err_phy": "symbol_errors",
              "rx_corrected_bits_phy": "fec_corrected", "rx_pcs_symbol_err_phy": "fec_uncorrected_symbols",
              "rx_discards_phy": "rx_discards",
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
    interfaces = _ethtool_stats(ethtool_sections(text))
    rdma = hw_counters(text)
    if not interfaces and not rdma:
        raise ParseError(f"{device}: the counter command printed no ethtool statistics and no RDMA hw_counters")
    readings: list[Reading] = []
    for interface, stats in sorted(interfaces.items()):
        _stat_readings(readings, device, interface, stats)
    for rdma_device, counters in sorted(rdma.items()):
        port = rdma_to_interface.get(rdma_device, rdma_device)
        readings += [Reading(device, port, metric, None, float(counters[name])) for name, metric in HW_COUNTERS.items()
                     if name in counters]
    return readings


def ethtool_readings(device: str, interface: str, stats: dict[str, int]) -> list[Reading]:
    """The readings of one interface's `ethtool -S` statistics (already split into name → value)."""
    readings: list[Reading] = []
    _stat_readings(readings, device, interface, {name: str(value) for name, value in stats.items()})
    return readings


# Every statistic read, in reading order (port-wide first, then per priority): (ethtool name, metric, priority,
# scale, read only when ≥ 0). The readings come out in this order whatever order the driver prints in.
_READ: list[tuple[str, str, int | None, float, bool]] = (
    [(name, metric, None, 1.0, True) for name, metric in PORT_STATS.items()]
    + [(name, metric, priority, scale, False) for name, metric, priority, scale in _PRIO_STATS])


def _ethtool_stats(sections: list[tuple[str, list[tuple[str, str]]]]) -> dict[str, dict[str, str]]:
    """{interface: {statistic: digits}}, built in C (dict of the printed pairs): an mlx5 port prints hundreds of
    statistics and 55 are read. A repeated statistic or section keeps its last value."""
    interfaces: dict[str, dict[str, str]] = {}
    for name, pairs in sections:
        stats = interfaces.get(name)
        if stats is None:
            interfaces[name] = dict(pairs)
        else:
            stats.update(pairs)
    return interfaces


def _stat_readings(readings: list[Reading], device: str, interface: str, stats: dict[str, str]) -> None:
    get = stats.get
    append = readings.append
    for name, metric, priority, scale, only_non_negative in _READ:
        digits = get(name)
        if digits is not None:
            value = int(digits)  # int first, as ethtool prints integers: "-0" is 0, not float's -0.0
            if only_non_negative and value < 0:
                continue  # carrier_changes prints -1 when sysfs has no such file
            append(Reading(device, interface, metric, priority, float(value) * scale))
