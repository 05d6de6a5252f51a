"""`fabricgen runs RUN --verify`: what each device of a run itself recorded of the run's commit, beside what the
journal says.

The journal's last line for a device is what the controller knew when it wrote it; a controller killed between a
device's confirm and its journal line, or a timer that reverted a device after the run gave up on it, leave the
journal behind the device. Every fabricgen driver that keeps a record on the device answers ``commit_fate(run)``
(GPU hosts and SONiC: ``commits/<run>/fate`` in fabricgen's state directory; NVUE: its revisions and history and
the fate in the login's home; NX-OS: its config-replace status and ``bootflash:fabricgen-<run>.fate``; EOS: its
config sessions and the record checkpoints ``fabricgen-<run>.<fate>``): pending, confirmed, reverted-by-timer,
reverted-at-boot, reverted, restore-failed, staged or applied (the commit's undo was written; it never applied, or
applied with no timer), absent (it never reached the device). Devices are only read: nothing is changed.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from fabricgen.deploy.journal import DeviceRecord, RunRecord, escape
from fabricgen.deploy.nornir_run import fresh_driver
from fabricgen.models.inventory import Inventory

# Journal states that claim an ending, and the device records that agree with each.
_AGREES = {
    "confirmed": ("confirmed", "applied"),
    "reverted": ("reverted", "reverted-by-timer", "reverted-at-boot", "absent", "staged"),
    "restored": ("reverted", "reverted-by-timer", "reverted-at-boot", "absent", "staged"),
    "failed": ("absent", "staged"),
    "unchanged": ("absent",),
}


@dataclass(frozen=True)
class Verified:
    """One device of a run: its journal state, what the device recorded (or why it could not be read), and
    whether the two agree."""

    device: str
    journal: str
    on_device: str
    agrees: bool

    def line(self) -> str:
        verdict = "agrees" if self.agrees else "DIFFERS from the journal"
        return f"{escape(self.device)}: on the device: {escape(self.on_device)} (journal: {self.journal}; {verdict})"


def verify_run(record: RunRecord, inventory: Inventory, workers: int = 8) -> dict[str, Verified]:
    """Each device the run may have changed (journaled `committing`), asked what became of its commit."""
    devices = {name: device for name, device in sorted(record.devices.items()) if device.commit_id}
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        fates = dict(zip(devices, pool.map(lambda name: _fate(inventory, devices[name]), devices), strict=True))
    return {name: Verified(name, devices[name].state, fate, known and _agrees(devices[name].state, fate))
            for name, (fate, known) in fates.items()}


def _fate(inventory: Inventory, device: DeviceRecord) -> tuple[str, bool]:
    """(the device's record of the commit, whether it could be read)."""
    if device.device not in inventory.devices:
        return "not in the inventory any more: cannot reach it", False
    try:
        driver = fresh_driver(inventory.devices[device.device])
    except Exception as exc:
        return f"cannot reach it: {exc}", False
    try:
        if not hasattr(driver, "commit_fate"):
            return "keeps no record of its commits (its platform's driver does not)", False
        return str(driver.commit_fate(device.commit_id)), True
    except Exception as exc:
        return f"cannot read its record: {exc}", False
    finally:
        driver.close()


def _agrees(state: str, fate: str) -> bool:
    """A journal that ended the device agrees when the device's record is that ending; a journal that stops
    before an ending (committing, committed, confirming, reverting, attention) claims nothing to disagree with."""
    expected = _AGREES.get(state)
    return expected is None or fate in expected
