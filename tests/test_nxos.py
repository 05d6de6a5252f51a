"""Cisco NX-OS: the 8q mapping, exact CLI of the mixed example's leaf4, the capability limits resolve enforces,
the config reader (hand edits, a brownfield running-config, bad files) and the round-trip property."""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable
from typing import Any

import pytest
import yaml
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError
from test_roundtrip import intents, scramble

import fabricgen.platforms.nxos.read as reader
from fabricgen.api import render_device
from fabricgen.lint import lint
from fabricgen.models.device import (
    DeviceModel,
    EcnThresholds,
    EcnUnconverted,
    Fabric,
    MgmtModel,
    PortModel,
    QueueModel,
    WatchdogModel,
)
from fabricgen.models.diagnostics import InputError
from fabricgen.models.intent import Intent, check_intent
from fabricgen.models.inventory import Inventory
from fabricgen.platforms import ConfigReadError, get_platform
from fabricgen.platforms.nxos import PLATFORM
from fabricgen.platforms.nxos.capability import CAPABILITY
from fabricgen.platforms.nxos.render import ranges
from fabricgen.resolve import resolve

from conftest import ROOT, load_example

# --- the mixed example --------------------------------------------------------------------------------------


@functools.cache
def mixed_inventory() -> Inventory:
    """inventory/mixed/ as shipped: every platform of the mixed fabric imports, and one that does not is a
    failure here, not something to stand in for."""
    return load_example("mixed").inventory


def mixed_intent() -> dict[str, Any]:
    raw: dict[str, Any] = yaml.safe_load((ROOT / "intent" / "mixed.yaml").read_text())
    return raw


def resolve_raw(raw: dict[str, Any]) -> Fabric:
    return resolve(Intent.model_validate(raw), mixed_inventory())


@functools.cache
def mixed() -> Fabric:
    return resolve_raw(mixed_intent())


def leaf4() -> DeviceModel:
    return mixed().devices["leaf4"]


def cfg(device: DeviceModel) -> str:
    return render_device(device)["nxos.cfg"]


def port(device: DeviceModel, name: str) -> PortModel:
    return next(p for p in device.ports if p.name == name)


def edit(text: str, old: str, new: str, count: int = 1) -> str:
    assert text.count(old) >= count, f"{old!r} not in the file"
    return text.replace(old, new, count)


def line_of(text: str, needle: str) -> int:
    return next(number for number, line in enumerate(text.splitlines(), 1) if needle in line)


def read(text: str, skeleton: DeviceModel | None = None) -> DeviceModel:
    return reader.read(skeleton or scramble(leaf4()), {"nxos.cfg": text})


# --- capability and registration ----------------------------------------------------------------------------

def test_registered_with_its_reader() -> None:
    assert get_platform("nxos") is PLATFORM
    assert PLATFORM.read is reader.read and PLATFORM.owned is reader.owned
    assert (CAPABILITY.max_mtu, CAPABILITY.lossless_class_limit, CAPABILITY.ecn_granularity_bytes) == (9216, 1, 1)
    assert (CAPABILITY.mgmt_interface, CAPABILITY.mgmt_vrf_fixed_name) == ("mgmt0", "management")
    assert CAPABILITY.watchdog_actions == ("drop",) and CAPABILITY.output_files == ("nxos.cfg",)


def test_leaf4_resolves_into_the_fixed_management_vrf() -> None:
    device = leaf4()
    assert device.platform == "nxos" and device.mgmt is not None
    assert (device.mgmt.vrf, device.mgmt.interface) == ("management", "mgmt0")  # the intent says `mgmt`
    assert [p.name for p in device.ports if p.role == "host"] == ["Ethernet1/1", "Ethernet1/2"]
    assert [p.name for p in device.ports if p.role == "fabric"] == ["Ethernet1/63", "Ethernet1/64"]


# --- rendering: exact snippets of the mixed example's leaf4 ------------------------------------------------

def test_classification_dscp_to_qos_group() -> None:
    text = cfg(leaf4())
    assert "\nclass-map type qos match-all FG_RDMA\n  match dscp 26\n" in text
    assert "\nclass-map type qos match-all FG_CNP\n  match dscp 48\n" in text
    assert ("\npolicy-map type qos FABRICGEN_QOS\n"
            "  class FG_MANAGEMENT\n    set qos-group 2\n"
            "  class FG_RDMA\n    set qos-group 3\n"
            "  class FG_CNP\n    set qos-group 6\n"
            "  class class-default\n    set qos-group 0\n") in text
    assert "FG_DEFAULT" not in text  # the default class's 61 DSCPs ride class-default


