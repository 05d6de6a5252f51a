"""PFC headroom: how many bytes a lossless priority group must still absorb after it sends PAUSE.

Switch side — the NVIDIA Spectrum formula of SONiC's dynamic buffer model (sonic-swss
``cfgmgr/buffer_headroom_mellanox.lua``, which buffermgrd runs for every lossless PG), with the per-ASIC
constants SONiC ships in sonic-buildimage ``platform/mellanox/asic_table.j2``. The formula changed between
SONiC releases, so it is computed as the release the switch runs computes it (``SONIC_RELEASES``)::

    peer_response = pause_quanta[speed] * 512 / 8                 # IEEE 802.3 31B: sender reaction, bytes
    cable         = 2 * L[m] * speed[Mb/s] * 1e9 / 198e6 / 8192   # round trip on the cable (/ 8000 since #3235)
    tile          = speed[Gb/s] * 120 / 8                         # Spectrum-4/5 only, since #3235
    gearbox       = speed[Mb/s] * gearbox_delay[ns] / 8192            # the platform's PHY gearbox, if it has one
    propagation   = port_mtu + cable + 2*gearbox + mac_phy_delay + peer_response + tile
    factor        = cell/64 if cell > 128 else 2*cell/(1+cell)    # worst case: small packets waste cells
                                                                  # (rounded up to a whole number since #3235)
    small%        = small_packet_percentage                       # a share of packets; since #3235 of bytes:
                  = 100*64 / ((small_packet_percentage*64 + (100-small_packet_percentage)*lossless_mtu)/100)
    occupancy     = (100 - small% + small% * factor) / 100
    xoff = ceil1k(lossless_mtu + propagation * occupancy)
           (+ 18 KiB on Spectrum-6, and + 2 KiB when still more than 2 KiB below the all-small-packets xoff
            without a shared headroom pool: both since #4757/#4797)
    xon  = ceil1k(pipeline_latency)            (8-lane ports: pipeline_latency*2, before #3235 minus 1024)
    size = ceil1k(xon) with a shared headroom pool, else ceil1k(xoff + xon (+ port_mtu on 8-lane ports))

The alternative ``vendor-table`` method takes the rows SONiC ships for the SKU (``pg_profile_lookup.ini``),
rounding the cable up to the next row — what buffermgrd programs in the traditional buffer model.

NIC side — the mlx5 kernel driver's xoff (``drivers/net/ethernet/mellanox/mlx5/core/en/port_buffer.c``)::

    xoff = (301 + 216*L/100) * max(speed_G, 40) + 272*MTU/100      (integer arithmetic, L default 7 m)
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Literal

from fabricgen.models.device import HeadroomModel

BufferModel = Literal["traditional", "dynamic"]


@dataclass(frozen=True)
class AsicBufferConstants:
    cell_bytes: int
    pipeline_latency_kb: int
    mac_phy_delay_kb: float
    source: str
    generation: int  # Spectrum-N: the formula treats some generations apart (the last digit of SONiC's ASIC key)


_ASIC_TABLE = "sonic-buildimage platform/mellanox/asic_table.j2"
ASIC_CONSTANTS: dict[str, AsicBufferConstants] = {
    "spectrum1": AsicBufferConstants(96, 19, 0.8, _ASIC_TABLE, 1),
    "spectrum2": AsicBufferConstants(144, 19, 0.8, _ASIC_TABLE, 2),
    "spectrum3": AsicBufferConstants(144, 19, 0.8, _ASIC_TABLE, 3),
    "spectrum4": AsicBufferConstants(192, 19, 0.8, _ASIC_TABLE, 4),
    "spectrum5": AsicBufferConstants(192, 19, 0.8, _ASIC_TABLE, 5),
    "spectrum6": AsicBufferConstants(256, 42, 0.8, _ASIC_TABLE, 6),
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
class HeadroomFormula:
    """One revision of sonic-swss ``cfgmgr/buffer_headroom_mellanox.lua``; the flags name what changed."""

    name: str
    # sonic-swss #3235 (Sept 2024): small packets counted by bytes, not packets; the worst-case factor rounded up;
    # cable bytes over 8000 instead of 8192; 8-lane xon doubled without the 1 KiB discount; Spectrum-4/5 "tile".
    byte_based: bool
    # sonic-swss #4757 (+2 KiB when a small-packet share below 100 % leaves xoff short of the worst case, without
    # a shared headroom pool) and #4797 (+18 KiB on Spectrum-6), July/August 2026.
    compensated: bool


FORMULA_BEFORE_3235 = HeadroomFormula("before sonic-swss #3235", byte_based=False, compensated=False)
FORMULA_3235 = HeadroomFormula("sonic-swss #3235", byte_based=True, compensated=False)
FORMULA_4797 = HeadroomFormula("sonic-swss #3235 + #4757 + #4797", byte_based=True, compensated=True)


@dataclass(frozen=True)
class SonicRelease:
    """What a SONiC release's dynamic buffer model computes headroom with."""

    formula: HeadroomFormula
    # LOSSLESS_TRAFFIC_PATTERN|AZURE small_packet_percentage that sonic-buildimage's buffers_config.j2 writes in
    # the dynamic model (the formula reads it from CONFIG_DB): 100, then 50 since sonic-buildimage #20632.
    template_small_packet_percent: int
    template_lossless_mtu: int = 1024


