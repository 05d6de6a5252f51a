"""Waves that never bounce two leaves of one GPU host's rails at once (fabricgen/deploy/waves.py), the disruption
line of `fabricgen plan`, and the bounced ports of `diff --format json`. Pure: resolved examples, no device."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fabricgen.cli.deploy import _show
from fabricgen.deploy.outcome import Outcome
from fabricgen.deploy.plan import waves
from fabricgen.deploy.waves import Held, apart, disruptive_gate, gpu_hosts, may_bounce, notes, reach
from fabricgen.load.fabric import load
from fabricgen.models.device import Fabric
from fabricgen.platforms.sonic import gcu
from fabricgen.resolve import resolve
from fabricgen.review.plan import Side, compare, to_json, to_markdown, to_text

from conftest import load_example

ROOT = Path(__file__).resolve().parent.parent
HOSTS = ("node1", "node2", "node3", "node4")


@pytest.fixture(scope="module")
def fabric() -> Fabric:
    """The bundled fabric: two SONiC leaves, each GPU host with one rail on each."""
    loaded = load_example("fabric")
    return resolve(loaded.intent, loaded.inventory, loaded.locate)


@pytest.fixture(scope="module")
def mixed() -> Fabric:
    """The mixed fabric: one SONiC leaf (leaf1), its hosts' other rails on NVUE (leaf3); SONiC spine1."""
    loaded = load_example("mixed")
    return resolve(loaded.intent, loaded.inventory, loaded.locate)


def test_the_hosts_a_leaf_reaches_come_from_the_cabling(fabric: Fabric) -> None:
    assert gpu_hosts(fabric, "leaf1") == set(HOSTS)
    assert gpu_hosts(fabric, "leaf2", ["Ethernet8", "Ethernet224"]) == {"node2"}  # an uplink reaches no host
    assert gpu_hosts(fabric, "spine1") == set()


def test_two_leaves_of_the_same_hosts_never_share_a_wave_when_what_they_bounce_is_not_known(fabric: Fabric) -> None:
    plan = waves(fabric, ["leaf1", "leaf2", "spine1"], canary=0, batch="100%")
    assert plan == [["leaf1", "leaf2"], ["spine1"]]
    split, held = apart(fabric, plan)  # push --yes: no device asked yet, every host link of a SONiC leaf may bounce
    assert split == [["leaf1"], ["leaf2"], ["spine1"]]
    assert held == [Held("leaf2", "leaf1", HOSTS)]
    assert notes(held, len(plan), len(split)) == [
        "leaf2 waits for leaf1's wave: both bounce links of GPU host(s) node1, node2, node3, node4 (never two "
        "leaves of one host's rails at once)", "waves: 2 → 3"]


def test_what_the_devices_own_diffs_bounce_decides_the_split(fabric: Fabric) -> None:
    plan = [["leaf1", "leaf2"]]
    # Different hosts' links: the two leaves may bounce together.
    assert apart(fabric, plan, {"leaf1": ["Ethernet0"], "leaf2": ["Ethernet8"]}) == (plan, [])
    # node1's two rails: apart.
    assert apart(fabric, plan, {"leaf1": ["Ethernet0"], "leaf2": ["Ethernet0", "Ethernet8"]}) == (
        [["leaf1"], ["leaf2"]], [Held("leaf2", "leaf1", ("node1",))])
    # A leaf that bounces nothing (or only uplinks) stays where it was.
    assert apart(fabric, plan, {"leaf1": ["Ethernet0"], "leaf2": []}) == (plan, [])
    assert apart(fabric, plan, {"leaf1": ["Ethernet224"], "leaf2": ["Ethernet0"]}) == (plan, [])
    # A leaf whose diff failed (None) may bounce any of its host links.
    assert apart(fabric, plan, {"leaf1": None, "leaf2": ["Ethernet24"]})[0] == [["leaf1"], ["leaf2"]]


def test_only_leaves_whose_platform_bounces_ports_are_split(mixed: Fabric) -> None:
    # leaf1 (SONiC) and leaf3 (NVUE) carry node1's and node3's two rails; NVUE's apply bounces no port.
    assert reach(mixed, ["leaf1", "leaf3", "spine1"]) == {"leaf1": {"node1", "node3"}}
    assert apart(mixed, [["leaf1", "leaf2", "leaf3", "leaf4"], ["spine1", "spine2"]]) == (
        [["leaf1", "leaf2", "leaf3", "leaf4"], ["spine1", "spine2"]], [])


