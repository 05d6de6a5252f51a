"""SONiC headroom per target release and per buffer model.

The expected numbers were produced by running sonic-swss's own ``cfgmgr/buffer_headroom_mellanox.lua`` (under
LuaJIT, with a mocked Redis holding asic_table.j2's constants) at three commits: 3943093d4^ (before #3235),
3943093d4 (#3235) and 422271e7e (#4757 + #4797). The formula matched that Lua on 145,152 combinations of ASIC,
speed, cable, lanes, small-packet share, lossless MTU, port MTU and shared headroom pool.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

import fabricgen.platforms.sonic.read as reader
from fabricgen.api import render_device
from fabricgen.load.fabric import FabricInput, load
from fabricgen.models.device import DeviceModel, Fabric, PortModel
from fabricgen.models.diagnostics import InputError
from fabricgen.models.intent import Intent
from fabricgen.platforms import ConfigReadError
from fabricgen.platforms.sonic.capability import CAPABILITY
from fabricgen.platforms.sonic.render import BASELINE, GCU_REFUSES_NEW_BUFFER_PROFILE, build_config_db
from fabricgen.resolve import resolve
from fabricgen.resolve.headroom import (
    DEFAULT_SONIC_RELEASE,
    FORMULA_3235,
    FORMULA_4797,
    FORMULA_BEFORE_3235,
    SONIC_RELEASES,
    HeadroomFormula,
    HeadroomInputs,
    default_buffer_model,
    gearbox_delay_ns,
    sonic_headroom,
    spectrum_headroom,
)

from conftest import ROOT, load_example

if TYPE_CHECKING:  # libyang may be absent: the sonic_yang fixture (tests/conftest.py) skips then
    from fabricgen.validate.sonic_yang import SonicYangValidator

# The issue's port: a 400G SN4700 (Spectrum-3) port on 8 lanes, 2 m of cable, port MTU 9100, lossless MTU 1024,
# 50 % small packets (the intent's default), no shared headroom pool.
ISSUE_PORT = HeadroomInputs(speed_mbps=400000, cable_m=2, port_mtu=9100, lanes=8)


def test_202411_computes_the_numbers_of_the_issue() -> None:
    headroom = sonic_headroom("spectrum3", ISSUE_PORT, "202411", "traditional")
    assert (headroom.xon, headroom.xoff, headroom.size) == (38912, 87040, 135168)
    assert headroom.release == "202411" and "#3235" in headroom.method


def test_202311_keeps_the_formula_from_before_pr_3235() -> None:
    headroom = sonic_headroom("spectrum3", ISSUE_PORT, "202311", "traditional")
    assert (headroom.xon, headroom.xoff, headroom.size) == (37888, 113664, 160768)
    assert "before sonic-swss #3235" in headroom.method


@pytest.mark.parametrize(("release", "formula", "template_percent"), [
    ("202305", FORMULA_BEFORE_3235, 100), ("202311", FORMULA_BEFORE_3235, 100),
    ("202405", FORMULA_3235, 100),  # the 202405 branch took #3235 as the backport #3342
    ("202411", FORMULA_3235, 50), ("202505", FORMULA_3235, 50), ("202511", FORMULA_3235, 50),
    ("202605", FORMULA_4797, 50)])
def test_release_table(release: str, formula: HeadroomFormula, template_percent: int) -> None:
    """Each release branch's Lua, and the small-packet share its buffers_config.j2 writes (50 since #20632)."""
    assert SONIC_RELEASES[release].formula == formula
    assert SONIC_RELEASES[release].template_small_packet_percent == template_percent


