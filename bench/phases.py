"""One benchmark run in a fresh process: time each phase of `fabricgen render` on one generated fabric.

    python bench/phases.py FABRIC_DIR OUT_DIR [INVENTORY]   → prints one JSON line

INVENTORY is the inventory directory under FABRIC_DIR: inventory (the SimpleInventory, default) or compact.

The phases `fabricgen render` runs, with the CLI's GC setting, one after the other in one process (--jobs 1),
so that each phase's cost is seen on its own. bench/run.py times the command itself with --jobs N beside.
"""

from __future__ import annotations

import json
import os
import resource
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")


def timed(phases: dict[str, dict[str, float]], name: str, work: Callable[[], T]) -> T:
    wall, cpu = time.perf_counter(), time.process_time()
    result = work()
    phases[name] = {"wall_s": time.perf_counter() - wall, "cpu_s": time.process_time() - cpu}
    return result


def main() -> None:
    fabric_dir, out = Path(sys.argv[1]), Path(sys.argv[2])
    inventory = fabric_dir / (sys.argv[3] if len(sys.argv) > 3 else "inventory")
    from fabricgen.api import generate
    from fabricgen.build.incremental import renderer_fingerprint
    from fabricgen.build.output import build_manifest, write_output
    from fabricgen.lint import lint
    from fabricgen.load.fabric import load
    from fabricgen.resolve import resolve
    from fabricgen.runtime.gctune import bulk_allocation

    phases: dict[str, dict[str, float]] = {}
    with bulk_allocation():
        loaded = timed(phases, "load", lambda: load(fabric_dir / "intent.yaml", inventory))
        fabric = timed(phases, "resolve", lambda: resolve(loaded.intent, loaded.inventory, loaded.locate))
        report = timed(phases, "lint", lambda: lint(fabric))
        files = timed(phases, "render", lambda: generate(fabric))
        extra = {"renderer": renderer_fingerprint()}
        timed(phases, "write", lambda: write_output(out, files, build_manifest(files, loaded.input_hashes, extra)))
    result: dict[str, Any] = {
        "devices": len(fabric.devices), "links": report.links, "files": len(files),
        "bytes": sum(len(text.encode()) for text in files.values()), "lint_errors": report.errors,
        "phases": phases, "total_wall_s": sum(p["wall_s"] for p in phases.values()),
        "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "pid": os.getpid(),
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
