"""The SONiC push driver (``fabricgen_sonic``, found through NAPALM) against the SONiC lab target.

No SONiC image runs here: the lab host runs tests/targets/sonic.py, sonic-utilities' GCU commands (``config
apply-patch``, ``checkpoint``, ``rollback``, ``save``, ``show runningconfiguration all``) on a CONFIG_DB kept in
the host, behind a real OpenSSH server; every patch is validated against SONiC's YANG models by fabricgen's own
validator, as GCU validates it. The switch starts as an SN4700 leaf as SONiC ships it (lanes, aliases, BGP, an
ACL, SONiC's AZURE QoS and buffer templates on all 32 ports); the candidate is leaf1's config_db.json rendered
from the bundled mixed example. What the switch holds is read from the target's state files directly, never
through the driver.

The first tests need no lab: they pin the owned-scope rules and GCU's refusals on plain dicts.
"""

from __future__ import annotations

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
from napalm.base.exceptions import CommitError

from fabricgen.platforms.sonic import OWNED_TABLES, gcu

from lab import Lab, hidden_by_private_mounts
from test_lab import require_lab

ROOT = Path(__file__).resolve().parent.parent
# The target module, as the lab loads it (tests/targets/ is test infrastructure, not a package of its own).
sys.path.insert(0, str(ROOT))
target = importlib.import_module("tests.targets.sonic")

REVERT_S = 8
REVERT_WAIT_S = REVERT_S + 30  # the switch's timer, plus a loaded 2-core machine


# --- the owned scope and GCU's refusals, on dicts ------------------------------------------------------------

def starting_config() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(target.STARTING_CONFIG.read_text())
    return data


def test_a_port_keeps_its_lanes_alias_and_index_and_only_named_fields_change() -> None:
    running = starting_config()
    candidate = {"PORT": {"Ethernet0": {"admin_status": "up", "mtu": "9216", "lanes": "0,1,2,3,4,5,6,7",
                                        "speed": "400000"}}}
    changes = gcu.owned_patch(running, candidate)
    assert gcu.readable(changes) == "replace /PORT/Ethernet0/mtu: 9100 → 9216\n"
    after = gcu.patched(running, changes)["PORT"]["Ethernet0"]
    # description, fec, autoneg: fields the candidate does not set stay; lanes/alias/index are never fabricgen's
    assert after == {**running["PORT"]["Ethernet0"], "mtu": "9216"}


def test_a_ports_stale_queues_go_and_other_ports_and_the_switchs_own_entries_stay() -> None:
    running = starting_config()
    candidate = {"QUEUE": {"Ethernet0|3": {"scheduler": "scheduler.1", "wred_profile": "AZURE_LOSSLESS"}}}
    removed = sorted(change.path for change in gcu.owned_patch(running, candidate) if change.op == "remove")
    assert removed == [f"/QUEUE/Ethernet0|{q}" for q in (0, 1, 2, 4, 5, 6)]


def test_a_lossless_pg_replaces_the_templates_overlapping_pg_only() -> None:
    running = starting_config()  # Ethernet0|0 lossy, Ethernet0|3-4 NULL (the dynamic template's)
    candidate = {"BUFFER_PG": {"Ethernet0|3": {"profile": "ingress_lossless_profile"}}}
    lines = gcu.readable(gcu.owned_patch(running, candidate)).splitlines()
    assert lines == ['add /BUFFER_PG/Ethernet0|3: {"profile": "ingress_lossless_profile"}',
                     'remove /BUFFER_PG/Ethernet0|3-4 (was {"profile": "NULL"})']


def test_what_gcu_refuses_is_named_before_anything_is_sent() -> None:
    running = starting_config()  # VERSIONS names 202411: GCU adds no buffer profile there
    candidate = {
        "PORT": {"Ethernet512": {"mtu": "9100"}, "Ethernet8": {"lanes": "9,10,11,12,13,14,15,16", "mtu": "9100"}},
        "BUFFER_PROFILE": {"pg_lossless_400000_5m_profile": {"pool": "ingress_lossless_pool", "size": "0"},
                           "ingress_lossy_profile": {"pool": "ingress_lossless_pool", "size": "9216",
                                                     "dynamic_th": "3"}},
    }
    problems = gcu.refusals(running, candidate, gcu.owned_patch(running, candidate))
    assert [problem.split(":")[0] for problem in problems] == [
        "PORT|Ethernet8", "PORT|Ethernet512", "/BUFFER_PROFILE/ingress_lossy_profile/size",
        "/BUFFER_PROFILE/pg_lossless_400000_5m_profile"]