def test_queuing_policy_all_eight_classes_with_ecn_in_exact_bytes() -> None:
    # The intent's 5,000 / 40,000 B as they are: whole kbytes rounded down made them 4 / 39 KB, 18 % low.
    text = cfg(leaf4())
    assert ("\npolicy-map type queuing FABRICGEN_QUEUING\n"
            "  class type queuing c-out-8q-q7\n    bandwidth remaining percent 0\n"
            "  class type queuing c-out-8q-q6\n    priority level 1\n"
            "  class type queuing c-out-8q-q5\n    bandwidth remaining percent 0\n"
            "  class type queuing c-out-8q-q4\n    bandwidth remaining percent 0\n"
            "  class type queuing c-out-8q-q3\n    bandwidth remaining percent 50\n"
            "    random-detect minimum-threshold 5000 bytes maximum-threshold 40000 bytes drop-probability 10 "
            "weight 0 ecn\n"
            "  class type queuing c-out-8q-q2\n    bandwidth remaining percent 10\n"
            "  class type queuing c-out-8q-q1\n    bandwidth remaining percent 0\n"
            "  class type queuing c-out-8q-q-default\n    bandwidth remaining percent 40\n") in text


def test_network_qos_no_drop_class_and_system_qos() -> None:
    text = cfg(leaf4())
    assert ("\npolicy-map type network-qos FABRICGEN_NETWORK_QOS\n"
            "  class type network-qos c-8q-nq6\n    mtu 9216\n"
            "  class type network-qos c-8q-nq3\n    pause pfc-cos 3\n    mtu 9216\n"
            "  class type network-qos c-8q-nq2\n    mtu 9216\n"
            "  class type network-qos c-8q-nq-default\n    mtu 9216\n") in text
    assert ("\nsystem qos\n  service-policy type network-qos FABRICGEN_NETWORK_QOS\n"
            "  service-policy type queuing output FABRICGEN_QUEUING\n") in text
    assert text.count("pause pfc-cos") == 1


def test_watchdog_as_interval_and_multipliers() -> None:
    assert ("\npriority-flow-control watch-dog-interval on\npriority-flow-control watch-dog interval 100\n"
            "priority-flow-control watch-dog shutdown-multiplier 2\n"
            "priority-flow-control watch-dog restore-multiplier 2\n") in cfg(leaf4())


def test_data_port_and_management() -> None:
    text = cfg(leaf4())
    assert ("\ninterface Ethernet1/63\n  description P2P_spine1_Ethernet24\n  no switchport\n"
            "  priority-flow-control mode on\n  priority-flow-control watch-dog-interval on\n  mtu 9100\n"
            "  speed 400000\n  fec kp-fec\n"
            "  service-policy type qos input FABRICGEN_QOS\n  no shutdown\n") in text
    assert "\nvrf context management\n  ip route 0.0.0.0/0 192.0.2.1\n" in text
    assert text.endswith("\ninterface mgmt0\n  description OOB_MANAGEMENT\n  vrf member management\n"
                         "  ip address 192.0.2.14/24\n  mtu 1500\n")
    assert "\t" not in text and all(line == line.rstrip() for line in text.splitlines())
    assert text.startswith("!fabricgen ") and "interface Ethernet1/2\n" in text


@pytest.mark.parametrize(("fec", "speed", "lanes", "line"), [
    ("rs", 400_000, None, "fec kp-fec"),  # 8 × 50G PAM4: RS(544,514)
    ("rs", 200_000, None, "fec kp-fec"),  # 4 × 50G PAM4
    ("rs", 100_000, None, "fec rs-fec"),  # 4 × 25G NRZ: RS(528,514), Clause 91
    ("rs", 100_000, "1,2", "fec kp-fec"),  # 2 × 50G PAM4
    ("rs", 25_000, None, "fec rs-fec"),
    ("rs", None, None, "fec rs-fec"),  # no speed stated: not taken as PAM4
    ("fc", 25_000, None, "fec fc-fec"),
    ("none", 100_000, None, "fec off"),
])
def test_fec_follows_the_lane_signalling(fec: str, speed: int | None, lanes: str | None, line: str) -> None:
    device = leaf4()
    ports = [p.model_copy(update={"fec": fec, "speed_mbps": speed, "lanes": lanes}) if p.name == "Ethernet1/63"
             else p for p in device.ports]
    text = cfg(device.model_copy(update={"ports": ports}))
    block = text[text.index("\ninterface Ethernet1/63\n"):text.index("\ninterface Ethernet1/64\n")]
    assert f"\n  {line}\n" in block
    assert ("\n  speed " in block) == (speed is not None)


