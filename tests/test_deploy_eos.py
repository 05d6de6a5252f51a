"""fabricgen's EOS driver (``fabricgen_eos``, NAPALM's core ``eos`` driver underneath) against the lab's EOS
target: a real HTTPS eAPI server in a lab host implementing EOS's config sessions, commit timer, checkpoints
and configure replace (tests/targets/eos.py; no Arista image runs here, hence "target" in the names).

The driver is reached through NAPALM's own lookup (``get_network_driver("fabricgen_eos")``) over HTTPS, the
server's certificate verified against the lab CA, with the lab's eAPI login. Every check of what the switch
holds reads the target's state files from outside (``Lab.state_dir``), never through the driver. The candidate
is leaf2's eos.cfg as ``fabricgen render intent/mixed.yaml -i inventory/mixed`` writes it; the target starts from
a running-config with users, eAPI, routing, BGP, an ACL, NTP and other lines on the very ports fabricgen
configures, all of which must come through every push byte for byte.
"""

from __future__ import annotations

import importlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from napalm import get_network_driver
from napalm.base.exceptions import CommitError, ConnectionException

from fabricgen.platforms.eos.driver import splice

from lab import ROOT, Lab
from test_lab import require_lab

# The target module as the lab imports it (targets.eos): its eAPI login and port.
target = importlib.import_module("targets.eos")
LAB_USER: str = target.LAB_USER
LAB_PASSWORD: str = target.LAB_PASSWORD
PORT: int = target.PORT
HOST_TIMEOUT_S = 20.0
REVERT_IN_S = 5
# The interfaces leaf2's eos.cfg configures, and the lines of theirs fabricgen owns (its capability record:
# description, shutdown, and on data ports mtu / l2 mtu, speed, error-correction, switchport mode, service-profile).
OWNED_PORTS = ("Ethernet1/1", "Ethernet2/1", "Ethernet63/1", "Ethernet64/1")
OWNED_PORT_LINES = re.compile(r"(description .*|(no )?shutdown|mtu \d+|l2 mtu \d+|speed \S+|(no )?error-correction "
                              r"encoding.*|(no )?switchport|service-profile \S+)")
# Whole top-level sections fabricgen owns on leaf2 (management VRF "mgmt", interface Management1).
OWNED_SECTIONS = re.compile(r"qos profile FABRICGEN_ROCE|qos map .*|priority-flow-control pause watchdog .*|"
                            r"vrf instance mgmt|interface Management1|(no )?ip routing vrf mgmt|"
                            r"ip route vrf mgmt 0\.0\.0\.0/0 .*")


# --- the splice, offline: no lab needed ----------------------------------------------------------------------

STARTING_CONFIG = ROOT / "tests" / "targets" / "data" / "eos" / "running-config"
BANNER = "banner motd\nrouter bgp 1 in a banner is text, not config\n   even indented\nEOF\n"


def test_splice_keeps_every_line_fabricgen_does_not_own(candidate: str) -> None:
    body = "".join(line + "\n" for line in STARTING_CONFIG.read_text().splitlines()
                   if not line.startswith("! ") and line != "end")
    spliced = splice(body + BANNER + "end\n", candidate)
    assert not_owned(spliced.removesuffix("end\n")) == not_owned(body + BANNER)
    assert BANNER in spliced  # byte for byte, its text never read as commands
    assert "   ip address 10.255.2.1/31\n   bfd interval 300 min-rx 300 multiplier 3\n" in spliced
    assert "   switchport access vlan 10\n" in spliced  # not owned on a routed data port: kept as the switch has it
    assert "ip route vrf mgmt 0.0.0.0/0 192.0.2.254" not in spliced and "192.0.2.1\n" in spliced


def test_splice_is_stable(candidate: str) -> None:
    """Splicing eos.cfg into a config that already holds it changes nothing more."""
    once = splice(STARTING_CONFIG.read_text(), candidate)
    assert splice(once, candidate) == once


