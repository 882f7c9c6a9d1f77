"""Decision time per round of GO-UCB next to GP-EI, CPU clock, measured in one process (issue 19, item 5).

Decision time = the loop's ``decision_time`` (ask + tell: for GO-UCB the Phase II ascent, the rank-one
update of Sigma_t and, in its first Phase II round, the Phase I regression oracle; for GP-EI the GP refit and
the acquisition maximisation), read with the process CPU clock instead of the wall clock (the sandbox is
shared, so wall time is inflated by other processes). Both algorithms run on the same task, seed, budget and
initial-design size, one after the other. Tasks: Styblinski-Tang-20 (n = 8, T = 64) and breast_cancer with
rf / mlp / gb (n = 5, T = 30).

Usage: python scripts/bench_go_ucb.py [--tasks st20 bc-mlp ...] [--seed 0] [--threads 1]
"""
from __future__ import annotations

import argparse
import os
import platform
import statistics
import time
import types
import warnings

os.environ.setdefault("OMP_NUM_THREADS", "1")
TASKS = {"st20": ({"name": "styblinski_tang", "dim": 20}, 8, 64),
         "bc-rf": ({"name": "breast_cancer", "model": "rf"}, 5, 30),
         "bc-mlp": ({"name": "breast_cancer", "model": "mlp"}, 5, 30),
         "bc-gb": ({"name": "breast_cancer", "model": "gb"}, 5, 30)}
ALGOS = {"GO-UCB": ("go_ucb", {}), "GO-UCB paper": ("go_ucb", {"preset": "paper"}), "GP-EI": ("gp_ei", {})}


def decision_times(algo: str, algo_kw: dict, task: dict, n_init: int, rounds: int, seed: int) -> list[float]:
    """CPU seconds of ask + tell per round (the loop's decision_time, its clock swapped for process_time)."""
    from hpoflow import loop, run_config

    raw = {"algo": {"name": algo, "n_init": n_init, **algo_kw}, "surrogate": {"name": "gp"}, "task": task,
           "hardware": {"name": "cpu", "device": "cpu"}, "tracking": {"enabled": False},
           "budget": {"rounds": rounds}, "seed": seed}
    wall_clock = loop.time
    loop.time = types.SimpleNamespace(perf_counter=time.process_time)  # the loop's timer reads CPU time
    try:
        result = run_config(raw)
    finally:
        loop.time = wall_clock
    return [m["decision_time"] for m in result.metrics]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--tasks", nargs="*", default=list(TASKS))
    p.add_argument("--algos", nargs="*", default=["GO-UCB", "GP-EI"], help=f"of {list(ALGOS)}")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=1)
    args = p.parse_args()
    warnings.filterwarnings("ignore")
    import torch

    torch.set_num_threads(args.threads)
    print(f"decision time per round, CPU seconds ({args.threads} thread(s), {platform.processor() or platform.machine()}, "
          f"seed {args.seed}); mean over the rounds after the initial design, first Phase II round, and the rest")
    print(f"{'task':<8}{'n':>3}{'T':>4}" + "".join(f"{a:>30}" for a in args.algos) + f"{'GO-UCB / GP-EI':>16}")
    for key in args.tasks:
        task, n, T = TASKS[key]
        cells, means = [], {}
        for a in args.algos:
            name, kw = ALGOS[a]
            v = decision_times(name, kw, task, n, T, args.seed)[n:]
            means[a] = statistics.mean(v)
            cells.append(f"{means[a]:8.3f} ({v[0]:6.2f} + {statistics.mean(v[1:]):6.3f})")
        ratio = means["GO-UCB"] / means["GP-EI"] if {"GO-UCB", "GP-EI"} <= set(means) else float("nan")
        print(f"{key:<8}{n:>3}{T:>4}" + "".join(f"{c:>30}" for c in cells) + f"{ratio:>16.2f}", flush=True)


if __name__ == "__main__":
    main()