@given(st.permutations(["leaf1", "leaf2", "node1", "node2", "spine1", "oob1"]),
       st.lists(st.sampled_from(["Ethernet0", "Ethernet8", "Ethernet16", "Ethernet24", "Ethernet224"]),
                max_size=3, unique=True),
       st.lists(st.sampled_from(["Ethernet0", "Ethernet8", "Ethernet16", "Ethernet24", "Ethernet240"]),
                max_size=3, unique=True),
       st.integers(min_value=1, max_value=6))
def test_every_device_stays_once_in_its_order_and_no_wave_bounces_one_host_twice(
        fabric: Fabric, order: list[str], one: list[str], two: list[str], size: int) -> None:
    plan = [order[start:start + size] for start in range(0, len(order), size)]
    bounced = {"leaf1": one, "leaf2": two}
    split, held = apart(fabric, plan, bounced)
    assert sorted(name for wave in split for name in wave) == sorted(order)
    assert [name for wave in split for name in wave if name not in {item.leaf for item in held}] == \
        [name for name in order if name not in {item.leaf for item in held}]
    for wave in split:
        reached = reach(fabric, wave, bounced)
        assert not (len(reached) == 2 and reached["leaf1"] & reached["leaf2"])
    apart_needed = bool(gpu_hosts(fabric, "leaf1", one) & gpu_hosts(fabric, "leaf2", two))
    together = any({"leaf1", "leaf2"} <= set(wave) for wave in plan)
    assert bool(held) == (apart_needed and together)


def test_the_bench_fabrics_two_sonic_leaves_of_every_host_go_in_different_waves(tmp_path: Path) -> None:
    """bench/make_fabric.py at 256 GPUs: 32 hosts with 8 rails, one leaf per rail; rails 0 and 4 are SONiC."""
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "make_fabric.py"), "--gpus", "256", "-o",
                           str(tmp_path)], capture_output=True, text=True, check=False, timeout=120)
    assert done.returncode == 0, done.stderr
    loaded = load(tmp_path / "intent.yaml", tmp_path / "inventory")
    bench = resolve(loaded.intent, loaded.inventory, loaded.locate)
    leaves = sorted(name for name, device in bench.devices.items() if device.role == "leaf")
    assert {name: bench.devices[name].platform for name in leaves if may_bounce(bench.devices[name])} == {
        "r0-leaf0": "sonic", "r4-leaf0": "sonic"}
    plan = waves(bench, leaves, canary=0, batch="100%")
    assert plan == [leaves]
    split, held = apart(bench, plan)
    assert split == [[name for name in leaves if name != "r4-leaf0"], ["r4-leaf0"]]
    assert [(item.leaf, item.after, len(item.hosts)) for item in held] == [("r4-leaf0", "r0-leaf0", 32)]


def golden(name: str) -> str:
    return (ROOT / "golden" / name / "config_db.json").read_text()


def test_the_plan_says_which_ports_gcu_bounces_on_each_sonic_switch() -> None:
    base = golden("fabric/leaf1")
    head = json.loads(base)
    head["PORT_QOS_MAP"]["Ethernet8"]["pfc_enable"] = "3,4"  # a QoS map change: GCU takes the port down
    head["PORT"]["Ethernet16"]["mtu"] = "9000"  # an MTU change: no bounce
    edited = json.dumps(head, indent=4, sort_keys=True)
    assert gcu.bounced_between(base, edited) == ["Ethernet8"]
    plan = compare(Side({"leaf1/config_db.json": base, "leaf2/config_db.json": golden("fabric/leaf2"),
                         "spine1/eos.cfg": "a\n"}, None),
                   Side({"leaf1/config_db.json": edited, "leaf2/config_db.json": golden("fabric/leaf1"),
                         "spine1/eos.cfg": "b\n"}, None))
    by_name = {device.device: device.disruption for device in plan.devices}
    assert by_name["leaf1"] == ["Ethernet8"] and by_name["spine1"] is None
    text = to_text(plan)
    assert ("  ! disruption: GCU takes Ethernet8 admin-down and up again on a switch holding the base (its QUEUE, "
            "PORT_QOS_MAP, BUFFER_PG rows change; `fabricgen diff` asks the switch itself)\n") in text
    assert json.loads(to_json(plan))["changed_devices"][0]["disruption"] == ["Ethernet8"]
    assert "- leaf1: disruption: GCU takes Ethernet8 admin-down" in to_markdown(plan)
    # Rendering an MTU change only: the plan says the switch bounces nothing.
    quiet = compare(Side({"leaf1/config_db.json": base}, None),
                    Side({"leaf1/config_db.json": base.replace('"mtu": "9100"', '"mtu": "9000"', 1)}, None))
    assert quiet.devices[0].disruption == []
    assert "  ! disruption: none (SONiC GCU bounces no port for this change)\n" in to_text(quiet)