# (formula, asic, speed, cable, lanes, small-packet %, shared pool) -> (xon, xoff, size), port MTU 9100.
LUA_RESULTS = [
    (FORMULA_BEFORE_3235, "spectrum3", 400000, 45, 8, 50, False, (37888, 147456, 194560)),
    (FORMULA_3235, "spectrum3", 400000, 45, 8, 50, False, (38912, 113664, 161792)),
    (FORMULA_4797, "spectrum3", 400000, 45, 8, 50, False, (38912, 115712, 163840)),  # +2 KiB (#4757)
    (FORMULA_BEFORE_3235, "spectrum3", 400000, 40, 4, 50, True, (19456, 143360, 19456)),
    (FORMULA_3235, "spectrum3", 400000, 40, 4, 50, True, (19456, 110592, 19456)),
    (FORMULA_4797, "spectrum3", 400000, 40, 4, 50, True, (19456, 110592, 19456)),  # no +2 KiB with a pool
    (FORMULA_BEFORE_3235, "spectrum3", 400000, 2, 8, 100, False, (37888, 156672, 203776)),
    (FORMULA_3235, "spectrum3", 400000, 2, 8, 100, False, (38912, 207872, 256000)),  # factor 1.99 → 2
    (FORMULA_BEFORE_3235, "spectrum6", 800000, 5, 8, 50, False, (84992, 183296, 277504)),
    (FORMULA_3235, "spectrum6", 800000, 5, 8, 50, False, (86016, 100352, 195584)),
    (FORMULA_4797, "spectrum6", 800000, 5, 8, 50, False, (86016, 120832, 216064)),  # +18 KiB (#4797), +2 KiB
    (FORMULA_BEFORE_3235, "spectrum4", 800000, 40, 8, 50, False, (37888, 216064, 263168)),
    (FORMULA_3235, "spectrum4", 800000, 40, 8, 50, False, (38912, 150528, 198656)),  # with 12 KB on the tile
]


@pytest.mark.parametrize(("formula", "asic", "speed", "cable", "lanes", "percent", "pool", "expected"), LUA_RESULTS)
def test_each_formula_revision_matches_sonic_swss_lua(formula: HeadroomFormula, asic: str, speed: int, cable: int,
                                                      lanes: int, percent: int, pool: bool,
                                                      expected: tuple[int, int, int]) -> None:
    params = HeadroomInputs(speed, cable, 9100, lanes, small_packet_percent=percent, shared_headroom_pool=pool,
                            formula=formula)
    headroom = spectrum_headroom(asic, params)
    assert (headroom.xon, headroom.xoff, headroom.size) == expected


def test_the_gearbox_delay_counts_twice_as_the_lua_counts_it() -> None:
    """buffer_headroom_mellanox.lua (every revision): bytes_on_gearbox = speed * gearbox_delay / (8 * 1024),
    counted twice in the propagation delay. A 100G Spectrum-2 port, 5 m, before #3235 (worst-case factor
    144/64 = 2.25, occupancy (50 + 50 * 2.25) / 100 = 1.625):
    without a gearbox  propagation = 9100 + 616.5 (cable) + 819.2 (MAC/PHY) + 25216 (394 quanta) = 35751.7,
                       xoff = ceil1k(1024 + 1.625 * 35751.7) = 59392;
    with the SN3800's  propagation += 2 * 100000 * 400 / 8192 = 9765.6,
                       xoff = ceil1k(1024 + 1.625 * 45517.3) = 75776."""
    port = HeadroomInputs(100000, 5, 9100, 4, formula=FORMULA_BEFORE_3235)
    assert spectrum_headroom("spectrum2", port).xoff == 59392
    with_gearbox = spectrum_headroom("spectrum2", HeadroomInputs(100000, 5, 9100, 4, gearbox_delay_ns=400,
                                                                 formula=FORMULA_BEFORE_3235))
    assert with_gearbox.xoff == 75776 and with_gearbox.method.endswith(", gearbox delay 400 ns")


@pytest.mark.parametrize(("hardware", "delay"), [
    ("ACS-MSN3800", 400), ("Mellanox-SN3800-D112C8", 400), ("Mellanox-SN3800-C64", 400),
    ("ACS-MSN4700", 0), ("SN5600", 0), ("ACS-MSN2700", 0), (None, 0)])
def test_only_the_sn3800_platform_has_a_gearbox(hardware: str | None, delay: int) -> None:
    """sonic-buildimage: platform/mellanox/peripheral_table.j2 (MELLANOX-GEARBOX-3800: gearbox_delay 400) and
    device/mellanox/x86_64-mlnx_msn3800-r0/port_peripheral_config.j2, the one NVIDIA platform naming a model."""
    assert gearbox_delay_ns(hardware) == delay


