"""Shared fixtures: the bundled examples, loaded and resolved once per session; and the one way a test says it
reads data from the vendor-data folder (FABRICGEN_VENDOR_DATA, which a fresh clone does not have)."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from hypothesis import HealthCheck, settings

from fabricgen.load.fabric import FabricInput, load
from fabricgen.load.parsecache import cache_folder
from fabricgen.models.device import Fabric
from fabricgen.resolve import resolve
from fabricgen.resolve.headroom import DEFAULT_SONIC_RELEASE

if TYPE_CHECKING:  # imported where used: libyang may be absent
    from fabricgen.validate.sonic_yang import SonicYangValidator

ROOT = Path(__file__).resolve().parent.parent
# Bundled examples: intent/<name>.yaml rendered against this inventory into golden/<name>/.
EXAMPLE_INVENTORY = {"fabric": "inventory", "minimal": "inventory", "mixed": "inventory/mixed"}
EXAMPLES = tuple(EXAMPLE_INVENTORY)

# Hypothesis profiles (docs/testing.md). "ci", the default: fixed seeds, so a red run is about the change and
# not the draw, and no per-example deadline on a shared 2-core machine. "thorough": random seeds and ten times
# the examples. "fuzz-100k": for tests/test_fuzz.py, whose tests run 20 × max_examples cases in all — 100,000.
# Choose one with HYPOTHESIS_PROFILE=<name> or pytest --hypothesis-profile=<name>. Tests that set max_examples
# in their own @settings keep it under every profile.
settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
settings.register_profile("thorough", max_examples=1_000, derandomize=False, deadline=None, print_blob=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("fuzz-100k", settings.get_profile("thorough"), max_examples=5_000)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


# --- vendor data (FABRICGEN_VENDOR_DATA) --------------------------------------------------------------------
# Some tests check fabricgen against vendor data kept outside the checkout, never inside it. A test that reads it
# says so with @pytest.mark.requires_shared("<name>") (or by using a fixture below, which marks it):
# without the data it is skipped and says what is missing; FABRICGEN_REQUIRE_SHARED=1 (.ci/run) makes that a
# failure, so CI cannot lose these tests silently. `pytest -m "not requires_shared"` runs the others.
# README.md ("Tests that read the vendor-data folder") names every such test; tests/test_shared_data.py keeps that
# list true.
# FABRICGEN_VENDOR_DATA names the folder; unset, a folder `shared` beside the checkout (where CI keeps it).
VENDOR_DATA = "FABRICGEN_VENDOR_DATA"
SHARED: Path = importlib.import_module("targets.sonic_gcu").SHARED  # the lab's SONiC target reads the same
REQUIRE_SHARED = "FABRICGEN_REQUIRE_SHARED"
NO_VENDOR_DATA = f"a fresh clone has none; {VENDOR_DATA} names the folder that holds it: docs/testing.md"


@dataclass(frozen=True)
class SharedData:
    where: str  # under the vendor-data folder
    holds: str  # a glob that matches at least one file when the data is there
    what: str   # what it is, for the skip reason


SHARED_DATA = {
    "sonic-yang": SharedData("sonic-yang/models", "*.yang", "SONiC's YANG models (sonic-buildimage "
                             "src/sonic-yang-models/yang-models)"),
    "sonic-gcu": SharedData("sonic-gcu", "*/generic_config_updater/*.py",
                            "SONiC's generic_config_updater, one copy per release"),
    "reference": SharedData("reference", "*.md", "the reference notes"),
}
# The fixtures below that hand a test shared data: each marks every test that uses it (directly or through its own
# fixtures). tests/test_shared_data.py looks for these names, so a fixture here that reads vendor data is listed.
SHARED_FIXTURES = {"sonic_yang_models": "sonic-yang", "sonic_yang": "sonic-yang"}


def shared_path(name: str) -> Path:
    return SHARED / SHARED_DATA[name].where


def shared_absent(name: str) -> str | None:
    """Why the shared data `name` cannot be read (then its tests skip), or None when it is there. SONiC's GCU may
    come from the user's cache instead (`fabricgen validate --fetch-gcu`, `--fetch-models`: fetched_gcu_absent)."""
    data = SHARED_DATA[name]
    if next(shared_path(name).glob(data.holds), None) is None:
        reason = f"needs {data.what}: no {data.holds} in {shared_path(name)} ({NO_VENDOR_DATA})"
        if name != "sonic-gcu":
            return reason
        fetched = fetched_gcu_absent(DEFAULT_SONIC_RELEASE)
        return None if fetched is None else f"{reason}, and {fetched}"
    return None


