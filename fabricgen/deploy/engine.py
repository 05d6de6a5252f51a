"""diff, push and rollback over the selected devices: the deploy stage after write.

Push, per wave (plan.py), each device on its own: diff; where something differs, commit with a revert timer on the
device; health checks over a *fresh* connection (it still takes logins on its management address, its owned settings
read back as the intent — a GPU host's script --check, a switch's owned sections — and its data links that were up
before are still up); confirm. Every platform's driver offers the same calls (NAPALM's plus intent_check,
pending_commit_id and revert: see fabricgen/deploy/hostdriver.py). Each device's timer so only has to outlast its
own steps. When the wave's failures exceed --max-failures, devices of the wave not yet confirmed are reverted and
those not yet started are left untouched; devices already confirmed stay, later waves are not started. A revert is
verified by reading back: intent_check must again print what it printed before the commit. A device whose state
cannot be read back is reported as needing attention (exit 3).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from napalm.base.exceptions import CommitError
from nornir.core.task import Task

from fabricgen.deploy import deadline
from fabricgen.deploy.hostdriver import RestoreFailed
from fabricgen.deploy.nornir_run import close_all, connection, fresh_driver, nornir_for, run_each
from fabricgen.deploy.outcome import (
    DIFF_CHANGES,
    DIFF_ERRORS,
    EXIT_ATTENTION,
    EXIT_FAILED_REVERTED,
    EXIT_OK,
    Deployment,
    Outcome,
    PushOptions,
)
from fabricgen.deploy.soak import CounterSoak

# --- diff -------------------------------------------------------------------------------------------------

def diff(deployment: Deployment, workers: int) -> dict[str, Outcome]:
    """The device's own diff for every selected device; nothing is left on any device."""
    nornir = nornir_for(list(deployment.devices.values()), workers)
    try:
        results = run_each(nornir, sorted(deployment.devices), _timed(lambda task: _diff_step(task, deployment)))
    finally:
        close_all(nornir)
    for name, result in results.items():
        if "error" in result:
            deployment.outcomes[name] = Outcome(name, "failed", message=result["error"])
        else:
            state = "changes" if result["diff"] else "unchanged"
            deployment.outcomes[name] = Outcome(name, state, result["diff"], seconds=result["seconds"],
                                                bounced=result["bounced"])
    return deployment.outcomes


def diff_exit_code(outcomes: dict[str, Outcome]) -> int:
    if any(outcome.state == "failed" for outcome in outcomes.values()):
        return DIFF_ERRORS
    return DIFF_CHANGES if any(outcome.state == "changes" for outcome in outcomes.values()) else EXIT_OK


def _diff_step(task: Task, deployment: Deployment) -> dict[str, Any]:
    driver = connection(task)
    driver.load_replace_candidate(config=deployment.candidates[task.host.name])
    try:
        changes = driver.compare_config()
        return {"diff": changes, "bounced": list(getattr(driver, "disruption", None) or []) if changes else []}
    finally:
        driver.discard_config()


def _timed(step: Callable[[Task], dict[str, Any]]) -> Callable[[Task], dict[str, Any]]:
    def timed(task: Task) -> dict[str, Any]:
        start = time.monotonic()
        result = step(task)
        result["seconds"] = time.monotonic() - start
        return result
    return timed


# --- push -------------------------------------------------------------------------------------------------

def push(deployment: Deployment, waves: list[list[str]], options: PushOptions, run_id: str) -> int:
    nornir = nornir_for(list(deployment.devices.values()), options.workers)
    failures = 0
    try:
        for number, wave in enumerate(waves, 1):
            deployment.progress.wave(number, len(waves), wave)
            failures += _push_wave(deployment, nornir, wave, options, run_id, options.max_failures - failures)
            if failures > options.max_failures:
                _untouched(deployment, [name for later in waves[number:] for name in later])
                break
    finally:
        close_all(nornir)
    return push_exit_code(deployment.outcomes)


def push_exit_code(outcomes: dict[str, Outcome]) -> int:
    states = {outcome.state for outcome in outcomes.values()}
    if "attention" in states:
        return EXIT_ATTENTION
    if states & {"failed", "reverted", "untouched"}:
        return EXIT_FAILED_REVERTED
    return EXIT_OK


