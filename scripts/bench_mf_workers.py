"""ASHA with k workers against one worker on a task whose every fidelity unit takes a fixed sleep: the wall time
at which the k-worker run first reaches the one-worker run's final simple regret (same seed), as a ratio of the
time the one-worker run first reached it; and the same replayed in simulated time (``budget.executor=simulated``).

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 python scripts/bench_mf_workers.py --seeds 5
"""
from __future__ import annotations

import argparse
import os
import sys

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(var, "1")
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import numpy as np

from hpoflow.algorithms.base import BuildContext
from hpoflow.algorithms.multi_fidelity import MultiFidelity
from hpoflow.algorithms.multi_fidelity_config import MultiFidelityConfig
from hpoflow.core.budget import Budget
from hpoflow.runner.loop import Loop, drive
from hpoflow.runner.simulated import drive_simulated
from hpoflow.runner.workers import drive_parallel
from hpoflow.tasks.multi_fidelity import make_hartmann6_mf


def one(seed: int, workers: int, sleep: float, cost: float, simulated: bool) -> tuple[np.ndarray, np.ndarray]:
    """(time, simple regret) per completed round: wall seconds, or simulated seconds."""
    task = make_hartmann6_mf(seed=seed, max_resource=27, sleep_per_unit=0.0 if simulated else sleep)
    algo = MultiFidelity(MultiFidelityConfig(name="asha", scheduler="asha"), BuildContext(task, 100_000, seed))
    loop = Loop(task, algo, budget=Budget(rounds=100_000, cost=cost, workers=workers,
                                          executor="simulated" if simulated else "thread"))
    if simulated:
        result = drive_simulated(loop, workers)
        times = np.array([m["sim_time"] * sleep for m in result.metrics])
    else:
        result = drive_parallel(loop, workers) if workers > 1 else drive(loop)
        times = np.array([m["wall_time"] for m in result.metrics])
    return times, np.array([m.get("simple_regret", np.inf) for m in result.metrics])  # inf: no full-fidelity one yet


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--sleep", type=float, default=0.01, help="seconds per fidelity unit")
    parser.add_argument("--cost", type=float, default=600.0, help="budget in fidelity units")
    args = parser.parse_args()
    print(f"ASHA on hartmann6_mf (max_resource 27), {args.cost:g} units, {args.sleep:g} s per unit, "
          f"{args.workers} workers vs 1, {args.seeds} seeds")
    print("| seed | mode | 1-worker total s | final regret | 1 worker reached it at s | k workers at s | ratio |")
    print("|---|---|---|---|---|---|---|")
    ratios: dict[str, list[float]] = {"wall": [], "simulated": []}
    for seed in range(args.seeds):
        for mode in ("wall", "simulated"):
            t1, r1 = one(seed, 1, args.sleep, args.cost, mode == "simulated")
            tk, rk = one(seed, args.workers, args.sleep, args.cost, mode == "simulated")
            target = r1[-1]
            hit = np.nonzero(rk <= target)[0]
            reach = tk[hit[0]] if hit.size else float("nan")
            first = t1[np.nonzero(r1 <= target)[0][0]]
            ratio = reach / first
            ratios[mode].append(ratio)
            print(f"| {seed} | {mode} | {t1[-1]:.2f} | {target:.4g} | {first:.2f} | {reach:.2f} | {ratio:.3f} |")
    for mode, values in ratios.items():
        v = np.array(values)
        print(f"{mode}: median ratio {np.nanmedian(v):.3f}, max {np.nanmax(v):.3f}, "
              f"reached in {np.isfinite(v).sum()}/{len(v)}")


if __name__ == "__main__":
    main()