def test_speed_and_fec_only_on_data_ports_that_state_them() -> None:
    device = leaf4()
    ports = [p.model_copy(update={"speed_mbps": None, "fec": None}) if p.name == "Ethernet1/1" else
             p.model_copy(update={"role": "unused", "mode": None}) if p.name == "Ethernet1/2" else p
             for p in device.ports]
    text = cfg(device.model_copy(update={"ports": ports}))
    for name in ("Ethernet1/1", "Ethernet1/2"):
        block = text[text.index(f"\ninterface {name}\n"):]
        block = block[:block.index("\n\n", 1)]
        assert "speed" not in block and "fec" not in block, block
    assert text.count("  speed 400000\n") == 2  # Ethernet1/63 and 1/64


def test_render_is_byte_deterministic() -> None:
    device = leaf4()
    assert cfg(device) == cfg(DeviceModel.model_validate(device.model_dump()))


def test_dscp_ranges() -> None:
    assert ranges([16, 24, 25, 26, 40, 63]) == "16,24-26,40,63" and ranges([7]) == "7"


def test_qos_group_is_the_egress_queue_and_pfc_cos_the_priority() -> None:
    raw = mixed_intent()
    raw["qos"]["classes"]["rdma"]["queue"] = 5  # priority 3, egress queue 5
    text = cfg(resolve_raw(raw).devices["leaf4"])
    assert "  class FG_RDMA\n    set qos-group 5\n" in text
    assert "  class type network-qos c-8q-nq5\n    pause pfc-cos 3\n    mtu 9216\n" in text
    assert "  class type queuing c-out-8q-q5\n    bandwidth remaining percent 50\n    random-detect" in text
    assert "  class type queuing c-out-8q-q3\n    bandwidth remaining percent 0\n" in text


def test_strict_levels_follow_the_queue_index() -> None:
    device = leaf4()
    assert device.qos is not None
    queues = [q.model_copy(update={"scheduler": "strict", "weight": None}) if q.index == 2 else q
              for q in device.qos.queues]
    text = cfg(device.model_copy(update={"qos": device.qos.model_copy(update={"queues": queues})}))
    assert "c-out-8q-q6\n    priority level 1\n" in text and "c-out-8q-q2\n    priority level 2\n" in text


def test_class_default_takes_the_largest_group() -> None:
    raw = mixed_intent()
    classes = raw["qos"]["classes"]
    classes["default"]["dscp"] = list(range(0, 8))
    classes["management"]["dscp"] = "default"  # now the 58-DSCP class, on qos-group 2
    text = cfg(resolve_raw(raw).devices["leaf4"])
    assert "  class class-default\n    set qos-group 2\n" in text
    assert "class-map type qos match-all FG_DEFAULT\n  match dscp 0-7\n" in text


def test_oob_role_and_ipv6_management() -> None:
    device = leaf4()
    assert device.mgmt is not None
    access = port(device, "Ethernet1/1").model_copy(update={"role": "oob-access", "access_vlan": 100,
                                                            "pfc_priorities": [], "lossless": False,
                                                            "mode": "switched"})
    mgmt = MgmtModel(**{**device.mgmt.model_dump(), "address": "2001:db8::14/64", "gateway": "2001:db8::1"})
    oob = device.model_copy(update={"role": "oob", "qos": None, "ports": [access], "mgmt": mgmt})
    text = cfg(oob)
    assert "\nvlan 100\n  name OOB_MGMT\n" in text
    assert "\ninterface Ethernet1/1\n  description GPU_node2_ens2f0np0\n  switchport\n  switchport mode access\n" \
           "  switchport access vlan 100\n  no shutdown\n" in text
    assert "priority-flow-control" not in text and "policy-map" not in text
    assert "  ipv6 route ::/0 2001:db8::1\n" in text and "  ipv6 address 2001:db8::14/64\n" in text
    assert reader.owned(reader.read(scramble(oob), {"nxos.cfg": text})) == reader.owned(oob)


def _with_watchdog(**changes: Any) -> DeviceModel:
    device = leaf4()
    assert device.qos is not None and device.qos.watchdog is not None
    wd = device.qos.watchdog.model_copy(update=changes)
    return device.model_copy(update={"qos": device.qos.model_copy(update={"watchdog": wd})})


def test_renderer_refuses_what_nxos_cannot_say() -> None:
    with pytest.raises(ValueError, match=r"platform nxos .* multiples of the poll interval"):
        cfg(_with_watchdog(detection_ms=300, poll_ms=200))
    with pytest.raises(ValueError, match="platform nxos has no PFC watchdog action 'alert'"):
        cfg(_with_watchdog(action="alert"))
    device = leaf4()
    ports = [p.model_copy(update={"pfc_priorities": [3, 4]}) if p.name == "Ethernet1/1" else p for p in device.ports]
    with pytest.raises(ValueError, match="platform nxos pauses the system no-drop classes"):
        cfg(device.model_copy(update={"ports": ports}))


