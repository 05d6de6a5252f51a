"""Edits of one NIC's function in a host script (fabricgen-nic.sh, fabricgen-dcb.sh)."""

from __future__ import annotations

import re

from fabricgen.platforms.common.hostscript import nic_function


def function_span(script: str, interface: str) -> tuple[int, int]:
    """Where the NIC function of ``interface`` starts and ends in ``script``."""
    start = script.index(f"\n{nic_function(interface)}() {{\n")
    return start, script.index("\n}\n", start)


def edit_nic(script: str, interface: str, old: str, new: str) -> str:
    """Every ``old`` in the NIC's function replaced by ``new`` (it must be there)."""
    start, end = function_span(script, interface)
    body = script[start:end]
    if old not in body:
        raise AssertionError(f"mutation: {old!r} not in {interface}'s function")
    return script[:start] + body.replace(old, new) + script[end:]


def drop_lines(script: str, interface: str, pattern: str) -> str:
    """The NIC function's lines matching ``pattern`` removed (at least one must)."""
    start, end = function_span(script, interface)
    lines = script[start:end].split("\n")
    kept = [line for line in lines if not re.search(pattern, line)]
    if len(kept) == len(lines):
        raise AssertionError(f"mutation: no line of {interface}'s function matches {pattern!r}")
    return script[:start] + "\n".join(kept) + script[end:]


def add_line(script: str, interface: str, line: str) -> str:
    """``line`` added as the NIC function's last line."""
    _, end = function_span(script, interface)
    return script[:end] + "\n  " + line + script[end:]