def test_undoing_a_push_puts_back_only_the_paths_it_touched() -> None:
    before = starting_config()
    candidate = {"QUEUE": {"Ethernet0|3": {"scheduler": "scheduler.rdma"}},
                 "SCHEDULER": {"scheduler.rdma": {"type": "DWRR", "weight": "50"}}}
    forward = gcu.owned_patch(before, candidate)
    pushed = gcu.patched(before, forward)
    pushed["QUEUE"]["Ethernet8|3"] = {"scheduler": "scheduler.0"}  # changed on the switch since, by someone else
    undone = gcu.patched(pushed, gcu.restoring_patch(pushed, before, gcu.as_patch(forward)))
    assert undone["QUEUE"]["Ethernet8|3"] == {"scheduler": "scheduler.0"}
    undone["QUEUE"]["Ethernet8|3"] = before["QUEUE"]["Ethernet8|3"]
    assert undone == before


def test_a_login_other_than_root_runs_config_through_sudo() -> None:
    """sonic-utilities' config refuses anyone but root; SONiC's login is admin, with sudo."""
    network_driver = napalm.get_network_driver("fabricgen_sonic")
    assert network_driver("192.0.2.11", "admin").config("save -y") == "sudo -n config save -y"
    assert network_driver("192.0.2.11", "root").config("save -y") == "config save -y"


def test_a_candidate_with_tables_fabricgen_does_not_own_is_refused() -> None:
    with pytest.raises(gcu.CandidateError, match="BGP_NEIGHBOR"):
        gcu.parse_candidate(json.dumps({"BGP_NEIGHBOR": {"10.0.0.1": {"asn": "1"}}}))


# --- against the lab target ------------------------------------------------------------------------------

def require_yang() -> None:
    reason = target.yang_unavailable()
    if reason and os.environ.get("FABRICGEN_REQUIRE_YANG") == "1":
        pytest.fail(f"FABRICGEN_REQUIRE_YANG=1 but {reason}", pytrace=False)
    if reason:
        pytest.skip(reason=reason)


@pytest.fixture(scope="module")
def lab(sonic_yang_models: Path) -> Iterator[Lab]:  # the target validates against ../shared (conftest.py)
    require_lab()
    require_yang()
    with Lab.up(1, prefix=f"s{os.getpid()}", kinds=["sonic"]) as built:
        yield built


@pytest.fixture(scope="module")
def rendered(mixed_rendered: Path) -> str:
    """leaf1's config_db.json, rendered by `fabricgen render` from the bundled mixed example."""
    return (mixed_rendered / "leaf1" / "config_db.json").read_text()


@pytest.fixture
def switch(lab: Lab) -> str:
    """The lab's switch, rebuilt as delivered."""
    host = next(iter(lab.hosts))
    lab.reset(host)
    return host


def driver(lab: Lab, host: str) -> Any:
    network_driver = napalm.get_network_driver("fabricgen_sonic")
    device = network_driver(lab.address(host), "root", None, timeout=30,
                            optional_args={"key_file": str(lab.key_file), "known_hosts": str(lab.known_hosts)})
    device.open()
    return device


