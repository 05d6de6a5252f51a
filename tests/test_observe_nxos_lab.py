"""The NX-OS counter reader against the lab's NX-OS target (tests/targets/nxos.py) over real HTTPS: NAPALM's
`fabricgen_nxos` driver, NX-API's JSON-RPC `cli` method, `show interface` and `show interface counters errors`
answered in the JSON NX-OS prints (field names as the recordings in tests/observe_fixtures/nxos_nxapi.json),
`show queuing tabular` and `show queuing pfc-queue detail` in the JSON of Cisco's published schema (no recording
of them was found: tests/observe_fixtures/nxos_queuing_constructed_from_cisco_schema.json), with numbers the test
writes on the switch (its counters.json); then `health` and the push soak's verdict judge what grew. The parser
itself is tested on those fixtures in tests/test_observe_parsers.py."""

from __future__ import annotations

import importlib
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import napalm
import pytest
from test_observe_switch_lab import fabricgen, inputs_reaching, push_with_fault

from fabricgen.load.fabric import load
from fabricgen.models.device import DeviceModel, Fabric
from fabricgen.observe.collect import read_device
from fabricgen.observe.health import judge
from fabricgen.observe.model import DeviceSnapshot, Layer, Reading, Snapshot
from fabricgen.observe.soak import soak_verdict
from fabricgen.observe.store import History
from fabricgen.resolve import resolve

from lab import Lab
from test_lab import require_lab

ROOT = Path(__file__).resolve().parent.parent
target: Any = importlib.import_module("targets.nxos")  # as the lab imports it


@pytest.fixture(scope="module")
def lab() -> Iterator[Lab]:
    require_lab()
    with Lab.up(1, prefix=f"ox{os.getpid()}", kinds=["nxos"]) as built:
        wait_until_ready(built, next(iter(built.hosts)))
        yield built


def wait_until_ready(lab: Lab, host: str) -> None:
    deadline = time.monotonic() + 60
    while not target.lab_ready(lab, host):  # its NX-API listening, its certificate written
        assert time.monotonic() < deadline, "the NX-API server of the target did not start"
        time.sleep(0.05)


@pytest.fixture(scope="module")
def mixed_fabric() -> Fabric:
    loaded = load(ROOT / "intent" / "mixed.yaml", ROOT / "inventory" / "mixed")
    return resolve(loaded.intent, loaded.inventory, loaded.locate)


def read(lab: Lab, host: str, device: DeviceModel) -> list[Reading]:
    options = target.napalm_optional_args(lab.state_dir(host), lab.key_file, lab.known_hosts)
    driver = napalm.get_network_driver("fabricgen_nxos")(lab.address(host), target.LAB_USERNAME,
                                                         target.LAB_PASSWORD, optional_args=options)
    driver.open()
    try:
        return read_device(driver, device, limit=30)
    finally:
        driver.close()


def test_nxos_switch_counters_are_read_and_a_fault_on_the_switch_is_named(lab: Lab, mixed_fabric: Fabric) -> None:
    host = next(iter(lab.hosts))
    leaf4 = mixed_fabric.devices["leaf4"]
    before = read(lab, host, leaf4)
    ethernet = {r.port for r in before}
    assert ethernet and all(port.startswith("Ethernet") for port in ethernet)  # mgmt0 is not a fabric port
    assert {r.metric for r in before} == {"fcs_errors", "in_discards", "carrier_transitions", "symbol_errors",
                                         "queue_dropped", "queue_ecn_marked", "pfc_rx_pause", "pfc_tx_pause",
                                         "pfc_watchdog_storms", "pfc_watchdog_restores"}
    assert not any(r.value for r in before)

    # On the switch: Ethernet1/1 starts taking CRC errors and flaps twice.
    (lab.state_dir(host) / target.COUNTERS_FILE).write_text(json.dumps(
        {"Ethernet1/1": {"eth_crc": 17, "eth_reset_cntr": 2}}))
    after = read(lab, host, leaf4)

    findings = judge(mixed_fabric, Snapshot(1000.0, {"leaf4": DeviceSnapshot("leaf4", "nxos", before)}),
                     Snapshot(1060.0, {"leaf4": DeviceSnapshot("leaf4", "nxos", after)}), None)
    assert [(f.rule, f.layer, f.subject, f.counters) for f in findings] == [
        ("FG-OBS-104", Layer.PHYSICAL, "leaf4:Ethernet1/1", {"fcs_errors": 17}),
        ("FG-OBS-201", Layer.LINK, "leaf4:Ethernet1/1", {"carrier_transitions": 2})]
    assert soak_verdict(before, after, leaf4).problems == [
        "leaf4:Ethernet1/1 link flaps +2", "leaf4:Ethernet1/1 CRC errors +17"]


# On the switch: Ethernet1/1's lossless qos-group 3 is paused on and on while its queue marks no ECN, until the
# PFC watchdog shuts it; Ethernet1/63 drops on that lossless queue; Ethernet1/2 sends pauses on qos-group 5, which
# the intent makes lossy.
STORM = {"Ethernet1/1": {"pfc_rx_qos_3": 90210, "pfc_tx_qos_3": 14, "q-shutdown[3]": 1},
         "Ethernet1/63": {"tx_uc_drop_pkt_qos_3": 37},
         "Ethernet1/2": {"pfc_tx_qos_5": 8}}


