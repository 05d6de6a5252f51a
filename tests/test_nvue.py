"""NVIDIA Cumulus Linux (NVUE): renderer snippets, the two files' equivalence, the reader over hand-edited and
brownfield configs, and the round trip owned(read(render(m))) == owned(m) on leaf3 of the mixed example and on
generated intents, always over a skeleton that differs from the model.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError
from test_roundtrip import _classes, scramble

import fabricgen.platforms.nvue.read as nvue
from fabricgen.api import render_device
from fabricgen.load.fabric import load
from fabricgen.models.device import (
    DeviceModel,
    EcnThresholds,
    Fabric,
    LosslessPoolModel,
    MgmtModel,
    PortModel,
    QueueModel,
    WatchdogModel,
)
from fabricgen.models.diagnostics import InputError
from fabricgen.models.intent import Intent, check_intent
from fabricgen.models.inventory import Inventory
from fabricgen.platforms import ConfigReadError, get_platform
from fabricgen.platforms.nvue.capability import CAPABILITY, COMMANDS, RELEASE, RELEASES, YAML_FILE
from fabricgen.platforms.nvue.render import UnsupportedOnPlatform, pfc_profile_name, watchdog_settings
from fabricgen.resolve import resolve

from conftest import ROOT

MIXED_INTENT = ROOT / "intent" / "mixed.yaml"
MIXED_INVENTORY = ROOT / "inventory" / "mixed"


# --- the mixed example --------------------------------------------------------------------------------------

def _stand_in(inventory: Inventory) -> Inventory:
    """Every device but the NVUE ones becomes an EOS switch or a ConnectX host, so that generated intents meet
    only NVUE's limits. The NVUE leaf's model depends on the intent, its own platform and its peers' roles and
    ports, never on their platforms."""
    devices = {name: device if device.platform == "nvue" else device.model_copy(
        update={"platform": "connectx" if device.role == "gpu-host" else "eos"})
        for name, device in inventory.devices.items()}
    return inventory.model_copy(update={"devices": devices})


@functools.cache
def mixed_inventory(stand_ins: bool = False) -> Inventory:
    inventory = load(MIXED_INTENT, MIXED_INVENTORY).inventory
    return _stand_in(inventory) if stand_ins else inventory


@functools.cache
def mixed(intent: Path = MIXED_INTENT) -> Fabric:
    loaded = load(intent, MIXED_INVENTORY)
    return resolve(loaded.intent, mixed_inventory(), loaded.locate)


@pytest.fixture(scope="module")
def leaf3() -> DeviceModel:
    return mixed().devices["leaf3"]


@pytest.fixture(scope="module")
def files(leaf3: DeviceModel) -> dict[str, str]:
    return render_device(leaf3)


def nvue_devices() -> list[str]:
    return sorted(name for name, device in mixed().devices.items() if device.platform == "nvue")


def port(device: DeviceModel, name: str) -> PortModel:
    return next(p for p in device.ports if p.name == name)


def block(text: str, first: str, count: int) -> str:
    """``count`` lines of ``text`` starting at the line ``first``."""
    lines = text.splitlines()
    start = lines.index(first)
    return "\n".join(lines[start:start + count])


def edit(text: str, old: str, new: str) -> str:
    assert old in text, f"{old!r} not in the file"
    return text.replace(old, new, 1)


def line_of(text: str, needle: str) -> int:
    return next(number for number, line in enumerate(text.splitlines(), 1) if needle in line)


# --- capability ---------------------------------------------------------------------------------------------

def test_capability_names_the_pinned_release() -> None:
    assert RELEASE is RELEASES["5.15"] and RELEASE.version in CAPABILITY.target
    assert CAPABILITY.output_files == (YAML_FILE, COMMANDS)
    assert (CAPABILITY.max_mtu, CAPABILITY.lossless_class_limit, CAPABILITY.watchdog_actions) == (9216, 1, ("drop",))
    assert CAPABILITY.mgmt_vrf_fixed_name == "mgmt" and not CAPABILITY.programs_headroom
    assert get_platform("nvue").read is nvue.read and get_platform("nvue").owned is nvue.owned


def test_mixed_example_has_one_nvue_leaf() -> None:
    assert nvue_devices() == ["leaf3"]


# --- renderer -----------------------------------------------------------------------------------------------

def test_classification_and_queue_map(files: dict[str, str]) -> None:
    text = files[COMMANDS]
    assert "nv set qos mapping default-global trust l3\n" in text
    assert "nv set qos mapping default-global dscp 16 switch-priority 2\n" in text
    assert "nv set qos mapping default-global dscp 26 switch-priority 3\n" in text
    assert "nv set qos mapping default-global dscp 48 switch-priority 6\n" in text
    zero = re.search(r"^nv set qos mapping default-global dscp (\S+) switch-priority 0$", text, re.M)
    assert zero is not None and len(zero.group(1).split(",")) == 61
    assert "nv set qos egress-queue-mapping default-global switch-priority 3 traffic-class 3\n" in text
    assert text.count("nv set qos egress-queue-mapping") == 8


def test_pfc_profiles_per_cable_length(files: dict[str, str]) -> None:
    text = files[COMMANDS]
    assert block(text, "nv set qos traffic-pool default-lossless memory-percent 50", 6) == (
        "nv set qos traffic-pool default-lossless memory-percent 50\n"
        "nv set qos traffic-pool default-lossy memory-percent 50\n"
        "nv set qos pfc pfc-sp3-3m switch-priority 3\n"
        "nv set qos pfc pfc-sp3-3m tx enable\n"
        "nv set qos pfc pfc-sp3-3m rx enable\n"
        "nv set qos pfc pfc-sp3-3m cable-length 3")
    assert "nv set qos pfc pfc-sp3-34m cable-length 34\n" in text  # swp63 -> spine1, 34 m
    assert "nv set qos pfc pfc-sp3-39m cable-length 39\n" in text  # swp64 -> spine2, 39 m
    assert "nv set interface swp1 qos pfc profile pfc-sp3-3m\n" in text
    assert "nv set interface swp64 qos pfc profile pfc-sp3-39m\n" in text


def test_watchdog_ecn_and_scheduler(files: dict[str, str]) -> None:
    text = files[COMMANDS]
    assert "nv set qos pfc-watchdog polling-interval 100\nnv set qos pfc-watchdog robustness 2\n" in text
    assert text.count("qos pfc-watchdog state enable\n") == 4
    assert block(text, "nv set qos congestion-control default-global traffic-class 3 ecn enable", 4) == (
        "nv set qos congestion-control default-global traffic-class 3 ecn enable\n"
        "nv set qos congestion-control default-global traffic-class 3 min-threshold 5000\n"
        "nv set qos congestion-control default-global traffic-class 3 max-threshold 40000\n"
        "nv set qos congestion-control default-global traffic-class 3 probability 10")
    # default-global marks TC 0 unless told: every class without ECN is switched off explicitly
    assert "nv set qos congestion-control default-global traffic-class 0 ecn disable\n" in text
    assert text.count(" ecn disable\n") == 7
    assert block(text, "nv set qos egress-scheduler default-global traffic-class 0 mode dwrr", 7) == (
        "nv set qos egress-scheduler default-global traffic-class 0 mode dwrr\n"
        "nv set qos egress-scheduler default-global traffic-class 0 bw-percent 40\n"
        "nv set qos egress-scheduler default-global traffic-class 2 mode dwrr\n"
        "nv set qos egress-scheduler default-global traffic-class 2 bw-percent 10\n"
        "nv set qos egress-scheduler default-global traffic-class 3 mode dwrr\n"
        "nv set qos egress-scheduler default-global traffic-class 3 bw-percent 50\n"
        "nv set qos egress-scheduler default-global traffic-class 6 mode strict")


def test_ports_and_management(files: dict[str, str]) -> None:
    text = files[COMMANDS]
    assert block(text, "nv set interface swp63 type swp", 8) == (
        "nv set interface swp63 type swp\n"
        "nv set interface swp63 description P2P_spine1_Ethernet16\n"
        "nv set interface swp63 link state up\n"
        "nv set interface swp63 link speed 400G\n"
        "nv set interface swp63 link fec rs\n"
        "nv set interface swp63 link mtu 9100\n"
        "nv set interface swp63 qos pfc profile pfc-sp3-34m\n"
        "nv set interface swp63 qos pfc-watchdog state enable")
    assert block(text, "nv set interface eth0 type eth", 6) == (
        "nv set interface eth0 type eth\n"
        "nv set interface eth0 vrf mgmt\n"
        "nv set interface eth0 ipv4 dhcp-client state disabled\n"
        "nv set interface eth0 ipv4 address 192.0.2.13/24\n"
        "nv set interface eth0 link mtu 1500\n"
        "nv set vrf mgmt router static 0.0.0.0/0 via 192.0.2.1")
    assert "interface eth0 qos" not in text and "eth0 link state" not in text


def test_yaml_is_the_same_settings_as_a_patch(files: dict[str, str]) -> None:
    document = yaml.safe_load(files[YAML_FILE])
    assert isinstance(document, list) and list(document[0]) == ["set"] and len(document) == 1
    body = document[0]["set"]
    assert body["qos"]["pfc"]["pfc-sp3-34m"] == {"cable-length": 34, "rx": "enable", "switch-priority": {"3": {}},
                                                 "tx": "enable"}
    assert body["qos"]["congestion-control"]["default-global"]["traffic-class"]["3"] == {
        "ecn": "enable", "min-threshold": 5000, "max-threshold": 40000, "probability": 10}
    assert body["interface"]["eth0"] == {"ipv4": {"address": {"192.0.2.13/24": {}},
                                                  "dhcp-client": {"state": "disabled"}},
                                         "link": {"mtu": 1500}, "type": "eth", "vrf": "mgmt"}
    assert body["vrf"] == {"mgmt": {"router": {"static": {"0.0.0.0/0": {"via": {"192.0.2.1": {}}}}}}}
    assert len(body["qos"]["mapping"]["default-global"]["dscp"]) == 64
    # The command file and the patch are one set of settings.
    assert nvue._from_commands(files[COMMANDS]).root == nvue._from_yaml(files[YAML_FILE]).root


def test_yaml_keys_are_sorted_and_output_is_deterministic(leaf3: DeviceModel, files: dict[str, str]) -> None:
    body = files[YAML_FILE].split("- set:\n", 1)[1]
    top = [line.strip() for line in body.splitlines() if re.fullmatch(r" {4}\S.*", line)]
    assert top == sorted(top) == ["interface:", "qos:", "vrf:"]
    assert render_device(leaf3) == files
    assert all(text.isascii() and text.endswith("\n") for text in files.values())


def test_roce_profile_comments_only_where_values_match(files: dict[str, str]) -> None:
    notes = [line for line in files[COMMANDS].splitlines() if "`nv set qos roce`" in line]
    assert notes == [
        "# as `nv set qos roce` applies it: DSCP 26 -> switch-priority 3; DSCP 48 -> switch-priority 6",
        "# as `nv set qos roce` applies it: switch-priority 3 -> traffic-class 3; switch-priority 6 -> "
        "traffic-class 6",
        "# as `nv set qos roce` applies it: PFC on switch-priority 3, tx and rx",
        "# as `nv set qos roce` applies it: traffic-class 3 dwrr 50 %; traffic-class 6 strict",
    ]  # ECN (5 KB..40 KB at 10 %) and traffic-class 0 (DWRR 40) differ from the profile: no comment
    assert [line[2:] for line in files[YAML_FILE].splitlines() if "`nv set qos roce`" in line] == \
        [note[2:] for note in notes]
    assert "nv set qos roce" not in "\n".join(line for line in files[COMMANDS].splitlines()
                                             if not line.startswith("#"))


def test_roce_recipe_intent_matches_the_profile_in_ecn_and_scheduling() -> None:
    text = render_device(mixed(ROOT / "intent" / "minimal.yaml").devices["leaf3"])[COMMANDS]
    assert "# as `nv set qos roce` applies it: ECN on traffic-class 3, 150000-1500000 B, probability 100\n" in text
    assert ("# as `nv set qos roce` applies it: traffic-class 0 dwrr 50 %; traffic-class 3 dwrr 50 %; "
            "traffic-class 6 strict\n") in text


def test_watchdog_timers_nvue_cannot_express_are_refused() -> None:
    assert [s.command() for s in watchdog_settings(WatchdogModel(detection_ms=600, restoration_ms=200, poll_ms=200,
                                                                 action="drop"))] == [
        "nv set qos pfc-watchdog polling-interval 200", "nv set qos pfc-watchdog robustness 3"]
    with pytest.raises(UnsupportedOnPlatform, match=r"platform nvue .* not a multiple of poll_ms 200"):
        watchdog_settings(WatchdogModel(detection_ms=500, restoration_ms=200, poll_ms=200, action="drop"))
    with pytest.raises(UnsupportedOnPlatform, match="platform nvue has no PFC watchdog action 'alert'"):
        watchdog_settings(WatchdogModel(detection_ms=200, restoration_ms=200, poll_ms=100, action="alert"))


def _mixed_intent(**changes: Any) -> Intent:
    raw = yaml.safe_load(MIXED_INTENT.read_text())
    for path, value in changes.items():
        node = raw
        *parents, last = path.split("__")
        for key in parents:
            node = node[key]
        node[last] = value
    return Intent.model_validate(raw)


def test_resolve_refuses_what_nvue_cannot_express() -> None:
    inventory = mixed_inventory(stand_ins=True)
    with pytest.raises(InputError, match=r"2 lossless classes .* platform nvue supports 1"):
        resolve(_mixed_intent(qos__classes__management__lossless=True), inventory)
    with pytest.raises(InputError, match="platform nvue has no PFC watchdog action 'alert'"):
        resolve(_mixed_intent(pfc__watchdog__action="alert"), inventory)


def test_ipv6_management_and_default_cable(leaf3: DeviceModel) -> None:
    assert leaf3.mgmt is not None
    mgmt = leaf3.mgmt.model_copy(update={"address": "2001:db8::13/64", "gateway": "2001:db8::1"})
    ports = [p.model_copy(update={"cable_m": None}) if p.name == "swp63" else p for p in leaf3.ports]
    device = leaf3.model_copy(update={"mgmt": mgmt, "ports": ports})
    rendered = render_device(device)
    text = rendered[COMMANDS]
    assert "nv set interface eth0 ipv6 dhcp-client state disabled\n" in text
    assert "nv set interface eth0 ipv6 address 2001:db8::13/64\n" in text
    assert "nv set vrf mgmt router static ::/0 via 2001:db8::1\n" in text
    assert "nv set interface swp63 qos pfc profile pfc-sp3-10m\n" in text  # Cumulus's default 10 m, explicit
    read_back = nvue.read(scramble(device), rendered)
    assert nvue.owned(read_back) == nvue.owned(device)
    assert port(read_back, "swp63").cable_m == 10


def test_access_vlan_on_an_oob_role_switch(leaf3: DeviceModel) -> None:
    ports = [p.model_copy(update={"role": "oob-access", "mode": "switched", "access_vlan": 100, "pfc_priorities": [],
                                  "lossless": False})
             if p.name.startswith("swp") else p for p in leaf3.ports]
    device = leaf3.model_copy(update={"role": "oob", "qos": None, "ports": ports})
    rendered = render_device(device)
    assert "nv set bridge domain br_default vlan 100\n" in rendered[COMMANDS]
    assert "nv set interface swp1 bridge domain br_default access 100\n" in rendered[COMMANDS]
    assert "nv set qos" not in rendered[COMMANDS] and "qos pfc" not in rendered[COMMANDS]
    assert nvue.owned(nvue.read(scramble(device), rendered)) == nvue.owned(device)


def test_profile_names_are_unique_per_priorities_and_cable() -> None:
    assert pfc_profile_name([3], 34) == "pfc-sp3-34m"
    assert pfc_profile_name([4, 3], 5) == "pfc-sp34-5m"


# --- reader: hand edits -------------------------------------------------------------------------------------

def test_hand_edited_yaml(leaf3: DeviceModel, files: dict[str, str]) -> None:
    text = files[YAML_FILE]
    text = edit(text, "      swp63:\n        description: P2P_spine1_Ethernet16\n        link:\n          fec: rs\n"
                "          mtu: 9100", "      swp63:\n        description: P2P_spine1_Ethernet16\n        link:\n"
                "          fec: rs\n          mtu: 1500")
    text = edit(text, "              min-threshold: 5000", "              min-threshold: 6000")
    text = edit(text, "          cable-length: 39", "          cable-length: 100")
    device = nvue.read(scramble(leaf3), {YAML_FILE: text})
    assert port(device, "swp63").mtu == 1500 and port(device, "swp64").mtu == 9100
    assert port(device, "swp64").cable_m == 100 and port(device, "swp63").cable_m == 34
    assert device.qos is not None
    queue3 = next(q for q in device.qos.queues if q.index == 3)
    assert queue3.ecn == EcnThresholds(min_bytes=6000, max_bytes=40000, probability_pct=10)


def test_hand_edited_commands_later_lines_win(leaf3: DeviceModel, files: dict[str, str]) -> None:
    text = files[COMMANDS] + (
        "nv set interface swp2 link mtu 9000\n"
        "nv unset interface swp63 qos pfc-watchdog\n"
        "nv set qos mapping default-global dscp 24,25 switch-priority 3\n"
        "nv set qos pfc pfc-sp3-3m rx disable\n")
    device = nvue.read(scramble(leaf3), {COMMANDS: text})
    assert port(device, "swp2").mtu == 9000
    # one lossless port of four is no longer guarded: the switch's watchdog is the others', swp63's QoS says none
    assert device.qos is not None and device.qos.watchdog is not None
    swp63 = port(device, "swp63").qos
    assert swp63 is not None and swp63.watchdog is None and swp63.model_copy(update={"watchdog": None}) == \
        device.qos.model_copy(update={"watchdog": None})
    assert [p.qos for p in device.ports if p.name in ("swp1", "swp2", "swp64")] == [None] * 3
    assert (device.qos.dscp_to_tc[24], device.qos.dscp_to_tc[25], device.qos.dscp_to_tc[27]) == (3, 3, 0)
    # rx off on the host-facing profile: PFC is not both ways any more, so those ports read as lossy
    assert port(device, "swp1").pfc_priorities == [] and not port(device, "swp1").lossless
    assert port(device, "swp63").pfc_priorities == [3]


# --- reader: each port's effective state -------------------------------------------------------------------

def test_link_speed_fec_and_bridge_membership_per_port(leaf3: DeviceModel, files: dict[str, str]) -> None:
    text = files[COMMANDS] + (
        "nv set interface swp1 link speed 100G\n"
        "nv set interface swp2 link speed auto\n"
        "nv set interface swp2 link fec baser\n"
        "nv unset interface swp64 link fec\n"
        "nv set bridge domain br_default vlan 10,20\n"
        "nv set interface swp63 bridge domain br_default\n"  # a trunk of the bridge's VLANs, 1 untagged
        "nv set interface swp64 bridge domain br_default vlan 30\n"  # its own VLANs...
        "nv set interface swp64 bridge domain br_default untagged none\n")  # ...all of them tagged
    device = nvue.read(scramble(leaf3), {COMMANDS: text})
    assert [(p.speed_mbps, p.fec) for p in device.ports if p.name.startswith("swp")] == [
        (100_000, "rs"), (None, "fc"), (400_000, "rs"), (400_000, None)]
    assert [(p.mode, p.tagged_vlans) for p in device.ports if p.name.startswith("swp")] == [
        ("routed", None), ("routed", None), ("switched", [10, 20]), ("switched", [30])]


def test_a_bridge_member_untagged_on_a_bridge_vlan_carries_the_others_tagged(leaf3: DeviceModel,
                                                                             files: dict[str, str]) -> None:
    text = files[COMMANDS] + (
        "nv set bridge domain br_default vlan 10-12\n"
        "nv set bridge domain br_default untagged 11\n"
        "nv set interface swp1-2 bridge domain br_default\n"
        "nv set interface swp2 bridge domain br_default untagged auto\n"  # the bridge's, as without it
        "nv set interface swp63 bridge domain br_default access 12\n")  # an access port carries nothing tagged
    device = nvue.read(leaf3, {COMMANDS: text})
    assert [port(device, name).tagged_vlans for name in ("swp1", "swp2", "swp63")] == [[10, 12], [10, 12], None]
    assert (port(device, "swp63").mode, port(device, "swp63").access_vlan) == ("switched", 12)


def test_link_speed_and_fec_nvue_has_no_word_for_are_refused_at_their_line(leaf3: DeviceModel,
                                                                           files: dict[str, str]) -> None:
    for line, message in (("nv set interface swp2 link speed 7G", "expected auto or one of 10M"),
                          ("nv set interface swp2 link fec fc", "expected auto, rs, baser, off or driver-auto")):
        text = files[COMMANDS] + line + "\n"
        with pytest.raises(ConfigReadError, match=message) as error:
            nvue.read(leaf3, {COMMANDS: text})
        assert (error.value.file, error.value.line) == (COMMANDS, len(text.splitlines()))


def test_fec_and_speed_render_in_nvue_words_and_read_back(leaf3: DeviceModel) -> None:
    fecs = {"swp1": "fc", "swp2": "none", "swp63": None}
    ports = [p.model_copy(update={"fec": fecs[p.name]}) if p.name in fecs else p for p in leaf3.ports]
    device = leaf3.model_copy(update={"ports": ports})
    rendered = render_device(device)
    assert "nv set interface swp1 link fec baser\nnv set interface swp1 link mtu" in rendered[COMMANDS]
    assert "nv set interface swp2 link fec off\n" in rendered[COMMANDS]
    assert "interface swp63 link fec" not in rendered[COMMANDS]  # Spectrum's default, auto: left alone
    assert "          fec: 'off'\n" in rendered[YAML_FILE]  # quoted: YAML 1.1 reads a bare off as false
    assert nvue.owned(nvue.read(scramble(device), rendered)) == nvue.owned(device)
    # A bare `off` (YAML 1.1 false) is still the word written
    bare = nvue.read(device, {YAML_FILE: rendered[YAML_FILE].replace("fec: 'off'", "fec: off")})
    assert port(bare, "swp2").fec == "none"


def test_a_speed_nvue_cannot_set_is_refused(leaf3: DeviceModel) -> None:
    ports = [p.model_copy(update={"speed_mbps": 2_500}) if p.name == "swp1" else p for p in leaf3.ports]
    with pytest.raises(UnsupportedOnPlatform, match="platform nvue has no link speed 2500 Mb/s for swp1"):
        render_device(leaf3.model_copy(update={"ports": ports}))


PORT_PROFILES = """\
- set:
    qos:
      mapping:
        pcp-only:
          trust: l2
      egress-scheduler:
        all-strict:
          traffic-class:
            0,2,3,6:
              mode: strict
      congestion-control:
        deep-ecn:
          traffic-class:
            '3':
              ecn: enable
              min-threshold: 150000
              max-threshold: 1500000
              probability: 100
    interface:
      swp2:
        qos:
          mapping:
            profile: pcp-only
      swp63:
        qos:
          egress-scheduler:
            profile: all-strict
      swp64:
        qos:
          congestion-control:
            profile: deep-ecn
          pfc-watchdog:
            state: disable
