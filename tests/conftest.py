"""Shared fixtures: the bundled examples, loaded and resolved once per session."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from fabricgen.load import FabricInput, load
from fabricgen.model import Fabric
from fabricgen.resolve import resolve

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


def pytest_configure(config: pytest.Config) -> None:
    # Keep the YAML parse cache of this test run out of the user's ~/.cache.
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
