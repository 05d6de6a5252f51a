"""Generic Linux DCB host counters: what the NIC's driver prints in `ethtool -S`, nothing more.

There is no cross-vendor name for per-priority PFC counters in ethtool's free-form statistics; the standard
names the kernel's ethtool pause statistics use (`ethtool -I --show-pause`: tx_pause_frames, rx_pause_frames)
are link-level 802.3x, not per priority. So a generic host reports: carrier transitions (sysfs carrier_changes,
every driver), and, when its driver prints the mlx5 names (the usual RoCE NIC behind a generic-dcb host), the
same per-priority counters as the ConnectX reader. RDMA hw_counters are read the same way for any provider;
names outside the mlx5 set are ignored, not guessed.
"""

from __future__ import annotations

from fabricgen.models.device import DeviceModel
from fabricgen.observe.hosttext import host_command
from fabricgen.observe.model import Reading
from fabricgen.platforms.connectx import observe as connectx


def command(device: DeviceModel) -> str:
    return host_command([nic.interface for nic in (device.host.nics if device.host else [])])


def parse(device: str, text: str, rdma_to_interface: dict[str, str]) -> list[Reading]:
    """The same names as ConnectX where the driver prints them; whatever else it prints is not read."""
    return connectx.parse(device, text, rdma_to_interface)
