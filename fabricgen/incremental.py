"""Incremental render: which devices a GitOps commit actually changed.

A device's files are a pure function of its resolved model, the templates and fabricgen itself. The manifest
of the previous tree holds the hash of every device's resolved.json and a fingerprint of the renderer
(fabricgen version + every template file). So: resolve everything (cheap), dump each resolved model, and
render again only the devices whose resolved.json hash differs. A changed template or fabricgen version
changes the fingerprint, and then every device is rendered.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from fabricgen import __version__
from fabricgen.api import RESOLVED_FILE, dump_device
from fabricgen.model import Fabric
from fabricgen.output import file_hash
from fabricgen.templating import templates_dir


@cache
def renderer_fingerprint(root: Path | None = None) -> str:
    """sha256 over fabricgen's version and every template's path and bytes."""
    root = root or templates_dir()
    digest = hashlib.sha256(f"fabricgen {__version__}\0".encode())
    for path in sorted(p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
        digest.update(f"{path.relative_to(root).as_posix()}\0".encode())
        digest.update(path.read_bytes())
        digest.update(b"\0")
    return digest.hexdigest()


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
