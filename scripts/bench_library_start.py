"""The library's start-up: CPU seconds from a process's first ``hpoflow.minimize`` call to its first evaluation.

``python scripts/bench_library_start.py [--repeat 5] [--against main]`` starts ``--repeat`` fresh processes
per revision; each imports hpoflow, then times (process CPU clock, one thread) ``minimize(fn, <2-d space>,
algo="random", rounds=1)`` up to the moment ``fn`` is first called: composing and validating the settings,
building the task and algorithm. The table gives the median and min over the processes, and whether Hydra
was imported by then (the library path composes without it since the settings are built directly).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.append(str(Path(__file__).resolve().parents[1]))  # after PYTHONPATH: --against's revision comes first
from scripts.bench_common import ROOT, add_against_arguments, answered_as_child, measure_with_against, pin_threads

pin_threads()

CHILD = """
import json, sys, time
import hpoflow
seen = {}
def fn(config):
    if not seen:
        seen.update(cpu=time.process_time() - cpu0, wall=time.perf_counter() - wall0)
    return (config["x"] - 0.3) ** 2 + (config["y"] + 0.1) ** 2
cpu0, wall0 = time.process_time(), time.perf_counter()
hpoflow.minimize(fn, {"x": ("float", -1.0, 1.0), "y": ("float", -1.0, 1.0)}, algo="random", rounds=1)
print(json.dumps({**seen, "hydra": "hydra" in sys.modules}))
"""


def measure(args: argparse.Namespace) -> dict[str, Any]:
    """Median/min CPU and wall seconds to the first evaluation over ``args.repeat`` fresh processes."""
    env = dict(os.environ)
    if not args.json:  # this tree; a --json child already has its revision's PYTHONPATH
        env["PYTHONPATH"] = str(ROOT)
    runs = []
    with tempfile.TemporaryDirectory() as cwd:  # tracking is off: nothing is written, but never into the tree
        for _ in range(args.repeat):
            proc = subprocess.run([sys.executable, "-c", CHILD], env=env, cwd=cwd, capture_output=True, text=True,
                                  check=False)
            if proc.returncode != 0:
                raise RuntimeError(proc.stderr[-3000:])
            runs.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    cpu, wall = [r["cpu"] for r in runs], [r["wall"] for r in runs]
    return {"cpu_median": statistics.median(cpu), "cpu_min": min(cpu), "wall_median": statistics.median(wall),
            "hydra": any(r["hydra"] for r in runs), "repeat": len(runs)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="fresh processes per revision")
    add_against_arguments(parser)
    args = parser.parse_args()
    if answered_as_child(args, measure):
        return
    results = measure_with_against(args, measure, __file__)
    print(f"{'revision':<24} {'CPU s (median)':>15} {'CPU s (min)':>12} {'wall s (median)':>16}  hydra imported")
    for label, r in results.items():
        print(f"{label:<24} {r['cpu_median']:>15.3f} {r['cpu_min']:>12.3f} {r['wall_median']:>16.3f}  {r['hydra']}")
    if len(results) == 2:
        now, then = results.values()
        print(f"first call to first evaluation: {then['cpu_median']:.3f} -> {now['cpu_median']:.3f} CPU s "
              f"({then['cpu_median'] / now['cpu_median']:.1f}x)")


if __name__ == "__main__":
    main()
