"""The NVUE, SONiC and EOS renderers' shortcuts write what the plain way writes.

NVUE builds nvue.yaml's tree from memoized chunks grafted in as patchyaml Blocks and Merged nodes, and its
commands from remembered texts; SONiC writes tables whose entries switches share; EOS renders an interface's
text once per distinct settings and reuses it, with each port's name and description in their places. Each is
checked here against the plain construction: every setting inserted one by one and dumped by PyYAML, every
command printed on its own, json.dumps of build_config_db, every EOS port's block rendered on its own.
"""

from __future__ import annotations

import copy
import json
from functools import cache
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

import fabricgen.platforms.eos.render as eos
import fabricgen.platforms.nvue.render as nvue
import fabricgen.platforms.sonic.render as sonic
from fabricgen.models.device import DeviceModel, PortModel
from fabricgen.platforms.common.templating import Templates
from fabricgen.platforms.nvue import patchyaml
from fabricgen.resolve import resolve

from conftest import EXAMPLES, load_example


@cache
def _devices(platform: str) -> tuple[DeviceModel, ...]:
    found = []
    for example in EXAMPLES:
        loaded = load_example(example)
        fabric = resolve(loaded.intent, loaded.inventory, loaded.locate)
        found += [device for device in fabric.devices.values() if device.platform == platform]
    return tuple(found)


def _pyyaml(tree: dict[str, Any]) -> str:
    return yaml.dump([{"set": tree}], Dumper=yaml.SafeDumper, sort_keys=True, default_flow_style=False,
                     allow_unicode=False, width=1000)


def test_nvue_examples_exist() -> None:
    assert _devices("nvue") and _devices("sonic") and _devices("eos")


@pytest.mark.parametrize("index", range(4))
def test_nvue_grafted_tree_is_the_plain_tree(index: int) -> None:
    for device in _devices("nvue")[index::4]:
        found = nvue.sections(device)
        plain = nvue.settings_tree(setting for section in found for setting in section.settings)
        assert patchyaml.dump(nvue._yaml_tree(found)) == _pyyaml(plain)


def test_nvue_section_commands_are_each_settings_command() -> None:
    for device in _devices("nvue"):
        for section in nvue.sections(device):
            assert section.commands() == "\n".join(setting.command() for setting in section.settings)


def test_nvue_overlapping_parts_fall_back_to_the_plain_tree() -> None:
    """A setting of its own where a shared chunk writes: the order of the settings decides, as in the plain
    tree (the later value wins), whichever part comes first."""
    device = _devices("nvue")[0]
    found = nvue.sections(device)
    port = next(part for section in found for part in section.parts
                if isinstance(part, nvue.Placed) and part.base[0] == "interface")
    clash = nvue.Setting((*port.base, "type"), "eth")
    for parts in ((clash, port), (port, clash)):
        sections = [*found, nvue.Section("clash", parts)]
        plain = nvue.settings_tree(setting for section in sections for setting in section.settings)
        assert patchyaml.dump(nvue._yaml_tree(sections)) == _pyyaml(plain)


def test_nvue_placed_settings_list_own_settings_after_the_lead() -> None:
    kind = nvue._port_kind(True, 9100, None, ((3,), 2), True)
    placed = nvue.Placed(("interface", "swp1"), kind, (nvue.Setting(("description",), "to gpu1"),), 1)
    assert [setting.command() for setting in placed.settings][:3] == [
        "nv set interface swp1 type swp", "nv set interface swp1 description 'to gpu1'",
        "nv set interface swp1 link state up"]
    assert placed.commands() == "\n".join(setting.command() for setting in placed.settings)


# --- patchyaml Blocks and Merged nodes, against PyYAML on the plain tree ---------------------------------------

WORD = st.one_of(st.sampled_from(["a", "b", "link", "mtu", "0", "on", "swp1", "description", "x y", "z:"]),
                 st.from_regex(r"[a-z]{1,3}", fullmatch=True))
LEAF = st.one_of(WORD, st.integers(min_value=-5, max_value=10**6))
TREE = st.recursive(st.dictionaries(WORD, LEAF, max_size=3),
                    lambda inner: st.dictionaries(WORD, st.one_of(LEAF, inner), max_size=4), max_leaves=15)


def _with_shortcuts(tree: dict[str, Any], data: st.DataObject) -> tuple[dict[str, Any], dict[str, Any]]:
    """``tree`` with some of its mappings as Blocks or Merged nodes, and the plain tree they stand for."""
    shortcut: dict[str, Any] = {}
    for key, value in tree.items():
        if type(value) is not dict:
            shortcut[key] = value
            continue
        how = data.draw(st.sampled_from(["dict", "block", "merged"]))
        if how == "block":
            shortcut[key] = patchyaml.Block(value)
        elif how == "merged":
            keys = sorted(value)
            own = set(data.draw(st.lists(st.sampled_from(keys), unique=True))) if keys else set()
            shortcut[key] = patchyaml.Merged({k: v for k, v in value.items() if k in own},
                                             patchyaml.Block({k: v for k, v in value.items() if k not in own}))
        else:
            shortcut[key] = _with_shortcuts(value, data)[0]
    return shortcut, tree


