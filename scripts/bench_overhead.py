"""Benchmark: decision time per round of hpoflow's GP-EI vs BoTorch and Optuna, and tracking overhead.

(a) Decision time (ask + tell, i.e. GP update/refit + acquisition maximisation) at n observations,
    median over consecutive rounds so that hpoflow's refit schedule is amortised honestly, next to
    BoTorch's SingleTaskGP + LogExpectedImprovement + optimize_acqf(num_restarts=10, raw_samples=512)
    and Optuna's GPSampler, all measured in this run (peers only when installed: `pip install .[bench]`).
(b) Tracking overhead: the same random-search run on Branin with tracking off and on.

Usage: python scripts/bench_overhead.py [--ns 50 100 200] [--dims 6 20] [--rounds 5] [--track-rounds 200]
"""
from __future__ import annotations

import argparse
import statistics
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import torch

from hpoflow.algorithms.base import BuildContext
from hpoflow.algorithms.configs import GPBOConfig, RandomConfig
from hpoflow.algorithms.gp_bo import GPEI
from hpoflow.algorithms.random_search import RandomSearch
from hpoflow.loop import Budget, run
from hpoflow.surrogates.configs import GPConfig
from hpoflow.surrogates.gp import ExactGP
from hpoflow.tasks.synthetic import make_branin, make_hartmann6, make_styblinski_tang


def clock() -> float:
    """The decision-time clock: process CPU time by default (single-threaded, so it equals wall time on an idle
    machine and is not inflated by other processes on a shared one); ``--clock wall`` for perf_counter."""
    return CLOCK()


CLOCK = time.process_time


def task_for(dim: int):
    return make_hartmann6() if dim == 6 else make_styblinski_tang(dim=dim)


