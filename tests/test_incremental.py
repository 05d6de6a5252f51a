"""Incremental render: after a commit that touches a few devices, `fabricgen render` into the existing tree
rewrites only their files, and the tree is byte for byte what a full render would write."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

import fabricgen.build.output as output
from fabricgen.build.incremental import DEPLOY_ONLY, renderer_fingerprint
from fabricgen.build.output import INCOMPLETE, MANIFEST
from fabricgen.cli import main
from fabricgen.platforms.common.templating import templates_dir

from conftest import ROOT


def tree(path: Path) -> dict[str, bytes]:
    return {str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}


def stamps(path: Path) -> dict[str, int]:
    return {str(p.relative_to(path)): p.stat().st_ino for p in sorted(path.rglob("*")) if p.is_file()}


def render(inventory: Path, out: Path, *extra: str) -> dict[str, object]:
    result = CliRunner().invoke(main, ["render", str(ROOT / "intent" / "fabric.yaml"), "-i", str(inventory),
                                       "-o", str(out), "--format", "json", "--jobs", "1", *extra])
    assert result.exit_code == 0, result.output
    summary: dict[str, object] = json.loads(result.output)
    return summary


@pytest.fixture
def inventory(tmp_path: Path) -> Path:
    copy = tmp_path / "inventory"
    shutil.copytree(ROOT / "inventory", copy, ignore=shutil.ignore_patterns("mixed"))
    return copy


def edit_hosts(inventory: Path, old: str, new: str) -> None:
    hosts = inventory / "hosts.yaml"
    text = hosts.read_text()
    assert text.count(old) == 1, f"{old!r} must occur once in the example inventory"
    hosts.write_text(text.replace(old, new))


def full_render(inventory: Path, tmp_path: Path) -> dict[str, bytes]:
    reference = tmp_path / "reference"
    render(inventory, reference)
    return tree(reference)


def lengthen_leaf1_uplink(inventory: Path) -> None:
    edit_hosts(inventory, 'peer: "spine1:Ethernet1/1", cable_m: 30', 'peer: "spine1:Ethernet1/1", cable_m: 37')


def test_a_cable_change_rewrites_only_its_two_devices(inventory: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    first = render(inventory, out)
    before, inodes = tree(out), stamps(out)
    lengthen_leaf1_uplink(inventory)

    second = render(inventory, out)

    after = tree(out)
    assert after == full_render(inventory, tmp_path)
    changed = sorted(name for name in after if after[name] != before.get(name))
    touched_devices = {name.split("/")[0] for name in changed if "/" in name}
    assert touched_devices == {"leaf1", "spine1"}, changed  # the cable's two ends (leaf1's headroom follows it)
    assert MANIFEST in changed
    assert second["rewritten"] == len(changed) < first["rewritten"] == len(after)  # type: ignore[operator]
    untouched = [name for name in after if name not in changed]
    assert untouched and all(stamps(out)[name] == inodes[name] for name in untouched), "unchanged files kept"


def test_nothing_changed_rewrites_nothing(inventory: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    render(inventory, out)
    before, inodes = tree(out), stamps(out)
    assert render(inventory, out)["rewritten"] == 0
    assert tree(out) == before and stamps(out) == inodes


def test_a_removed_device_loses_its_directory(inventory: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    render(inventory, out)
    hosts = inventory / "hosts.yaml"
    text = hosts.read_text()
    hosts.write_text(text[:text.index("\nnode4:")] + "\n")  # the last host, with its two RDMA cables
    edit_hosts(inventory, 'Ethernet4: {speed: 1G, peer: "node4:bmc", cable_m: 3, media: copper}',
               "Ethernet4: {speed: 1G}")  # and its BMC cable on the OOB switch
    render(inventory, out)
    assert not (out / "node4").exists()
    assert tree(out) == full_render(inventory, tmp_path)


def test_a_hand_edited_file_makes_the_render_full(inventory: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    total = render(inventory, out)["rewritten"]
    config = next(p for p in sorted(out.rglob("*.cfg")))
    config.write_text(config.read_text() + "! hand edit\n")
    manifest_time = (out / MANIFEST).stat().st_mtime_ns
    os.utime(config, ns=(manifest_time + 10**9, manifest_time + 10**9))
    assert render(inventory, out)["rewritten"] == total
    assert tree(out) == full_render(inventory, tmp_path)


@pytest.mark.parametrize("backdate", ["its own mtime", "a year ago", "and the manifest into the future"])
def test_an_edit_with_an_old_mtime_is_seen(backdate: str, inventory: Path, tmp_path: Path) -> None:
    """`cp -p`, `touch -d`, a restore from backup: an edited file whose mtime is set back to (or before) the
    render's still makes the render full. Same size too: one digit changed."""
    out = tmp_path / "out"
    total = render(inventory, out)["rewritten"]
    config = out / "spine1" / "eos.cfg"
    original = config.stat()
    text = config.read_text()
    assert "bandwidth percent 50" in text
    config.write_text(text.replace("bandwidth percent 50", "bandwidth percent 90", 1))
    old_ns = original.st_mtime_ns if backdate == "its own mtime" else original.st_mtime_ns - 365 * 86400 * 10**9
    os.utime(config, ns=(old_ns, old_ns))
    if backdate == "and the manifest into the future":
        future_ns = (out / MANIFEST).stat().st_mtime_ns + 86400 * 10**9
        os.utime(out / MANIFEST, ns=(future_ns, future_ns))
    assert config.stat().st_size == original.st_size and config.stat().st_mtime_ns <= original.st_mtime_ns
    assert render(inventory, out)["rewritten"] == total
    assert tree(out) == full_render(inventory, tmp_path)