@pytest.mark.parametrize("buffer_model", ["dynamic", "traditional"])
def test_an_sn3800_leaf_sizes_headroom_with_its_gearbox(example: FabricInput, buffer_model: str) -> None:
    """Resolve passes the platform's gearbox delay to the formula, and a dynamic-model config read back is
    sized the same way (buffermgrd reads the delay from the platform, not from CONFIG_DB)."""
    plain = _resolve(example, asic="spectrum2", sonic_buffer_model=buffer_model).devices["leaf1"]
    sn3800 = _resolve(example, hardware="ACS-MSN3800", asic="spectrum2",
                      sonic_buffer_model=buffer_model).devices["leaf1"]
    params = HeadroomInputs(400000, 2, 9100, 8, gearbox_delay_ns=400)
    expected = sonic_headroom("spectrum2", params, DEFAULT_SONIC_RELEASE, "traditional")
    assert _numbers(sn3800, "Ethernet0") == (expected.xon, expected.xoff, expected.size)
    assert _numbers(sn3800, "Ethernet0") != _numbers(plain, "Ethernet0")
    read_back = reader.read(sn3800, render_device(sn3800))
    assert reader.owned(read_back) == reader.owned(sn3800)


def test_the_default_formula_is_the_target_release_one() -> None:
    assert HeadroomInputs(400000, 2, 9100, 8).formula == SONIC_RELEASES[DEFAULT_SONIC_RELEASE].formula
    assert DEFAULT_SONIC_RELEASE in CAPABILITY.target


def test_vendor_images_default_buffer_model() -> None:
    """NVIDIA Spectrum images are built with SONIC_BUFFER_MODEL=dynamic; every other image is traditional."""
    assert default_buffer_model("spectrum3") == "dynamic"
    assert default_buffer_model(None) == "traditional" and default_buffer_model("tomahawk4") == "traditional"


def test_gcu_fact_for_the_deploy_work() -> None:
    """sonic-utilities up to 202505 lets GCU replace only dynamic_th/xoff of a BUFFER_PROFILE; 202511 (#4087)
    adds whole profiles."""
    assert set(SONIC_RELEASES) >= GCU_REFUSES_NEW_BUFFER_PROFILE
    assert "202411" in GCU_REFUSES_NEW_BUFFER_PROFILE and "202505" in GCU_REFUSES_NEW_BUFFER_PROFILE
    assert "202511" not in GCU_REFUSES_NEW_BUFFER_PROFILE and "202605" not in GCU_REFUSES_NEW_BUFFER_PROFILE


# --- resolve ----------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def example() -> FabricInput:
    return load_example("fabric")


def _resolve(example: FabricInput, intent: Intent | None = None, leaves: tuple[str, ...] = ("leaf1",),
             **data: Any) -> Fabric:
    """The bundled fabric with the inventory data of ``leaves`` changed (and another intent)."""
    devices = dict(example.inventory.devices)
    for name in leaves:
        device = devices[name]
        devices[name] = device.model_copy(update={"data": device.data.model_copy(update=data)})
    return resolve(intent or example.intent, example.inventory.model_copy(update={"devices": devices}))


def _with_headroom(example: FabricInput, **changes: Any) -> Intent:
    """The bundled intent with other ``pfc.headroom`` settings."""
    intent = example.intent
    headroom = intent.pfc.headroom.model_copy(update=changes)
    return intent.model_copy(update={"pfc": intent.pfc.model_copy(update={"headroom": headroom})})


def _port(device: DeviceModel, name: str) -> PortModel:
    return next(p for p in device.ports if p.name == name)


def test_resolve_defaults_to_the_target_release_and_the_image_buffer_model(example: FabricInput) -> None:
    headroom = _port(_resolve(example).devices["leaf1"], "Ethernet0").headroom
    assert headroom is not None
    assert (headroom.xon, headroom.xoff, headroom.size) == (38912, 87040, 135168)
    assert (headroom.release, headroom.buffer_model) == ("202411", "dynamic")  # SN4700: an NVIDIA image
    assert (headroom.lossless_mtu, headroom.small_packet_percent) == (1024, 50)


def test_resolve_follows_the_release_the_device_runs(example: FabricInput) -> None:
    fabric = _resolve(example, sonic_release="202311", sonic_buffer_model="traditional")
    headroom = _port(fabric.devices["leaf1"], "Ethernet0").headroom
    assert headroom is not None
    assert (headroom.xon, headroom.xoff, headroom.size) == (37888, 113664, 160768)
    assert (headroom.release, headroom.buffer_model, headroom.lossless_mtu) == ("202311", "traditional", None)
    other = _port(fabric.devices["leaf2"], "Ethernet0").headroom  # leaf2 still runs the default
    assert other is not None and other.release == "202411"