# The user's cache folder, remembered before pytest_configure points FABRICGEN_CACHE_DIR at a throw-away one: the
# SONiC lab target reads GCU and the release models fetched there (tests/targets/sonic_gcu.py, LAB_CACHE_VAR).
LAB_CACHE_VAR = "FABRICGEN_LAB_CACHE_DIR"


def fetched_gcu_absent(release: str) -> str | None:
    """Why GCU of ``release`` and its models are not in the user's cache (naming both fetch commands), or None."""
    from fabricgen.validate.gcu import cached_gcu, fetch_gcu_command, gcu_cache_root
    from fabricgen.validate.models import MODELS_FOLDER, fetch_command

    cache = Path(os.environ.get(LAB_CACHE_VAR) or cache_folder())
    models = cache / "sonic-yang" / release / MODELS_FOLDER
    if cached_gcu(release, cache) is not None and any(models.glob("*.yang")):
        return None
    return (f"none fetched into {gcu_cache_root(cache)} and {models}: `{fetch_gcu_command(release)}` and "
            f"`{fetch_command(release)}` fetch them")


def require_shared(*names: str) -> None:
    """Skip the running test (fail it under FABRICGEN_REQUIRE_SHARED=1) when any of `names` is absent."""
    for name in names:
        reason = shared_absent(name)
        if reason and os.environ.get(REQUIRE_SHARED) == "1":
            pytest.fail(f"{REQUIRE_SHARED}=1 but this test {reason}", pytrace=False)
        if reason:
            pytest.skip(reason=reason)


# --- running on several workers (pytest-xdist; tests/run: -n N) ------------------------------------------------
# A file's tests stay together on one worker, so its module fixtures (a lab of SSH hosts, a real server) start once.
# These files mostly wait on device timers, not on the CPU: their tests are dealt round-robin into this many
# groups, each on a worker of its own with a lab of its own, so the slowest file no longer sets the suite's wall.
# (Done by a scheduler of our own: the xdist_group mark does not group under pytest 9 with xdist 3.8, whose
# loadgroup renames node ids pytest no longer lets it rename.)
SPREAD_FILES = {"test_push_faults.py": 4, "test_deploy_lab.py": 2, "test_deploy_sonic.py": 2}


class WorkerGroups:
    """Each test's group, by node id in collection order: its file, or for SPREAD_FILES one of its file's groups."""

    def __init__(self) -> None:
        self.dealt: dict[str, int] = {}
        self.groups: dict[str, str] = {}

    def __call__(self, nodeid: str) -> str:
        if nodeid not in self.groups:
            path = nodeid.split("::", 1)[0]
            count = SPREAD_FILES.get(Path(path).name, 1)
            position = self.dealt.get(path, 0)
            self.dealt[path] = position + 1
            self.groups[nodeid] = path if count == 1 else f"{path}#{position % count}"
        return self.groups[nodeid]


try:
    from xdist.scheduler import LoadScopeScheduling
except ImportError:  # pytest without xdist: one process, nothing to schedule
    LoadScopeScheduling = None

if LoadScopeScheduling is not None:
    class FileGroupScheduling(LoadScopeScheduling):  # type: ignore[misc]  # xdist ships no type hints
        """xdist's scope scheduler with WorkerGroups as the scope (xdist's own is per file or class)."""

        def __init__(self, config: pytest.Config, log: object = None) -> None:
            super().__init__(config, log)
            self._group_of = WorkerGroups()

        def _split_scope(self, nodeid: str) -> str:
            return self._group_of(nodeid)

    def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> FileGroupScheduling:
        return FileGroupScheduling(config, log)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        for fixture, name in SHARED_FIXTURES.items():
            if fixture in getattr(item, "fixturenames", ()):
                item.add_marker(pytest.mark.requires_shared(name))


