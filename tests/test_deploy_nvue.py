"""The Cumulus Linux (NVUE) push driver ``fabricgen_nvue`` against the lab's NVUE target (tests/targets/nvue.py:
NVUE's documented revisions, diff, apply --confirm and history on a configuration kept in a lab host; no Cumulus
image runs here, hence the ``nvue_target`` in the names). Everything goes through NAPALM
(``napalm.get_network_driver("fabricgen_nvue")``) over real SSH; what the switch holds is read from the target's
state directory, from outside the host, never through the driver.

The candidate is leaf3's nvue.yaml as ``fabricgen render intent/mixed.yaml -i inventory/mixed`` writes it. The
switch starts from tests/targets/data/nvue/startup.yaml: an operator's configuration (BGP, the cumulus account,
an ACL on eth0, NTP, DNS, a storage port and its PFC profile) with an earlier render's leftovers in the owned
scope (old port settings, a PFC profile ``pfc-sp3-100m``, an old management gateway).
"""

from __future__ import annotations

import copy
import fnmatch
import importlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import napalm
import pytest
import yaml
from napalm.base.exceptions import CommitError

from fabricgen.platforms.nvue.driver import owned_changes, owned_paths

from conftest import ROOT
from lab import Lab
from test_lab import require_lab

# The target module as the lab imports it (from the checkout's root), for reading its state from outside.
target = importlib.import_module("targets.nvue")
CONFIRM_S = 10
REVERT_WAIT_S = CONFIRM_S + 30  # the target's timer, on a loaded 2-core machine
STARTUP = target._set_body(yaml.safe_load(target.STARTUP_FILE.read_text()))
# What the operator configured and fabricgen must never touch (paths into the set block).
NEIGHBOURS = [("router",), ("system",), ("acl",), ("vrf", "default"), ("interface", "lo"), ("interface", "swp5"),
              ("interface", "eth0", "acl"), ("qos", "pfc", "storage-pfc"),
              ("qos", "traffic-pool", "default-lossless", "switch-priority")]


@pytest.fixture(scope="module")
def candidate(mixed_rendered: Path) -> str:
    return (mixed_rendered / "leaf3" / "nvue.yaml").read_text()


@pytest.fixture(scope="module")
def lab() -> Iterator[Lab]:
    require_lab()
    with Lab.up(1, prefix=f"nv{os.getpid()}", kinds=["nvue"]) as built:
        yield built


@pytest.fixture
def switch(lab: Lab) -> str:
    """The lab's NVUE target, rebuilt as new: its starting configuration applied and saved, nothing pending."""
    host = next(iter(lab.hosts))
    lab.reset(host)
    return host


def driver_for(lab: Lab, host: str) -> Any:
    driver_class = napalm.get_network_driver("fabricgen_nvue")
    driver = driver_class(lab.address(host), "root", None,
                          optional_args={"key_file": str(lab.key_file), "known_hosts": str(lab.known_hosts)})
    driver.open()
    return driver


def state(lab: Lab, host: str) -> dict[str, Any]:
    found: dict[str, Any] = target.read_state(lab.state_dir(host))
    return found


def applied(lab: Lab, host: str) -> dict[str, Any]:
    config: dict[str, Any] = target.applied_config(lab.state_dir(host))
    return config


def node(tree: dict[str, Any], path: tuple[str, ...]) -> Any:
    for key in path:
        tree = tree[key]
    return tree


def outside_owned(config: dict[str, Any], candidate: str) -> dict[str, Any]:
    """``config`` without the owned scope (the capability's owned sections, for the candidate's ports)."""
    rest = copy.deepcopy(config)
    for pattern in owned_paths(target._set_body(yaml.safe_load(candidate))):
        drop(rest, pattern)
    return rest


def drop(tree: Any, pattern: tuple[str, ...]) -> None:
    """Delete what ``pattern`` names, and the containers that held nothing else (presence-only ``{}`` stay)."""
    if not isinstance(tree, dict):
        return
    for key in [key for key in tree if fnmatch.fnmatchcase(key, pattern[0])]:
        if len(pattern) > 1 and isinstance(tree[key], dict) and tree[key]:
            drop(tree[key], pattern[1:])
            if not tree[key]:
                del tree[key]
        elif len(pattern) == 1:
            del tree[key]