def test_unknown_release_is_refused_with_the_known_ones(example: FabricInput) -> None:
    with pytest.raises(InputError) as raised:
        _resolve(example, sonic_release="202211")
    text = str(raised.value)
    assert "SONiC release 202211" in text and "202305" in text and "sonic_release" in text
    assert text.count("202211 on leaf1") == 1  # once per device, not once per port


def test_dynamic_model_refuses_vendor_table_headroom(example: FabricInput) -> None:
    vendor_table = _with_headroom(example, method="vendor-table")
    with pytest.raises(InputError, match="vendor-table cannot apply"):
        _resolve(example, vendor_table)
    fabric = _resolve(example, vendor_table, ("leaf1", "leaf2"), sonic_buffer_model="traditional")
    headroom = _port(fabric.devices["leaf1"], "Ethernet0").headroom
    assert headroom is not None and headroom.buffer_model == "traditional" and "vendor-table" in headroom.method


# The SKU's shipped rows (sonic-buildimage device/mellanox/x86_64-mlnx_msn4700-r0/ACS-MSN4700/pg_profile_lookup.ini,
# 400G: speed cable size xon xoff), and the row buffermgrd's traditional model picks for each cable length: the
# shortest row at least as long (a cable of exactly a row's length takes that row).
MSN4700_400G_ROWS = {5: (86016, 37888, 38912), 40: (124928, 37888, 77824), 300: (420864, 37888, 373760)}


def _vendor_table_fabric(tmp_path: Path, node1_cable_m: int) -> Fabric:
    """The bundled example as files, edited as a user would: pfc.headroom.method vendor-table in the intent, the
    leaves on SONiC's traditional buffer model (groups.yaml), node1's cable to leaf1:Ethernet0 this long."""
    inventory = tmp_path / "inventory"
    shutil.copytree(ROOT / "inventory", inventory, ignore=shutil.ignore_patterns("mixed"))
    groups = inventory / "groups.yaml"
    groups.write_text(groups.read_text().replace("    asic: spectrum3\n",
                                                 "    asic: spectrum3\n    sonic_buffer_model: traditional\n", 1))
    hosts = inventory / "hosts.yaml"
    old_cable = 'peer: "leaf1:Ethernet0", cable_m: 2, media: dac'
    assert hosts.read_text().count(old_cable) == 1
    hosts.write_text(hosts.read_text().replace(old_cable, f'peer: "leaf1:Ethernet0", cable_m: {node1_cable_m}, '
                                                          "media: aoc"))
    intent = tmp_path / "fabric.yaml"
    intent.write_text((ROOT / "intent" / "fabric.yaml").read_text().replace("headroom: {method: formula,",
                                                                             "headroom: {method: vendor-table,"))
    loaded = load(intent, inventory)
    return resolve(loaded.intent, loaded.inventory, loaded.locate)


@pytest.mark.parametrize(("cable_m", "row"), [(1, 5), (5, 5), (6, 40), (39, 40), (40, 40), (41, 300), (300, 300)])
def test_vendor_table_headroom_end_to_end(tmp_path: Path, cable_m: int, row: int) -> None:
    """pfc.headroom.method vendor-table on a traditional-model SN4700: the port's resolved headroom is the row's,
    and config_db.json's BUFFER_PG for the lossless priority names a BUFFER_PROFILE holding the row's numbers."""
    leaf = _vendor_table_fabric(tmp_path, cable_m).devices["leaf1"]
    size, xon, xoff = MSN4700_400G_ROWS[row]
    headroom = _port(leaf, "Ethernet0").headroom
    assert headroom is not None
    assert (headroom.size, headroom.xon, headroom.xoff) == (size, xon, xoff)
    assert headroom.method.startswith(f"vendor-table: {row}m row of ")
    config = json.loads(render_device(leaf)["config_db.json"])
    profile = config["BUFFER_PG"]["Ethernet0|3"]["profile"]
    assert {key: config["BUFFER_PROFILE"][profile][key] for key in ("size", "xon", "xoff")} == {
        "size": str(size), "xon": str(xon), "xoff": str(xoff)}


