"""fabricgen's SONiC refusal predictor (fabricgen/platforms/sonic/gcu.py) against the real GCU, per release.

For every golden SONiC config and each release fabricgen targets (202411, 202505, 202511), on the lab switch as
delivered (with and without a PFC_WD table), two patches are judged by both:

* the patch as rendered (``owned_patch``): what fabricgen sent before it knew the releases apart;
* the push fabricgen now sends to that release (``plan``: the release's WRED rules, pfcwd for PFC_WD).

The same for the bench's SONiC switches (``bench/make_fabric.py --gpus 256``: a 64-port SN5600 leaf and spine, the
dynamic buffer model), on the lab switch made that SN5600 (``bench_switch``). Measured here (2 cores, load 14): the
golden cases (6 × 12 patches) and the file's two pure tests 79 s CPU, 8 min 55 s wall; the bench cases (6 × 4 patches
of 600-1,200 operations) 40 s CPU, 2 min 44 s wall, so they are ``slow_lab``: .ci/run runs them once, after
./tests/run, with the other slow lab cases (docs/testing.md).

The real verdict comes from sonic-utilities' own ``generic_config_updater`` of that release
(``<vendor data>/sonic-gcu``) over a real ``redis-server`` CONFIG_DB, through the SONiC target's ``sonic-lab-verdict``:
GCU's PatchApplier and StrictPatchSorter up to where the sorter starts searching an order (field rules, empty
tables, YANG validity of the result). The search itself takes minutes a patch; the lab tests run it.

Skipped with the reason when ``<vendor data>/sonic-gcu`` or redis-server is absent; FABRICGEN_REQUIRE_SHARED=1 (or
FABRICGEN_REQUIRE_YANG=1) turns that into a failure.
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

import pytest
import redis

from fabricgen.platforms.sonic import gcu

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
target = importlib.import_module("targets.sonic")
sonic_gcu = importlib.import_module("targets.sonic_gcu")
GOLDENS = sorted((ROOT / "golden").glob("*/*/config_db.json"))
RELEASES = ("202411", "202505", "202511")
BENCH_GPUS = "256"
BENCH_SWITCHES = ("r0-leaf0", "r0-spine0")  # the bench's SONiC leaf and spine (the other planes' are alike)
BENCH_HWSKU = ("Mellanox-SN5600-O128", "x86_64-nvidia_sn5600-r0")


def require_shared() -> None:
    """Skip, or fail when the run must have the vendor data (FABRICGEN_REQUIRE_SHARED=1 or FABRICGEN_REQUIRE_YANG=1)."""
    reason = target.unavailable()
    required = "1" in (os.environ.get("FABRICGEN_REQUIRE_SHARED"), os.environ.get("FABRICGEN_REQUIRE_YANG"))
    if reason and required:
        pytest.fail(f"FABRICGEN_REQUIRE_SHARED=1 but {reason}", pytrace=False)
    if reason:
        pytest.skip(reason=reason)


class Switch:
    """The SONiC target's programs run on this machine against a redis-server of this test session (a unix
    socket, no TCP port), as they run on a lab switch."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.state = directory / "state"
        self.state.mkdir()
        (directory / "etc").mkdir()
        (directory / "bin").mkdir()
        target.lab_init(self.state)
        launcher = directory / "bin" / "lab-target-sonic"
        launcher.write_text(f"#!{sys.executable}\nimport sys\nsys.path.insert(0, {str(ROOT / 'tests')!r})\n"
                            "from targets.sonic import main\nsys.exit(main())\n")
        launcher.chmod(0o755)
        for tool in target.TOOLS:
            (directory / "bin" / tool).symlink_to(launcher.name)
        self.env = {**os.environ, target.STATE_VAR: str(self.state), "SONIC_TARGET_ETC": str(directory / "etc"),
                    "PATH": f"{directory / 'bin'}:{os.environ.get('PATH', '/usr/bin:/bin')}"}
        # Its own process group: the daemon and the redis-server it starts stop together.
        self.server = subprocess.Popen([str(directory / "bin" / target.DAEMON)], env=self.env,
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        deadline = time.monotonic() + 30
        while not (self.state / target.READY).exists():
            assert self.server.poll() is None and time.monotonic() < deadline, "the switch's redis did not start"
            time.sleep(0.05)

    def run(self, *argv: str, stdin: str | None = None) -> str:
        done = subprocess.run(argv, input=stdin, env=self.env, capture_output=True, text=True, timeout=600,
                              check=False)
        assert done.returncode == 0, done.stderr
        return done.stdout

    def running(self) -> dict[str, Any]:
        config: dict[str, Any] = json.loads(self.run("sonic-cfggen", "-d", "--print-data"))
        return config

    def verdicts(self, patches: list[list[dict[str, Any]]]) -> list[str | None]:
        # GCU logs its steps to the console first (print_all_to_console); the verdicts are the last line.
        answers: list[str | None] = json.loads(self.run("sonic-lab-verdict",
                                                        stdin=json.dumps(patches)).splitlines()[-1])
        return answers

    def load(self, config: dict[str, Any]) -> None:
        """CONFIG_DB replaced by ``config`` (a switch delivered with it), through the switch's redis-server."""
        db = redis.Redis(unix_socket_path=str(self.state / target.SOCKET), db=sonic_gcu.CONFIG_DB,
                         decode_responses=True)
        try:
            sonic_gcu.write_config(db, config)
        finally:
            db.close()

    def stop(self) -> None:
        os.killpg(self.server.pid, signal.SIGTERM)
        self.server.wait(10)


@pytest.fixture(scope="module")
def switch(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Switch]:
    require_shared()
    made = Switch(tmp_path_factory.mktemp("sonic"))
    try:
        yield made
    finally:
        made.stop()


def candidates() -> dict[str, dict[str, dict[str, Any]]]:
    return {str(path.relative_to(ROOT / "golden").parent): gcu.parse_candidate(path.read_text()) for path in GOLDENS}


@pytest.mark.parametrize("pfcwd", [True, False], ids=["with-pfc-wd", "without-pfc-wd"])
@pytest.mark.parametrize("release", RELEASES)
def test_the_predictor_gives_gcus_verdict_on_every_golden_patch(switch: Switch, release: str, pfcwd: bool) -> None:
    switch.run("sonic-lab-reimage", release, *([] if pfcwd else ["--without-pfcwd"]))
    running = switch.running()
    assert gcu.release(running) == release
    rendered = candidates()
    patches = {f"{name} as rendered": gcu.owned_patch(running, candidate) for name, candidate in rendered.items()}
    patches |= {f"{name} planned": gcu.plan(running, candidate).changes for name, candidate in rendered.items()}
    real = dict(zip(patches, switch.verdicts([gcu.as_patch(changes) for changes in patches.values()]), strict=True))
    predicted = {name: gcu.gcu_refusals(running, changes) for name, changes in patches.items()}
    disagreements = {name: (predicted[name], real[name]) for name in patches
                     if (predicted[name] == []) != (real[name] is None)}
    assert disagreements == {}
    # The push fabricgen sends is one this release accepts, for every golden switch.
    assert {name: verdict for name, verdict in real.items() if name.endswith("planned") and verdict} == {}
    # What changed with the releases: the rendered lossless WRED profile is new, which only 202511 accepts; a
    # switch without PFC_WD takes no `add /PFC_WD` on any release.
    refused = {name.removesuffix(" as rendered") for name, verdict in real.items()
               if name.endswith("as rendered") and verdict}
    assert refused == (set() if release >= "202511" and pfcwd else set(rendered))


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, dict[str, Any]]]:
    """The bench fabric's SONiC switches as `fabricgen render` writes them (bench/make_fabric.py, then the CLI)."""
    folder = tmp_path_factory.mktemp("bench")
    for argv in ([str(ROOT / "bench" / "make_fabric.py"), "--gpus", BENCH_GPUS, "-o", str(folder)],
                 ["-m", "fabricgen", "render", str(folder / "intent.yaml"), "-i", str(folder / "inventory"), "-o",
                  str(folder / "out"), "--filter", "platform=sonic"]):
        done = subprocess.run([sys.executable, *argv], capture_output=True, text=True, check=False, timeout=300)
        assert done.returncode == 0, done.stderr
    return {name: gcu.parse_candidate((folder / "out" / name / "config_db.json").read_text())
            for name in BENCH_SWITCHES}


