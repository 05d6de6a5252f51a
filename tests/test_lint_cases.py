"""Every lint rule, failing and passing, from small fixtures in tests/lint_cases/<RULE-ID>.yaml.

A fixture starts from a bundled example and changes it in one of four ways, the way problems reach a real
fabric: `intent:` (merged into the intent file), `inventory:` (merged into hosts.yaml), `model:` (merged into
the resolved device models — what `fabricgen lint --configs` reads from configs that drifted), or `configs:`
(the example rendered, then files edited as they get damaged, and read back as `lint --configs` reads them:
see `damage`; `partial: true` reads them as `--partial` does). In a mapping, the key "-" lists keys to delete.
`expect` lists the rule's findings as `subject: message`, exactly (`{configs}` stands for the configs
directory); a passing case expects none. `severity` (per file, or per case where a rule reports a lesser
finding too) is the severity every finding of a failing case has: a warning turned into an error, which
blocks `render`, fails here. `at` lists, in the order of `expect`, the FILE:LINE `fabricgen lint` prints for
each finding, relative to the case's directory: `intent.yaml` and `inventory/hosts.yaml` (the case's inputs,
as yaml.safe_dump writes them) or `configs/<device>/<file>`.
"""

from __future__ import annotations

import copy
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from fabricgen.build.neighbourhood import concerns, findings_around
from fabricgen.cli import main
from fabricgen.lint import Evidence, Finding, all_rules, lint
from fabricgen.lint.configs import Configs, Locate, read_configs
from fabricgen.lint.registry import FabricWide, rule
from fabricgen.load.fabric import load
from fabricgen.models.device import Fabric
from fabricgen.models.diagnostics import Location
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


def build(case: dict[str, Any], tmp_path: Path) -> tuple[Fabric, Configs | None]:
    """The fabric a case describes, and the configs it was read from when the case damages configs."""
    fabric, configs, _ = build_located(case, tmp_path)
    return fabric, configs


def build_located(case: dict[str, Any], tmp_path: Path) -> tuple[Fabric, Configs | None, Locate]:
    """:func:`build`, and where `fabricgen lint` points each finding (FILE:LINE), as the CLI locates it."""
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

    def in_the_input(finding: Finding) -> Location:
        return loaded.locate(finding.source or ())

    if "configs" in case:
        directory = tmp_path / "configs"
        result = CliRunner().invoke(main, ["render", str(tmp_path / "intent.yaml"), "-i", str(inventory), "-o",
                                           str(directory), "--force"])
        assert result.exit_code == 0, result.output
        for target, change in case["configs"].items():
            damage(directory / target, change)
        configs = read_configs(fabric, directory, partial=case.get("partial", False))
        return configs.fabric, configs, configs.locator(in_the_input)
    if "model" not in case:
        return fabric, None, in_the_input
    dumped = fabric.model_dump()
    for device, edit in case["model"].items():
        dumped["devices"][device] = merge(dumped["devices"][device], edit)
    return Fabric.model_validate(copy.deepcopy(dumped)), None, in_the_input


def damage(path: Path, change: Any) -> None:
    """One file (or device directory) of a rendered tree damaged: null deletes it, a string replaces its text,
    a mapping edits it — `replace`: [[old, new], ...] or [[old, new, after], ...] (the first `old` after
    `after`), then `prepend`/`append` text, then `cut`: keep that many characters (negative: drop from the end)."""
    if change is None:
        if path.is_dir():
            shutil.rmtree(path)
        else:
            path.unlink()
        return
    if isinstance(change, str):
        path.write_text(change)
        return
    text = path.read_text()
    for old, new, *after in change.get("replace", []):
        at = text.index(old, text.index(after[0]) if after else 0)
        text = text[:at] + new + text[at + len(old):]
    text = change.get("prepend", "") + text + change.get("append", "")
    if "cut" in change:
        text = text[:change["cut"]]
    path.write_text(text)


def evidence_of(configs: Configs | None) -> Evidence | None:
    return configs.evidence if configs is not None else None


def cases() -> list[Any]:
    params = []
    for path in sorted(CASES_DIR.glob("FG-*.yaml")):
        spec = yaml.safe_load(path.read_text())
        for kind in ("fail", "pass"):
            for case in spec.get(kind, []):
                case = {"severity": spec.get("severity"), **case}
                params.append(pytest.param(spec["rule"], kind, case, id=f"{spec['rule']}-{kind}-{case['name']}"))
    return params


