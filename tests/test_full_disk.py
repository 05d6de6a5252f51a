"""A render that runs out of disk space: exit 3 with a message that says so, the previous tree byte for byte as it
was, nothing left beside it (no staging tree, no half-written file, no lock, no cache debris).

The disk is a 1 MiB tmpfs mounted in a private mount namespace (``unshare -m`` as root, ``unshare -rm`` as a user
where the kernel allows it), so nothing outside the test sees it and the kernel unmounts it when the test's
processes exit. In it: the output tree, a copy of the inventory, the parse cache. This module is also the
program run inside the namespace (``python test_full_disk.py DIR``), which prints what it saw as JSON.
"""

from __future__ import annotations

import errno
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
DISK_BYTES = 1024 * 1024  # the bundled example's tree is 260 KB: a full render (staging + tree) fits


def _unshare_prefix(mount_point: Path) -> list[str] | None:
    """The command that runs a program with a private tmpfs at ``mount_point``; None when this machine cannot."""
    unshare = shutil.which("unshare")
    if unshare is None:
        return None
    for flags in (["-m"], ["-rm"]) if os.geteuid() == 0 else (["-rm"],):
        probe = subprocess.run([unshare, *flags, "sh", "-c", f"mount -t tmpfs -o size={DISK_BYTES} tmpfs "
                                f"'{mount_point}'"], capture_output=True, check=False, timeout=30)
        if probe.returncode == 0:
            return [unshare, *flags, "sh", "-c", f"mount -t tmpfs -o size={DISK_BYTES} tmpfs \"$1\" && "
                    'shift && exec "$@"', "sh", str(mount_point)]
    return None


@pytest.fixture(scope="module")
def full_disk_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    mount_point = tmp_path_factory.mktemp("disk")
    prefix = _unshare_prefix(mount_point)
    if prefix is None:
        pytest.skip(reason="cannot mount a tmpfs here (needs root, or unprivileged user namespaces)")
    result = subprocess.run([*prefix, sys.executable, __file__, str(mount_point)], capture_output=True,
                            text=True, timeout=300, check=False, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    runs: dict[str, Any] = json.loads(result.stdout)
    return runs


def test_the_disk_really_was_full(full_disk_runs: dict[str, Any]) -> None:
    assert full_disk_runs["free_bytes"] < 4096 and full_disk_runs["first_render"] == 0


@pytest.mark.parametrize("render", ["whole tree, one process", "whole tree, two processes", "incremental update"])
def test_a_render_on_a_full_disk_fails_cleanly(render: str, full_disk_runs: dict[str, Any]) -> None:
    run = full_disk_runs["renders"][render]
    assert run["exit"] == 3, run["stderr"]
    assert "No space left on device" in run["stderr"] and "Traceback" not in run["stderr"]
    assert "the previous output (if any) is unchanged" in run["stderr"]
    assert run["tree_unchanged"], "the previous tree changed"
    assert run["beside_out"] == ["cache", "filler", "inventory", "out"], "something was left beside OUT"
    assert run["cache_debris"] == [], "half-written cache files"


def test_with_space_again_the_next_render_succeeds(full_disk_runs: dict[str, Any]) -> None:
    assert full_disk_runs["after"] == {"exit": 0, "matches_a_fresh_render": True}


# --- the program run inside the namespace ---------------------------------------------------------------------

def _tree(path: Path) -> dict[str, tuple[bytes, int]]:
    return {str(p.relative_to(path)): (p.read_bytes(), p.stat().st_mode) for p in sorted(path.rglob("*"))
            if p.is_file()}


def _render(disk: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "FABRICGEN_CACHE_DIR": str(disk / "cache")}
    env.pop("FABRICGEN_NO_CACHE", None)
    return subprocess.run([sys.executable, "-m", "fabricgen", "render", str(ROOT / "intent" / "fabric.yaml"),
                           "-i", str(disk / "inventory"), "-o", str(disk / "out"), *extra], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120, check=False)


def _fill(path: Path) -> int:
    """Write ``path`` until the disk is full; the bytes left free (a tmpfs has no reserve)."""
    with path.open("wb", buffering=0) as handle:
        try:
            while True:
                handle.write(b"\0" * 4096)
        except OSError as exc:
            assert exc.errno == errno.ENOSPC, exc
    status = os.statvfs(path.parent)
    return status.f_bavail * status.f_frsize


def _edit_inventory(disk: Path) -> None:
    """Lengthen one cable by a metre: the incremental update rewrites two devices, a --full render everything."""
    hosts = disk / "inventory" / "hosts.yaml"
    text = hosts.read_text()
    found = re.search(r'peer: "spine1:Ethernet1/1", cable_m: (\d+)', text)
    assert found is not None, "the bundled inventory cables leaf1 to spine1:Ethernet1/1"
    hosts.write_text(text.replace(found[0], f'peer: "spine1:Ethernet1/1", cable_m: {int(found[1]) + 1}', 1))


def _attempt(disk: Path, extra: list[str]) -> dict[str, Any]:
    before = _tree(disk / "out")
    _edit_inventory(disk)
    free = _fill(disk / "filler")
    result = _render(disk, *extra)
    attempt = {"exit": result.returncode, "stderr": result.stderr, "tree_unchanged": _tree(disk / "out") == before,
               "beside_out": sorted(path.name for path in disk.iterdir()),
               "cache_debris": sorted(path.name for path in (disk / "cache").iterdir() if path.name.endswith(".tmp")),
               "free": free}
    (disk / "filler").unlink()
    return attempt


def main(disk: Path) -> None:
    shutil.copytree(ROOT / "inventory", disk / "inventory", ignore=shutil.ignore_patterns("mixed"))
    first = _render(disk).returncode
    renders = {
        "whole tree, one process": _attempt(disk, ["--full", "--jobs", "1"]),
        "whole tree, two processes": _attempt(disk, ["--full", "--jobs", "2"]),
        "incremental update": _attempt(disk, ["--jobs", "1"]),
    }
    again = _render(disk).returncode
    rendered = _tree(disk / "out")
    shutil.rmtree(disk / "out")
    fresh = _render(disk, "--full")
    print(json.dumps({"first_render": first, "renders": renders,
                      "free_bytes": max(run["free"] for run in renders.values()),
                      "after": {"exit": again, "matches_a_fresh_render": fresh.returncode == 0 and
                                _tree(disk / "out") == rendered}}))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
