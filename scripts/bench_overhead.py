"""Benchmark: decision time per round of hpoflow's GP-EI vs BoTorch and Optuna, tracking cost, and start-up.

(a) Decision time (ask + tell, i.e. GP update/refit + acquisition maximisation) at n observations,
    median over consecutive rounds so that hpoflow's refit schedule is amortised honestly, next to
    BoTorch's SingleTaskGP + LogExpectedImprovement + optimize_acqf(num_restarts=10, raw_samples=512)
    and Optuna's GPSampler, all measured in this run (peers only when installed: `pip install .[bench]`).
(b) Tracking: a random-search run on Branin with an MLflow SQLite store, in a fresh process per setting (so lazy
    imports are paid as a CLI run pays them): the fixed per-run cost (``start`` + ``finish`` without the metric
    writes: run creation, params, final tags, artifacts, status), the logging path per metric value (buffering
    plus the batched ``log_batch`` flushes, amortised), and MLflow's own ``log_batch`` floor per value (the same
    metrics, pre-built, written straight through ``MlflowClient.log_batch``) measured in the same process.
(c) Start-up: CPU seconds from ``python -m hpoflow ...`` to the first evaluation (the task's ``evaluate`` is
    wrapped to read the process clock), and the whole 1-round run, with tracking off and on.
(d) Sweep (issue 42's definition of a run's fixed tracking cost): CPU seconds of a serial study ``python -m hpoflow
    -m algo=random task=branin seed=range(0,N) budget.rounds=R`` (Hydra's basic launcher, one process) with
    tracking into a SQLite store (its schema made beforehand: a one-off per store) minus the same study with
    ``tracking=off``, divided by N: everything tracking adds per run (its imports, spread over the N runs,
    included). With two values of N (``--sweep-runs 12 24``) the difference splits into a per-process part
    (the intercept: MLflow's imports, the store, the study's parent run) and a per-run part (the slope).

All times are process CPU time of single-threaded processes (the script sets OMP/OPENBLAS/MKL_NUM_THREADS=1);
``--against REV`` measures the hpoflow columns of git revision REV in the same invocation (see bench_common).

Usage: python scripts/bench_overhead.py [--ns 50 200] [--dims 6 20] [--rounds 10] [--track-rounds 200]
       [--parts decision tracking startup sweep] [--sweep-runs 12 24] [--sweep-rounds 20] [--against <git rev>]
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parents[1]))
from scripts.bench_common import ROOT, algorithm_for, child_argv, export_revision, pin_threads, revision_label, run_at

pin_threads()

import numpy as np
import torch

from hpoflow.runner.loop import Budget, run
from hpoflow.tasks.synthetic import make_branin, make_hartmann6, make_styblinski_tang


def clock() -> float:
    """The decision-time clock: process CPU time (single-threaded, so it equals wall time on an idle machine and
    is not inflated by other processes on a shared one)."""
    return time.process_time()


def task_for(dim: int):
    return make_hartmann6() if dim == 6 else make_styblinski_tang(dim=dim)


def initial_data(task, n: int, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    X = torch.rand(n, task.space.dim, generator=g, dtype=torch.float64)
    y = torch.tensor([task.evaluate(task.space.decode(x), round=1).value for x in X], dtype=torch.float64)
    return X, y


def hpoflow_round_times(dim: int, n: int, rounds: int) -> list[float]:
    task = task_for(dim)
    algo = algorithm_for("gp_ei", task, 0, n + rounds)  # at its conf/ defaults, as the CLI builds it
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
    for _ in range(rounds):
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


def tracking_costs(rounds: int, repeats: int, plots: bool) -> dict[str, list[float]]:
    """CPU seconds of the fixed per-run cost and per metric value, per repeat (the first one pays lazy imports)."""
    import inspect

    from mlflow.entities import Metric

    from hpoflow.store.backend import init_store, make_client
    from hpoflow.store.mlflow_tracker import MlflowTracker

    has_plots = "plots" in inspect.signature(MlflowTracker).parameters  # older revisions always plotted
    out: dict[str, list[float]] = {"fixed_s": [], "per_metric_ms": [], "floor_ms": [], "values": []}
    for rep in range(repeats):
        task = make_branin()
        with tempfile.TemporaryDirectory() as tmp:
            uri = f"sqlite:///{Path(tmp) / 'mlflow.db'}"
            init_store(uri)  # schema creation is a one-off per store, not per run
            start = time.process_time()
            tracker = MlflowTracker(uri, "bench", "random", **({"plots": plots} if has_plots else {}))
            tracker.start({"budget": {"rounds": rounds}, "algo": {"name": "random"}}, {"algo": "random"})
            started = time.process_time() - start
            timed = _TimedTracker(tracker)
            result = run(task, algorithm_for("random", task, rep, rounds), timed, Budget(rounds))
            n_values = sum(len(m) for m in result.metrics)
            out["fixed_s"].append(started + timed.finish_seconds)
            out["per_metric_ms"].append(1000 * timed.log_seconds / n_values)
            out["values"].append(n_values)
            # MLflow's floor: the same number of values, pre-built, straight into log_batch (1000 per call)
            client = make_client(uri)
            run_id = client.create_run(client.get_experiment_by_name("bench").experiment_id).info.run_id
            metrics = [Metric(f"m{i % 10}", float(i), 1_700_000_000_000 + i, i // 10) for i in range(n_values)]
            start = time.process_time()
            for i in range(0, n_values, 1000):
                client.log_batch(run_id, metrics=metrics[i:i + 1000])
            out["floor_ms"].append(1000 * (time.process_time() - start) / n_values)
    return out


class _TimedTracker:
    """Wraps a tracker: CPU time of the per-round logging path (buffer + flushes) and of ``finish`` after it."""

    def __init__(self, inner):
        self.inner, self.log_seconds, self.finish_seconds = inner, 0.0, 0.0

    def start(self, *a, **k):
        self.inner.start(*a, **k)

    def log(self, record, metrics):
        t = time.process_time()
        self.inner.log(record, metrics)
        self.log_seconds += time.process_time() - t

    def finish(self, status, summary, error=None):
        t = time.process_time()
        self.inner.flush()
        self.log_seconds += time.process_time() - t
        t = time.process_time()
        self.inner.finish(status, summary, error)
        self.finish_seconds += time.process_time() - t


FIRST_EVAL_PROBE = """
import runpy, sys, time
import hpoflow.tasks.synthetic as syn
original = syn.SyntheticTask.evaluate
def probe(self, *a, **k):
    if not getattr(probe, "done", False):
        probe.done = True
        print(f"FIRST_EVALUATION_CPU {time.process_time():.4f}", file=sys.stderr, flush=True)
    return original(self, *a, **k)
