"""The MTU that takes effect in a port's mode, on every switch platform.

Resolve decides each switch port's mode (data ports routed, OOB access ports switched); EOS and NX-OS render
it (`no switchport`) with the MTU knob of that mode; their readers read the mode and the MTU in effect in it —
on EOS a switchport's frames follow `l2 mtu`, never `mtu`. FG-MTU-005 then reports a data port whose MTU in
effect is not the intent's, from a hand-edited config of each switch platform (SONiC and NVUE apply their port
MTU in both modes: their readers' MTU is the one in effect already).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

import fabricgen.platforms.eos.read as eos_reader
from fabricgen.api import render_device
from fabricgen.cli import main
from fabricgen.lint import all_rules, lint
from fabricgen.models.device import DeviceModel, Fabric, PortModel
from fabricgen.platforms import get_platform
from fabricgen.resolve import resolve

from conftest import ROOT, load_example

RULE = next(rule for rule in all_rules() if rule.id == "FG-MTU-005")
Files = dict[str, str]


@functools.cache
def example(name: str) -> Fabric:
    loaded = load_example(name)
    return resolve(loaded.intent, loaded.inventory, loaded.locate)


def port(device: DeviceModel, name: str) -> PortModel:
    return next(p for p in device.ports if p.name == name)


def edit(text: str, old: str, new: str, after: str = "") -> str:
    """``text`` with the first ``old`` after ``after`` replaced; the edit must apply."""
    start = text.index(after) if after else 0
    at = text.index(old, start)
    return text[:at] + new + text[at + len(old):]


def read_edited(fabric: Fabric, name: str, change: Callable[[Files], Files]) -> DeviceModel:
    """The device as its platform's reader sees its rendered config after ``change`` (a hand edit)."""
    device = fabric.devices[name]
    platform = get_platform(device.platform)
    assert platform.read is not None
    return platform.read(device, change(render_device(device)))


def mtu_findings(fabric: Fabric, device: DeviceModel) -> list[str]:
    """FG-MTU-005's findings once ``device`` replaces its resolved model, as `lint --configs` would see it."""
    edited = fabric.model_copy(update={"devices": {**fabric.devices, device.name: device}})
    return [f"{f.severity} {f.subject}: {f.message}" for f in lint(edited, rules=[RULE]).findings]


# --- resolve: the mode is a decision --------------------------------------------------------------------------

def test_data_ports_are_routed_oob_access_ports_switched() -> None:
    fabric = example("fabric")
    modes = {(p.role, p.mode) for device in fabric.devices.values() if device.host is None for p in device.ports}
    assert ("fabric", "routed") in modes and ("host", "routed") in modes and ("oob-access", "switched") in modes
    # Only data and OOB access ports have a mode fabricgen owns; management and host NIC ports keep theirs.
    assert {mode for role, mode in modes if role not in ("host", "fabric", "oob-access")} == {None}
    assert {p.mode for device in fabric.devices.values() if device.host is not None for p in device.ports} == {None}


# --- EOS: render --------------------------------------------------------------------------------------------

def test_eos_routed_data_port_carries_no_switchport_and_its_l3_mtu() -> None:
    text = render_device(example("mixed").devices["leaf2"])["eos.cfg"]
    assert ("\ninterface Ethernet1/1\n   description GPU_node2_ens1f0np0\n   no shutdown\n   mtu 9100\n"
            "   speed 400g\n   error-correction encoding reed-solomon\n   no switchport\n"
            "   service-profile FABRICGEN_ROCE\n") in text
    assert "l2 mtu" not in text


def test_eos_switched_data_port_carries_its_l2_mtu_not_mtu() -> None:
    leaf = example("mixed").devices["leaf2"]
    ports = [p.model_copy(update={"mode": "switched"}) if p.name == "Ethernet1/1" else p for p in leaf.ports]
    text = render_device(leaf.model_copy(update={"ports": ports}))["eos.cfg"]
    assert ("\ninterface Ethernet1/1\n   description GPU_node2_ens1f0np0\n   no shutdown\n   l2 mtu 9100\n"
            "   speed 400g\n   error-correction encoding reed-solomon\n   switchport\n"
            "   service-profile FABRICGEN_ROCE\n") in text


