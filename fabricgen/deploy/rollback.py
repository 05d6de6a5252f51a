"""`fabricgen rollback`: undo what one push run changed, device by device, and prove it by reading back.

Each device the run committed is first checked for drift (does it still hold what the run pushed? its driver's diff
against the candidate the run journaled); drifted devices are shown and skipped unless the user agrees or passed
--force. Then the device's own revert for that commit runs (staged on the device before the commit: a GPU host's
revert script, a switch's checkpoint), and the owned settings must read back exactly as the snapshot the run
journaled before committing. The
rollback is a run of its own, journaled.

Each device's check and each device's restore run under the overall per-device deadline of ``--step-deadline``
(deadline.py, as push's steps): a device that stalls past it is abandoned, its connections closed, and the
rollback goes on with the others. A check past it leaves the device `failed` (not rolled back: the check only
reads); a restore past it leaves it `attention` (it may be partly restored).
"""

from __future__ import annotations

import fnmatch
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fabricgen.deploy import deadline
from fabricgen.deploy.hostdriver import not_restored
from fabricgen.deploy.journal import DeviceRecord, Journal, RunRecord, new_run_id, next_seq, read_candidate
from fabricgen.deploy.nornir_run import fresh_driver
from fabricgen.deploy.outcome import DEFAULT_STEP_DEADLINE_S, EXIT_ATTENTION, EXIT_FAILED_REVERTED, EXIT_OK, Outcome
from fabricgen.deploy.waves import disruptive_gate
from fabricgen.models.inventory import Inventory

# What a device's own record says of a commit that left nothing to undo.
_NEVER_APPLIED = ("absent", "staged")
_ALREADY_REVERTED = {"reverted-by-timer": "reverted by its timer", "reverted-at-boot": "reverted at boot",
                     "reverted": "reverted"}


def rollback_run(record: RunRecord, root: Path, inventory: Inventory, patterns: list[str], force: bool, yes: bool,
                 workers: int, ask: Callable[[str], bool], allow_disruptive: bool = False,
                 tell: Callable[[str], None] = print,
                 step_deadline: int = DEFAULT_STEP_DEADLINE_S) -> tuple[int, dict[str, Outcome]]:
    targets = _targets(record, patterns)
    budget = _Budget(workers, step_deadline, record.run_id)
    outcomes: dict[str, Outcome] = {}
    seq = next_seq(root)  # the caller holds the journal's lock
    journal = Journal(root, new_run_id())
    journal.write("run-start", command=f"rollback {record.run_id}", seq=seq, plan={"devices": sorted(targets)})
    try:
        missing = sorted(name for name in targets if name not in inventory.devices)
        for name in missing:
            outcomes[name] = Outcome(name, "failed", message="not in the inventory any more: cannot reach it")
        live = {name: device for name, device in targets.items() if name not in missing}
        drift = budget.each(live, lambda name: _drift(root, record, inventory, live[name]), budget.check_expired)
        chosen = []
        for name, (found, error, fate, _) in sorted(drift.items()):
            if error:
                outcomes[name] = Outcome(name, "failed", message=error)
            elif fate in _NEVER_APPLIED:
                outcomes[name] = Outcome(name, "unchanged", message="the device shows this run's commit never "
                                                                    "applied: nothing to undo"
                                         + ("; what it had staged there was removed" if fate == "staged" else ""))
            elif fate in _ALREADY_REVERTED:
                outcomes[name] = Outcome(name, "restored", message=f"already {_ALREADY_REVERTED[fate]} (the "
                                                                   "device's own record)")
            elif found and fate != "restore-failed" and not force and (
                    yes or not ask(f"{name} changed since run {record.run_id}:\n{found}roll it back anyway?")):
                outcomes[name] = Outcome(name, "skipped", found, "drifted since the run; pass --force to roll back")
            else:
                chosen.append(name)
        chosen, refused = disruptive_gate({name: drift[name][3] for name in chosen}, allow_disruptive, yes,
                                          ask, tell)
        outcomes.update(refused)
        restored = budget.each({name: live[name] for name in chosen},
                               lambda name: _restore(root, record, inventory, live[name], journal),
                               budget.restore_expired)
        outcomes.update(restored)
        for outcome in outcomes.values():
            journal.write(outcome.state, outcome.device, message=outcome.message, diff=outcome.diff)
        code = _exit_code(outcomes)
        journal.write("run-end", exit_code=code)
        return code, outcomes
    finally:
        journal.close()


def _targets(record: RunRecord, patterns: list[str]) -> dict[str, DeviceRecord]:
    """Every device the run may have changed: any device it journaled as `committing` (the line is written
    before the device is asked), whatever the journal says came after; each is then asked what it holds."""
    return {name: device for name, device in record.devices.items()
            if device.commit_id
            and (not patterns or any(fnmatch.fnmatchcase(name, pattern) for pattern in patterns))}


