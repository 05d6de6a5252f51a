"""The push soak's counter verdict (fabricgen/observe/soak.py): what growth during the soak fails a device."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fabricgen.deploy import soak as deploy_soak
from fabricgen.deploy.journal import Journal
from fabricgen.deploy.outcome import Deployment, PushOptions
from fabricgen.load.fabric import load
from fabricgen.models.device import Fabric
from fabricgen.observe.model import DeviceSnapshot, Reading, Snapshot, reading
from fabricgen.observe.soak import SoakLimits, soak_verdict
from fabricgen.observe.store import History
from fabricgen.platforms.nxos import observe as nxos
from fabricgen.resolve import resolve

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def mixed_fabric() -> Fabric:
    loaded = load(ROOT / "intent" / "mixed.yaml", ROOT / "inventory" / "mixed")
    return resolve(loaded.intent, loaded.inventory, loaded.locate)


def leaf(**values: float) -> list[Reading]:
    base = {("Ethernet0", "fec_uncorrected", None): 5.0, ("Ethernet0", "fec_corrected", None): 100.0,
            ("Ethernet0", "carrier_transitions", None): 1.0, ("Ethernet0", "queue_dropped", 3): 0.0,
            ("Ethernet0", "queue_dropped", 0): 0.0, ("Ethernet0", "pfc_watchdog_storms", 3): 0.0}
    for name, value in values.items():
        metric, _, index = name.partition("__")
        base[("Ethernet0", metric, int(index) if index else None)] = value
    return [reading("leaf1", port, metric, value, index) for (port, metric, index), value in base.items()]


def test_a_quiet_soak_is_healthy_even_with_corrected_fec(example_fabric: Fabric) -> None:
    verdict = soak_verdict(leaf(), leaf(fec_corrected=5000), example_fabric.devices["leaf1"])
    assert verdict.healthy and verdict.reason == "healthy"


def test_fec_growth_during_the_soak_fails_the_device(example_fabric: Fabric) -> None:
    verdict = soak_verdict(leaf(), leaf(fec_uncorrected=17), example_fabric.devices["leaf1"])
    assert not verdict.healthy
    assert verdict.reason == "counters grew during the soak: leaf1:Ethernet0 uncorrectable FEC codewords +12"


def test_storm_flap_and_lossless_drops_fail_lossy_drops_do_not(example_fabric: Fabric) -> None:
    verdict = soak_verdict(leaf(), leaf(carrier_transitions=3, queue_dropped__3=4, queue_dropped__0=900,
                                        pfc_watchdog_storms__3=1), example_fabric.devices["leaf1"])
    assert verdict.problems == ["leaf1:Ethernet0 link flaps +2", "leaf1:Ethernet0 PFC watchdog storms +1",
                                "leaf1:Ethernet0 drops on lossless 3 +4"]


def test_counters_cleared_by_the_change_count_from_zero(example_fabric: Fabric) -> None:
    # A config reload that clears counters: 5 → 0 is a reset with nothing counted since, not -5 nor a wrap.
    assert soak_verdict(leaf(), leaf(fec_uncorrected=0), example_fabric.devices["leaf1"]).healthy


def test_no_counters_after_the_soak_is_not_healthy(example_fabric: Fabric) -> None:
    verdict = soak_verdict(leaf(), [], example_fabric.devices["leaf1"])
    assert verdict.problems == ["leaf1: no counters could be read after the soak"]


def test_a_lossless_priority_paused_half_the_soak_is_a_pause_storm(example_fabric: Fabric) -> None:
    leaf1 = example_fabric.devices["leaf1"]
    assert leaf1.qos is not None and 3 in leaf1.qos.lossless_priorities and 0 not in leaf1.qos.lossless_priorities
    before = leaf(pfc_rx_pause_duration__3=1.0, pfc_rx_pause_duration__0=0.0)
    stormy = leaf(pfc_rx_pause_duration__3=7.0, pfc_rx_pause_duration__0=9.0)  # 6 s of a 10 s soak; 0 is lossy
    verdict = soak_verdict(before, stormy, leaf1, seconds=10.0)
    assert verdict.problems == ["leaf1:Ethernet0 paused by PFC on lossless 3 for 6 s of a 10 s soak (pause storm)"]
    busy = leaf(pfc_rx_pause_duration__3=3.0, pfc_rx_pause_duration__0=0.0)  # 2 s of 10: pausing, not a storm
    assert soak_verdict(before, busy, leaf1, seconds=10.0).healthy
    assert soak_verdict(before, stormy, leaf1, seconds=10.0, limits=SoakLimits(paused_fraction=0.7)).healthy


def test_limits_tolerate_the_growth_they_name_and_no_more(example_fabric: Fabric) -> None:
    leaf1 = example_fabric.devices["leaf1"]
    limits = SoakLimits(allowed={"fcs_errors": 10})
    before = leaf(fcs_errors=0, fec_uncorrected=5)
    assert soak_verdict(before, leaf(fcs_errors=10, fec_uncorrected=5), leaf1, limits=limits).healthy
    verdict = soak_verdict(before, leaf(fcs_errors=11, fec_uncorrected=6), leaf1, limits=limits)
    assert verdict.problems == ["leaf1:Ethernet0 CRC errors +11", "leaf1:Ethernet0 uncorrectable FEC codewords +1"]


# --- the soak's readings in the counter history (fabricgen/deploy/soak.py) -----------------------------------
# The device side is NX-OS's recorded NX-API replies (tests/observe_fixtures/nxos_nxapi.json) handed to the soak as
# its reader's result; the lab tests (tests/test_observe_lab.py) run the same through a real push.

def recorded_nxos(crc: str = "0") -> list[Reading]:
    replies = json.loads((Path(__file__).parent / "observe_fixtures" / "nxos_nxapi.json").read_text())
    rows = replies["show interface"]["result"]["body"]["TABLE_interface"]["ROW_interface"]
    next(row for row in rows if row["interface"] == "Ethernet1/5")["eth_crc"] = crc
    return nxos.parse_json("leaf4", replies)


def soaked(mixed: Fabric, root: Path, monkeypatch: pytest.MonkeyPatch,
           after: list[Reading]) -> tuple[Journal, list[str]]:
    readings = iter([recorded_nxos(), after])
    monkeypatch.setattr(deploy_soak, "read_device", lambda driver, model, limit: next(readings))
    journal = Journal(root, "20261205T120000Z-0b5e4e")
    soak = deploy_soak.CounterSoak(Deployment({}, {}, journal=journal, models={"leaf4": mixed.devices["leaf4"]}),
                                   "leaf4", PushOptions(confirm_timeout=60, soak=1))
    soak.wait(driver=object())
    problems = soak.judge(driver=object())
    journal.close()
    return journal, problems


def test_soak_readings_are_stored_in_the_history_with_their_run_and_phase(
        mixed_fabric: Fabric, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    journal, problems = soaked(mixed_fabric, tmp_path / "runs", monkeypatch, recorded_nxos(crc="9"))
    assert problems == ["counters grew during the soak: leaf4:Ethernet1/5 CRC errors +9"]
    history = History(tmp_path / "observe.sqlite")  # beside runs/
    stored = history.run_snapshot_ids(journal.run_id)
    assert [phase for _, phase in stored] == ["before", "after"]
    before, after = (history.load(snapshot_id) for snapshot_id, _ in stored)
    assert before.values() == Snapshot(0, {"leaf4": DeviceSnapshot("leaf4", "nxos", recorded_nxos())}).values()
    assert after.values()[("leaf4", "Ethernet1/5", "fcs_errors", -1)] == 9
    assert before.devices["leaf4"].platform == "nxos" and after.taken_at >= before.taken_at
    # The same readings as the run's soak/ files.
    archived = json.loads((journal.directory / "soak" / "leaf4.after.json").read_text())["readings"]
    assert {(r["port"], r["metric"]): r["value"] for r in archived} == {
        (port, metric): value for (_, port, metric, _), value in after.values().items()}
    # `health` and the report compare fleet snapshots: one device's soak reading is not one of them.
    assert history.snapshot_ids() == []
    history.close()


def test_a_history_that_cannot_be_written_does_not_fail_the_soak(
        mixed_fabric: Fabric, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "observe.sqlite").write_text("not a database\n" * 100)
    journal, problems = soaked(mixed_fabric, tmp_path / "runs", monkeypatch, recorded_nxos())
    assert problems == []
    events = [json.loads(line) for line in (journal.directory / "journal.jsonl").read_text().splitlines()]
    unstored = [(e["phase"], e["reason"]) for e in events if e["event"] == "soak-unstored"]
    assert [phase for phase, _ in unstored] == ["before", "after"]
    assert all(reason.startswith(f"{tmp_path / 'observe.sqlite'}: not a fabricgen observe history")
               for _, reason in unstored)
    assert (journal.directory / "soak" / "leaf4.after.json").exists()  # the run still keeps it