# --- the slow lab cases ----------------------------------------------------------------------------------------
# @pytest.mark.slow_lab("what makes it slow"): a lab test that sorts through SONiC's own patch sorter (CPU-minutes a
# port) or starts the whole mixed fabric. ./tests/run skips it (its 15-minute budget); .ci/run runs them all once,
# after it, as a step of their own: FABRICGEN_SLOW_LAB=1 pytest -m slow_lab (docs/testing.md: what each costs).
SLOW_LAB = "FABRICGEN_SLOW_LAB"


@pytest.hookimpl(tryfirst=True)  # before any fixture is set up: a lab is not built for a test that will skip
def pytest_runtest_setup(item: pytest.Item) -> None:
    slow = item.get_closest_marker("slow_lab")
    if slow is not None and os.environ.get(SLOW_LAB) != "1":
        why = f" ({slow.args[0]})" if slow.args else ""
        pytest.skip(reason=f"slow lab case{why}: .ci/run runs these once, after ./tests/run; set {SLOW_LAB}=1")
    for mark in item.iter_markers("requires_shared"):
        unknown = set(mark.args) - set(SHARED_DATA)
        assert not unknown, f"{item.nodeid}: requires_shared names unknown shared data {sorted(unknown)}"
        require_shared(*mark.args)


@pytest.fixture(scope="session")
def sonic_yang_models() -> Path:
    """<vendor data>/sonic-yang/models: the test is marked requires_shared("sonic-yang") and skipped without it."""
    require_shared("sonic-yang")
    return shared_path("sonic-yang")


@pytest.fixture(scope="session")
def sonic_yang(sonic_yang_models: Path) -> SonicYangValidator:
    """fabricgen's SONiC YANG validator over the shared models; skipped without libyang, which is
    FABRICGEN_REQUIRE_YANG's business (a failure then)."""
    from fabricgen.validate.sonic_yang import SonicYangValidator, YangUnavailable

    try:
        return SonicYangValidator(sonic_yang_models)
    except YangUnavailable as exc:
        if os.environ.get("FABRICGEN_REQUIRE_YANG") == "1":  # CI: a skip here would be a silent pass
            pytest.fail(f"FABRICGEN_REQUIRE_YANG=1 but {exc}", pytrace=False)
        pytest.skip(reason=f"libyang not installed: {exc}")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "requires_shared(*names): reads <vendor data>/<name> (tests/conftest.py "
                                       "SHARED_DATA); skipped without it, failed under FABRICGEN_REQUIRE_SHARED=1")
    config.addinivalue_line("markers", f"slow_lab(why): a slow lab case (SONiC's real patch sorter, the whole fabric); "
                                       f"skipped unless {SLOW_LAB}=1, run by .ci/run's second step")
    # Keep the YAML parse cache of this test run out of the user's ~/.cache (but let the lab find what the user
    # fetched there: LAB_CACHE_VAR).
    os.environ.setdefault(LAB_CACHE_VAR, str(cache_folder()))
    if "FABRICGEN_CACHE_DIR" not in os.environ:
        os.environ["FABRICGEN_CACHE_DIR"] = tempfile.mkdtemp(prefix="fabricgen-test-cache-")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-golden", action="store_true",
                     help="rewrite golden/<example>/ from the current renderers (then review the git diff)")


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT


def load_example(name: str) -> FabricInput:
    return load(ROOT / "intent" / f"{name}.yaml", ROOT / EXAMPLE_INVENTORY[name])


@pytest.fixture(scope="session")
def example_input() -> FabricInput:
    return load_example("fabric")


@pytest.fixture(scope="session")
def example_fabric(example_input: FabricInput) -> Fabric:
    return resolve(example_input.intent, example_input.inventory, example_input.locate)


@pytest.fixture(scope="session")
def mixed_rendered(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled mixed example as `fabricgen render` writes it (the CLI, once per test run): the switch
    candidates the deploy tests push (leaf1 sonic, leaf2 eos, leaf3 nvue, leaf4 nxos)."""
    out = tmp_path_factory.mktemp("mixed-rendered") / "out"
    done = subprocess.run([sys.executable, "-m", "fabricgen", "render", str(ROOT / "intent" / "mixed.yaml"), "-i",
                           str(ROOT / "inventory" / "mixed"), "-o", str(out)], capture_output=True, text=True,
                          check=False, timeout=300)
    assert done.returncode == 0, done.stderr
    return out
