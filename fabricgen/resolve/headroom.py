"""PFC headroom: how many bytes a lossless priority group must still absorb after it sends PAUSE.

Switch side — the SONiC dynamic-buffer formula for NVIDIA Spectrum (sonic-swss
``cfgmgr/buffer_headroom_mellanox.lua``), with the per-ASIC constants SONiC ships in
``platform/mellanox/asic_table.j2``::

    peer_response = pause_quanta[speed] * 512 / 8                 # IEEE 802.3 31B: sender reaction, bytes
    cable         = 2 * L[m] * speed[Mb/s] * 1e9 / 198e6 / 8192   # round trip on the cable (SONiC's units)
    propagation   = port_mtu + cable + 2*gearbox + mac_phy_delay + peer_response
    factor        = cell/64 if cell > 128 else 2*cell/(1+cell)    # worst case: small packets waste cells
    occupancy     = (100 - small% + small% * factor) / 100
    xoff = ceil1k(lossless_mtu + propagation * occupancy)
    xon  = ceil1k(pipeline_latency)            (8-lane ports: pipeline_latency*2 - 1024)
    size = ceil1k(xon) with a shared headroom pool, else ceil1k(xoff + xon (+ port_mtu on 8-lane ports))

The alternative ``vendor-table`` method takes the rows SONiC ships for the SKU (``pg_profile_lookup.ini``),
rounding the cable up to the next row — what buffermgrd programs in the static buffer model.

NIC side — the mlx5 kernel driver's xoff (``drivers/net/ethernet/mellanox/mlx5/core/en/port_buffer.c``)::

    xoff = (301 + 216*L/100) * max(speed_G, 40) + 272*MTU/100      (integer arithmetic, L default 7 m)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from fabricgen.model import HeadroomModel


@dataclass(frozen=True)
class AsicBufferConstants:
    cell_bytes: int
    pipeline_latency_kb: int
    mac_phy_delay_kb: float
    source: str


_ASIC_TABLE = "sonic-buildimage platform/mellanox/asic_table.j2"
ASIC_CONSTANTS: dict[str, AsicBufferConstants] = {
    "spectrum1": AsicBufferConstants(96, 19, 0.8, _ASIC_TABLE),
    "spectrum2": AsicBufferConstants(144, 19, 0.8, _ASIC_TABLE),
    "spectrum3": AsicBufferConstants(144, 19, 0.8, _ASIC_TABLE),
    "spectrum4": AsicBufferConstants(192, 19, 0.8, _ASIC_TABLE),
    "spectrum5": AsicBufferConstants(192, 19, 0.8, _ASIC_TABLE),
    "spectrum6": AsicBufferConstants(256, 42, 0.8, _ASIC_TABLE),
}

# Total packet buffer per ASIC (NVIDIA Spectrum datasheets: SN2000 16 MB, SN3000 42 MB, SN4000 64 MB,
# SN5000 160 MB); the budget lint holds the sum of lossless headroom against.
ASIC_BUFFER_BYTES: dict[str, int] = {
    "spectrum1": 16 * 1024 * 1024, "spectrum2": 42 * 1024 * 1024, "spectrum3": 64 * 1024 * 1024,
    "spectrum4": 160 * 1024 * 1024,
}

# IEEE 802.3 31B.3.7 pause quanta per operating speed (Mb/s); one quantum = 512 bit times.
PAUSE_QUANTA: dict[int, int] = {
    800000: 905, 400000: 905, 200000: 453, 100000: 394, 50000: 147,
    40000: 118, 25000: 80, 10000: 67, 1000: 2, 100: 1,
}
SPEED_OF_LIGHT_M_PER_S = 198_000_000  # in fibre/copper, as SONiC assumes


@dataclass(frozen=True)
class HeadroomInputs:
    speed_mbps: int
    cable_m: int
    port_mtu: int
    lanes: int
    lossless_mtu: int = 1024
    small_packet_percent: int = 50
    shared_headroom_pool: bool = False
    gearbox_delay_ns: int = 0


def _ceil_1k(value: float) -> int:
    return math.ceil(value / 1024) * 1024


def spectrum_headroom(asic: str, params: HeadroomInputs) -> HeadroomModel:
    """Headroom of one lossless PG by the SONiC/NVIDIA formula. Raises KeyError for unknown ASIC/speed."""
    consts = ASIC_CONSTANTS[asic]
    pipeline_latency = consts.pipeline_latency_kb * 1024
    speed_overhead = 0
    if params.lanes == 8:  # 8-lane ports split headroom over two buffers (mlxsw "Adjust headroom for 8x")
        pipeline_latency = pipeline_latency * 2 - 1024
        speed_overhead = params.port_mtu
    cell = consts.cell_bytes
    factor = cell / 64 if cell > 128 else 2 * cell / (1 + cell)
    occupancy = (100 - params.small_packet_percent + params.small_packet_percent * factor) / 100
    peer_response = PAUSE_QUANTA[params.speed_mbps] * 512 / 8
    cable = 2 * params.cable_m * params.speed_mbps * 1_000_000_000 / SPEED_OF_LIGHT_M_PER_S / 8192
    gearbox = params.speed_mbps * params.gearbox_delay_ns / 8192
    propagation = params.port_mtu + cable + 2 * gearbox + consts.mac_phy_delay_kb * 1024 + peer_response
    xoff = _ceil_1k(params.lossless_mtu + propagation * occupancy)
    xon = _ceil_1k(pipeline_latency)
    size = _ceil_1k(xon if params.shared_headroom_pool else xoff + xon + speed_overhead)
    return HeadroomModel(xon=xon, xoff=xoff, size=size,
                         method=f"formula: buffer_headroom_mellanox.lua, {asic} constants from {consts.source}")


@dataclass(frozen=True)
class VendorRow:
    speed_mbps: int
    cable_m: int
    size: int
    xon: int
    xoff: int


# Rows of pg_profile_lookup.ini shipped with SONiC for the SKU (speed, cable, size, xon, xoff).
VENDOR_TABLES: dict[str, tuple[str, tuple[VendorRow, ...]]] = {
    "ACS-MSN4700": ("sonic-buildimage device/mellanox/x86_64-mlnx_msn4700-r0/ACS-MSN4700/pg_profile_lookup.ini", (
        VendorRow(100000, 5, 53248, 19456, 33792), VendorRow(100000, 40, 63488, 19456, 44032),
        VendorRow(100000, 300, 137216, 19456, 117760),
        VendorRow(400000, 5, 86016, 37888, 38912), VendorRow(400000, 40, 124928, 37888, 77824),
        VendorRow(400000, 300, 420864, 37888, 373760),
    )),
    "ACS-MSN2700": ("sonic-buildimage device/mellanox/x86_64-mlnx_msn2700-r0/ACS-MSN2700/pg_profile_lookup.ini", (
        VendorRow(100000, 5, 50176, 19456, 30720), VendorRow(100000, 40, 58368, 19456, 38912),
        VendorRow(100000, 300, 123904, 19456, 104448),
    )),
}


def vendor_table_headroom(sku: str, speed_mbps: int, cable_m: int) -> HeadroomModel | None:
    """The shipped row for this speed with the shortest cable ≥ ``cable_m``; None if the table has none."""
    source, rows = VENDOR_TABLES[sku]
    fitting = sorted((r for r in rows if r.speed_mbps == speed_mbps and r.cable_m >= cable_m),
                     key=lambda r: r.cable_m)
    if not fitting:
        return None
    row = fitting[0]
    return HeadroomModel(xon=row.xon, xoff=row.xoff, size=row.size,
                         method=f"vendor-table: {row.cable_m}m row of {source}")


MLX5_DEFAULT_CABLE_M = 7


def mlx5_xoff(speed_mbps: int, cable_m: int | None, mtu: int) -> int:
    """ConnectX receive-buffer xoff, bytes, exactly as the kernel computes it (integer C arithmetic)."""
    cable = MLX5_DEFAULT_CABLE_M if cable_m is None or not 0 < cable_m < 1000 else cable_m
    speed_gbps = max(speed_mbps // 1000, 40)
    return (301 + 216 * cable // 100) * speed_gbps + 272 * mtu // 100
