"""write: put a rendered tree on disk atomically, with a manifest, or not at all.

The new tree is written beside the target, fsynced, then swapped in with one ``renameat2(RENAME_EXCHANGE)``
(Linux); an interrupted run leaves the previous tree intact. Where the kernel or libc lack the exchange
call we fall back to two renames, recovering a left-over backup on the next run.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from fabricgen import __version__

MANIFEST = "manifest.json"
_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


class OutputError(Exception):
    """The output directory cannot be (safely) written."""


def build_manifest(files: dict[str, str], inputs: dict[str, str], extra: dict[str, Any] | None = None) -> str:
    manifest = {
        "generator": "fabricgen",
        "version": __version__,
        "inputs": dict(sorted(inputs.items())),
        "files": {name: hashlib.sha256(text.encode()).hexdigest() for name, text in sorted(files.items())},
        **(extra or {}),
    }
    return json.dumps(manifest, indent=2, sort_keys=True) + "\n"


def _check_target(out: Path) -> None:
    """Refuse to replace a directory fabricgen did not write (someone's home directory, a repo root)."""
    if out.exists() and not out.is_dir():
        raise OutputError(f"{out} exists and is not a directory")
    if out.is_dir() and any(out.iterdir()) and not (out / MANIFEST).is_file():
        raise OutputError(f"{out} is not empty and has no {MANIFEST}; refusing to replace it "
                          "(choose a new or empty directory)")


def _write_tree(root: Path, files: dict[str, str]) -> None:
    made: set[Path] = set()
    for name, text in sorted(files.items()):
        path = root / name
        if path.parent not in made:
            path.parent.mkdir(parents=True, exist_ok=True)
            made.add(path.parent)
        path.write_bytes(text.encode("utf-8"))
        path.chmod(0o755 if name.endswith(".sh") else 0o644)
    # One flush of everything before the swap instead of an fsync per file: 20,000 fsyncs would take minutes,
    # and the tree only becomes visible (renamed into place) after this returns.
    os.sync()


def _exchange(a: Path, b: Path) -> bool:
    """Atomically swap two paths; False when the platform cannot."""
    libc_name = ctypes.util.find_library("c")
    if libc_name is None:
        return False
    libc = ctypes.CDLL(libc_name, use_errno=True)
    renameat2 = getattr(libc, "renameat2", None)
    if renameat2 is None:
        return False
    result = renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE)
    return bool(result == 0)


def _recover_backup(out: Path) -> None:
    backup = out.with_name(out.name + ".fabricgen-old")
    if backup.is_dir() and not out.exists():
        backup.rename(out)  # a previous run stopped between its two renames
    elif backup.is_dir():
        shutil.rmtree(backup)


def write_output(out: Path, files: dict[str, str], manifest: str) -> None:
    """Replace ``out`` with exactly ``files`` + manifest, atomically."""
    out = out.absolute()
    _recover_backup(out)
    _check_target(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent))
    try:
        _write_tree(staging, {**files, MANIFEST: manifest})
        staging.chmod(0o755)
        if not out.exists():
            staging.rename(out)
            return
        if _exchange(staging, out):
            shutil.rmtree(staging)  # now holds the previous tree
            return
        backup = out.with_name(out.name + ".fabricgen-old")
        out.rename(backup)
        staging.rename(out)
        shutil.rmtree(backup)
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
