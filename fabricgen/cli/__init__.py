"""The command line: a thin edge around load → resolve → lint → render → write.

Exit status: 0 success · 1 lint errors (render, lint; warnings too with --strict) or rendered configs that
failed validation (``validate``) · 2 bad input or usage
(every problem printed as FILE:LINE:COL: key.path: message (hint)) · 3 the output directory could not be
written (the previous tree is left as it was, or, when an incremental update fails part-way, marked
.fabricgen-incomplete so the next render rewrites it whole) · 70 internal error (a bug: rerun with FABRICGEN_DEBUG=1 and
report it). `plan` alone differs: 2 devices change, 3 bad input or usage (fabricgen/cli/plan.py).
"""

from __future__ import annotations

import os
from collections.abc import Callable

import click

from fabricgen import __version__
from fabricgen.build.output import INCOMPLETE
from fabricgen.cli import render
from fabricgen.cli.common import escape_unencodable_output, fail, input_options, load_and_resolve
from fabricgen.runtime.gctune import bulk_allocation
from fabricgen.runtime.teardown import exit_after


def _register_lint(group: click.Group) -> None:
    # lint, rules: the fabric's checks and their catalogue (fabricgen/lint/).
    from fabricgen.cli.lint import lint_cmd, rules_cmd
    group.add_command(lint_cmd)
    group.add_command(rules_cmd)


def _register_platforms(group: click.Group) -> None:
    # platforms: what each platform expresses (fabricgen/platforms/).
    from fabricgen.cli.platforms import platforms_cmd
    group.add_command(platforms_cmd)


def _register_resolve(group: click.Group) -> None:
    # resolve, schema: the resolved models and the intent's JSON schema.
    from fabricgen.cli.resolve import resolve_cmd, schema
    group.add_command(resolve_cmd)
    group.add_command(schema)


def _register_validate(group: click.Group) -> None:
    # validate: rendered configs against the vendors' own schemas (fabricgen/validate/).
    from fabricgen.cli.validate import validate
    group.add_command(validate)


def _register_deploy(group: click.Group) -> None:
    # diff, push, rollback, runs: the deploy stage (fabricgen/deploy/), after write.
    from fabricgen.cli.deploy import register
    register(group, load_and_resolve, input_options, fail)


def _register_docs(group: click.Group) -> None:
    # docs: device pages, the HTML fabric report and the validation runbook (fabricgen/report/).
    from fabricgen.cli.docs import register
    register(group, load_and_resolve, input_options, fail)


def _register_inventory(group: click.Group) -> None:
    # inventory export: the inventory's other forms, compact cabling and Nautobot (fabricgen/load/sources/).
    from fabricgen.cli.inventory import register
    register(group, fail)


def _register_observe(group: click.Group) -> None:
    # observe [serve], health: counters, their history and health against the intent (fabricgen/observe/).
    from fabricgen.cli.observe import register
    register(group, load_and_resolve, input_options, fail)


def _register_plan(group: click.Group) -> None:
    # plan: what a change does to each device, between two revisions (fabricgen/cli/plan.py).
    from fabricgen.cli.plan import register
    register(group, input_options, fail)


def _register_profile(group: click.Group) -> None:
    # profile list|show: what a `profile:` fills in (fabricgen/cli/profile.py).
    from fabricgen.cli.profile import register
    register(group)


# Every command but render, by the commands each adds: their modules (and what they import: Nornir, the deploy
# engine, the report, the observe parsers, lint's readers) load only when one of their commands runs or help lists
# them, so `fabricgen render` does not pay for them at every start, and starts with little imported: it checks its
# earlier tree in a forked process while it imports the stages (fabricgen/cli/render.py). tests/test_cli.py holds
# this table to what each registers.
LAZY_COMMANDS: dict[str, Callable[[click.Group], None]] = {
    "lint": _register_lint, "rules": _register_lint, "platforms": _register_platforms,
    "resolve": _register_resolve, "schema": _register_resolve, "validate": _register_validate,
    "diff": _register_deploy, "push": _register_deploy, "rollback": _register_deploy, "runs": _register_deploy,
    "docs": _register_docs, "inventory": _register_inventory, "observe": _register_observe,
    "health": _register_observe, "plan": _register_plan, "profile": _register_profile,
}


class _Fabricgen(click.Group):
    """The `fabricgen` group: commands of LAZY_COMMANDS are registered when first asked for."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *LAZY_COMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in LAZY_COMMANDS:
            LAZY_COMMANDS[cmd_name](self)
        return self.commands.get(cmd_name)


@click.group(cls=_Fabricgen, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="fabricgen")
def main() -> None:
    """Compile one RoCEv2 fabric intent + Nornir inventory into per-device configs.

    SONiC config_db.json, Arista EOS, Cumulus NVUE and Cisco NX-OS for the switches, and for every GPU host a
    ConnectX or Linux dcb script with its nccl.env: one DSCP, PFC, ECN, MTU and headroom plan, checked end to
    end by `fabricgen lint`. `fabricgen COMMAND --help` describes each command with examples.

    \b
    Exit status: 0 ok, 1 lint errors or invalid configs, 2 bad input/usage, 3 output not written
    (plan: 2 devices change, 3 bad input/usage; see `fabricgen plan --help`).
    Shell completion (bash; zsh and fish alike): eval "$(_FABRICGEN_COMPLETE=bash_source fabricgen)"
    """


def run() -> None:  # pragma: no cover - console entry guard
    escape_unencodable_output()
    with exit_after():  # a render's heap is left to the kernel, not freed object by object
        try:
            with bulk_allocation():
                main()
        except KeyboardInterrupt:
            fail(f"interrupted; the output is unchanged, or marked {INCOMPLETE} if an incremental update had "
                 "begun (render again to repair it)", 130)
        except Exception as exc:
            if os.environ.get("FABRICGEN_DEBUG"):
                raise
            fail(f"internal error: {type(exc).__name__}: {exc} (rerun with FABRICGEN_DEBUG=1 and report it)", 70)


main.add_command(render.render)