@pytest.mark.parametrize(("rule_id", "kind", "case"), cases())
def test_rule_case(rule_id: str, kind: str, case: dict[str, Any], tmp_path: Path) -> None:
    rule = next(r for r in all_rules() if r.id == rule_id)
    fabric, configs, locate = build_located(case, tmp_path)
    report = lint(fabric, rules=[rule], evidence=evidence_of(configs))
    got = sorted(f"{f.subject}: {f.message}" for f in report.findings)
    directory = str(tmp_path / "configs")
    expected = sorted(e.replace("{configs}", directory) for e in case.get("expect", [])) if kind == "fail" else []
    assert got == expected
    if kind == "pass":
        return
    assert got, "a failing case must produce findings"
    assert {f.severity for f in report.findings} == {case["severity"]}
    # Each expected finding, and the FILE:LINE `fabricgen lint` prints for it (`at`, in the order of `expect`).
    assert len(case["at"]) == len(case["expect"]), "`at` lists one FILE:LINE per expected finding"
    expected_at = sorted(zip((e.replace("{configs}", directory) for e in case["expect"]), case["at"], strict=True))
    assert sorted((f"{f.subject}: {f.message}", _relative(locate(f), tmp_path)) for f in report.findings) == \
        expected_at


def _relative(location: Location, root: Path) -> str:
    return f"{Path(location.file).relative_to(root) if Path(location.file).is_absolute() else location.file}:" \
           f"{location.line}"


def test_failing_fixtures_print_no_placeholders(tmp_path: Path) -> None:
    """Every failing fixture's findings name real values: no `None` and no `?` standing in for a value the
    rule could not find, in the message or in the fix."""
    placeholder = re.compile(r"\bNone\b|\?")
    for number, param in enumerate(cases()):
        rule_id, kind, case = param.values
        if kind != "fail":
            continue
        rule = next(r for r in all_rules() if r.id == rule_id)
        (tmp_path / str(number)).mkdir()
        fabric, configs = build(case, tmp_path / str(number))
        for finding in lint(fabric, rules=[rule], evidence=evidence_of(configs)).findings:
            assert not placeholder.search(finding.message + finding.fix), f"{param.id}: {_text(finding)}"


def _text(finding: Finding) -> str:
    return f"{finding.subject}: {finding.message} (fix: {finding.fix})"


FABRIC_WIDE = {r.id: r.fabric_wide for r in all_rules() if r.fabric_wide is not None}


def local_cases() -> list[Any]:
    return [case for case in cases() if case.values[1] == "fail" and case.values[0] not in FABRIC_WIDE]


@pytest.mark.parametrize(("rule_id", "kind", "case"), local_cases())
def test_local_rules_see_a_device_from_its_neighbourhood(rule_id: str, kind: str, case: dict[str, Any],
                                                         tmp_path: Path) -> None:
    """The neighbourhood update lints a changed device with only its cabled neighbours around it. For every
    rule but the fabric-wide ones, that must find exactly what linting the whole fabric finds about the device
    (on it, or on a neighbour's port cabled to it) — here for every device of every failing fixture."""
    fabric, configs = build(case, tmp_path)
    evidence = evidence_of(configs)
    local = [r for r in all_rules() if r.id not in FABRIC_WIDE]
    everything = lint(fabric, local, evidence=evidence).findings
    assert any(finding.rule == rule_id for finding in everything)
    for name, device in fabric.devices.items():
        # Resolved cabling is symmetric; a fixture that edits a model may name a peer that does not name back.
        around = {name} | {port.peer.partition(":")[0] for port in device.ports if port.peer} | \
            {other for other, model in fabric.devices.items()
             if any(port.peer and port.peer.partition(":")[0] == name for port in model.ports)}
        neighbourhood = fabric.model_copy(update={"devices": {n: fabric.devices[n] for n in sorted(around)
                                                              if n in fabric.devices}})
        expected = [finding for finding in everything if concerns(finding, {name}, fabric)]
        if evidence is None:
            assert findings_around(neighbourhood, {name}) == expected, name
        else:  # the neighbourhood update never reads configs: the same check, with the evidence passed along
            found = lint(neighbourhood, local, evidence=evidence).findings
            assert [f for f in found if concerns(f, {name}, fabric)] == expected, name


def uncabled_copies(fabric: Fabric, name: str, count: int) -> Fabric:
    """``fabric`` with ``count`` copies of device ``name`` added, cabled to nothing."""
    original = fabric.devices[name]
    host = original.host
    if host is not None:
        host = host.model_copy(update={"nics": [nic.model_copy(update={"peer": None}) for nic in host.nics]})
    ports = [port.model_copy(update={"peer": None}) for port in original.ports]
    copies = {f"{name}-copy{i}": original.model_copy(update={"name": f"{name}-copy{i}", "ports": ports, "host": host})
              for i in range(count)}
    return fabric.model_copy(update={"devices": {**fabric.devices, **copies}})