@pytest.mark.parametrize(("change", "message"), [
    (lambda raw: raw["qos"]["classes"]["management"].update(lossless=True),
     "2 lossless classes (management, rdma) but platform nxos supports 1"),
    (lambda raw: raw["pfc"]["watchdog"].update(action="alert"), "platform nxos has no PFC watchdog action 'alert'"),
    (lambda raw: raw["pfc"]["watchdog"].update(detection_ms=250), "platform nxos sets PFC watchdog timers in 100 ms"),
    (lambda raw: raw["mtu"].update(fabric=9216), None),  # 9216 is fine on NX-OS (other platforms object)
])
def test_resolve_refuses_intents_naming_nxos(change: Callable[[dict[str, Any]], None], message: str | None) -> None:
    raw = mixed_intent()
    change(raw)
    try:
        resolve_raw(raw)
    except InputError as error:
        nxos = [d.message for d in error.diagnostics if "nxos" in d.message]
        assert any(message in m for m in nxos) if message is not None else nxos == [], nxos
    else:
        assert message is None


# --- the reader ----------------------------------------------------------------------------------------------

def test_reads_its_own_file_back_over_differing_skeletons() -> None:
    device = leaf4()
    raw = mixed_intent()
    raw["qos"]["classes"]["rdma"].update(queue=5, dscp=[24, 26])
    raw["pfc"]["watchdog"] = {"enabled": False}
    other = resolve_raw(raw).devices["leaf4"]
    for skeleton in (scramble(device), other):
        assert reader.owned(skeleton) != reader.owned(device)
        assert reader.owned(reader.read(skeleton, render_device(device))) == reader.owned(device)


def test_read_model_lints_clean_and_keeps_the_exact_ecn() -> None:
    device = read(cfg(leaf4()), leaf4())
    assert device.qos is not None
    rdma = next(q for q in device.qos.queues if q.index == 3)
    assert rdma.ecn == EcnThresholds(min_bytes=5000, max_bytes=40000, probability_pct=10)
    assert (rdma.traffic_class, rdma.lossless, rdma.class_name) == (3, True, "rdma")
    model = leaf4().qos
    assert model is not None and device.qos.dscp_to_tc == model.dscp_to_tc
    fabric = mixed()
    report = lint(fabric.model_copy(update={"devices": {**fabric.devices, "leaf4": device}}))
    assert [f for f in report.findings if f.device == "leaf4"] == []  # FG-ECN-008: the same bytes as the others


def test_hand_edits() -> None:
    text = cfg(leaf4())
    text = edit(text, "  mtu 9100\n", "  mtu 1500\n")  # Ethernet1/1
    text = edit(text, "    pause pfc-cos 3\n", "    pause pfc-cos 3-4\n")
    text = edit(text, "  priority-flow-control mode on\n", "  priority-flow-control mode auto\n", 1)
    text = edit(text, "minimum-threshold 5000 bytes maximum-threshold 40000 bytes drop-probability 10",
                "minimum-threshold 150 kbytes maximum-threshold 1 mbytes drop-probability 100")
    text = edit(text, "  class FG_RDMA\n    set qos-group 3\n", "  class FG_RDMA\n    set qos-group 0\n")
    text = edit(text, "watch-dog interval 100\n", "watch-dog interval 200\n")
    device = read(text)
    assert device.qos is not None
    assert port(device, "Ethernet1/1").mtu == 1500 and port(device, "Ethernet1/2").mtu == 9100
    assert port(device, "Ethernet1/1").pfc_priorities == []  # mode auto: DCBX decides, nothing guaranteed
    assert port(device, "Ethernet1/2").pfc_priorities == [3, 4]
    assert device.qos.lossless_priorities == [3, 4]
    queue = next(q for q in device.qos.queues if q.index == 3)
    assert queue.ecn == EcnThresholds(min_bytes=150 * 1024, max_bytes=1024 * 1024, probability_pct=100)
    assert device.qos.dscp_to_tc[26] == 0 and device.qos.dscp_to_tc[48] == 6
    assert device.qos.watchdog == WatchdogModel(detection_ms=400, restoration_ms=400, poll_ms=200, action="drop")



def test_ecn_in_packets_marks_and_is_said_not_judged() -> None:
    """`packets` is one of the NX-OS device model's threshold units (ipqos_ThreshUnit) and no byte count: the
    queue marks ECN (no FG-ECN-004 or FG-PFC-006), and FG-ECN-010 says its thresholds were not judged."""
    text = edit(cfg(leaf4()), "minimum-threshold 5000 bytes maximum-threshold 40000 bytes drop-probability 10",
                "minimum-threshold 20 packets maximum-threshold 200 packets drop-probability 10")
    device = read(text, leaf4())
    assert device.qos is not None
    queue = next(q for q in device.qos.queues if q.index == 3)
    assert queue.ecn is None and queue.ecn_unconverted == EcnUnconverted(min=20, max=200, unit="packets",
                                                                          probability_pct=10)
    fabric = mixed()
    found = {f.rule for f in lint(fabric.model_copy(update={"devices": {**fabric.devices, "leaf4": device}})).findings
             if f.device == "leaf4"}
    assert "FG-ECN-010" in found and not found & {"FG-ECN-004", "FG-PFC-006"}

