"""Multi-fidelity methods compared on recorded learning curves (``task=lc_replay``) in simulated time: ``k``
asynchronous workers replayed exactly (``budget.executor=simulated``), so a 1,000-run comparison takes minutes.

For each benchmark x method x seed: one run with a budget of ``--full`` full-fidelity evaluations in fidelity units.
Normalised regret = (best value so far - the set's best final value) / (the set's worst - best final value),
read at fractions of the budget (compute) and of the simulated wall time the slowest method needed; ranks per
(benchmark, seed) block; Friedman, then the best mean rank against each other method by two-sided Wilcoxon with
Holm's correction (scipy, statsmodels).

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 python scripts/mf_replay_bench.py --seeds 40 --jobs 2
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from multiprocessing import get_context
from pathlib import Path
from typing import Any

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(var, "1")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402

FRACTIONS = (0.125, 0.25, 0.5, 1.0)
OURS = ("random", "sha", "hyperband", "asha", "mf_gp")
PEERS = ("optuna_tpe_hyperband", "smac_hyperband", "dehb", "raytune_asha")


def entry(name: str) -> Any:
    """The algorithm's registry entry, from the config modules themselves (no Hydra)."""
    from hpoflow.algorithms.configs import BUILTINS as A
    from hpoflow.algorithms.freeze_thaw_config import BUILTINS as D
    from hpoflow.algorithms.multi_fidelity_config import BUILTINS as B
    from hpoflow.algorithms.peers.mf_config import BUILTINS as C

    return next(e for e in (*A, *B, *C, *D) if e.name == name)


def available(name: str) -> bool:
    return entry(name).missing() is None


def one(job: tuple[str, str, int, int, int]) -> dict[str, Any]:
    """One run: per round the cumulative cost, simulated time and best value so far."""
    from hpoflow.algorithms.base import BuildContext
    from hpoflow.core.budget import Budget
    from hpoflow.runner.loop import Loop
    from hpoflow.runner.simulated import drive_simulated
    from hpoflow.surrogates.gp import ExactGP
    from hpoflow.tasks.replay import ReplayTask

    bench, method, seed, workers, full = job
    task = ReplayTask(bench, seed)
    e = entry(method)
    ctx = BuildContext(task, rounds=1_000_000, seed=seed, surrogate=lambda d: ExactGP(d), workers=workers,
                       cost=float(full * task.fidelity.max))
    algo = e.load()(e.make_config(), ctx)
    start = time.process_time()
    loop = Loop(task, algo, budget=Budget(rounds=1_000_000, cost=float(full * task.fidelity.max), workers=workers,
                                          executor="simulated"))
    result = drive_simulated(loop, workers)
    sign = task.direction.sign
    best = np.maximum.accumulate([sign * (r.value if r.value is not None else -sign * np.inf)
                                  for r in result.records]) * sign
    finals = np.array([c[-1] for c in task.curves])
    span = float(finals.max() - finals.min())
    regret = np.abs(best - task.optimum) / span
    return {"bench": bench, "method": method, "seed": seed, "cpu": time.process_time() - start,
            "cost": np.array([m["query_cost"] for m in result.metrics]) / (full * task.fidelity.max),
            "time": np.array([m["sim_time"] for m in result.metrics]), "regret": regret}


def at(x: np.ndarray, y: np.ndarray, point: float) -> float:
    i = np.searchsorted(x, point, side="right") - 1
    return float(y[i]) if i >= 0 else 1.0


def table(runs: list[dict[str, Any]], methods: list[str], axis: str, scale: dict[str, float]) -> list[str]:
    from scipy.stats import friedmanchisquare, rankdata, wilcoxon
    from statsmodels.stats.multitest import multipletests

    blocks = sorted({(r["bench"], r["seed"]) for r in runs})
    index = {(r["bench"], r["seed"], r["method"]): r for r in runs}
    lines = [f"| fraction of {axis} | " + " | ".join(methods) + " | Friedman p | best vs each (Wilcoxon-Holm p) |",
             "|---|" + "---|" * (len(methods) + 2)]
    for frac in FRACTIONS:
        values = np.array([[at(index[b[0], b[1], m][axis], index[b[0], b[1], m]["regret"], frac * scale[b[0]])
                            for m in methods] for b in blocks])
        ranks = np.array([rankdata(v) for v in values]).mean(0)
        best = int(np.argmin(ranks))
        p_f = friedmanchisquare(*values.T).pvalue if len(methods) > 2 else float("nan")
        others = [j for j in range(len(methods)) if j != best]
        raw = [wilcoxon(values[:, best], values[:, j]).pvalue if np.any(values[:, best] != values[:, j]) else 1.0
               for j in others]
        holm = multipletests(raw, method="holm")[1]
        vs = ", ".join(f"{methods[j]} {p:.2g}" for j, p in zip(others, holm))
        lines.append(f"| {frac:g} | " + " | ".join(f"{r:.2f} ({values[:, j].mean():.3f})" for j, r in
                                                    enumerate(ranks)) + f" | {p_f:.2g} | {methods[best]}: {vs} |")
    return lines


def main() -> None:
    from hpoflow.tasks.replay import benchmarks

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--benchmarks", default=",".join(benchmarks()))
    parser.add_argument("--methods", default=",".join(OURS + PEERS), help="unavailable peers are left out")
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--workers", type=int, default=4, help="simulated workers")
    parser.add_argument("--full", type=int, default=30, help="budget: this many full-fidelity evaluations")
    parser.add_argument("--jobs", type=int, default=2, help="processes")
    args = parser.parse_args()
    methods = [m for m in args.methods.split(",") if available(m)]
    skipped = [m for m in args.methods.split(",") if m not in methods]
    jobs = [(b, m, s, args.workers, args.full) for b in args.benchmarks.split(",") for m in methods
            for s in range(args.seeds)]
    start = time.perf_counter()
    with get_context("spawn").Pool(args.jobs) as pool:
        runs = pool.map(one, jobs, chunksize=1)
    wall = time.perf_counter() - start
    print(f"{len(runs)} runs ({len(args.benchmarks.split(','))} benchmarks x {len(methods)} methods x {args.seeds} "
          f"seeds, {args.workers} simulated workers, budget {args.full} full evaluations) in {wall:.0f} s wall "
          f"with {args.jobs} processes; left out (not installed): {', '.join(skipped) or 'none'}")
    print("CPU s per run: " + ", ".join(f"{m} {np.mean([r['cpu'] for r in runs if r['method'] == m]):.2f}"
                                        for m in methods))
    print("\nmean rank (mean normalised regret) per block of (benchmark, seed); 1 = best")
    print("\n".join(table(runs, methods, "cost", {b: 1.0 for b in args.benchmarks.split(",")})))
    slowest = {b: max(r["time"][-1] for r in runs if r["bench"] == b) for b in args.benchmarks.split(",")}
    print("\nthe same against simulated wall time (fractions of the slowest run's time on that benchmark)")
    print("\n".join(table(runs, methods, "time", slowest)))


if __name__ == "__main__":
    main()
