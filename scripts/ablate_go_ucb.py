"""Ablation of GO-UCB's design choices against random search and the GP baselines (issue 19).

Tasks: breast_cancer with rf / mlp / gb (n = 5, T = 30) and go_ucb_f1 (d = 20, n = 5, T = 25), 5 seeds.
Every run goes through the common loop (``hpoflow.run_config``, tracking off) and is cached as JSON
under ``--out``, so several processes (``--only``) can share the work and an interrupted ablation resumes.
Regret: f1 against its optimum 26; breast_cancer against the best CV accuracy any cached run found for
that task and seed (the folds depend on the seed). Columns: cumulative regret over all T rounds, mean ±
1.96 sd / sqrt(S); ``bnd``: share of queried float hyperparameters on a bound of their range;
``rep``: the longest run of one configuration queried in a row while it was not the best seen.

Usage: python scripts/ablate_go_ucb.py [--only NAME ...] [--tasks KEY ...] [--seeds 5] [--report-only]
"""
from __future__ import annotations

import argparse
import json
import math
import os
import time
import warnings
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")

# name -> (registry algorithm, algo overrides). Order = table order.
VARIANTS: dict[str, tuple[str, dict]] = {
    "random": ("random", {}),
    "gp_pi": ("gp_pi", {}),
    "gp_ei": ("gp_ei", {}),
    # session 3's default: iqr outputs, clip_low 3, a fixed 0.4 box around the best point, no repeats
    "go_ucb_s3": (
        "go_ucb",
        {"outputs": "iqr", "clip_low": 3.0, "trust_region": 0.4, "shrink_after": 0, "interior": 0.0},
    ),
    # ... with TuRBO's rule on the box: halve it after k non-improving Phase II queries in a row, double on success
    "go_ucb_s3_shrink1": ("go_ucb", {"trust_region": 0.4, "shrink_after": 1, "interior": 0.0}),
    "go_ucb_s3_shrink2": ("go_ucb", {"trust_region": 0.4, "shrink_after": 2, "interior": 0.0}),
    "go_ucb_s3_shrink3": ("go_ucb", {"trust_region": 0.4, "shrink_after": 3, "interior": 0.0}),
    # ... and Step 5 kept off the cube's faces by a margin
    "go_ucb_s3_shrink2_interior01": (
        "go_ucb",
        {"trust_region": 0.4, "shrink_after": 2, "interior": 0.01},
    ),  # = s4's default
    # ... and w_0 refitted on all data every Phase II round (warm-started), the default since session 5: with the
    # oracle's full refit_iterations, stopped once the loss stalls (the default), at most 100 steps, every 3 rounds
    "go_ucb_refit1": ("go_ucb", {"refit_every": 1, "advanced": {"refit_stall": 0.0}}),
    "go_ucb_refit1_stall": ("go_ucb", {"refit_every": 1}),  # = default
    "go_ucb_refit1_it100": ("go_ucb", {"refit_every": 1, "advanced": {"refit_iterations": 100}}),
    "go_ucb_refit3": ("go_ucb", {"refit_every": 3}),
    "go_ucb_s3_shrink2_interior03": ("go_ucb", {"trust_region": 0.4, "shrink_after": 2, "interior": 0.03}),
    "go_ucb_s3_interior03": ("go_ucb", {"trust_region": 0.4, "shrink_after": 0, "interior": 0.03}),
    "go_ucb_mad_outputs": ("go_ucb", {"outputs": "mad", "shrink_after": 0, "interior": 0.0}),
    # the default before issue 19 (standardised outputs, Step 5 over the whole cube, repeats allowed)
    "go_ucb_v0_old_default": (
        "go_ucb",
        {
            "outputs": "standard",
            "clip_low": 0.0,
            "trust_region": 1.0,
            "shrink_after": 0,
            "interior": 0.0,
            "avoid_repeats": False,
            "model": {"tol": 0.0},
        },
    ),
    "go_ucb_paper": ("go_ucb", {"preset": "paper"}),
    # session 3's first-built default (MAD scaling, fixed box) with one design choice undone
    "go_ucb_no_trust_region": ("go_ucb", {"outputs": "mad", "trust_region": 1.0, "shrink_after": 0, "interior": 0.0}),
    "go_ucb_standard_outputs": ("go_ucb", {"outputs": "standard", "clip_low": 0.0, "shrink_after": 0, "interior": 0.0}),
    "go_ucb_repeats_allowed": (
        "go_ucb",
        {"outputs": "mad", "avoid_repeats": False, "shrink_after": 0, "interior": 0.0},
    ),
}
# the go_ucb rows measured before session 5 ran without the refit (the default then): they keep it off
for _name, (_algo, _overrides) in VARIANTS.items():
    if _algo == "go_ucb" and "refit" not in _name and "preset" not in _overrides:
        _overrides.setdefault("refit_every", "never")