def bench_switch(delivered: dict[str, Any], candidate: dict[str, Any]) -> dict[str, Any]:
    """The lab switch as the bench's SN5600 (hwsku and platform; 64 ports of 8 lanes, the bench's port map): its
    ports beyond the lab's 32 get the lab's SKU rows of Ethernet0 (queues, buffer PGs and queues, QoS map, cable
    length, PFC watchdog when the switch has one), admin down and without a description, as a fresh port map."""
    config: dict[str, Any] = json.loads(json.dumps(delivered))
    config["DEVICE_METADATA"]["localhost"].update(hwsku=BENCH_HWSKU[0], platform=BENCH_HWSKU[1])
    for port in sorted(set(candidate["PORT"]) - set(config["PORT"]), key=gcu.natural):
        index = int(port.removeprefix("Ethernet")) // 8 + 1
        template = {name: value for name, value in config["PORT"]["Ethernet0"].items() if name != "description"}
        config["PORT"][port] = {**template, "alias": f"etp{index}", "index": str(index), "admin_status": "down",
                                "lanes": candidate["PORT"][port]["lanes"]}
        for table in ("BUFFER_PG", "BUFFER_QUEUE", "QUEUE"):
            config[table].update({f"{port}|{key.split('|', 1)[1]}": dict(row) for key, row in config[table].items()
                                  if key.split("|")[0] == "Ethernet0"})
        for table in ("PORT_QOS_MAP", "PFC_WD"):
            if "Ethernet0" in config.get(table, {}):
                config[table][port] = dict(config[table]["Ethernet0"])
        for lengths in config["CABLE_LENGTH"].values():
            lengths[port] = lengths["Ethernet0"]
    return config


