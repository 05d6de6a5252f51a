#!/usr/bin/env python3
"""Deploy benchmark: `fabricgen diff` and `fabricgen push` against the SSH lab (tests/lab.py), as root.

    .venv/bin/python bench/push.py [--hosts 8 64 200] [--workers 8] [--json bench/push-results.json]

Per size: a fresh lab of N GPU hosts (real sshd per host, the NIC tool models of tests/), then
  diff        `fabricgen diff` of every host (the host script's --check on each, over SSH)
  push        `fabricgen push --yes --canary 0 --batch 100% --confirm-timeout 120`: one wave (commit with the
              on-host revert timer, health checks over fresh logins, confirm)
  script      the host script's own --check run inside one host without SSH: the share of each host's cost
              that is the NIC tools (here Python models, on the same 2 cores as everything else)
  controller  CPU seconds of the fabricgen process itself (rusage of the child): fabricgen's own cost, apart
              from what the lab hosts spend running the scripts and tools
Everything, controller and every host, shares this machine's cores: per-host cost includes the hosts' work.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from lab import Lab  # noqa: E402 - the lab lives with the tests


def timed(argv: list[str], cwd: Path) -> tuple[float, float, int]:
    """(wall seconds, CPU seconds of fabricgen itself -- the controller, not the hosts --, exit status)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, check=False)
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 2):
        sys.stderr.write(done.stdout[-2000:] + done.stderr[-2000:])
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, done.returncode


def measure(n: int, workers: int, push: bool = True) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="fabricgen-push-bench-") as scratch, \
            Lab.up(n, prefix=f"b{os.getpid() % 100000}") as lab:
        work = Path(scratch)
        intent, inventory = lab.write_inputs(work / "inputs")
        base = [sys.executable, "-m", "fabricgen"]
        diff_s, diff_cpu, diff_rc = timed([*base, "diff", str(intent), "-i", str(inventory), "--workers", str(workers),
                                 "--format", "json"], work)
        push_s, push_cpu, push_rc = timed([*base, "push", str(intent), "-i", str(inventory), "--workers", str(workers),
                                           "--yes", "--canary", "0", "--batch", "100%", "--confirm-timeout", "300",
                                           "--journal", str(work / "runs"), "--format", "json"], work) if push \
            else (0.0, 0.0, -1)
        host = next(iter(lab.hosts))
        start = time.monotonic()
        lab.run(host, f"bash /usr/local/sbin/{lab.hosts[host].kind.script} --check")
        script_s = time.monotonic() - start
    return {"hosts": n, "workers": workers, "diff_s": round(diff_s, 2), "diff_exit": diff_rc,
            "diff_per_host_s": round(diff_s / n, 3), "diff_controller_cpu_s": round(diff_cpu, 2),
            "push_s": round(push_s, 2), "push_exit": push_rc, "push_per_host_s": round(push_s / n, 3),
            "push_controller_cpu_s": round(push_cpu, 2), "script_check_s": round(script_s, 2)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hosts", type=int, nargs="+", default=[8, 64, 200])
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--push-up-to", type=int, default=10**6, metavar="N",
                        help="measure push only on labs of at most N hosts (diff on every size)")
    args = parser.parse_args()
    results = []
    for n in args.hosts:
        result = measure(n, args.workers, push=n <= args.push_up_to)
        results.append(result)
        print(json.dumps(result), flush=True)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