"""


def test_a_port_bound_to_its_own_qos_profiles_reads_them_as_its_qos(leaf3: DeviceModel,
                                                                  files: dict[str, str]) -> None:
    device = nvue.read(scramble(leaf3), {YAML_FILE: files[YAML_FILE] + PORT_PROFILES})
    qos = device.qos
    assert qos is not None and leaf3.qos is not None
    assert nvue.owned(device)["qos"] == nvue.owned(leaf3)["qos"]  # the switch: what most data ports apply
    assert port(device, "swp1").qos is None
    swp2 = port(device, "swp2").qos
    assert swp2 == qos.model_copy(update={"trust": "pcp", "dscp_to_tc": {}})
    swp63 = port(device, "swp63").qos
    assert swp63 is not None and (swp63.dscp_to_tc, swp63.watchdog) == (qos.dscp_to_tc, qos.watchdog)
    assert [(q.index, q.scheduler, q.weight) for q in swp63.queues] == [
        (0, "strict", None), (2, "strict", None), (3, "strict", None), (6, "strict", None)]
    swp64 = port(device, "swp64").qos
    assert swp64 is not None and swp64.watchdog is None
    queue3 = next(q for q in swp64.queues if q.index == 3)
    assert queue3.ecn == EcnThresholds(min_bytes=150_000, max_bytes=1_500_000, probability_pct=100)
    # a port's QoS is compared as a whole, beside the switch's
    assert nvue.owned(device)["ports"]["swp64"]["qos"]["watchdog"] is None


def test_trust_l2_means_no_dscp_classification(leaf3: DeviceModel, files: dict[str, str]) -> None:
    text = edit(files[YAML_FILE], "trust: l3", "trust: l2")
    device = nvue.read(leaf3, {YAML_FILE: text})
    assert device.qos is not None and device.qos.dscp_to_tc == {}


def test_yaml_wins_over_commands(leaf3: DeviceModel, files: dict[str, str]) -> None:
    commands = edit(files[COMMANDS], "nv set interface swp1 link mtu 9100", "nv set interface swp1 link mtu 1500")
    device = nvue.read(leaf3, {YAML_FILE: files[YAML_FILE], COMMANDS: commands})
    assert port(device, "swp1").mtu == 9100


# --- reader: brownfield -------------------------------------------------------------------------------------

BROWNFIELD_YAML = """\
- header:
    model: SN5600
    nvue-api-version: nvue_v1
    rev-id: 1.0
    version: Cumulus Linux 5.14.0