def test_commands_as_typed_read_as_the_running_config_prints_them() -> None:
    """A hand edit types `no shut` and stray spaces; the CLI takes both as the whole command."""
    text = edit(cfg(leaf4()), "  mtu 9100\n  ", "  mtu   9000\n  ")  # Ethernet1/1
    text = edit(text, "  no shutdown\n", "  no shut\n")  # Ethernet1/1
    device = read(text)
    assert (port(device, "Ethernet1/1").admin_up, port(device, "Ethernet1/1").mtu) == (True, 9000)
    assert not port(read(edit(cfg(leaf4()), "  no shutdown\n", "  shut\n")), "Ethernet1/1").admin_up


BROWNFIELD_HEAD = """
!Command: show running-config
!Running configuration last done at: Tue Mar  4 10:11:12 2025
!Time: Tue Mar  4 10:12:00 2025

version 10.3(3) Bios:version 01.08
hostname leaf4
feature bgp
feature lldp
banner motd #
interface Ethernet1/9
  no shutdown
#

username admin password 5 $5$abc  role network-admin
ip domain-lookup
copp profile strict
snmp-server user admin network-admin auth md5 0x1234 priv 0x5678 localizedkey

class-map type qos match-any OTHER_TEAM
  match cos 5
policy-map type qos OTHER_TEAM_POLICY
  class OTHER_TEAM
    set qos-group 5
"""

BROWNFIELD_TAIL = """
interface Ethernet1/3

interface ethernet 1/5-6
  description spare
  no shutdown

interface Ethernet1/7, Ethernet1/8
  switchport access vlan 30

interface loopback0
  ip address 10.1.0.14/32

line console
line vty
router bgp 65014
  router-id 10.1.0.14
  neighbor 10.0.0.0
    remote-as 65000
    address-family ipv4 unicast
"""


def running_config(text: str) -> str:
    """fabricgen's nxos.cfg as `show running-config` prints it: defaults hidden (mgmt0 `mtu 1500`, the
    100 ms watch-dog interval), routing on the ports, and everything else around it."""
    text = text.replace("  mtu 1500\n", "").replace("priority-flow-control watch-dog interval 100\n", "")
    text = edit(text, "  description P2P_spine1_Ethernet24\n", "  description P2P_spine1_Ethernet24\n"
                "  link debounce time 0\n  ip address 10.0.0.1/31\n  ip ospf network point-to-point\n")
    text = edit(text, "\ninterface mgmt0\n", BROWNFIELD_TAIL + "\ninterface mgmt0\n")
    return BROWNFIELD_HEAD + text.split("\n", 2)[2]  # without fabricgen's header comment


def test_brownfield_running_config() -> None:
    device = read(running_config(cfg(leaf4())))
    got, want = reader.owned(device), reader.owned(leaf4())
    extra = {name: got["ports"].pop(name) for name in [f"Ethernet1/{n}" for n in (3, 5, 6, 7, 8)]}
    assert got == want
    assert extra["Ethernet1/3"] == {"admin_up": False, "description": None, "access_vlan": None,
                                    "tagged_vlans": None}
    assert extra["Ethernet1/5"] == extra["Ethernet1/6"] == {"admin_up": True, "description": "spare",
                                                           "access_vlan": None, "tagged_vlans": None}
    assert extra["Ethernet1/7"] == extra["Ethernet1/8"] == {"admin_up": False, "description": None,
                                                           "access_vlan": 30, "tagged_vlans": None}
    assert "Ethernet1/9" not in {p.name for p in device.ports}  # banner text, not an interface
    assert "loopback0" not in {p.name for p in device.ports}


def test_watchdog_off_on_one_pfc_port_is_that_ports_qos() -> None:
    text = edit(cfg(leaf4()), "  priority-flow-control watch-dog-interval on\n",
                "  priority-flow-control watch-dog-interval off\n", 1)  # Ethernet1/1 only
    device = read(text)
    assert device.qos is not None and device.qos == read(cfg(leaf4())).qos  # the device keeps its watchdog
    off = port(device, "Ethernet1/1").qos
    assert off is not None and off.watchdog is None
    assert off.model_copy(update={"watchdog": device.qos.watchdog}) == device.qos  # and nothing else differs
    assert port(device, "Ethernet1/2").qos is None


