"""The validated compact inventory and render's lint report, kept for a warm render of the same files
(fabricgen.load.inventorycache, fabricgen.lint.reportcache): what is restored is what a load or lint makes,
field for field; anything changed, secret or damaged is read in full again."""

from __future__ import annotations

import hashlib
import marshal
import shutil
import stat
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from pydantic import BaseModel

import fabricgen.lint.reportcache as reportcache
import fabricgen.load.inventorycache as inventorycache
import fabricgen.load.yamlsource as yamlsource
from fabricgen.cli import main
from fabricgen.lint import lint
from fabricgen.load.fabric import FabricInput, load
from fabricgen.load.parsecache import seal
from fabricgen.load.sources.export import export_compact
from fabricgen.models.diagnostics import InputError
from fabricgen.resolve import resolve

from conftest import ROOT


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The mixed example (every platform, addresses, namespaced hosts) as a compact inventory, with a cache of
    its own."""
    monkeypatch.setenv("FABRICGEN_CACHE_DIR", str(tmp_path / "cache"))
    shutil.copy(ROOT / "intent" / "mixed.yaml", tmp_path / "fabric.yaml")
    export_compact(ROOT / "inventory" / "mixed", tmp_path / "inventory")
    return tmp_path


def load_and_keep(workspace: Path) -> FabricInput:
    loaded = load(workspace / "fabric.yaml", workspace / "inventory")
    assert loaded.keep is not None and loaded.inventory_sources is None  # read in full, and may be kept
    loaded.keep()
    return loaded


def kept_files(workspace: Path, prefix: str) -> list[Path]:
    return sorted((workspace / "cache").glob(f"{prefix}-*.marshal"))


def models(value: Any, path: str = "") -> list[tuple[str, Any, Any, Any]]:
    """Every model under ``value`` with its class, fields given and __dict__, and every value's type, by path."""
    found: list[tuple[str, Any, Any, Any]] = []
    if isinstance(value, BaseModel):
        found.append((path, type(value), sorted(value.model_fields_set), list(value.__dict__)))
        for name, item in value.__dict__.items():
            found += models(item, f"{path}.{name}")
    elif isinstance(value, dict):
        for key, item in value.items():
            found += models(item, f"{path}[{key!r}]")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += models(item, f"{path}[{index}]")
    else:
        found.append((path, type(value), None, None))
    return found


def test_a_kept_inventory_is_restored_as_load_made_it(workspace: Path) -> None:
    fresh = load_and_keep(workspace)
    [kept] = kept_files(workspace, "inventory")
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    restored = load(workspace / "fabric.yaml", workspace / "inventory")
    assert restored.keep is None and restored.inventory_sources is not None  # restored, not read
    assert restored.inventory == fresh.inventory
    assert models(restored.inventory.devices) == models(fresh.inventory.devices)
    assert [(type(link), link) for link in restored.inventory.links] == \
        [(type(link), link) for link in fresh.inventory.links]
    assert list(restored.input_hashes.items()) == list(fresh.input_hashes.items())  # the manifest's order too
    assert restored.skipped == fresh.skipped
    assert fresh.hosts_entries is not None and restored.hosts_entries is not None
    assert restored.hosts_entries == fresh.hosts_entries  # the render state the neighbourhood update reads


def test_a_restored_inventory_resolves_and_lints_as_a_loaded_one(workspace: Path) -> None:
    fresh = load_and_keep(workspace)
    restored = load(workspace / "fabric.yaml", workspace / "inventory")
    assert restored.keep is None
    fabric = resolve(restored.intent, restored.inventory, restored.locate)
    assert fabric == resolve(fresh.intent, fresh.inventory, fresh.locate)
    assert lint(fabric).findings == lint(resolve(fresh.intent, fresh.inventory)).findings


def test_a_problem_in_a_restored_inventory_is_located_as_in_a_loaded_one(workspace: Path) -> None:
    """The source map is not kept: the first location asked for in the inventory reads it in full."""
    fresh = load_and_keep(workspace)
    restored = load(workspace / "fabric.yaml", workspace / "inventory")
    assert restored.keep is None
    cabled = [(name, port) for name, device in fresh.inventory.devices.items()
              for port, spec in device.data.ports.items() if spec.peer][:5]
    paths: list[tuple[str, ...]] = [("inventory", name, "data", "ports", port, "peer") for name, port in cabled]
    paths += [("inventory", name, "hostname") for name in list(fresh.inventory.devices)[:3]]
    assert [restored.locate(path) for path in paths] == [fresh.locate(path) for path in paths]
    assert restored.inventory_sources is None  # read once


