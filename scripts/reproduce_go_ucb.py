"""Reproduce the GO-UCB experiments (paper 004, Figures 2-3): cumulative regret of GO-UCB vs GP-UCB,
GP-EI, GP-PI and TuRBO on 20-d synthetic functions and on breast-cancer classifier tuning.

Every run goes through the common loop (``hpoflow.run_config``, tracking off); each finished run is
cached as JSON under ``--out`` so an interrupted reproduction resumes. Regret: synthetic tasks use the
known optimum; for classifier tasks f* is the best accuracy any algorithm reached for that task and
seed (the CV folds depend on the seed, so each seed is its own objective). Table: cumulative regret
at the final round, mean +- 1.96 std / sqrt(seeds) (the paper's Wald bars), over all T rounds and over
Phase II only (rounds n+1..T: the Phase I / initial-design regret is a uniform draw for every method and
dominates f1). One PNG of the curves per task.

Usage: python scripts/reproduce_go_ucb.py [--seeds 5] [--real-rounds 40] [--syn-rounds 64] [--workers 1]
       [--algos go_ucb ...] [--out outputs/go_ucb]
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
import warnings
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
ALGOS = ("go_ucb", "go_ucb_paper", "skopt_gp_ucb", "skopt_gp_ei", "skopt_gp_pi", "gp_ucb", "gp_ei", "gp_pi",
         "turbo", "random")
LABELS = {"go_ucb": "GO-UCB", "go_ucb_paper": "GO-UCB paper", "skopt_gp_ucb": "skopt UCB", "skopt_gp_ei": "skopt EI",
          "skopt_gp_pi": "skopt PI", "gp_ucb": "GP-UCB", "gp_ei": "GP-EI", "gp_pi": "GP-PI", "turbo": "TuRBO",
          "random": "random"}


def tasks(args: argparse.Namespace) -> list[dict]:
    """(key, registry task, task overrides, n_init, rounds) in the order they are run."""
    real = [{"key": f"breast_cancer-{m}", "task": "breast_cancer", "kw": {"model": m}, "n": 5, "T": args.real_rounds}
            for m in ("mlp", "gb", "rf")]
    syn = [{"key": "go_ucb_f1", "task": "go_ucb_f1", "kw": {"dim": 20}, "n": 5, "T": 25}]
    syn2 = [{"key": k, "task": k, "kw": {"dim": 20}, "n": 8, "T": args.syn_rounds} for k in ("styblinski_tang", "rastrigin")]
    order = syn + real[:2] + syn2 + real[2:]
    return [t for t in order if not args.tasks or t["key"] in args.tasks]


def run_one(spec: dict, algo: str, seed: int, out: Path) -> dict:
    path = out / "runs" / f"{spec['key']}__T{spec['T']}__{algo}__s{seed}.json"
    if path.exists():
        return json.loads(path.read_text())
    warnings.filterwarnings("ignore")
    import torch

    torch.set_num_threads(1)
    from hpoflow import app, run_config

    # every algorithm gets the task's n, except the paper's baselines (skopt_gp_*: gp_minimize's 10 random
    # points) and random search (no initial design)
    init = {} if algo == "random" or algo.startswith("skopt_") else {"n_init": spec["n"]}
    surrogate = "skopt_gp" if algo.startswith("skopt_") else "gp"
    raw = {"algo": {"name": algo, **init}, "surrogate": {"name": surrogate},
           "task": {"name": spec["task"], **spec["kw"]}, "hardware": {"name": "cpu", "device": "cpu"},
           "tracking": {"enabled": False}, "budget": {"rounds": spec["T"]}, "seed": seed}
    start = time.perf_counter()
    settings = app.validate(raw)
    result = run_config(settings)
    rec = {"task": spec["key"], "algo": algo, "seed": seed, "wall": time.perf_counter() - start,
           "values": [r.true_value if r.true_value is not None else r.value for r in result.records],
           "decision_time": [m.get("decision_time", math.nan) for m in result.metrics],
           "optimum": None, "algo_config": repr(settings.algo)}
    from hpoflow import registry

    task = registry.get("task", spec["task"]).load()(**spec["kw"], seed=seed) if spec["task"] != "breast_cancer" else None
    if task is not None:
        rec["optimum"], rec["direction"] = task.optimum, task.direction.value
    else:
        rec["direction"] = "maximize"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(rec))
    print(f"  {spec['key']:<22} {algo:<7} seed {seed}  {rec['wall']:6.1f}s", flush=True)
    return rec


def regret_curves(runs: list[dict], skip: int = 0) -> dict[str, list[list[float]]]:
    """Cumulative-regret curve of each run, per algorithm (from round ``skip + 1`` on)."""
    best_per_seed: dict[int, float] = {}
    for r in runs:
        if r["optimum"] is None:
            sign = 1.0 if r["direction"] == "maximize" else -1.0
            b = max(sign * v for v in r["values"])
            best_per_seed[r["seed"]] = max(best_per_seed.get(r["seed"], -math.inf), b)
    curves: dict[str, list[list[float]]] = {}
    for r in runs:
        sign = 1.0 if r["direction"] == "maximize" else -1.0
        f_star = sign * r["optimum"] if r["optimum"] is not None else best_per_seed[r["seed"]]
        cum, total = [], 0.0
        for v in r["values"][skip:]:
            total += abs(f_star - sign * v)
            cum.append(total)
        curves.setdefault(r["algo"], []).append(cum)
    return curves


def mean_ci(xs: list[float]) -> tuple[float, float]:
    n = len(xs)
    m = sum(xs) / n
    sd = math.sqrt(sum((x - m) ** 2 for x in xs) / (n - 1)) if n > 1 else 0.0
    return m, 1.96 * sd / math.sqrt(n)


def figure(key: str, curves: dict[str, list[list[float]]], out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    fig, ax = plt.subplots(figsize=(5, 3.5))
    for algo in ALGOS:
        if algo not in curves:
            continue
        c = np.array(curves[algo])
        m = c.mean(0)
        h = 1.96 * c.std(0, ddof=1) / np.sqrt(len(c)) if len(c) > 1 else np.zeros_like(m)
        t = np.arange(1, len(m) + 1)
        ax.plot(t, m, label=LABELS[algo])
        ax.fill_between(t, m - h, m + h, alpha=0.2)
    ax.set_xlabel("round"), ax.set_ylabel("cumulative regret"), ax.set_title(key), ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out / f"{key}.png", dpi=120)
    plt.close(fig)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--seeds", type=int, default=5)
    p.add_argument("--f1-seeds", type=int, default=5)
    p.add_argument("--syn-seeds", type=int, default=5, help="seeds of styblinski_tang and rastrigin")
    p.add_argument("--rf-seeds", type=int, default=5, help="random forest is the slowest objective")
    p.add_argument("--real-rounds", type=int, default=40)
    p.add_argument("--syn-rounds", type=int, default=64)
    p.add_argument("--workers", type=int, default=1, help="1: run in this process, one run after another")
    p.add_argument("--algos", nargs="*", default=None, help="run only these (the table needs all five cached)")
    p.add_argument("--tasks", nargs="*", default=None)
    p.add_argument("--out", type=Path, default=Path("outputs/go_ucb"))
    p.add_argument("--report-only", action="store_true", help="tabulate cached runs (seeds all algorithms finished)")
    args = p.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    specs = tasks(args)
    start = time.perf_counter()
    n_seeds = {"go_ucb_f1": args.f1_seeds, "breast_cancer-rf": args.rf_seeds, "styblinski_tang": args.syn_seeds,
               "rastrigin": args.syn_seeds}
    jobs = [(s, a, seed) for s in specs for seed in range(n_seeds.get(s["key"], args.seeds)) for a in ALGOS
            if not args.algos or a in args.algos]
    if args.report_only:  # tabulate the cached runs; keep the seeds every algorithm finished
        cached = [json.loads(f.read_text()) for f in sorted((args.out / "runs").glob("*.json"))]
        runs = []
        for spec in specs:
            sel = [r for r in cached if r["task"] == spec["key"] and len(r["values"]) == spec["T"]]
            full = [sd for sd in {r["seed"] for r in sel} if all(any(r["seed"] == sd and r["algo"] == a for r in sel)
                                                                  for a in ALGOS)]
            runs += [r for r in sel if r["seed"] in full]
        specs = [s for s in specs if any(r["task"] == s["key"] for r in runs)]
    elif args.workers == 1:
        runs = [run_one(s, a, seed, args.out) for s, a, seed in jobs]
    else:
        with ProcessPoolExecutor(args.workers) as pool:
            runs = list(pool.map(run_one, *zip(*[(s, a, seed, args.out) for s, a, seed in jobs])))
    if args.algos and not args.report_only:
        print(f"ran {len(runs)} runs of {', '.join(args.algos)} in {time.perf_counter() - start:.0f}s; "
              "tabulate with --report-only once all algorithms are cached")
        return
    print(f"\nGO-UCB reproduction: {len(runs)} runs, {sum(r['wall'] for r in runs):.0f}s of run wall time "
          f"(seeds {args.seeds}, go_ucb_f1 seeds {args.f1_seeds}, "
          f"breast_cancer-rf seeds {args.rf_seeds})")
    print("cumulative regret at the final round, mean ± 1.96 std/sqrt(S) over S seeds; lower is better; "
          "n: Phase I / initial design, T: total rounds (incl. n)\n")
    header = f"{'task':<22}{'n':>3}{'T':>4}{'S':>3}  " + "".join(f"{LABELS[a]:>17}" for a in ALGOS) + "   best"
    print(header)
    print("-" * len(header))
    for phase2 in (False, True):
        if phase2:
            print("\nPhase II only: cumulative regret over rounds n+1..T (the same table without the initial design)\n")
            print(header)
            print("-" * len(header))
        for spec in specs:
            sel = [r for r in runs if r["task"] == spec["key"]]
            curves = regret_curves(sel, skip=spec["n"] if phase2 else 0)
            if not phase2:
                figure(spec["key"], curves, args.out)
            seeds = sorted({r["seed"] for r in sel})
            stats = {a: mean_ci([c[-1] for c in curves[a]]) for a in ALGOS if a in curves}
            cells = "".join(f"{stats[a][0]:>9.3g} ± {stats[a][1]:<5.2g}" for a in ALGOS)
            print(f"{spec['key']:<22}{spec['n']:>3}{spec['T']:>4}{len(seeds):>3}  {cells}   "
                  f"{LABELS[min(stats, key=lambda a: stats[a][0])]}")
    dts = {a: [d for r in runs if r["algo"] == a and r["task"] == "go_ucb_f1" for d in r["decision_time"][5:]] for a in ALGOS}
    print("\nmean decision time per Phase-II round on go_ucb_f1 (d=20), seconds: "
          + ", ".join(f"{LABELS[a]} {sum(v) / len(v):.2f}" for a, v in dts.items() if v))
    print(f"figures: {args.out}/<task>.png")


if __name__ == "__main__":
    sys.exit(main())
