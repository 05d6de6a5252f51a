"""One long-lived Jinja2 environment for every render (building one per device is what makes pyavd slow).

Templates hold syntax only; they receive values already decided and formatted. StrictUndefined turns a
missing value into an error instead of an empty line in a switch config.
"""

from __future__ import annotations

import shlex
from collections.abc import Hashable
from functools import cache
from pathlib import Path
from typing import Any

import jinja2


def templates_dir() -> Path:
    """Installed wheels carry templates inside the package; a source checkout keeps them at the top."""
    packaged = Path(__file__).parents[2] / "templates"
    if packaged.is_dir():
        return packaged
    return Path(__file__).parents[3] / "templates"


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
            # Templates ship with the package and do not change under a running render: no stat per render.
            auto_reload=False,
        )
        self.env.filters["sh"] = shlex.quote
        self._compiled: dict[str, jinja2.Template] = {}
        self._pieces: dict[tuple[str, Hashable], dict[Hashable, tuple[str, ...]]] = {}

    def template(self, name: str) -> jinja2.Template:
        """The compiled template ``name``, loaded once (a dict hit is cheaper than Jinja's cache lookup)."""
        compiled = self._compiled.get(name)
        if compiled is None:
            compiled = self._compiled[name] = self.env.get_template(name)
        return compiled

    def render(self, name: str, **context: Any) -> str:
        return self.template(name).render(**context)

    def pieces(self, name: str, variant: Hashable = None) -> dict[Hashable, tuple[str, ...]]:
        """A renderer's store of texts rendered from template ``name``, as the pieces between the places of a few
        values, by a key that, with ``variant``, decides every other value the text was rendered with: many devices
        render the same fragment but for a name (one port's settings), and a renderer that looks the pieces up
        renders the fragment once. Kept here, so that pieces are only reused with the templates that made them."""
        pieces = self._pieces.get((name, variant))
        if pieces is None:
            pieces = self._pieces[(name, variant)] = {}
        return pieces


@cache
def default_templates() -> Templates:
    return Templates()
