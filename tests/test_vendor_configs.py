"""Vendors' own reference configs, linted as `lint --configs` reads a fabric that runs them: 0 false findings.

Each directory under tests/vendor_configs/ holds a vendor's config (its header names the source and, for a
repository, the commit) for one device of a bundled example, and fixture.yaml listing every finding lint reports
with the reason it is true. The example is rendered, that device's files are replaced by the vendor's, and the
findings must be exactly the listed ones: an extra one is a false finding (or an unlisted true one: list it, with
its reason); a missing one is a fault lint stopped seeing.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from fabricgen.cli import main
from fabricgen.lint import lint
from fabricgen.lint.configs import read_configs
from fabricgen.load.fabric import load
from fabricgen.resolve import resolve

from conftest import EXAMPLE_INVENTORY, ROOT

FIXTURES = sorted(path.parent for path in (Path(__file__).parent / "vendor_configs").glob("*/fixture.yaml"))


def findings_on(fixture: Path, spec: dict[str, Any], tmp_path: Path) -> set[str]:
    example = spec["example"]
    intent, inventory = ROOT / "intent" / f"{example}.yaml", ROOT / EXAMPLE_INVENTORY[example]
    configs = tmp_path / "configs"
    result = CliRunner().invoke(main, ["render", str(intent), "-i", str(inventory), "-o", str(configs)])
    assert result.exit_code == 0, result.output
    device = configs / spec["device"]
    shutil.rmtree(device)
    device.mkdir()
    for name in spec["files"]:
        shutil.copy(fixture / name, device / name)
    loaded = load(intent, inventory)
    read = read_configs(resolve(loaded.intent, loaded.inventory, loaded.locate), configs)
    report = lint(read.fabric, evidence=read.evidence)
    return {f"{f.rule} {f.subject}" for f in report.findings}


@pytest.mark.parametrize("fixture", FIXTURES, ids=[path.name for path in FIXTURES])
def test_a_vendor_reference_config_lints_with_no_false_finding(fixture: Path, tmp_path: Path) -> None:
    spec = yaml.safe_load((fixture / "fixture.yaml").read_text())
    assert all(entry["why"].strip() for entry in spec["expected"]), "each expected finding says why it is true"
    for name in spec["files"]:
        assert "Source" in (fixture / name).read_text()[:2000], f"{name}: its header names where it comes from"
    found = findings_on(fixture, spec, tmp_path)
    expected = {entry["finding"] for entry in spec["expected"]}
    assert sorted(found - expected) == [], "false findings (or true ones the fixture does not list)"
    assert sorted(expected - found) == [], "listed findings lint no longer reports"

