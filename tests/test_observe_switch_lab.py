"""`observe`, `health` and the soak's verdict against the lab's SONiC and EOS targets, as against the NVUE target
(tests/test_observe_nvue_lab.py) and the GPU hosts (tests/test_observe_lab.py).

SONiC (tests/targets/sonic.py): COUNTERS_DB and APPL_DB in the switch's own Redis, read by fabricgen's reader with
`sonic-db-dump` over SSH (NAPALM's `fabricgen_sonic`); a fault is written into that Redis. EOS (tests/targets/eos.py):
eAPI over HTTPS (`fabricgen_eos`) answering `show interfaces`, `show interfaces phy detail` and `show
priority-flow-control counters` in the JSON shapes of ANTA's recordings; a fault is written into the switch's
counters.json. The parsers themselves are tested on the vendors' recorded outputs in tests/test_observe_parsers.py."""

from __future__ import annotations

import importlib
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import napalm
import pytest
import yaml
from test_observe_lab import wait_for_event

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
sonic: Any = importlib.import_module("targets.sonic")  # as the lab imports them
eos: Any = importlib.import_module("targets.eos")


def require_sonic_target() -> None:
    reason = sonic.unavailable()
    if reason and "1" in (os.environ.get("FABRICGEN_REQUIRE_SHARED"), os.environ.get("FABRICGEN_REQUIRE_YANG")):
        pytest.fail(f"FABRICGEN_REQUIRE_SHARED=1 but {reason}", pytrace=False)
    if reason:
        pytest.skip(reason=reason)


@pytest.fixture(scope="module")
def sonic_lab(sonic_yang_models: Path) -> Iterator[Lab]:  # the target loads GCU from the vendor data (conftest.py)
    require_lab()
    require_sonic_target()
    with Lab.up(1, prefix=f"os{os.getpid()}", kinds=["sonic"]) as built:
        wait_until(lambda: sonic.lab_ready(built, only(built)), "the SONiC target's Redis did not come up")
        yield built


@pytest.fixture(scope="module")
def eos_lab() -> Iterator[Lab]:
    require_lab()
    with Lab.up(1, prefix=f"oe{os.getpid()}", kinds=["eos"]) as built:
        wait_until(lambda: eos.lab_ready(built, only(built)), "the EOS target's eAPI did not start")
        yield built


@pytest.fixture(scope="module")
def mixed() -> Fabric:
    loaded = load(ROOT / "intent" / "mixed.yaml", ROOT / "inventory" / "mixed")
    return resolve(loaded.intent, loaded.inventory, loaded.locate)


def only(lab: Lab) -> str:
    return next(iter(lab.hosts))