class _Budget:
    """The devices' steps of one rollback: ``workers`` at a time, each under the per-device deadline."""

    def __init__(self, workers: int, seconds: int, run_id: str) -> None:
        self.workers, self.seconds, self.run_id = workers, seconds, run_id

    def each(self, items: dict[str, Any], work: Callable[[str], Any], expired: Callable[[str], Any]) -> dict[str, Any]:
        return deadline.each_under_deadline(list(items), work, self.seconds, expired, self.workers) if items else {}

    def check_expired(self, name: str) -> tuple[str, str, str | None, list[str]]:
        return "", (f"not rolled back: checking it passed its deadline of {self.seconds} s (--step-deadline) and was "
                    "abandoned, its connections closed (the check only reads: nothing was undone)"), None, []

    def restore_expired(self, name: str) -> Outcome:
        return Outcome(name, "attention", message=(
            f"its restore passed its deadline of {self.seconds} s (--step-deadline) and was abandoned, its "
            f"connections closed: it may be partly restored; `fabricgen runs {self.run_id} --verify` reads what the "
            f"device recorded, `fabricgen rollback {self.run_id}` again finishes it"), seconds=float(self.seconds))


def _drift(root: Path, record: RunRecord, inventory: Inventory,
           device: DeviceRecord) -> tuple[str, str, str | None, list[str]]:
    """(what differs from what the run pushed, error, what the device recorded of the run's commit: None where
    its driver keeps no such record, the ports its revert bounces)."""
    name = device.device
    try:
        driver = fresh_driver(inventory.devices[name])
    except Exception as exc:
        return "", f"cannot reach it: {exc}", None, []
    try:
        fate = driver.commit_fate(device.commit_id) if hasattr(driver, "commit_fate") else None
        if fate == "staged" and hasattr(driver, "discard_staged"):  # e.g. RDMA-CM groups opened to snapshot them
            driver.discard_staged(device.commit_id)
        if fate in _NEVER_APPLIED or fate in _ALREADY_REVERTED:
            return "", "", fate, []
        bounced = driver.rollback_disruption(device.commit_id) if hasattr(driver, "rollback_disruption") else []
        driver.load_replace_candidate(config=read_candidate(root, record.run_id, name))
        try:
            return driver.compare_config(), "", fate, bounced
        finally:
            driver.discard_config()
    except Exception as exc:
        return "", f"cannot read its state: {exc}", None, []
    finally:
        driver.close()


def _restore(root: Path, record: RunRecord, inventory: Inventory, device: DeviceRecord, journal: Journal) -> Outcome:
    start = time.monotonic()
    outcome = _restore_device(root, record, inventory, device, journal)
    outcome.seconds = time.monotonic() - start
    return outcome


def _restore_device(root: Path, record: RunRecord, inventory: Inventory, device: DeviceRecord,
                    journal: Journal) -> Outcome:
    snapshot = next((step.get("snapshot") for step in device.steps if step.get("event") == "committed"), None)
    candidate = read_candidate(root, record.run_id, device.device)
    try:
        driver = fresh_driver(inventory.devices[device.device])
    except Exception as exc:
        return Outcome(device.device, "failed", message=f"cannot reach it: {exc}")
    try:
        if snapshot is None and hasattr(driver, "commit_snapshot"):  # killed or failed before `committed`
            snapshot = driver.commit_snapshot(device.commit_id)
        if deadline.expired(device.device):  # abandoned already: its journal line is the expiry's, not this
            return Outcome(device.device, "attention", message="abandoned at its deadline before it was asked")
        journal.write("reverting", device.device, commit_id=device.commit_id)  # before the device is asked
        try:
            driver.revert(device.commit_id)
        except Exception as exc:
            return _restore_failed(device.device, driver, candidate, snapshot, f"restoring failed part-way: {exc}")
        after = driver.intent_check(candidate)
    except Exception as exc:
        return Outcome(device.device, "attention", message=f"restoring failed part-way: {exc}")
    finally:
        driver.close()
    if snapshot is not None and after != snapshot:
        return Outcome(device.device, "attention", message=_listed(not_restored(snapshot, after),
                                                                   "restored, but these do not read back as the "
                                                                   "snapshot taken before the push"))
    return Outcome(device.device, "restored", message="reads back as before the run")


def _restore_failed(name: str, driver: Any, candidate: str, snapshot: str | None, detail: str) -> Outcome:
    """A revert that failed: the settings that did not come back first, one per line, read on the device."""
    try:
        after = driver.intent_check(candidate)
    except Exception as exc:
        return Outcome(name, "attention", message=f"{detail}; reading it back failed too: {exc}")
    left = not_restored(snapshot, after) if snapshot is not None else []
    return Outcome(name, "attention", message=_listed(left, detail))


def _listed(settings: list[str], detail: str) -> str:
    return "\n".join([f"RESTORE FAILED: {len(settings)} setting(s) did not come back:", *settings, detail])


def _exit_code(outcomes: dict[str, Outcome]) -> int:
    states = {outcome.state for outcome in outcomes.values()}
    if "attention" in states:
        return EXIT_ATTENTION
    return EXIT_FAILED_REVERTED if states & {"failed", "skipped"} else EXIT_OK
