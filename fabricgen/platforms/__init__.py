"""Platforms: a small capability record plus one renderer each, behind a registry.

Adding a platform means adding one package under ``fabricgen/platforms/<name>/`` exporting ``PLATFORM``
(and its templates under ``templates/<name>/`` when it renders text) and one line in ``BUILTIN``.
The core never asks "is this EOS?": it reads capabilities.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Literal

from fabricgen.model import DeviceModel
from fabricgen.templating import Templates

RenderFn = Callable[[DeviceModel, Templates], dict[str, str]]


@dataclass(frozen=True)
class Capability:
    """What a platform can express, and how fabricgen owns config on it."""

    name: str
    kind: Literal["switch", "host"]
    target: str = field(metadata={"doc": "the OS release the output is written and validated for"})
    max_mtu: int
    mtu_semantics: Literal["l3", "l2"]
    lossless_class_limit: int
    ecn_threshold_unit: str
    ecn_granularity_bytes: int
    programs_headroom: bool
    mgmt_interface: str
    mgmt_vrf_fixed_name: str | None
    watchdog_step_ms: int
    watchdog_actions: tuple[str, ...]
    owned_sections: tuple[str, ...]
    commit_strategy: str
    output_files: tuple[str, ...]


@dataclass(frozen=True)
class Platform:
    capability: Capability
    render: RenderFn


BUILTIN: Mapping[str, str] = {
    "sonic": "fabricgen.platforms.sonic",
    "eos": "fabricgen.platforms.eos",
    "connectx": "fabricgen.platforms.connectx",
}

_loaded: dict[str, Platform] = {}


def platform_names() -> list[str]:
    return sorted(BUILTIN)


def get_platform(name: str) -> Platform:
    """The platform registered as ``name``. Raises KeyError for unknown names."""
    if name not in _loaded:
        module = importlib.import_module(BUILTIN[name])
        platform: Platform = module.PLATFORM
        if platform.capability.name != name:
            raise RuntimeError(f"{BUILTIN[name]} registers {platform.capability.name!r}, expected {name!r}")
        _loaded[name] = platform
    return _loaded[name]