def wait_until(ready: Any, message: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not ready():
        assert time.monotonic() < deadline, message
        time.sleep(0.1)


def sonic_driver(lab: Lab) -> Any:
    return napalm.get_network_driver("fabricgen_sonic")(
        lab.address(only(lab)), "root", None, timeout=30,
        optional_args={"key_file": str(lab.key_file), "known_hosts": str(lab.known_hosts)})


def eos_driver(lab: Lab) -> Any:
    return napalm.get_network_driver("fabricgen_eos")(
        lab.address(only(lab)), eos.LAB_USER, eos.LAB_PASSWORD, timeout=30,
        optional_args={"ca_file": str(lab.state_dir(only(lab)) / "ca.pem")})


def read(driver: Any, device: DeviceModel) -> list[Reading]:
    driver.open()
    try:
        return read_device(driver, device, limit=30)
    finally:
        driver.close()


def judged(fabric: Fabric, name: str, before: list[Reading], after: list[Reading]) -> list[tuple[Any, ...]]:
    platform = fabric.devices[name].platform
    findings = judge(fabric, Snapshot(1000.0, {name: DeviceSnapshot(name, platform, before)}),
                     Snapshot(1060.0, {name: DeviceSnapshot(name, platform, after)}), None)
    return [(f.rule, f.layer, f.subject, f.counters) for f in findings]


def test_sonic_counters_db_is_read_and_a_fault_in_it_is_named(sonic_lab: Lab, mixed: Fabric) -> None:
    leaf1 = mixed.devices["leaf1"]
    before = read(sonic_driver(sonic_lab), leaf1)
    assert {r.port for r in before} == set(json.loads(sonic.STARTING_CONFIG.read_text())["PORT"])
    assert {r.metric for r in before} == {"fec_corrected", "fec_uncorrected", "fec_symbol_errors", "in_discards",
                                         "pfc_rx_pause", "pfc_tx_pause", "queue_dropped", "queue_wred_dropped",
                                         "queue_ecn_marked", "queue_watermark", "pfc_watchdog_storms",
                                         "pfc_watchdog_restores", "carrier_transitions"}
    assert not any(r.value for r in before)

    # On the switch (its Redis): Ethernet8's FEC stops correcting everything, and its lossless queue 3 storms.
    state = sonic_lab.state_dir(only(sonic_lab))
    sonic.set_counters(state, "Ethernet8", {"SAI_PORT_STAT_IF_IN_FEC_NOT_CORRECTABLE_FRAMES": 5})
    sonic.set_counters(state, "Ethernet8", {"PFC_WD_QUEUE_STATS_DEADLOCK_DETECTED": 1}, queue=3)
    after = read(sonic_driver(sonic_lab), leaf1)

    assert judged(mixed, "leaf1", before, after) == [
        ("FG-OBS-101", Layer.PHYSICAL, "leaf1:Ethernet8", {"fec_uncorrected": 5}),
        ("FG-OBS-204", Layer.LINK, "leaf1:Ethernet8", {"pfc_watchdog_storms[3]": 1})]
    assert soak_verdict(before, after, leaf1).problems == [
        "leaf1:Ethernet8 uncorrectable FEC codewords +5", "leaf1:Ethernet8 PFC watchdog storms +1"]


def test_eos_eapi_counters_are_read_and_a_fault_on_the_switch_is_named(eos_lab: Lab, mixed: Fabric) -> None:
    leaf2 = mixed.devices["leaf2"]
    before = read(eos_driver(eos_lab), leaf2)
    assert {r.port for r in before} == {name for name in eos.PHYSICAL if name.startswith("Ethernet")}
    assert {r.metric for r in before} == {"fcs_errors", "symbol_errors", "in_discards", "carrier_transitions",
                                         "fec_corrected", "fec_uncorrected", "pre_fec_ber", "pfc_rx_pause",
                                         "pfc_tx_pause"}
    assert not any(r.value for r in before)

    # On the switch: Ethernet3/1's FEC gives up on codewords and the link flaps twice.
    (eos_lab.state_dir(only(eos_lab)) / eos.COUNTERS_FILE).write_text(json.dumps(
        {"Ethernet3/1": {"uncorrectedCodewords": 4, "linkStatusChanges": 2}}))
    after = read(eos_driver(eos_lab), leaf2)

    assert judged(mixed, "leaf2", before, after) == [
        ("FG-OBS-101", Layer.PHYSICAL, "leaf2:Ethernet3/1", {"fec_uncorrected": 4}),
        ("FG-OBS-201", Layer.LINK, "leaf2:Ethernet3/1", {"carrier_transitions": 2})]
    assert soak_verdict(before, after, leaf2).problems == [
        "leaf2:Ethernet3/1 link flaps +2", "leaf2:Ethernet3/1 uncorrectable FEC codewords +4"]


def test_observe_then_health_name_the_faulty_switch_port_and_layer(sonic_lab: Lab, eos_lab: Lab,
                                                                   tmp_path: Path) -> None:
    """The commands a user types, both switches in one run: `fabricgen observe` twice (the second after the
    faults were written on the switches), then `fabricgen health` over the two snapshots in observe.sqlite."""
    sonic.set_counters(sonic_lab.state_dir(only(sonic_lab)), "Ethernet0",
                       {"SAI_PORT_STAT_IF_IN_FEC_NOT_CORRECTABLE_FRAMES": 0})
    (eos_lab.state_dir(only(eos_lab)) / eos.COUNTERS_FILE).write_text("{}")
    intent, inventory = inputs_reaching(tmp_path / "inputs", {"leaf1": (sonic_lab, sonic), "leaf2": (eos_lab, eos)})
    first = fabricgen(tmp_path, intent, inventory, "observe", "--hosts", "leaf1,leaf2", "--format", "json")
    assert first.returncode == 0, first.stdout + first.stderr
    devices = json.loads(first.stdout)["devices"]
    assert set(devices) == {"leaf1", "leaf2"} and not any(d["error"] for d in devices.values())

    sonic.set_counters(sonic_lab.state_dir(only(sonic_lab)), "Ethernet0",
                       {"SAI_PORT_STAT_IF_IN_FEC_NOT_CORRECTABLE_FRAMES": 7})
    (eos_lab.state_dir(only(eos_lab)) / eos.COUNTERS_FILE).write_text(json.dumps(
        {"Ethernet5/1": {"fcsErrors": 12}}))
    second = fabricgen(tmp_path, intent, inventory, "observe", "--hosts", "leaf1,leaf2")
    assert second.returncode == 0, second.stdout + second.stderr

    health = fabricgen(tmp_path, intent, inventory, "health", "--format", "json")
    assert health.returncode == 1, health.stdout + health.stderr
    assert [(f["rule"], f["layer"], f["device"], f["port"], f["counters"])
            for f in json.loads(health.stdout)["findings"]] == [
        ("FG-OBS-101", "physical", "leaf1", "Ethernet0", {"fec_uncorrected": 7}),
        ("FG-OBS-104", "physical", "leaf2", "Ethernet5/1", {"fcs_errors": 12})]


def fabricgen(cwd: Path, intent: Path, inventory: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "fabricgen", args[0], str(intent), "-i", str(inventory),
                           "--journal", str(cwd / "runs"), *args[1:]],
                          capture_output=True, text=True, timeout=300, check=False, cwd=cwd)