- set:
    system:
      hostname: leaf3
      config:
        auto-save:
          state: enabled
    router:
      bgp:
        autonomous-system: 65103
        enable: on
    interface:
      lo:
        ip:
          address:
            10.0.0.13/32: {}
        type: loopback
      eth0:
        ip:
          address:
            192.0.2.13/24: {}
          vrf: mgmt
        type: eth
      swp1-2,swp63:
        link:
          mtu: 9216
        qos:
          pfc-watchdog: {}
        type: swp
      swp64:
        link:
          state:
            down: {}
        type: swp
      swp65:
        type: swp
    qos:
      mapping:
        default-global:
          trust: both
          dscp:
            0-7:
              switch-priority: 1
            '26':
              switch-priority: 3
      pfc:
        default-global:
          switch-priority:
            '3': {}
          cable-length: 50
      congestion-control:
        default-global:
          traffic-class:
            4,5:
              ecn: enable
              min-threshold: 40000
              max-threshold: 200000
      egress-scheduler:
        default-global:
          traffic-class:
            '3': {mode: dwrr, bw-percent: 50}
            '6': {mode: strict}
            '7': {mode: dwrr}
    vrf:
      mgmt:
        router:
          static:
            0.0.0.0/0:
              address-family: ipv4-unicast
              via:
                192.0.2.1:
                  type: ipv4-address
