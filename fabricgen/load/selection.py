"""`--filter`: which devices a command works on, in Nornir's terms.

Nornir selects hosts with ``F()`` objects — ``F(platform="eos") & F(groups__contains="spines")``, ``|`` for or, ``~``
for not — on the host's name, its attributes and its data. A command line wants the same in one word, so the
grammar below spells those filters as Ansible's ``--limit`` patterns spell host selections (``,`` or, ``&``
and, ``!`` not) — the two tools a Nornir user is most likely to know::

    expression := term ("," term)*            any term matches          (Nornir: F(...) | F(...))
    term       := atom ("&" atom)*            every atom matches        (Nornir: F(...) & F(...))
    atom       := ["!"] (key "=" glob | glob) the test, or its negation (Nornir: ~F(...))
    key        := name | role | platform | group
    glob       := a shell-style pattern (fnmatch: *, ?, [seq]), matched case-sensitively

A bare glob is ``name=glob``. ``role`` is fabricgen's role (``data.role``, Nornir ``F(role=...)``), ``platform``
Nornir's ``platform``, ``group`` one of the host's own groups (Nornir ``F(groups__contains=...)``: the groups its
hosts.yaml entry names, not their parents). Spaces around tokens are ignored. Examples::

    leaf*                       every device whose name starts with leaf
    role=spine,role=oob         spines and OOB switches
    role=leaf&platform=sonic    SONiC leaves
    group=gpu_nodes&!node1      the group's members but node1
    role=gpu-host&!platform=linux-dcb
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NoReturn, Protocol, TypeVar

import click

if TYPE_CHECKING:  # the models are imported where a selection is made: the --filter option is declared without them
    from fabricgen.models.device import Fabric
    from fabricgen.models.inventory import Inventory

KEYS = ("name", "role", "platform", "group")
F = TypeVar("F", bound=Callable[..., Any])


class SelectionError(ValueError):
    """An expression the grammar does not read; the message names the part and says what was expected."""


class _Device(Protocol):
    """What a filter reads of a device: a resolved model (DeviceModel) or an inventory host (Device)."""

    @property
    def role(self) -> str: ...

    @property
    def platform(self) -> str: ...


@dataclass(frozen=True)
class _Facts:
    name: str
    role: str
    platform: str
    groups: tuple[str, ...] | None  # None: not known (a resolved fabric keeps no groups)


Test = Callable[[_Facts], bool]


def filter_devices(fabric_or_inventory: Fabric | Inventory, expression: str) -> list[str]:
    """The names of the devices ``expression`` selects, sorted. Raises :class:`SelectionError` when the expression
    cannot be read, or uses `group=` on a resolved fabric (which keeps no groups: pass the inventory)."""
    from fabricgen.models.inventory import Inventory

    test = parse(expression)
    facts = _facts(fabric_or_inventory.devices, isinstance(fabric_or_inventory, Inventory))
    if any(fact.groups is None for fact in facts) and "group" in _keys_used(expression):
        raise SelectionError("`group=` needs the inventory (a resolved fabric keeps no groups)")
    return sorted(fact.name for fact in facts if test(fact))


def selects(expression: str, name: str, role: str | None, platform: str | None) -> bool:
    """Whether ``expression`` selects a device known only by its name, role and platform (e.g. one a change
    removes, which the inventory no longer has): its groups are unknown, so a `group=` atom does not match."""
    return parse(expression)(_Facts(name, role or "", platform or "", None))


def _facts(devices: Mapping[str, _Device], from_inventory: bool) -> list[_Facts]:
    return [_Facts(name, device.role, device.platform,
                   tuple(getattr(device, "groups", ())) if from_inventory else None)
            for name, device in devices.items()]


def parse(expression: str) -> Test:
    """``expression`` as a test of one device (see the module docstring for the grammar)."""
    if not expression.strip():
        raise SelectionError("an empty filter selects nothing: write a name glob or key=glob, e.g. role=leaf")
    terms = [_term(text, expression) for text in expression.split(",")]
    return lambda facts: any(term(facts) for term in terms)


def _term(text: str, expression: str) -> Test:
    atoms = [_atom(part, expression) for part in text.split("&")]
    return lambda facts: all(atom(facts) for atom in atoms)


def _atom(text: str, expression: str) -> Test:
    text = text.strip()
    negated = text.startswith("!")
    text = text[1:].strip() if negated else text
    key, equals, pattern = text.partition("=")
    key, pattern = (key.strip(), pattern.strip()) if equals else ("name", key.strip())
    if not pattern:
        raise SelectionError(f"{expression!r}: an empty part (around ',', '&' or '=') selects nothing")
    if key not in KEYS:
        raise SelectionError(f"{expression!r}: unknown key {key!r}; filter on {', '.join(KEYS)} (e.g. role=leaf)")
    test = _matcher(key, pattern)
    return (lambda facts: not test(facts)) if negated else test


def _matcher(key: str, pattern: str) -> Test:
    def matches(value: str) -> bool:
        return fnmatch.fnmatchcase(value, pattern)
    if key == "group":
        return lambda facts: any(matches(group) for group in facts.groups or ())
    return lambda facts: matches(str(getattr(facts, key)))


def _keys_used(expression: str) -> set[str]:
    return {part.strip().lstrip("!").partition("=")[0].strip() for term in expression.split(",")
            for part in term.split("&") if "=" in part}


# --- the command line's --filter ------------------------------------------------------------------------------

FILTER_HELP = ("Nornir-style selection: name globs, role=, platform=, group=; ',' or, '&' and, '!' not "
               "(e.g. 'role=leaf&platform=sonic')")


def filter_option(what: str) -> Callable[[F], F]:
    """``--filter EXPR`` for a command; ``what``: what the selection does there (said after the grammar)."""
    return click.option("--filter", "filter_expr", metavar="EXPR", default=None, help=f"{FILTER_HELP}; {what}")


def selected_or_fail(inventory: Inventory, expression: str | None,
                     fail: Callable[[str], NoReturn]) -> list[str] | None:
    """The devices ``--filter expression`` selects (None: no filter, every device). An expression that cannot be
    read, and one that selects no device, are input errors: ``fail`` prints `error: --filter EXPR: why`
    and exits 2 (a filter that silently selects nothing would make a CI step pass while checking nothing)."""
    if expression is None:
        return None
    try:
        names = filter_devices(inventory, expression)
    except SelectionError as exc:
        fail(f"--filter {expression}: {exc}")
    if not names:
        fail(f"--filter {expression}: selects no device of the inventory (its hosts.yaml names each device, its "
             "role, platform and groups)")
    return names
