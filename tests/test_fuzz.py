"""The fuzz suite: `fabricgen render` over thousands of mutations of the bundled examples' intents and inventories.

Every case copies one bundled example (intent + its Nornir inventory) into a fresh folder, breaks one of its four
input files (tests/fuzz_mutations.py: types, ranges and structure on the YAML node graph; YAML features; the
text; the encoding; or the file itself) and renders it through the real CLI, in process. Whatever the input, the
outcome is one of the promised three — never an internal error (exit 70 from the console entry, an exception
here), never a traceback:

* exit 0, and OUT is a complete tree: exactly the files its manifest lists, each with the hash listed;
* exit 2, every line before the last a one-line ``FILE:LINE:COL: key.path: message`` naming an input file, and
  nothing written (no OUT, no staging tree, nothing else beside the inputs);
* exit 1, lint refused the (valid) input, and nothing written.

Each case must also spend at most CASE_CPU_SECONDS of CPU and keep the process's peak memory within MAX_RSS_GROWTH of
where the suite started.

How many cases run comes from the hypothesis profile (tests/conftest.py): each test runs WEIGHT × the profile's
``max_examples``; the weights add up to 20, so the default "ci" profile runs 2,000 cases and
``--hypothesis-profile=fuzz-100k`` runs 100,000 (docs/testing.md).
"""

from __future__ import annotations

import json
import os
import re
import resource
import shutil
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from hashlib import sha256
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner, Result
from hypothesis import HealthCheck, example, given, reject, settings
from hypothesis import strategies as st

from fabricgen.cli import main

from conftest import EXAMPLE_INVENTORY, ROOT
from fuzz_mutations import (
    ENCODINGS,
    FILE_KINDS,
    NODE_MUTATIONS,
    TEXT_MUTATIONS,
    Encoding,
    FileKind,
    NodeMutation,
    Tag,
    TextMutation,
    serialise,
)

INPUT_FILES = ("intent.yaml", "hosts.yaml", "groups.yaml", "defaults.yaml")
# Generous bounds: a case takes ~20 ms of CPU here; the bounds catch a blow-up (an alias bomb, a quadratic path), not
# a slow machine. CPU time of this process (the render runs in it, --jobs 1), not wall time: other processes on a
# loaded runner do not count against a case.
CASE_CPU_SECONDS = 20.0
MAX_RSS_GROWTH = 1024 * 1024 * 1024
# FILE:LINE:COL: key.path: message (hint) — one line; the key path is a token or a quoted key.
DIAGNOSTIC = re.compile(r"^(?P<file>[^:\n]+):(?P<line>[1-9]\d*):(?P<col>[1-9]\d*): (?P<path>\S.*?): (?P<message>\S.*)$")
REFUSED = {2: "problem(s) in the input; nothing was written", 1: "nothing was written"}


def fuzz_settings(weight: int) -> settings:
    """The loaded profile, with ``weight`` times its examples (fuzz cases are cheap: ~20 ms each)."""
    return settings(max_examples=weight * settings().max_examples, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.filter_too_much])


@dataclass(frozen=True)
class Workspace:
    """One case's copy of a bundled example: ``intent.yaml``, ``inventory/``, and ``out/`` once rendered."""

    root: Path

    @property
    def intent(self) -> Path:
        return self.root / "intent.yaml"

    @property
    def inventory(self) -> Path:
        return self.root / "inventory"

    @property
    def out(self) -> Path:
        return self.root / "out"

    def file(self, name: str) -> Path:
        return self.intent if name == "intent.yaml" else self.inventory / name

    def listing(self) -> list[str]:
        return sorted(str(path.relative_to(self.root)) for path in self.root.rglob("*"))


@pytest.fixture(scope="module")
def cases() -> Iterator[Path]:
    """A folder for the cases' workspaces, and a parse cache of their own (it would hold every mutated file)."""
    base = Path(tempfile.mkdtemp(prefix="fabricgen-fuzz-"))
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("FABRICGEN_CACHE_DIR", str(base / "cache"))
        # A complete tree is flushed with os.sync() before it is renamed into place: the whole machine's dirty
        # pages, so on a shared runner 2,000 renders would wait on everyone's writes. The cases check what is
        # written, not that it survives a power cut: the flush is skipped here.
        patch.setattr(os, "sync", lambda: None)
        yield base
    shutil.rmtree(base, ignore_errors=True)


def new_workspace(base: Path, example: str) -> Workspace:
    workspace = Workspace(Path(tempfile.mkdtemp(dir=base, prefix=f"{example}-")))
    shutil.copyfile(ROOT / "intent" / f"{example}.yaml", workspace.intent)
    workspace.inventory.mkdir()
    for name in INPUT_FILES[1:]:
        shutil.copyfile(ROOT / EXAMPLE_INVENTORY[example] / name, workspace.inventory / name)
    return workspace


RSS_AT_START = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
CASES_RUN = [0]
CACHE_WIPE_EVERY = 1000


