"""The SONiC reader's effective per-port state: what a switch runs on each port when config_db.json binds it
differently from the other ports (sonic-swss qosorch.cpp/pfcwdorch.cpp, SAI saiport.h), and VLAN membership."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

import fabricgen.platforms.sonic.read as reader
from fabricgen.api import render_device
from fabricgen.models.device import DeviceModel, Fabric, PortModel
from fabricgen.platforms import ConfigReadError

Db = dict[str, Any]


@pytest.fixture
def leaf(example_fabric: Fabric) -> DeviceModel:
    return example_fabric.devices["leaf1"]


@pytest.fixture
def read_edited(leaf: DeviceModel) -> Callable[[Callable[[Db], None]], DeviceModel]:
    """leaf1's rendered config_db.json, edited by ``change``, read back over leaf1's model."""
    def read(change: Callable[[Db], None]) -> DeviceModel:
        db = json.loads(render_device(leaf)["config_db.json"])
        change(db)
        return reader.read(leaf, {"config_db.json": json.dumps(db, indent=4)})
    return read


def port(device: DeviceModel, name: str) -> PortModel:
    return next(p for p in device.ports if p.name == name)


def test_a_rendered_leaf_runs_the_device_qos_on_every_port(read_edited: Callable[..., DeviceModel]) -> None:
    device = read_edited(lambda db: None)
    assert [p.name for p in device.ports if p.qos is not None or p.tagged_vlans or p.access_vlan] == []
    assert {p.mode for p in device.ports if p.role in ("host", "fabric")} == {"routed"}


def test_without_its_own_dscp_map_a_port_uses_the_global_one(read_edited: Callable[..., DeviceModel]) -> None:
    device = read_edited(lambda db: db["PORT_QOS_MAP"]["Ethernet0"].pop("dscp_to_tc_map"))
    assert port(device, "Ethernet0").qos is None  # PORT_QOS_MAP|global's ROCE map: the same classification


def test_without_any_dscp_map_a_port_trusts_nothing(read_edited: Callable[..., DeviceModel]) -> None:
    def change(db: Db) -> None:
        db["PORT_QOS_MAP"]["Ethernet0"].pop("dscp_to_tc_map")
        del db["PORT_QOS_MAP"]["global"]
    qos = port(read_edited(change), "Ethernet0").qos
    assert qos is not None and (qos.trust, qos.dscp_to_tc) == ("none", {})


def test_a_dot1p_map_alone_is_pcp_trust(read_edited: Callable[..., DeviceModel]) -> None:
    def change(db: Db) -> None:
        entry = db["PORT_QOS_MAP"]["Ethernet8"]
        entry["dot1p_to_tc_map"] = entry.pop("dscp_to_tc_map")
    device = read_edited(change)
    qos = port(device, "Ethernet8").qos
    assert qos is not None and qos.trust == "pcp"
    assert device.qos is not None and device.qos.trust == "dscp"


def test_an_unbound_map_is_no_map(read_edited: Callable[..., DeviceModel]) -> None:
    qos = port(read_edited(lambda db: db["PORT_QOS_MAP"]["Ethernet0"].pop("tc_to_queue_map")), "Ethernet0").qos
    assert qos is not None and qos.tc_to_queue == {}  # saiport.h: all packets to queue 0


def test_the_watchdog_runs_only_where_pfc_wd_and_pfcwd_sw_enable_cover_the_port(
        read_edited: Callable[..., DeviceModel]) -> None:
    def change(db: Db) -> None:
        db["PORT_QOS_MAP"]["Ethernet0"]["pfcwd_sw_enable"] = ""
        del db["PFC_WD"]["Ethernet8"]
    device = read_edited(change)
    for name in ("Ethernet0", "Ethernet8"):
        qos = port(device, name).qos
        assert qos is not None and qos.watchdog is None, name
    assert device.qos is not None and device.qos.watchdog is not None  # what the other data ports run


def test_one_ports_own_timers_stay_on_that_port_even_the_first(read_edited: Callable[..., DeviceModel],
                                                                 leaf: DeviceModel) -> None:
    device = read_edited(lambda db: db["PFC_WD"]["Ethernet0"].update(detection_time="400"))
    qos = port(device, "Ethernet0").qos
    assert qos is not None and qos.watchdog is not None and qos.watchdog.detection_ms == 400
    assert device.qos is not None and leaf.qos is not None and device.qos.watchdog == leaf.qos.watchdog
    assert [p.name for p in device.ports if p.qos is not None] == ["Ethernet0"]


def test_vlan_membership(read_edited: Callable[..., DeviceModel]) -> None:
    def change(db: Db) -> None:
        db["VLAN"] = {"Vlan10": {"vlanid": "10"}, "Vlan20": {"vlanid": "20"}, "Vlan30": {"vlanid": "30"}}
        db["VLAN_MEMBER"] = {"Vlan10|Ethernet0": {"tagging_mode": "priority_tagged"},
                             "Vlan30|Ethernet0": {"tagging_mode": "tagged"},
                             "Vlan20|Ethernet0": {"tagging_mode": "tagged"}}
        db["PORT"]["Ethernet8"]["mode"] = "trunk"
    device = read_edited(change)
    first, second = port(device, "Ethernet0"), port(device, "Ethernet8")
    assert (first.access_vlan, first.tagged_vlans, first.mode) == (10, [20, 30], "switched")
    assert (second.access_vlan, second.tagged_vlans, second.mode) == (None, None, "switched")


def test_a_bad_tagging_mode_is_reported(read_edited: Callable[..., DeviceModel]) -> None:
    with pytest.raises(ConfigReadError, match="tagging_mode"):
        read_edited(lambda db: db.update(VLAN_MEMBER={"Vlan10|Ethernet0": {"tagging_mode": "trunk"}}))
