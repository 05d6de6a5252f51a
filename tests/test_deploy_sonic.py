"""The SONiC push driver (``fabricgen_sonic``, found through NAPALM) against the SONiC lab target, on SONiC's code.

No SONiC image runs here, but SONiC's config path does: the lab host (tests/targets/sonic.py) keeps CONFIG_DB in a
real redis-server in its namespace and answers ``config apply-patch``, ``checkpoint``, ``rollback`` with
sonic-utilities' own generic_config_updater of the switch's release (202411, 202505, 202511, from
<vendor data>/sonic-gcu) and that release's YANG models, behind a real OpenSSH server. The switch starts as an SN4700
leaf as SONiC ships it (lanes, aliases, BGP, an ACL, SONiC's AZURE QoS and buffer templates on all 32 ports). What
the switch holds is read from its Redis and /etc/sonic directly, never through the driver.

GCU's sorter is slow (about a CPU-minute a sort of one rendered port here, docs/testing.md): the lab pushes use
leaf1's rendered config narrowed to one port (``one_port``), each release's push, no-op, ECN change and rollback run
in one test on one switch start, and the commit takes its diff's dry run, so the rendered port is sorted twice a
release. Those three are ``slow_lab`` (.ci/run runs them once, after ./tests/run: docs/testing.md has what they
cost). The other lab tests change a field or two (a sort of seconds) and run in every suite; GCU's refusals before
the sort take seconds (tests/test_sonic_gcu_oracle.py).

The first tests need no lab: they pin the owned-scope rules on plain dicts. The last ones run ``fabricgen push`` as a
user does, on a terminal (a pty), against a switch one field short of leaf1's rendered config: what the prompt shows
of the ports the push bounces, and what push says without --allow-disruptive.
"""

from __future__ import annotations

import copy
import importlib
import json
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import napalm
import pytest
import redis
import yaml
from napalm.base.exceptions import CommitError

from fabricgen.platforms.sonic import gcu
from fabricgen.platforms.sonic.capability import OWNED_TABLES

from lab import MIXED_INTENT, MIXED_INVENTORY, Lab, hidden_by_private_mounts
from test_lab import require_lab

ROOT = Path(__file__).resolve().parent.parent
# The target module, as the lab loads it.
target = importlib.import_module("targets.sonic")
sonic_gcu = importlib.import_module("targets.sonic_gcu")

REVERT_S = 15
REVERT_WAIT_S = REVERT_S + 1800  # the switch's timer, plus GCU's rollback (its sorter) on a loaded 2-core machine


# --- the owned scope and GCU's refusals, on dicts ------------------------------------------------------------

def starting_config() -> dict[str, Any]:
    config: dict[str, Any] = target.starting_config("202411")
    return config


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


def test_what_fabricgen_does_not_send_is_named_before_anything_is_sent() -> None:
    running = starting_config()  # 202411: GCU adds no buffer profile and changes none but dynamic_th/xoff
    candidate = {
        "PORT": {"Ethernet512": {"mtu": "9100"}, "Ethernet8": {"lanes": "9,10,11,12,13,14,15,16", "mtu": "9100"}},
        "BUFFER_PROFILE": {"pg_lossless_400000_5m_profile": {"pool": "ingress_lossless_pool", "size": "0"},
                           "ingress_lossy_profile": {"pool": "ingress_lossless_pool", "size": "9216",
                                                     "dynamic_th": "3"}},
    }
    problems = gcu.refusals(running, candidate, gcu.owned_patch(running, candidate))
    assert sorted(problem.split(":")[0] for problem in problems) == [
        "/BUFFER_PROFILE/ingress_lossy_profile/size", "/BUFFER_PROFILE/pg_lossless_400000_5m_profile",
        "PORT|Ethernet512", "PORT|Ethernet8"]