def test_eos_oob_access_ports_stay_switched_without_an_mtu() -> None:
    text = render_device(example("fabric").devices["oob1"])["eos.cfg"]
    assert ("\ninterface Ethernet1\n   description MGMT_node1_bmc\n   no shutdown\n   switchport access vlan 100\n"
            "   switchport mode access\n   switchport\n") in text
    assert "mtu" not in text.split("interface Management1")[0].split("vrf instance")[1]


# --- EOS: the reader reads the MTU in effect ----------------------------------------------------------------

def _eos(change: Callable[[str], str]) -> Callable[[Files], Files]:
    return lambda files: {**files, "eos.cfg": change(files["eos.cfg"])}


def test_eos_switchport_with_only_mtu_reads_its_l2_default_and_fires() -> None:
    fabric = example("mixed")
    leaf = read_edited(fabric, "leaf2", _eos(lambda t: edit(t, "   no switchport\n", "", "interface Ethernet1/1")))
    edited = port(leaf, "Ethernet1/1")
    assert (edited.mode, edited.mtu) == ("switched", eos_reader.DEFAULT_L2_MTU)  # `mtu 9100` is not in effect
    assert (port(leaf, "Ethernet2/1").mode, port(leaf, "Ethernet2/1").mtu) == ("routed", 9100)
    assert mtu_findings(fabric, leaf) == [
        "error leaf2:Ethernet1/1 ↔ node2:ens1f0np0: MTU 1500 in effect (switched port), the intent's mtu.fabric "
        "is 9100"]


def test_eos_switchport_with_the_intended_l2_mtu_is_clean() -> None:
    fabric = example("mixed")
    leaf = read_edited(fabric, "leaf2", _eos(lambda t: edit(t, "   no switchport\n", "   l2 mtu 9100\n   switchport\n",
                                                            "interface Ethernet1/1")))
    assert (port(leaf, "Ethernet1/1").mode, port(leaf, "Ethernet1/1").mtu) == ("switched", 9100)
    assert mtu_findings(fabric, leaf) == []


def test_eos_routed_port_ignores_l2_mtu_and_reads_interface_defaults() -> None:
    fabric = example("mixed")
    text = render_device(fabric.devices["leaf2"])["eos.cfg"]
    text = edit(text, "   mtu 9100\n", "   l2 mtu 1500\n", "interface Ethernet1/1")  # no `mtu`: the default
    text = edit(text, "   mtu 9100\n", "   mtu 9100\n   l2 mtu 1500\n", "interface Ethernet2/1")
    text = "interface defaults\n   mtu 9000\n!\n" + text
    leaf = eos_reader.read(fabric.devices["leaf2"], {"eos.cfg": text})
    assert (port(leaf, "Ethernet1/1").mtu, port(leaf, "Ethernet2/1").mtu) == (9000, 9100)
    assert mtu_findings(fabric, leaf) == [
        "error leaf2:Ethernet1/1 ↔ node2:ens1f0np0: MTU 9000 in effect (routed port), the intent's mtu.fabric "
        "is 9100"]