def running(lab: Lab, host: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((lab.state_dir(host) / target.RUNNING).read_text())
    return data


def saved_text(lab: Lab, host: str) -> str:
    """The startup config (a switch's /etc/sonic/config_db.json)."""
    path: Path = lab.state_dir(host) / target.STARTUP
    return path.read_text()


def checkpoints(lab: Lab, host: str) -> list[str]:
    return sorted(path.name for path in (lab.state_dir(host) / target.CHECKPOINTS).glob("*"))


def config_calls(lab: Lab, host: str) -> list[list[str]]:
    log = lab.host_dir(host) / "nic" / "tool-calls.jsonl"
    calls = [json.loads(line)["argv"] for line in log.read_text().splitlines()] if log.exists() else []
    return [call[1:] for call in calls if Path(call[0]).name == "config"]


def not_owned(config: dict[str, Any]) -> dict[str, Any]:
    """Tables fabricgen does not own, and in PORT what is never fabricgen's (lanes, alias, index, autoneg)."""
    rest = {table: rows for table, rows in config.items() if table not in OWNED_TABLES}
    rest["PORT"] = {port: {name: value for name, value in entry.items()
                           if name not in ("admin_status", "mtu", "speed", "fec", "description")}
                    for port, entry in config["PORT"].items()}
    return rest


def holds(config: dict[str, Any], candidate: dict[str, Any]) -> list[str]:
    """Where ``config`` does not hold ``candidate`` (PORT/MGMT_PORT: the fields the candidate sets; CABLE_LENGTH:
    its ports' lengths; elsewhere whole entries)."""
    misses = []
    for table, rows in candidate.items():
        for key, entry in rows.items():
            have = config.get(table, {}).get(key)
            partial = table in ("PORT", "MGMT_PORT", "CABLE_LENGTH")
            if have is None or (have != entry if not partial else any(have.get(f) != v for f, v in entry.items()
                                                                   if f != "alias")):
                misses.append(f"{table}|{key}")
    return misses


def test_target_diff_is_the_owned_change_and_leaves_no_trace(lab: Lab, switch: str, rendered: str) -> None:
    before, saved = running(lab, switch), saved_text(lab, switch)
    device = driver(lab, switch)
    try:
        device.load_replace_candidate(config=rendered)
        diff = device.compare_config()
        device.discard_config()
        pending = device.has_pending_commit()
    finally:
        device.close()
    lines = diff.splitlines()
    assert "replace /PORT/Ethernet0/fec: none → rs" in lines
    assert "replace /PFC_WD/GLOBAL/POLL_INTERVAL: 200 → 100" in lines
    assert 'remove /QUEUE/Ethernet0|4 (was {"scheduler": "scheduler.1", "wred_profile": "AZURE_LOSSLESS"})' in lines
    assert "replace /PORT_QOS_MAP/global/dscp_to_tc_map: AZURE → ROCE" in lines
    tables = {line.split()[1].split("/")[1] for line in lines}
    assert tables <= set(OWNED_TABLES)
    ports = {"Ethernet0", "Ethernet8", "Ethernet224", "Ethernet232"}
    assert not [line for line in lines if "Ethernet16" in line or "/lanes" in line or "/alias" in line]
    assert {line.split()[1].split("/")[2].split("|")[0] for line in lines if "/PORT/" in line} == ports
    # no trace: the switch's config, saved config and checkpoints as they were; only a dry run reached GCU
    assert running(lab, switch) == before and saved_text(lab, switch) == saved
    assert checkpoints(lab, switch) == [] and not pending
    assert [call[0] for call in config_calls(lab, switch)] == ["apply-patch"]
    assert "--dry-run" in config_calls(lab, switch)[0]
    # Nothing in /tmp but where the lab shows the checkout to the target (a checkout under /tmp, as in CI).
    lab_mounts = {path.relative_to("/tmp").parts[0] for path, _ in hidden_by_private_mounts()
                  if Path("/tmp") in path.parents}
    assert set(lab.run(switch, "ls -A /tmp").stdout.split()) == lab_mounts


def test_target_push_confirm_saves_then_a_second_push_has_nothing_to_do(lab: Lab, switch: str,
                                                                         rendered: str) -> None:
    before = running(lab, switch)
    candidate = json.loads(rendered)
    device = driver(lab, switch)
    try:
        device.load_replace_candidate(config=rendered)
        device.commit_config(message="run-1", revert_in=120)
        assert device.has_pending_commit() and device.pending_commit_id() == "run-1"
        assert json.loads(saved_text(lab, switch)) == before  # not saved before the confirm
        device.confirm_commit()
        assert not device.has_pending_commit()
        device.load_replace_candidate(config=rendered)
        assert device.compare_config() == ""
        assert device.intent_check(rendered) == ""
    finally:
        device.close()
    after = running(lab, switch)
    assert holds(after, candidate) == []
    assert not_owned(after) == not_owned(before)  # BGP, ACL, lanes, buffer pools, ...: byte for byte
    assert gcu.outside_owned_scope(after, candidate) == gcu.outside_owned_scope(before, candidate)
    assert json.loads(saved_text(lab, switch)) == after  # config save -y
    assert checkpoints(lab, switch) == ["fabricgen-run-1.cp.json"]


def operator_patch(lab: Lab, host: str, patch: list[dict[str, Any]]) -> None:
    """A change someone makes on the switch itself, outside fabricgen (its own config apply-patch)."""
    lab.run(host, f"echo '{json.dumps(patch)}' > /root/operator.json && config apply-patch /root/operator.json",
            check=True)


def test_target_rollback_of_a_confirmed_push_restores_what_it_changed_and_keeps_later_changes(
        lab: Lab, switch: str, rendered: str) -> None:
    before = running(lab, switch)
    device = driver(lab, switch)
    try:
        device.load_replace_candidate(config=rendered)
        device.commit_config(message="run-2", revert_in=120)
        device.confirm_commit()
        snapshot = device.last_snapshot
        assert snapshot and device.intent_check(rendered) == ""
        operator_patch(lab, switch, [{"op": "replace", "path": "/BGP_NEIGHBOR/10.0.0.1/holdtime", "value": "30"}])
        device.rollback()
        assert device.intent_check(rendered) == snapshot
        assert not device.has_pending_commit()
    finally:
        device.close()
    after = running(lab, switch)
    assert after["BGP_NEIGHBOR"]["10.0.0.1"]["holdtime"] == "30"  # the operator's change, made since, stays
    after["BGP_NEIGHBOR"]["10.0.0.1"]["holdtime"] = before["BGP_NEIGHBOR"]["10.0.0.1"]["holdtime"]
    assert after == before
    assert json.loads(saved_text(lab, switch)) == running(lab, switch)  # what a reboot loads: the rollback


def test_target_rollback_of_a_pending_commit_rolls_back_its_checkpoint(lab: Lab, switch: str,
                                                                        rendered: str) -> None:
    before, saved = running(lab, switch), saved_text(lab, switch)
    device = driver(lab, switch)
    try:
        device.load_replace_candidate(config=rendered)
        device.commit_config(message="run-6", revert_in=120)
        device.rollback()
        assert not device.has_pending_commit()
        assert device.intent_check(rendered) == device.last_snapshot
    finally:
        device.close()
    assert running(lab, switch) == before and saved_text(lab, switch) == saved
    assert ["rollback", "fabricgen-run-6"] in config_calls(lab, switch)


KILLED_CONTROLLER = """
import sys, time, napalm
address, key, known, candidate = sys.argv[1:5]
device = napalm.get_network_driver("fabricgen_sonic")(address, "root", None, timeout=30,
                                                      optional_args={"key_file": key, "known_hosts": known})
device.open()
device.load_replace_candidate(config=open(candidate).read())
device.commit_config(message="run-3", revert_in=int(sys.argv[5]))
print("committed", flush=True)
time.sleep(600)
"""


def test_target_unconfirmed_commit_reverts_on_the_switch_after_the_controller_is_killed(
        lab: Lab, switch: str, rendered: str, tmp_path: Path) -> None:
    before, saved = running(lab, switch), saved_text(lab, switch)
    candidate = tmp_path / "config_db.json"
    candidate.write_text(rendered)
    controller = subprocess.Popen(
        [sys.executable, "-c", KILLED_CONTROLLER, lab.address(switch), str(lab.key_file), str(lab.known_hosts),
         str(candidate), str(REVERT_S)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert controller.stdout is not None
        line = controller.stdout.readline().strip()
        assert line == "committed", controller.stderr.read() if controller.stderr else ""
        assert holds(running(lab, switch), json.loads(rendered)) == []
    finally:
        controller.send_signal(signal.SIGKILL)
        controller.communicate(timeout=30)
    marker = lab.inside(switch, "/var/lib/fabricgen/commits/run-3/reverted")  # written once its rollback is done
    deadline = time.monotonic() + REVERT_WAIT_S
    while not (marker.exists() and marker.read_text().endswith("\n")) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert running(lab, switch) == before, "the switch did not revert by itself"
    assert saved_text(lab, switch) == saved
    reverted = marker.read_text().split()
    assert reverted[:2] == ["0", "timer"]
    assert not lab.inside(switch, "/var/lib/fabricgen/pending").exists()


def test_target_refuses_an_invalid_value_and_nothing_is_changed(lab: Lab, switch: str, rendered: str) -> None:
    before, saved = running(lab, switch), saved_text(lab, switch)
    broken = json.loads(rendered)
    broken["PORT"]["Ethernet0"]["mtu"] = "99999"  # sonic-port.yang: mtu is a uint16 of 68..9216
    device = driver(lab, switch)
    try:
        device.load_replace_candidate(config=json.dumps(broken))
        with pytest.raises(CommitError, match=r"nothing was changed.*Failed validating patch"):
            device.commit_config(message="run-4", revert_in=120)
        assert not device.has_pending_commit()
    finally:
        device.close()
    assert running(lab, switch) == before and saved_text(lab, switch) == saved
    assert checkpoints(lab, switch) == []


def test_target_what_gcu_cannot_change_is_refused_before_anything_is_sent(lab: Lab, switch: str,
                                                                          rendered: str) -> None:
    before = running(lab, switch)
    breakout = json.loads(rendered)
    breakout["PORT"]["Ethernet0"]["lanes"] = "0,1,2,3"  # a 4-lane breakout the switch does not have
    device = driver(lab, switch)
    try:
        device.load_replace_candidate(config=json.dumps(breakout))
        with pytest.raises(CommitError, match=r"nothing was changed.*PORT\|Ethernet0: lanes"):
            device.commit_config(message="run-5", revert_in=120)
    finally:
        device.close()
    assert running(lab, switch) == before
    assert config_calls(lab, switch) == []  # GCU was never called


def test_target_a_fec_the_port_does_not_support_is_refused_before_anything_is_sent(lab: Lab, switch: str,
                                                                                   rendered: str) -> None:
    before = running(lab, switch)
    firecode = json.loads(rendered)
    firecode["PORT"]["Ethernet8"]["fec"] = "fc"  # YANG allows it; this port's STATE_DB supported_fecs: rs,none
    device = driver(lab, switch)
    try:
        device.load_replace_candidate(config=json.dumps(firecode))
        with pytest.raises(CommitError, match=r"nothing was changed.*PORT\|Ethernet8: fec fc is not among"):
            device.compare_config()
    finally:
        device.close()
    assert running(lab, switch) == before
    assert config_calls(lab, switch) == []


@pytest.mark.parametrize(("patch", "error"), [
    ([{"op": "replace", "path": "/BUFFER_POOL/ingress_lossless_pool/size", "value": "60000000"}],
     "Error: Modification of BUFFER_POOL table is illegal- validating function "
     "generic_config_updater.field_operation_validators.rdma_config_update_validator returned False"),
    ([{"op": "remove", "path": "/PFC_WD/GLOBAL"}],
     "Error: Given patch operation is invalid. Operation: remove is illegal on field: /PFC_WD/GLOBAL"),
    ([{"op": "replace", "path": "/PORT/Ethernet0/fec", "value": "fast"}], "Error: Failed validating patch: "),
    ([{"op": "replace", "path": "/PORT/Ethernet0/fec", "value": "fc"}],  # valid YANG; STATE_DB lists rs, none
     "Error: Modification of PORT table is illegal- validating function "
     "generic_config_updater.field_operation_validators.port_config_update_validator returned False"),
    ([{"op": "remove", "path": "/NTP_SERVER/10.20.0.1"}],
     "Error: localhost: given patch is not valid because it will result in empty tables"),
])
def test_target_refuses_what_gcu_refuses_and_changes_nothing(lab: Lab, switch: str, patch: list[dict[str, Any]],
                                                             error: str) -> None:
    """The target itself (no driver): sonic-utilities' replies, exit status 2 (click's usage error)."""
    before = running(lab, switch)
    done = lab.run(switch, f"echo '{json.dumps(patch)}' > /root/p.json && config apply-patch /root/p.json")
    assert done.returncode == 2
    assert any(line.startswith(error) for line in done.stderr.splitlines()), done.stderr
    assert running(lab, switch) == before
