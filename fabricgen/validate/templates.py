"""sonic-buildimage's YANG templates, rendered from the fetched tree only, within a time, size and memory limit.

The four ``yang-templates/*.yang.j2`` come from whatever repository the user named, so a template is hostile
until rendered. It is rendered:

- from the fetched folder only: :class:`FetchedTemplates` serves a template or an include by a relative name,
  opening each path component with ``O_NOFOLLOW`` under the folder's descriptor; an absolute name
  (``{% include "/proc/self/environ" %}``), ``..``, a symbolic link or a file other than a regular one is
  refused with a message naming it;
- in a sandbox (Jinja2's SandboxedEnvironment: the templates need nothing but an ``if``);
- in a child process of its own session (``python -m fabricgen.validate.templates``), which the parent kills
  with its process group after :data:`RENDER_SECONDS` (an endless loop) or on an interrupt, with its address
  space capped (a template that builds a huge string fails with MemoryError instead of taking the machine);
- streamed into its file, refused beyond :data:`MAX_MODEL_BYTES` (the same bound as a fetched ``*.yang``).

Each limit has an environment variable that raises it (``Limit``, as for input files).
"""

from __future__ import annotations

import os
import resource
import stat
import subprocess
import sys
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Final

from jinja2 import BaseLoader, Environment, TemplateNotFound
from jinja2.sandbox import SandboxedEnvironment

from fabricgen.load.yamlsource import Limit
from fabricgen.validate.gitfetch import start_and_wait

__all__ = ["MAX_MODEL_BYTES", "RENDER_SECONDS", "TEMPLATES_PATH", "FetchedTemplates", "TemplateRefused",
           "read_inside", "render_templates"]

TEMPLATES_PATH: Final = "src/sonic-yang-models/yang-templates"
# sonic-buildimage's largest model is tens of KB (sonic-crm.yang: 47 KB in 202411); 8 MiB leaves room for
# any real one and stops a hostile multi-gigabyte file before it is read into memory or the cache.
MAX_MODEL_BYTES: Final = Limit("FABRICGEN_MAX_MODEL_BYTES", 8 * 1024 * 1024,
                               "bytes per YANG model (fetched, or rendered from a template)")
# The four real templates render in milliseconds; the time is for the child Python to start.
RENDER_SECONDS: Final = Limit("FABRICGEN_TEMPLATE_SECONDS", 30, "seconds to render the YANG templates")
_ADDRESS_SPACE: Final = 1024 * 1024 * 1024  # bytes: the child's cap, ~20 times what it needs
_MESSAGE_CHARS: Final = 2000  # of the child's error text: one line is expected


class TemplateRefused(Exception):
    """A template or a fetched model cannot be taken: outside the tree, a link, too large, too slow, broken."""


def read_inside(folder: Path, name: str, limit: int, what: str) -> bytes:
    """The bytes of ``name`` (a relative path, ``/``-separated) inside ``folder``: every component opened
    without following a symbolic link, the last one a regular file of at most ``limit`` bytes. ``what`` names
    the file in a refusal (``src/.../x.yang.j2 includes 'y'``). TemplateNotFound when there is no such file."""
    parts = name.split("/")
    if name.startswith("/") or any(part in ("", ".", "..") for part in parts):
        raise TemplateRefused(f"{what}: {name!r} is a path outside {TEMPLATES_PATH}; a template may include "
                              "only files of that folder, by a relative name")
    descriptor = _open_nofollow(folder, parts, what, name)
    with os.fdopen(descriptor, "rb") as handle:
        kind = os.fstat(handle.fileno()).st_mode
        if not stat.S_ISREG(kind):
            raise TemplateRefused(f"{what}: {name!r} is not a regular file; refusing it")
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise TemplateRefused(f"{what}: {name!r} is larger than {limit:,} bytes; refusing it "
                              f"({MAX_MODEL_BYTES.hint()})")
    return data


def _open_nofollow(folder: Path, parts: Sequence[str], what: str, name: str) -> int:
    """A read descriptor of ``folder/parts``, no component a symbolic link (ELOOP/ENOTDIR → TemplateRefused)."""
    directory = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    try:
        for part in parts[:-1]:
            inner = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=directory)
            os.close(directory)
            directory = inner
        # O_NONBLOCK: a FIFO planted under a template's name must not hang the open.
        return os.open(parts[-1], os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=directory)
    except FileNotFoundError:
        raise TemplateNotFound(name) from None
    except OSError as exc:  # ELOOP: a link as the last component; ENOTDIR: a link (or a file) on the way
        raise TemplateRefused(f"{what}: {name!r} is (or passes through) a symbolic link; refusing to follow "
                              f"it out of {TEMPLATES_PATH} ({exc.strerror})") from None
    finally:
        os.close(directory)