def test_the_ports_gcu_bounces_are_those_whose_queues_qos_map_or_pgs_change() -> None:
    running = starting_config()
    candidate = {"QUEUE": {"Ethernet0|3": {"scheduler": "scheduler.1", "wred_profile": "AZURE_LOSSLESS"}},
                 "PORT_QOS_MAP": {"Ethernet8": {"pfc_enable": "3"}, "global": {"dscp_to_tc_map": "AZURE"}},
                 "PORT": {"Ethernet16": {"mtu": "9216"}}}
    assert gcu.plan(running, candidate).bounced == ["Ethernet0", "Ethernet8"]  # an MTU or global map: no bounce


def test_the_time_limits_grow_with_the_square_of_the_ports_the_patch_names_up_to_an_hour() -> None:
    """fabricgen/platforms/sonic/driver.py gcu_timeout, from bench/gcu_sorter.py's measurement (docs/testing.md):
    the golden fabric leaf narrowed to 1, 2, 4, 8 data ports took 18.9, 53.3, 185.1, 788.5 s CPU here."""
    from fabricgen.platforms.sonic.driver import GCU_BASE_S, GCU_MARGIN, gcu_timeout

    bench = importlib.import_module("bench.gcu_sorter")

    golden = json.loads((ROOT / "golden" / "fabric" / "leaf1" / "config_db.json").read_text())
    running = starting_config()
    for count, cpu in ((1, 18.9), (2, 53.3), (4, 185.1), (8, 788.5)):
        ports = sorted(golden["PORT"], key=gcu.natural)[:count]
        planned = gcu.plan(running, bench.narrowed(golden, ports))  # the patch the measurement sorted
        assert planned.touched == ports  # the sort's size: Ethernet240/248 are down, named but not bounced
        assert gcu_timeout(planned.touched) >= GCU_BASE_S + GCU_MARGIN * cpu
    assert [gcu_timeout([f"Ethernet{8 * i}" for i in range(n)]) for n in (0, 1, 2, 4, 8, 9, 64)] == [
        120, 200, 376, 1016, 3448, 3600, 3600]
    # optional_args gcu_margin: a slower or busier switch CPU (the lab's, on a shared machine: tests/targets/sonic.py)
    slow = napalm.get_network_driver("fabricgen_sonic")("192.0.2.11", "root", optional_args={"gcu_margin": 40})
    assert [slow._limit([f"Ethernet{8 * i}" for i in range(n)]) for n in (1, 2, 4)] == [920, 2680, 3600]


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


def test_a_change_that_bounces_ports_is_committed_only_with_allow_disruptive() -> None:
    """push's check on the driver's compare result (fabricgen/deploy/engine.py): the SONiC driver names the ports
    GCU bounces in ``disruption``; without --allow-disruptive nothing is committed and the reason says why."""
    from fabricgen.deploy.engine import _refuse_disruption
    from fabricgen.deploy.outcome import PushOptions

    device = napalm.get_network_driver("fabricgen_sonic")("192.0.2.11", "root")
    device.disruption = ["Ethernet0", "Ethernet8"]
    with pytest.raises(RuntimeError, match=r"nothing was changed: this change takes Ethernet0, Ethernet8 admin-down.*"
                                           r"--allow-disruptive"):
        _refuse_disruption("leaf1", device, PushOptions())
    _refuse_disruption("leaf1", device, PushOptions(allow_disruptive=True))
    device.disruption = []
    _refuse_disruption("leaf1", device, PushOptions())


def test_a_login_other_than_root_runs_config_through_sudo() -> None:
    """sonic-utilities' config refuses anyone but root; SONiC's login is admin, with sudo."""
    network_driver = napalm.get_network_driver("fabricgen_sonic")
    assert network_driver("192.0.2.11", "admin").config("save -y") == "sudo -n config save -y"
    assert network_driver("192.0.2.11", "root").config("save -y") == "config save -y"


def test_a_candidate_with_tables_fabricgen_does_not_own_is_refused() -> None:
    with pytest.raises(gcu.CandidateError, match="BGP_NEIGHBOR"):
        gcu.parse_candidate(json.dumps({"BGP_NEIGHBOR": {"10.0.0.1": {"asn": "1"}}}))


# --- against the lab target ------------------------------------------------------------------------------