def test_watchdog_not_armed_globally_is_on_only_where_a_port_turns_it_on() -> None:
    text = edit(cfg(leaf4()), "priority-flow-control watch-dog-interval on\npriority", "priority")
    device = read(text)
    assert device.qos is not None and device.qos.watchdog is None
    on = port(device, "Ethernet1/1").qos  # every rendered PFC port says `watch-dog-interval on`
    assert on is not None and on.watchdog == WatchdogModel(detection_ms=200, restoration_ms=200, poll_ms=100,
                                                           action="drop")
    bare = edit(text, "  priority-flow-control watch-dog-interval on\n", "", 1)
    assert port(read(bare), "Ethernet1/1").qos is None  # neither line: off, as the device


def test_a_port_bound_to_its_own_queuing_policy_runs_its_queues() -> None:
    text = cfg(leaf4())
    own = text[text.index("policy-map type queuing FABRICGEN_QUEUING\n"):text.index("\npolicy-map type network-qos")]
    own = own.replace("FABRICGEN_QUEUING", "SHALLOW").replace(
        "minimum-threshold 5000 bytes maximum-threshold 40000 bytes", "minimum-threshold 2 kbytes "
        "maximum-threshold 20 kbytes").replace("c-out-8q-q3\n    bandwidth remaining percent 50",
                                               "c-out-8q-q3\n    bandwidth remaining percent 60")
    text = edit(text, "\nsystem qos\n", f"\n{own}\nsystem qos\n")
    text = edit(text, "  service-policy type qos input FABRICGEN_QOS\n",
                "  service-policy type qos input FABRICGEN_QOS\n  service-policy type queuing output SHALLOW\n")
    device = read(text)
    assert device.qos is not None and device.qos == read(cfg(leaf4())).qos
    own_qos = port(device, "Ethernet1/1").qos
    assert own_qos is not None
    rdma = next(q for q in own_qos.queues if q.index == 3)
    assert (rdma.weight, rdma.ecn) == (60, EcnThresholds(min_bytes=2048, max_bytes=20480, probability_pct=10))
    assert own_qos.model_copy(update={"queues": device.qos.queues}) == device.qos
    assert port(device, "Ethernet1/2").qos is None


def test_a_port_without_classification_trusts_nothing() -> None:
    text = edit(cfg(leaf4()), "  service-policy type qos input FABRICGEN_QOS\n", "")  # Ethernet1/1
    device = read(text)
    own = port(device, "Ethernet1/1").qos
    assert own is not None and own.trust == "none"
    assert set(own.dscp_to_tc.values()) == {0}  # every packet in qos-group 0
    assert device.qos is not None and device.qos.trust == "dscp" and device.qos.dscp_to_tc[26] == 3


def test_a_port_with_another_classification_policy() -> None:
    text = edit(cfg(leaf4()), "\nsystem qos\n", "\npolicy-map type qos CNP_ONLY\n  class FG_CNP\n"
                "    set qos-group 6\n\nsystem qos\n")
    text = edit(text, "  service-policy type qos input FABRICGEN_QOS\n", "  service-policy type qos input CNP_ONLY\n")
    own = port(read(text), "Ethernet1/1").qos
    assert own is not None and own.trust == "dscp"
    assert (own.dscp_to_tc[26], own.dscp_to_tc[48], own.dscp_to_tc[16]) == (0, 6, 0)


@pytest.mark.parametrize(("lines", "tagged"), [
    ("  switchport mode trunk\n", list(range(2, 4095))),  # all but the native VLAN 1
    ("  switchport mode trunk\n  switchport trunk allowed vlan 10-12,20\n", [10, 11, 12, 20]),
    ("  switchport mode trunk\n  switchport trunk allowed vlan 10-12\n  switchport trunk allowed vlan add 30\n"
     "  switchport trunk allowed vlan remove 11\n  switchport trunk native vlan 10\n", [12, 30]),
    ("  switchport mode trunk\n  switchport trunk allowed vlan except 1-4000\n", list(range(4001, 4095))),
    ("  switchport mode trunk\n  switchport trunk allowed vlan none\n", []),
    ("  switchport mode access\n  switchport access vlan 30\n", None),
])
def test_trunk_vlans_carried_tagged(lines: str, tagged: list[int] | None) -> None:
    text = edit(cfg(leaf4()), "  no switchport\n", "  switchport\n" + lines)  # Ethernet1/1
    device = read(text)
    assert port(device, "Ethernet1/1").tagged_vlans == tagged
    assert port(device, "Ethernet1/2").tagged_vlans is None  # routed