def _untouched(deployment: Deployment, names: list[str]) -> None:
    for name in names:
        deployment.record(Outcome(name, "untouched", message="not reached: the push stopped in an earlier wave"))


class _Gate:
    """A wave's failure count against its budget, shared by the devices' worker threads."""

    def __init__(self, budget: int) -> None:
        self.lock = threading.Lock()
        self.budget = budget
        self.failures = 0
        self.halted = False

    def fail(self) -> None:
        with self.lock:
            self.failures += 1
            self.halted = self.halted or self.failures > self.budget


def _push_wave(deployment: Deployment, nornir: Any, wave: list[str], options: PushOptions, run_id: str,
               budget: int) -> int:
    """Each device of the wave runs its own commit → health check → confirm, so its revert timer only has to
    outlast its own steps, never the whole wave's. Once the wave's failures exceed the budget, devices not yet
    confirmed are reverted and devices not yet started are left untouched; those confirmed already stay."""
    if deployment.journal is not None:
        deployment.journal.write("wave-start", devices=wave)
    gate = _Gate(budget)
    results = run_each(nornir, wave, lambda task: _push_device(task, deployment, options, run_id, gate))
    for name, result in results.items():
        if "error" in result:  # raised outside the steps' own handling: nothing is known about the device
            gate.fail()
            deployment.record(_commit_failure(deployment, name, RuntimeError(result["error"]), run_id))
    return gate.failures


def _push_device(task: Task, deployment: Deployment, options: PushOptions, run_id: str, gate: _Gate) -> dict[str, Any]:
    """The device's step under its overall deadline (deadline.py): past it, the device is `attention`, its
    connections closed, and the wave goes on without it."""
    def expire(name: str) -> None:
        if deployment.settle(Outcome(name, "attention", message=deadline.expired_message(options.step_deadline))):
            gate.fail()

    with deadline.watch(task.host.name, options.step_deadline, expire):
        return _push_device_step(task, deployment, options, run_id, gate)


def _push_device_step(task: Task, deployment: Deployment, options: PushOptions, run_id: str,
                      gate: _Gate) -> dict[str, Any]:
    name = task.host.name
    if gate.halted:
        deployment.record(Outcome(name, "untouched", message="not started: the wave was halted by failures"))
        return {}
    start = time.monotonic()
    try:
        committed = _commit_step(task, deployment, options, run_id)
    except Exception as exc:
        gate.fail()
        deployment.record(_commit_failure(deployment, name, exc, run_id))
        return {}
    if committed.get("confirmed_before"):
        deployment.record(Outcome(name, "confirmed", message="confirmed by the interrupted run (the device's own "
                                                             "record)", seconds=time.monotonic() - start))
        return {}
    if not committed["diff"]:
        deployment.record(Outcome(name, "unchanged", seconds=time.monotonic() - start))
        return {}
    soak = CounterSoak(deployment, name, options)  # counters after the commit, --soak S, counters again
    soak.wait(connection(task))
    check = _health_check(deployment, name, committed, options)
    check.problems += soak.judge(check.driver)
    if check.problems:
        gate.fail()
        outcome = _revert(deployment, name, committed, "; ".join(check.problems), check.driver)
    elif gate.halted:
        outcome = _revert(deployment, name, committed, "the wave was halted by failures on other devices",
                          check.driver)
    else:
        outcome = _confirm(deployment, name, committed, check.driver, run_id)
    outcome.seconds = time.monotonic() - start
    outcome.message = outcome.message or soak.note
    deployment.record(outcome)
    return {}


