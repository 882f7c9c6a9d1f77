"""hpoflow's GP methods next to BoTorch (LogEI, UCB) and Optuna (GPSampler, TPE), measured in one invocation.

Problems: Branin (T=30), Hartmann-6 (T=50), Styblinski-Tang-20 (T=64, 8 initial points); the same
initial-design size for every method. Prints final simple and cumulative regret (mean ± 1.96·std/√n over
seeds), wall and process-CPU seconds per run. BoTorch and Optuna are the `bench` extra (`pip install -e .[bench]`),
never runtime dependencies; a missing one is reported as n/a.

Usage: python scripts/bench_peers.py [--seeds 5] [--problems branin hartmann6 st20] [--methods ...]
"""
from __future__ import annotations

import argparse
import math
import statistics
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

import hpoflow
from hpoflow.tasks.synthetic import SyntheticTask, make_branin, make_hartmann6, make_styblinski_tang


@dataclass(frozen=True)
class Problem:
    name: str
    make: Callable[[], SyntheticTask]
    rounds: int
    n_init: int


PROBLEMS = {
    "branin": Problem("Branin", make_branin, 30, 5),
    "hartmann6": Problem("Hartmann-6", make_hartmann6, 50, 7),
    "st20": Problem("Styblinski-Tang-20", lambda: make_styblinski_tang(dim=20), 64, 8),
}


def _truth(task: SyntheticTask, u: torch.Tensor) -> float:
    return task.evaluate(task.space.decode(u), round=1).true_value


def hpoflow_method(name: str, **surrogate: Any) -> Callable[[Problem, int], list[float]]:
    """``name`` built through the library (``hpoflow.make_algorithm`` on the task), the GP at ``surrogate``."""
    def go(p: Problem, seed: int) -> list[float]:
        task = p.make()
        algo = hpoflow.make_algorithm(name, task, seed, rounds=p.rounds, n_init=p.n_init,
                                      surrogate={"name": "gp", **surrogate})
        res = hpoflow.run(task, algo, None, hpoflow.Budget(p.rounds))
        return [r.true_value for r in res.records]
    return go


def botorch_method(kind: str) -> Callable[[Problem, int], list[float]]:
    def go(p: Problem, seed: int) -> list[float]:
        from botorch.acquisition import LogExpectedImprovement, UpperConfidenceBound
        from botorch.fit import fit_gpytorch_mll
        from botorch.models import SingleTaskGP
        from botorch.models.transforms import Standardize
        from botorch.optim import optimize_acqf
        from gpytorch.mlls import ExactMarginalLogLikelihood

        task = p.make()
        d, sign = task.space.dim, task.direction.sign
        X = torch.quasirandom.SobolEngine(d, scramble=True, seed=seed).draw(p.n_init, dtype=torch.float64)
        values = [_truth(task, x) for x in X]
        bounds = torch.stack([torch.zeros(d, dtype=torch.float64), torch.ones(d, dtype=torch.float64)])
        while len(values) < p.rounds:
            Y = sign * torch.tensor(values, dtype=torch.float64).unsqueeze(-1)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model = SingleTaskGP(X, Y, outcome_transform=Standardize(m=1))
                fit_gpytorch_mll(ExactMarginalLogLikelihood(model.likelihood, model))
                acqf = (LogExpectedImprovement(model, best_f=Y.max()) if kind == "logei"
                        else UpperConfidenceBound(model, beta=2.0))
                cand, _ = optimize_acqf(acqf, bounds=bounds, q=1, num_restarts=10, raw_samples=512)
            X = torch.cat([X, cand])
            values.append(_truth(task, cand[0]))
        return values
    return go


def optuna_method(kind: str) -> Callable[[Problem, int], list[float]]:
    def go(p: Problem, seed: int) -> list[float]:
        import optuna

        optuna.logging.set_verbosity(optuna.logging.WARNING)
        task = p.make()
        sampler = (optuna.samplers.GPSampler(seed=seed, n_startup_trials=p.n_init) if kind == "gp"
                   else optuna.samplers.TPESampler(seed=seed, n_startup_trials=p.n_init))
        study = optuna.create_study(direction=task.direction.value, sampler=sampler)
        values: list[float] = []

        def objective(trial) -> float:
            u = torch.tensor([trial.suggest_float(f"u{i}", 0.0, 1.0) for i in range(task.space.dim)],
                             dtype=torch.float64)
            values.append(_truth(task, u))
            return values[-1]

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            study.optimize(objective, n_trials=p.rounds)
        return values
    return go


METHODS: dict[str, Callable[[Problem, int], list[float]]] = {
    "hpoflow gp_ei": hpoflow_method("gp_ei"),
    "hpoflow gp_ucb": hpoflow_method("gp_ucb"),
    "hpoflow gp_ei (refit every round)": hpoflow_method("gp_ei", refit_every=1),
    "BoTorch LogEI": botorch_method("logei"),
    "BoTorch UCB(beta=2)": botorch_method("ucb"),
    "Optuna GPSampler": optuna_method("gp"),
    "Optuna TPE": optuna_method("tpe"),
}


def ci(xs: list[float]) -> str:
    a = np.asarray(xs, dtype=float)
    half = 1.96 * a.std(ddof=1) / math.sqrt(a.size) if a.size > 1 else 0.0
    return f"{a.mean():.4g} ± {half:.2g}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--problems", nargs="+", default=list(PROBLEMS), choices=list(PROBLEMS))
    parser.add_argument("--methods", nargs="+", default=list(METHODS), choices=list(METHODS))
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    for key in args.problems:
        p = PROBLEMS[key]
        f_star = p.make().optimum
        print(f"\n### {p.name}: T={p.rounds}, {p.n_init} initial points, {args.seeds} seeds, f*={f_star:.6g}\n")
        print("| method | final simple regret | final cumulative regret | wall s / run | CPU s / run |")
        print("|---|---|---|---|---|")
        for name in args.methods:
            simple, cumulative, wall, cpu = [], [], [], []
            try:
                for seed in range(args.seeds):
                    start, cpu_start = time.perf_counter(), time.process_time()
                    values = METHODS[name](p, seed)
                    wall.append(time.perf_counter() - start)
                    cpu.append(time.process_time() - cpu_start)
                    regrets = [abs(f_star - v) for v in values]
                    simple.append(min(regrets))
                    cumulative.append(sum(regrets))
            except ImportError as exc:
                print(f"| {name} | n/a ({exc.name} not installed) | | | |")
                continue
            print(f"| {name} | {ci(simple)} | {ci(cumulative)} | {statistics.median(wall):.2f} | "
                  f"{statistics.median(cpu):.2f} |", flush=True)


if __name__ == "__main__":
    main()
