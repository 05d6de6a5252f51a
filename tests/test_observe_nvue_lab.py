"""The NVUE counter reader against the lab's NVUE target (tests/targets/nvue.py) over real SSH: NAPALM's
`fabricgen_nvue` driver, the reader's `nv show interface <port> …` run by the switch's shell, the pages printed in
the layouts of NVIDIA's examples with numbers the test writes on the switch (its counters.json); then `health`
and the push soak's verdict judge what grew. The parser itself is tested on NVIDIA's own examples in
tests/test_observe_parsers.py."""

from __future__ import annotations

import importlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

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
from fabricgen.platforms.nvue.observe import data_ports
from fabricgen.resolve import resolve

from lab import Lab
from test_lab import require_lab

ROOT = Path(__file__).resolve().parent.parent
target = importlib.import_module("targets.nvue")  # as the lab imports it, to read the switch's state


@pytest.fixture(scope="module")
def lab() -> Iterator[Lab]:
    require_lab()
    with Lab.up(1, prefix=f"on{os.getpid()}", kinds=["nvue"]) as built:
        yield built


@pytest.fixture(scope="module")
def mixed() -> Fabric:
    loaded = load(ROOT / "intent" / "mixed.yaml", ROOT / "inventory" / "mixed")
    return resolve(loaded.intent, loaded.inventory, loaded.locate)


def read(lab: Lab, host: str, device: DeviceModel) -> list[Reading]:
    driver = napalm.get_network_driver("fabricgen_nvue")(
        lab.address(host), "root", None,
        optional_args={"key_file": str(lab.key_file), "known_hosts": str(lab.known_hosts)})
    driver.open()
    try:
        return read_device(driver, device, limit=30)
    finally:
        driver.close()


def test_nvue_switch_counters_are_read_and_a_fault_on_the_switch_is_named(lab: Lab, mixed: Fabric) -> None:
    host = next(iter(lab.hosts))
    leaf3 = mixed.devices["leaf3"]
    before = read(lab, host, leaf3)
    ports = {r.port for r in before}
    assert ports == set(data_ports(leaf3)) == {"swp1", "swp2", "swp63", "swp64"}
    assert {r.metric for r in before} >= {"carrier_transitions", "fcs_errors", "pfc_rx_pause", "pfc_tx_pause",
                                         "queue_wred_dropped", "queue_ecn_marked", "queue_dropped",
                                         "fec_uncorrected_symbols", "fec_corrected", "pre_fec_ber"}
    assert not any(r.value for r in before if r.metric != "pre_fec_ber")

    # On the switch: swp1's FEC stops correcting everything and its RoCE queue drops (no buffer).
    (lab.state_dir(host) / "counters.json").write_text(json.dumps(
        {"swp1": {"phy-symbol-errors": 40, "roce-tx-unicast-no-buffer-discard": 6}}))
    after = read(lab, host, leaf3)

    findings = judge(mixed, Snapshot(1000.0, {"leaf3": DeviceSnapshot("leaf3", "nvue", before)}),
                     Snapshot(1060.0, {"leaf3": DeviceSnapshot("leaf3", "nvue", after)}), None)
    assert [(f.rule, f.layer, f.subject, f.counters) for f in findings] == [
        ("FG-OBS-101", Layer.PHYSICAL, "leaf3:swp1", {"fec_uncorrected_symbols": 40}),
        ("FG-OBS-202", Layer.LINK, "leaf3:swp1", {"queue_dropped[3]": 6})]
    assert soak_verdict(before, after, leaf3).problems == [
        "leaf3:swp1 symbol errors FEC did not correct +40", "leaf3:swp1 drops on lossless 3 +6"]



@pytest.mark.skipif(os.environ.get("FABRICGEN_SLOW_LAB") != "1",
                    reason="a whole push to the NVUE target with a soak, 1-2.5 min on a loaded machine (the GPU-host "
                           "push soak in tests/test_observe_lab.py runs in every suite): set FABRICGEN_SLOW_LAB=1")
def test_push_soak_reverts_the_nvue_switch_whose_fec_errors_grow(lab: Lab, tmp_path: Path) -> None:
    """`fabricgen push --soak` to the NVUE target (leaf3 of the mixed example): committed with NVUE's confirm
    timer, counters read, then swp1's FEC stops correcting everything on the switch during the soak; push
    reverts it, and the switch's own applied configuration is its starting one again."""
    host = next(iter(lab.hosts))
    lab.reset(host)
    start = target.applied_config(lab.state_dir(host))
    intent, inventory = inputs_reaching_leaf3(lab, host, tmp_path / "inputs")
    runs = tmp_path / "runs"
    push = subprocess.Popen([sys.executable, "-m", "fabricgen", "push", str(intent), "-i", str(inventory),
                             "--hosts", "leaf3", "--journal", str(runs), "--yes", "--confirm-timeout", "60",
                             "--soak", "6", "--format", "json"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    try:
        wait_for_event(runs, "soak-start", "leaf3", push)
        (lab.state_dir(host) / "counters.json").write_text(json.dumps({"swp1": {"phy-symbol-errors": 9}}))
        stdout, stderr = push.communicate(timeout=300)
    finally:
        if push.poll() is None:
            push.kill()
    assert push.returncode == 1, stdout + stderr
    result = json.loads(stdout)["devices"]["leaf3"]
    assert result["state"] == "reverted", result
    assert result["message"].startswith("counters grew during the soak: leaf3:swp1 symbol errors FEC did not "
                                        "correct +9; ")
    assert target.applied_config(lab.state_dir(host)) == start  # the switch's own record
    (journal,) = runs.glob("*/journal.jsonl")
    before = json.loads((journal.parent / "soak" / "leaf3.before.json").read_text())
    assert {r["port"] for r in before["readings"]} == {"swp1", "swp2", "swp63", "swp64"}


def inputs_reaching_leaf3(lab: Lab, host: str, directory: Path) -> tuple[Path, Path]:
    """intent/mixed.yaml and inventory/mixed with leaf3 at the lab's NVUE target (the others unreachable: only
    leaf3 is pushed)."""
    inventory = directory / "inventory"
    inventory.mkdir(parents=True)
    shutil.copyfile(ROOT / "intent" / "mixed.yaml", directory / "intent.yaml")
    for name in ("groups.yaml", "defaults.yaml"):
        shutil.copyfile(ROOT / "inventory" / "mixed" / name, inventory / name)
    devices = yaml.safe_load((ROOT / "inventory" / "mixed" / "hosts.yaml").read_text())
    leaf3 = devices["leaf3"]
    leaf3.setdefault("data", {})["mgmt_address"] = leaf3["hostname"]  # the config keeps the planned address
    leaf3["hostname"] = lab.address(host)
    leaf3.update(target.lab_connection(lab, host))
    (inventory / "hosts.yaml").write_text(yaml.safe_dump(devices, sort_keys=False))
    return directory / "intent.yaml", inventory