def test_vendor_table_refuses_a_cable_longer_than_its_last_row(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no row for 400000 Mb/s with a cable of 301 m or longer"):
        _vendor_table_fabric(tmp_path, 301)


def test_dynamic_model_needs_lossless_priorities_on_the_template_pgs(example: FabricInput) -> None:
    intent = example.intent
    classes = intent.qos.classes
    rdma = next(name for name, cls in classes.items() if cls.lossless)
    free = next(p for p in range(8) if p not in {cls.priority for cls in classes.values()} and p not in (3, 4))
    moved = {**classes, rdma: classes[rdma].model_copy(update={"priority": free})}
    intent = intent.model_copy(update={"qos": intent.qos.model_copy(update={"classes": moved})})
    with pytest.raises(InputError, match=f"lossless priority {free} would get none"):
        _resolve(example, intent)


# --- render -----------------------------------------------------------------------------------------------

def test_dynamic_render_leaves_profiles_to_buffermgrd(example: FabricInput) -> None:
    fabric = _resolve(example, _with_headroom(example, small_packet_percent=30))
    config = build_config_db(fabric.devices["leaf1"])
    assert "BUFFER_PROFILE" not in config and "BUFFER_PG" not in config
    assert config["CABLE_LENGTH"]["AZURE"]["Ethernet0"] == "2m"
    assert config["PORT_QOS_MAP"]["Ethernet0"]["pfc_enable"] == "3"
    assert config["LOSSLESS_TRAFFIC_PATTERN"] == {"AZURE": {"mtu": "1024", "small_packet_percentage": "30"}}


def test_traditional_render_writes_the_release_profile(example: FabricInput) -> None:
    config = build_config_db(_resolve(example, sonic_buffer_model="traditional").devices["leaf1"])
    assert config["BUFFER_PG"]["Ethernet0|3"] == {"profile": "pg_lossless_400000_2m_profile"}
    assert config["BUFFER_PROFILE"]["pg_lossless_400000_2m_profile"] == {
        "pool": "ingress_lossless_pool", "size": "135168", "xon": "38912", "xoff": "87040", "dynamic_th": "0"}
    assert "LOSSLESS_TRAFFIC_PATTERN" not in config


@pytest.mark.parametrize("buffer_model", ["dynamic", "traditional"])
def test_both_models_validate_against_sonic_yang(example: FabricInput, buffer_model: str,
                                                 sonic_yang: SonicYangValidator) -> None:
    config = build_config_db(_resolve(example, sonic_buffer_model=buffer_model).devices["leaf1"])
    assert sonic_yang.validate(config, BASELINE) == []


# --- read -------------------------------------------------------------------------------------------------

def _read(device: DeviceModel, config: dict[str, Any]) -> DeviceModel:
    return reader.read(device, {"config_db.json": json.dumps(config, indent=4)})


def _numbers(device: DeviceModel, port: str) -> tuple[int, int, int] | None:
    headroom = _port(device, port).headroom
    return None if headroom is None else (headroom.xon, headroom.xoff, headroom.size)


@pytest.mark.parametrize(("release", "buffer_model"), [("202411", "dynamic"), ("202311", "dynamic"),
                                                       ("202605", "traditional")])
def test_render_reads_back(example: FabricInput, release: str, buffer_model: str) -> None:
    device = _resolve(example, sonic_release=release, sonic_buffer_model=buffer_model).devices["leaf1"]
    read_back = reader.read(device, render_device(device))
    assert reader.owned(read_back) == reader.owned(device)


def _pulled_config(device: DeviceModel) -> dict[str, Any]:
    """leaf1's render completed the way a dynamic-model switch's CONFIG_DB is: DEVICE_METADATA, the SKU
    template's PGs (lossy 0, lossless 3-4 NULL) and traffic pattern, and a shared-headroom-pool setting."""
    config = build_config_db(device)
    config["DEVICE_METADATA"] = {"localhost": {"hwsku": "ACS-MSN4700", "buffer_model": "dynamic"}}
    config["BUFFER_PG"] = {key: value for port in config["PORT_QOS_MAP"] if port != "global"
                           for key, value in ((f"{port}|0", {"profile": "ingress_lossy_profile"}),
                                              (f"{port}|3-4", {"profile": "NULL"}))}
    config["LOSSLESS_TRAFFIC_PATTERN"] = {"AZURE": {"mtu": "1024", "small_packet_percentage": "100"}}
    config["DEFAULT_LOSSLESS_BUFFER_PARAMETER"] = {"AZURE": {"default_dynamic_th": "0"}}
    return config


def test_dynamic_config_without_profiles_reads_as_what_buffermgrd_computes(example: FabricInput) -> None:
    device = _resolve(example).devices["leaf1"]
    read_back = _read(device, _pulled_config(device))
    # Not "missing headroom": what buffermgrd computes from the file's pattern (100 % small packets).
    assert _numbers(read_back, "Ethernet0") == (38912, 207872, 256000)
    headroom = _port(read_back, "Ethernet0").headroom
    assert headroom is not None and "BUFFER_PG|Ethernet0|3-4" in headroom.method


def test_dynamic_config_reads_the_release_and_the_pool(example: FabricInput) -> None:
    device = _resolve(example, sonic_release="202311").devices["leaf1"]
    config = _pulled_config(device)
    config["LOSSLESS_TRAFFIC_PATTERN"]["AZURE"]["small_packet_percentage"] = "50"
    assert _numbers(_read(device, config), "Ethernet0") == (37888, 113664, 160768)
    config["DEFAULT_LOSSLESS_BUFFER_PARAMETER"]["AZURE"]["over_subscribe_ratio"] = "2"  # a shared headroom pool
    assert _numbers(_read(device, config), "Ethernet0") == (37888, 113664, 37888)


def test_dynamic_config_reads_the_release_a_saved_config_db_names(example: FabricInput) -> None:
    """db_migrator's schema version names the release branch: a pulled file says which formula applies."""
    device = _resolve(example).devices["leaf1"]  # resolved for 202411
    config = _pulled_config(device)
    config["LOSSLESS_TRAFFIC_PATTERN"]["AZURE"]["small_packet_percentage"] = "50"
    config["VERSIONS"] = {"DATABASE": {"VERSION": "version_202311_03"}}
    assert _numbers(_read(device, config), "Ethernet0") == (37888, 113664, 160768)
    config["VERSIONS"]["DATABASE"]["VERSION"] = "version_4_0_3"  # before 202305's naming: the skeleton's release
    assert _numbers(_read(device, config), "Ethernet0") == (38912, 87040, 135168)


def test_dynamic_config_with_a_static_profile_reads_its_numbers(example: FabricInput) -> None:
    device = _resolve(example).devices["leaf1"]
    config = _pulled_config(device)
    config["BUFFER_PG"]["Ethernet0|3-4"] = {"profile": "headroom_override"}
    config["BUFFER_PROFILE"] = {"headroom_override": {"pool": "ingress_lossless_pool", "xon": "19456",
                                                      "xoff": "40960", "size": "60416", "dynamic_th": "0"}}
    assert _numbers(_read(device, config), "Ethernet0") == (19456, 40960, 60416)


def test_dynamic_port_without_a_lossless_pg_has_no_headroom(example: FabricInput) -> None:
    device = _resolve(example).devices["leaf1"]
    config = _pulled_config(device)
    del config["BUFFER_PG"]["Ethernet0|3-4"]  # the lossy PG alone: buffermgrd reserves nothing for priority 3
    assert _numbers(_read(device, config), "Ethernet0") is None
    assert _numbers(_read(device, config), "Ethernet8") is not None


def test_traditional_config_with_null_profile_has_no_headroom(example: FabricInput) -> None:
    device = _resolve(example).devices["leaf1"]
    config = _pulled_config(device)
    config["DEVICE_METADATA"]["localhost"]["buffer_model"] = "traditional"  # the file's model wins
    assert _numbers(_read(device, config), "Ethernet0") is None


def test_bad_buffer_model_names_its_line(example: FabricInput) -> None:
    device = _resolve(example).devices["leaf1"]
    config = _pulled_config(device)
    config["DEVICE_METADATA"]["localhost"]["buffer_model"] = "static"
    lines = json.dumps(config, indent=4).splitlines()
    line = next(number for number, text in enumerate(lines, 1) if '"buffer_model"' in text)
    with pytest.raises(ConfigReadError, match="buffer_model 'static' is not dynamic or traditional") as raised:
        _read(device, config)
    assert raised.value.line == line