def _commit_step(task: Task, deployment: Deployment, options: PushOptions, run_id: str) -> dict[str, Any]:
    driver = connection(task)
    candidate = deployment.candidates[task.host.name]
    if options.resume_run is not None:
        fate = driver.commit_fate(options.resume_run) if hasattr(driver, "commit_fate") else None
        if fate == "confirmed":  # confirmed before the controller died: the device's record is the truth
            return {"diff": "", "confirmed_before": True}
        if fate == "restore-failed":  # a new commit would snapshot the half-restored state as "before"
            raise CommitError(f"{task.host.name}: nothing was changed: the interrupted run's restore failed on it; "
                              f"`fabricgen rollback {options.resume_run}` first")
        # The interrupted run's own commit, never confirmed: undo it, then start clean.
        if fate == "pending":
            _intent(deployment, "reverting", task.host.name, commit_id=options.resume_run)
            driver.revert(options.resume_run)
        elif fate is None and driver.pending_commit_id() == options.resume_run:
            _intent(deployment, "reverting", task.host.name, commit_id=options.resume_run)
            driver.rollback()
    waiting = driver.pending_commit_id() if hasattr(driver, "pending_commit_id") else None
    if waiting and waiting != run_id:  # another run's unconfirmed change: neither "unchanged" nor ours to touch
        raise CommitError(f"{task.host.name}: nothing was changed: commit {waiting} of another run is waiting for "
                          "its confirm; let that run finish (or roll it back) first")
    driver.load_replace_candidate(config=candidate)
    changes = driver.compare_config()
    if not changes:
        driver.discard_config()
        return {"diff": ""}
    _refuse_disruption(task.host.name, driver, options)  # (gcu, issue 24)
    links_up = _links_up(driver, deployment.data_links.get(task.host.name, []))
    _intent(deployment, "committing", task.host.name, commit_id=run_id)
    driver.commit_config(message=run_id, revert_in=options.confirm_timeout)
    deployment.progress.device(task.host.name, "committed")
    if deployment.journal is not None:  # at once: a run killed from here on must know this device changed
        deployment.journal.write("committed", task.host.name, diff=changes, commit_id=run_id,
                                 snapshot=driver.last_snapshot, links_up=links_up)
    return {"diff": changes, "snapshot": driver.last_snapshot, "links_up": links_up}


def _intent(deployment: Deployment, event: str, name: str, **data: Any) -> None:
    """Journal (fsync'd) what is about to be asked of a device, before it is asked: a run killed while the
    device acts still names it, and rollback and resume ask the device what became of it."""
    if deployment.journal is not None:
        deployment.journal.write(event, name, **data)


def _refuse_disruption(name: str, driver: Any, options: PushOptions) -> None:
    """(gcu, issue 24) A driver that says its change bounces ports (SONiC: GCU's sorter takes them admin-down and up
    again) commits only under --allow-disruptive."""
    bounced = getattr(driver, "disruption", None) or []
    if bounced and not options.allow_disruptive:
        driver.discard_config()
        raise RuntimeError(f"{name}: nothing was changed: this change takes {', '.join(bounced)} admin-down and up "
                           "again (SONiC GCU); drain them, then push with --allow-disruptive")


def _links_up(driver: Any, links: list[str]) -> list[str]:
    interfaces = driver.get_interfaces()
    return sorted(name for name in links if interfaces.get(name, {}).get("is_up"))


def _commit_failure(deployment: Deployment, name: str, exc: BaseException, run_id: str) -> Outcome:
    """A commit that raised: find out, over a fresh connection, what the device itself recorded of it."""
    error = f"{type(exc).__name__}: {exc}"
    if isinstance(exc, RestoreFailed):
        return Outcome(name, "attention", message=str(exc))
    if "nothing was changed" in error or "previous state was restored" in error:
        return Outcome(name, "failed", message=error)
    try:
        driver = fresh_driver(deployment.devices[name])
    except Exception as reach:
        return Outcome(name, "attention", message=f"{error}; the device cannot be reached to check ({reach}); if "
                                                  "a commit started, its on-device timer reverts it")
    try:
        return _settle(deployment, name, driver, error, run_id)
    except Exception as check:
        return Outcome(name, "attention", message=f"{error}; checking it failed too: {check}")
    finally:
        driver.close()


def _settle(deployment: Deployment, name: str, driver: Any, error: str, run_id: str) -> Outcome:
    """What a half-done commit left, by the device's own record where its driver keeps one; a commit still
    pending is reverted now."""
    fate = driver.commit_fate(run_id) if hasattr(driver, "commit_fate") else None
    if fate == "staged" and hasattr(driver, "discard_staged"):
        driver.discard_staged(run_id)
    if fate in ("absent", "staged"):
        return Outcome(name, "failed", message=f"{error}; the device shows it never applied (nothing changed)")
    if fate in ("reverted-by-timer", "reverted", "reverted-at-boot"):
        return Outcome(name, "reverted", message=f"{error}; {fate.replace('-', ' ')} (the device's own record)")
    if fate == "restore-failed":
        return Outcome(name, "attention", message=f"{error}; the device records its restore as failed")
    if fate is None and not driver.has_pending_commit():
        return Outcome(name, "failed", message=error)
    _intent(deployment, "reverting", name, commit_id=run_id)
    if fate is None:
        driver.rollback()
    else:
        driver.revert(run_id)
    return Outcome(name, "reverted", message=f"{error}; the half-done commit was reverted")