def require_target() -> None:
    reason = target.unavailable()
    required = "1" in (os.environ.get("FABRICGEN_REQUIRE_SHARED"), os.environ.get("FABRICGEN_REQUIRE_YANG"))
    if reason and required:
        pytest.fail(f"FABRICGEN_REQUIRE_SHARED=1 but {reason}", pytrace=False)
    if reason:
        pytest.skip(reason=reason)


@pytest.fixture(scope="module")
def lab(sonic_yang_models: Path) -> Iterator[Lab]:  # the target validates against the vendor data (conftest.py)
    require_lab()
    require_target()
    with Lab.up(1, prefix=f"s{os.getpid()}", kinds=["sonic"]) as built:
        yield built


def one_port(text: str, port: str = "Ethernet0") -> str:
    """A rendered config_db.json narrowed to one data port (and the switch-wide tables): GCU's sorter takes
    minutes per port, so the lab pushes one."""
    config = json.loads(text)
    for table in ("PORT", "PORT_QOS_MAP", "QUEUE", "BUFFER_PG", "PFC_WD"):
        config[table] = {key: row for key, row in config.get(table, {}).items()
                         if key.split("|")[0] in (port, "global", "GLOBAL")}
    config["CABLE_LENGTH"] = {name: {port: row[port]} for name, row in config["CABLE_LENGTH"].items()}
    return json.dumps({table: rows for table, rows in config.items() if rows}, indent=4, sort_keys=True)


@pytest.fixture(scope="module")
def rendered(mixed_rendered: Path) -> str:
    """leaf1's config_db.json, rendered by `fabricgen render` from the bundled mixed example, one port of it."""
    return one_port((mixed_rendered / "leaf1" / "config_db.json").read_text())


def fresh_switch(lab: Lab, release: str, *, with_pfcwd: bool = True) -> str:
    """The lab's switch, rebuilt and installed with ``release``."""
    host = next(iter(lab.hosts))
    lab.reset(host)
    lab.run(host, f"sonic-lab-reimage {release}" + ("" if with_pfcwd else " --without-pfcwd"), check=True)
    return host


@pytest.fixture
def switch(lab: Lab) -> str:
    return fresh_switch(lab, "202411")


def driver(lab: Lab, host: str) -> Any:
    network_driver = napalm.get_network_driver("fabricgen_sonic")
    device = network_driver(lab.address(host), "root", None, timeout=30,
                            optional_args={"key_file": str(lab.key_file), "known_hosts": str(lab.known_hosts),
                                           "gcu_margin": target.LAB_GCU_MARGIN})
    device.open()
    return device


def running(lab: Lab, host: str) -> dict[str, Any]:
    """CONFIG_DB, read from the switch's redis-server (its unix socket in the lab's state directory)."""
    config: dict[str, Any] = sonic_gcu.read_config(redis.Redis(unix_socket_path=str(lab.state_dir(host) / "redis.sock"),
                                                               db=sonic_gcu.CONFIG_DB, decode_responses=True))
    return config


def saved_text(lab: Lab, host: str) -> str:
    """The startup config (/etc/sonic/config_db.json)."""
    return lab.inside(host, "/etc/sonic/config_db.json").read_text()


def checkpoints(lab: Lab, host: str) -> list[str]:
    folder = lab.inside(host, "/etc/sonic/checkpoints")
    return sorted(path.name for path in folder.glob("*")) if folder.is_dir() else []


def config_calls(lab: Lab, host: str) -> list[list[str]]:
    log = lab.host_dir(host) / "nic" / "tool-calls.jsonl"
    calls = [json.loads(line)["argv"] for line in log.read_text().splitlines()] if log.exists() else []
    return [call[1:] for call in calls if Path(call[0]).name in ("config", "pfcwd")]


def not_owned(config: dict[str, Any]) -> dict[str, Any]:
    """Tables fabricgen does not own, and in PORT what is never fabricgen's (lanes, alias, index, autoneg)."""
    rest = {table: rows for table, rows in config.items() if table not in OWNED_TABLES}
    rest["PORT"] = {port: {name: value for name, value in entry.items()
                           if name not in ("admin_status", "mtu", "speed", "fec", "description")}
                    for port, entry in config["PORT"].items()}
    return rest


