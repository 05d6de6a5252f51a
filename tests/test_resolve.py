"""resolve: every decision, checked against the numbers vendors ship."""

from __future__ import annotations

import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
from pydantic import ValidationError

from fabricgen.api import dump_device
from fabricgen.load.fabric import load
from fabricgen.models.device import DeviceModel, Fabric, PortModel
from fabricgen.models.intent import Intent, expand_profile
from fabricgen.models.units import parse_bytes, parse_speed_mbps
from fabricgen.resolve import resolve
from fabricgen.resolve.headroom import (
    FORMULA_BEFORE_3235,
    HeadroomInputs,
    mlx5_xoff,
    spectrum_headroom,
    vendor_table_headroom,
)

from conftest import EXAMPLES, ROOT, load_example

# roce-numbers.md §1.2: port MTU 9100, lossless MTU 1024, 50 % small packets, no shared headroom pool; worked with
# the formula of SONiC 202305/202311 (before sonic-swss #3235; later releases: tests/test_sonic_headroom.py).
WORKED = [  # asic, speed, cable, lanes, xon, xoff, size
    ("spectrum3", 100000, 5, 4, 19456, 59392, 78848),
    ("spectrum3", 100000, 40, 4, 19456, 66560, 86016),
    ("spectrum3", 100000, 300, 4, 19456, 118784, 138240),
    ("spectrum3", 400000, 5, 4, 19456, 115712, 135168),
    ("spectrum3", 400000, 40, 4, 19456, 143360, 162816),
    ("spectrum3", 400000, 300, 4, 19456, 352256, 371712),
    ("spectrum4", 400000, 5, 4, 19456, 142336, 161792),
    ("spectrum4", 400000, 40, 4, 19456, 177152, 196608),
    ("spectrum4", 400000, 300, 4, 19456, 433152, 452608),
    ("spectrum4", 800000, 5, 8, 37888, 147456, 194560),
    ("spectrum4", 800000, 40, 8, 37888, 216064, 263168),
    ("spectrum4", 800000, 300, 8, 37888, 729088, 776192),
]


@pytest.mark.parametrize(("asic", "speed", "cable", "lanes", "xon", "xoff", "size"), WORKED)
def test_spectrum_headroom_matches_worked_numbers(asic: str, speed: int, cable: int, lanes: int, xon: int,
                                                  xoff: int, size: int) -> None:
    result = spectrum_headroom(asic, HeadroomInputs(speed_mbps=speed, cable_m=cable, port_mtu=9100, lanes=lanes,
                                                    formula=FORMULA_BEFORE_3235))
    assert (result.xon, result.xoff, result.size) == (xon, xoff, size)


def test_shared_headroom_pool_reserves_only_xon() -> None:
    params = HeadroomInputs(400000, 40, 9100, 4, shared_headroom_pool=True, formula=FORMULA_BEFORE_3235)
    result = spectrum_headroom("spectrum3", params)
    assert (result.xoff, result.size) == (143360, 19456)


def test_vendor_table_rounds_cable_up_to_next_row() -> None:
    row = vendor_table_headroom("ACS-MSN4700", 400000, 30)  # between the 5 m and 40 m rows
    assert row is not None and (row.size, row.xon, row.xoff) == (124928, 37888, 77824)
    assert "40m row" in row.method
    assert vendor_table_headroom("ACS-MSN4700", 400000, 301) is None


@pytest.mark.parametrize(("speed", "cable", "mtu", "xoff"), [
    (100000, 7, 9000, 56080), (400000, 7, 9000, 150880), (400000, 100, 9000, 231280),
    (400000, None, 9000, 150880), (25000, 7, 1500, 316 * 40 + 4080)])  # speed floored at 40G
def test_mlx5_xoff_matches_kernel_formula(speed: int, cable: int | None, mtu: int, xoff: int) -> None:
    assert mlx5_xoff(speed, cable, mtu) == xoff


def test_vendor_table_takes_a_row_of_exactly_the_cable_length() -> None:
    """A cable as long as a row takes that row; one metre more, the next."""
    for cable, row in ((5, 5), (6, 40), (40, 40), (41, 300), (300, 300)):
        headroom = vendor_table_headroom("ACS-MSN4700", 400000, cable)
        assert headroom is not None and headroom.method.startswith(f"vendor-table: {row}m row of "), cable