@settings(max_examples=300, deadline=None, derandomize=True)
@given(tree=TREE, data=st.data())
def test_blocks_and_merged_nodes_write_what_pyyaml_writes(tree: dict[str, Any], data: st.DataObject) -> None:
    shortcut, plain = _with_shortcuts(tree, data)
    assert patchyaml.dump(shortcut) == _pyyaml(plain)


def test_merged_node_becomes_a_dict_with_its_blocks_entries() -> None:
    block = patchyaml.Block({"link": {"mtu": 9100}, "type": "swp"})
    merged = patchyaml.Merged({"description": "d"}, block)
    expanded = merged.expanded()
    assert set(expanded) == {"description", "link", "type"} and type(expanded["link"]) is patchyaml.Block
    assert patchyaml.dump({"interface": {"swp1": expanded}}) == patchyaml.dump({"interface": {"swp1": merged}})


# --- SONiC: shared entries in the file, copies for the caller -------------------------------------------------

def test_sonic_render_is_json_dumps_of_build_config_db() -> None:
    for device in _devices("sonic"):
        text = sonic.render(device, None)["config_db.json"]  # type: ignore[arg-type]  # templates unused
        assert text == json.dumps(sonic.build_config_db(device), indent=4, sort_keys=True) + "\n"


def test_sonic_build_config_db_is_the_callers_to_change() -> None:
    device = _devices("sonic")[0]
    first = sonic.build_config_db(device)
    expected = copy.deepcopy(first)
    for table in first.values():
        for entry in table.values():
            entry.clear()
    assert sonic.build_config_db(device) == expected


# --- EOS: one settings text per distinct port settings ------------------------------------------------------------

SETTINGS_NAMES = ("shutdown", "mtu", "l2_mtu", "speed", "fec", "access_vlan", "switchport", "service_profile")


def _plain_eos(device: DeviceModel) -> str:
    """eos.cfg with every port's block rendered on its own, from that port (a fresh Templates: nothing kept)."""
    templates = Templates()
    context = eos.build_context(device, templates)
    profile = context["profile"].name if context["profile"] else None
    interface = templates.template("eos/interface.j2")
    blocks = []
    for port in sorted((p for p in device.ports if p.role != "mgmt"), key=lambda p: eos.natural_key(p.name)):
        settings = eos.interface_settings(
            (port.role, port.admin_up, port.mode, port.mtu, port.speed_mbps, port.lanes, port.fec, port.access_vlan),
            profile)
        blocks.append(interface.render(name=port.name, description=port.description,
                                       **dict(zip(SETTINGS_NAMES, settings, strict=True))))
    context["interfaces"] = "".join(blocks)
    return templates.render("eos/device.cfg.j2", **context)


SHARED = Templates()  # one store of settings texts for every case below, as one process renders a whole fabric


def test_eos_reused_interface_texts_are_each_ports_own() -> None:
    for device in _devices("eos"):
        assert eos.render(device, SHARED)["eos.cfg"] == _plain_eos(device)


EOS_PORT = st.fixed_dictionaries({
    "role": st.sampled_from(["host", "fabric", "mgmt", "oob-access", "unused"]), "admin_up": st.booleans(),
    "mode": st.sampled_from([None, "routed", "switched"]), "mtu": st.sampled_from([1500, 9100, 9214]),
    "speed_mbps": st.sampled_from([None, 100, 2500, 100_000, 400_000]), "lanes": st.sampled_from([None, "1,2,3,4"]),
    "fec": st.sampled_from([None, "rs", "fc", "none"]), "access_vlan": st.sampled_from([None, 10, 4094]),
    "description": st.one_of(st.none(), st.sampled_from(["GPU_gpu1_rail1", "P2P_spine1_Ethernet1"]), st.text())})


@settings(max_examples=200, deadline=None, derandomize=True)
@given(ports=st.lists(EOS_PORT, min_size=1, max_size=12), name=st.from_regex(r"[A-Za-z0-9/:_ !{}%#-]{1,24}",
                                                                              fullmatch=True))
def test_eos_settings_texts_of_any_ports_are_their_own(ports: list[dict[str, Any]], name: str) -> None:
    """Ports of any settings, name and description, rendered with pieces other cases left in the store, on a switch
    with QoS (its data ports name the profile) and then without: each port gets its own block."""
    example = next(device for device in _devices("eos") if device.qos)
    models = [PortModel.from_resolve({"name": f"Ethernet{i + 1}", **port}) for i, port in enumerate(ports)]
    models[0] = models[0].model_copy(update={"name": name})
    for qos in (example.qos, None):
        device = example.model_copy(update={"ports": models, "qos": qos})
        assert eos.render(device, SHARED)["eos.cfg"] == _plain_eos(device)
