"""diff, push and rollback over the selected devices: the deploy stage after write.

Push, per wave (plan.py): every device of the wave is diffed and, where something differs, committed with a
revert timer on the device (phase 1, in parallel); then each committed device is checked over a *fresh*
connection (phase 2): it still takes logins on its management address, its script's --check now passes, and
its data links that were up before are still up. Then (phase 3): if the wave's failures exceed
--max-failures, every unconfirmed device of the wave is reverted and the push stops (devices confirmed in
earlier waves stay, later waves are untouched); otherwise healthy devices are confirmed and failed ones
reverted. A revert is verified by reading back: the script's --check must again print the snapshot taken
before the commit. A device whose state cannot be read back is reported as needing attention (exit 3).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from nornir.core.task import Task

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
            deployment.outcomes[name] = Outcome(name, state, result["diff"], seconds=result["seconds"])
    return deployment.outcomes


def diff_exit_code(outcomes: dict[str, Outcome]) -> int:
    if any(outcome.state == "failed" for outcome in outcomes.values()):
        return DIFF_ERRORS
    return DIFF_CHANGES if any(outcome.state == "changes" for outcome in outcomes.values()) else EXIT_OK


def _diff_step(task: Task, deployment: Deployment) -> dict[str, Any]:
    driver = connection(task)
    driver.load_replace_candidate(config=deployment.bundles[task.host.name].to_json())
    try:
        return {"diff": driver.compare_config()}
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

def push(deployment: Deployment, waves: list[list[str]], options: PushOptions, run_id: str,
         progress: Callable[[str], None] = lambda _: None) -> int:
    nornir = nornir_for(list(deployment.devices.values()), options.workers)
    failures = 0
    try:
        for number, wave in enumerate(waves, 1):
            progress(f"wave {number}/{len(waves)}: {len(wave)} device(s)")
            failures += _push_wave(deployment, nornir, wave, options, run_id, options.max_failures - failures)
            if failures > options.max_failures:
                _untouched(deployment, [name for later in waves[number:] for name in later])
                progress(f"stopped: {failures} failure(s), --max-failures {options.max_failures}")
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


def _push_wave(deployment: Deployment, nornir: Any, wave: list[str], options: PushOptions, run_id: str,
               budget: int) -> int:
    if deployment.journal is not None:
        deployment.journal.write("wave-start", devices=wave)
    committed = run_each(nornir, wave, _timed(lambda task: _commit_step(task, deployment, options, run_id)))
    failures = 0
    pending: dict[str, dict[str, Any]] = {}
    for name in wave:
        result = committed[name]
        if "error" in result:
            failures += 1
            deployment.record(_commit_failure(deployment, name, result["error"]))
        elif not result["diff"]:
            deployment.record(Outcome(name, "unchanged", seconds=result["seconds"]))
        else:
            pending[name] = result
            if deployment.journal is not None:
                deployment.journal.write("committed", name, diff=result["diff"], commit_id=run_id,
                                         snapshot=result["snapshot"], links_up=result["links_up"])
    if pending and options.soak:
        time.sleep(options.soak)
    health = _health(deployment, pending, options)
    failures += sum(1 for problems in health.values() if problems)
    halt = failures > budget
    for name, result in pending.items():
        problems = health[name]
        if problems or halt:
            reason = "; ".join(problems) if problems else "the wave was halted by failures on other devices"
            deployment.record(_revert(deployment, name, result, reason, nornir))
        else:
            deployment.record(_confirm(deployment, name, result, nornir))
    return failures


def _commit_step(task: Task, deployment: Deployment, options: PushOptions, run_id: str) -> dict[str, Any]:
    driver = connection(task)
    bundle = deployment.bundles[task.host.name]
    if options.resume_run is not None and driver.pending_commit_id() == options.resume_run:
        driver.rollback()  # the interrupted run's own commit, never confirmed: undo it, then start clean
    driver.load_replace_candidate(config=bundle.to_json())
    changes = driver.compare_config()
    if not changes:
        driver.discard_config()
        return {"diff": ""}
    links_up = _links_up(driver, deployment.data_links.get(task.host.name, []))
    driver.commit_config(message=run_id, revert_in=options.confirm_timeout)
    return {"diff": changes, "snapshot": driver.last_snapshot, "links_up": links_up}


def _links_up(driver: Any, links: list[str]) -> list[str]:
    interfaces = driver.get_interfaces()
    return sorted(name for name in links if interfaces.get(name, {}).get("is_up"))


def _commit_failure(deployment: Deployment, name: str, error: str) -> Outcome:
    """A commit that raised: find out, over a fresh connection, whether anything is left changed."""
    if "nothing was changed" in error or "previous state was restored" in error:
        return Outcome(name, "failed", message=error)
    try:
        driver = fresh_driver(deployment.devices[name])
    except Exception as exc:
        return Outcome(name, "attention", message=f"{error}; the device cannot be reached to check ({exc}); if "
                                                  "a commit started, its on-device timer reverts it")
    try:
        if driver.has_pending_commit():
            driver.rollback()
            return Outcome(name, "reverted", message=f"{error}; the half-done commit was reverted")
        return Outcome(name, "failed", message=error)
    except Exception as exc:
        return Outcome(name, "attention", message=f"{error}; checking it failed too: {exc}")
    finally:
        driver.close()


def _health(deployment: Deployment, pending: dict[str, dict[str, Any]],
            options: PushOptions) -> dict[str, list[str]]:
    if not pending:
        return {}
    nornir = nornir_for([deployment.devices[name] for name in pending], options.workers)
    checks = run_each(nornir, sorted(pending),
                      lambda task: {"problems": _health_problems(deployment, task.host.name, pending[task.host.name],
                                                                 options)})
    return {name: checks[name].get("problems", [checks[name].get("error", "health check failed")])
            for name in pending}


def _health_problems(deployment: Deployment, name: str, committed: dict[str, Any],
                     options: PushOptions) -> list[str]:
    bundle = deployment.bundles[name]
    try:
        driver = fresh_driver(deployment.devices[name], options.health_timeout)
    except Exception as exc:
        return [f"no new login over the management address after the commit: {exc}"]
    try:
        problems = []
        still_differs = driver.nic_check(bundle)
        if still_differs:
            problems.append("settings do not read back as intended: " + still_differs.strip().replace("\n", "; "))
        interfaces = driver.get_interfaces()
        down = [link for link in committed["links_up"] if not interfaces.get(link, {}).get("is_up")]
        if down:
            problems.append(f"data link(s) {', '.join(down)} went down")
        return problems
    except Exception as exc:
        return [f"health check failed: {exc}"]
    finally:
        driver.close()


def _confirm(deployment: Deployment, name: str, result: dict[str, Any], nornir: Any) -> Outcome:
    try:
        driver = fresh_driver(deployment.devices[name])
        try:
            driver.confirm_commit()
        finally:
            driver.close()
    except Exception as exc:
        return Outcome(name, "attention", result["diff"],
                       f"confirm failed ({exc}): its on-device timer reverts it unless it was confirmed")
    return Outcome(name, "confirmed", result["diff"], seconds=result["seconds"])


def _revert(deployment: Deployment, name: str, result: dict[str, Any], reason: str, nornir: Any) -> Outcome:
    bundle = deployment.bundles[name]
    try:
        driver = fresh_driver(deployment.devices[name])
    except Exception as exc:
        return Outcome(name, "attention", result["diff"],
                       f"{reason}; cannot reach it to revert ({exc}): its on-device timer reverts it")
    try:
        driver.rollback()
        after = driver.nic_check(bundle)
    except Exception as exc:
        return Outcome(name, "attention", result["diff"], f"{reason}; reverting failed: {exc}")
    finally:
        driver.close()
    if after != result["snapshot"]:
        return Outcome(name, "attention", result["diff"],
                       f"{reason}; reverted, but the settings do not read back as before the push")
    return Outcome(name, "reverted", result["diff"], f"{reason}; reverted and read back as before")
