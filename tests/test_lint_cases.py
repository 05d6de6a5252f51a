"""Every lint rule, failing and passing, from small fixtures in tests/lint_cases/<RULE-ID>.yaml.

A fixture starts from a bundled example and changes it in one of three ways, the way problems reach a real
fabric: `intent:` (merged into the intent file), `inventory:` (merged into hosts.yaml), or `model:` (merged into
the resolved device models — what `fabricgen lint --configs` reads from configs that drifted). In a mapping,
the key "-" lists keys to delete. `expect` lists
the rule's findings as `subject: message`, exactly; a passing case expects none.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from fabricgen.lint import all_rules, lint
from fabricgen.load import load
from fabricgen.model import Fabric
from fabricgen.neighbourhood import FABRIC_WIDE_RULES, concerns, findings_around
from fabricgen.resolve import resolve

from conftest import EXAMPLE_INVENTORY, ROOT

CASES_DIR = Path(__file__).parent / "lint_cases"
LIST_KEYS = {"ports": "name", "nics": "interface", "queues": "index"}


def merge(base: Any, edit: Any) -> Any:
    """Deep merge; a mapping applied to a list of named objects edits the element with that name."""
    if isinstance(base, dict) and isinstance(edit, dict):
        gone = {str(k) for k in edit.get("-", [])}  # "-": keys to delete (null only sets a value to None)
        merged = {k: v for k, v in base.items() if str(k) not in gone}
        for key, value in edit.items():
            if key == "-":
                continue
            merged[key] = merge(base[key], value) if key in base else value
        return merged
    if isinstance(base, list) and isinstance(edit, dict) and base and isinstance(base[0], dict):
        key = next(k for k in LIST_KEYS.values() if k in base[0])
        edits = {str(name): change for name, change in edit.items()}  # YAML may key queues by int
        unknown = set(edits) - {str(item[key]) for item in base}
        assert not unknown, f"fixture edits unknown {key}s: {sorted(unknown)}"
        return [merge(item, edits[str(item[key])]) if str(item[key]) in edits else item for item in base]
    return edit


def build(case: dict[str, Any], tmp_path: Path) -> Fabric:
    example = case.get("example", "fabric")
    source = ROOT / EXAMPLE_INVENTORY[example]
    intent = yaml.safe_load((ROOT / "intent" / f"{example}.yaml").read_text())
    hosts = yaml.safe_load((source / "hosts.yaml").read_text())
    inventory = tmp_path / "inventory"
    inventory.mkdir()
    for name in ("groups.yaml", "defaults.yaml"):
        (inventory / name).write_text((source / name).read_text())
    (inventory / "hosts.yaml").write_text(yaml.safe_dump(merge(hosts, case.get("inventory", {}))))
    (tmp_path / "intent.yaml").write_text(yaml.safe_dump(merge(intent, case.get("intent", {}))))
    loaded = load(tmp_path / "intent.yaml", inventory)
    fabric = resolve(loaded.intent, loaded.inventory, loaded.locate)
    if "model" not in case:
        return fabric
    dumped = fabric.model_dump()
    for device, edit in case["model"].items():
        dumped["devices"][device] = merge(dumped["devices"][device], edit)
    return Fabric.model_validate(copy.deepcopy(dumped))


def cases() -> list[Any]:
    params = []
    for path in sorted(CASES_DIR.glob("FG-*.yaml")):
        spec = yaml.safe_load(path.read_text())
        for kind in ("fail", "pass"):
            for case in spec.get(kind, []):
                params.append(pytest.param(spec["rule"], kind, case, id=f"{spec['rule']}-{kind}-{case['name']}"))
    return params


@pytest.mark.parametrize(("rule_id", "kind", "case"), cases())
def test_rule_case(rule_id: str, kind: str, case: dict[str, Any], tmp_path: Path) -> None:
    rule = next(r for r in all_rules() if r.id == rule_id)
    report = lint(build(case, tmp_path), rules=[rule])
    got = sorted(f"{f.subject}: {f.message}" for f in report.findings)
    expected = sorted(case.get("expect", [])) if kind == "fail" else []
    assert got == expected
    if kind == "fail":
        assert got, "a failing case must produce findings"


def local_cases() -> list[Any]:
    return [case for case in cases() if case.values[1] == "fail" and case.values[0] not in FABRIC_WIDE_RULES]


@pytest.mark.parametrize(("rule_id", "kind", "case"), local_cases())
def test_local_rules_see_a_device_from_its_neighbourhood(rule_id: str, kind: str, case: dict[str, Any],
                                                         tmp_path: Path) -> None:
    """The neighbourhood update lints a changed device with only its cabled neighbours around it. For every
    rule but the fabric-wide ones, that must find exactly what linting the whole fabric finds about the device
    (on it, or on a neighbour's port cabled to it) — here for every device of every failing fixture."""
    fabric = build(case, tmp_path)
    everything = lint(fabric, [rule for rule in all_rules() if rule.id not in FABRIC_WIDE_RULES]).findings
    assert any(finding.rule == rule_id for finding in everything)
    for name, device in fabric.devices.items():
        # Resolved cabling is symmetric; a fixture that edits a model may name a peer that does not name back.
        around = {name} | {port.peer.partition(":")[0] for port in device.ports if port.peer} | \
            {other for other, model in fabric.devices.items()
             if any(port.peer and port.peer.partition(":")[0] == name for port in model.ports)}
        neighbourhood = fabric.model_copy(update={"devices": {n: fabric.devices[n] for n in sorted(around)
                                                              if n in fabric.devices}})
        expected = [finding for finding in everything if concerns(finding, {name}, fabric)]
        assert findings_around(neighbourhood, {name}) == expected, name


def test_every_rule_has_fixtures_both_ways() -> None:
    covered: dict[str, set[str]] = {}
    for path in CASES_DIR.glob("FG-*.yaml"):
        spec = yaml.safe_load(path.read_text())
        assert path.stem == spec["rule"], f"{path.name} holds cases for {spec['rule']}"
        covered[spec["rule"]] = {kind for kind in ("fail", "pass") if spec.get(kind)}
    missing = {r.id: sorted({"fail", "pass"} - covered.get(r.id, set())) for r in all_rules()}
    assert {k: v for k, v in missing.items() if v} == {}


def test_bundled_examples_lint_clean() -> None:
    """The seed's kmin (below one jumbo frame) is waived in intent/fabric.yaml with its reason."""
    for example in ("fabric", "minimal"):
        loaded = load(ROOT / "intent" / f"{example}.yaml", ROOT / "inventory")
        report = lint(resolve(loaded.intent, loaded.inventory, loaded.locate))
        assert report.findings == [], example
    loaded = load(ROOT / "intent" / "fabric.yaml", ROOT / "inventory")
    report = lint(resolve(loaded.intent, loaded.inventory, loaded.locate))
    assert {(w.finding.rule, w.finding.device) for w in report.waived} == {
        ("FG-ECN-003", d) for d in ("leaf1", "leaf2", "spine1", "spine2")}
