"""Incremental render: which devices a GitOps commit actually changed.

A device's files are a pure function of its resolved model and the renderer. The manifest of the previous
tree holds the hash of every device's resolved.json and a fingerprint of the renderer: fabricgen's version,
the source of the code that renders (fabricgen/platforms, templating, api) and every template. So: resolve
everything, dump each resolved model, and render again only the devices whose resolved.json hash differs.
Any change to the renderer — a new release, a template or renderer module edited in a checkout — changes the
fingerprint, and then every device is rendered. Library versions are left out on purpose: the manifest is
part of the output, which must be byte-identical on every machine; after upgrading Jinja2 or orjson
(neither has changed fabricgen's bytes so far), `render --full` is the safe choice.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from fabricgen import __version__
from fabricgen.api import RESOLVED_FILE, dump_device
from fabricgen.model import Fabric
from fabricgen.output import file_hash
from fabricgen.templating import templates_dir

PACKAGE = Path(__file__).resolve().parent
RENDER_CODE = ("platforms", "templating.py", "api.py")  # relative to the fabricgen package


@cache
def renderer_fingerprint(templates: Path | None = None, package: Path = PACKAGE) -> str:
    """sha256 over fabricgen's version, the rendering code and every template (line endings normalised, so a
    Windows checkout fingerprints as a Linux one)."""
    digest = hashlib.sha256(f"fabricgen {__version__}\0".encode())
    for part in RENDER_CODE:
        _hash_files(digest, package, package / part, "*.py")
    _hash_files(digest, templates or templates_dir(), templates or templates_dir(), "*")
    return digest.hexdigest()


def _hash_files(digest: Any, root: Path, start: Path, pattern: str) -> None:
    paths = [start] if start.is_file() else sorted(start.rglob(pattern))
    for path in paths:
        if path.is_file() and "__pycache__" not in path.parts:
            digest.update(f"{path.relative_to(root).as_posix()}\0".encode())
            digest.update(path.read_bytes().replace(b"\r\n", b"\n"))
            digest.update(b"\0")


@dataclass
class RenderPlan:
    render: list[str] = field(default_factory=list)
    """devices to render (their resolved model changed, or there is no usable previous tree)"""
    kept: dict[str, str] = field(default_factory=dict)
    """path → hash of the previous tree's files that stay as they are"""


def plan_render(fabric: Fabric, devices: list[str], previous: dict[str, str] | None) -> RenderPlan:
    """Split ``devices`` into those to render and those whose files the previous tree (``previous``: path →
    sha256 from its manifest, None when there is none) already holds."""
    plan = RenderPlan()
    if previous is None:
        plan.render = list(devices)
        return plan
    by_device: dict[str, dict[str, str]] = {}
    for path, digest in previous.items():
        owner, _, _ = path.partition("/")
        by_device.setdefault(owner, {})[path] = digest
    for name in devices:
        resolved = dump_device(fabric.devices[name], "json")
        if previous.get(f"{name}/{RESOLVED_FILE}") == file_hash(resolved):
            plan.kept.update(by_device[name])
        else:
            plan.render.append(name)
    return plan
