"""How the pending-point rule spends a parallel budget, without waiting: a virtual-time schedule (issue 29).

Every evaluation takes the same (virtual) time and decisions none, so with ``k`` workers each ask after the first
``k`` sees ``k`` trials pending (as in ``runner/workers.py``, which asks the next trial while all ``k`` run) and
the oldest pending trial is told next. This isolates the algorithm's batch behaviour from machine load: the final
regret after ``--evals`` evaluations at workers=1 and workers=k over many seeds, plus the median distance (unit
cube) from each new point to the nearest pending one (how far the rule spreads the batch). ``--variant`` switches
one part off to measure its share: ``refit-every-ask`` (TuRBO without its RefitPacer: a GP fitted from scratch on
every ask, as sequentially), ``paced-refits`` (GP-BO: hyperparameters refitted once per k tells by the RefitPacer
instead of the surrogate's own schedule), ``no-believer`` (TuRBO: independent Thompson draws, the paper's batch rule
without conditioning on pending points), ``believer`` (gp_ei: the kriging believer instead of fantasies),
``full-restarts`` (gp_ei: every L-BFGS-B restart while trials are pending, not half), ``batch-counters`` (TuRBO: the
paper's batch rule for the region's counters, one success/failure per k tells, failure tolerance
ceil(max(4/k, d/k))), ``fresh-counters`` (TuRBO: a result of a trial asked under another region length does not
count), ``oracle-believer`` (TuRBO: the GP is told the pending points' true values instead of its mean: what is
left of the loss with no information lag in the model). Run it with ``PYTHONPATH`` at another checkout to measure
that revision.

Usage: python scripts/sim_pending.py --problem hartmann6 --algo gp_ei [--workers 1 4] [--seeds 0 1 2 3 4 5 6 7]
       [--variant none|refit-every-ask|paced-refits|no-believer|believer|full-restarts|batch-counters|
       fresh-counters|oracle-believer]
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

VARIANTS = ["none", "refit-every-ask", "paced-refits", "no-believer", "believer", "full-restarts", "batch-counters",
            "fresh-counters", "oracle-believer"]


def _turbo_counters(algorithm: Any, variant: str, workers: int) -> None:
    """Switch TuRBO's region counters to ``batch-counters`` or ``fresh-counters`` (see the module docstring)."""
    tell, flags = algorithm.tell, []

    def batched(improved: bool, update: Any) -> None:
        flags.append(improved)
        if len(flags) >= workers:
            algorithm.tr.failure_tolerance = math.ceil(max(4 / workers, algorithm.dim / workers))
            update(any(flags))
            flags.clear()

    def counted_tell(s: Any, outcome: Any) -> None:
        tr, update = algorithm.tr, algorithm.tr.update
        stale = s.info.get("tr_length", tr.length) != tr.length or s.info.get("restarts", 0) != algorithm.restarts
        if variant == "fresh-counters" and stale and len(algorithm.y) >= algorithm.n_init:
            tr.update = lambda improved: None
        elif variant == "batch-counters" and workers > 1:
            tr.update = lambda improved: batched(improved, update)
        try:
            tell(s, outcome)
        finally:
            tr.__dict__.pop("update", None)

    algorithm.tell = counted_tell


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
    if variant in ("batch-counters", "fresh-counters"):
        _turbo_counters(algorithm, variant, workers)
    believer, restarts = turbo.believer, getattr(gp_bo, "PENDING_RESTARTS", 1.0)
    paced = getattr(gp_bo, "PACED_REFITS", True)
    if variant == "no-believer":
        turbo.believer = lambda model, X_pending: model
    if variant == "oracle-believer":
        turbo.believer = lambda model, X_pending: _told_truth(model, X_pending, algorithm.task.space, fn,
                                                               algorithm.sign)
    if variant == "full-restarts":
        gp_bo.PENDING_RESTARTS = 1.0
    if variant == "paced-refits":
        gp_bo.PACED_REFITS = True
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
        if hasattr(gp_bo, "PACED_REFITS"):
            gp_bo.PACED_REFITS = paced
    return best - optimum, statistics.median(distances) if distances else math.nan


def _told_truth(model: Any, X_pending: Any, space: Any, fn: Any, sign: float) -> Any:
    """A copy of ``model`` extended by the pending points' true rewards (an oracle: no information lag)."""
    import copy

    import torch

    told = copy.copy(model)
    for x in X_pending:
        told.extend(x.to(model.dtype), torch.tensor(sign * fn(space.decode(x)), dtype=model.dtype))
    return told


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--problem", default="hartmann6", choices=["branin", "hartmann6", "mixed"])
    parser.add_argument("--algo", default="gp_ei")
    parser.add_argument("--workers", nargs="+", type=int, default=[1, 4])
    parser.add_argument("--seeds", nargs="+", type=int, default=list(range(8)))
    parser.add_argument("--evals", type=int, default=32)
    parser.add_argument("--variant", default="none", choices=VARIANTS)
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