@pytest.mark.parametrize(("rule_id", "kind", "case"), local_cases())
def test_local_rules_ignore_devices_they_are_not_cabled_to(rule_id: str, kind: str, case: dict[str, Any],
                                                          tmp_path: Path) -> None:
    """What a rule that is not fabric-wide finds about a device cannot change when devices it is not cabled to
    join the fabric. Here they are copies of the device, as many as the fabric has devices: a rule that judges
    a device by the fabric's majority (what makes a rule fabric-wide) would now judge it by its copies. This
    fails when a fabric-wide rule does not declare itself so."""
    fabric, configs = build(case, tmp_path)
    evidence = evidence_of(configs)
    local = [r for r in all_rules() if r.id not in FABRIC_WIDE]
    everything = lint(fabric, local, evidence=evidence).findings
    for name in sorted({finding.device for finding in everything if finding.rule == rule_id} & set(fabric.devices)):
        crowded = uncabled_copies(fabric, name, len(fabric.devices))
        found = [finding for finding in lint(crowded, local, evidence=evidence).findings
                 if concerns(finding, {name}, fabric)]
        assert found == [finding for finding in everything if concerns(finding, {name}, fabric)], name


def wide_cases() -> list[Any]:
    return [case for case in cases() if case.values[1] == "fail" and case.values[0] in FABRIC_WIDE]


@pytest.mark.parametrize(("rule_id", "kind", "case"), wide_cases())
def test_a_fabric_wide_rule_fails_only_on_fields_it_declares(rule_id: str, kind: str, case: dict[str, Any],
                                                            tmp_path: Path) -> None:
    """The neighbourhood update runs a fabric-wide rule again only when a changed device changed a field the
    rule declares. So what each failing fixture changes to make the rule fail must show in those fields: some
    device's declared fields differ from the same device's in the unchanged example."""
    (tmp_path / "case").mkdir()
    (tmp_path / "example").mkdir()
    fabric, _ = build(case, tmp_path / "case")
    example, _ = build({"example": case.get("example", "fabric")}, tmp_path / "example")
    reads = FABRIC_WIDE[rule_id]
    changed = [name for name, device in fabric.devices.items()
               if name not in example.devices or reads.read(device) != reads.read(example.devices[name])]
    assert changed, f"{case['name']}: no device changed a field of {reads}"


def test_a_fabric_wide_rule_declares_fields_that_exist() -> None:
    """A misspelt path would read nothing, and the neighbourhood update would never see that field change."""
    with pytest.raises(ValueError, match="names no DeviceModel field at 'mut'"):
        rule("FG-TST-999", "test-only", "error", "never registered", fabric_wide=FabricWide(devices=("ports.mut",)))(
            lambda ctx, r: iter(()))
    with pytest.raises(ValueError, match="names no DeviceModel field at 'mtu'"):
        rule("FG-TST-999", "test-only", "error", "never registered", fabric_wide=FabricWide(hosts=("platform.mtu",)))(
            lambda ctx, r: iter(()))


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
    loaded = load(ROOT / "intent" / "mixed.yaml", ROOT / "inventory" / "mixed")
    assert lint(resolve(loaded.intent, loaded.inventory, loaded.locate)).findings == [], "mixed"
    loaded = load(ROOT / "intent" / "fabric.yaml", ROOT / "inventory")
    report = lint(resolve(loaded.intent, loaded.inventory, loaded.locate))
    assert {(w.finding.rule, w.finding.device) for w in report.waived} == {
        ("FG-ECN-003", d) for d in ("leaf1", "leaf2", "spine1", "spine2")}


def test_every_rule_says_which_roads_and_platforms_it_covers() -> None:
    """docs/rules.md's "Covers" line comes from fabricgen.lint.coverage: a rule without an entry there would have
    none, and a setting no reader declares would claim no platform."""
    from fabricgen.lint.coverage import COVERAGE, covered_platforms
    from fabricgen.platforms import get_platform, platform_names

    assert sorted(COVERAGE) == sorted(r.id for r in all_rules())
    declared = {s for name in platform_names() for s in get_platform(name).capability.port_settings} | {"*"}
    for rule_id, coverage in COVERAGE.items():
        assert set(coverage.reads) <= declared, rule_id
        if coverage.reads and "configs" in coverage.roads:
            assert covered_platforms(coverage), f"{rule_id} reads nothing any config reader reads"
