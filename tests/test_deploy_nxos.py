"""fabricgen's NX-OS push driver (``fabricgen_nxos``, found through NAPALM) against the NX-OS device target of the lab
(tests/targets/nxos.py: an HTTPS NX-API server implementing NX-OS's documented checkpoint, rollback-patch and
configure-replace-with-commit-timeout behaviour; no NX-OS image runs here, hence "nxos_target" in the names).

The candidate is the bundled mixed example's leaf4 nxos.cfg as ``fabricgen render`` writes it. What the switch holds
is read from the target's own state files from outside (never through the driver under test), and "outside the
owned scope" is defined here on its own (OWNED_FIELDS), not with the driver's splicing code. The splicing itself
is also checked without a lab, on the target's starting running-config.
"""

from __future__ import annotations

import importlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import napalm
import pytest
from napalm.base.exceptions import CommitError

from fabricgen.platforms.nxos.driver import commit_timeout
from fabricgen.platforms.nxos.splice import owned_diff, splice

from lab import ROOT, Lab
from test_lab import require_lab

target: Any = importlib.import_module("targets.nxos")  # as the lab imports it

STARTING: str = target.STARTING_CONFIG.read_text()
REVERT_IN = 30  # the shortest commit-timeout NX-OS takes
REVERT_WAIT_S = REVERT_IN + 20  # the target's timer, plus a loaded 2-core machine
# What fabricgen owns of an NX-OS config (the capability's owned_sections), written out independently: whole
# top-level blocks and global lines, and the fields it owns inside the blocks nxos.cfg renders.
OWNED_BLOCKS = re.compile(r"class-map type qos match-all FG_\S+|policy-map type \S+ FABRICGEN_\S+"
                          r"|priority-flow-control watch-dog.*")
OWNED_FIELDS = {
    r"interface Ethernet1/(1|2|63|64)": r"description|shutdown|no shutdown|no switchport|switchport.*|mtu|speed|fec"
                                        r"|priority-flow-control|service-policy type qos input",
    r"interface mgmt0": r"description|vrf member|ip address|mtu",
    r"vrf context management": r"ip route 0\.0\.0\.0/0",
    r"system qos": r"service-policy type (network-qos|queuing output)",
}


def not_owned(config: str) -> list[str]:
    """The config's lines outside fabricgen's owned scope, in order and byte for byte (comments and blank lines
    left out: the switch prints its own)."""
    kept: list[str] = []
    fields: str | None = None
    skipping = False
    for line in config.splitlines():
        if not line.strip() or line.lstrip().startswith("!"):
            continue
        if not line.startswith(" "):
            skipping = OWNED_BLOCKS.fullmatch(line) is not None
            fields = next((owned for block, owned in OWNED_FIELDS.items() if re.fullmatch(block, line)), None)
        elif skipping or (fields and re.match(rf"(?:{fields})(\s|$)", line.strip())):
            continue
        if not skipping:
            kept.append(line)
    return kept


# --- the splice, without a lab ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def rendered(mixed_rendered: Path) -> str:
    """leaf4's nxos.cfg as `fabricgen render` writes it for the mixed example."""
    return (mixed_rendered / "leaf4" / "nxos.cfg").read_text()


def test_splice_keeps_everything_fabricgen_does_not_own_byte_for_byte(rendered: str) -> None:
    candidate = splice(STARTING, rendered)
    assert not_owned(candidate) == not_owned(STARTING)
    # the lines before the first block (the !Command/!Time header) stay as they were
    assert candidate.startswith(STARTING[: STARTING.index("version ")])
    assert "  ip address 10.4.1.1/31" in candidate and "router bgp 65104" in candidate


def test_splice_holds_the_intent_and_is_idempotent(rendered: str) -> None:
    candidate = splice(STARTING, rendered)
    assert owned_diff(STARTING, rendered) != ""
    assert owned_diff(candidate, rendered) == ""
    assert splice(candidate, rendered) == candidate


def test_splice_removes_a_stale_fabricgen_class_and_keeps_foreign_ones(rendered: str) -> None:
    running = STARTING.replace("class-map type qos match-all LEGACY_STORAGE",
                               "class-map type qos match-all FG_OLD\n  match dscp 10\n\n"
                               "class-map type qos match-all LEGACY_STORAGE")
    candidate = splice(running, rendered)
    assert "FG_OLD" not in candidate
    assert "class-map type qos match-all LEGACY_STORAGE\n  match cos 3\n" in candidate


def test_commit_timeout_is_nxos_range_raised_to_30_seconds_and_refused_above_an_hour() -> None:
    assert commit_timeout(None) is None
    assert commit_timeout(5) == 30
    assert commit_timeout(300) == 300
    with pytest.raises(CommitError, match="nothing was changed"):
        commit_timeout(3601)


