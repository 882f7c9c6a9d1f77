"""Parallel evaluations inside one run (issue 29): wall time to N evaluations and final regret, workers 1/2/4/8.

Problems: Branin (2-d), Hartmann-6 and a 6-d mixed space (2 reals, a log-scale real, 2 integers, a categorical;
known optimum 0). The objective sleeps ``--sleep`` seconds before returning (1 s in the issue: an evaluation that
costs far more than a decision), so the worker threads overlap the sleeps while the main thread decides.
Algorithms: gp_ei, turbo, random, optuna_tpe through ``hpoflow.minimize(..., workers=k)`` (threads, tracking off),
and Optuna's own ``study.optimize(n_jobs=4)`` with its TPESampler on the same objective in the same invocation.
Regret is the simple regret ``best value - optimum`` after N evaluations; "decision" is the mean ask + tell time
a trial (the loop's ``decision_time``), which runs in the main thread one trial at a time and so bounds the speed-up
(wall >= N x decision). Each (problem, algorithm, workers) runs for every seed (the worker counts
interleaved seed by seed, so that a change in the machine's load during the invocation does not bias the
ratios); the table gives the mean wall time, its ratio to workers=1, and the regret's mean and
standard deviation over seeds. A warm-up run first takes the one-time imports out of the timings.

Usage: python scripts/bench_parallel.py [--problems branin hartmann6 mixed] [--algos gp_ei turbo random optuna_tpe]
       [--workers 1 2 4 8] [--seeds 0 1 2] [--evals 32] [--sleep 1.0] [--json out.json] [--paced-refits]
"""
from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
import warnings
from pathlib import Path
from typing import Any

sys.path.append(str(Path(__file__).resolve().parents[1]))
from scripts.bench_common import pin_threads

pin_threads()


def mixed_value(c: dict[str, Any]) -> float:
    """A 6-d mixed objective with minimum 0 at x=0.3, y=-0.5, lr=1e-3, layers=5, width=12, act='gelu'."""
    return ((c["x"] - 0.3) ** 2 + (c["y"] + 0.5) ** 2 + (math.log10(c["lr"]) + 3.0) ** 2 / 4.0
            + ((c["layers"] - 5) / 10.0) ** 2 + ((c["width"] - 12) / 20.0) ** 2
            + {"relu": 0.3, "gelu": 0.0, "tanh": 0.6}[c["act"]])


MIXED_SPACE = {"x": ("float", -1.0, 1.0), "y": ("float", -1.0, 1.0), "lr": ("log", 1e-5, 1e-1),
               "layers": ("int", 1, 10), "width": ("int", 1, 40), "act": ["relu", "gelu", "tanh"]}


def problems() -> dict[str, tuple[Any, Any, float]]:
    """name -> (space, noise-free value function, optimum)."""
    from hpoflow.tasks.synthetic import make_branin, make_hartmann6

    out: dict[str, tuple[Any, Any, float]] = {}
    for name, make in (("branin", make_branin), ("hartmann6", make_hartmann6)):
        task = make()
        out[name] = (task.space, lambda c, task=task: task.evaluate(c, round=1).value, float(task.optimum))
    out["mixed"] = (MIXED_SPACE, mixed_value, 0.0)
    return out


def sleeping(fn: Any, seconds: float) -> Any:
    def objective(config: dict[str, Any]) -> float:
        time.sleep(seconds)
        return fn(config)

    return objective


def run_hpoflow(space: Any, fn: Any, optimum: float, algo: str, workers: int, seed: int, evals: int,
                sleep: float) -> tuple[float, float, float]:
    """(wall seconds, simple regret, mean decision seconds a trial) of one hpoflow run. Decisions (ask + tell)
    run one at a time in the main thread: with ``workers`` evaluations of ``sleep`` s overlapping, the run
    cannot go faster than ``evals x decision``."""
    import hpoflow

    start = time.perf_counter()
    result = hpoflow.minimize(sleeping(fn, sleep), space, algo=algo, rounds=evals, seed=seed, workers=workers,
                              optimum=optimum)
    wall = time.perf_counter() - start
    return wall, result.best_value - optimum, statistics.mean(r.metrics["decision_time"] for r in result.records)