@pytest.mark.parametrize("example", ["fabric", "mixed"])
def test_target_model_takes_every_eos_config_of_the_examples_once(example: str, tmp_path: Path) -> None:
    """Every EOS device of the bundled examples, spliced into the target's starting config: the target's CLI model
    (in-process, no lab) takes every line, and after the commit the same splice has nothing left to change."""
    out = tmp_path / "out"
    inventory = ROOT / "inventory" / ("mixed" if example == "mixed" else "")
    done = subprocess.run([sys.executable, "-m", "fabricgen", "render", str(ROOT / "intent" / f"{example}.yaml"),
                           "-i", str(inventory), "-o", str(out)], capture_output=True, text=True, check=False,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    configs = sorted(out.glob("*/eos.cfg"))
    assert configs
    for config in configs:
        device = target.Device(tmp_path / config.parent.name)
        target.lab_init(device.directory)
        for name in ("first", "second"):
            lines = [line.strip() for line in splice(device.running, config.read_text()).splitlines()]
            reply = target.run_request(device, ["enable", f"configure session {name}", "rollback clean-config", *lines,
                                                f"show session-config named {name} diffs",
                                                f"configure session {name} commit"], True)
            assert "result" in reply, (config, reply.get("error", {}).get("message"))
        assert reply["result"][-2]["output"] == "", config  # the second splice: nothing to do


# --- against the lab's EOS target --------------------------------------------------------------------------

@pytest.fixture(scope="module")
def lab() -> Iterator[Lab]:
    require_lab()
    with Lab.up(1, prefix=f"eo{os.getpid()}", kinds=["eos"]) as built:
        yield built


@pytest.fixture(scope="module")
def candidate(mixed_rendered: Path) -> str:
    """leaf2's eos.cfg, rendered by fabricgen's CLI from the bundled mixed example."""
    return (mixed_rendered / "leaf2" / "eos.cfg").read_text()


@pytest.fixture
def switch(lab: Lab) -> str:
    """The target as new (its starting config, no sessions), its eAPI taking connections."""
    host = next(iter(lab.hosts))
    lab.reset(host)
    deadline = time.monotonic() + HOST_TIMEOUT_S
    while True:
        try:
            socket.create_connection((lab.address(host), PORT), timeout=1).close()
            return host
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def connect(lab: Lab, host: str, password: str = LAB_PASSWORD, **options: Any) -> Any:
    driver = get_network_driver("fabricgen_eos")(
        lab.address(host), LAB_USER, password, timeout=30,
        optional_args={"ca_file": str(lab.state_dir(host) / "ca.pem"), **options})
    driver.open()
    return driver


def running(lab: Lab, host: str) -> str:
    return (lab.state_dir(host) / "running-config").read_text()


def sessions(lab: Lab, host: str) -> dict[str, Any]:
    found: dict[str, Any] = json.loads((lab.state_dir(host) / "sessions.json").read_text())
    return found


def not_owned(config: str) -> list[str]:
    """The running-config without what fabricgen owns: what must never change (the ``!`` separators between
    sections are EOS's layout, not config)."""
    kept: list[str] = []
    section = ""
    for line in config.splitlines():
        if line == "!":
            continue
        if not line.startswith(" "):
            section = line
        if OWNED_SECTIONS.fullmatch(section):
            continue
        if section in {f"interface {port}" for port in OWNED_PORTS} and OWNED_PORT_LINES.fullmatch(line.strip()):
            continue
        kept.append(line)
    return kept


def outside_owned_scope(diff: str) -> list[str]:
    """The diff's changed lines that are not fabricgen's, each judged inside its section (the last unindented
    line above it in the diff: a hunk's context shows it, the owned lines come first in a section)."""
    outside, section = [], ""
    for line in diff.splitlines():
        if line.startswith(("+++", "---", "@@")):
            continue
        text = line[1:]
        if not text.startswith(" "):
            section = text
        if line[:1] not in "+-" or text.strip() == "!":
            continue
        kept = not_owned(text) if text == section else not_owned(f"{section}\n{text}")[1:]
        if kept:
            outside.append(line)
    return outside


def changed_lines(diff: str) -> list[str]:
    return [line for line in diff.splitlines() if line[:1] in "+-" and not line.startswith(("+++", "---"))]


def test_target_diff_shows_only_the_owned_change_and_leaves_no_session(lab: Lab, switch: str, candidate: str) -> None:
    before = running(lab, switch)
    driver = connect(lab, switch)
    try:
        driver.load_replace_candidate(config=candidate)
        diff = driver.compare_config()
        driver.discard_config()
    finally:
        driver.close()
    changes = changed_lines(diff)
    assert "+   service-profile FABRICGEN_ROCE" in changes
    assert "-ip route vrf mgmt 0.0.0.0/0 192.0.2.254" in changes and "+ip route vrf mgmt 0.0.0.0/0 192.0.2.1" in changes
    assert "+qos map dscp 26 to traffic-class 3" in changes
    assert "-   description uplink-spine1" in changes and "+   description P2P_spine1_Ethernet8" in changes
    # Every changed line is an owned one: nothing of BGP, users, the ACL, addresses or BFD is in the diff.
    assert outside_owned_scope(diff) == []
    assert running(lab, switch) == before
    assert sessions(lab, switch) == {}  # the diff's session was aborted: nothing pending on the switch


def lint_running_config(tmp_path: Path, config: str) -> subprocess.CompletedProcess[str]:
    """`fabricgen lint --configs` of leaf2 with ``config`` as its eos.cfg (the other devices left out)."""
    configs = tmp_path / "configs"
    (configs / "leaf2").mkdir(parents=True, exist_ok=True)
    (configs / "leaf2" / "eos.cfg").write_text(config)
    return subprocess.run([sys.executable, "-m", "fabricgen", "lint", str(ROOT / "intent" / "mixed.yaml"), "-i",
                           str(ROOT / "inventory" / "mixed"), "--configs", str(configs), "--partial"],
                          capture_output=True, text=True, check=False, timeout=300)


def test_target_commit_confirm_then_nothing_to_do(lab: Lab, switch: str, candidate: str, tmp_path: Path) -> None:
    before = running(lab, switch)
    driver = connect(lab, switch)
    try:
        driver.load_replace_candidate(config=candidate)
        driver.commit_config(message="run1", revert_in=60)
        assert driver.has_pending_commit() and driver.pending_commit_id() == "run1"
        assert driver.intent_check(candidate) == ""  # the health check's read-back
        assert (lab.state_dir(switch) / "checkpoints" / "fabricgen-run1").read_text() == before
    finally:
        driver.close()
    confirming = connect(lab, switch)  # a fresh login confirms, as the engine's health check does
    try:
        confirming.confirm_commit()
        assert not confirming.has_pending_commit() and confirming.pending_commit_id() is None
    finally:
        confirming.close()
    after = running(lab, switch)
    assert after != before and not_owned(after) == not_owned(before)
    assert (lab.state_dir(switch) / "startup-config").read_text() == after  # write memory after the confirm
    # fabricgen's own EOS reader and lint, on the switch's whole running-config: it now holds the intent.
    assert lint_running_config(tmp_path, before).returncode == 1
    assert lint_running_config(tmp_path, after).returncode == 0
    again = connect(lab, switch)
    try:
        again.load_replace_candidate(config=candidate)
        assert again.compare_config() == ""
        ports = again.get_interfaces()
        assert all(ports[port]["is_up"] for port in OWNED_PORTS)
        assert again.get_facts()["hostname"] == "leaf2"
    finally:
        again.close()
    assert running(lab, switch) == after


def test_target_unconfirmed_commit_reverts_on_the_switch_after_the_controller_is_killed(
        lab: Lab, switch: str, candidate: str, tmp_path: Path) -> None:
    before = running(lab, switch)
    (tmp_path / "eos.cfg").write_text(candidate)
    controller = subprocess.Popen([sys.executable, "-c", CONTROLLER, lab.address(switch),
                                   str(lab.state_dir(switch) / "ca.pem"), str(tmp_path / "eos.cfg")],
                                  cwd=ROOT, env={**os.environ, "LAB_EAPI_PASSWORD": LAB_PASSWORD},
                                  stdout=subprocess.PIPE, text=True)
    try:
        assert controller.stdout is not None
        assert controller.stdout.readline().strip() == "committed"
        assert running(lab, switch) != before
        os.kill(controller.pid, signal.SIGKILL)  # no confirm, no rollback, no goodbye
    finally:
        controller.kill()
        controller.wait()
    deadline = time.monotonic() + REVERT_IN_S + HOST_TIMEOUT_S
    while running(lab, switch) != before and time.monotonic() < deadline:
        time.sleep(0.2)
    assert running(lab, switch) == before
    assert sessions(lab, switch) == {}


CONTROLLER = """
import os, sys, time
from napalm import get_network_driver
address, ca_file, cfg = sys.argv[1:]
driver = get_network_driver("fabricgen_eos")(address, "admin", os.environ["LAB_EAPI_PASSWORD"],
                                             optional_args={"ca_file": ca_file})
driver.open()
driver.load_replace_candidate(filename=cfg)
driver.commit_config(message="killed-run", revert_in=REVERT_IN_S)
print("committed", flush=True)
time.sleep(3600)
""".replace("REVERT_IN_S", str(REVERT_IN_S))


def test_target_rollback_restores_the_snapshot(lab: Lab, switch: str, candidate: str) -> None:
    before = running(lab, switch)
    driver = connect(lab, switch)
    try:
        driver.load_replace_candidate(config=candidate)
        driver.commit_config(message="run2", revert_in=60)
        snapshot = driver.last_snapshot
        assert snapshot and driver.intent_check(candidate) == ""
        driver.rollback()  # the pending commit: aborted, the switch restores the config from before it
        assert not driver.has_pending_commit()
        assert driver.intent_check(candidate) == snapshot
        assert running(lab, switch) == before
        driver.load_replace_candidate(config=candidate)
        driver.commit_config(message="run3", revert_in=60)
        driver.confirm_commit()
        driver.revert("run3")  # a confirmed commit: its checkpoint
        assert driver.intent_check(candidate) == snapshot
        with pytest.raises(CommitError, match="No such file"):
            driver.revert("never-made")  # no checkpoint of that run on the switch
    finally:
        driver.close()
    assert running(lab, switch) == before
    assert (lab.state_dir(switch) / "startup-config").read_text() == before


def test_target_refused_candidate_changes_nothing(lab: Lab, switch: str, candidate: str) -> None:
    before = running(lab, switch)
    invalid = candidate.replace("   mtu 9100\n", "   mtu 99999\n", 1)  # above any EOS MTU
    assert invalid != candidate
    driver = connect(lab, switch)
    try:
        driver.load_replace_candidate(config=invalid)
        with pytest.raises(CommitError, match="nothing was changed"):
            driver.commit_config(message="bad", revert_in=60)
        assert not driver.has_pending_commit()
    finally:
        driver.close()
    assert running(lab, switch) == before
    assert sessions(lab, switch) == {}


def test_target_login_is_checked_and_never_logged(lab: Lab, switch: str) -> None:
    with pytest.raises(ConnectionException) as refused:
        connect(lab, switch, password="not-the-password")
    assert "not-the-password" not in str(refused.value)
    with pytest.raises(ConnectionException, match=r"CERTIFICATE_VERIFY_FAILED|certificate verify failed"):
        get_network_driver("fabricgen_eos")(lab.address(switch), LAB_USER, LAB_PASSWORD, timeout=10,
                                            optional_args={}).open()  # the system CAs do not know the lab's
    connect(lab, switch).close()
    calls = (lab.host_dir(switch) / "nic" / "tool-calls.jsonl").read_text()
    assert LAB_PASSWORD not in calls and "not-the-password" not in calls and "$6$" not in calls


def test_target_diff_after_a_killed_diff(lab: Lab, switch: str, candidate: str) -> None:
    """A diff killed half-way leaves its session open on the switch (EOS keeps it 24 hours, and NAPALM will not
    load while a session is open): the next diff aborts fabricgen's own stale session and goes on."""
    driver = connect(lab, switch)
    try:
        driver._run(["configure session fabricgen-diff-killed", "rollback clean-config", "hostname half-done", "end"])
        assert sessions(lab, switch)["fabricgen-diff-killed"]["state"] == "pending"
        driver.load_replace_candidate(config=candidate)
        assert "+   service-profile FABRICGEN_ROCE" in changed_lines(driver.compare_config())
    finally:
        driver.close()
    assert sessions(lab, switch) == {}