def test_files_newer_than_the_manifest_are_trusted_when_their_hash_matches(inventory: Path,
                                                                           tmp_path: Path) -> None:
    """A fresh git checkout of a committed tree stamps files in any order: their content decides."""
    out = tmp_path / "out"
    render(inventory, out)
    manifest_time = (out / MANIFEST).stat().st_mtime_ns
    for path in out.rglob("*.json"):
        os.utime(path, ns=(manifest_time + 10**9, manifest_time + 10**9))
    assert render(inventory, out)["rewritten"] == 0


@pytest.mark.parametrize("damage", ["symlink", "fifo", "mode"])
def test_anything_but_the_files_fabricgen_wrote_makes_the_render_full(damage: str, inventory: Path,
                                                                     tmp_path: Path) -> None:
    out = tmp_path / "out"
    total = render(inventory, out)["rewritten"]
    target = out / "node1" / "fabricgen-nic.sh"
    if damage == "symlink":
        target.unlink()
        target.symlink_to(tmp_path / "nowhere")
    elif damage == "fifo":
        target.unlink()
        os.mkfifo(target)
    elif damage == "mode":
        target.chmod(0o644)
    assert render(inventory, out)["rewritten"] == total
    assert tree(out) == full_render(inventory, tmp_path)
    assert os.access(target, os.X_OK)


@pytest.mark.parametrize("stray", ["notes.txt", "leaf1/junk/", "leaf1/notes.txt"])
def test_a_tree_holding_what_fabricgen_did_not_write_is_not_replaced(stray: str, inventory: Path,
                                                                     tmp_path: Path) -> None:
    """fabricgen deletes only what it can prove it wrote: a stray file or directory stops the render (exit 3)
    and the tree stays as it was, stray included."""
    out = tmp_path / "out"
    render(inventory, out)
    if stray.endswith("/"):
        (out / stray).mkdir()
    else:
        (out / stray).write_text("mine\n")
    before = tree(out)
    result = CliRunner().invoke(main, ["render", str(ROOT / "intent" / "fabric.yaml"), "-i", str(inventory),
                                       "-o", str(out), "--jobs", "1"])
    assert result.exit_code == 3, result.output
    assert repr(stray.rstrip("/")) in result.output and "does not list" in result.output
    assert tree(out) == before and (out / stray).exists()


def test_another_renderer_makes_the_render_full(inventory: Path, tmp_path: Path) -> None:
    """A changed template or fabricgen version changes the manifest's renderer fingerprint."""
    out = tmp_path / "out"
    total = render(inventory, out)["rewritten"]
    manifest = json.loads((out / MANIFEST).read_text())
    manifest["renderer"] = "0" * 64
    (out / MANIFEST).write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    assert render(inventory, out)["rewritten"] == total
    assert tree(out) == full_render(inventory, tmp_path)


