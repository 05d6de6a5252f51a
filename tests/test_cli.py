"""The command line as people use it: render, resolve, schema, exit codes, atomic output."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import click
import pytest
import yaml
from click.testing import CliRunner

from fabricgen.build.output import (
    MANIFEST,
    RENDER_WORKER_NICENESS,
    OutputError,
    build_manifest,
    staged_render,
    write_output,
)
from fabricgen.cli import LAZY_COMMANDS, main
from fabricgen.runtime.forked import contiguous

from conftest import ROOT


@pytest.fixture(autouse=True)
def _repo_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.output


def test_render_without_arguments_renders_the_bundled_example(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    work = tmp_path / "repo"
    shutil.copytree(ROOT / "intent", work / "intent")
    shutil.copytree(ROOT / "inventory", work / "inventory")
    monkeypatch.chdir(work)
    code, output = invoke("render")
    assert code == 0, output
    assert (work / "out" / "leaf1" / "config_db.json").is_file()
    assert (work / "out" / "spine1" / "eos.cfg").is_file()
    assert (work / "out" / "node1" / "fabricgen-nic.sh").stat().st_mode & 0o111
    assert "9 devices" in output


def test_render_json_summary(tmp_path: Path) -> None:
    code, output = invoke("render", "intent/minimal.yaml", "-o", str(tmp_path / "o"), "--format", "json")
    assert code == 0
    summary = json.loads(output)
    assert summary["fabric"] == "superpod-32-minimal"
    assert summary["devices"]["node1"] == {"platform": "connectx", "role": "gpu-host", "files": [
        "fabricgen-nic.service", "fabricgen-nic.sh", "nccl.env", "resolved.json"]}


def test_manifest_records_hashes_of_inputs_and_outputs(tmp_path: Path) -> None:
    out = tmp_path / "o"
    assert invoke("render", "-o", str(out))[0] == 0
    manifest = json.loads((out / MANIFEST).read_text())
    assert manifest["generator"] == "fabricgen" and manifest["version"]
    assert set(manifest["inputs"]) == {"intent/fabric.yaml", "inventory/hosts.yaml", "inventory/groups.yaml",
                                       "inventory/defaults.yaml"}
    import hashlib
    for name, digest in manifest["files"].items():
        assert hashlib.sha256((out / name).read_bytes()).hexdigest() == digest


def test_resolve_dumps_yaml_and_json() -> None:
    code, output = invoke("resolve", "--device", "leaf1")
    assert code == 0
    data = yaml.safe_load(output)
    assert list(data["devices"]) == ["leaf1"]
    assert data["devices"]["leaf1"]["qos"]["lossless_priorities"] == [3]
    code, output = invoke("resolve", "--format", "json", "--device", "node1")
    assert json.loads(output)["devices"]["node1"]["host"]["nics"][0]["roce_tos"] == 104


def test_resolve_unknown_device_is_a_usage_error() -> None:
    code, output = invoke("resolve", "--device", "leaf9")
    assert code == 2 and "no such device: leaf9" in output


def test_missing_inventory_is_reported_not_raised(tmp_path: Path) -> None:
    code, output = invoke("render", "-i", str(tmp_path / "nowhere"), "-o", str(tmp_path / "o"))
    assert code == 2 and "inventory has no hosts.yaml" in output and "Traceback" not in output


def test_refuses_to_replace_a_directory_it_did_not_write(tmp_path: Path) -> None:
    precious = tmp_path / "home"
    precious.mkdir()
    (precious / "thesis.tex").write_text("years of work")
    code, output = invoke("render", "-o", str(precious))
    assert code == 3 and "refusing to replace it" in output
    assert (precious / "thesis.tex").read_text() == "years of work"


def tree(path: Path) -> dict[str, bytes]:
    return {str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}


def test_output_is_replaced_atomically_and_stale_files_disappear(tmp_path: Path) -> None:
    out = tmp_path / "o"
    write_output(out, {"a/x.txt": "1\n"}, build_manifest({"a/x.txt": "1\n"}, {}))
    write_output(out, {"b/y.txt": "2\n"}, build_manifest({"b/y.txt": "2\n"}, {}))
    assert sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file()) == ["b/y.txt", MANIFEST]
    assert not list(tmp_path.glob(".o.*"))  # no staging left behind


def test_failed_write_leaves_previous_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "o"
    write_output(out, {"a/x.txt": "old\n"}, build_manifest({"a/x.txt": "old\n"}, {}))

    def disk_full(*_: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("fabricgen.build.output._write_files", disk_full)
    with pytest.raises(OSError):
        write_output(out, {"a/x.txt": "new\n"}, build_manifest({"a/x.txt": "new\n"}, {}))
    assert (out / "a" / "x.txt").read_text() == "old\n"
    assert not list(tmp_path.glob(".o.*"))


def test_failed_parallel_render_leaves_previous_tree(tmp_path: Path) -> None:
    """A worker that fails half-way (a renderer bug, a full disk) aborts the whole write: nothing is swapped."""
    out = tmp_path / "o"
    write_output(out, {"a/x.txt": "old\n"}, build_manifest({"a/x.txt": "old\n"}, {}))

    def produce(names: list[str]) -> dict[str, str]:
        if "d7" in names:
            raise OSError(28, "No space left on device")
        return {f"{name}/x.txt": "new\n" for name in names}

    with pytest.raises(OSError):
        render_in_workers(out, [f"d{i}" for i in range(8)], produce)
    assert tree(out) == {"a/x.txt": b"old\n", MANIFEST: build_manifest({"a/x.txt": "old\n"}, {}).encode()}
    assert not list(tmp_path.glob(".o.*"))


def render_in_workers(out: Path, names: list[str], produce: Callable[[list[str]], dict[str, str]]) -> dict[str, str]:
    """What render does for a new tree: a worker started per chunk of devices, then the manifest."""
    with staged_render(out, jobs=2) as render:
        for chunk in contiguous(names, 3):
            render.start(produce, chunk)
        return render.finish(lambda hashes: build_manifest({}, {}, None, hashes=hashes))


def test_parallel_render_writes_what_it_hashes(tmp_path: Path) -> None:
    out = tmp_path / "o"
    hashes = render_in_workers(out, [f"d{i}" for i in range(8)], lambda names: {f"{n}/x.txt": f"{n}\n" for n in names})
    assert sorted(hashes) == [f"d{i}/x.txt" for i in range(8)]
    written = tree(out)
    manifest = json.loads(written.pop(MANIFEST))
    assert manifest["files"] == hashes
    assert written == {f"d{i}/x.txt": f"d{i}\n".encode() for i in range(8)}


def test_render_workers_run_niced_below_the_parent_that_resolves(tmp_path: Path) -> None:
    """The parent's load, resolve and lint are the path everything waits for: the workers that render beside it
    run at a nice value RENDER_WORKER_NICENESS above the parent's, which itself is left as it was."""
    before = os.nice(0)
    out = tmp_path / "o"
    render_in_workers(out, [f"d{i}" for i in range(4)], lambda names: {f"{n}/nice": f"{os.nice(0)}\n" for n in names})
    expected = min(19, before + RENDER_WORKER_NICENESS)
    assert {path.read_text() for path in out.glob("d*/nice")} == {f"{expected}\n"}
    assert os.nice(0) == before