# --- against the lab's NX-OS target -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def lab() -> Iterator[Lab]:
    require_lab()
    with Lab.up(1, prefix=f"nx{os.getpid()}", kinds=["nxos"]) as built:
        yield built


@pytest.fixture
def switch(lab: Lab) -> str:
    """The target as found: rebuilt with its starting config, its NX-API answering."""
    host = next(iter(lab.hosts))
    lab.reset(host)
    ready = lab.state_dir(host) / "nxapi.ready"
    deadline = time.monotonic() + 30
    while not ready.exists():
        assert time.monotonic() < deadline, "the NX-API server of the target did not start"
        time.sleep(0.05)
    return host


def driver_options(lab: Lab, host: str) -> dict[str, Any]:
    options: dict[str, Any] = target.napalm_optional_args(lab.state_dir(host), lab.key_file, lab.known_hosts)
    return options


def open_driver(lab: Lab, host: str) -> Any:
    driver = napalm.get_network_driver("fabricgen_nxos")(lab.address(host), target.LAB_USERNAME,
                                                         target.LAB_PASSWORD, optional_args=driver_options(lab, host))
    driver.open()
    return driver


def running(lab: Lab, host: str) -> str:
    return (lab.state_dir(host) / "running-config").read_text()


def leftovers(lab: Lab, host: str) -> dict[str, list[str]]:
    state = lab.state_dir(host)
    return {"bootflash": sorted(p.name for p in (state / "bootflash").iterdir()),
            "pending": [p.name for p in state.glob("pending.json")]}


def test_nxos_target_diff_shows_exactly_the_owned_change_and_leaves_no_trace(lab: Lab, switch: str,
                                                                            rendered: str) -> None:
    before = running(lab, switch)
    driver = open_driver(lab, switch)
    try:
        driver.load_replace_candidate(config=rendered)
        diff = driver.compare_config()
        driver.discard_config()
    finally:
        driver.close()
    headers = {line for line in diff.splitlines() if not line.startswith(" ")}
    assert headers == {
        "class-map type qos match-all FG_MANAGEMENT", "class-map type qos match-all FG_RDMA",
        "class-map type qos match-all FG_CNP", "policy-map type qos FABRICGEN_QOS",
        "policy-map type queuing FABRICGEN_QUEUING", "policy-map type network-qos FABRICGEN_NETWORK_QOS",
        "system qos", "priority-flow-control watch-dog-interval on", "priority-flow-control watch-dog interval 100",
        "priority-flow-control watch-dog shutdown-multiplier 2", "priority-flow-control watch-dog restore-multiplier 2",
        "vrf context management", "interface Ethernet1/1", "interface Ethernet1/2", "interface Ethernet1/63",
        "interface Ethernet1/64", "interface mgmt0"}
    assert "  mtu 9100" in diff.splitlines() and "  no service-policy type qos input LEGACY_CLASSIFY" in diff
    assert not re.search(r"ip address 10\.|router bgp|username|access-list|LEGACY_STORAGE|Ethernet1/3", diff)
    assert running(lab, switch) == before
    assert leftovers(lab, switch) == {"bootflash": [], "pending": []}
    assert not list((lab.state_dir(switch) / "checkpoints").iterdir())


def test_nxos_target_commit_confirm_then_nothing_left_to_do(lab: Lab, switch: str, rendered: str) -> None:
    before = running(lab, switch)
    driver = open_driver(lab, switch)
    try:
        driver.load_replace_candidate(config=rendered)
        driver.commit_config(message="run-1", revert_in=REVERT_IN)
        assert driver.has_pending_commit() and driver.pending_commit_id() == "run-1"
        assert driver.intent_check(rendered) == ""  # the health check's read-back
        driver.confirm_commit()
        assert not driver.has_pending_commit()
        driver.load_replace_candidate(config=rendered)
        assert driver.compare_config() == ""
    finally:
        driver.close()
    after = running(lab, switch)
    assert after != before
    assert not_owned(after) == not_owned(before)
    assert (lab.state_dir(switch) / "startup-config").read_text() == after  # copy running-config startup-config
    # only the run's fate, the switch's record of it (commit_fate)
    assert leftovers(lab, switch) == {"bootflash": ["fabricgen-run-1.fate"], "pending": []}
    assert sorted(p.name for p in (lab.state_dir(switch) / "checkpoints").iterdir()) == ["fabricgen-run-1"]


