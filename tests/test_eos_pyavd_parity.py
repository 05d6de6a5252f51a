"""fabricgen's eos.cfg equals what Arista's pyavd (eos_cli_config_gen) renders for the same intent.

For every EOS device of the bundled examples, the equivalent AVD structured config is built from the resolved
DeviceModel (never from fabricgen's text; tests/avd_structured.py, which bench/run.py shares), validated with
``pyavd.validate_structured_config`` and rendered with ``pyavd.get_device_config``. fabricgen's output without its
two leading ``! ...`` comment lines must then equal pyavd's output byte for byte, minus pyavd's ``hostname``
section (which fabricgen does not own).

Needs pyavd (Arista's Python AVD package, 6.4 is what the layout follows); skipped when it is missing.
"""

from __future__ import annotations

import difflib
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from fabricgen.api import render_device
from fabricgen.load.fabric import load
from fabricgen.models.device import DeviceModel, Fabric
from fabricgen.resolve import resolve

from avd_structured import QUEUE_KEYWORD, structured_config

pyavd = pytest.importorskip(
    "pyavd", reason="pyavd (Arista AVD's Python package) is not installed: EOS/pyavd parity not checked"
)

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ("fabric", "minimal")
COMMENT_LINES = 2  # fabricgen's "! fabricgen <version> ..." header


@cache
def example_fabric(example: str) -> Fabric:
    x = load(ROOT / "intent" / f"{example}.yaml", ROOT / "inventory")
    return resolve(x.intent, x.inventory, x.locate)


def eos_devices(example: str) -> list[str]:
    return sorted(name for name, device in example_fabric(example).devices.items() if device.platform == "eos")


# --- rendering and comparison ------------------------------------------------------------------------------


def pyavd_config(device: DeviceModel) -> str:
    """pyavd's EOS CLI for the device, without the hostname section."""
    result = pyavd.validate_structured_config(structured_config(device))
    violations = [f"{'.'.join(map(str, v.path))}: {v.message}" for v in result.validation_result.violations]
    assert not violations, f"{device.name}: pyavd rejects the structured config:\n" + "\n".join(violations)
    text: str = pyavd.get_device_config(result.validated_data)
    hostname = f"!\nhostname {device.name}\n"
    assert text.startswith(hostname), f"{device.name}: pyavd output does not start with {hostname!r}"
    return text[len(hostname):]


def fabricgen_config(device: DeviceModel) -> str:
    """fabricgen's eos.cfg without its leading comment lines."""
    lines = render_device(device)["eos.cfg"].splitlines(keepends=True)
    header, body = lines[:COMMENT_LINES], lines[COMMENT_LINES:]
    assert all(line.startswith("! ") for line in header), f"{device.name}: unexpected header {header!r}"
    return "".join(body)


def assert_same(device: DeviceModel) -> None:
    expected, actual = pyavd_config(device), fabricgen_config(device)
    if actual != expected:
        diff = "".join(difflib.unified_diff(expected.splitlines(keepends=True), actual.splitlines(keepends=True),
                                            f"pyavd {pyavd.__version__}/{device.name}",
                                            f"fabricgen/{device.name}/eos.cfg"))
        pytest.fail(f"{device.name}: fabricgen's eos.cfg differs from pyavd's rendering:\n{diff}", pytrace=False)


@pytest.mark.parametrize("device", eos_devices("fabric"))
def test_fabric_example_matches_pyavd(device: str) -> None:
    assert_same(example_fabric("fabric").devices[device])


def test_minimal_example_matches_pyavd() -> None:
    fabric = example_fabric("minimal")
    names = eos_devices("minimal")
    assert names, "the minimal example has no EOS device"
    for name in names:
        assert_same(fabric.devices[name])


def test_switched_data_port_matches_pyavd() -> None:
    """A data port left switched (a model read from a brownfield config, say) carries its MTU as ``l2 mtu``: the
    line and its place are pyavd's ``l2_mtu``, before ``speed`` and the FEC line and the ``switchport`` line of
    ``switchport.enabled: true``."""
    spine = example_fabric("fabric").devices["spine1"]
    ports = [p.model_copy(update={"mode": "switched"}) if p.name == "Ethernet2/1" else p for p in spine.ports]
    switched = spine.model_copy(update={"ports": ports})
    assert ("   l2 mtu 9100\n   speed 400g\n   error-correction encoding reed-solomon\n   switchport\n"
            in fabricgen_config(switched))
    assert_same(switched)


@pytest.mark.parametrize(("update", "line"), [
    ({"lanes": "0,1,2,3,4,5,6,7"}, "   speed 400g-8\n"),
    ({"speed_mbps": 100_000, "lanes": "0,1,2,3"}, "   speed 100g-4\n"),
    ({"fec": "fc"}, "   error-correction encoding fire-code\n"),
    ({"fec": "none"}, "   no error-correction encoding\n"),
])
def test_data_port_speed_and_fec_match_pyavd(update: dict[str, Any], line: str) -> None:
    """Speed with its lane count and each FEC choice: the line and its place are pyavd's ``speed`` and
    ``error_correction_encoding``."""
    spine = example_fabric("fabric").devices["spine1"]
    ports = [p.model_copy(update=update) if p.name == "Ethernet2/1" else p for p in spine.ports]
    changed = spine.model_copy(update={"ports": ports})
    assert line in fabricgen_config(changed)
    assert_same(changed)


@pytest.mark.parametrize(("trust", "line"), [("pcp", "   qos trust cos\n"), ("none", "   no qos trust\n")])
def test_profile_trust_matches_pyavd(trust: str, line: str) -> None:
    spine = example_fabric("fabric").devices["spine1"]
    assert spine.qos is not None
    changed = spine.model_copy(update={"qos": spine.qos.model_copy(update={"trust": trust})})
    assert line in fabricgen_config(changed)
    assert_same(changed)


@pytest.mark.parametrize("hardware", sorted(QUEUE_KEYWORD))
def test_each_hardware_family_queue_keyword_matches_pyavd(hardware: str) -> None:
    """The bundled spines are Jericho2 (tx-queue); the same spine on each other switch of the table renders its
    queues, and maps its traffic classes, in that switch's sub-mode, as pyavd does with the table's keyword."""
    spine = example_fabric("fabric").devices["spine1"].model_copy(update={"hardware": hardware})
    keyword = QUEUE_KEYWORD[hardware]
    config = fabricgen_config(spine)
    assert f"\n   {keyword} 3\n" in config and f" to {keyword} 3\n" in config
    assert_same(spine)