TASKS = {
    "bc-rf": ("breast_cancer", {"model": "rf"}, 5, 30),
    "bc-mlp": ("breast_cancer", {"model": "mlp"}, 5, 30),
    "bc-gb": ("breast_cancer", {"model": "gb"}, 5, 30),
    "f1": ("go_ucb_f1", {"dim": 20}, 5, 25),
}
F1_OPTIMUM = 26.0


def run_one(variant: str, algo: str, overrides: dict, key: str, seed: int, out: Path) -> None:
    """Run one (variant, task, seed) through the loop and cache values, configs and encoded points."""
    path = out / f"{variant}__{key}__{seed}.json"
    lock = path.with_suffix(".lock")
    if path.exists():
        return
    try:
        fd = os.open(lock, os.O_CREAT | os.O_EXCL)
    except FileExistsError:
        return  # another process runs it
    os.close(fd)
    try:
        import torch

        torch.set_num_threads(1)
        from hpoflow import run_config
        try:
            from hpoflow.config import settings as app
        except ImportError:  # a revision from before the layer folders (--against)
            from hpoflow import app  # type: ignore[no-redef]

        task, tkw, n, T = TASKS[key]
        init = {} if algo == "random" else {"n_init": n}
        overrides = dict(overrides)
        network = overrides.pop("model", {})  # GO-UCB's network: the nn surrogate's settings
        surrogate = {"name": "nn", **network} if algo.startswith("go_ucb") else {"name": "gp"}
        raw = {"algo": {"name": algo, **init, **overrides}, "surrogate": surrogate,
               "task": {"name": task, **tkw}, "hardware": {"name": "cpu", "device": "cpu"},
               "tracking": {"enabled": False}, "budget": {"rounds": T}, "seed": seed}
        settings = app.validate(raw)
        cpu, wall = time.process_time(), time.perf_counter()
        result = run_config(settings)
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        space = app.build_task(settings).space
        floats = [p.name for p in space.parameters if type(p).__name__ == "Float"]
        on_bound = []
        for r in result.records:
            u = space.encode(r.config)
            names = [p.name for p in space.parameters]
            on_bound += [float(u[names.index(f)] <= 1e-6 or u[names.index(f)] >= 1 - 1e-6) for f in floats]
        rec = {"variant": variant, "algo": algo, "overrides": overrides, "task": key, "seed": seed,
               "values": [r.true_value if r.true_value is not None else r.value for r in result.records],
               "configs": [json.dumps(r.config, sort_keys=True, default=str) for r in result.records],
               "on_bound": on_bound, "cpu": cpu, "wall": wall,
               "decision_time": [m.get("decision_time", math.nan) for m in result.metrics]}
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(rec))
        tmp.rename(path)
        print(f"  {variant:<24} {key:<7} seed {seed}  cpu {cpu:6.1f}s wall {wall:6.1f}s", flush=True)
    finally:
        lock.unlink(missing_ok=True)