- unset:
    interface:
      swp2:
        qos: null
"""


def test_brownfield_yaml_of_an_older_release(leaf3: DeviceModel) -> None:
    device = nvue.read(leaf3, {YAML_FILE: BROWNFIELD_YAML})
    assert port(device, "swp1").mtu == 9216 and port(device, "swp1").admin_up
    assert not port(device, "swp64").admin_up and port(device, "swp64").mtu == 9216  # Cumulus default MTU
    # default-global PFC covers every port, with its cable length
    assert port(device, "swp64").pfc_priorities == [3] and port(device, "swp64").cable_m == 50
    extra = port(device, "swp65")
    assert (extra.role, extra.admin_up) == ("unused", True)
    qos = device.qos
    assert qos is not None
    assert [qos.dscp_to_tc[d] for d in (0, 7, 8, 26, 27, 48)] == [1, 1, 1, 3, 3, 6]  # over the default map
    assert [(q.index, q.scheduler, q.weight) for q in qos.queues] == [(3, "dwrr", 50), (6, "strict", None)]
    # swp2 lost its watchdog in the `unset` block and swp64 never had one: two of the four lossless ports arm it,
    # a tie, read as the switch's watchdog, and the two ports' QoS says it is not armed there
    assert qos.watchdog is not None and (qos.watchdog.poll_ms, qos.watchdog.detection_ms) == (100, 300)
    assert [name for name in ("swp1", "swp2", "swp63", "swp64") if (port(device, name).qos or qos).watchdog is None] \
        == ["swp2", "swp64"]
    assert device.mgmt is not None
    assert (device.mgmt.vrf, device.mgmt.address, device.mgmt.gateway, device.mgmt.mtu) == (
        "mgmt", "192.0.2.13/24", "192.0.2.1", 1500)


def test_brownfield_ecn_lists_and_default_tc0(leaf3: DeviceModel) -> None:
    text = BROWNFIELD_YAML.replace("'3': {mode: dwrr, bw-percent: 50}",
                                   "'0': {mode: dwrr, bw-percent: 40}\n            '4': {mode: dwrr, bw-percent: 10}")
    qos = nvue.read(leaf3, {YAML_FILE: text}).qos
    assert qos is not None
    ecn = {q.index: q.ecn for q in qos.queues}
    assert ecn[0] == EcnThresholds(min_bytes=150000, max_bytes=1500000, probability_pct=100)  # default-global TC 0
    assert ecn[4] == EcnThresholds(min_bytes=40000, max_bytes=200000, probability_pct=100)


BROWNFIELD_COMMANDS = """\
#!/bin/bash
# NVUE CLI Configuration for leaf3
nv set system hostname leaf3
nv set router bgp state enabled
nv set interface eth0 type eth
nv set interface eth0 vrf mgmt
nv set interface eth0 ipv4 address 192.0.2.13/24
nv set interface eth0 ipv4 gateway 192.0.2.254
nv set interface swp1-2,63-64 type swp
nv set interface swp1-2,63-64 link mtu 9000
nv set interface swp64 link state down
nv set interface swp1,swp2 description 'GPU port'
nv set qos roce state enabled
nv set qos pfc lossless switch-priority 3
nv set interface swp1-2,63-64 qos pfc profile lossless
nv set interface swp1-2,63-64 qos pfc-watchdog state enable
nv set qos pfc-watchdog polling-interval 200
nv set qos egress-scheduler default-global traffic-class 3,4 mode dwrr
nv set qos egress-scheduler default-global traffic-class 3,4 bw-percent 20
nv config apply -y
"""


def test_brownfield_commands_script(leaf3: DeviceModel) -> None:
    device = nvue.read(scramble(leaf3), {COMMANDS: BROWNFIELD_COMMANDS})
    assert [p.mtu for p in device.ports if p.name.startswith("swp")] == [9000] * 4
    assert port(device, "swp1").description == "GPU port" and port(device, "swp63").description is None
    assert not port(device, "swp64").admin_up and port(device, "swp63").admin_up
    assert port(device, "swp63").pfc_priorities == [3] and port(device, "swp63").cable_m == 10
    qos = device.qos
    assert qos is not None and qos.watchdog is not None
    assert (qos.watchdog.poll_ms, qos.watchdog.detection_ms, qos.watchdog.action) == (200, 600, "drop")
    assert [(q.index, q.weight) for q in qos.queues] == [(3, 20), (4, 20)]
    assert device.mgmt is not None and (device.mgmt.interface, device.mgmt.gateway) == ("eth0", "192.0.2.254")


def test_empty_config_reads_as_cumulus_defaults(leaf3: DeviceModel) -> None:
    device = nvue.read(leaf3, {YAML_FILE: "- header:\n    rev-id: 1.0\n"})
    assert not any(p.admin_up for p in device.ports if p.role != "mgmt")
    qos = device.qos
    assert qos is not None and qos.watchdog is None and qos.lossless_priorities == []
    assert qos.dscp_to_tc == {d: d >> 3 for d in range(64)} and qos.tc_to_queue == {sp: sp for sp in range(8)}
    assert [q.weight for q in qos.queues] == [12, 13, 12, 13, 12, 13, 12, 13]
    assert device.mgmt is not None and (device.mgmt.vrf, device.mgmt.address, device.mgmt.mtu) == ("mgmt", None, 1500)


# --- reader: errors -----------------------------------------------------------------------------------------

def test_bad_yaml_names_file_and_line(leaf3: DeviceModel, files: dict[str, str]) -> None:
    lines = files[YAML_FILE].splitlines()
    at = line_of(files[YAML_FILE], "      swp63:")
    lines.insert(at, "        oops: [")
    with pytest.raises(ConfigReadError) as error:
        nvue.read(leaf3, {YAML_FILE: "\n".join(lines)})
    assert error.value.file == YAML_FILE and error.value.line > at


def test_bad_value_names_its_line(leaf3: DeviceModel, files: dict[str, str]) -> None:
    swp63 = "\n          speed: 400G\n          state:\n            up: {}\n        qos:\n          pfc:\n" \
            "            profile: pfc-sp3-34m"
    bad = edit(files[YAML_FILE], "          mtu: 9100" + swp63, "          mtu: jumbo" + swp63)
    with pytest.raises(ConfigReadError, match="expected a number 552-9216") as error:
        nvue.read(leaf3, {YAML_FILE: bad})
    assert (error.value.file, error.value.line) == (YAML_FILE, line_of(bad, "jumbo"))
    commands = files[COMMANDS] + "nv set qos mapping default-global dscp 70 switch-priority 3\n"
    with pytest.raises(ConfigReadError, match="expected an id 0-63") as error:
        nvue.read(leaf3, {COMMANDS: commands})
    assert (error.value.file, error.value.line) == (COMMANDS, len(commands.splitlines()))
    with pytest.raises(ConfigReadError, match="expected enabled or disabled"):
        nvue.read(leaf3, {COMMANDS: files[COMMANDS] + "nv set qos pfc pfc-sp3-3m tx maybe\n"})


def test_link_state_is_the_object_nvue_writes(leaf3: DeviceModel, files: dict[str, str]) -> None:
    """``state: {up: {}}``; the state as a value (fabricgen's nvue.yaml before it was checked against NVUE's
    model) is refused where it is, and so is an object with both states."""
    up = "          state:\n            up: {}\n"
    old = edit(files[YAML_FILE], up, "          state: up\n")
    refused = (r"^nvue.yaml:\d+: interface swp1 link state: expected `state: \{up: \{\}\}` or `state: \{down: \{\}\}` "
               r".* found the value 'up', which `nv config patch` refuses")
    with pytest.raises(ConfigReadError, match=refused) as error:
        nvue.read(leaf3, {YAML_FILE: old})
    assert (error.value.file, error.value.line) == (YAML_FILE, line_of(old, "state: up"))
    both = edit(files[YAML_FILE], up, "          state:\n            down: {}\n            up: {}\n")
    with pytest.raises(ConfigReadError, match="interface swp1 link state: expected one key, up or down, found "
                       "down, up"):
        nvue.read(leaf3, {YAML_FILE: both})
    down = edit(files[YAML_FILE], up, "          state:\n            down: {}\n")
    assert not port(nvue.read(leaf3, {YAML_FILE: down}), "swp1").admin_up


def test_a_later_link_state_command_replaces_the_earlier(leaf3: DeviceModel, files: dict[str, str]) -> None:
    device = nvue.read(leaf3, {COMMANDS: files[COMMANDS] + "nv set interface swp1 link state down\n"})
    assert not port(device, "swp1").admin_up and port(device, "swp2").admin_up
    again = files[COMMANDS] + "nv set interface swp1 link state down\nnv set interface swp1 link state up\n"
    assert port(nvue.read(leaf3, {COMMANDS: again}), "swp1").admin_up


def test_unsplittable_command_and_missing_file(leaf3: DeviceModel) -> None:
    with pytest.raises(ConfigReadError) as error:
        nvue.read(leaf3, {COMMANDS: "nv set system hostname leaf3\nnv set interface swp1 description 'open\n"})
    assert (error.value.file, error.value.line) == (COMMANDS, 2)
    with pytest.raises(ConfigReadError, match="file missing"):
        nvue.read(leaf3, {})


def test_id_lists_and_ranges() -> None:
    assert nvue.expand_ids("swp1-3,swp7") == ["swp1", "swp2", "swp3", "swp7"]
    assert nvue.expand_ids("swp2-5,10-11") == ["swp2", "swp3", "swp4", "swp5", "swp10", "swp11"]
    assert nvue.expand_ids("swp1s0-1,swp1-swp2") == ["swp1s0", "swp1s1", "swp1", "swp2"]
    assert nvue.expand_ids("0-3,26") == ["0", "1", "2", "3", "26"]
    assert nvue.expand_ids("eth0") == ["eth0"]


# --- reader: the lossless pool (lint FG-ECN-002 places the PFC pause point with it) --------------------------

POOL_LINES = ("nv set qos traffic-pool default-lossless memory-percent 50\n"
              "nv set qos traffic-pool default-lossy memory-percent 50\n")


def pool_of(leaf3: DeviceModel, commands: str) -> tuple[int, str, str]:
    qos = nvue.read(scramble(leaf3), {COMMANDS: commands}).qos
    assert qos is not None and qos.lossless_pool is not None
    return qos.lossless_pool.percent, qos.lossless_pool.alpha, qos.lossless_pool.method


def test_own_render_reads_back_the_pool_the_capability_says_it_renders(leaf3: DeviceModel,
                                                                        files: dict[str, str]) -> None:
    """Render and read-back agree: the intent road places leaf3's pause point with CAPABILITY.lossless_pool,
    a config road with what the reader reads from the same files."""
    assert POOL_LINES in files[COMMANDS]
    rendered = CAPABILITY.lossless_pool
    assert rendered is not None and (rendered.percent, rendered.alpha) == (50, "1")
    assert leaf3.qos is not None and leaf3.qos.lossless_pool is None  # resolve leaves it to the capability
    other = LosslessPoolModel(percent=10, alpha="2", method="a skeleton whose pool is not the rendered one")
    elsewhere = leaf3.model_copy(update={"qos": leaf3.qos.model_copy(update={"lossless_pool": other})})
    for read_from in ({YAML_FILE: files[YAML_FILE]}, {COMMANDS: files[COMMANDS]}):
        # The rendered pool reads as the skeleton's (None: the capability's), so the read-back is the model...
        qos = nvue.read(scramble(leaf3), read_from).qos
        assert qos is not None and qos.lossless_pool is None
        # ...and where the skeleton says otherwise, the config's own pool is read: the rendered one.
        qos = nvue.read(elsewhere, read_from).qos
        assert qos is not None and qos.lossless_pool is not None
        assert (qos.lossless_pool.percent, qos.lossless_pool.alpha) == (rendered.percent, rendered.alpha)
        assert "default-lossless memory-percent 50 in its config" in qos.lossless_pool.method


def test_lossless_pool_share_and_alpha_as_nvidia_documents_them(leaf3: DeviceModel, files: dict[str, str]) -> None:
    commands = files[COMMANDS]
    small = edit(commands, "default-lossless memory-percent 50", "default-lossless memory-percent 10")
    assert pool_of(leaf3, small)[:2] == (10, "1")
    # No lossless pool: "Cumulus Linux allocates 100% of the buffer memory to the default-lossy traffic pool by
    # default", and lossless PGs stay in its pool 0 (qos_infra.conf).
    no_pools = edit(commands, POOL_LINES, "")
    percent, alpha, method = pool_of(leaf3, no_pools)
    assert (percent, alpha) == (100, "1") and "NVIDIA's default 100 %" in method
    assert pool_of(leaf3, edit(commands, POOL_LINES, "nv set qos traffic-pool default-lossy memory-percent 70\n"))[0] \
        == 70
    # `qos roce` (lossless): roce-lossless, 50 % unless set; default-lossless is not its pool.
    assert pool_of(leaf3, edit(commands, POOL_LINES, "nv set qos roce\n"))[:2] == (50, "1")
    roce_60 = "nv set qos roce\nnv set qos traffic-pool roce-lossless memory-percent 60\n"
    assert pool_of(leaf3, edit(commands, POOL_LINES, roce_60))[0] == 60
    assert pool_of(leaf3, edit(commands, POOL_LINES, "nv set qos roce mode lossless-single-ipool\n"))[0] == 100
    assert pool_of(leaf3, edit(commands, POOL_LINES, "nv set qos roce state disabled\n"))[0] == 100
    alpha_2 = f"{commands}nv set qos advance-buffer-config default-global ingress-lossless-buffer shared-alpha " \
              "alpha_2\n"
    assert pool_of(leaf3, alpha_2)[1:] == ("2", "traffic-pool default-lossless memory-percent 50 in its config; "
                                             "shared-alpha alpha_2 in its config")


def test_a_pool_share_or_alpha_nvue_cannot_take_is_refused_at_its_line(leaf3: DeviceModel,
                                                                       files: dict[str, str]) -> None:
    commands = files[COMMANDS] + "nv set qos advance-buffer-config default-global ingress-lossless-buffer " \
                                 "shared-alpha alpha_3\n"
    with pytest.raises(ConfigReadError) as error:
        nvue.read(leaf3, {COMMANDS: commands})
    assert error.value.line == len(commands.splitlines()) and "alpha_3" in error.value.message
    with pytest.raises(ConfigReadError) as error:
        nvue.read(leaf3, {COMMANDS: edit(files[COMMANDS], "default-lossless memory-percent 50",
                                         "default-lossless memory-percent 0")})
    assert error.value.line == line_of(files[COMMANDS], "default-lossless memory-percent")


def test_a_lossless_pool_too_small_for_the_ecn_maximum_is_found_on_the_switch_with_its_fix(
        leaf3: DeviceModel, files: dict[str, str]) -> None:
    """NVIDIA's 1.5 MB kmax over a lossless pool of 1 % of the SN5600's buffer: one congested PG pauses at half of
    that pool, 836377 B, before the queue marks every packet. 10 % of the buffer holds it."""
    from fabricgen.lint import Evidence, all_rules, lint

    fabric = mixed()
    rule = next(r for r in all_rules() if r.id == "FG-ECN-002")
    nvidia_kmax = edit(files[COMMANDS], "traffic-class 3 max-threshold 40000", "traffic-class 3 max-threshold 1500000")

    def findings(percent: int) -> list[Any]:
        commands = edit(nvidia_kmax, "default-lossless memory-percent 50", f"default-lossless memory-percent {percent}")
        read_back = nvue.read(leaf3, {COMMANDS: commands})
        devices = {**fabric.devices, "leaf3": read_back}
        evidence = Evidence(directory="configs", intended={"leaf3": leaf3})
        return lint(fabric.model_copy(update={"devices": devices}), rules=[rule], evidence=evidence).findings

    [finding] = findings(1)
    assert (finding.device, finding.port, finding.severity) == ("leaf3", None, "error")
    assert finding.message.startswith("ECN max 1.5 MB is not below the PFC pause point ≈ 836377 B (1/2 of 1672755 B, "
                                      "1 % of what the spectrum4 buffer leaves after the headroom its config reserves")
    assert finding.fix == "on leaf3: lower queue 3's ECN maximum threshold (1.5 MB) below 836377 B, or give the " \
                          "lossless pool a larger memory-percent (now 1 %)"
    assert findings(10) == []


# --- round trip ---------------------------------------------------------------------------------------------

def _leaves(view: Any, path: str = "") -> dict[str, Any]:
    if isinstance(view, dict) and view:
        return {k: v for key, value in view.items() for k, v in _leaves(value, f"{path}/{key}").items()}
    return {path: view}


def test_scrambled_skeleton_differs_in_every_owned_field(leaf3: DeviceModel) -> None:
    original, scrambled = _leaves(nvue.owned(leaf3)), _leaves(nvue.owned(scramble(leaf3)))
    assert [path for path, value in original.items() if path in scrambled and scrambled[path] == value] == []


@pytest.mark.parametrize("name", nvue_devices())
def test_mixed_example_round_trip(name: str) -> None:
    device = mixed().devices[name]
    other = mixed(ROOT / "intent" / "minimal.yaml").devices[name]
    rendered = render_device(device)
    for skeleton in (other, scramble(device)):
        assert nvue.owned(skeleton) != nvue.owned(device)
        for files in (rendered, {YAML_FILE: rendered[YAML_FILE]}, {COMMANDS: rendered[COMMANDS]}):
            assert nvue.owned(nvue.read(skeleton, files)) == nvue.owned(device)


@st.composite
def nvue_intents(draw: st.DrawFn) -> dict[str, Any]:
    """Intents NVUE can express over the mixed inventory: at most one lossless class, watchdog detection a
    whole number of polling intervals, action drop (resolve refuses the rest; see the capability test)."""
    classes = _classes(draw)
    lossless = [name for name, cls in classes.items() if cls["lossless"]]
    for name in lossless[1:]:
        classes[name]["lossless"] = False
    poll = 10 * draw(st.integers(10, 100))
    detection = poll * draw(st.integers(1, 5000 // poll))
    return {
        "fabric": "generated",
        "qos": {"classes": classes},
        "rdma": {"class": "class0", "cnp_class": "class1"},
        "mtu": {"host": draw(st.integers(1280, 9000)), "fabric": draw(st.integers(1280, 9214)),
                "management": draw(st.integers(1280, 9214))},
        "pfc": {"watchdog": {"enabled": draw(st.sampled_from([True, True, False])), "detection_ms": detection,
                             "restoration_ms": 10 * draw(st.integers(poll // 10, 6000)), "poll_ms": poll,
                             "action": "drop"},
                "headroom": {"default_cable_m": draw(st.integers(1, 300))}},
        "management": {"vlan": draw(st.integers(2, 4094)), "subnet": "192.0.2.0/24",
                       "gateway": draw(st.sampled_from(["192.0.2.1", "192.0.2.254"])),
                       "vrf": draw(st.sampled_from(["mgmt", "MGMT", "oob_vrf"]))},
    }


def generated_fabric(raw: dict[str, Any]) -> Fabric:
    """A generated intent over the mixed inventory, resolved; hypothesis skips the intents fabricgen refuses."""
    try:
        intent = Intent.model_validate(raw)
    except ValidationError:
        assume(False)
        raise
    assume(not check_intent(intent))
    try:
        return resolve(intent, mixed_inventory(stand_ins=True))
    except InputError:
        assume(False)
        raise


@settings(max_examples=30, deadline=None, derandomize=True)
@given(raw=nvue_intents())
def test_generated_intents_round_trip(raw: dict[str, Any]) -> None:
    fabric = generated_fabric(raw)
    bundled = mixed().devices
    for name, device in fabric.devices.items():
        if device.platform != "nvue":
            continue
        rendered = render_device(device)
        for skeleton in (bundled[name], scramble(device)):
            for files in ({YAML_FILE: rendered[YAML_FILE]}, {COMMANDS: rendered[COMMANDS]}):
                assert nvue.owned(nvue.read(skeleton, files)) == nvue.owned(device), name


def test_read_back_lints_like_the_model() -> None:
    from fabricgen.lint import lint

    fabric = mixed()
    leaf = fabric.devices["leaf3"]
    read_back = nvue.read(mixed(ROOT / "intent" / "minimal.yaml").devices["leaf3"], render_device(leaf))
    findings = lint(fabric.model_copy(update={"devices": {**fabric.devices, "leaf3": read_back}})).findings
    assert [f for f in findings if f.device == "leaf3"] == []


def test_queue_and_mgmt_models_stay_valid(leaf3: DeviceModel, files: dict[str, str]) -> None:
    device = nvue.read(leaf3, files)
    assert device.qos is not None and all(isinstance(q, QueueModel) for q in device.qos.queues)
    assert isinstance(device.mgmt, MgmtModel)