@pytest.mark.slow_lab("the bench's 64-port SONiC patches through the real GCU of each release")
@pytest.mark.parametrize("pfcwd", [True, False], ids=["with-pfc-wd", "without-pfc-wd"])
@pytest.mark.parametrize("release", RELEASES)
def test_the_predictor_gives_gcus_verdict_on_every_bench_patch(switch: Switch, bench: dict[str, Any], release: str,
                                                               pfcwd: bool) -> None:
    switch.run("sonic-lab-reimage", release, *([] if pfcwd else ["--without-pfcwd"]))
    switch.load(bench_switch(switch.running(), bench[BENCH_SWITCHES[0]]))
    running = switch.running()
    assert len(running["PORT"]) == 64 and gcu.release(running) == release
    assert all(gcu.refusals(running, candidate, gcu.owned_patch(running, candidate)) == gcu.gcu_refusals(
        running, gcu.owned_patch(running, candidate)) for candidate in bench.values())  # the port map fits
    patches = {f"{name} as rendered": gcu.owned_patch(running, candidate) for name, candidate in bench.items()}
    patches |= {f"{name} planned": gcu.plan(running, candidate).changes for name, candidate in bench.items()}
    real = dict(zip(patches, switch.verdicts([gcu.as_patch(changes) for changes in patches.values()]), strict=True))
    predicted = {name: gcu.gcu_refusals(running, changes) for name, changes in patches.items()}
    assert {name: (predicted[name], real[name]) for name in patches
            if (predicted[name] == []) != (real[name] is None)} == {}
    assert {name: verdict for name, verdict in real.items() if name.endswith("planned") and verdict} == {}
    refused = {name.removesuffix(" as rendered") for name, verdict in real.items()
               if name.endswith("as rendered") and verdict}
    assert refused == (set() if release >= "202511" and pfcwd else set(bench))


def test_up_to_202505_the_lossless_profile_is_the_switchs_own_with_fabricgens_green_fields() -> None:
    running = target.starting_config("202411")
    candidate = candidates()["mixed/leaf1"]
    planned = gcu.plan(running, candidate)
    wred = [change.line() for change in planned.changes if change.parts[0] == "WRED_PROFILE"]
    wanted = candidate["WRED_PROFILE"]["ecn_rdma"]
    assert wred == [f"replace /WRED_PROFILE/AZURE_LOSSLESS/{name}: {running['WRED_PROFILE']['AZURE_LOSSLESS'][name]}"
                    f" → {wanted[name]}" for name in sorted(("green_drop_probability", "green_max_threshold",
                                                             "green_min_threshold"))]
    assert "WRED_PROFILE|AZURE_LOSSLESS yellow_max_threshold stays 2097152 (fabricgen's ecn_rdma: 40000)" \
        in planned.not_owned
    assert not [change for change in planned.changes if change.parts[0] == "QUEUE"
                and "ecn_rdma" in json.dumps(change.value)]
    later = gcu.plan(target.starting_config("202511"), candidate)
    assert later.not_owned == [] and "add /WRED_PROFILE/ecn_rdma" in later.lines()


def test_a_switch_without_pfc_wd_gets_the_watchdog_through_pfcwd_start() -> None:
    running = target.starting_config("202511", with_pfcwd=False)
    planned = gcu.plan(running, candidates()["mixed/leaf1"])
    assert planned.watchdog == [
        "pfcwd start --action drop --restoration-time 200 Ethernet0 Ethernet8 Ethernet224 Ethernet232 200",
        "pfcwd interval 100"]
    assert not [change for change in planned.changes if change.parts[0] == "PFC_WD"]
