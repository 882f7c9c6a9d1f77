"""How the pending-point rule spends a parallel budget, without waiting: a virtual-time schedule (issue 29).

Every evaluation takes the same (virtual) time and decisions none, so with ``k`` workers each ask after the first
``k`` sees ``k`` trials pending (as in ``runner/workers.py``, which asks the next trial while all ``k`` run) and
the oldest pending trial is told next. This isolates the algorithm's batch behaviour from machine load: the final
regret after ``--evals`` evaluations at workers=1 and workers=k over many seeds, plus the median distance (unit
cube) from each new point to the nearest pending one (how far the rule spreads the batch). ``--variant`` switches
one part off to measure its share: ``refit-every-ask`` (no RefitPacer: hyperparameters refitted as sequentially),
``no-believer`` (TuRBO: independent Thompson draws, the paper's batch rule without conditioning on pending points),
``believer`` (gp_ei: the kriging believer instead of fantasies), ``full-restarts`` (gp_ei: every L-BFGS-B restart
while trials are pending, not half). Run it with ``PYTHONPATH`` at another checkout to measure that revision.

Usage: python scripts/sim_pending.py --problem hartmann6 --algo gp_ei [--workers 1 4] [--seeds 0 1 2 3 4 5 6 7]
       [--variant none|refit-every-ask|no-believer|believer|full-restarts]
"""
from __future__ import annotations

import argparse
import math
import statistics
import sys
import warnings
from pathlib import Path
from typing import Any

sys.path.append(str(Path(__file__).resolve().parents[1]))
from scripts.bench_common import pin_threads

pin_threads()


def simulate(problem: str, algo: str, workers: int, seed: int, evals: int, variant: str) -> tuple[float, float]:
    """(simple regret after ``evals``, median distance of a new point to its nearest pending one) of one run."""
    import torch

    import hpoflow.algorithms.gp_bo as gp_bo
    import hpoflow.algorithms.turbo as turbo
    from hpoflow.api import make_algorithm
    from hpoflow.core.records import Evaluation
    from scripts.bench_parallel import problems

    space, fn, optimum = problems()[problem]
    algorithm: Any = make_algorithm(algo, space, seed=seed, rounds=evals)
    if variant == "refit-every-ask":
        algorithm.pacer.saw = lambda pending: None  # never "concurrent": refits as a sequential run does
    if variant == "believer":
        algorithm.uses_fantasies = False
    believer, restarts = turbo.believer, getattr(gp_bo, "PENDING_RESTARTS", 1.0)
    if variant == "no-believer":
        turbo.believer = lambda model, X_pending: model
    if variant == "full-restarts":
        gp_bo.PENDING_RESTARTS = 1.0
    pending: list[Any] = []
    best, asked, told, distances = math.inf, 0, 0, []
    try:
        while told < evals:
            while asked < evals and len(pending) < workers + (1 if workers > 1 and asked >= workers else 0):
                s = algorithm.ask_pending(asked + 1, list(pending)) if pending else algorithm.ask(asked + 1)
                if pending:
                    P = torch.stack([p.x.reshape(-1).double() for p in pending])
                    distances.append(float(torch.cdist(s.x.reshape(1, -1).double(), P).min()))
                pending.append(s)
                asked += 1
            s = pending.pop(0)
            value = fn(s.config)
            best = min(best, value)
            algorithm.tell(s, Evaluation(value))
            told += 1
    finally:
        turbo.believer = believer
        if hasattr(gp_bo, "PENDING_RESTARTS"):
            gp_bo.PENDING_RESTARTS = restarts
    return best - optimum, statistics.median(distances) if distances else math.nan


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--problem", default="hartmann6", choices=["branin", "hartmann6", "mixed"])
    parser.add_argument("--algo", default="gp_ei")
    parser.add_argument("--workers", nargs="+", type=int, default=[1, 4])
    parser.add_argument("--seeds", nargs="+", type=int, default=list(range(8)))
    parser.add_argument("--evals", type=int, default=32)
    parser.add_argument("--variant", default="none",
                        choices=["none", "refit-every-ask", "no-believer", "believer", "full-restarts"])
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    for workers in args.workers:
        runs = [simulate(args.problem, args.algo, workers, seed, args.evals, args.variant) for seed in args.seeds]
        regrets = [r for r, _ in runs]
        spread = [d for _, d in runs if math.isfinite(d)]
        distance = f"{statistics.mean(spread):.3f}" if spread else "-"
        print(f"{args.problem} {args.algo} workers={workers} variant={args.variant}: regret mean "
              f"{statistics.mean(regrets):.3g} std {statistics.stdev(regrets):.3g} (seeds "
              f"{' '.join(map(str, args.seeds))}: {' '.join(f'{r:.3g}' for r in regrets)}); distance of a new "
              f"point to the nearest pending one (median) {distance}", flush=True)


if __name__ == "__main__":
    main()
