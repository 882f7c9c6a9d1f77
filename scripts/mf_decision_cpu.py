"""Decision CPU of multi-fidelity methods, from the runs ``scripts/mf_compare.py --out DIR`` saved: per method and
replayed task, the median CPU seconds per run (the replay itself costs next to nothing, so this is the method's
own deciding plus the loop's bookkeeping), the median number of jobs (decisions) per run, milliseconds per decision,
and beside them the recorded training seconds per fidelity unit of the task (what one unit of real training cost).

    python scripts/mf_decision_cpu.py /tmp/ft_w1 --methods random,hyperband,freeze_thaw
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))


def unit_seconds(task: str) -> float:
    """Median recorded training seconds per fidelity unit of ``lc_<benchmark>``."""
    from hpoflow.tasks.replay import load_benchmark

    data = load_benchmark(task.removeprefix("lc_"))
    return statistics.median(data["seconds"]) / float(data["fidelity"]["max"])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("out", help="an mf_compare.py --out folder")
    parser.add_argument("--methods", default="", help="comma-separated (default: every method saved)")
    args = parser.parse_args()
    rows: dict[tuple[str, str], list[dict]] = {}
    for path in sorted(glob.glob(os.path.join(args.out, "*.json"))):
        with open(path) as fh:
            r = json.load(fh)
        rows.setdefault((r["method"], r["task"]), []).append(r)
    methods = args.methods.split(",") if args.methods else sorted({m for m, _ in rows})
    tasks = sorted({t for _, t in rows})
    print("| method | task | runs | CPU s per run (median) | jobs per run (median) | ms per decision | "
          "task's training s per fidelity unit |")
    print("|---|---|---|---|---|---|---|")
    for m in methods:
        per_method = []
        for t in tasks:
            runs = rows.get((m, t), [])
            if not runs:
                continue
            cpu = statistics.median(r["cpu"] for r in runs)
            jobs = statistics.median(len(r["value"]) for r in runs)
            per_method.append(cpu)
            print(f"| {m} | {t} | {len(runs)} | {cpu:.2f} | {jobs:.0f} | {1000 * cpu / jobs:.2f} | "
                  f"{unit_seconds(t):.3f} |")
        if per_method:
            print(f"| {m} | all | | {statistics.median(per_method):.2f} (median over tasks) | | | |")


if __name__ == "__main__":
    main()
