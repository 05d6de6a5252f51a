"""End to end, through the files: every host classifies each of the 64 DSCPs exactly as its leaf does.

Each bundled example is rendered, and every device is read back from its own files by its platform's reader
(SONiC config_db.json, EOS/NX-OS CLI, NVUE YAML, the ConnectX and dcb scripts). The DSCP map a host's script
gives each NIC must equal the DSCP→TC map the config of the switch at the other end of its cable sets.
"""

from __future__ import annotations

import functools

import pytest

from fabricgen.api import render_device
from fabricgen.lint import lint
from fabricgen.models.device import DeviceModel, Fabric
from fabricgen.platforms import get_platform
from fabricgen.resolve import resolve

from conftest import EXAMPLES, load_example


@functools.cache
def read_back(name: str) -> Fabric:
    """The example as its rendered files say it is."""
    loaded = load_example(name)
    fabric = resolve(loaded.intent, loaded.inventory, loaded.locate)
    devices: dict[str, DeviceModel] = {}
    for device_name, device in fabric.devices.items():
        platform = get_platform(device.platform)
        assert platform.read is not None
        devices[device_name] = platform.read(device, render_device(device))
    return fabric.model_copy(update={"devices": devices})


@pytest.mark.parametrize("name", EXAMPLES)
def test_every_nic_classifies_every_dscp_as_the_switch_it_is_cabled_to(name: str) -> None:
    fabric = read_back(name)
    compared = 0
    for device in fabric.devices.values():
        for nic in device.host.nics if device.host else []:
            assert nic.peer is not None, f"{device.name}:{nic.interface} has no cable in the example"
            switch = fabric.devices[nic.peer.split(":")[0]]
            assert switch.qos is not None
            assert nic.trust == "dscp"
            assert sorted(nic.dscp2prio) == list(range(64)), f"{device.name}:{nic.interface} misses DSCPs"
            assert nic.dscp2prio == switch.qos.dscp_to_tc, f"{device.name}:{nic.interface} vs {switch.name}"
            compared += 1
    assert compared >= 4, "the example has GPU hosts with cabled NICs"


@pytest.mark.parametrize("name", EXAMPLES)
def test_unlisted_dscps_stay_out_of_the_lossless_and_cnp_priorities(name: str) -> None:
    fabric = read_back(name)
    policy = fabric.policy
    assert policy is not None
    listed = {dscp for dscps in policy.class_dscps.values() for dscp in dscps}
    for device in fabric.devices.values():
        for nic in device.host.nics if device.host else []:
            lossless = {prio for prio, flag in enumerate(nic.pfc) if flag}
            for dscp in set(range(64)) - listed:
                assert nic.dscp2prio[dscp] not in lossless | {policy.cnp_priority}, (device.name, nic.interface, dscp)


@pytest.mark.parametrize("name", EXAMPLES)
def test_rendered_hosts_lint_clean_on_classification_and_ets(name: str) -> None:
    report = lint(read_back(name))
    rules = {"FG-CLS-002", "FG-CLS-003", "FG-CLS-004", "FG-SCH-001", "FG-SCH-004"}
    assert [f for f in report.findings if f.rule in rules] == []