def longest_repeat(configs: list[str], values: list[float]) -> int:
    """Longest run of one configuration queried in a row while it is not the best value seen so far."""
    best, run, longest, prev = -math.inf, 0, 0, None
    for c, v in zip(configs, values):
        run = run + 1 if c == prev else 1
        prev = c
        if v < best:  # not the best seen (ties with the best are the best)
            longest = max(longest, run)
        best = max(best, v)
    return longest


def mean_ci(xs: list[float]) -> tuple[float, float]:
    n = len(xs)
    m = sum(xs) / n
    sd = math.sqrt(sum((x - m) ** 2 for x in xs) / (n - 1)) if n > 1 else 0.0
    return m, 1.96 * sd / math.sqrt(n)


def report(out: Path, variants: dict, keys: list[str], seeds: int) -> None:
    runs = [json.loads(f.read_text()) for f in sorted(out.glob("*.json"))]
    runs = [r for r in runs if r["seed"] < seeds]
    best: dict[tuple[str, int], float] = {}
    for r in runs:
        k = (r["task"], r["seed"])
        best[k] = max(best.get(k, -math.inf), max(r["values"]))
    print(f"GO-UCB ablation: cumulative regret over all rounds, mean ± 1.96 sd/sqrt(S) (S seeds of {seeds}); "
          "bnd: % of queried float hyperparameters on a bound; rep: longest repeat of a non-best configuration")
    head = f"{'variant':<30}" + "".join(f"{k + f' (n={TASKS[k][2]}, T={TASKS[k][3]})':>32}" for k in keys)
    print(head)
    print("-" * len(head))
    for name in variants:
        cells = []
        for key in keys:
            sel = [r for r in runs if r["variant"] == name and r["task"] == key]
            if not sel:
                cells.append(f"{'-':>32}")
                continue
            ref = [F1_OPTIMUM if key == "f1" else best[(key, r["seed"])] for r in sel]
            cum = [sum(f - v for v in r["values"]) for r, f in zip(sel, ref)]
            m, h = mean_ci(cum)
            bnd = [b for r in sel for b in r["on_bound"]]
            rep = max(longest_repeat(r["configs"], r["values"]) for r in sel)
            frac = f"{100 * sum(bnd) / len(bnd):3.0f}%" if bnd else "  - "
            cells.append(f"{f'{m:.3g} ± {h:.2g}':>16} S{len(sel)} {frac} rep{rep:<2}")
        print(f"{name:<30}" + "".join(f"{c:>32}" for c in cells))
    if "f1" in keys:
        print("\nf1: Phase II cumulative regret (rounds n+1..T) per seed 0, 1, ...")
        for name in variants:
            sel = sorted((r for r in runs if r["variant"] == name and r["task"] == "f1"), key=lambda r: r["seed"])
            if sel:
                n = TASKS["f1"][2]
                print(f"{name:<30}" + " / ".join(f"{sum(F1_OPTIMUM - v for v in r['values'][n:]):.3g}" for r in sel))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--only", nargs="*", default=None, help="run only these variants")
    p.add_argument("--tasks", nargs="*", default=list(TASKS))
    p.add_argument("--seeds", type=int, default=5)
    p.add_argument("--variants", default=None, help="JSON {name: [algo, overrides]} added to the built-in ones")
    p.add_argument("--out", type=Path, default=Path("/tmp/go_ucb_ablation"))
    p.add_argument("--report-only", action="store_true")
    args = p.parse_args()
    variants = dict(VARIANTS)
    if args.variants:
        variants.update({k: (a, kw) for k, (a, kw) in json.loads(args.variants).items()})
    args.out.mkdir(parents=True, exist_ok=True)
    warnings.filterwarnings("ignore")
    if not args.report_only:
        names = args.only or list(variants)
        for seed in range(args.seeds):
            for key in args.tasks:
                for name in names:
                    algo, kw = variants[name]
                    run_one(name, algo, kw, key, seed, args.out)
    shown = {k: v for k, v in variants.items() if any(args.out.glob(f"{k}__*.json"))}
    report(args.out, shown, [k for k in TASKS if k in args.tasks], args.seeds)


if __name__ == "__main__":
    main()