def nothing_pending(lab: Lab, host: str) -> None:
    """No pending or extra revision, no attachment, no confirm, no file of the driver's left in /tmp."""
    now = state(lab, host)
    assert now["attached"] == {} and now["confirm"] is None
    assert not [rev for rev, item in now["revisions"].items() if item["state"] in ("pending", "invalid")]
    assert lab.run(host, "ls -d /tmp/fabricgen-nvue.* 2>/dev/null").stdout == ""


# --- without the lab: the owned change itself -------------------------------------------------------------

def test_the_owned_change_touches_only_owned_paths_of_the_starting_config(candidate: str) -> None:
    unsets, sets = owned_changes(STARTUP, target._set_body(yaml.safe_load(candidate)))
    # The earlier render's leftovers go: its PFC profile and its gateway; nothing else is removed.
    assert unsets == {"qos": {"pfc": {"pfc-sp3-100m": None}},
                      "vrf": {"mgmt": {"router": {"static": {"0.0.0.0/0": {"via": {"192.0.2.254": None}}}}}}}
    assert sets["interface"]["swp1"]["link"] == {"fec": "rs", "mtu": 9100, "speed": "400G"}
    assert sets["vrf"]["mgmt"]["router"]["static"]["0.0.0.0/0"]["via"] == {"192.0.2.1": {}}
    assert "traffic-pool" not in sets["qos"]  # 50/50 already
    for path in NEIGHBOURS:
        with pytest.raises(KeyError):
            node(sets, path)


# --- against the lab's NVUE target ------------------------------------------------------------------------

def test_diff_on_the_nvue_target_is_nvues_own_and_leaves_nothing_pending(lab: Lab, switch: str,
                                                                         candidate: str) -> None:
    before = state(lab, switch)
    driver = driver_for(lab, switch)
    try:
        driver.load_replace_candidate(config=candidate)
        shown = driver.compare_config()
    finally:
        driver.close()
    blocks = yaml.safe_load(shown)
    assert [next(iter(block)) for block in blocks] == ["unset", "set"]
    unsets, sets = owned_changes(STARTUP, target._set_body(yaml.safe_load(candidate)))
    assert blocks[0]["unset"] == unsets and blocks[1]["set"] == sets
    calls = [json.loads(line)["argv"] for line in (lab.state_dir(switch).parent / "tool-calls.jsonl").read_text()
             .splitlines()]
    assert ["config", "diff"] in calls and not any(call[:2] == ["config", "apply"] for call in calls)
    after = state(lab, switch)
    assert after["applied"] == before["applied"] and after["history"] == before["history"]
    assert sorted(after["revisions"]) == ["1"]
    nothing_pending(lab, switch)


def test_commit_and_confirm_on_the_nvue_target_change_only_the_owned_scope(lab: Lab, switch: str,
                                                                          candidate: str) -> None:
    driver = driver_for(lab, switch)
    try:
        driver.load_replace_candidate(config=candidate)
        driver.commit_config(message="run-1", revert_in=120)
        assert driver.has_pending_commit() and driver.pending_commit_id() == "run-1"
        assert state(lab, switch)["confirm"] is not None
        driver.confirm_commit()
        assert not driver.has_pending_commit()
        assert driver.intent_check(candidate) == ""
        driver.load_replace_candidate(config=candidate)
        assert driver.compare_config() == ""  # a second push changes nothing
        links = driver.get_interfaces()
    finally:
        driver.close()
    now = applied(lab, switch)
    assert outside_owned(now, candidate) == outside_owned(STARTUP, candidate)
    for path in NEIGHBOURS:
        assert node(now, path) == node(STARTUP, path), path
    assert node(now, ("interface", "swp1", "link", "mtu")) == 9100
    assert "pfc-sp3-100m" not in now["qos"]["pfc"]
    # Saved: auto-save is off on this switch, so only the driver's nv config save put it in startup.yaml.
    saved = target._set_body(yaml.safe_load((lab.state_dir(switch) / "startup.yaml").read_text()))
    assert saved == now
    assert state(lab, switch)["history"][-1]["message"] == "fabricgen-run-1"
    assert all(links[port]["is_up"] for port in ("swp1", "swp2", "swp63", "swp64"))
    nothing_pending(lab, switch)


