"""fabricgen's SONiC refusal predictor (fabricgen/platforms/sonic/gcu.py) against the real GCU, per release.

For every golden SONiC config and each release fabricgen targets (202411, 202505, 202511), on the lab switch as
delivered (with and without a PFC_WD table), two patches are judged by both:

* the patch as rendered (``owned_patch``): what fabricgen sent before it knew the releases apart;
* the push fabricgen now sends to that release (``plan``: the release's WRED rules, pfcwd for PFC_WD).

The real verdict comes from sonic-utilities' own ``generic_config_updater`` of that release
(``../shared/sonic-gcu``) over a real ``redis-server`` CONFIG_DB, through the SONiC target's ``sonic-lab-verdict``:
GCU's PatchApplier and StrictPatchSorter up to where the sorter starts searching an order (field rules, empty
tables, YANG validity of the result). The search itself takes minutes a patch; the lab tests run it.

Skipped with the reason when ``../shared/sonic-gcu`` or redis-server is absent; FABRICGEN_REQUIRE_SHARED=1 (or
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

from fabricgen.platforms.sonic import gcu

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
target = importlib.import_module("tests.targets.sonic")
GOLDENS = sorted((ROOT / "golden").glob("*/*/config_db.json"))
RELEASES = ("202411", "202505", "202511")


def require_shared() -> None:
    """Skip, or fail when the run must have ../shared (FABRICGEN_REQUIRE_SHARED=1 or FABRICGEN_REQUIRE_YANG=1)."""
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
        launcher.write_text(f"#!{sys.executable}\nimport sys\nsys.path.insert(0, {str(ROOT)!r})\n"
                            "from tests.targets.sonic import main\nsys.exit(main())\n")
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