syn.SyntheticTask.evaluate = probe
sys.argv = ["hpoflow", *sys.argv[1:]]
runpy.run_module("hpoflow", run_name="__main__")
"""


def startup_costs(repeats: int) -> dict[str, dict[str, float]]:
    """Min over ``repeats`` of CPU to the first evaluation and of the whole 1-round CLI run, per command."""
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        uri = f"sqlite:///{Path(tmp) / 'mlflow.db'}"
        commands = {"random, tracking off": ["algo=random", "tracking=off"],
                    "random, tracking on": ["algo=random", f"tracking.uri={uri}"],
                    "gp_ei, tracking off": ["algo=gp_ei", "tracking=off"],
                    "gp_ei, tracking on": ["algo=gp_ei", f"tracking.uri={uri}"]}
        env = {**os.environ, "HYDRA_FULL_ERROR": "1"}
        for label, extra in commands.items():
            firsts, totals = [], []
            for rep in range(repeats + 1):  # the first run creates the store's schema: not counted
                before = resource.getrusage(resource.RUSAGE_CHILDREN)
                proc = subprocess.run([sys.executable, "-c", FIRST_EVAL_PROBE, "task=branin", "budget.rounds=1",
                                       "progress=false", "checkpoint_every=0", *extra],
                                      env=env, cwd=tmp, capture_output=True, text=True, check=False)
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                if proc.returncode != 0:
                    raise RuntimeError(f"{label}: {proc.stderr[-2000:]}")
                if rep == 0:
                    continue
                first = [ln for ln in proc.stderr.splitlines() if ln.startswith("FIRST_EVALUATION_CPU")]
                firsts.append(float(first[0].split()[1]))
                totals.append((after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime))
            out[label] = {"first_eval_s": min(firsts), "total_s": min(totals)}
    return out


def sweep_costs(runs: list[int], rounds: int, repeats: int) -> dict[str, list[float]]:
    """CPU seconds of ``python -m hpoflow -m ... seed=range(0,N)`` per N, tracking off and on, per repeat (the
    two modes alternate, so that a neighbour's load falls on both)."""
    from hpoflow.store.backend import init_store

    out: dict[str, list[float]] = {}
    env = {**os.environ, "HYDRA_FULL_ERROR": "1"}
    with tempfile.TemporaryDirectory() as tmp:
        template = Path(tmp) / "template.db"
        init_store(f"sqlite:///{template}")  # the schema, once: every tracked study starts from a copy
        for rep in range(repeats):
            for n in runs:
                for mode in ("off", "on"):
                    folder = Path(tmp) / f"{mode}-{n}-{rep}"
                    folder.mkdir()
                    if mode == "on":  # SQLite's backup: the schema may still sit in the template's WAL file
                        import sqlite3

                        with sqlite3.connect(template) as src, sqlite3.connect(folder / "mlflow.db") as dst:
                            src.backup(dst)
                    tracking = (["tracking=off"] if mode == "off" else
                                [f"tracking.uri=sqlite:///{folder / 'mlflow.db'}"])
                    before = resource.getrusage(resource.RUSAGE_CHILDREN)
                    proc = subprocess.run([sys.executable, "-m", "hpoflow", "-m", "algo=random", "task=branin",
                                           f"seed=range(0,{n})", f"budget.rounds={rounds}", "progress=false",
                                           *tracking], env=env, cwd=folder, capture_output=True, text=True,
                                          check=False)
                    after = resource.getrusage(resource.RUSAGE_CHILDREN)
                    if proc.returncode != 0:
                        raise RuntimeError(f"sweep {mode} N={n}: {proc.stderr[-2000:]}")
                    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
                    out.setdefault(f"{mode},{n}", []).append(cpu)
    return out


def measure(args: argparse.Namespace) -> dict:
    """hpoflow's own numbers for the package on PYTHONPATH (this tree, or a revision's copy)."""
    torch.set_num_threads(1)
    np.random.seed(0)
    out: dict = {}
    if "decision" in args.parts:
        out["decision"] = {f"{d},{n}": hpoflow_round_times(d, n, args.rounds)
                           for d in args.dims for n in args.ns}
    if "tracking" in args.parts:
        out["tracking"] = tracking_costs(args.track_rounds, args.track_repeats, args.plots)
    if "startup" in args.parts:
        out["startup"] = startup_costs(args.startup_repeats)
    if "sweep" in args.parts:
        out["sweep"] = sweep_costs(args.sweep_runs, args.sweep_rounds, args.sweep_repeats)
    return out


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
    parser.add_argument("--ns", type=int, nargs="+", default=[50, 200])
    parser.add_argument("--dims", type=int, nargs="+", default=[6, 20])
    parser.add_argument("--rounds", type=int, default=10, help="consecutive rounds timed per setting")
    parser.add_argument("--parts", nargs="+", default=["decision", "tracking", "startup"],
                        choices=["decision", "tracking", "startup", "sweep"])
    parser.add_argument("--no-peers", action="store_true", help="skip the BoTorch and Optuna columns")
    parser.add_argument("--track-rounds", type=int, default=200)
    parser.add_argument("--track-repeats", type=int, default=3)
    parser.add_argument("--startup-repeats", type=int, default=3)
    parser.add_argument("--sweep-runs", type=int, nargs="+", default=[12], help="runs per study (part sweep)")
    parser.add_argument("--sweep-rounds", type=int, default=20)
    parser.add_argument("--sweep-repeats", type=int, default=3)
    parser.add_argument("--against", default=None, help="also measure this git revision's hpoflow, in a subprocess")
    parser.add_argument("--plots", action="store_true", help=argparse.SUPPRESS)  # child: tracker with plots
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)  # child: print JSON only
    args = parser.parse_args()
    if args.json:
        print(json.dumps(measure(args)))
        return
    child_args = child_argv(sys.argv[1:])
    script = Path(__file__).resolve()
    roots = {"now": ROOT}
    if args.against:
        roots[revision_label(args.against)] = export_revision(args.against)
    print(f"# python scripts/bench_overhead.py {' '.join(sys.argv[1:])}")
    print("# process CPU time of single-threaded processes (OMP/OPENBLAS/MKL_NUM_THREADS=1); a shared machine: "
          "wall time is not quoted")
    results = {label: run_at(root, script, child_args) for label, root in roots.items()}
    if "tracking" in args.parts:
        results["now, tracking.plots=true"] = run_at(ROOT, script, [*child_args, "--parts", "tracking", "--plots"])
    labels = [label for label in roots]  # the revisions (the plots row is a tracking-only extra)

    if "decision" in args.parts:
        torch.set_num_threads(1)
        print(f"\n(a) decision time per round, CPU ms, median (mean) over {args.rounds} consecutive rounds, float64; "
              "ratios of medians (of means)")
        cols = [f"hpoflow gp_ei {label}" for label in labels] + ["BoTorch LogEI", "Optuna GPSampler"]
        cols += ["now/BoTorch", "now/Optuna"] + [f"now/{label}" for label in labels[1:]]
        print("| d | n | " + " | ".join(cols) + " |")
        print("|---|---|" + "---|" * len(cols))
        for dim in args.dims:
            for n in args.ns:
                ours = [results[label]["decision"][f"{dim},{n}"] for label in labels]
                bt = None if args.no_peers else botorch_round_times(dim, n, args.rounds)
                op = None if args.no_peers else optuna_round_times(dim, n, args.rounds)
                cells = [fmt(t) for t in ours] + [fmt(bt), fmt(op), ratio(ours[0], bt), ratio(ours[0], op)]
                cells += [ratio(ours[0], t) for t in ours[1:]]
                print(f"| {dim} | {n} | " + " | ".join(cells) + " |", flush=True)

    if "tracking" in args.parts:
        print(f"\n(b) tracking: {args.track_rounds}-round random search on Branin, MLflow SQLite, one fresh process "
              f"per row, {args.track_repeats} runs each: first run (pays lazy imports, as every CLI run does) / "
              "median of the others")
        print("| revision | fixed per-run cost, s | logging path per metric value, ms | MLflow log_batch floor "
              "per value, ms | values per run |")
        print("|---|---|---|---|---|")
        for label, r in results.items():
            t = r.get("tracking")
            if t is None:
                continue
            cells = [f"{t[key][0]:.{digits}f} / {statistics.median(t[key][1:] or t[key]):.{digits}f}"
                     for key, digits in (("fixed_s", 3), ("per_metric_ms", 4), ("floor_ms", 4))]
            print(f"| {label} | " + " | ".join(cells) + f" | {t['values'][0]:.0f} |")

    if "sweep" in args.parts:
        print(f"\n(d) a serial study of N runs (`python -m hpoflow -m algo=random task=branin seed=range(0,N) "
              f"budget.rounds={args.sweep_rounds}`, basic launcher), CPU s of the whole process, median of "
              f"{args.sweep_repeats}; tracking's cost per run = (on - off) / N")
        print("| revision | N | tracking off, s | tracking on, s | on / off | tracking's cost per run, s |")
        print("|---|---|---|---|---|---|")
        for label in labels:
            sw = results[label]["sweep"]
            for n in args.sweep_runs:
                off, on = statistics.median(sw[f"off,{n}"]), statistics.median(sw[f"on,{n}"])
                print(f"| {label} | {n} | {off:.2f} | {on:.2f} | {on / off:.2f} | {(on - off) / n:.3f} |")
            if len(args.sweep_runs) >= 2:
                (n1, n2) = sorted(args.sweep_runs)[:2]
                d1 = statistics.median(sw[f"on,{n1}"]) - statistics.median(sw[f"off,{n1}"])
                d2 = statistics.median(sw[f"on,{n2}"]) - statistics.median(sw[f"off,{n2}"])
                slope = (d2 - d1) / (n2 - n1)
                print(f"| {label} | split | | | | per process {d1 - slope * n1:.2f} s + per run {slope:.3f} s |")

    if "startup" in args.parts:
        print(f"\n(c) start-up: `python -m hpoflow task=branin budget.rounds=1 ...`, CPU s, min of "
              f"{args.startup_repeats} (after one run that creates the store)")
        print("| command | " + " | ".join(f"{label}: to first evaluation | whole run" for label in labels) + " |")
        print("|---|" + "---|---|" * len(labels))
        for command in results[labels[0]]["startup"]:
            cells = [f"{results[label]['startup'][command]['first_eval_s']:.2f} | "
                     f"{results[label]['startup'][command]['total_s']:.2f}" for label in labels]
            print(f"| {command} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
