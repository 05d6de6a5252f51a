"""Drift (``lint --configs`` only): every setting fabricgen owns, as the config sets it, equals the intent.

The other rules check that configs agree with each other (NIC ↔ switch ↔ switch) and with the physics. This one
checks what they do not: a config that is consistent and still not what the intent says — a port whose FEC, MTU
or PFC priorities were changed on both ends, a NIC whose CNP DSCP was edited on every host. It compares each
platform's owned view (``Platform.owned``: what its reader reads back, and what ``read(render(m)) == owned(m)``
pins) of the device as read from its config with the same view of the device as the intent resolves it, so
every setting a reader reads is compared, and a new one is compared the day the reader reads it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from fabricgen.lint.configlines import listed_words
from fabricgen.lint.context import LintContext
from fabricgen.lint.registry import Finding, Rule, rule
from fabricgen.lint.rules._util import device_source, port_source
from fabricgen.platforms import PORT_QOS, get_platform

# Sections of an owned view that hold one entry per port or NIC (findings name the port); the rest are device-wide.
PER_PORT_SECTIONS = ("ports", "nics")
SHOWN = 3  # differences spelled out per finding; the rest are counted


@rule("FG-CFG-001", "config-differs-from-intent", "error", "every owned setting in a config equals the intent")
def config_differs_from_intent(ctx: LintContext, r: Rule) -> Iterator[Finding]:
    """A config read with ``lint --configs`` must set what the intent resolves to, setting by setting and port by
    port: everything fabricgen owns on that platform (`fabricgen platforms` lists the owned sections). A
    difference the consistency rules cannot see — the same wrong value on both ends of a link, on every host, or
    on a port no other device looks at — is still a device that does not run the fabric's recipe, and the next
    `fabricgen render` + push would change it back.

    Fix: the device is what is wrong: apply the rendered config to it (or, if the device is right and the intent
    is not, change the intent on purpose and render again)."""
    evidence = ctx.evidence
    if evidence is None:
        return
    for name, intended in sorted(evidence.intended.items()):
        found = ctx.fabric.devices.get(name)
        platform = get_platform(intended.platform)
        owned = platform.owned
        if found is None or owned is None or ctx.read_as_resolved(name):
            continue  # read back as resolved (most devices, and a cheap test): their owned views are equal too
        have, want = owned(found), owned(intended)
        for section in sorted(want):
            if section in PER_PORT_SECTIONS:
                yield from _port_findings(r, name, have, want, section, platform.capability.config_words)
            elif section == "qos":
                diffs = _qos_differences(have, want)
                if diffs:
                    yield _finding(r, name, None, diffs, words=platform.capability.device_words)
            elif section != PORT_QOS and have.get(section) != want[section]:  # PORT_QOS: with the qos section
                yield _finding(r, name, None, differences(have.get(section), want[section], section),
                               _first_variable(have.get(section), want[section]) if section == "nccl_env" else None)


def _qos_differences(have: Mapping[str, Any], want: Mapping[str, Any]) -> list[str]:
    """How the device's QoS differs, and what its ports run of it where a platform views that with more fields
    (PORT_QOS: a SONiC switch's trust is its ports'): ports that run their device's QoS repeat none of it."""
    if have.get("qos") == want.get("qos") and have.get(PORT_QOS) == want.get(PORT_QOS):
        return []  # one comparison, not a walk over every map and queue of both
    diffs = differences(have.get("qos"), want.get("qos"), "qos")
    if PORT_QOS in want:
        diffs += [diff for diff in differences(have.get(PORT_QOS), want[PORT_QOS], "qos") if diff not in diffs]
    return diffs


def _device_qos(view: Mapping[str, Any]) -> Any:
    """The device's QoS as a port that runs it has it: PORT_QOS where the platform gives one (its fields are the
    port entries'), else the device's own view."""
    return view[PORT_QOS] if PORT_QOS in view else view.get("qos")


