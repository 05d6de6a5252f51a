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
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cache, partial
from pathlib import Path
from typing import Any

from fabricgen import __version__
from fabricgen.api import RESOLVED_FILE, dump_device
from fabricgen.build.output import file_hash
from fabricgen.models.device import DeviceModel, Fabric
from fabricgen.platforms.common.templating import templates_dir
from fabricgen.runtime.forked import fork_map, interleaved, worth_forking

PACKAGE = Path(__file__).resolve().parents[1]
RENDER_CODE = ("platforms", "api.py")  # relative to the fabricgen package
# A platform's deploy modules (its NAPALM driver and what only the driver imports) never render: editing them must
# not re-render every device. tests/test_incremental.py proves rendering imports none of them.
DEPLOY_ONLY = frozenset({"driver.py", "gcu.py", "splice.py", "observe.py"})


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
        if path.is_file() and "__pycache__" not in path.parts and path.name not in DEPLOY_ONLY:
            digest.update(f"{path.relative_to(root).as_posix()}\0".encode())
            digest.update(path.read_bytes().replace(b"\r\n", b"\n"))
            digest.update(b"\0")


@dataclass
class RenderPlan:
    render: list[str] = field(default_factory=list)
    """devices to render (their resolved model changed, or there is no usable previous tree)"""
    kept: dict[str, str] = field(default_factory=dict)
    """path → hash of the previous tree's files that stay as they are"""


def plan_render(fabric: Fabric, devices: list[str], previous: dict[str, str] | None, jobs: int = 1,
                gate: Callable[[], None] | None = None) -> RenderPlan:
    """Split ``devices`` into those to render and those whose files the previous tree (``previous``: path →
    sha256 from its manifest, None when there is none) already holds. Dumping every resolved model to hash it
    is most of the work (0.7 s at 32,768 GPUs), so it is spread over ``jobs`` processes, while ``gate`` (the
    CLI's lint) runs in this one."""
    if previous is None:
        if gate is not None:
            gate()
        return RenderPlan(render=list(devices))
    return plan_render_from(resolved_hashes(fabric, devices, jobs, gate), devices, previous)


def plan_render_from(hashes: dict[str, str], devices: list[str], previous: dict[str, str]) -> RenderPlan:
    """The plan, given each device's resolved.json hash."""
    plan = RenderPlan()
    by_device: dict[str, dict[str, str]] = {}
    for path, digest in previous.items():
        owner, _, _ = path.partition("/")
        by_device.setdefault(owner, {})[path] = digest
    for name in devices:
        if previous.get(f"{name}/{RESOLVED_FILE}") == hashes[name]:
            plan.kept.update(by_device[name])
        else:
            plan.render.append(name)
    return plan


def resolved_hashes(fabric: Fabric, devices: list[str], jobs: int = 1,
                    meanwhile: Callable[[], None] | None = None) -> dict[str, str]:
    """device → sha256 of its resolved.json; ``meanwhile`` runs in this process (first, without workers).
    Workers read the fabric they inherit."""
    if not worth_forking(jobs, len(devices)):
        if meanwhile is not None:
            meanwhile()
        return _hashes(fabric.devices, devices)
    parts = fork_map(partial(_hashes, fabric.devices), interleaved(devices, jobs), meanwhile=meanwhile)
    return {name: digest for part in parts for name, digest in part.items()}


def _hashes(models: Mapping[str, DeviceModel], devices: list[str]) -> dict[str, str]:
    return {name: file_hash(dump_device(models[name], "json")) for name in devices}