class FetchedTemplates(BaseLoader):
    """Templates from one fetched folder and nothing else (:func:`read_inside`); what is rendered names its
    includes in refusals."""

    def __init__(self, folder: Path, limit: int) -> None:
        self.folder, self.limit = folder, limit
        self.rendering = ""  # the template being rendered, for messages about its includes

    def get_source(self, environment: Environment, template: str) -> tuple[str, str | None, Callable[[], bool]]:
        what = f"{TEMPLATES_PATH}/{self.rendering or template}"
        data = read_inside(self.folder, template, self.limit, what)
        try:
            return data.decode("utf-8"), None, lambda: True
        except UnicodeDecodeError as exc:
            raise TemplateRefused(f"{what}: {template!r} is not UTF-8 text ({exc.reason})") from None


def render_into(folder: Path, names: Sequence[str], out: Path, limit: int) -> None:
    """Render each template ``names`` of ``folder`` (``X.yang.j2``) as sonic-yang-models' setup.py renders it
    for the Python tools (``trim_blocks``, ``yang_model_type="py"``) into ``out/X.yang``, at most ``limit``
    bytes each. TemplateRefused naming the template on any failure."""
    loader = FetchedTemplates(folder, limit)
    environment = SandboxedEnvironment(loader=loader, trim_blocks=True)
    for name in names:
        loader.rendering = name
        where = f"{TEMPLATES_PATH}/{name}"
        try:
            chunks = environment.get_template(name).generate(yang_model_type="py")
            _write_limited(out / name.removesuffix(".j2"), chunks, limit, where)
        except TemplateRefused:
            raise
        except Exception as exc:  # a broken template: TemplateError, RecursionError, MemoryError, TypeError...
            raise TemplateRefused(f"{where}: cannot render it: {type(exc).__name__}: {exc}") from exc


def _write_limited(path: Path, chunks: Iterable[str], limit: int, where: str) -> None:
    written = 0
    # 0644 whatever the umask: a group-writable model would not be trusted on use (models.py).
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        for chunk in chunks:
            written += len(chunk.encode("utf-8"))
            if written > limit:
                raise TemplateRefused(f"{where}: renders more than {limit:,} bytes; refusing it "
                                      f"({MAX_MODEL_BYTES.hint()})")
            handle.write(chunk)


def render_templates(folder: Path, names: Sequence[str], out: Path) -> None:
    """:func:`render_into` in a child process (module docstring), killed with its process group at the time
    limit or when this process is interrupted. TemplateRefused with the child's message."""
    seconds = RENDER_SECONDS.value()
    argv = [sys.executable, "-P", "-m", __name__, str(folder), str(out), *names]  # -P: not the cwd's modules
    try:
        # Its group is killed at the time limit and on Ctrl-C or SIGTERM, before the caller removes its work folder.
        process, _, err = start_and_wait(argv, seconds, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                         stderr=subprocess.PIPE, text=True)
    except subprocess.TimeoutExpired:
        raise TemplateRefused(f"{TEMPLATES_PATH}: rendering the templates did not finish within {seconds} s (an "
                              f"endless loop?); refusing them. The limit is {seconds} {RENDER_SECONDS.what}; "
                              f"raise it with {RENDER_SECONDS.variable}=N on a very slow machine") from None
    if process.returncode != 0:
        lines = [line for line in err[-_MESSAGE_CHARS:].splitlines() if line.strip()]
        raise TemplateRefused(lines[-1] if lines else f"{TEMPLATES_PATH}: rendering failed (exit "
                              f"{process.returncode})")


def main(argv: Sequence[str]) -> int:
    """The child: ``FOLDER OUT NAME...``; exit 2 with one line on stderr when a template is refused."""
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    cap = _ADDRESS_SPACE if hard == resource.RLIM_INFINITY else min(hard, _ADDRESS_SPACE)
    resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    folder, out, names = Path(argv[0]), Path(argv[1]), argv[2:]
    try:
        render_into(folder, names, out, MAX_MODEL_BYTES.value())
    except TemplateRefused as exc:
        print(str(exc).replace("\n", " "), file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
