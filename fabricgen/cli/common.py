"""What every command shares: input options, the load-and-resolve step, error reporting, exit codes."""

from __future__ import annotations

import contextlib
import functools
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import click

from fabricgen.models.diagnostics import Diagnostic, InputError, Location, folded_lines

if TYPE_CHECKING:
    from rich.console import Console

    from fabricgen.lint.registry import Finding
    from fabricgen.load.fabric import FabricInput
    from fabricgen.models.device import Fabric

# What the stages need (load, resolve, lint's reports, rich) is imported inside the functions that use them: every
# command imports this module, and `fabricgen render` checks its earlier tree in a forked process while it
# imports them (fabricgen/cli/render.py).

EXIT_INVALID, EXIT_INPUT, EXIT_OUTPUT = 1, 2, 3
DEFAULT_INTENT = Path("intent/fabric.yaml")
DEFAULT_INVENTORY = Path("inventory")
DEFAULT_OUT = Path("out")

F = TypeVar("F", bound=Callable[..., Any])


@functools.cache
def error_console() -> Console:
    from rich.console import Console

    return Console(stderr=True, highlight=False, soft_wrap=True)


def fail(message: str, code: int = EXIT_INPUT) -> NoReturn:
    # The message is text, never markup: `pip install 'fabricgen[yang]'` or a key path `[0]` must print whole.
    # Nor terminal control: what a device or a file said (a host name, an error) has its control characters
    # shown as escapes.
    from rich.markup import escape

    from fabricgen.deploy.journal import escape as escape_controls

    error_console().print(f"[bold red]error:[/] {escape(escape_controls(message))}", markup=True)
    sys.exit(code)


def load_and_resolve(intent: Path, inventory: Path, jobs: int = os.cpu_count() or 1,
                     fmt: str = "text") -> tuple[FabricInput, Fabric]:
    from fabricgen.load.fabric import load
    from fabricgen.resolve import resolve

    with input_errors(fmt):
        loaded = load(intent, inventory, jobs=jobs)
        return loaded, resolve(loaded.intent, loaded.inventory, loaded.locate)


@contextlib.contextmanager
def input_errors(fmt: str = "text", root: Path | None = None) -> Iterator[None]:
    """Problems in the input (load or resolve) printed as FILE:LINE:COL: key.path: message (hint), exit 2.

    With ``fmt`` json or sarif they are also a report on stdout, each a finding with its rule ID, file, line and
    column: a CI job that reads stdout gets the problems, not an empty document (SARIF's paths relative to
    ``root``)."""
    try:
        yield
    except InputError as exc:
        for line in folded_lines(exc.diagnostics):  # JSON and SARIF keep every one
            click.echo(line, err=True)
        _report_input_errors(exc.diagnostics, fmt, root)
        fail(f"{len(exc.diagnostics)} problem(s) in the input; nothing was written")


def _report_input_errors(problems: Sequence[Diagnostic], fmt: str, root: Path | None = None) -> None:
    """Input errors on stdout as ``fmt`` wants a report (text: nothing; stderr already has them)."""
    from fabricgen.lint.report import input_errors_json, input_errors_sarif

    if fmt == "json":
        click.echo(input_errors_json(problems), nl=False)
    elif fmt == "sarif":
        click.echo(input_errors_sarif(problems, root), nl=False)


def input_options(func: F) -> F:
    # readable=False: click's own check would end an unreadable file in a usage error; load names the file,
    # why it cannot be read and what to do, as it does for every other input problem.
    func = click.option("-i", "--inventory", type=click.Path(path_type=Path, readable=False),
                        default=DEFAULT_INVENTORY, show_default=True, help="Nornir SimpleInventory directory")(func)
    return click.argument("intent", type=click.Path(path_type=Path, readable=False), default=DEFAULT_INTENT)(func)


def _intent_locator(loaded: FabricInput) -> Callable[[Finding], Location]:
    return lambda finding: loaded.locate(finding.source or ())


def escape_unencodable_output() -> None:
    """Write what the terminal's encoding cannot show as escapes (``\\u2192``) instead of raising
    UnicodeEncodeError: with LANG=C or a Latin-1 locale a render that wrote its tree must still exit 0, and a
    diagnostic must still reach the user."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)  # absent on streams a caller replaced
        if reconfigure is not None:
            with contextlib.suppress(ValueError, OSError):  # a closed or detached stream: nothing to print to
                reconfigure(errors="backslashreplace")
