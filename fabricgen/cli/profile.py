"""`fabricgen profile list|show`: what a one-knob ``profile:`` fills in, as YAML one can paste into an intent.

``profile: roce`` expands under the user's keys (fabricgen.models.intent.expand_profile). `profile show NAME`
prints that expansion written out — every QoS class and the rdma section, with each default the loader would
apply shown explicitly — so that a user can start from it and edit; pasted into an intent (with or without
``profile:``), it loads as the same intent. `profile list --format markdown` writes docs/profiles.md.
"""

from __future__ import annotations

import textwrap
from typing import Any

import click
import yaml

from fabricgen.models.intent import PROFILES, Ecn, QosClass, Rdma

# One line per profile: what it is and where its values come from (the vendor document a user can open).
SUMMARIES: dict[str, str] = {
    "roce": "NVIDIA's RoCE recipe, as Cumulus Linux's `nv set qos roce` (lossless mode) applies it: DSCP 26 → "
            "priority 3, lossless, ECN from 150 KB to 1.5 MB at 100 %; CNPs on DSCP 48 → priority 6, strict; "
            "every other DSCP → priority 0; DWRR 50/50 (NVIDIA Cumulus Linux 5.15 user guide, RDMA over "
            "Converged Ethernet - RoCE)",
}


def register(main: click.Group) -> None:
    """Add `fabricgen profile` (list, show) to the main group."""
    main.add_command(profile)


@click.group("profile")
def profile() -> None:
    """The one-knob QoS profiles an intent can name with `profile:`, written out.

    `profile: roce` fills in a complete class set and rdma section; any key the intent writes overrides the
    profile's. `show` prints what a profile fills in as intent YAML — paste it into an intent and edit it —
    and `list` names the profiles.

    \b
    Examples:
      fabricgen profile list
      fabricgen profile show roce >> intent/site.yaml     # then edit the classes
      fabricgen profile list --format markdown > docs/profiles.md
    """


@profile.command("list")
@click.option("--format", "fmt", type=click.Choice(["text", "markdown"]), default="text", show_default=True)
def list_cmd(fmt: str) -> None:
    """Name every profile an intent's `profile:` may take, one line each.

    Each line is the profile's name and what it applies, with the vendor document it follows (e.g. `roce`:
    NVIDIA's RoCE recipe as Cumulus Linux's `nv set qos roce` applies it). `--format markdown` prints
    docs/profiles.md instead: per profile its classes (DSCP, priority, queue, lossless, scheduling, ECN).

    \b
    Examples:
      fabricgen profile list
      fabricgen profile list --format markdown > docs/profiles.md
    """
    if fmt == "markdown":
        click.echo(profiles_markdown(), nl=False)
        return
    for name in sorted(PROFILES):
        click.echo(f"{name:<8} {SUMMARIES[name]}")


@profile.command("show")
@click.argument("name", type=click.Choice(sorted(PROFILES)))
def show_cmd(name: str) -> None:
    """Print what `profile: NAME` fills in, as intent YAML: the QoS classes and the rdma section.

    Every default the loader applies is written out. Pasted into an intent, it loads as that profile does; with
    it written out, `profile: NAME` may stay (these keys override it) or go.

    \b
    Examples:
      fabricgen profile show roce
      fabricgen profile show roce >> intent/site.yaml
    """
    click.echo(profile_yaml(name), nl=False)


# --- the expansion, written out ------------------------------------------------------------------------------

def expanded(name: str) -> dict[str, Any]:
    """The intent keys ``profile: name`` fills in, in the intent's own spelling (sizes as written, `strict` or
    `{dwrr: N}`), each class and the rdma section completed with the defaults the loader applies."""
    raw = PROFILES[name]
    classes = {class_name: _with_defaults(spec, QosClass, {"ecn": Ecn})
               for class_name, spec in raw["qos"]["classes"].items()}
    return {"qos": {"classes": classes}, "rdma": _with_defaults(raw["rdma"], Rdma, {})}


def _with_defaults(spec: dict[str, Any], model: type[QosClass] | type[Rdma] | type[Ecn],
                   nested: dict[str, type[Ecn]]) -> dict[str, Any]:
    """``spec`` with each field the user may leave out written with its default, in the model's field order;
    fields whose default is "none" (derived from other keys, e.g. a class's queue) stay out."""
    out: dict[str, Any] = {}
    for field_name, info in model.model_fields.items():
        key = info.alias or field_name
        if key in spec:
            value = spec[key]
            out[key] = _with_defaults(value, nested[key], {}) if key in nested and isinstance(value, dict) else value
        elif not info.is_required() and info.default is not None:
            out[key] = info.default
    return out


def profile_yaml(name: str) -> str:
    """:func:`expanded` as intent YAML under a comment saying what it is: the classes with their small mappings
    on one line each (as the bundled intents write them), the rdma section one key a line."""
    data = expanded(name)
    header = [f"What `profile: {name}` fills in (fabricgen profile show {name}): paste into an intent and edit.",
              *textwrap.wrap(SUMMARIES[name], width=98)]
    return "".join(f"# {line}\n" for line in header) + \
        yaml.safe_dump({"qos": data["qos"]}, sort_keys=False, default_flow_style=None, width=100) + \
        yaml.safe_dump({"rdma": data["rdma"]}, sort_keys=False, default_flow_style=False)


# --- docs/profiles.md ------------------------------------------------------------------------------------------

def profiles_markdown() -> str:
    lines = ["# Profiles", "",
             "Generated by `fabricgen profile list --format markdown`; do not edit.", "",
             "An intent's `profile:` fills in a complete QoS class set and `rdma` section; every key the intent "
             "writes overrides the profile's (`null` removes one of its mappings, e.g. a class). "
             "`fabricgen profile show NAME` prints the expansion as YAML to paste and edit.", ""]
    for name in sorted(PROFILES):
        lines += _profile_section(name)
    return "\n".join(lines)


def _profile_section(name: str) -> list[str]:
    data = expanded(name)
    lines = [f"## `{name}`", "", SUMMARIES[name], "",
             "| class | DSCP | priority | queue | lossless | scheduling | ECN min | ECN max | mark % |",
             "|---|---|---|---|---|---|---|---|---|"]
    for class_name, spec in data["qos"]["classes"].items():
        ecn = spec.get("ecn") or {}
        lines.append(f"| {class_name} | {_dscp(spec['dscp'])} | {spec['priority']} | "
                     f"{spec.get('queue', spec['priority'])} | {'yes' if spec['lossless'] else 'no'} | "
                     f"{_scheduling(spec['scheduling'])} | {ecn.get('min', '–')} | {ecn.get('max', '–')} | "
                     f"{ecn.get('probability', '–')} |")
    rdma = ", ".join(f"`{key}: {_yaml_scalar(value)}`" for key, value in data["rdma"].items())
    return [*lines, "", f"rdma: {rdma}", "", "```yaml", profile_yaml(name).rstrip("\n"), "```", ""]


def _dscp(value: Any) -> str:
    return "every other DSCP" if value == "default" else ", ".join(map(str, value))


def _scheduling(value: Any) -> str:
    return "strict" if value == "strict" else f"DWRR {value['dwrr']}"


def _yaml_scalar(value: Any) -> str:
    return str(yaml.safe_dump(value, default_flow_style=True)).removesuffix("\n...\n").strip()