def test_an_edited_file_is_read_again(workspace: Path) -> None:
    load_and_keep(workspace)
    table = workspace / "inventory" / "cabling.csv"
    lines = table.read_text().splitlines()
    first = lines[1].split(",")
    first[4] = str(int(first[4] or 1) + 1)
    table.write_text("\n".join([lines[0], ",".join(first), *lines[2:]]) + "\n")
    edited = load(workspace / "fabric.yaml", workspace / "inventory")
    assert edited.keep is not None  # read, not restored
    port = edited.inventory.devices[first[0]].data.ports[first[1]]
    assert port.cable_m == int(first[4])


def test_a_file_edited_while_it_is_read_is_not_kept(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The key is the files' bytes as first read; an edit landing before the inventory is read makes the two
    differ, and what was read is not kept under the earlier bytes."""
    before = inventorycache.key_of(workspace / "inventory")
    assert before is not None
    table = workspace / "inventory" / "cabling.csv"
    table.write_text(table.read_text().replace(",optic", ",dac", 1))
    monkeypatch.setattr(inventorycache, "key_of", lambda directory: before)
    loaded = load(workspace / "fabric.yaml", workspace / "inventory")
    assert loaded.keep is None
    assert loaded.input_hashes["inventory/cabling.csv"] != before.hashes["inventory/cabling.csv"]


def test_a_bad_edit_is_reported_not_restored(workspace: Path) -> None:
    load_and_keep(workspace)
    table = workspace / "inventory" / "cabling.csv"
    table.write_text(table.read_text().replace(",optic", ",laser", 1))
    with pytest.raises(InputError) as caught:
        load(workspace / "fabric.yaml", workspace / "inventory")
    assert any(str(problem).startswith(f"{table}:") and ".media:" in str(problem)
               for problem in caught.value.diagnostics)


def test_another_fabricgen_does_not_restore_it(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    load_and_keep(workspace)
    monkeypatch.setattr(inventorycache, "code_digest", lambda: b"an edited module")
    assert load(workspace / "fabric.yaml", workspace / "inventory").keep is not None


def test_a_stricter_limit_does_not_restore_it(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    load_and_keep(workspace)
    monkeypatch.setenv("FABRICGEN_MAX_YAML_DEPTH", "3")
    with pytest.raises(InputError, match="levels deep"):
        load(workspace / "fabric.yaml", workspace / "inventory")


def test_a_damaged_file_is_refused(workspace: Path) -> None:
    load_and_keep(workspace)
    [kept] = kept_files(workspace, "inventory")
    damaged = bytearray(kept.read_bytes())
    damaged[-10] ^= 0xFF
    kept.write_bytes(bytes(damaged))
    again = load(workspace / "fabric.yaml", workspace / "inventory")
    assert again.keep is not None  # read in full


def test_a_payload_of_another_shape_is_refused(workspace: Path) -> None:
    """A file sealed right but holding something else (another format's payload) restores nothing."""
    load_and_keep(workspace)
    [kept] = kept_files(workspace, "inventory")
    key = inventorycache.key_of(workspace / "inventory")
    assert key is not None and kept.name == key.name
    for payload in (b"\x00", marshal.dumps((99, [], [], [], [], None, {})), marshal.dumps(["not", "a", "payload"])):
        kept.write_bytes(seal(hashlib.sha256(key.name.encode()).digest(), payload))
        assert inventorycache.restore(key) is None


def test_an_inventory_with_credentials_is_never_kept(workspace: Path) -> None:
    groups = workspace / "inventory" / "groups.yaml"
    groups.write_text(groups.read_text() + "\n".join(["", "secured:", "  password: hunter2", ""]))
    devices = workspace / "inventory" / "devices.yaml"
    text = devices.read_text()
    name = next(line.split(":")[0].strip() for line in text.splitlines()[text.splitlines().index("devices:") + 1:])
    devices.write_text(text.replace(f"  {name}: {{", f"  {name}: {{password: hunter2, ", 1))
    loaded = load(workspace / "fabric.yaml", workspace / "inventory")
    assert loaded.inventory.devices[name].password == "hunter2"
    assert loaded.keep is not None
    loaded.keep()
    assert kept_files(workspace, "inventory") == []
    assert all(b"hunter2" not in path.read_bytes() for path in (workspace / "cache").iterdir())


def test_another_automations_secret_keeps_it_from_the_cache(workspace: Path) -> None:
    """A host that is not fabricgen's is skipped, but the Nornir hosts as built (the render state) hold it, with
    the keys other automation keeps: such an inventory is not kept either."""
    devices = workspace / "inventory" / "devices.yaml"
    devices.write_text(devices.read_text() + "  vault: {hostname: 192.0.2.250, data: {fabricgen: null, api_token: "
                       "s3cr3t}}\n")
    loaded = load(workspace / "fabric.yaml", workspace / "inventory", note=lambda line: None)
    assert "vault" in loaded.skipped
    assert loaded.keep is not None
    loaded.keep()
    assert kept_files(workspace, "inventory") == []
    assert all(b"s3cr3t" not in path.read_bytes() for path in (workspace / "cache").iterdir())


def test_a_simple_inventory_is_not_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FABRICGEN_CACHE_DIR", str(tmp_path / "cache"))
    loaded = load(ROOT / "intent" / "fabric.yaml", ROOT / "inventory")
    assert loaded.keep is None and inventorycache.key_of(ROOT / "inventory") is None


def test_without_a_cache_nothing_is_kept(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FABRICGEN_NO_CACHE", "1")
    assert load(workspace / "fabric.yaml", workspace / "inventory").keep is None


# --- render: the inventory kept by a worker, the lint report by the gate ---------------------------------------

def render(workspace: Path, out: str, *extra: str) -> Any:
    return CliRunner().invoke(main, ["render", str(workspace / "fabric.yaml"), "-i", str(workspace / "inventory"),
                                     "-o", str(workspace / out), *extra])


def tree(out: Path) -> dict[str, bytes]:
    return {str(path.relative_to(out)): path.read_bytes() for path in sorted(out.rglob("*")) if path.is_file()}


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_warm_render_writes_the_cold_renders_tree(workspace: Path, jobs: str) -> None:
    cold = render(workspace, "out-1", "--jobs", jobs)
    assert cold.exit_code == 0, cold.output
    assert len(kept_files(workspace, "inventory")) == 1 and len(kept_files(workspace, "lint")) == 1
    warm = render(workspace, "out-2", "--jobs", jobs)
    assert warm.exit_code == 0, warm.output
    assert tree(workspace / "out-2") == tree(workspace / "out-1")
    assert warm.output.replace("out-2", "out-1") == cold.output


def test_a_kept_lint_report_is_the_report(workspace: Path) -> None:
    loaded = load(workspace / "fabric.yaml", workspace / "inventory")
    report = lint(resolve(loaded.intent, loaded.inventory, loaded.locate))
    assert report.findings or report.waived  # something to keep
    key = reportcache.report_key(loaded.input_hashes)
    assert key is not None
    reportcache.keep_report(key, report)
    kept = reportcache.restore_report(key)
    assert kept is not None
    assert [(f, f.source, f.where) for f in kept.findings] == [(f, f.source, f.where) for f in report.findings]
    assert [(w.finding, w.finding.source, w.reason) for w in kept.waived] == \
        [(w.finding, w.finding.source, w.reason) for w in report.waived]
    assert (kept.devices, kept.links, kept.skipped) == (report.devices, report.links, report.skipped)


def test_a_lint_report_is_keyed_by_every_input_file(workspace: Path) -> None:
    loaded = load(workspace / "fabric.yaml", workspace / "inventory")
    key = reportcache.report_key(loaded.input_hashes)
    for label in loaded.input_hashes:
        assert reportcache.report_key({**loaded.input_hashes, label: "0" * 64}) != key
    assert reportcache.report_key({**loaded.input_hashes, "inventory/nautobot": "0" * 64}) is None


def lint_cli(workspace: Path, *extra: str) -> Any:
    return CliRunner().invoke(main, ["lint", str(workspace / "fabric.yaml"), "-i", str(workspace / "inventory"),
                                     *extra])


@pytest.mark.parametrize("fmt", ["text", "json", "sarif"])
def test_lint_reports_the_kept_report_of_the_same_files_as_it_would_lint_them(
        fmt: str, workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`fabricgen lint` after a render (or a lint) of the same files by the same code prints the report that run
    kept, byte for byte, without resolving or linting again; an edited file is linted again."""
    def found(output: str) -> bool:  # a SARIF log lists every rule; its results name theirs as ruleId
        return ('"ruleId": "FG-MTU-003"' if fmt == "sarif" else "FG-MTU-003") in output

    intent = workspace / "fabric.yaml"
    intent.write_text(intent.read_text().replace("  host: 9000 ", "  host: 4096 ", 1))  # an error: FG-MTU-003
    monkeypatch.setenv("FABRICGEN_NO_CACHE", "1")
    uncached = lint_cli(workspace, "--format", fmt)
    monkeypatch.delenv("FABRICGEN_NO_CACHE")
    assert uncached.exit_code == 1 and found(uncached.output)
    assert render(workspace, "out").exit_code == 1  # the gate stops it, and keeps the report it gated on
    assert len(kept_files(workspace, "lint")) == 1

    def not_again(*_: object, **__: object) -> None:
        raise AssertionError("resolved or linted again")

    with monkeypatch.context() as patched:
        patched.setattr("fabricgen.cli.lint.lint", not_again)
        patched.setattr("fabricgen.cli.lint._resolve_counted", not_again)
        kept = lint_cli(workspace, "--format", fmt)
        narrowed = lint_cli(workspace, "--format", fmt, "--select", "FG-PFC")
    assert (kept.exit_code, kept.output) == (uncached.exit_code, uncached.output)
    assert narrowed.exit_code == 0 and not found(narrowed.output)
    intent.write_text(intent.read_text().replace("  host: 4096 ", "  host: 9000 ", 1))
    fixed = lint_cli(workspace, "--format", fmt)
    assert fixed.exit_code == 0 and not found(fixed.output)
    assert len(kept_files(workspace, "lint")) == 2  # lint kept the report of the edited files


@pytest.mark.parametrize("edited", ["fabric.yaml", "inventory/devices.yaml"])
def test_input_hashes_name_the_bytes_that_were_parsed(edited: str, workspace: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """An editor that saves a file while load reads it: the hash recorded for it (the manifest's, and the key of
    the kept inventory and lint report) is that of the bytes load parsed, never of a read before or after."""
    path = workspace / edited
    before = path.read_bytes()
    after = before.replace(b"fabric: mixed-vendor", b"fabric: renamed") if edited == "fabric.yaml" \
        else before + b"\n# saved again\n"
    assert after != before
    real = yamlsource.read_input

    def saved_just_before_the_read(target: Path) -> bytes:
        if target == path:
            path.write_bytes(after)  # the editor's save lands between any earlier read and this one
        return real(target)

    monkeypatch.setattr(yamlsource, "read_input", saved_just_before_the_read)
    loaded = load(workspace / "fabric.yaml", workspace / "inventory")
    label = "intent/fabric.yaml" if edited == "fabric.yaml" else "inventory/devices.yaml"
    assert loaded.input_hashes[label] == hashlib.sha256(after).hexdigest()
    if edited == "fabric.yaml":
        assert loaded.intent.fabric == "renamed"


def test_a_kept_lint_error_still_stops_the_render(workspace: Path) -> None:
    """The gate fails on a kept report's errors as on lint's: nothing is written, and the same errors print."""
    intent = workspace / "fabric.yaml"
    intent.write_text(intent.read_text().replace("  host: 9000 ", "  host: 4096 ", 1))  # FG-MTU-003
    first = render(workspace, "out")
    assert first.exit_code == 1, first.output
    assert len(kept_files(workspace, "lint")) == 1
    again = render(workspace, "out")
    assert again.exit_code == 1
    assert again.output == first.output
    assert not (workspace / "out").exists()


def test_a_resolve_problem_after_a_restore_is_reported_at_its_file_and_line(workspace: Path,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """An intent edit that a restored inventory's devices break (switch addresses outside a new management
    subnet) is reported at each device's line in devices.yaml, as a render that read the inventory reports it."""
    assert render(workspace, "out").exit_code == 0
    assert len(kept_files(workspace, "inventory")) == 1
    intent = workspace / "fabric.yaml"
    intent.write_text(intent.read_text().replace("  subnet: 192.0.2.0/24\n  gateway: 192.0.2.1",
                                                 "  subnet: 198.51.100.0/24\n  gateway: 198.51.100.1", 1))
    restored = render(workspace, "out")
    monkeypatch.setenv("FABRICGEN_CACHE_DIR", str(workspace / "another-cache"))
    read = render(workspace, "out")
    assert restored.exit_code == read.exit_code == 2
    assert f"{workspace / 'inventory' / 'devices.yaml'}:" in restored.output
    assert "outside management subnet" in restored.output
    assert restored.output == read.output


def test_a_tree_rendered_warm_takes_the_neighbourhood_update(workspace: Path) -> None:
    """A warm render records the render state from the restored hosts as the cold one did: an edited cable
    length after it is a neighbourhood update, and leaves the tree a full render writes."""
    assert render(workspace, "cold").exit_code == 0
    assert render(workspace, "warm", "--format", "json").exit_code == 0  # restored: inventory and lint report
    table = workspace / "inventory" / "cabling.csv"
    lines = table.read_text().splitlines()
    cable = next(line for line in lines[1:] if line.split(",")[4])
    fields = cable.split(",")
    fields[4] = str(int(fields[4]) + 1)
    table.write_text(table.read_text().replace(cable, ",".join(fields), 1))
    update = render(workspace, "warm", "--format", "json")
    assert update.exit_code == 0, update.output
    assert '"update": "neighbourhood"' in update.stdout
    assert render(workspace, "reference").exit_code == 0
    assert tree(workspace / "warm") == tree(workspace / "reference")