def invoke_render(workspace: Workspace) -> Result:
    return CliRunner().invoke(main, ["render", str(workspace.intent), "-i", str(workspace.inventory),
                                     "-o", str(workspace.out), "--jobs", "1"])


def render_case(workspace: Workspace) -> Result:
    """Render the workspace and check the outcome is one of the three promised; then drop the workspace."""
    before = workspace.listing()
    started = time.process_time()
    result = invoke_render(workspace)
    spent = time.process_time() - started
    try:
        check_outcome(workspace, result, before)
        assert spent < CASE_CPU_SECONDS, f"a case took {spent:.1f} s of CPU"
        grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - RSS_AT_START
        assert grown < MAX_RSS_GROWTH, f"peak memory grew by {grown / 2**20:.0f} MiB"
    finally:
        shutil.rmtree(workspace.root, ignore_errors=True)
    CASES_RUN[0] += 1
    if CASES_RUN[0] % CACHE_WIPE_EVERY == 0:  # the parse cache would keep every mutated file of a long run
        shutil.rmtree(workspace.root.parent / "cache", ignore_errors=True)
    return result


def check_outcome(workspace: Workspace, result: Result, before: list[str]) -> None:
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise AssertionError(f"internal error (exit 70 from the console entry):\n{result.output}") \
            from result.exception
    assert "Traceback" not in result.output
    if result.exit_code == 0:
        check_complete_tree(workspace.out)
        return
    assert result.exit_code in REFUSED, (result.exit_code, result.output)
    *lines, last = result.output.splitlines() or [""]
    assert REFUSED[result.exit_code] in last, result.output
    if result.exit_code == 2:
        check_diagnostics(workspace, lines)
    assert workspace.listing() == before, "something was written although the render was refused"


def check_diagnostics(workspace: Workspace, lines: list[str]) -> None:
    """At least one diagnostic; each one line, well formed, and pointing into an input (or its folder)."""
    assert lines, "exit 2 without a diagnostic"
    inputs = {str(workspace.file(name)) for name in INPUT_FILES} | {str(workspace.inventory)}
    for line in lines:
        match = DIAGNOSTIC.match(line)
        assert match is not None, f"malformed diagnostic: {line!r}"
        assert match["file"] in inputs, f"diagnostic points outside the inputs: {line!r}"


def check_complete_tree(out: Path) -> None:
    """OUT holds exactly the manifest and the files it lists, each with the listed hash; every device folder
    has its resolved.json."""
    manifest = json.loads((out / "manifest.json").read_text())
    on_disk = {str(path.relative_to(out)) for path in out.rglob("*") if path.is_file()} - {"manifest.json"}
    assert on_disk == set(manifest["files"])
    for name, digest in manifest["files"].items():
        assert sha256((out / name).read_bytes()).hexdigest() == digest, name
    devices = {path.name for path in out.iterdir() if path.is_dir()}
    assert devices and all(f"{device}/resolved.json" in on_disk for device in devices)


def original_text(example: str, name: str) -> str:
    folder = ROOT / "intent" if name == "intent.yaml" else ROOT / EXAMPLE_INVENTORY[example]
    return (folder / (f"{example}.yaml" if name == "intent.yaml" else name)).read_text()


def mutated_text(example: str, name: str, mutations: tuple[NodeMutation, ...]) -> str:
    """The file with ``mutations`` applied to its node graph; a graph YAML cannot write out is no case."""
    root = yaml.compose(original_text(example, name), Loader=yaml.CSafeLoader)
    assert root is not None  # every bundled input is a document
    for mutation in mutations:
        root = mutation.apply(root)
    try:
        return serialise(root)
    except (yaml.YAMLError, RecursionError):
        reject()


EXAMPLE_NAMES = st.sampled_from(sorted(EXAMPLE_INVENTORY))
FILES = st.sampled_from(INPUT_FILES)


@fuzz_settings(weight=10)
@given(example=EXAMPLE_NAMES, name=FILES, mutations=st.lists(NODE_MUTATIONS, min_size=1, max_size=3).map(tuple))
@example(example="fabric", name="intent.yaml", mutations=(Tag(3, "tag:yaml.org,2002:int"),))
def test_types_ranges_structure_and_yaml_features(cases: Path, example: str, name: str,
                                                  mutations: tuple[NodeMutation, ...]) -> None:
    """Values of another type or out of range, keys dropped, duplicated, moved or renamed, wrong containers,
    explicit tags, anchors and (recursive) aliases, merge keys, flow style and quoting: render accepts or
    refuses cleanly."""
    text = mutated_text(example, name, mutations)
    workspace = new_workspace(cases, example)
    workspace.file(name).write_text(text, encoding="utf-8")
    render_case(workspace)


@fuzz_settings(weight=7)
@given(example=EXAMPLE_NAMES, name=FILES, mutations=st.lists(NODE_MUTATIONS, max_size=1).map(tuple),
       edits=st.lists(TEXT_MUTATIONS, min_size=0, max_size=2).map(tuple), encoding=ENCODINGS)
