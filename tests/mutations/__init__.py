"""Mutations of rendered configs, one module per platform, for tests/test_lint_completeness.py.

Each module (named as the platform, ``-`` written ``_``) exports ``MUTATIONS``: for every setting the platform's
Capability lists in ``port_settings``, the ways a config of it gets damaged on one port — ``change`` (the value
edited), ``remove`` (the line gone) and ``add`` (a stray one), whichever the platform's config can express —
each a function of (the device's rendered files, the device, the port) that returns the damaged files. A
mutation edits the text as a person or another tool would; it never goes through the renderer.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping

from fabricgen.models.device import DeviceModel

Files = dict[str, str]
Mutation = Callable[[Files, DeviceModel, str], Files]
KINDS = ("change", "remove", "add")


def mutations(platform: str) -> Mapping[str, Mapping[str, Mutation]]:
    """The platform's setting → kind → mutation table (empty for a platform without a module)."""
    try:
        module = importlib.import_module(f"mutations.{platform.replace('-', '_')}")
    except ModuleNotFoundError:
        return {}
    table: Mapping[str, Mapping[str, Mutation]] = module.MUTATIONS
    return table


def replace_once(text: str, old: str, new: str, after: str = "", count: int = 1) -> str:
    """``text`` with the first ``count`` occurrences of ``old`` after ``after`` replaced; fails loudly when ``old``
    is not there, so a renderer change cannot turn a mutation into a no-op."""
    start = text.index(after) + len(after) if after else 0
    head, tail = text[:start], text[start:]
    if tail.count(old) < count:
        raise AssertionError(f"mutation: {old!r} not found {count} time(s) after {after!r}")
    return head + tail.replace(old, new, count)
