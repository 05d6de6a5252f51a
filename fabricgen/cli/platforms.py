"""fabricgen platforms: what each platform can express and how it deploys."""

from __future__ import annotations

import click

from fabricgen.platforms import get_platform


@click.command("platforms")
@click.option("--format", "fmt", type=click.Choice(["text", "markdown"]), default="text", show_default=True)
def platforms_cmd(fmt: str) -> None:
    """List the platforms and what they can express.

    One line per platform an inventory host may name (`platform:`): switch or host, its largest MTU, and the
    software version the output is written for. `--format markdown` prints docs/platforms.md: per platform the
    settings it can
    express (lossless classes, PFC watchdog actions and timer steps, headroom, ECN), the files rendered, and
    what `lint --configs` reads back from them.

    \b
    Examples:
      fabricgen platforms                              # name, kind, max MTU, target software
      fabricgen platforms --format markdown > docs/platforms.md
    """
    from fabricgen.deploy.outcome import OUTCOMES
    from fabricgen.platforms import platform_names
    from fabricgen.platforms.matrix import platforms_markdown

    if fmt == "markdown":
        click.echo(platforms_markdown(OUTCOMES), nl=False)
        return
    for name in platform_names():
        cap = get_platform(name).capability
        click.echo(f"{name:<10} {cap.kind:<6} max MTU {cap.max_mtu:<5} {cap.target}")