@example(example="minimal", name="intent.yaml", mutations=(), edits=(), encoding=Encoding("utf-16"))
@example(example="fabric", name="hosts.yaml", mutations=(), edits=(), encoding=Encoding("utf-8", b"\xff", 0.5))
def test_yaml_streams_text_and_encodings(cases: Path, example: str, name: str, mutations: tuple[NodeMutation, ...],
                                         edits: tuple[TextMutation, ...], encoding: Encoding) -> None:
    """Multi-document streams, directives, truncation, stray characters, other line-break conventions, UTF-16/32
    with and without BOM, a UTF-8 BOM, Latin-1 and invalid UTF-8: render accepts or refuses cleanly."""
    text = mutated_text(example, name, mutations) if mutations else original_text(example, name)
    for edit in edits:
        text = edit.apply(text)
    workspace = new_workspace(cases, example)
    workspace.file(name).write_bytes(encoding.encode(text))
    render_case(workspace)


@fuzz_settings(weight=3)
@given(example=EXAMPLE_NAMES, broken=st.dictionaries(FILES, FILE_KINDS, min_size=1, max_size=2),
       mutations=st.lists(NODE_MUTATIONS, max_size=1).map(tuple), mutated=FILES)
def test_file_kinds(cases: Path, example: str, broken: dict[str, FileKind], mutations: tuple[NodeMutation, ...],
                    mutated: str) -> None:
    """An input that is a directory, empty, only a comment, missing, a symlink (to a file, a directory, nowhere,
    /dev/null) — alone or beside another broken file: render accepts or refuses cleanly."""
    workspace = new_workspace(cases, example)
    if mutations and mutated not in broken:
        workspace.file(mutated).write_text(mutated_text(example, mutated, mutations), encoding="utf-8")
    for name, kind in sorted(broken.items()):
        kind.make(workspace.file(name))
    render_case(workspace)


def test_an_unbroken_example_renders_a_complete_tree(cases: Path) -> None:
    """The oracle's other half: the bundled examples, unmutated, reach exit 0 and pass the tree check."""
    for name in sorted(EXAMPLE_INVENTORY):
        workspace = new_workspace(cases, name)
        result = invoke_render(workspace)
        assert result.exit_code == 0, result.output
        check_complete_tree(workspace.out)
        shutil.rmtree(workspace.root)


def test_the_ci_profile_runs_at_least_2000_cases() -> None:
    """The weights of the three fuzz tests add up to 20 × max_examples, 2,000 cases under the "ci" profile."""
    fuzz_tests = (test_types_ranges_structure_and_yaml_features, test_yaml_streams_text_and_encodings, test_file_kinds)
    # Where @settings leaves its settings on the test hypothesis wraps (hypothesis has no public accessor).
    weights = [test._hypothesis_internal_use_settings.max_examples for test in fuzz_tests]  # type: ignore[attr-defined]
    assert sum(weights) == 20 * settings().max_examples
    if os.environ.get("HYPOTHESIS_PROFILE", "ci") == "ci":
        assert sum(weights) >= 2000


# Inputs the fuzzer found that ended in an internal error, each now a diagnostic (file, replacement text,
# expected message).
FOUND_BY_FUZZING = [
    # PyYAML's bool constructor looks the text up in a table: `!!bool x` was a KeyError, not a ValueError.
    ("intent.yaml", "!!bool\n", "the value is not a valid !!bool"),
    ("hosts.yaml", "leaf1: !!bool maybe\n", "the value is not a valid !!bool"),
    # ... and `!!timestamp x` an AttributeError (its regular expression did not match).
    ("intent.yaml", "fabric: !!timestamp superpod\n", "the value is not a valid !!timestamp"),
    # ipaddress takes integers, so YAML's `true` was the address 0.0.0.1 (and a DeprecationWarning inside Python's
    # ipaddress, an internal error under -W error).
    ("intent.yaml", "fabric: f\nprofile: roce\nmanagement: {vlan: 100, subnet: true, gateway: 192.0.2.1}\n",
     "management.subnet: an address or subnet is written as text"),
    ("intent.yaml", "fabric: f\nprofile: roce\nmanagement: {vlan: 100, subnet: 192.0.2.0/24, gateway: 3221225985}\n",
     "management.gateway: an address or subnet is written as text"),
    # A key longer than PyYAML's 1024-character limit on simple keys: the fast path read it and PyYAML, asked later
    # for the lines of the problems found, could not, so every diagnostic said `<inventory>:1:1`.
    ("hosts.yaml", "x" * 5000 + "leaf1: {}\n", "hosts.yaml:1:5006: <yaml>: YAML syntax error"),
]


@pytest.mark.parametrize(("name", "text", "message"), FOUND_BY_FUZZING)
def test_found_by_fuzzing(cases: Path, name: str, text: str, message: str) -> None:
    workspace = new_workspace(cases, "fabric")
    workspace.file(name).write_text(text)
    result = render_case(workspace)  # the whole oracle: a clean refusal
    assert result.exit_code == 2, result.output
    assert message in result.output