def test_target_diff_names_the_patch_and_the_bounced_port_and_leaves_no_trace(lab: Lab, switch: str,
                                                                              rendered: str) -> None:
    before, saved = running(lab, switch), saved_text(lab, switch)
    device = driver(lab, switch)
    try:
        device.load_replace_candidate(config=rendered)
        diff = device.compare_config()
        bounced = device.disruption
        device.discard_config()
        pending = device.has_pending_commit()
    finally:
        device.close()
    lines = diff.splitlines()
    assert "replace /PORT/Ethernet0/fec: none → rs" in lines
    assert "replace /PFC_WD/GLOBAL/POLL_INTERVAL: 200 → 100" in lines
    assert "replace /WRED_PROFILE/AZURE_LOSSLESS/green_min_threshold: 1048576 → 5000" in lines  # 202411's rule
    assert any(line.startswith("! not changed on SONiC 202411: WRED_PROFILE|AZURE_LOSSLESS") for line in lines)
    assert lines[-1].startswith("! disruptive: GCU takes Ethernet0 admin-down and up again")
    # What the switch's own sorter took down in its dry run is what fabricgen's rule (RequiredValueIdentifier) says
    assert bounced == ["Ethernet0"] == gcu.plan(before, json.loads(rendered)).bounced
    # no trace: the switch's config, saved config and checkpoints as they were; only a dry run reached GCU
    assert running(lab, switch) == before and saved_text(lab, switch) == saved
    assert checkpoints(lab, switch) == [] and not pending
    assert config_calls(lab, switch) == [["apply-patch", "--dry-run", config_calls(lab, switch)[0][2]]]
    # Nothing in /tmp but where the lab shows the checkout to the target (a checkout under /tmp, as in CI).
    lab_mounts = {path.relative_to("/tmp").parts[0] for path, _ in hidden_by_private_mounts()
                  if Path("/tmp") in path.parents}
    assert set(lab.run(switch, "ls -A /tmp").stdout.split()) == lab_mounts


# The flows that commit and roll back the rendered port through SONiC's real patch sorter: a minute of CPU each sort
# on this kind of machine (docs/testing.md), so .ci/run runs them once, after ./tests/run (slow_lab); the dry runs,
# the watchdog, the kill -9 revert, the refusals and the push prompt below sort a field or two and run in every suite.
@pytest.mark.slow_lab("the rendered port's first push through SONiC's own patch sorter, per release")
@pytest.mark.parametrize("release", ["202411", "202505", "202511"])
def test_target_first_push_no_op_ecn_change_and_rollback_on_each_release(lab: Lab, release: str,
                                                                          rendered: str) -> None:
    """The real sorter on the rendered port twice (the first push's dry run and apply), then on WRED fields only."""
    host = fresh_switch(lab, release)
    before = running(lab, host)
    device = driver(lab, host)
    try:
        device.load_replace_candidate(config=rendered)  # as push does: the diff, then the commit of what it showed
        assert device.compare_config().splitlines()[-1].startswith("! disruptive: GCU takes Ethernet0 admin-down")
        device.commit_config(message="run-1", revert_in=600)
        # One sort for the check and one for the apply: the commit took the diff's dry run of the same patch
        assert [call[1] == "--dry-run" for call in config_calls(lab, host) if call[0] == "apply-patch"] == \
            [True, False]
        assert device.has_pending_commit()
        assert json.loads(saved_text(lab, host)) == before  # not saved before the confirm
        device.confirm_commit()
        assert device.rollback_disruption("run-1") == ["Ethernet0"]  # what a rollback would bounce, before it runs
        first = running(lab, host)
        device.load_replace_candidate(config=rendered)
        assert device.compare_config() == "" and device.intent_check(rendered) == ""  # the second push: nothing
        changed = json.loads(rendered)
        changed["WRED_PROFILE"]["ecn_rdma"]["green_max_threshold"] = "60000"  # a new ECN threshold
        device.load_replace_candidate(config=json.dumps(changed))
        diff = device.compare_config().splitlines()
        assert [line for line in diff if not line.startswith("! not changed")] == [
            f"replace /WRED_PROFILE/{'ecn_rdma' if release >= '202511' else 'AZURE_LOSSLESS'}/green_max_threshold:"
            " 40000 → 60000"]
        assert device.disruption == []  # a WRED threshold bounces no port
        device.commit_config(message="run-2", revert_in=600)
        assert device.rollback_disruption("run-2") == []  # pending: the whole checkpoint, which differs in WRED only
        device.confirm_commit()
        device.rollback()  # the ECN change undone: the switch as the first push left it
    finally:
        device.close()
    after = running(lab, host)
    assert after == first
    assert not_owned(after) == not_owned(before)  # BGP, ACL, lanes, buffer pools, ...: as they were
    # What the push owns on this release: up to 202505 the switch's own lossless WRED profile (its green fields)
    owned, _, _ = gcu.for_release(before, json.loads(rendered))
    assert gcu.outside_owned_scope(after, owned) == gcu.outside_owned_scope(before, owned)
    assert json.loads(saved_text(lab, host)) == after
    assert checkpoints(lab, host) == ["fabricgen-run-1.cp.json", "fabricgen-run-2.cp.json"]