@dataclass
class _Checked:
    """A committed device after its health check: what is wrong, and the fresh login that found it (kept open
    for the confirm or the revert that follows, closed by them)."""

    problems: list[str]
    driver: Any = None


def _health_check(deployment: Deployment, name: str, committed: dict[str, Any], options: PushOptions) -> _Checked:
    candidate = deployment.candidates[name]
    try:
        driver = fresh_driver(deployment.devices[name], options.health_timeout)
    except Exception as exc:  # unreachable is the finding
        return _Checked([f"no new login over the management address after the commit: {exc}"])
    try:
        problems = []
        still_differs = driver.intent_check(candidate)
        if still_differs:
            problems.append("settings do not read back as intended: " + still_differs.strip().replace("\n", "; "))
        interfaces = driver.get_interfaces()
        down = [link for link in committed["links_up"] if not interfaces.get(link, {}).get("is_up")]
        if down:
            problems.append(f"data link(s) {', '.join(down)} went down")
        return _Checked(problems, driver)
    except Exception as exc:
        driver.close()
        return _Checked([f"health check failed: {exc}"])


def _reach(deployment: Deployment, name: str, driver: Any) -> Any:
    """The health check's login when it is still alive, else a new one."""
    if driver is not None and driver.is_alive().get("is_alive"):
        return driver
    if driver is not None:
        driver.close()
    return fresh_driver(deployment.devices[name])


def _confirm(deployment: Deployment, name: str, result: dict[str, Any], driver: Any, run_id: str) -> Outcome:
    try:
        driver = _reach(deployment, name, driver)
        try:
            _intent(deployment, "confirming", name, commit_id=run_id)
            if hasattr(driver, "confirm_own"):  # never another run's commit
                driver.confirm_own(run_id)
            else:
                driver.confirm_commit()
        finally:
            driver.close()
    except Exception as exc:
        return _confirm_failed(deployment, name, result, f"confirm failed ({exc})", run_id)
    return Outcome(name, "confirmed", result["diff"])


def _confirm_failed(deployment: Deployment, name: str, result: dict[str, Any], error: str, run_id: str) -> Outcome:
    """A confirm that failed or whose answer was lost: what the device itself recorded decides the outcome."""
    unknown = Outcome(name, "attention", result["diff"], f"{error}: its on-device timer reverts it unless it was "
                                                         "confirmed")
    try:
        driver = fresh_driver(deployment.devices[name])
    except Exception:
        return unknown
    try:
        fate = driver.commit_fate(run_id) if hasattr(driver, "commit_fate") else None
    except Exception:
        return unknown
    finally:
        driver.close()
    if fate == "confirmed":
        return Outcome(name, "confirmed", result["diff"], f"{error}, but the device records it confirmed")
    if fate in ("reverted-by-timer", "reverted-at-boot", "reverted"):
        return Outcome(name, "reverted", result["diff"], f"{error}; {fate.replace('-', ' ')} (the device's own "
                                                         "record)")
    if fate == "restore-failed":
        return Outcome(name, "attention", result["diff"], f"{error}; its timer's restore failed (the device's "
                                                          "own record)")
    return unknown


def _revert(deployment: Deployment, name: str, result: dict[str, Any], reason: str, driver: Any) -> Outcome:
    candidate = deployment.candidates[name]
    try:
        driver = _reach(deployment, name, driver)
    except Exception as exc:
        return Outcome(name, "attention", result["diff"],
                       f"{reason}; cannot reach it to revert ({exc}): its on-device timer reverts it")
    try:
        _intent(deployment, "reverting", name)
        driver.rollback()
        after = driver.intent_check(candidate)
    except Exception as exc:
        return Outcome(name, "attention", result["diff"], f"{reason}; reverting failed: {exc}")
    finally:
        driver.close()
    if after != result["snapshot"]:
        return Outcome(name, "attention", result["diff"],
                       f"{reason}; reverted, but the settings do not read back as before the push")
    return Outcome(name, "reverted", result["diff"], f"{reason}; reverted and read back as before")
