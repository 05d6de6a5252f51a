#!/usr/bin/env python3
"""`fabricgen lint --configs` against the intent road, in CPU seconds, on a generated fabric (issue 26 item 7).

    python bench/lint_configs.py --gpus 1024 8192 [--work /tmp/bench-lint] [--reuse] [--repeat N]

For each size: bench/make_fabric.py writes the fabric, `fabricgen render` its configs (``--reuse``: keep a fabric
already rendered in WORK), then fresh processes time what each road costs from the same files — intent: load +
resolve + lint; configs: load + resolve + read every config back (`lint --configs`) + lint with that evidence.
Prints one line per size: both roads' CPU seconds and phases, and the ratio.
Each line ends with the 1-minute load average before and after the size's runs: on a shared machine the ratio
moves with it (both roads' load+resolve are the same work, and differ between runs by what the load adds).
``--repeat N`` runs each road N times, alternating, and keeps each road's lowest CPU time (the machine's load
moves single runs by 10-20 %).

A second line per size times the two commands as a user runs them: `fabricgen lint INTENT -i INVENTORY` and the
same with `--configs DIR`, each a fresh process without a cache (FABRICGEN_NO_CACHE=1, as on a CI runner), with
`--format json`; CPU seconds of the whole command — Python's start, imports, and locating every finding in its
file, which the phases above leave out — lowest of the same N runs. The target of issue 26 item 7, configs ≤ 2 ×
intent, is this line's: the issue's own figures (20–28 CPU-s against 3–4 at 8,192 GPUs) were the two commands'.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

ROAD = """
import json, sys, time
from pathlib import Path
from fabricgen.runtime.gctune import bulk_allocation
from fabricgen.lint import lint
from fabricgen.load.fabric import load
from fabricgen.resolve import resolve
from fabricgen.lint.configs import read_configs
fabric_dir, road = Path(sys.argv[1]), sys.argv[2]
start = time.process_time()
with bulk_allocation():
    loaded = load(fabric_dir / "intent.yaml", fabric_dir / "inventory")
    fabric = resolve(loaded.intent, loaded.inventory, loaded.locate)
    phases = {"load+resolve": time.process_time() - start}
    if road == "configs":
        read = read_configs(fabric, fabric_dir / "configs")
        phases["read"] = time.process_time() - start - sum(phases.values())
        report = lint(read.fabric, evidence=read.evidence)
    else:
        report = lint(fabric)
    phases["lint"] = time.process_time() - start - sum(phases.values())
print(json.dumps({"cpu_s": time.process_time() - start, "phases": phases, "errors": report.errors}))
"""


def command_cpu_s(fabric: Path, name: str) -> float:
    """CPU seconds (user + system) of `fabricgen lint` on the fabric, with ``--configs`` for the configs road."""
    command = [sys.executable, "-m", "fabricgen", "lint", str(fabric / "intent.yaml"), "-i", str(fabric / "inventory"),
               "--format", "json"]
    if name == "configs":
        command += ["--configs", str(fabric / "configs")]
    env = {**os.environ, "FABRICGEN_NO_CACHE": "1"}
    with tempfile.TemporaryFile() as stderr:  # a file, not a pipe: a long stderr cannot block the command
        proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=stderr, env=env)
        _, status, usage = os.wait4(proc.pid, 0)  # this command's own rusage
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode not in (0, 1):  # 1: lint found errors, which a fabric may have
            stderr.seek(0)
            raise RuntimeError(f"{' '.join(command)} failed: {stderr.read().decode(errors='replace')}")
    return usage.ru_utime + usage.ru_stime


def road(fabric: Path, name: str) -> dict[str, object]:
    out = subprocess.run([sys.executable, "-c", ROAD, str(fabric), name], check=True, capture_output=True, text=True)
    return dict(json.loads(out.stdout.splitlines()[-1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gpus", type=int, nargs="+", default=[1024, 8192])
    parser.add_argument("--work", type=Path, default=Path("/tmp/bench-lint-configs"))
    parser.add_argument("--reuse", action="store_true", help="keep a fabric already rendered in WORK")
    parser.add_argument("--repeat", type=int, default=1, help="runs per road; the lowest CPU time is kept")
    args = parser.parse_args()
    # Byte-compiled first, as a wheel install leaves fabricgen (bench/run.py does the same): under
    # PYTHONDONTWRITEBYTECODE an edited checkout compiles its changed modules again in every process, which the
    # configs road's readers would pay inside its clock.
    compileall.compile_dir(ROOT / "fabricgen", quiet=1)
    print(f"{'GPUs':>6} {'intent CPU s':>13} {'configs CPU s':>14} {'ratio':>6}  phases (s)")
    for gpus in args.gpus:
        fabric = args.work / f"fabric-{gpus}"
        rendered = "reused"
        if not (args.reuse and (fabric / "configs" / "manifest.json").exists()):
            subprocess.run([sys.executable, str(ROOT / "bench" / "make_fabric.py"), "--gpus", str(gpus), "-o",
                            str(fabric)], check=True, capture_output=True)
            start = time.perf_counter()
            subprocess.run([sys.executable, "-m", "fabricgen", "render", str(fabric / "intent.yaml"), "-i",
                            str(fabric / "inventory"), "-o", str(fabric / "configs"), "--force"], check=True,
                           capture_output=True)
            rendered = f"render took {time.perf_counter() - start:.0f} s wall"
        load_before = os.getloadavg()[0]
        runs: dict[str, list[dict[str, object]]] = {"intent": [], "configs": []}
        commands: dict[str, list[float]] = {"intent": [], "configs": []}
        for _ in range(max(args.repeat, 1)):
            for name, found in runs.items():
                found.append(road(fabric, name))
                commands[name].append(command_cpu_s(fabric, name))
        intent, configs = (min(found, key=lambda run: float(str(run["cpu_s"]))) for found in runs.values())
        ratio = float(str(configs["cpu_s"])) / float(str(intent["cpu_s"]))
        print(f"{gpus:>6} {intent['cpu_s']:>13.2f} {configs['cpu_s']:>14.2f} {ratio:>6.2f}  intent: {_phases(intent)}; "
              f"configs: {_phases(configs)} ({rendered}; load {load_before:.1f} -> {os.getloadavg()[0]:.1f})",
              flush=True)
        intent_command, configs_command = min(commands["intent"]), min(commands["configs"])
        print(f"{'':>6} {intent_command:>13.2f} {configs_command:>14.2f} {configs_command / intent_command:>6.2f}  "
              "the commands: `fabricgen lint` and `fabricgen lint --configs`, whole processes, no cache", flush=True)


def _phases(run: dict[str, object]) -> str:
    return ", ".join(f"{k} {v:.2f}" for k, v in dict(run["phases"]).items())  # type: ignore[call-overload]


if __name__ == "__main__":
    main()