def test_output_path_that_is_a_file(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("x")
    with pytest.raises(OutputError, match="not a directory"):
        write_output(tmp_path / "f", {}, "{}")


def test_schema_is_exported_and_in_sync_with_the_committed_copy() -> None:
    code, output = invoke("schema")
    assert code == 0
    schema = json.loads(output)
    assert schema["additionalProperties"] is False
    assert "lossless" in json.dumps(schema)
    committed = (ROOT / "intent" / "fabricgen-intent.schema.json").read_text()
    assert output == committed, "regenerate: fabricgen schema > intent/fabricgen-intent.schema.json"
    code, output = invoke("schema", "inventory")
    assert code == 0 and "rdma_device" in output


def test_help_shows_examples() -> None:
    code, output = invoke("render", "--help")
    assert code == 0 and "fabricgen render intent/minimal.yaml" in output


def command_paths(group: click.Group = main, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every command `fabricgen --help` lists, and each subcommand of a group (`profile list`, `profile show`)."""
    paths: list[tuple[str, ...]] = []
    context = click.Context(group)
    for name in group.list_commands(context):
        command = group.get_command(context, name)
        assert command is not None, name
        paths.append((*prefix, name))
        if isinstance(command, click.Group):
            paths += command_paths(command, (*prefix, name))
    return paths


def test_the_help_test_covers_every_command() -> None:
    """The list below is click's own: a command added to `fabricgen` is covered without editing this test."""
    listed = invoke("--help")[1].split("Commands:")[1].split()
    names = set(main.list_commands(click.Context(main)))
    assert {path[0] for path in command_paths()} == {word for word in listed if word in names}
    assert {"plan", "docs", "profile", "diff", "push", "rollback", "runs", "render", "lint"} <= names


def test_the_later_stages_load_only_when_their_command_runs() -> None:
    """`fabricgen render` starts without importing the deploy, docs, observe, plan, inventory and profile commands;
    each lazy name is exactly a command its registrar adds (a registrar that adds one more fails here)."""
    code = ("import sys, fabricgen.cli; print(sorted(m for m in sys.modules if m.startswith('fabricgen.cli.')))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    for stage in ("deploy", "docs", "observe", "plan", "inventory", "profile"):
        assert f"fabricgen.cli.{stage}'" not in done.stdout
    by_registrar: dict[Callable[[click.Group], None], set[str]] = {}
    for name, registrar in LAZY_COMMANDS.items():
        by_registrar.setdefault(registrar, set()).add(name)
    for registrar, names in by_registrar.items():
        scratch = click.Group()
        registrar(scratch)
        assert set(scratch.commands) == names


def test_render_starts_without_the_stages() -> None:
    """`fabricgen render` reads its options and its earlier tree's manifest with little imported, so that the
    forked check of that tree runs beside the imports of the stages (fabricgen/cli/render.py): none of pydantic,
    the models, rich, Jinja2, PyYAML or multiprocessing is imported by then."""
    code = ("import sys; from pathlib import Path; import fabricgen.cli; from fabricgen.build.output import "
            "read_manifest; read_manifest(Path('golden/fabric')); "
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'pydantic', 'rich', 'jinja2', 'yaml', "
            "'multiprocessing'}), sorted(m for m in sys.modules if m.startswith('fabricgen.models.device')))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert done.stdout.split() == ["[]", "[]"]


@pytest.mark.parametrize("path", command_paths(), ids=" ".join)
def test_every_command_s_help_has_a_description_and_examples(path: tuple[str, ...]) -> None:
    """Below the usage line: the one-line summary, then at least one paragraph saying what the command does,
    then an Examples block of two or more `fabricgen <command>` lines."""
    command = " ".join(path)
    code, output = invoke(*path, "--help")
    assert code == 0
    text = output.split("Options:")[0]
    paragraphs = [block for block in text.split("\n\n")[1:] if block.strip()]
    assert len(paragraphs) >= 3, f"{command}: summary, description and examples expected:\n{text}"
    description = " ".join(paragraphs[1].split())
    assert len(description) > 150 and description.endswith("."), f"{command}: {description!r}"
    examples = text.split("Examples:")[1].splitlines()
    assert sum(line.strip().startswith(f"fabricgen {command}") for line in examples) >= 2, text


def test_help_examples_that_only_read_run_as_shown() -> None:
    """The examples of resolve, rules and platforms run on the bundled example exactly as the help shows them
    (shell pipes and redirections left out)."""
    for command in ("resolve", "rules", "platforms", "schema"):
        _, output = invoke(command, "--help")
        for line in output.split("Examples:")[1].split("Options:")[0].splitlines():
            words = shlex.split(line.split("#")[0].split("|")[0].split(">")[0])
            if words[:1] != ["fabricgen"]:
                continue
            code, printed = invoke(*words[1:])
            assert code == 0 and printed, line


def test_shell_completion_script_and_completions() -> None:
    """What README's "Shell completion" says, with the console script pip installs (click's completion)."""
    script = Path(sys.executable).parent / "fabricgen"
    assert script.exists(), "the fabricgen console script is installed beside the interpreter"
    source = subprocess.run([str(script)], env={**os.environ, "_FABRICGEN_COMPLETE": "bash_source"},
                            capture_output=True, text=True, check=True).stdout
    assert "complete -o nosort -F _fabricgen_completion fabricgen" in source
    for shell in ("zsh", "fish"):
        found = subprocess.run([str(script)], env={**os.environ, "_FABRICGEN_COMPLETE": f"{shell}_source"},
                               capture_output=True, text=True, check=True).stdout
        assert "_fabricgen_completion" in found, shell
    completed = subprocess.run([str(script)], capture_output=True, text=True, check=True, env={
        **os.environ, "_FABRICGEN_COMPLETE": "bash_complete", "COMP_WORDS": "fabricgen lint --format ",
        "COMP_CWORD": "3"}).stdout
    assert completed.split() == ["plain,text", "plain,json", "plain,sarif"]


def test_console_script_render_skips_the_teardown_and_still_prints_everything(tmp_path: Path) -> None:
    """`python -m fabricgen render` (the console script's road, :func:`fabricgen.cli.run`) leaves its heap to the
    kernel (fabricgen.runtime.teardown): the summary still arrives whole through a pipe, with the exit status; a
    failing render still says why on stderr, with its status."""
    out = tmp_path / "o"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "fabricgen", "render", "intent/minimal.yaml", "-o", str(out),
                           "--format", "json"], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["files"] == len(json.loads((out / MANIFEST).read_text())["files"]) + 1
    failed = subprocess.run([sys.executable, "-m", "fabricgen", "render", "-i", str(tmp_path / "nothing"), "-o",
                             str(tmp_path / "p")], capture_output=True, text=True, env=env)
    assert failed.returncode == 2
    assert "inventory has no hosts.yaml" in failed.stderr and "nothing was written" in failed.stderr


def test_objects_are_kept_until_exit_only_under_the_console_script(tmp_path: Path) -> None:
    """In-process callers (CliRunner, the API) free each render's objects as before: nothing is kept for them."""
    import gc
    import weakref

    from fabricgen.runtime import teardown
    held = {"a": 1}
    teardown.keep_until_exit(held)
    assert teardown._kept is None
    assert invoke("render", "intent/minimal.yaml", "-o", str(tmp_path / "o"))[0] == 0
    assert teardown._kept is None
    gone = click.Context(main)  # any object render does not hold: freed once this test drops it
    ref = weakref.ref(gone)
    teardown.keep_until_exit(gone)
    del gone
    gc.collect()
    assert ref() is None