def _mlx5_kernel_xoff(speed_gbps: int, cable_len: int, mtu: int) -> int:
    """port_buffer.c calculate_xoff for a link of ``cable_len`` metres, in C integer arithmetic."""
    return (301 + 216 * cable_len // 100) * speed_gbps + 272 * mtu // 100


@pytest.mark.parametrize(("cable", "used"), [(None, 7), (1, 1), (7, 7), (999, 999), (1000, 7), (1001, 7)])
def test_mlx5_takes_a_cable_length_only_below_1000_m(cable: int | None, used: int) -> None:
    """en_dcbnl.c mlx5e_dcbnl_ieee_setpfc keeps ``pfc->delay`` as the cable length only when it is non-zero and
    below MLX5E_MAX_CABLE_LENGTH (1000); any other value leaves the driver's 7 m (MLX5E_DEFAULT_CABLE_LEN)."""
    assert mlx5_xoff(400000, cable, 9000) == _mlx5_kernel_xoff(400, used, 9000)


@pytest.mark.parametrize(("cable", "used"), [(999, 999), (1000, 7)])
def test_a_host_nic_xoff_follows_the_kernel_cable_limit(cable: int, used: int, tmp_path: Path) -> None:
    """End to end: node1's first cable in hosts.yaml, through load and resolve, to its NIC's xoff."""
    inventory = tmp_path / "inventory"
    shutil.copytree(ROOT / "inventory", inventory, ignore=shutil.ignore_patterns("mixed"))
    hosts = inventory / "hosts.yaml"
    old = 'peer: "leaf1:Ethernet0", cable_m: 2, media: dac'
    assert hosts.read_text().count(old) == 1
    hosts.write_text(hosts.read_text().replace(old, f'peer: "leaf1:Ethernet0", cable_m: {cable}, media: aoc'))
    loaded = load(ROOT / "intent" / "fabric.yaml", inventory)
    host = resolve(loaded.intent, loaded.inventory, loaded.locate).devices["node1"].host
    assert host is not None
    nic = next(nic for nic in host.nics if nic.interface == "ens1f0np0")
    assert (nic.cable_m, nic.xoff_bytes) == (cable, _mlx5_kernel_xoff(400, used, nic.mtu))


@pytest.mark.parametrize(("text", "value"), [("150KB", 150000), ("1.5MB", 1500000), ("64KiB", 65536),
                                             (40000, 40000), ("5 KB", 5000), ("1.5KiB", 1536)])
def test_byte_sizes(text: str | int, value: int) -> None:
    assert parse_bytes(text) == value


@pytest.mark.parametrize("bad", ["1.5B", "5XB", "-1", True, "1.0001KB"])
def test_bad_byte_sizes(bad: object) -> None:
    with pytest.raises(ValueError, match=r"size|bytes|number"):
        parse_bytes(bad)


def test_speeds() -> None:
    assert parse_speed_mbps("400G") == 400000 and parse_speed_mbps("100M") == 100
    with pytest.raises(ValueError):
        parse_speed_mbps(400)


def test_example_classification_is_consistent(example_fabric: Fabric) -> None:
    qos = example_fabric.devices["leaf1"].qos
    assert qos is not None
    assert len(qos.dscp_to_tc) == 64
    assert (qos.dscp_to_tc[26], qos.dscp_to_tc[48], qos.dscp_to_tc[16], qos.dscp_to_tc[0]) == (3, 6, 2, 0)
    assert qos.lossless_priorities == [3]
    assert qos.tc_to_pg == {0: 0, 1: 0, 2: 0, 3: 3, 4: 0, 5: 0, 6: 0, 7: 0}
    assert (qos.rdma_dscp, qos.rdma_priority, qos.cnp_dscp, qos.cnp_priority) == (26, 3, 48, 6)
    assert [(q.index, q.scheduler, q.weight) for q in qos.queues] == [
        (0, "dwrr", 40), (2, "dwrr", 10), (3, "dwrr", 50), (6, "strict", None)]
    # Every device of the fabric carries the same classification.
    assert all(d.qos == qos for d in example_fabric.devices.values() if d.qos is not None)


def test_example_ports_and_headroom(example_fabric: Fabric) -> None:
    leaf = {p.name: p for p in example_fabric.devices["leaf1"].ports}
    host_port, uplink, mgmt = leaf["Ethernet0"], leaf["Ethernet240"], leaf["eth0"]
    assert (host_port.role, host_port.peer, host_port.cable_m, host_port.mtu) == ("host", "node1:ens1f0np0", 2, 9100)
    assert (uplink.role, uplink.peer, uplink.cable_m, uplink.media) == ("fabric", "spine2:Ethernet1/1", 45, "optic")
    assert (mgmt.role, mgmt.lossless, mgmt.mtu) == ("mgmt", False, 1500)
    # SN4700 400G ports use 8 lanes: buffermgrd's 8-lane adjustment applies (xon 2*19 KB, + port MTU), by the
    # formula of SONiC 202411 (the default release), which buffermgrd computes itself (dynamic buffer model).
    assert uplink.headroom is not None
    assert (uplink.headroom.xon, uplink.headroom.xoff, uplink.headroom.size) == (38912, 113664, 161792)
    assert (uplink.headroom.release, uplink.headroom.buffer_model) == ("202411", "dynamic")
    assert all(p.headroom is None for p in example_fabric.devices["spine1"].ports)  # EOS: platform-managed


def test_example_nic_settings_mirror_the_switches(example_fabric: Fabric) -> None:
    host = example_fabric.devices["node1"].host
    assert host is not None
    nic = host.nics[0]
    assert (nic.interface, nic.rdma_device, nic.peer) == ("ens1f0np0", "mlx5_0", "leaf1:Ethernet0")
    assert nic.pfc == [0, 0, 0, 1, 0, 0, 0, 0]
    # Classes keep TC = priority; priorities no class uses ride the default class's TC 0, and the TCs nothing maps
    # to are strict at 0 % (an ETS TC at 0 % is refused by bnxt_en).
    assert nic.prio_tc == [0, 0, 2, 3, 0, 0, 6, 0]
    assert nic.tsa == ["ets", "strict", "ets", "ets", "strict", "strict", "strict", "strict"]
    assert nic.tcbw == [40, 0, 10, 50, 0, 0, 0, 0] and sum(nic.tcbw) == 100
    # All 64 DSCPs as the leaf classifies them: 16 → 2, 26 → 3, 48 → 6, every other DSCP → the default class's 0.
    leaf = example_fabric.devices["leaf1"]
    assert leaf.qos is not None and nic.dscp2prio == leaf.qos.dscp_to_tc
    assert {dscp: prio for dscp, prio in nic.dscp2prio.items() if prio} == {16: 2, 26: 3, 48: 6}
    assert (nic.cnp_dscp, nic.cnp_priority, nic.roce_tos, nic.mtu) == (48, 6, 104, 9000)
    assert host.nccl_env == {"NCCL_IB_GID_INDEX": "3", "NCCL_IB_HCA": "=mlx5_0:1,mlx5_1:1",
                             "NCCL_IB_TC": "104", "NCCL_SOCKET_IFNAME": "=eno1"}


def test_oob_ports_carry_only_the_management_vlan(example_fabric: Fabric) -> None:
    oob = example_fabric.devices["oob1"]
    assert oob.qos is None
    assert {p.role for p in oob.ports} == {"oob-access"}
    assert {p.access_vlan for p in oob.ports} == {100}
    assert all(p.access_vlan is None for d in example_fabric.devices.values() if d.role != "oob" for p in d.ports)


def test_profile_expands_to_a_complete_recipe_and_yields_to_overrides() -> None:
    raw = {"fabric": "x", "profile": "roce", "management": {"vlan": 9, "subnet": "10.0.0.0/24",
                                                            "gateway": "10.0.0.1"},
           "qos": {"classes": {"rdma": {"ecn": {"min": "5KB", "max": "40KB"}}}}}
    intent = Intent.model_validate(expand_profile(raw))
    rdma = intent.qos.classes["rdma"]
    assert (rdma.dscp, rdma.priority, rdma.lossless) == ([26], 3, True)
    assert rdma.ecn is not None and (rdma.ecn.min, rdma.ecn.max, rdma.ecn.probability) == (5000, 40000, 100)
    assert intent.cnp_class().scheduling.strict and intent.rdma_dscp() == 26


def test_profile_class_can_be_removed_with_null() -> None:
    raw = {"fabric": "x", "profile": "roce", "qos": {"classes": {"cnp": None}},
           "management": {"vlan": 9, "subnet": "10.0.0.0/24", "gateway": "10.0.0.1"}}
    assert "cnp" not in expand_profile(raw)["qos"]["classes"]


@pytest.mark.parametrize("example", EXAMPLES)
def test_every_resolved_device_model_is_valid(example: str) -> None:
    """What resolve builds survives validation unchanged: the resolved model is a contract (dumped, read back
    by `lint --configs`, golden-tested), not just an in-memory structure."""
    loaded = load_example(example)
    fabric = resolve(loaded.intent, loaded.inventory, loaded.locate)
    for device in fabric.devices.values():
        dumped = device.model_dump()
        assert DeviceModel.model_validate(dumped).model_dump() == dumped, device.name


def _generated_fabric(tmp_path: Path) -> Fabric:
    """A rail-optimised fabric from the benchmark's generator: every platform, OOB, optics and DAC."""
    subprocess.run([sys.executable, str(ROOT / "bench" / "make_fabric.py"), "--gpus", "256", "-o", str(tmp_path)],
                   check=True, capture_output=True)
    loaded = load(tmp_path / "intent.yaml", tmp_path / "inventory")
    return resolve(loaded.intent, loaded.inventory, loaded.locate)


@pytest.mark.parametrize("example", [*EXAMPLES, "generated"])
def test_resolved_models_equal_their_validation(example: str, tmp_path: Path) -> None:
    """resolve builds its models without validating them again (Resolved.from_resolve): each must be exactly
    what pydantic makes of the same values in strict mode (no coercion: a bool in an int field fails), equal
    and dumping the same JSON without a serializer warning."""
    if example == "generated":
        fabric = _generated_fabric(tmp_path)
    else:
        loaded = load_example(example)
        fabric = resolve(loaded.intent, loaded.inventory, loaded.locate)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for device in fabric.devices.values():
            validated = DeviceModel.model_validate(device.model_dump(), strict=True)
            assert validated == device
            assert validated.model_dump_json() == device.model_dump_json()


def test_from_resolve_refuses_unknown_and_missing_fields() -> None:
    with pytest.raises(TypeError, match="unknown fields \\['speed'\\]"):
        PortModel.from_resolve({"name": "Ethernet0", "role": "host", "admin_up": True, "mtu": 9100, "speed": 1})
    with pytest.raises(TypeError, match="missing fields \\['mtu'\\]"):
        PortModel.from_resolve({"name": "Ethernet0", "role": "host", "admin_up": True})
    port = PortModel.from_resolve({"name": "Ethernet0", "role": "host", "admin_up": True, "mtu": 9100})
    assert port == PortModel(name="Ethernet0", role="host", admin_up=True, mtu=9100)
    assert port.model_fields_set == {"name", "role", "admin_up", "mtu"}
    wrong_type = PortModel.from_resolve({"name": "Ethernet0", "role": "host", "admin_up": True, "mtu": True})
    with pytest.raises(ValidationError, match="mtu"):  # what the test above would catch
        PortModel.model_validate(wrong_type.model_dump(), strict=True)


def test_switch_ports_list_every_field_in_order(example_fabric: Fabric) -> None:
    """resolve builds switch ports with PortModel.all_in_field_order, which trusts switch_ports (its per-role
    dicts in SwitchPortPolicy) to list every field in declaration order: a key added, dropped or moved there fails
    here (and in the dump test above)."""
    for device in example_fabric.devices.values():
        if device.host is None:
            for port in device.ports:
                assert tuple(port.__dict__) == tuple(PortModel.model_fields), f"{device.name}:{port.name}"
                assert port.model_fields_set == set(PortModel.model_fields)


def test_from_resolve_shares_the_set_of_every_field_safely() -> None:
    """Models given every field share one fields-set (1.2 KB each otherwise, 178k of them at 32,768 GPUs): a copy
    with an update must get its own set, and leave the shared one and the other models as they were."""
    every = {name: field.get_default(call_default_factory=True) for name, field in PortModel.model_fields.items()}
    every |= {"name": "Ethernet0", "role": "host", "admin_up": True, "mtu": 9100}
    first, second = PortModel.from_resolve(dict(every)), PortModel.from_resolve(dict(every))
    assert first.model_fields_set is second.model_fields_set
    assert first.model_fields_set == set(PortModel.model_fields)
    partial = PortModel.from_resolve({"name": "Ethernet0", "role": "host", "admin_up": True, "mtu": 9100})
    copied = partial.model_copy(update={"speed_mbps": 400000})
    assert copied.model_fields_set == {"name", "role", "admin_up", "mtu", "speed_mbps"}
    assert partial.model_fields_set == {"name", "role", "admin_up", "mtu"}
    assert first.model_copy(update={"speed_mbps": 1}).model_fields_set is not first.model_fields_set
    assert second.model_fields_set == set(PortModel.model_fields)
    with pytest.raises(ValidationError, match="frozen"):
        first.mtu = 1500  # type: ignore[misc]


@pytest.mark.parametrize("example", [*EXAMPLES, "generated"])
def test_resolved_json_reads_back_to_its_model(example: str, tmp_path: Path) -> None:
    """A render's resolved.json is read back as the device's model by the neighbourhood update (its lint
    looks at the neighbours as the tree holds them): it must validate to a model equal to the one dumped."""
    if example == "generated":
        fabric = _generated_fabric(tmp_path)
    else:
        loaded = load_example(example)
        fabric = resolve(loaded.intent, loaded.inventory, loaded.locate)
    for device in fabric.devices.values():
        assert DeviceModel.model_validate_json(dump_device(device, "json")) == device, device.name


@pytest.mark.parametrize("name", EXAMPLES)
def test_resolve_lists_every_port_field_in_order(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Resolve builds each port's fields in PortModel's order, so from_resolve stores them as they are: a field
    added to PortModel but not to resolve's port dicts sends every port of a 32k fabric through the slow path
    (the bench's one-leaf resolve + render went from 0.35 to 0.69 ms when that happened)."""
    def refuse(values: object) -> object:
        raise AssertionError("PortModel.from_resolve took its slow path: resolve missed a field or its order")

    monkeypatch.setattr(PortModel, "_complete", classmethod(lambda cls, values: refuse(values)))
    loaded = load_example(name)
    resolve(loaded.intent, loaded.inventory, loaded.locate)
