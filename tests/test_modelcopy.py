"""The readers' model copy (fabricgen/platforms/common/modelcopy.py): model_copy's result, and the skeleton itself
where a config changes nothing, so that a device read back as resolved is its resolved model's objects."""

from __future__ import annotations

from pathlib import Path

import pytest

from fabricgen.lint.configs import read_configs
from fabricgen.models.device import PortModel
from fabricgen.platforms.common.modelcopy import updated
from fabricgen.resolve import resolve

from conftest import load_example

PORT = PortModel(name="Ethernet0", role="host", admin_up=True, mtu=9100, pfc_priorities=[3, 4])


def test_a_change_gives_what_model_copy_gives() -> None:
    changes = {"mtu": 1500, "description": "moved"}
    copied = updated(PORT, changes)
    assert copied is not PORT and copied == PORT.model_copy(update=changes)
    assert copied.model_fields_set == PORT.model_copy(update=changes).model_fields_set
    assert (PORT.mtu, PORT.description) == (9100, None)  # the skeleton is left as it was


def test_no_change_gives_the_model_itself() -> None:
    assert updated(PORT, {}) is PORT
    assert updated(PORT, {"mtu": 9100, "admin_up": True, "pfc_priorities": [3, 4], "description": None}) is PORT


@pytest.mark.parametrize(("field", "value"), [("mtu", 9100.0), ("admin_up", 1), ("pfc_priorities", (3, 4))],
                         ids=["float-for-int", "int-for-bool", "tuple-for-list"])
def test_an_equal_value_of_another_type_is_a_change(field: str, value: object) -> None:
    """9100.0 == 9100 and 1 == True in Python, and they print differently: the read value is kept."""
    copied = updated(PORT, {field: value})
    assert copied is not PORT and getattr(copied, field) is value


def test_devices_read_back_as_resolved_are_their_resolved_models(mixed_rendered: Path) -> None:
    """Every device of the mixed example (all six platforms) whose config reads back equal to its resolved model
    reads back as that very object, and so do the equal ports of the others: lint's "read back as resolved?"
    is then an identity test (issue 26 item 7)."""
    loaded = load_example("mixed")
    read = read_configs(resolve(loaded.intent, loaded.inventory, loaded.locate), mixed_rendered)
    equal = {name for name, want in read.evidence.intended.items() if read.fabric.devices[name] == want}
    assert len(equal) >= 8 and {read.evidence.intended[name].platform for name in equal} >= {
        "sonic", "nvue", "nxos", "connectx", "linux-dcb"}
    for name, want in read.evidence.intended.items():
        have = read.fabric.devices[name]
        assert (have is want) == (name in equal), name
        wanted = {port.name: port for port in want.ports}
        for port in have.ports:
            if port.name in wanted and port == wanted[port.name]:
                assert port is wanted[port.name], f"{name}:{port.name}"