def test_port_without_classification_is_not_lossless() -> None:
    text = edit(cfg(leaf4()), "  service-policy type qos input FABRICGEN_QOS\n", "")
    device = read(text)
    assert port(device, "Ethernet1/1").pfc_priorities == [] and port(device, "Ethernet1/2").pfc_priorities == [3]


def test_other_spellings_nxos_accepts() -> None:
    text = cfg(leaf4())
    text = edit(text, "  match dscp 26\n", "  match dscp af31,cs3\n")  # 26 and 24
    text = edit(text, "class-map type qos match-all FG_CNP\n", "class-map type qos match-any FG_CNP\n")
    text = edit(text, "  match dscp 48\n", "  match dscp 48\n  match dscp 56\n")
    text = edit(text, "    priority level 1\n", "    priority\n")
    text = edit(text, "c-out-8q-q2\n    bandwidth remaining percent 10\n", "c-out-8q-q2\n    bandwidth percent 10\n")
    device = read(text)
    assert device.qos is not None
    assert (device.qos.dscp_to_tc[24], device.qos.dscp_to_tc[26], device.qos.dscp_to_tc[56]) == (3, 3, 6)
    assert [(q.index, q.scheduler, q.weight) for q in device.qos.queues] == [
        (0, "dwrr", 40), (2, "dwrr", 10), (3, "dwrr", 50), (6, "strict", None)]


@pytest.mark.parametrize(("lines", "speed", "fec"), [
    ("  speed 100000\n  fec rs-fec\n", 100_000, "rs"),
    ("  speed 25000\n  fec rs-ieee\n", 25_000, "rs"),  # every Reed-Solomon variant is "rs"
    ("  speed 25000\n  fec rs-cons16\n", 25_000, "rs"),
    ("  speed 25000\n  fec fc-fec\n", 25_000, "fc"),
    ("  speed 400000\n  fec off\n", 400_000, "none"),
    ("  speed auto\n  fec auto\n", None, None),  # negotiated: the config does not say
    ("  speed 100000\n  fec off\n  no speed\n  no fec\n", None, None),  # the later line wins
    ("", None, None),  # no line: NX-OS's auto
])
def test_reads_speed_and_fec(lines: str, speed: int | None, fec: str | None) -> None:
    text = edit(cfg(leaf4()), "  speed 400000\n  fec kp-fec\n", lines)  # Ethernet1/1
    device = read(text)
    assert (port(device, "Ethernet1/1").speed_mbps, port(device, "Ethernet1/1").fec) == (speed, fec)
    assert (port(device, "Ethernet1/2").speed_mbps, port(device, "Ethernet1/2").fec) == (400_000, "rs")


def test_fec_off_on_one_400g_port_is_found_on_that_port() -> None:
    """The physical rules judge the FEC read back (FG-CFG-001's comparison with the intent is
    tests/test_lint_completeness.py's, through tests/mutations/nxos.py)."""
    text = edit(cfg(leaf4()), "  speed 400000\n  fec kp-fec\n", "  speed 400000\n  fec off\n", 3)  # 1/63
    text = edit(text, "  fec off\n", "  fec kp-fec\n", 2)  # only the third port keeps `fec off`
    fabric = mixed()
    device = read(text, leaf4())
    report = lint(fabric.model_copy(update={"devices": {**fabric.devices, "leaf4": device}}))
    found = {(f.rule, f.port) for f in report.findings if f.device == "leaf4"}
    assert ("FG-PHY-003", "Ethernet1/63") in found  # 400G without RS-FEC
    assert ("FG-PHY-002", "Ethernet1/63") in found  # the spine's end runs RS-FEC
    assert {p for _, p in found} == {"Ethernet1/63"}


def test_wred_that_does_not_mark_reads_without_ecn() -> None:
    text = cfg(leaf4())
    for line in ("random-detect minimum-threshold 5000 bytes maximum-threshold 40000 bytes drop-probability 10 "
                 "weight 0",
                 "random-detect minimum-threshold 10 packets maximum-threshold 40 packets drop-probability 10 "
                 "weight 0 ecn"):
        bad = edit(text, "random-detect minimum-threshold 5000 bytes maximum-threshold 40000 bytes "
                         "drop-probability 10 weight 0 ecn", line)
        qos = read(bad).qos
        assert qos is not None and next(q for q in qos.queues if q.index == 3).ecn is None


def test_missing_and_extra_interfaces() -> None:
    text = edit(cfg(leaf4()), "interface Ethernet1/64\n", "interface Ethernet1/60\n")
    device = read(text, leaf4())
    assert not port(device, "Ethernet1/64").admin_up
    extra = port(device, "Ethernet1/60")
    assert (extra.role, extra.admin_up, extra.mtu, extra.pfc_priorities) == ("unused", True, 9100, [3])


