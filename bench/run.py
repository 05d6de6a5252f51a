#!/usr/bin/env python3
"""fabricgen's scale benchmark: each phase at 32 → 32,768 GPUs, side by side with pyavd and the I/O floor.

    .venv/bin/python bench/run.py [--gpus 32 1024 8192 32768] [--json bench/results.json]

Each size runs in a fresh process (bench/phases.py) so peak RSS is per size. pyavd (the `parity` extra) renders
an equivalent 64-port RoCE leaf; fabricgen resolves that device and renders it, both in this process, warm.
The I/O floor copies the output tree fabricgen wrote with shutil.copytree.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent


def run_size(gpus: int, work: Path) -> dict[str, Any]:
    fabric = work / f"fabric-{gpus}"
    subprocess.run([sys.executable, str(BENCH / "make_fabric.py"), "--gpus", str(gpus), "-o", str(fabric)],
                   check=True, capture_output=True)
    out = work / f"out-{gpus}"
    done = subprocess.run([sys.executable, str(BENCH / "phases.py"), str(fabric), str(out)], check=True,
                          capture_output=True, text=True)
    result: dict[str, Any] = json.loads(done.stdout)
    result["gpus"] = gpus
    floor_dir = work / f"floor-{gpus}"
    start = time.perf_counter()
    shutil.copytree(out, floor_dir)
    result["io_floor_s"] = time.perf_counter() - start
    shutil.rmtree(floor_dir)
    return result


def median_ms(func: Any, repeat: int = 20) -> float:
    func()  # warm
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        func()
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


def pyavd_side_by_side(work: Path) -> dict[str, Any]:
    """One 64-port EOS RoCE leaf: fabricgen (resolve that device + render) vs pyavd (validate + render)."""
    from fabricgen.api import render_device
    from fabricgen.load import load
    from fabricgen.resolve import _resolve_device
    from fabricgen.resolve.context import ResolveContext
    from fabricgen.resolve.qos import resolve_qos

    fabric = work / "fabric-1024"
    if not fabric.exists():
        subprocess.run([sys.executable, str(BENCH / "make_fabric.py"), "--gpus", "1024", "-o", str(fabric)],
                       check=True, capture_output=True)
    loaded = load(fabric / "intent.yaml", fabric / "inventory")
    ctx = ResolveContext(loaded.intent, loaded.inventory)
    qos = resolve_qos(loaded.intent)
    leaf = loaded.inventory.devices["r1-leaf0"]  # rail 1 leaves run EOS: 32 host ports + 32 uplinks
    device = _resolve_device(ctx, leaf, qos)
    fabricgen_ms = median_ms(lambda: render_device(_resolve_device(ctx, leaf, qos)))
    result: dict[str, Any] = {"device": leaf.name, "ports": len(device.ports), "fabricgen_ms": fabricgen_ms,
                              "eos_lines": render_device(device)["eos.cfg"].count("\n")}
    try:
        import pyavd

        sys.path.insert(0, str(ROOT / "tests"))
        from test_eos_pyavd_parity import structured_config
    except ImportError as exc:  # the `parity` extra is optional
        result["pyavd"] = f"not installed ({exc}); pip install -e '.[parity]'"
        return result
    config = structured_config(device)

    def avd() -> None:
        validated = pyavd.validate_structured_config(config)
        pyavd.get_device_config(validated.validated_data)

    result |= {"pyavd_version": pyavd.__version__, "pyavd_ms": median_ms(avd)}
    result["ratio"] = result["pyavd_ms"] / fabricgen_ms
    return result


def table(results: list[dict[str, Any]]) -> str:
    head = (f"{'GPUs':>7} {'devices':>8} {'links':>7} {'load':>7} {'resolve':>8} {'lint':>7} {'render':>7} "
            f"{'write':>7} {'total':>7} {'floor':>7} {'ms/dev':>7} {'RSS MiB':>8}")
    rows = [head]
    for r in results:
        p = r["phases"]
        rows.append(f"{r['gpus']:>7} {r['devices']:>8} {r['links']:>7} {p['load']['wall_s']:>7.2f} "
                    f"{p['resolve']['wall_s']:>8.2f} {p['lint']['wall_s']:>7.2f} {p['render']['wall_s']:>7.2f} "
                    f"{p['write']['wall_s']:>7.2f} {r['total_wall_s']:>7.2f} {r['io_floor_s']:>7.2f} "
                    f"{1000 * r['total_wall_s'] / r['devices']:>7.2f} {r['peak_rss_mib']:>8.0f}")
    return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gpus", type=int, nargs="+", default=[32, 1024, 8192, 32768])
    parser.add_argument("--json", type=Path, default=BENCH / "results.json")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="fabricgen-bench-") as tmp:
        work = Path(tmp)
        results = [run_size(gpus, work) for gpus in args.gpus]
        side = pyavd_side_by_side(work)
    print(table(results))
    print(json.dumps({"pyavd_side_by_side": side}, indent=2))
    args.json.write_text(json.dumps({"sizes": results, "pyavd_side_by_side": side}, indent=2) + "\n")


if __name__ == "__main__":
    main()