def owned_tables(running_config: dict[str, Any]) -> dict[str, Any]:
    """The switch's own rows of the tables fabricgen owns: a candidate that changes nothing."""
    return {table: rows for table, rows in copy.deepcopy(running_config).items() if table in OWNED_TABLES}


def test_target_a_switch_without_pfc_wd_gets_its_watchdog_from_pfcwd_start(lab: Lab, rendered: str) -> None:
    """The rendered port's watchdog and PFC priorities on the switch's own config: the patch bounces Ethernet0 and
    pfcwd starts after it, as in a first push, at a sort of seconds (the rendered port's whole QoS: the flows above)."""
    host = fresh_switch(lab, "202511", with_pfcwd=False)
    wanted = json.loads(rendered)
    candidate = owned_tables(running(lab, host))
    candidate["PFC_WD"] = wanted["PFC_WD"]
    candidate["PORT_QOS_MAP"]["Ethernet0"]["pfc_enable"] = wanted["PORT_QOS_MAP"]["Ethernet0"]["pfc_enable"]
    device = driver(lab, host)
    try:
        device.load_replace_candidate(config=json.dumps(candidate))
        diff = device.compare_config().splitlines()
        assert diff[:2] == ["replace /PORT_QOS_MAP/Ethernet0/pfc_enable: 3,4 → 3",
                            "pfcwd start --action drop --restoration-time 200 Ethernet0 200"]
        device.commit_config(message="run-7", revert_in=600)
        device.confirm_commit()
        assert device.intent_check(json.dumps(candidate)) == ""
        started = running(lab, host)["PFC_WD"]
        device.rollback()  # a confirmed commit undone: the watchdog it started goes too (no PFC_WD table again)
        assert "PFC_WD" not in running(lab, host)
    finally:
        device.close()
    assert started == {"Ethernet0": {"action": "drop", "detection_time": "200", "restoration_time": "200"},
                       "GLOBAL": {"POLL_INTERVAL": "100"}}
    calls = config_calls(lab, host)
    # pfcwd after the patch that set the port's PFC priorities (pfcwd skips a port without them)
    assert calls.index(["start", "--action", "drop", "--restoration-time", "200", "Ethernet0", "200"]) > \
        next(i for i, call in enumerate(calls) if call[0] == "apply-patch" and call[1] != "--dry-run")


KILLED_CONTROLLER = """
import sys, time, napalm
address, key, known, candidate, margin = sys.argv[1:6]
device = napalm.get_network_driver("fabricgen_sonic")(address, "root", None, timeout=30,
                                                      optional_args={"key_file": key, "known_hosts": known,
                                                                     "gcu_margin": float(margin)})
device.open()
device.load_replace_candidate(config=open(candidate).read())
device.commit_config(message="run-3", revert_in=int(sys.argv[6]))
print("committed", flush=True)
time.sleep(3600)
"""