KILLED_CONTROLLER = """
import sys, time, napalm
driver = napalm.get_network_driver("fabricgen_nvue")(sys.argv[1], "root", None,
    optional_args={"key_file": sys.argv[2], "known_hosts": sys.argv[3]})
driver.open()
driver.load_replace_candidate(config=open(sys.argv[4]).read())
driver.commit_config(message="run-killed", revert_in=int(sys.argv[5]))
print("committed", flush=True)
time.sleep(600)
"""


def test_an_unconfirmed_commit_rolls_back_on_the_nvue_target_after_the_controller_is_killed(
        lab: Lab, switch: str, candidate: str, tmp_path: Path) -> None:
    (tmp_path / "leaf3.yaml").write_text(candidate)
    controller = subprocess.Popen(
        [sys.executable, "-c", KILLED_CONTROLLER, lab.address(switch), str(lab.key_file), str(lab.known_hosts),
         str(tmp_path / "leaf3.yaml"), str(CONFIRM_S)], stdout=subprocess.PIPE, text=True, cwd=ROOT)
    assert controller.stdout is not None
    try:
        assert controller.stdout.readline().strip() == "committed"
        assert applied(lab, switch) != STARTUP  # the change is live, waiting for its confirm
    finally:
        controller.send_signal(signal.SIGKILL)
        controller.wait(30)
        controller.stdout.close()
    deadline = time.monotonic() + REVERT_WAIT_S
    while state(lab, switch)["confirm"] is not None:
        assert time.monotonic() < deadline, "the target's confirm timer did not roll back"
        time.sleep(0.5)
    assert applied(lab, switch) == STARTUP
    assert state(lab, switch)["history"][-1]["reason"] == "Confirm timeout rollback"


def test_rollback_on_the_nvue_target_restores_the_snapshot(lab: Lab, switch: str, candidate: str) -> None:
    driver = driver_for(lab, switch)
    try:
        driver.load_replace_candidate(config=candidate)
        driver.commit_config(message="run-2", revert_in=120)
        snapshot = driver.last_snapshot
        assert snapshot and driver.intent_check(candidate) == ""
        driver.confirm_commit()
    finally:
        driver.close()
    fresh = driver_for(lab, switch)  # as the engine does: a new login, nothing remembered
    try:
        fresh.rollback()
        assert fresh.intent_check(candidate) == snapshot
    finally:
        fresh.close()
    assert applied(lab, switch) == STARTUP
    assert state(lab, switch)["history"][-1]["message"] == "fabricgen-revert-run-2"


def test_rollback_of_a_pending_commit_on_the_nvue_target_aborts_its_confirm(lab: Lab, switch: str,
                                                                           candidate: str) -> None:
    driver = driver_for(lab, switch)
    try:
        driver.load_replace_candidate(config=candidate)
        driver.commit_config(message="run-3", revert_in=120)
        driver.rollback()
        assert not driver.has_pending_commit()
        assert driver.intent_check(candidate) == driver.last_snapshot
    finally:
        driver.close()
    assert applied(lab, switch) == STARTUP and state(lab, switch)["confirm"] is None


def test_a_commit_the_nvue_target_refuses_changes_nothing(lab: Lab, switch: str, candidate: str) -> None:
    """An MTU NVUE's model refuses (552-9216) injected into the rendered file: the apply is refused with NVUE's
    "Invalid config" reply, the driver discards its revision and says nothing was changed."""
    invalid = candidate.replace("mtu: 9100", "mtu: 9300", 1)
    assert invalid != candidate
    before = state(lab, switch)
    driver = driver_for(lab, switch)
    try:
        driver.load_replace_candidate(config=invalid)
        assert "mtu: 9300" in driver.compare_config()  # NVUE diffs it; it is the apply that validates
        with pytest.raises(CommitError, match=r"nothing was changed: Invalid config \[rev_id: \d+\]"):
            driver.commit_config(message="run-4", revert_in=120)
        assert not driver.has_pending_commit()
    finally:
        driver.close()
    after = state(lab, switch)
    assert after["applied"] == before["applied"] and after["history"] == before["history"]
    assert applied(lab, switch) == STARTUP
    nothing_pending(lab, switch)


