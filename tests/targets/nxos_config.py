"""NX-OS running-config text for the NX-OS device target (no NX-OS image runs here): stanzas, the rollback patch
between two configs, and the checks the target makes before it applies a patch.

A config is a list of stanzas: a top-level line and the lines indented under it (kept verbatim, indentation
included). ``!`` lines are comments, as in ``show running-config`` output, and are dropped.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

# Values the target refuses in a patch, as NX-OS's parser does. Ethernet MTU 576-9216: Cisco's "Configure and
# Verify Maximum Transmission Unit on Nexus Platforms" (doc 118994); speeds and FEC modes: the Cisco NX-OS device
# YANG model's l1 speed enumeration and l1_FECMode (CLI spelling ``off``); qos-group 0-7 and CoS 0-7 in 8q mode.
MTU_RANGE = (576, 9216)
SPEEDS_MBPS = {100, 1000, 10000, 25000, 40000, 50000, 100000, 200000, 400000, 800000}
FEC_MODES = {"auto", "fc-fec", "rs-fec", "off", "rs-ieee", "rs-cons16", "kp-fec"}


@dataclass
class Stanza:
    header: str
    children: list[str] = field(default_factory=list)

    def text(self) -> str:
        return "".join(line + "\n" for line in [self.header, *self.children])


def parse(text: str) -> list[Stanza]:
    stanzas: list[Stanza] = []
    for raw in text.splitlines():
        line = raw.rstrip()
        if not line.strip() or line.lstrip().startswith("!"):
            continue
        if line[0] == " " and stanzas:
            stanzas[-1].children.append(line)
        else:
            stanzas.append(Stanza(line.strip()))
    return stanzas


def render(stanzas: list[Stanza]) -> str:
    return "".join(stanza.text() for stanza in stanzas)


def hostname(stanzas: list[Stanza]) -> str:
    return next((s.header.split()[1] for s in stanzas if re.fullmatch(r"hostname \S+", s.header)), "switch")


def _negate(line: str) -> str:
    indent = line[: len(line) - len(line.lstrip())]
    body = line.strip()
    return indent + (body[3:] if body.startswith("no ") else "no " + body)


def patch(old: list[Stanza], new: list[Stanza]) -> list[str]:
    """The commands that turn ``old`` into ``new``: what NX-OS's rollback patch lists (removals as ``no``)."""
    old_by = {s.header: s for s in old}
    new_by = {s.header: s for s in new}
    lines: list[str] = []
    for stanza in old:
        if stanza.header not in new_by:
            lines.append(_negate(stanza.header))
    for stanza in new:
        before = old_by.get(stanza.header)
        if before is None:
            lines += [stanza.header, *stanza.children]
            continue
        removed = [_negate(child) for child in before.children if child not in stanza.children]
        added = [child for child in stanza.children if child not in before.children]
        if removed or added:
            lines += [stanza.header, *removed, *added]
    return lines


def refusals(lines: list[str], new: list[Stanza]) -> list[str]:
    """What NX-OS's parser would reject among the patch's commands, each as the CLI error it prints."""
    policies = {m.group(1) for s in new if (m := re.fullmatch(r"policy-map type \S+ (\S+)", s.header))}
    errors = []
    for line in lines:
        error = _refusal(line.strip(), policies)
        if error:
            errors.append(f"{line.strip()}: {error}")
    return errors


def _refusal(command: str, policies: set[str]) -> str | None:
    checks: list[tuple[str, Callable[[str], bool]]] = [
        (r"mtu (\S+)", lambda v: _in_range(v, *MTU_RANGE)),
        (r"speed (\S+)", lambda v: v == "auto" or (v.isdigit() and int(v) in SPEEDS_MBPS)),
        (r"fec (\S+)", lambda v: v in FEC_MODES),
        (r"set qos-group (\S+)", lambda v: _in_range(v, 0, 7)),
        (r"pause pfc-cos (\S+)", lambda v: all(_in_range(c, 0, 7) for c in v.split(","))),
        (r"match dscp (\S+)", lambda v: all(_in_range(d, 0, 63) for d in re.split(r"[,-]", v))),
        (r"service-policy type \S+ (?:input |output )?(\S+)",
         lambda v: v in policies or v.startswith("default-")),
    ]
    for pattern, valid in checks:
        match = re.fullmatch(pattern, command)
        if match and not valid(match.group(1)):
            if pattern.startswith("service-policy"):
                return f"policy-map {match.group(1)} does not exist"
            return "% Invalid value at '^' marker."
    return None


def _in_range(value: str, low: int, high: int) -> bool:
    return value.isdigit() and low <= int(value) <= high