def test_nxos_target_rollback_restores_the_snapshot(lab: Lab, switch: str, rendered: str) -> None:
    before = running(lab, switch)
    driver = open_driver(lab, switch)
    try:
        driver.load_replace_candidate(config=rendered)
        driver.commit_config(message="run-2", revert_in=REVERT_IN)
        snapshot = driver.last_snapshot
        driver.confirm_commit()
        assert driver.intent_check(rendered) == ""
        driver.rollback()
        assert snapshot and driver.intent_check(rendered) == snapshot
    finally:
        driver.close()
    assert running(lab, switch) == before
    assert (lab.state_dir(switch) / "startup-config").read_text() == before


def test_nxos_target_refuses_an_invalid_value_and_nothing_changes(lab: Lab, switch: str, rendered: str) -> None:
    before = running(lab, switch)
    broken = rendered.replace("  mtu 9100\n", "  mtu 99999\n", 1)
    assert broken != rendered
    driver = open_driver(lab, switch)
    try:
        driver.load_replace_candidate(config=broken)
        with pytest.raises(CommitError, match="nothing was changed") as refused:
            driver.commit_config(message="run-3", revert_in=REVERT_IN)
        assert "mtu 99999" in str(refused.value)
        assert not driver.has_pending_commit()
    finally:
        driver.close()
    assert running(lab, switch) == before
    assert leftovers(lab, switch) == {"bootflash": [], "pending": []}
    assert not list((lab.state_dir(switch) / "checkpoints").iterdir())


def test_nxos_target_rollback_of_a_pending_commit_restores_the_switch(lab: Lab, switch: str, rendered: str) -> None:
    before = running(lab, switch)
    driver = open_driver(lab, switch)
    try:
        driver.load_replace_candidate(config=rendered)
        driver.commit_config(message="run-4", revert_in=REVERT_IN)
        snapshot = driver.last_snapshot
        driver.rollback()  # what the engine does when a health check fails
        assert not driver.has_pending_commit()
        assert driver.intent_check(rendered) == snapshot
    finally:
        driver.close()
    assert running(lab, switch) == before
    assert leftovers(lab, switch) == {"bootflash": ["fabricgen-run-4.fate"], "pending": []}  # its fate: reverted


def test_nxos_target_checkpoint_database_keeps_its_ten_and_other_checkpoints(lab: Lab, switch: str,
                                                                           rendered: str) -> None:
    state = lab.state_dir(switch)
    driver = open_driver(lab, switch)
    try:
        driver.cli(["checkpoint before-maintenance"])
        for run in range(1, 12):  # eleven runs: the oldest of fabricgen's checkpoints make room
            driver.load_replace_candidate(config=rendered if run % 2 else STARTING)
            driver.commit_config(message=f"run-{run:02d}", revert_in=REVERT_IN)
            driver.confirm_commit()
    finally:
        driver.close()
    names = sorted(p.name for p in (state / "checkpoints").iterdir())
    assert names == ["before-maintenance", *(f"fabricgen-run-{run:02d}" for run in range(3, 12))]


# A controller that commits with a revert timer and then hangs: the test kills it with SIGKILL.
CONTROLLER = """
import json, sys, time, napalm
options, address, user, password, config = json.loads(sys.stdin.read())
driver = napalm.get_network_driver("fabricgen_nxos")(address, user, password, optional_args=options)
driver.open()
driver.load_replace_candidate(config=config)
driver.commit_config(message="run-killed", revert_in=%d)
print("committed", flush=True)
time.sleep(3600)
"""


def test_nxos_target_reverts_by_itself_after_the_controller_is_killed(lab: Lab, switch: str,
                                                                      rendered: str) -> None:
    before = running(lab, switch)
    controller = subprocess.Popen([sys.executable, "-c", CONTROLLER % REVERT_IN], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        assert controller.stdin is not None and controller.stdout is not None
        controller.stdin.write(json.dumps([driver_options(lab, switch), lab.address(switch), target.LAB_USERNAME,
                                           target.LAB_PASSWORD, rendered]))
        controller.stdin.close()
        assert controller.stdout.readline().strip() == "committed"
        assert running(lab, switch) != before and leftovers(lab, switch)["pending"] == ["pending.json"]
    finally:
        controller.send_signal(signal.SIGKILL)
        controller.wait(10)
    deadline = time.monotonic() + REVERT_WAIT_S
    while running(lab, switch) != before:
        assert time.monotonic() < deadline, "the target did not roll back when its commit timer expired"
        time.sleep(0.5)
    assert leftovers(lab, switch)["pending"] == []
    driver = open_driver(lab, switch)
    try:
        assert not driver.has_pending_commit()
    finally:
        driver.close()