def test_a_pfc_storm_and_lossless_drops_on_the_nxos_switch_are_named(lab: Lab, mixed_fabric: Fabric) -> None:
    host = next(iter(lab.hosts))
    leaf4 = mixed_fabric.devices["leaf4"]
    (lab.state_dir(host) / target.COUNTERS_FILE).write_text("{}")
    before = read(lab, host, leaf4)
    (lab.state_dir(host) / target.COUNTERS_FILE).write_text(json.dumps(STORM))
    after = read(lab, host, leaf4)

    findings = judge(mixed_fabric, Snapshot(1000.0, {"leaf4": DeviceSnapshot("leaf4", "nxos", before)}),
                     Snapshot(1060.0, {"leaf4": DeviceSnapshot("leaf4", "nxos", after)}), None)
    assert [(f.rule, f.layer, f.subject, f.counters) for f in findings] == [
        ("FG-OBS-204", Layer.LINK, "leaf4:Ethernet1/1", {"pfc_watchdog_storms[3]": 1}),
        ("FG-OBS-203", Layer.LINK, "leaf4:Ethernet1/2", {"pfc_tx_pause[5]": 8}),
        ("FG-OBS-202", Layer.LINK, "leaf4:Ethernet1/63", {"queue_dropped[3]": 37}),
        ("FG-OBS-301", Layer.CONGESTION, "leaf4:Ethernet1/1", {"pfc_pause[3]": 90224, "queue_ecn_marked[3]": 0})]
    assert soak_verdict(before, after, leaf4).problems == [
        "leaf4:Ethernet1/1 PFC watchdog storms +1", "leaf4:Ethernet1/63 drops on lossless 3 +37"]
    (lab.state_dir(host) / target.COUNTERS_FILE).unlink()


def test_observe_then_health_name_the_nxos_port_and_layer_of_a_pfc_storm(lab: Lab, tmp_path: Path) -> None:
    """The commands a user types: `fabricgen observe` twice (the storm written on the switch between them), then
    `fabricgen health` over the two snapshots in observe.sqlite."""
    host = next(iter(lab.hosts))
    (lab.state_dir(host) / target.COUNTERS_FILE).write_text("{}")
    intent, inventory = inputs_reaching(tmp_path / "inputs", {"leaf4": (lab, target)})
    first = fabricgen(tmp_path, intent, inventory, "observe", "--hosts", "leaf4", "--format", "json")
    assert first.returncode == 0, first.stdout + first.stderr
    assert json.loads(first.stdout)["devices"]["leaf4"]["error"] is None

    (lab.state_dir(host) / target.COUNTERS_FILE).write_text(json.dumps(STORM))
    second = fabricgen(tmp_path, intent, inventory, "observe", "--hosts", "leaf4")
    assert second.returncode == 0, second.stdout + second.stderr
    (lab.state_dir(host) / target.COUNTERS_FILE).unlink()

    health = fabricgen(tmp_path, intent, inventory, "health", "--format", "json")
    assert health.returncode == 1, health.stdout + health.stderr
    assert [(f["rule"], f["layer"], f["device"], f["port"], f["counters"])
            for f in json.loads(health.stdout)["findings"]] == [
        ("FG-OBS-204", "link", "leaf4", "Ethernet1/1", {"pfc_watchdog_storms[3]": 1}),
        ("FG-OBS-203", "link", "leaf4", "Ethernet1/2", {"pfc_tx_pause[5]": 8}),
        ("FG-OBS-202", "link", "leaf4", "Ethernet1/63", {"queue_dropped[3]": 37}),
        ("FG-OBS-301", "congestion-control", "leaf4", "Ethernet1/1", {"pfc_pause[3]": 90224,
                                                                     "queue_ecn_marked[3]": 0})]


def test_a_counters_file_naming_an_unmodelled_counter_is_refused_by_the_target(lab: Lab,
                                                                               mixed_fabric: Fabric) -> None:
    """The target's own guard: a fault a test means to inject cannot silently become a zero."""
    host = next(iter(lab.hosts))
    (lab.state_dir(host) / target.COUNTERS_FILE).write_text(json.dumps({"Ethernet1/1": {"eth_fec_uncorr": 1}}))
    try:
        with pytest.raises(Exception, match="does not model"):
            read(lab, host, mixed_fabric.devices["leaf4"])
    finally:
        (lab.state_dir(host) / target.COUNTERS_FILE).unlink()


def test_push_soak_reverts_the_nxos_switch_whose_crc_errors_grow(lab: Lab, tmp_path: Path) -> None:
    """Committed with NX-OS's configure replace commit-timeout, counters read over NX-API, then Ethernet1/1 takes
    CRC errors on the switch during the soak: push reverts it; the switch's own running-config is its starting
    one again, and the run's history holds the soak's two readings."""
    host = next(iter(lab.hosts))
    lab.reset(host)
    wait_until_ready(lab, host)
    start = (lab.state_dir(host) / "running-config").read_text()
    result, run = push_with_fault(lab, target, "leaf4", lambda: (lab.state_dir(host) / target.COUNTERS_FILE)
                                  .write_text(json.dumps({"Ethernet1/1": {"eth_crc": 5}})), tmp_path)
    assert result["state"] == "reverted", result
    assert result["message"].startswith("counters grew during the soak: leaf4:Ethernet1/1 CRC errors +5; ")
    assert (lab.state_dir(host) / "running-config").read_text() == start  # the switch's own record
    history = History(tmp_path / "observe.sqlite")
    assert [phase for _, phase in history.run_snapshot_ids(run.name)] == ["before", "after"]
    history.close()
