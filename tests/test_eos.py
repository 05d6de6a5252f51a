"""EOS renderer details that depend on the platform family or the management address family."""

from __future__ import annotations

import pytest

from fabricgen.api import render_device
from fabricgen.model import Fabric, MgmtModel
from fabricgen.platforms import ConfigReadError
from fabricgen.platforms.eos import natural_key, queue_keyword, reader, seconds


def test_queue_keyword_follows_the_asic_family() -> None:
    assert queue_keyword("DCS-7280DR3-24") == "tx-queue"  # Jericho2: VOQ, one queue space
    assert queue_keyword("DCS-7800R3-36P-LC") == "tx-queue"
    assert queue_keyword("DCS-7060X5-64S") == "uc-tx-queue"  # Tomahawk: unicast/multicast split


def test_trident_spine_uses_uc_tx_queue_for_ecn(example_fabric: Fabric) -> None:
    spine = example_fabric.devices["spine1"].model_copy(update={"hardware": "DCS-7060X5-64S"})
    text = render_device(spine)["eos.cfg"]
    assert "   uc-tx-queue 3\n" in text and "   tx-queue 3\n" not in text
    assert "qos map traffic-class 3 to uc-tx-queue 3\n" in text


def test_watchdog_timers_in_seconds() -> None:
    assert (seconds(200), seconds(100), seconds(1500), seconds(60000)) == ("0.2", "0.1", "1.5", "60")


def test_ipv6_management(example_fabric: Fabric) -> None:
    spine = example_fabric.devices["spine1"]
    assert spine.mgmt is not None
    v6 = MgmtModel(**{**spine.mgmt.model_dump(), "address": "2001:db8::21/64", "gateway": "2001:db8::1"})
    text = render_device(spine.model_copy(update={"mgmt": v6}))["eos.cfg"]
    assert "   ipv6 address 2001:db8::21/64\n" in text
    assert "ipv6 route vrf mgmt ::/0 2001:db8::1\n" in text


def test_interfaces_are_natural_sorted() -> None:
    names = ["Ethernet10/1", "Ethernet1/10", "Ethernet2/1", "Ethernet1/2"]
    assert sorted(names, key=natural_key) == ["Ethernet1/2", "Ethernet1/10", "Ethernet2/1", "Ethernet10/1"]


def test_oob_switch_has_management_vlan_and_no_lossless_config(example_fabric: Fabric) -> None:
    text = render_device(example_fabric.devices["oob1"])["eos.cfg"]
    assert "vlan 100\n   name OOB_MGMT\n" in text
    assert "switchport access vlan 100" in text
    assert "priority-flow-control" not in text and "qos profile" not in text


def test_reader_reports_a_bad_l2_mtu_at_its_line(example_fabric: Fabric) -> None:
    spine = example_fabric.devices["spine1"]
    text = render_device(spine)["eos.cfg"].replace("   no switchport\n", "   l2 mtu 70000\n   switchport\n", 1)
    with pytest.raises(ConfigReadError) as error:
        reader.read(spine, {"eos.cfg": text})
    assert error.value.file == "eos.cfg" and "70000" in error.value.message
    assert text.splitlines()[error.value.line - 1] == "   l2 mtu 70000"


def test_interface_defaults_mtu_is_layer_3_only(example_fabric: Fabric) -> None:
    """`interface defaults` / `mtu` sets the L3 MTU of routed interfaces; a switchport keeps its L2 MTU."""
    spine = example_fabric.devices["spine1"]
    text = render_device(spine)["eos.cfg"].replace("   mtu 9100\n", "")  # every data port: the default applies
    text = text.replace("   no switchport\n", "   switchport\n", 1)  # Ethernet1/1 becomes a switchport
    read = reader.read(spine, {"eos.cfg": "interface defaults\n   mtu 9100\n!\n" + text})
    mtus = {p.name: (p.mode, p.mtu) for p in read.ports if p.role == "fabric"}
    assert mtus == {"Ethernet1/1": ("switched", reader.DEFAULT_L2_MTU), "Ethernet2/1": ("routed", 9100),
                    "Ethernet3/1": ("routed", 9100), "Ethernet4/1": ("routed", 9100)}
