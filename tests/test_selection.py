"""`filter_devices`: name globs, role=, platform=, group=, `,` or, `&` and, `!` not — on the bundled inventories
(9 devices: leaf1-2 SONiC, spine1-2 and oob1 EOS, node1-4 ConnectX; the mixed one has leaves on four NOSes)."""

from __future__ import annotations

import pytest

from fabricgen.load.fabric import FabricInput
from fabricgen.load.selection import SelectionError, filter_devices
from fabricgen.models.device import Fabric

from conftest import load_example

NODES = ["node1", "node2", "node3", "node4"]


@pytest.fixture(scope="module")
def mixed() -> FabricInput:
    return load_example("mixed")


@pytest.mark.parametrize(("expression", "selected"), [
    ("leaf*", ["leaf1", "leaf2"]),
    ("spine1", ["spine1"]),
    ("name=node[12]", ["node1", "node2"]),
    ("role=spine", ["spine1", "spine2"]),
    ("role=spine,role=oob", ["oob1", "spine1", "spine2"]),
    ("platform=eos", ["oob1", "spine1", "spine2"]),
    ("platform=eos&role=spine", ["spine1", "spine2"]),
    ("group=gpu_nodes", NODES),
    ("group=gpu_nodes&!node1", ["node2", "node3", "node4"]),
    ("!role=gpu-host", ["leaf1", "leaf2", "oob1", "spine1", "spine2"]),
    (" role = leaf , spine2 ", ["leaf1", "leaf2", "spine2"]),
    ("role=*", ["leaf1", "leaf2", *NODES, "oob1", "spine1", "spine2"]),
    ("nothing*", []),
    ("LEAF*", []),  # case-sensitive, as device names are in configs
])
def test_the_bundled_inventory(example_input: FabricInput, expression: str, selected: list[str]) -> None:
    assert filter_devices(example_input.inventory, expression) == selected


def test_and_binds_tighter_than_or(example_input: FabricInput) -> None:
    """`a,b&c` is a or (b and c), as Ansible's `--limit` and most boolean grammars read it."""
    assert filter_devices(example_input.inventory, "node1,platform=eos&role=oob") == ["node1", "oob1"]


def test_the_mixed_inventory_by_platform(mixed: FabricInput) -> None:
    assert filter_devices(mixed.inventory, "role=leaf&!platform=sonic") == ["leaf2", "leaf3", "leaf4"]
    assert filter_devices(mixed.inventory, "platform=linux-dcb") == \
        sorted(name for name, device in mixed.inventory.devices.items() if device.platform == "linux-dcb")


def test_a_resolved_fabric_selects_alike(example_input: FabricInput, example_fabric: Fabric) -> None:
    for expression in ("leaf*", "role=spine,platform=connectx", "!role=gpu-host&platform=eos"):
        assert filter_devices(example_fabric, expression) == filter_devices(example_input.inventory, expression)


def test_group_needs_the_inventory(example_fabric: Fabric) -> None:
    with pytest.raises(SelectionError, match=r"`group=` needs the inventory"):
        filter_devices(example_fabric, "group=spines")


@pytest.mark.parametrize(("expression", "message"), [
    ("", "an empty filter selects nothing"),
    ("   ", "an empty filter selects nothing"),
    ("leaf1,", "an empty part"),
    ("role=", "an empty part"),
    ("role=leaf&&platform=sonic", "an empty part"),
    ("rack=4", "unknown key 'rack'; filter on name, role, platform, group"),
    ("groups=spines", "unknown key 'groups'"),
])
def test_what_the_grammar_refuses_says_why(example_input: FabricInput, expression: str, message: str) -> None:
    with pytest.raises(SelectionError, match=message):
        filter_devices(example_input.inventory, expression)