def test_the_nvue_target_refuses_set_and_unset_of_one_object_in_one_patch(lab: Lab, switch: str) -> None:
    """NVIDIA: "NVUE does not support both unset and set commands for the same object in a single patch"."""
    patch = "- unset:\n    interface:\n      swp5:\n        link:\n- set:\n    interface:\n      swp5:\n" \
            "        link:\n          mtu: 9100\n"
    lab.inside(switch, "/tmp/both.yaml").write_text(patch)
    done = lab.run(switch, "nv config patch /tmp/both.yaml")
    assert done.returncode == 1
    assert "does not support both unset and set commands for the same object" in done.stderr
    assert "interface swp5 link" in done.stderr


# --- the target itself, without the lab (its state in a temporary directory) ----------------------------------

@pytest.fixture
def offline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("USER", "cumulus")
    target.lab_init(tmp_path)
    return tmp_path


def nv(directory: Path, *argv: str) -> str:
    output: str = target.run(list(argv), directory)
    return output


def test_the_nvue_target_refuses_an_invalid_revision_as_nvue_words_it(offline: Path) -> None:
    assert nv(offline, "config", "attach", "applied", "-y") == "attached [rev_id: 2]\n"
    (offline / "mtu.yaml").write_text("- set:\n    interface:\n      swp1:\n        link:\n          mtu: 9217\n")
    nv(offline, "config", "patch", str(offline / "mtu.yaml"))
    assert nv(offline, "config", "diff") == "- set:\n    interface:\n      swp1:\n        link:\n          mtu: 9217\n"
    with pytest.raises(target.NvError) as refused:
        nv(offline, "config", "apply", "-y")
    assert str(refused.value) == ("Invalid config [rev_id: 2]\n"
                                  "  Config invalid at interface.swp1.link.mtu: 9217 is greater than the maximum of "
                                  "9216\n")
    assert target.applied_config(offline) == STARTUP and target.read_state(offline)["applied"] == "1"


def test_the_nvue_target_saves_only_on_nv_config_save_when_auto_save_is_off(offline: Path) -> None:
    (offline / "mtu.yaml").write_text("- set:\n    interface:\n      swp5:\n        link:\n          mtu: 9100\n")
    nv(offline, "config", "patch", str(offline / "mtu.yaml"))
    assert nv(offline, "config", "apply", "-y", "-m", "storage MTU") == "applied [rev_id: 2]\n"
    assert target.applied_config(offline)["interface"]["swp5"]["link"]["mtu"] == 9100
    startup = offline / "startup.yaml"
    assert target._set_body(yaml.safe_load(startup.read_text())) == STARTUP  # auto-save is disabled on leaf3
    assert nv(offline, "config", "save") == "saved\n"
    assert target._set_body(yaml.safe_load(startup.read_text()))["interface"]["swp5"]["link"]["mtu"] == 9100
    history = json.loads(nv(offline, "config", "history", "-o", "json"))
    assert [(entry["rev-id"], entry["message"]) for entry in history.values()] == [("1", "startup"),
                                                                                   ("2", "storage MTU")]


def test_a_stale_pending_revision_on_the_nvue_target_is_detached_not_lost(lab: Lab, switch: str,
                                                                         candidate: str) -> None:
    """Someone's unapplied edit (the same login's pending revision) stays the switch's, parked under its number;
    fabricgen's diff neither includes it nor deletes it."""
    lab.inside(switch, "/root/hostname.yaml").write_text("- set:\n    system:\n      hostname: leaf3-new\n")
    assert lab.run(switch, "nv config patch /root/hostname.yaml").returncode == 0
    stale = state(lab, switch)["attached"]["root"]
    driver = driver_for(lab, switch)
    try:
        driver.load_replace_candidate(config=candidate)
        shown = driver.compare_config()
    finally:
        driver.close()
    assert "hostname" not in shown and "pfc-sp3-100m" in shown
    after = state(lab, switch)
    assert after["attached"] == {} and after["revisions"][stale]["state"] == "pending"
    assert after["revisions"][stale]["config"]["system"]["hostname"] == "leaf3-new"
