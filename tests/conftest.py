"""Shared fixtures: the bundled examples, loaded and resolved once per session."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

from fabricgen.load import FabricInput, load
from fabricgen.model import Fabric
from fabricgen.resolve import resolve

ROOT = Path(__file__).resolve().parent.parent
# Bundled examples: intent/<name>.yaml rendered against this inventory into golden/<name>/.
EXAMPLE_INVENTORY = {"fabric": "inventory", "minimal": "inventory", "mixed": "inventory/mixed"}
EXAMPLES = tuple(EXAMPLE_INVENTORY)


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