def test_without_system_policies_nothing_is_lossless() -> None:
    text = edit(cfg(leaf4()), "  service-policy type network-qos FABRICGEN_NETWORK_QOS\n"
                              "  service-policy type queuing output FABRICGEN_QUEUING\n", "")
    qos = read(text).qos
    assert qos is not None and qos.lossless_priorities == [] and qos.queues == []


@pytest.mark.parametrize(("old", "new"), [
    ("  mtu 9100\n", "  mtu jumbo\n"),
    ("  match dscp 26\n", "  match dscp 99\n"),
    ("    set qos-group 3\n", "    set qos-group 9\n"),
    ("    pause pfc-cos 3\n", "    pause pfc-cos x\n"),
    ("watch-dog shutdown-multiplier 2\n", "watch-dog shutdown-multiplier two\n"),
    ("  speed 400000\n", "  speed 4000000\n"),
    ("  fec kp-fec\n", "  fec kp4\n"),
])
def test_bad_value_names_file_and_line(old: str, new: str) -> None:
    text = edit(cfg(leaf4()), old, new)
    with pytest.raises(ConfigReadError) as error:
        read(text)
    assert (error.value.file, error.value.line) == ("nxos.cfg", line_of(text, new.strip()))


def test_missing_file() -> None:
    with pytest.raises(ConfigReadError, match=r"nxos\.cfg:0: file missing"):
        reader.read(leaf4(), {})


def test_device_without_qos_or_management_stays_without() -> None:
    skeleton = leaf4().model_copy(update={"qos": None, "mgmt": None})
    device = reader.read(skeleton, render_device(leaf4()))
    assert device.qos is None and device.mgmt is None


# --- the round-trip property ---------------------------------------------------------------------------------

def test_mixed_example_round_trips_on_every_nxos_device() -> None:
    devices = [d for d in mixed().devices.values() if d.platform == "nxos"]
    assert [d.name for d in devices] == ["leaf4"]
    for device in devices:
        got = reader.owned(reader.read(scramble(device), render_device(device)))
        assert got == reader.owned(device)


def _nxos_watchdog(draw: st.DrawFn) -> dict[str, Any]:
    """Timers NX-OS can say: a poll interval in 100 ms steps, detection and restoration whole multiples."""
    poll = 100 * draw(st.integers(1, 10))
    return {"enabled": draw(st.sampled_from([True, True, False])), "poll_ms": poll, "action": "drop",
            "detection_ms": poll * draw(st.integers(1, 5000 // poll)),
            "restoration_ms": poll * draw(st.integers(1, 20))}


@st.composite
def nxos_intents(draw: st.DrawFn) -> dict[str, Any]:
    """tests/test_roundtrip.py's generated intents, kept within NX-OS's capability record (one lossless class,
    poll-multiple watchdog timers, drop action)."""
    raw = copy.deepcopy(draw(intents()))
    lossless = [cls for cls in raw["qos"]["classes"].values() if cls["lossless"]]
    for cls in lossless[1:]:
        cls["lossless"] = False
    raw["pfc"]["watchdog"] = _nxos_watchdog(draw)
    return raw


@settings(max_examples=30, deadline=None, derandomize=True)
@given(raw=nxos_intents())
def test_generated_intents_round_trip(raw: dict[str, Any]) -> None:
    try:
        intent = Intent.model_validate(raw)
    except ValidationError:
        assume(False)
        raise
    assume(not check_intent(intent))
    try:
        fabric = resolve(intent, mixed_inventory())
    except InputError:
        assume(False)  # another platform of the mixed fabric refuses it
        raise
    device = fabric.devices["leaf4"]
    for skeleton in (leaf4(), scramble(device)):
        got = reader.owned(reader.read(skeleton, render_device(device)))
        assert got == reader.owned(device)


def test_generated_models_with_extremes_round_trip() -> None:
    """Thresholds under one kbyte, strict q-default, every queue used: still exact after rounding."""
    device = leaf4()
    assert device.qos is not None
    weights = {1: 50, 2: 10, 3: 10, 4: 10, 5: 10, 6: 10}  # q-default and q7 strict
    queues = [QueueModel(index=i, traffic_class=i, class_name=f"c{i}", lossless=i == 3,
                         scheduler="dwrr" if i in weights else "strict", weight=weights.get(i),
                         ecn=EcnThresholds(min_bytes=i * 700, max_bytes=i * 900 + 1, probability_pct=i + 1))
              for i in range(8)]
    qos = device.qos.model_copy(update={"queues": queues, "dscp_to_tc": {d: d % 8 for d in range(64)},
                                        "tc_to_queue": {t: t for t in range(8)}})
    extreme = device.model_copy(update={"qos": qos})
    assert reader.owned(reader.read(scramble(extreme), render_device(extreme))) == reader.owned(extreme)