def test_lint_configs_names_the_switchport_and_how_to_fix_the_device(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    out = tmp_path / "configs"
    assert CliRunner().invoke(main, ["render", "-o", str(out)]).exit_code == 0
    config = out / "spine1" / "eos.cfg"
    config.write_text(edit(config.read_text(), "   no switchport\n", "", "interface Ethernet2/1"))
    result = CliRunner().invoke(main, ["lint", "--configs", str(out)])
    assert result.exit_code == 1
    line = next(line for line in result.output.splitlines() if "FG-MTU-005" in line)
    assert line.startswith(f"{config}:")
    assert ("FG-MTU-005 error spine1:Ethernet2/1 ↔ leaf1:Ethernet232: MTU 1500 in effect (switched port), the "
            "intent's mtu.fabric is 9100 (fix: make 9100 the MTU in effect — eos: routed data ports: no switchport "
            "+ mtu N") in line


# --- NX-OS ----------------------------------------------------------------------------------------------------

def _nxos(change: Callable[[str], str]) -> Callable[[Files], Files]:
    return lambda files: {**files, "nxos.cfg": change(files["nxos.cfg"])}


def test_nxos_mode_follows_the_port_then_the_system_default() -> None:
    fabric = example("mixed")
    unsaid = _nxos(lambda t: edit(t, "  no switchport\n", "", "interface Ethernet1/1"))
    assert port(read_edited(fabric, "leaf4", unsaid), "Ethernet1/1").mode == "routed"  # Cloud Scale: Layer 3
    layer2 = _nxos(lambda t: "system default switchport\n" + unsaid({"nxos.cfg": t})["nxos.cfg"])
    leaf = read_edited(fabric, "leaf4", layer2)
    assert (port(leaf, "Ethernet1/1").mode, port(leaf, "Ethernet1/2").mode) == ("switched", "routed")
    # A Nexus 9000 applies a per-port `mtu` in both modes: the switched port's MTU in effect is still 9100.
    assert port(leaf, "Ethernet1/1").mtu == 9100 and mtu_findings(fabric, leaf) == []


def test_nxos_hand_edited_mtu_fires() -> None:
    fabric = example("mixed")
    leaf = read_edited(fabric, "leaf4", _nxos(lambda t: edit(t, "  mtu 9100\n", "  mtu 1500\n",
                                                             "interface Ethernet1/63")))
    assert mtu_findings(fabric, leaf) == [
        "error leaf4:Ethernet1/63 ↔ spine1:Ethernet24: MTU 1500 in effect (routed port), the intent's mtu.fabric "
        "is 9100"]


def test_nxos_refuses_a_switched_data_port_at_an_mtu_layer_2_ports_cannot_take() -> None:
    leaf = example("mixed").devices["leaf4"]
    ports = [p.model_copy(update={"mode": "switched"}) if p.name == "Ethernet1/1" else p for p in leaf.ports]
    with pytest.raises(ValueError, match="only MTU 1500 or 9216 on a Layer 2 port: switched data port Ethernet1/1"):
        render_device(leaf.model_copy(update={"ports": ports}))
    at_jumbo = [p.model_copy(update={"mtu": 9216}) if p.name == "Ethernet1/1" else p for p in ports]
    text = render_device(leaf.model_copy(update={"ports": at_jumbo}))["nxos.cfg"]
    assert "\ninterface Ethernet1/1\n  description GPU_node2_ens2f0np0\n  switchport\n" in text


# --- SONiC and NVUE: the port MTU applies in both modes ----------------------------------------------------

def test_sonic_hand_edited_port_mtu_fires() -> None:
    def change(files: Files) -> Files:
        db = json.loads(files["config_db.json"])
        db["PORT"]["Ethernet0"]["mtu"] = "9000"
        return {**files, "config_db.json": json.dumps(db)}

    fabric = example("mixed")
    assert mtu_findings(fabric, read_edited(fabric, "leaf1", change)) == [
        "error leaf1:Ethernet0 ↔ node1:ens1f0np0: MTU 9000 in effect (routed port), the intent's mtu.fabric is 9100"]


def test_nvue_hand_edited_link_mtu_fires() -> None:
    def change(files: Files) -> Files:
        # swp1's `link: mtu:` in the patch YAML (the file the NVUE reader prefers) and in the command list.
        return {"nvue.yaml": edit(files["nvue.yaml"], "mtu: 9100", "mtu: 9216", "swp1:"),
                "nvue.commands": edit(files["nvue.commands"], "swp1 link mtu 9100", "swp1 link mtu 9216")}

    fabric = example("mixed")
    assert mtu_findings(fabric, read_edited(fabric, "leaf3", change)) == [
        "warning leaf3:swp1 ↔ node1:ens2f0np0: MTU 9216 in effect (routed port), the intent's mtu.fabric is 9100"]
