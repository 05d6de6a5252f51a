"""One long-lived Jinja2 environment for every render (building one per device is what makes pyavd slow).

Templates hold syntax only; they receive values already decided and formatted. StrictUndefined turns a
missing value into an error instead of an empty line in a switch config.
"""

from __future__ import annotations

import shlex
from functools import cache
from pathlib import Path
from typing import Any

import jinja2


def templates_dir() -> Path:
    """Installed wheels carry templates inside the package; a source checkout keeps them at the top."""
    packaged = Path(__file__).parent / "templates"
    if packaged.is_dir():
        return packaged
    return Path(__file__).parent.parent / "templates"


class Templates:
    def __init__(self, root: Path | None = None) -> None:
        self.root = root or templates_dir()
        self.env = jinja2.Environment(
            loader=jinja2.FileSystemLoader(str(self.root)),
            undefined=jinja2.StrictUndefined,
            autoescape=False,  # configs, not HTML
            keep_trailing_newline=True,
            trim_blocks=True,
            lstrip_blocks=True,
        )
        self.env.filters["sh"] = shlex.quote

    def render(self, name: str, **context: Any) -> str:
        return self.env.get_template(name).render(**context)


@cache
def default_templates() -> Templates:
    return Templates()
