#!/usr/bin/env python3
"""How long reading a fabric from Nautobot takes: seed it once, then time fetches (the API only, no render).

    NAUTOBOT_TOKEN=... .venv/bin/python bench/nautobot_fetch.py --url http://127.0.0.1:8080 --gpus 1024

Writes a --gpus fabric with bench/make_fabric.py, seeds it into --url (Location `bench-<gpus>`; skipped when
that Location already holds its devices) with `fabricgen inventory export --to nautobot`, then reads it back
--runs times as `-i nautobot://...?location=bench-<gpus>` does, cold (an empty cache each time) and cached
(Nautobot unchanged: fabricgen.load.sources.nautobot_cache), and prints the best and median seconds of each, the
requests made and the objects read. Without --url it starts a Nautobot of its own (tests/nautobot_lab.py).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH.parent / "tests"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--url", default=None)
    parser.add_argument("--gpus", type=int, default=1024)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="fabricgen-nautobot-bench-") as tmp:
        lab = None
        if args.url is None:
            from nautobot_lab import NautobotLab

            lab = NautobotLab.start(Path(tmp) / "nautobot")
            args.url, os.environ["NAUTOBOT_TOKEN"] = lab.url, lab.token
        try:
            print(json.dumps(measure(args.url, args.gpus, args.runs, Path(tmp)), indent=2))
        finally:
            if lab is not None:
                lab.stop()


def measure(url: str, gpus: int, runs: int, work: Path) -> dict[str, object]:
    from fabricgen.load.sources.nautobot import as_nornir, fetch

    location = f"bench-{gpus}"
    fabric = work / f"fabric-{gpus}"
    subprocess.run([sys.executable, str(BENCH / "make_fabric.py"), "--gpus", str(gpus), "-o", str(fabric)],
                   check=True, capture_output=True)
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "fabricgen", "inventory", "export", "--to", "nautobot", "-i",
                    str(fabric / "inventory"), "--url", url, "--location", location], check=True)  # kept: idempotent
    seeded = time.perf_counter() - start
    token = os.environ["NAUTOBOT_TOKEN"]
    result: dict[str, object] = {"gpus": gpus, "seed_s": round(seeded, 2)}
    os.environ["FABRICGEN_CACHE_DIR"] = str(work / "cache")
    for kind in ("cold", "cached"):  # cold: an empty cache every time; cached: Nautobot unchanged since the last
        times, fetched = [], None
        for _ in range(runs):
            if kind == "cold":
                shutil.rmtree(work / "cache", ignore_errors=True)
            start = time.perf_counter()
            fetched = fetch(url, token, filter_parameters={"location": location})
            as_nornir(fetched, url, [])
            times.append(time.perf_counter() - start)
        assert fetched is not None and fetched.cached == (kind == "cached")
        result |= {f"{kind}_best_s": round(min(times), 2), f"{kind}_median_s": round(statistics.median(times), 2),
                   f"{kind}_requests": fetched.requests}
    assert fetched is not None
    return result | {"devices": len(fetched.devices), "interfaces": sum(map(len, fetched.interfaces.values())),
                     "cables": len(fetched.cables)}


if __name__ == "__main__":
    main()