def inputs_reaching(directory: Path, targets: dict[str, tuple[Lab, Any]]) -> tuple[Path, Path]:
    """intent/mixed.yaml and inventory/mixed with the named switches at the lab's targets."""
    inventory = directory / "inventory"
    inventory.mkdir(parents=True)
    shutil.copyfile(ROOT / "intent" / "mixed.yaml", directory / "intent.yaml")
    for name in ("groups.yaml", "defaults.yaml"):
        shutil.copyfile(ROOT / "inventory" / "mixed" / name, inventory / name)
    devices = yaml.safe_load((ROOT / "inventory" / "mixed" / "hosts.yaml").read_text())
    for name, (lab, module) in targets.items():
        host = only(lab)
        devices[name].setdefault("data", {})["mgmt_address"] = devices[name]["hostname"]
        devices[name]["hostname"] = lab.address(host)
        devices[name].update(module.lab_connection(lab, host))
    (inventory / "hosts.yaml").write_text(yaml.safe_dump(devices, sort_keys=False))
    return directory / "intent.yaml", inventory


def push_with_fault(lab: Lab, module: Any, name: str, fault: Any, tmp_path: Path,
                    confirm_timeout: int = 60) -> tuple[dict[str, Any], Path]:
    """`fabricgen push --soak 6` of the mixed example's ``name`` to the lab's target, ``fault()`` done on the switch
    once its soak has started: the device's result and the run's directory."""
    intent, inventory = inputs_reaching(tmp_path / "inputs", {name: (lab, module)})
    runs = tmp_path / "runs"
    push = subprocess.Popen([sys.executable, "-m", "fabricgen", "push", str(intent), "-i", str(inventory),
                             "--hosts", name, "--journal", str(runs), "--yes", "--confirm-timeout",
                             str(confirm_timeout), "--soak", "6", "--format", "json"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    try:
        wait_for_event(runs, "soak-start", name, push)
        fault()
        stdout, stderr = push.communicate(timeout=300)
    finally:
        if push.poll() is None:
            push.kill()
    assert push.returncode == 1, stdout + stderr
    (journal,) = runs.glob("*/journal.jsonl")
    return json.loads(stdout)["devices"][name], journal.parent


def test_push_soak_reverts_the_eos_switch_whose_fec_gives_up(eos_lab: Lab, tmp_path: Path) -> None:
    """Committed with EOS's session commit timer, counters read, then Ethernet1/1's FEC fails codewords on the
    switch during the soak: push reverts it; the switch's own running-config is its starting one again, and the
    run's history holds the soak's two readings."""
    host = only(eos_lab)
    eos_lab.reset(host)
    wait_until(lambda: eos.lab_ready(eos_lab, host), "the EOS target's eAPI did not restart")
    start = (eos_lab.state_dir(host) / "running-config").read_text()
    result, run = push_with_fault(eos_lab, eos, "leaf2", lambda: (eos_lab.state_dir(host) / eos.COUNTERS_FILE)
                                  .write_text(json.dumps({"Ethernet1/1": {"uncorrectedCodewords": 3}})), tmp_path)
    assert result["state"] == "reverted", result
    assert result["message"].startswith("counters grew during the soak: leaf2:Ethernet1/1 uncorrectable FEC "
                                        "codewords +3; ")
    assert (eos_lab.state_dir(host) / "running-config").read_text() == start  # the switch's own record
    history = History(tmp_path / "observe.sqlite")
    assert [phase for _, phase in history.run_snapshot_ids(run.name)] == ["before", "after"]
    history.close()