# The release branches of sonic-swss / sonic-buildimage, as each branch's buffer_headroom_mellanox.lua reads:
# 202305 and 202311 predate #3235; 202405 took it as the backport #3342; 202605 has #4757 and #4797.
SONIC_RELEASES: dict[str, SonicRelease] = {
    "202305": SonicRelease(FORMULA_BEFORE_3235, 100),
    "202311": SonicRelease(FORMULA_BEFORE_3235, 100),
    "202405": SonicRelease(FORMULA_3235, 100),
    "202411": SonicRelease(FORMULA_3235, 50),
    "202505": SonicRelease(FORMULA_3235, 50),
    "202511": SonicRelease(FORMULA_3235, 50),
    "202605": SonicRelease(FORMULA_4797, 50),
}
DEFAULT_SONIC_RELEASE = "202411"  # the SONiC target fabricgen renders and validates for


def default_buffer_model(asic: str | None) -> BufferModel:
    """DEVICE_METADATA buffer_model as the vendor's SONiC image sets it at first boot: sonic-buildimage
    ``platform/mellanox/rules.mk`` builds NVIDIA Spectrum images with ``SONIC_BUFFER_MODEL=dynamic``
    (``files/build_templates/init_cfg.json.j2``); every other vendor's image is ``traditional``."""
    return "dynamic" if asic in ASIC_CONSTANTS else "traditional"


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
    formula: HeadroomFormula = SONIC_RELEASES[DEFAULT_SONIC_RELEASE].formula


# The gearbox delay buffermgrd passes the formula (STATE_DB PERIPHERAL_TABLE, the model named by
# PORT_PERIPHERAL_TABLE|global), ns, per platform: a property of the hardware, not a choice the intent makes.
# sonic-buildimage platform/mellanox/peripheral_table.j2 gives MELLANOX-GEARBOX-3800 a gearbox_delay of 400, and
# device/mellanox/x86_64-mlnx_msn3800-r0/port_peripheral_config.j2 makes it that platform's model; no other NVIDIA
# platform has one. Every SKU of the platform names it (ACS-MSN3800, Mellanox-SN3800-D112C8, ...).
GEARBOX_DELAY_NS: dict[str, int] = {"SN3800": 400}


def gearbox_delay_ns(hardware: str | None) -> int:
    """The gearbox delay of the platform ``hardware`` (a SKU) names; 0 for a platform without a gearbox."""
    return next((delay for model, delay in GEARBOX_DELAY_NS.items() if hardware and model in hardware), 0)


_MINIMAL_PACKET = 64  # bytes: the worst case for cell waste
_SPECTRUM6_COMPENSATION = 18 * 1024  # sonic-swss #4797
_SMALL_PACKET_COMPENSATION = 2 * 1024  # sonic-swss #4757


def _ceil_1k(value: float) -> int:
    return math.ceil(value / 1024) * 1024


def _worst_case_factor(cell: int, formula: HeadroomFormula) -> float:
    """How many bytes of buffer a minimal packet takes per byte, at worst."""
    factor = cell / _MINIMAL_PACKET if cell > 2 * _MINIMAL_PACKET else 2 * cell / (1 + cell)
    return math.ceil(factor) if formula.byte_based else factor