def ecn_change(running_config: dict[str, Any]) -> dict[str, Any]:
    """The switch's own owned tables with one new ECN threshold: a one-field patch, so the commit and the timer's
    rollback cost the sorter seconds, not the minutes a port bounce costs (what is tested is who reverts)."""
    candidate = {table: rows for table, rows in copy.deepcopy(running_config).items() if table in OWNED_TABLES}
    candidate["WRED_PROFILE"]["AZURE_LOSSLESS"]["green_max_threshold"] = "4194304"  # above its green_min
    return candidate


def test_target_unconfirmed_commit_reverts_on_the_switch_after_the_controller_is_killed(
        lab: Lab, switch: str, tmp_path: Path) -> None:
    before, saved = running(lab, switch), saved_text(lab, switch)
    candidate = tmp_path / "config_db.json"
    candidate.write_text(json.dumps(ecn_change(before)))
    controller = subprocess.Popen(
        [sys.executable, "-c", KILLED_CONTROLLER, lab.address(switch), str(lab.key_file), str(lab.known_hosts),
         str(candidate), str(target.LAB_GCU_MARGIN), str(REVERT_S)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert controller.stdout is not None
        line = controller.stdout.readline().strip()
        assert line == "committed", controller.stderr.read() if controller.stderr else ""
        committed = running(lab, switch)  # read at once: the switch's timer fires REVERT_S after the commit
    finally:
        controller.send_signal(signal.SIGKILL)  # kill -9: no confirm, no goodbye
        controller.communicate(timeout=30)
    marker = lab.inside(switch, "/var/lib/fabricgen/commits/run-3/reverted")  # written once its rollback is done
    deadline = time.monotonic() + REVERT_WAIT_S
    while not (marker.exists() and marker.read_text().endswith("\n")) and time.monotonic() < deadline:
        time.sleep(1)
    assert committed["WRED_PROFILE"]["AZURE_LOSSLESS"]["green_max_threshold"] == "4194304"
    assert running(lab, switch) == before, "the switch did not revert by itself"
    assert saved_text(lab, switch) == saved
    assert marker.read_text().split()[:2] == ["0", "timer"]
    assert not lab.inside(switch, "/var/lib/fabricgen/pending").exists()


def test_target_refuses_an_invalid_value_and_nothing_is_changed(lab: Lab, switch: str, rendered: str) -> None:
    before, saved = running(lab, switch), saved_text(lab, switch)
    broken = json.loads(rendered)
    broken["PORT"]["Ethernet0"]["mtu"] = "99999"  # sonic-port.yang: mtu is a uint16 of 68..9216
    device = driver(lab, switch)
    try:
        device.load_replace_candidate(config=json.dumps(broken))
        with pytest.raises(CommitError, match=r"nothing was changed.*Given patch will produce invalid config"):
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


@pytest.mark.parametrize(("patch", "error"), [
    # 202411 lets the lossless pool's size and xoff change on a Spectrum-3 (its field rules), not the egress pool
    ([{"op": "replace", "path": "/BUFFER_POOL/egress_lossless_pool/size", "value": "60000000"}],
     "Error: Modification of BUFFER_POOL table is illegal- validating function "
     "generic_config_updater.field_operation_validators.rdma_config_update_validator returned False"),
    ([{"op": "remove", "path": "/PFC_WD/GLOBAL"}],
     "Error: Given patch operation is invalid. Operation: remove is illegal on field: /PFC_WD/GLOBAL"),
    ([{"op": "add", "path": "/WRED_PROFILE/ecn_rdma", "value": {"ecn": "ecn_all", "green_min_threshold": "5000",
                                                                  "green_max_threshold": "40000"}}],
     "Error: Modification of WRED_PROFILE table is illegal- validating function "
     "generic_config_updater.field_operation_validators.rdma_config_update_validator returned False"),
    ([{"op": "replace", "path": "/PORT/Ethernet0/fec", "value": "fc"}],  # valid YANG; STATE_DB lists rs, none
     "Error: Modification of PORT table is illegal- validating function "
     "generic_config_updater.field_operation_validators.port_config_update_validator returned False"),
    ([{"op": "remove", "path": "/NTP_SERVER/10.20.0.1"}],
     "Error: localhost: given patch is not valid because it will result in empty tables"),
])
def test_target_refuses_what_gcu_refuses_and_changes_nothing(lab: Lab, switch: str, patch: list[dict[str, Any]],
                                                             error: str) -> None:
    """The target itself (no driver), SONiC 202411: GCU's own refusals, exit status 2 (click's usage error)."""
    before = running(lab, switch)
    done = lab.run(switch, f"echo '{json.dumps(patch)}' > /root/p.json && config apply-patch /root/p.json")
    assert done.returncode == 2
    assert any(line.startswith(error) for line in done.stderr.splitlines()), done.stderr
    assert running(lab, switch) == before


# --- the push prompt: what a user sees before a change bounces ports ------------------------------------------

def cli_inputs(lab: Lab, host: str, directory: Path) -> tuple[Path, Path]:
    """intent/mixed.yaml and inventory/mixed with leaf1 the lab's switch (the others keep their addresses: the
    commands name leaf1 alone, nothing else is reached)."""
    intent, inventory = directory / "intent.yaml", directory / "inventory"
    inventory.mkdir()
    shutil.copyfile(MIXED_INTENT, intent)
    for name in ("groups.yaml", "defaults.yaml"):
        shutil.copyfile(MIXED_INVENTORY / name, inventory / name)
    devices: dict[str, Any] = yaml.safe_load((MIXED_INVENTORY / "hosts.yaml").read_text())
    leaf1 = devices["leaf1"]
    leaf1.setdefault("data", {})["mgmt_address"] = leaf1["hostname"]  # what the rendered config plans for
    leaf1.update(hostname=lab.address(host), **target.lab_connection(lab, host))
    (inventory / "hosts.yaml").write_text(yaml.safe_dump(devices, sort_keys=False))
    return intent, inventory


def hold_all_but_one_field(lab: Lab, host: str, rendered_config: Path) -> None:
    """The switch made to hold its whole rendered config but Ethernet0's PFC priorities (the template's 3,4), written
    into its Redis: its push is then one field that bounces one port, a sort of seconds (four ports: half an hour)."""
    now = running(lab, host)
    held = gcu.patched(now, gcu.plan(now, json.loads(rendered_config.read_text())).changes)
    held["PORT_QOS_MAP"]["Ethernet0"]["pfc_enable"] = now["PORT_QOS_MAP"]["Ethernet0"]["pfc_enable"]
    db = redis.Redis(unix_socket_path=str(lab.state_dir(host) / "redis.sock"), db=sonic_gcu.CONFIG_DB,
                     decode_responses=True)
    try:
        sonic_gcu.write_config(db, held)
    finally:
        db.close()


@pytest.fixture
def one_field_from_rendered(lab: Lab, mixed_rendered: Path) -> str:
    """A SONiC 202511 switch holding leaf1's whole rendered config but one field that bounces Ethernet0."""
    host = fresh_switch(lab, "202511")
    hold_all_but_one_field(lab, host, mixed_rendered / "leaf1" / "config_db.json")
    return host


ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
PROMPT = "push to 1 device(s) with changes, waves of 1? [y/N]: "
BOUNCE_LINE = "leaf1: the push takes Ethernet0 admin-down and up again (SONiC GCU)"
DIFF_SHOWN = ["--- leaf1", "replace /PORT_QOS_MAP/Ethernet0/pfc_enable: 3,4 → 3",
              "! disruptive: GCU takes Ethernet0 admin-down and up again around this change (sonic-utilities "
              "patch_sorter.py: QUEUE, PORT_QOS_MAP, BUFFER_PG changes need the port down)", "diff"]


def on_terminal(argv: list[str], answer: str, cwd: Path) -> tuple[int, list[str]]:
    """``fabricgen ARGV`` on a terminal (a pty: stdin, stdout and stderr), ``answer`` typed at its prompt: its exit
    status and the lines the terminal showed (the echoed answer included, colours stripped)."""
    main, terminal = os.openpty()
    process = subprocess.Popen([sys.executable, "-m", "fabricgen", *argv], stdin=terminal, stdout=terminal,
                               stderr=terminal, cwd=cwd, env={**os.environ, "COLUMNS": "200"}, start_new_session=True)
    os.close(terminal)
    shown, answered = b"", False
    try:
        while True:
            ready, _, _ = select.select([main], [], [], 1800)  # a hang guard, far above the dry run's seconds
            assert ready, f"fabricgen neither asked nor ended: {shown.decode(errors='replace')}"
            try:
                chunk = os.read(main, 4096)
            except OSError:  # EIO: every process holding the terminal has ended
                break
            if not chunk:
                break
            shown += chunk
            if not answered and PROMPT.encode() in shown:
                os.write(main, answer.encode() + b"\n")
                answered = True
        status = process.wait(60)
    finally:
        os.close(main)
        if process.poll() is None:
            process.kill()
    return status, [ANSI.sub("", line).rstrip() for line in shown.decode().replace("\r", "").splitlines()]


def test_the_push_prompt_names_the_bounced_ports_and_no_pushes_nothing(
        lab: Lab, one_field_from_rendered: str, tmp_path: Path) -> None:
    host = one_field_from_rendered
    before = running(lab, host)
    intent, inventory = cli_inputs(lab, host, tmp_path)
    status, shown = on_terminal(["push", str(intent), "-i", str(inventory), "--hosts", "leaf1", "--journal",
                                 str(tmp_path / "runs")], "n", tmp_path)
    assert status == 1, shown
    assert shown[:4] == DIFF_SHOWN
    assert re.fullmatch(r" leaf1  │ changes │ \d+\.\d\s+│", shown[6]), shown  # the diff's table, then the question
    assert shown[7:] == [BOUNCE_LINE, PROMPT + "n", "error: nothing was pushed"]
    assert running(lab, host) == before
    assert [call[:2] for call in config_calls(lab, host)] == [["apply-patch", "--dry-run"]]  # the diff's, only


def test_the_push_prompt_answered_yes_with_allow_disruptive_commits(
        lab: Lab, one_field_from_rendered: str, tmp_path: Path) -> None:
    host = one_field_from_rendered
    intent, inventory = cli_inputs(lab, host, tmp_path)
    status, shown = on_terminal(["push", str(intent), "-i", str(inventory), "--hosts", "leaf1", "--journal",
                                 str(tmp_path / "runs"), "--allow-disruptive", "--confirm-timeout", "600"], "y",
                                tmp_path)
    assert status == 0, shown
    assert shown[:4] == DIFF_SHOWN and shown[7:9] == [BOUNCE_LINE, PROMPT + "y"]
    assert any(re.fullmatch(r"\s*leaf1\s+│\s+confirmed\s+│.*", line) for line in shown), shown
    assert running(lab, host)["PORT_QOS_MAP"]["Ethernet0"]["pfc_enable"] == "3"


def test_push_yes_without_allow_disruptive_refuses_in_one_line_naming_the_ports(
        lab: Lab, one_field_from_rendered: str, tmp_path: Path) -> None:
    host = one_field_from_rendered
    before = running(lab, host)
    intent, inventory = cli_inputs(lab, host, tmp_path)
    done = subprocess.run([sys.executable, "-m", "fabricgen", "push", str(intent), "-i", str(inventory), "--hosts",
                           "leaf1", "--journal", str(tmp_path / "runs"), "--yes"], capture_output=True, text=True,
                          cwd=tmp_path, env={**os.environ, "COLUMNS": "200"}, timeout=1800, check=False)
    assert done.returncode == 1, done.stdout + done.stderr
    refusal = [line for line in done.stdout.splitlines() if "leaf1" in line and "failed" in line]
    assert len(refusal) == 1 and re.fullmatch(
        r"\s*leaf1\s+│\s+failed\s+│\s+\d+\.\d\s+│\s+nothing was changed: this change takes Ethernet0 admin-down and "
        r"up again \(SONiC GCU\); drain them, then push with --allow-disruptive\s*", refusal[0]), done.stdout
    assert running(lab, host) == before