def test_diff_json_lists_the_ports_each_device_bounces(capsys: pytest.CaptureFixture[str]) -> None:
    _show({"leaf1": Outcome("leaf1", "changes", "replace /QUEUE/...\n", bounced=["Ethernet0", "Ethernet8"]),
           "node1": Outcome("node1", "unchanged")}, "json", "diff")
    devices = json.loads(capsys.readouterr().out)["devices"]
    assert (devices["leaf1"]["bounced"], devices["node1"]["bounced"]) == (["Ethernet0", "Ethernet8"], [])


def test_what_a_rollback_bounces_is_what_putting_back_the_queues_maps_and_pgs_takes_down() -> None:
    before = json.loads(golden("fabric/leaf1"))
    candidate = json.loads(golden("fabric/leaf1"))
    candidate["PORT_QOS_MAP"]["Ethernet8"]["pfc_enable"] = "3,4"
    candidate["PORT"]["Ethernet16"]["mtu"] = "9000"
    forward = gcu.owned_patch(before, candidate)
    pushed = gcu.patched(before, forward)
    assert gcu.bounced_by_restore(pushed, before, gcu.as_patch(forward)) == ["Ethernet8"]  # a confirmed commit
    assert gcu.bounced_by_restore(pushed, before, None) == ["Ethernet8"]  # a pending one: the whole checkpoint
    pushed["QUEUE"]["Ethernet0|3"] = {"scheduler": "scheduler.0"}  # changed since, by someone else
    assert gcu.bounced_by_restore(pushed, before, gcu.as_patch(forward)) == ["Ethernet8"]  # left as it is
    assert gcu.bounced_by_restore(pushed, before, None) == ["Ethernet0", "Ethernet8"]  # the checkpoint undoes it
    pushed["PORT"]["Ethernet8"]["admin_status"] = "down"  # a port that is down is not taken down
    assert gcu.bounced_by_restore(pushed, before, None) == ["Ethernet0"]


def test_a_rollback_names_the_ports_it_bounces_before_it_acts_and_needs_leave_for_them() -> None:
    bounced = {"leaf1": ["Ethernet0", "Ethernet8"], "node1": [], "leaf2": ["Ethernet0"]}
    told: list[str] = []
    asked: list[str] = []

    def ask(question: str) -> bool:
        asked.append(question)
        return question.startswith("leaf2")

    chosen, skipped = disruptive_gate(bounced, False, False, ask, told.append)
    assert told == ["leaf1: the rollback takes Ethernet0, Ethernet8 admin-down and up again (SONiC GCU)",
                    "leaf2: the rollback takes Ethernet0 admin-down and up again (SONiC GCU)"]
    assert asked == ["leaf1: its rollback takes Ethernet0, Ethernet8 admin-down and up again; roll it back now?",
                     "leaf2: its rollback takes Ethernet0 admin-down and up again; roll it back now?"]
    assert chosen == ["node1", "leaf2"]
    assert skipped["leaf1"].state == "skipped" and "roll back with --allow-disruptive" in skipped["leaf1"].message
    assert skipped["leaf1"].bounced == ["Ethernet0", "Ethernet8"]  # rollback --format json lists them
    # --yes alone asks nothing and rolls back no device that bounces ports; --allow-disruptive rolls back all.
    assert disruptive_gate(bounced, False, True, ask, told.append)[0] == ["node1"]
    assert disruptive_gate(bounced, True, True, ask, told.append) == (["leaf1", "node1", "leaf2"], {})
    assert len(asked) == 2