def _small_packet_share(params: HeadroomInputs) -> float:
    """The percentage the occupancy weighs with the worst-case factor: of packets, or (since #3235) of bytes."""
    percent = params.small_packet_percent
    if not params.formula.byte_based:
        return percent
    average = (percent * _MINIMAL_PACKET + (100 - percent) * params.lossless_mtu) / 100
    return 100 * _MINIMAL_PACKET / average


def _propagation_bytes(consts: AsicBufferConstants, params: HeadroomInputs) -> float:
    """Bytes that still arrive after PAUSE is sent: one port MTU, the cable's round trip, gearbox and PHY delay,
    the peer's reaction time and (since #3235, Spectrum-4/5) the bytes on the ASIC's tile."""
    speed, byte_based = params.speed_mbps, params.formula.byte_based
    peer_response = PAUSE_QUANTA[speed] * 512 / 8
    cable = 2 * params.cable_m * speed * 1_000_000_000 / SPEED_OF_LIGHT_M_PER_S / (8000 if byte_based else 8192)
    gearbox = speed * params.gearbox_delay_ns / 8192
    tile = speed / 1000 * 120 / 8 if byte_based and consts.generation in (4, 5) else 0
    return params.port_mtu + cable + 2 * gearbox + consts.mac_phy_delay_kb * 1024 + peer_response + tile


def _xoff(consts: AsicBufferConstants, params: HeadroomInputs) -> int:
    factor = _worst_case_factor(consts.cell_bytes, params.formula)
    share = _small_packet_share(params)
    occupancy = (100 - share + share * factor) / 100
    propagation = _propagation_bytes(consts, params)
    xoff = _ceil_1k(params.lossless_mtu + propagation * occupancy)
    if not params.formula.compensated:
        return xoff
    if consts.generation == 6:
        xoff += _SPECTRUM6_COMPENSATION
    if not params.shared_headroom_pool and params.small_packet_percent != 100:
        all_small = _ceil_1k(params.lossless_mtu + propagation * factor)
        if xoff + _SMALL_PACKET_COMPENSATION < all_small:
            xoff += _SMALL_PACKET_COMPENSATION
    return xoff


def spectrum_headroom(asic: str, params: HeadroomInputs) -> HeadroomModel:
    """Headroom of one lossless PG by buffermgrd's formula revision ``params.formula``. Raises KeyError for an
    unknown ASIC or speed."""
    consts = ASIC_CONSTANTS[asic]
    pipeline_latency = consts.pipeline_latency_kb * 1024
    speed_overhead = 0
    if params.lanes == 8:  # 8-lane ports split headroom over two buffers (mlxsw "Adjust headroom for 8x")
        pipeline_latency = pipeline_latency * 2 - (0 if params.formula.byte_based else 1024)
        speed_overhead = params.port_mtu
    xoff = _xoff(consts, params)
    xon = _ceil_1k(pipeline_latency)
    size = _ceil_1k(xon if params.shared_headroom_pool else xoff + xon + speed_overhead)
    gearbox = f", gearbox delay {params.gearbox_delay_ns} ns" if params.gearbox_delay_ns else ""
    return HeadroomModel(xon=xon, xoff=xoff, size=size,
                         method=f"formula: buffer_headroom_mellanox.lua {params.formula.name}, {asic} constants "
                                f"from {consts.source}{gearbox}")


def sonic_headroom(asic: str, params: HeadroomInputs, release: str, buffer_model: BufferModel) -> HeadroomModel:
    """The headroom a SONiC switch of ``release`` ends up with, by that release's formula: fabricgen's profile
    (traditional buffer model), or what buffermgrd computes itself from the traffic pattern fabricgen writes
    (dynamic). Raises KeyError for an unknown release, ASIC or speed."""
    headroom = spectrum_headroom(asic, replace(params, formula=SONIC_RELEASES[release].formula))
    update: dict[str, object] = {"release": release, "buffer_model": buffer_model}
    if buffer_model == "dynamic":
        update |= {"method": f"{headroom.method}; SONiC {release}, dynamic buffer model: computed by buffermgrd",
                   "lossless_mtu": params.lossless_mtu, "small_packet_percent": params.small_packet_percent}
    else:
        update["method"] = f"{headroom.method}; SONiC {release}"
    return headroom.model_copy(update=update)


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
