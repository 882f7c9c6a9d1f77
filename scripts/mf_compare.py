"""Multi-fidelity methods against full-fidelity random search on the synthetic multi-fidelity tasks, in process
(no store): anytime simple regret at fractions of a cost budget, and the cost each method needs to reach random
search's final quality. What ``algo=auto``'s multi-fidelity branch was chosen from.

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 python scripts/mf_compare.py --seeds 5
"""
from __future__ import annotations

import argparse
import os
import sys
import time

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(var, "1")
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import numpy as np
from scipy.stats import rankdata, wilcoxon

from hpoflow.algorithms.base import BuildContext
from hpoflow.algorithms.multi_fidelity import MultiFidelity
from hpoflow.algorithms.multi_fidelity_config import MultiFidelityConfig
from hpoflow.algorithms.random_search import RandomConfig, RandomSearch
from hpoflow.core.budget import Budget
from hpoflow.runner.loop import run
from hpoflow.surrogates.gp import ExactGP
from hpoflow.tasks.multi_fidelity import make_branin_mf, make_hartmann6_mf

TASKS = {"branin_mf": make_branin_mf, "hartmann6_mf": make_hartmann6_mf}


def real_task(benchmark: str):
    """A real training task with its fidelity on (the settings scripts/record_curves.py records)."""
    sys.path.insert(0, os.path.dirname(__file__))
    from record_curves import make_task

    return lambda seed=0: make_task(benchmark, seed)
FRACTIONS = (0.125, 0.25, 0.5, 1.0)


def build(method: str, task, seed: int):
    ctx = BuildContext(task, rounds=100_000, seed=seed, surrogate=lambda d: ExactGP(d))
    if method == "random":
        return RandomSearch(RandomConfig(), ctx)
    if method not in ("sha", "hyperband", "asha", "mf_gp", "asha_gp"):  # a peer: its registry entry
        sys.path.insert(0, os.path.dirname(__file__))
        from mf_replay_bench import entry

        e = entry(method)
        return e.load()(e.make_config(), ctx)
    scheduler, searcher = {"sha": ("sha", "random"), "hyperband": ("hyperband", "random"),
                           "asha": ("asha", "random"), "mf_gp": ("hyperband", "gp"),
                           "asha_gp": ("asha", "gp")}[method]
    return MultiFidelity(MultiFidelityConfig(name=method, scheduler=scheduler, searcher=searcher), ctx)


def trajectory(method: str, task_name: str, seed: int, budget: float) -> tuple[np.ndarray, np.ndarray, float]:
    """(cumulative cost, simple regret) per round, and the CPU time. A task without a known optimum (the real
    ones): the best value so far, signed so that smaller is better, in place of the regret."""
    task = TASKS[task_name](seed=seed)
    start = time.process_time()
    result = run(task, build(method, task, seed), budget=Budget(rounds=100_000, cost=budget))
    cost = np.array([m["query_cost"] for m in result.metrics])
    if task.optimum is not None:
        regret = np.array([m["simple_regret"] for m in result.metrics])
    else:
        regret = np.array([-task.direction.sign * m.get("best_value", np.nan) for m in result.metrics])
    return cost, regret, time.process_time() - start


def at(cost: np.ndarray, regret: np.ndarray, c: float) -> float:
    i = np.searchsorted(cost, c, side="right") - 1
    return float(regret[i]) if i >= 0 else float("inf")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--full-evals", type=int, default=30, help="budget = this many full-fidelity evaluations")
    parser.add_argument("--methods", default="random,sha,hyperband,asha,mf_gp")
    parser.add_argument("--real", default="", help="real training tasks instead of the synthetic ones, e.g. "
                        "breast_cancer_gb,breast_cancer_mlp (scripts/record_curves.py's names); the table then "
                        "shows the best value so far (negated accuracy: smaller is better), not a regret")
    args = parser.parse_args()
    if args.real:
        TASKS.clear()
        TASKS.update({name: real_task(name) for name in args.real.split(",")})
    methods = args.methods.split(",")
    rows: dict[tuple[str, str, int], tuple[np.ndarray, np.ndarray, float]] = {}
    for task_name, make in TASKS.items():
        budget = args.full_evals * make().fidelity.max
        for seed in range(args.seeds):
            for m in methods:
                rows[task_name, m, seed] = trajectory(m, task_name, seed, budget)
    print(f"budget: {args.full_evals} full-fidelity evaluations per task; {args.seeds} seeds")
    for frac in FRACTIONS:
        what = "best value so far (smaller is better)" if args.real else "simple regret"
        print(f"\n## {what} at {frac:g} of the budget (mean over seeds), and mean rank over task x seed blocks")
        blocks = []
        print("| task | " + " | ".join(methods) + " |")
        print("|---|" + "---|" * len(methods))
        for task_name, make in TASKS.items():
            budget = args.full_evals * make().fidelity.max
            vals = np.array([[at(*rows[task_name, m, s][:2], frac * budget) for m in methods]
                             for s in range(args.seeds)])
            blocks.extend(vals)
            print(f"| {task_name} | " + " | ".join(f"{v:.4g}" for v in vals.mean(0)) + " |")
        ranks = np.array([rankdata(b) for b in blocks]).mean(0)
        print("| mean rank | " + " | ".join(f"{r:.2f}" for r in ranks) + " |")
    print("\n## cost to reach random search's final value (same task and seed), as a share of its budget")
    for m in methods:
        shares = []
        for task_name, make in TASKS.items():
            budget = args.full_evals * make().fidelity.max
            for s in range(args.seeds):
                target = rows[task_name, "random", s][1][-1]
                cost, regret, _ = rows[task_name, m, s]
                hit = np.nonzero(regret <= target)[0]
                shares.append(cost[hit[0]] / budget if hit.size else float("nan"))
        shares_arr = np.array(shares)
        reached = np.isfinite(shares_arr)
        print(f"{m}: reached in {reached.sum()}/{len(shares)} runs; median share "
              f"{np.nanmedian(shares_arr) if reached.any() else float('nan'):.3f}; "
              f"CPU s per run {np.mean([rows[k][2] for k in rows if k[1] == m]):.2f}")
    final = {m: [rows[t, m, s][1][-1] for t in TASKS for s in range(args.seeds)] for m in methods}
    print("\n## final value, paired two-sided Wilcoxon: the last method against each other")
    ref = methods[-1]
    for m in methods[:-1]:
        diff = np.array(final[ref]) - np.array(final[m])
        p = wilcoxon(final[ref], final[m]).pvalue if np.any(diff != 0) else 1.0
        print(f"{ref} vs {m}: better in {(diff < 0).sum()}, worse in {(diff > 0).sum()}, p = {p:.3g}")


if __name__ == "__main__":
    main()