def _port_findings(r: Rule, device: str, have_view: Mapping[str, Any], want_view: Mapping[str, Any],
                   section: str, words: Mapping[str, str]) -> Iterator[Finding]:
    """Each port whose entries differ. A port entry's ``qos`` is None where the port runs its device's QoS: where
    one side runs the device's and the other its own, the device's is filled in (a port bound to its own
    watchdog or map is compared with what it should run, not with "not set"); where both run their device's, the
    device's finding already says how those differ, and no port repeats it."""
    have, want = have_view.get(section) or {}, want_view.get(section) or {}
    # A port the config lacks is FG-EVD-003's when cabled, and a port fabricgen does not know is not owned.
    for port in sorted(want.keys() & have.keys()):
        mine, theirs = have[port], want[port]
        if isinstance(mine, Mapping) and isinstance(theirs, Mapping) and "qos" in mine and "qos" in theirs:
            if mine["qos"] is None and theirs["qos"] is not None:
                mine = {**mine, "qos": _device_qos(have_view)}
            elif theirs["qos"] is None and mine["qos"] is not None:
                theirs = {**theirs, "qos": _device_qos(want_view)}
        if mine != theirs:
            yield _finding(r, device, port, differences(mine, theirs, ""), words=words)


def _listed_setting(diff: str, words: Mapping[str, str]) -> str | None:
    """The setting a port's first difference names (``qos.queues[3].ecn.min_bytes is …`` names
    ``qos.queues.ecn.min_bytes``), where the platform says where its config writes it or a parent of it
    (Capability.config_words: where the finding then points); else None, and the finding points at the port."""
    setting = re.sub(r"\[\d+\]", "", diff.split(" is ", 1)[0])
    return setting if listed_words(words, setting) else None


def _first_variable(have: Mapping[str, str] | None, want: Mapping[str, str]) -> str | None:
    """The first environment variable (by name) set otherwise in the config than in the intent: where nccl.env
    findings point."""
    have = have or {}
    return min((key for key in have.keys() | want.keys() if have.get(key) != want.get(key)), default=None)


def _finding(r: Rule, device: str, port: str | None, diffs: list[str], setting: str | None = None,
             words: Mapping[str, str] | None = None) -> Finding:
    """``words`` (a port's finding: the platform's config_words; the device's QoS: its device_words): the finding is
    about the first difference shown, where the platform says where that is written."""
    # The settings themselves before what is worked out from them (a port's PFC priorities before the headroom
    # sized for them): the fewest dots first, then by name, so that the edit is among those spelled out.
    diffs = sorted(diffs, key=lambda diff: (diff.split(" is ", 1)[0].count("."), diff))
    if words is not None:
        setting = _listed_setting(diffs[0], words)
    more = len(diffs) - SHOWN
    text = "; ".join(diffs[:SHOWN]) + (f"; and {more} more" if more > 0 else "")
    where = f"{device}:{port}" if port else device
    return r.finding(device, f"the config differs from the intent: {text}",
                     f"apply the rendered config to {where} (fabricgen render, then push it)", port=port,
                     source=port_source(device, port) if port else device_source(device), setting=setting)


def differences(have: Any, want: Any, path: str) -> list[str]:
    """``path: <config's value>, intent <value>`` for each leaf that differs, mappings compared key by key."""
    have = {} if have is None and isinstance(want, Mapping) else have  # a section one side lacks: its leaves
    want = {} if want is None and isinstance(have, Mapping) else want
    if isinstance(have, Mapping) and isinstance(want, Mapping):
        found: list[str] = []
        for key in sorted(have.keys() | want.keys(), key=str):
            found += differences(have.get(key), want.get(key), f"{path}.{key}" if path else str(key))
        return found
    if isinstance(have, list) and isinstance(want, list) and len(have) == len(want) and \
            any(isinstance(item, Mapping) for item in have + want):  # queues: compared one by one
        return [diff for index, (mine, theirs) in enumerate(zip(have, want, strict=True))
                for diff in differences(mine, theirs, f"{path}[{index}]")]
    if have == want:
        return []
    return [f"{path or 'value'} is {_show(have)}, intent {_show(want)}"]


def _show(value: Any) -> str:
    if value is None:
        return "not set"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        return "[" + ", ".join(_show(item) for item in value) + "]"
    return str(value)
