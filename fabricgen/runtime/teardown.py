"""Ending the command line without freeing a large heap object by object.

When a 32,768-GPU render has published its tree, the process holds the loaded inventory and the resolved
fabric: millions of objects. Freeing them as Python does when a function returns and again at interpreter exit
writes to every page they live on (refcounts, allocator free lists). After the render's workers were forked
those pages are write-protected, so each write is a page fault as well: 0.4-0.7 CPU-s and 67k page faults,
the last thing the command does. The kernel takes the whole address space back at once when the process exits.

So the ``fabricgen`` console script (:func:`exit_after`), and only it, keeps what a command hands to
:func:`keep_until_exit` alive, and once the command is done flushes the standard streams and leaves with
``os._exit``. A command that kept nothing exits as usual. In-process callers (tests, ``CliRunner``, the API)
never enter :func:`exit_after`, so nothing is kept for them: each render's objects are freed as before.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator

_kept: list[object] | None = None
"""what the running command handed to keep_until_exit; None outside exit_after (nothing is kept)"""


def keep_until_exit(*objects: object) -> None:
    """Keep ``objects`` alive until the process exits, when the console script runs the command."""
    if _kept is not None:
        _kept.extend(objects)


@contextlib.contextmanager
def exit_after() -> Iterator[None]:
    """Run the command line; when it ends with an exit status (click's ``sys.exit``) after keeping objects,
    flush the standard streams and end the process with that status without tearing the heap down."""
    global _kept
    _kept = []
    try:
        yield
    except SystemExit as done:
        if not _kept or not (done.code is None or isinstance(done.code, int)):
            raise
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):  # a closed pipe: the status still tells what happened
                stream.flush()
        os._exit(done.code or 0)
    finally:
        _kept = None
