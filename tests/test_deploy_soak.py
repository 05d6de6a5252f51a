"""Push's counter soak around what the lab cannot show cheaply (tests/test_observe_lab.py runs the whole push
soak on the SSH lab): a platform without a counter reader is soaked by time only, and says so."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fabricgen.deploy.journal import Journal
from fabricgen.deploy.outcome import Deployment, PushOptions
from fabricgen.deploy.soak import CounterSoak
from fabricgen.models.device import Fabric
from fabricgen.observe import collect
from fabricgen.resolve import resolve

from conftest import load_example


@pytest.fixture(scope="module")
def mixed_fabric() -> Fabric:
    loaded = load_example("mixed")
    return resolve(loaded.intent, loaded.inventory, loaded.locate)


def test_a_platform_without_a_counter_reader_is_soaked_by_time_and_says_why(
        mixed_fabric: Fabric, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Every platform fabricgen renders has a counter reader now; the path stays for one without (a new platform):
    # NX-OS's reader is taken away for this test.
    monkeypatch.delitem(collect.READERS, "nxos")
    monkeypatch.setitem(collect.NOT_READ, "nxos", "no NX-OS counter reader in this test")
    journal = Journal(tmp_path / "runs", "20261205T080000Z-abcdef")
    leaf4 = mixed_fabric.devices["leaf4"]
    assert leaf4.platform == "nxos"
    deployment = Deployment({}, {}, journal=journal, models={"leaf4": leaf4})
    soak = CounterSoak(deployment, "leaf4", PushOptions(confirm_timeout=30, soak=1))
    soak.wait(driver=None)  # no reader: the driver is never asked
    assert soak.judge(driver=None) == []
    assert soak.note.startswith("counters not checked during the soak: leaf4: no NX-OS counter reader in this test")
    journal.close()
    events = [json.loads(line) for line in (journal.directory / "journal.jsonl").read_text().splitlines()]
    assert [(e["event"], e["device"], e["readings"], e["soak_s"]) for e in events] == [
        ("soak-start", "leaf4", None, 1)]
    assert events[0]["not_read"] == soak.note
    assert not (journal.directory / "soak").exists()  # nothing read, nothing archived


def test_no_soak_asked_reads_nothing(mixed_fabric: Fabric) -> None:
    soak = CounterSoak(Deployment({}, {}, models={"leaf1": mixed_fabric.devices["leaf1"]}), "leaf1", PushOptions())
    soak.wait(driver=None)
    assert soak.before is None and soak.note == "" and soak.judge(driver=None) == []


def test_each_reading_fits_the_revert_timer(mixed_fabric: Fabric) -> None:
    deployment = Deployment({}, {}, models={"leaf1": mixed_fabric.devices["leaf1"]})
    assert CounterSoak(deployment, "leaf1", PushOptions(confirm_timeout=300, soak=60)).read_limit == 30
    assert CounterSoak(deployment, "leaf1", PushOptions(confirm_timeout=12, soak=6)).read_limit == 2