def initial_data(task, n: int, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    X = torch.rand(n, task.space.dim, generator=g, dtype=torch.float64)
    y = torch.tensor([task.evaluate(task.space.decode(x), round=1).value for x in X], dtype=torch.float64)
    return X, y


def hpoflow_round_times(dim: int, n: int, rounds: int, gp_config: GPConfig) -> list[float]:
    task = task_for(dim)
    ctx = BuildContext(task=task, rounds=n + rounds, seed=0, surrogate=lambda d: ExactGP(d, gp_config))
    algo = GPEI(GPBOConfig(), ctx)
    X, y = initial_data(task, n)
    algo.X, algo.y = list(X), (task.direction.sign * y).tolist()
    algo.model.fit(X, torch.tensor(algo.y, dtype=torch.float64))
    times = []
    for r in range(rounds):
        start = clock()
        s = algo.ask(n + r)
        asked = clock()
        ev = task.evaluate(s.config, round=n + r)  # the objective's own time is not decision time
        told = clock()
        algo.tell(s, ev)
        times.append((asked - start) + (clock() - told))
    return times


def botorch_round_times(dim: int, n: int, rounds: int) -> list[float] | None:
    try:
        from botorch.acquisition import LogExpectedImprovement
        from botorch.fit import fit_gpytorch_mll
        from botorch.models import SingleTaskGP
        from botorch.models.transforms import Standardize
        from botorch.optim import optimize_acqf
        from gpytorch.mlls import ExactMarginalLogLikelihood
    except ImportError:
        return None
    task = task_for(dim)
    X, y = initial_data(task, n)
    Y = (task.direction.sign * y).unsqueeze(-1)
    bounds = torch.stack([torch.zeros(dim, dtype=torch.float64), torch.ones(dim, dtype=torch.float64)])
    times = []
    for r in range(rounds):
        start = clock()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = SingleTaskGP(X, Y, outcome_transform=Standardize(m=1))
            fit_gpytorch_mll(ExactMarginalLogLikelihood(model.likelihood, model))
            acqf = LogExpectedImprovement(model, best_f=Y.max())
            cand, _ = optimize_acqf(acqf, bounds=bounds, q=1, num_restarts=10, raw_samples=512)
        times.append(clock() - start)
        x = cand[0]
        v = task.evaluate(task.space.decode(x), round=1).value
        X, Y = torch.cat([X, x[None]]), torch.cat([Y, torch.tensor([[task.direction.sign * v]], dtype=torch.float64)])
    return times


def optuna_round_times(dim: int, n: int, rounds: int) -> list[float] | None:
    try:
        import optuna
    except ImportError:
        return None
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    task = task_for(dim)
    X, y = initial_data(task, n)
    dists = {name: optuna.distributions.FloatDistribution(0.0, 1.0) for name in (f"u{i}" for i in range(dim))}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        study = optuna.create_study(direction=task.direction.value, sampler=optuna.samplers.GPSampler(seed=0))
        study.add_trials([optuna.trial.create_trial(params={f"u{i}": float(v) for i, v in enumerate(x)},
                                                    distributions=dists, value=float(val))
                          for x, val in zip(X, y)])
        times = []
        for _ in range(rounds):
            start = clock()
            trial = study.ask(dists)
            times.append(clock() - start)
            u = torch.tensor([trial.params[f"u{i}"] for i in range(dim)], dtype=torch.float64)
            study.tell(trial, task.evaluate(task.space.decode(u), round=1).value)
    return times


def tracking_overhead(rounds: int, repeats: int = 3) -> dict[str, float]:
    from hpoflow.tracking.mlflow_tracker import MlflowTracker
    from hpoflow.tracking.store import init_store

    off, on, log_only = [], [], []
    for rep in range(repeats):
        task = make_branin()
        start = time.perf_counter()
        run(task, RandomSearch(RandomConfig(), BuildContext(task=task, rounds=rounds, seed=rep)), None, Budget(rounds))
        off.append(time.perf_counter() - start)
        with tempfile.TemporaryDirectory() as tmp:
            uri = f"sqlite:///{Path(tmp) / 'mlflow.db'}"
            init_store(uri)  # schema creation is a one-off per store, not per run
            tracker = MlflowTracker(uri, "bench", "random")
            tracker.start({"budget": {"rounds": rounds}}, {"algo": "random"})
            timed = _TimedTracker(tracker)
            start = time.perf_counter()
            result = run(task, RandomSearch(RandomConfig(), BuildContext(task=task, rounds=rounds, seed=rep)),
                         timed, Budget(rounds))
            on.append(time.perf_counter() - start)
            n_values = sum(len(m) for m in result.metrics)
            log_only.append(timed.log_seconds / n_values)
    return {"off_s": statistics.median(off), "on_s": statistics.median(on),
            "per_metric_ms": 1000 * statistics.median(log_only)}


class _TimedTracker:
    """Wraps a tracker to time the per-round logging path (buffering and batched flushes)."""

    def __init__(self, inner):
        self.inner, self.log_seconds = inner, 0.0

    def start(self, *a, **k):
        self.inner.start(*a, **k)

    def log(self, record, metrics):
        t = time.perf_counter()
        self.inner.log(record, metrics)
        self.log_seconds += time.perf_counter() - t

    def finish(self, status, summary, error=None):
        t = time.perf_counter()
        self.inner.flush()
        self.log_seconds += time.perf_counter() - t
        self.inner.finish(status, summary, error)


def fmt(times: list[float] | None) -> str:
    """Median (mean) in ms: the mean includes the occasional refit, i.e. the amortised cost."""
    if times is None:
        return "n/a (not installed)"
    return f"{1000 * statistics.median(times):.0f} ({1000 * statistics.mean(times):.0f})"


def ratio(ours: list[float], theirs: list[float] | None) -> str:
    if not theirs:
        return "n/a"
    return (f"{statistics.median(ours) / statistics.median(theirs):.2f} "
            f"({statistics.mean(ours) / statistics.mean(theirs):.2f})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ns", type=int, nargs="+", default=[50, 100, 200])
    parser.add_argument("--dims", type=int, nargs="+", default=[6, 20])
    parser.add_argument("--rounds", type=int, default=10, help="consecutive rounds timed per setting")
    parser.add_argument("--track-rounds", type=int, default=200)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--clock", choices=("cpu", "wall"), default="cpu",
                        help="decision time as process CPU time (default; robust on a shared machine) or wall time")
    args = parser.parse_args()
    global CLOCK
    CLOCK = time.process_time if args.clock == "cpu" else time.perf_counter
    torch.set_num_threads(args.threads)
    np.random.seed(0)

    print(f"(a) decision time per round ({args.clock} clock), median (mean) ms over {args.rounds} consecutive rounds, "
          f"float64, {args.threads} thread(s); ratios: of medians (of means)")
    print("| d | n | hpoflow gp_ei (auto refit) | hpoflow gp_ei (refit every round) | BoTorch LogEI | "
          "Optuna GPSampler | hpoflow/BoTorch | hpoflow/Optuna |")
    print("|---|---|---|---|---|---|---|---|")
    for dim in args.dims:
        for n in args.ns:
            auto = hpoflow_round_times(dim, n, args.rounds, GPConfig())
            every = hpoflow_round_times(dim, n, args.rounds, GPConfig(refit_every=1))
            bt = botorch_round_times(dim, n, args.rounds)
            op = optuna_round_times(dim, n, args.rounds)
            ratio_bt = ratio(auto, bt)
            ratio_op = ratio(auto, op)
            print(f"| {dim} | {n} | {fmt(auto)} | {fmt(every)} | {fmt(bt)} | {fmt(op)} | {ratio_bt} | {ratio_op} |",
                  flush=True)

    res = tracking_overhead(args.track_rounds)
    print(f"\n(b) tracking: {args.track_rounds}-round random search on Branin, median of 3")
    print(f"tracking off: {res['off_s']:.3f} s   on (MLflow SQLite, batched): {res['on_s']:.3f} s   "
          f"ratio on/off: {res['on_s'] / res['off_s']:.1f}x")
    print(f"logging path per metric value (buffer + batched log_batch flushes, amortised): "
          f"{res['per_metric_ms']:.4f} ms")
    print(f"fixed per-run cost (artifacts, plot, status) ≈ {res['on_s'] - res['off_s']:.2f} s")


if __name__ == "__main__":
    main()