def run_optuna_n_jobs(space: Any, fn: Any, optimum: float, workers: int, seed: int, evals: int,
                      sleep: float) -> tuple[float, float, float]:
    """(wall seconds, simple regret) of Optuna's own study.optimize(n_jobs=workers) with TPESampler(seed)."""
    import optuna

    from hpoflow.core.space import Categorical, Float, parse_space

    params = parse_space(space).parameters
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    objective_fn = sleeping(fn, sleep)

    def objective(trial: optuna.Trial) -> float:
        config = {}
        for p in params:
            if isinstance(p, Float):
                config[p.name] = trial.suggest_float(p.name, p.low, p.high, log=p.log)
            elif isinstance(p, Categorical):
                config[p.name] = trial.suggest_categorical(p.name, list(p.choices))
            else:
                config[p.name] = trial.suggest_int(p.name, p.low, p.high, log=p.log)
        return objective_fn(config)

    start = time.perf_counter()
    study = optuna.create_study(sampler=optuna.samplers.TPESampler(seed=seed))
    study.optimize(objective, n_trials=evals, n_jobs=workers)
    return time.perf_counter() - start, study.best_value - optimum, math.nan  # its decisions run in its threads


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--problems", nargs="+", default=["branin", "hartmann6", "mixed"])
    parser.add_argument("--algos", nargs="+", default=["gp_ei", "turbo", "random", "optuna_tpe"])
    parser.add_argument("--workers", nargs="+", type=int, default=[1, 2, 4, 8])
    parser.add_argument("--optuna-jobs", type=int, default=4, help="n_jobs of Optuna's own study.optimize (0: skip)")
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2, 3, 4])
    parser.add_argument("--evals", type=int, default=32)
    parser.add_argument("--sleep", type=float, default=1.0, help="seconds each evaluation sleeps")
    parser.add_argument("--json", help="write every run's (wall, regret) here")
    parser.add_argument("--paced-refits", action="store_true",
                        help="GP-BO refits once per k results while trials are pending (gp_bo.PACED_REFITS; A/B)")
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    if args.paced_refits:
        import hpoflow.algorithms.gp_bo as gp_bo

        gp_bo.PACED_REFITS = True
    probs = problems()
    for algo in args.algos:  # warm-up: imports, and each algorithm's config composed once (then shared)
        run_hpoflow(*probs["branin"], algo, 2, 0, 2, 0.0)
    rows: dict[tuple[str, str, int], list[tuple[float, ...]]] = {}
    for problem in args.problems:
        space, fn, optimum = probs[problem]
        for algo in args.algos:
            for seed in args.seeds:  # workers interleaved per seed: a change of machine load hits every ratio alike
                for workers in args.workers:
                    rows.setdefault((problem, algo, workers), []).append(
                        run_hpoflow(space, fn, optimum, algo, workers, seed, args.evals, args.sleep))
            for workers in args.workers:
                print(f"  {problem} {algo} w{workers}: {rows[problem, algo, workers]}", file=sys.stderr, flush=True)
        if args.optuna_jobs:
            key = (problem, f"optuna n_jobs={args.optuna_jobs}", args.optuna_jobs)
            rows[key] = [run_optuna_n_jobs(space, fn, optimum, args.optuna_jobs, seed, args.evals, args.sleep)
                         for seed in args.seeds]
    if args.json:
        Path(args.json).write_text(json.dumps({"|".join(map(str, k)): v for k, v in rows.items()}, indent=1))
    print_table(rows, args)


def _stats(runs: list[tuple[float, ...]]) -> tuple[float, float, float]:
    walls, regrets = [run[0] for run in runs], [run[1] for run in runs]
    spread = statistics.stdev(regrets) if len(regrets) > 1 else 0.0
    return statistics.mean(walls), statistics.mean(regrets), spread


def _decision(runs: list[tuple[float, ...]]) -> str:
    values = [run[2] for run in runs if len(run) > 2 and math.isfinite(run[2])]
    return f"{statistics.mean(values):.2f}" if values else "-"


def print_table(rows: dict[tuple[str, str, int], list[tuple[float, ...]]], args: argparse.Namespace) -> None:
    print(f"\n{args.evals} evaluations, objective sleeping {args.sleep} s, seeds {args.seeds}, thread workers\n")
    print("| problem | algorithm | workers | wall (s) | wall / workers=1 | decision (s/trial) | regret mean | "
          "regret std |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for (problem, algo, workers), runs in rows.items():
        wall, regret, spread = _stats(runs)
        base = rows.get((problem, algo, 1))
        ratio = f"{wall / _stats(base)[0]:.2f}" if base else "-"
        print(f"| {problem} | {algo} | {workers} | {wall:.1f} | {ratio} | {_decision(runs)} | {regret:.4g} | "
              f"{spread:.3g} |")
    print("\nTargets (issue 29):")
    for problem in args.problems:
        for algo in args.algos:
            one, four = rows.get((problem, algo, 1)), rows.get((problem, algo, 4))
            if one and four:
                (w1, r1, s1), (w4, r4, s4) = _stats(one), _stats(four)
                print(f"  {problem} {algo}: workers=4 wall {w4 / w1:.2f}x of workers=1 (target <= 0.30: "
                      f"{'met' if w4 / w1 <= 0.3 else 'MISSED'}); regret {r4:.4g} vs {r1:.4g}, worse by "
                      f"{max(0.0, r4 - r1):.3g} (seed spread {max(s1, s4):.3g}: "
                      f"{'met' if r4 - r1 <= max(s1, s4) else 'MISSED'})")
        gp, rnd = rows.get((problem, "gp_ei", 4)), rows.get((problem, "random", 4))
        if gp and rnd:
            print(f"  {problem}: GP-EI(4) regret {_stats(gp)[1]:.4g} vs random(4) {_stats(rnd)[1]:.4g} "
                  f"({'met' if _stats(gp)[1] < _stats(rnd)[1] else 'MISSED'})")


if __name__ == "__main__":
    main()