def test_full_flag_and_other_shard_rewrite_everything(inventory: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    total = render(inventory, out)["rewritten"]
    assert render(inventory, out, "--full")["rewritten"] == total
    assert tree(out) == full_render(inventory, tmp_path)
    sliced = render(inventory, out, "--shard", "1/2")
    assert sliced["rewritten"] == sliced["files"]
    reference = tmp_path / "slice"
    render(inventory, reference, "--shard", "1/2")
    assert tree(out) == tree(reference)


def test_the_renderer_fingerprint_follows_code_and_templates(tmp_path: Path) -> None:
    """A template or renderer module edited in a checkout (same version number) re-renders everything."""
    package = Path(output.__file__).parents[1]
    copies = []
    for name in ("a", "b", "c"):
        copy = tmp_path / name
        shutil.copytree(package, copy / "fabricgen", ignore=shutil.ignore_patterns("__pycache__", "templates"))
        shutil.copytree(templates_dir(), copy / "templates")
        copies.append(copy)
    for path, addition in ((copies[1] / "fabricgen" / "platforms" / "eos" / "render.py", "# changed\n"),
                           (copies[2] / "templates" / "eos" / "device.cfg.j2", "{# changed #}\n")):
        path.write_text(path.read_text() + addition)
    prints = {renderer_fingerprint(copy / "templates", copy / "fabricgen") for copy in copies}
    assert len(prints) == 3


def test_deploy_modules_are_outside_the_fingerprint_because_rendering_never_imports_them(tmp_path: Path) -> None:
    """A platform's NAPALM driver (and what only it imports) may change without re-rendering the fabric."""
    package = Path(output.__file__).parents[1]
    copy = tmp_path / "copy"
    shutil.copytree(package, copy / "fabricgen", ignore=shutil.ignore_patterns("__pycache__", "templates"))
    before = renderer_fingerprint(templates_dir(), copy / "fabricgen")
    deploy_modules = [path for path in (copy / "fabricgen" / "platforms").rglob("*.py") if path.name in DEPLOY_ONLY]
    assert {path.name for path in deploy_modules} == DEPLOY_ONLY
    for path in deploy_modules:
        path.write_text(path.read_text() + "# changed\n")
    assert renderer_fingerprint(templates_dir(), copy / "fabricgen") == before
    program = textwrap.dedent(f"""
        import sys
        from fabricgen.cli import main
        for intent, inventory in (("intent/fabric.yaml", "inventory"), ("intent/mixed.yaml", "inventory/mixed")):
            try:
                main(["render", intent, "-i", inventory, "-o", sys.argv[1] + intent.split("/")[1]])
            except SystemExit as done:
                assert not done.code, done.code
        deploy_only = {sorted(DEPLOY_ONLY)!r}
        print(sorted(name for name in sys.modules
                     if (name.startswith("fabricgen.platforms.") and name.rsplit(".", 1)[-1] + ".py" in deploy_only)
                     or name.split(".")[0] == "napalm"))
        """)
    done = subprocess.run([sys.executable, "-c", program, str(tmp_path / "out-")], cwd=ROOT, capture_output=True,
                          text=True, check=False, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "[]"


def test_interrupted_update_is_marked_and_repaired(inventory: Path, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "out"
    render(inventory, out)
    before = tree(out)
    lengthen_leaf1_uplink(inventory)
    real_replace = output._replace_file
    calls: list[str] = []

    def crash_after_first(root: Path, name: str, text: str) -> Path:
        if calls:
            raise OSError(28, "No space left on device")
        calls.append(name)
        return real_replace(root, name, text)

    monkeypatch.setattr(output, "_replace_file", crash_after_first)
    result = CliRunner().invoke(main, ["render", str(ROOT / "intent" / "fabric.yaml"), "-i", str(inventory),
                                       "-o", str(out), "--jobs", "1"])
    assert result.exit_code == 3, result.output
    assert (out / INCOMPLETE).exists()
    expected = full_render(inventory, tmp_path)
    for name, data in tree(out).items():  # every file whole: the old bytes or the new ones
        assert name == INCOMPLETE or data in (before.get(name), expected.get(name)), name
    lint = CliRunner().invoke(main, ["lint", str(ROOT / "intent" / "fabric.yaml"), "-i", str(inventory),
                                     "--configs", str(out)])
    assert lint.exit_code == 2 and "interrupted render" in lint.output

    monkeypatch.undo()
    render(inventory, out)
    assert tree(out) == expected
