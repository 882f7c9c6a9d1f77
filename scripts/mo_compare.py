"""Several objectives and constraints, in process (no store): our methods against the peers, the evidence of issue 40.

Table 1: final hypervolume regret after ``--rounds`` evaluations on ZDT1, ZDT2, DTLZ2 (d = 6), breast_cancer gb
and wine gb (accuracy vs model size, 3 folds) of parego (ours), optuna_nsga2 (population 10: Optuna's 50 would make
the whole budget its random first generation), optuna_motpe, botorch_qnehvi and random search. Objectives are
normalised to the box [ideal, reference] (ideal: (0, 0) for ZDT/DTLZ2; the best value of each objective any method
found, per seed, for the classifiers); regret = the true front's normalised hypervolume (ZDT/DTLZ2) or that of the
best front of all methods' points of that seed (classifiers) minus the run's. Mean ranks within each (task, seed)
block, and parego against each method: wins/ties/losses and two-sided Wilcoxon signed-rank p, Holm-corrected.

Table 2: task=gramacy (constrained, unconstrained optimum infeasible): gp_ei (our constrained GP-EI) and random
search (its best feasible point), ``--rounds`` evaluations: final best feasible value, feasible in every seed.

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 nice python scripts/mo_compare.py run --part mo
    ... run --part constrained ; ... run --part qnehvi --out results/mo_compare_qnehvi.jsonl
    ... run --part qnehvi --tasks breast_cancer_gb --out results/mo_compare_qnehvi_clf.jsonl
    python scripts/mo_compare.py table

``run`` appends one JSON line per run to ``--out`` (a run already there is skipped); ``table`` reads it and
``--extra`` (the qNEHVI files).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
import warnings
from typing import Any

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(var, "1")
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import numpy as np

RESULTS = os.path.join(os.path.dirname(__file__), "..", "results")
MO_TASKS = ("zdt1", "zdt2", "dtlz2", "breast_cancer_gb", "wine_gb")
CLASSIFIERS = ("breast_cancer_gb", "wine_gb")  # <dataset>_<model>: accuracy vs model size, 3 folds
MO_METHODS = ("parego", "optuna_nsga2", "optuna_motpe", "botorch_qnehvi", "random")
SETTINGS: dict[str, dict[str, Any]] = {"optuna_nsga2": {"population_size": 10}}
QNEHVI_WINE_SEEDS = 1  # botorch_qnehvi on wine_gb: one seed measured (~6 CPU-min a run), the rest not affordable


def make_task(name: str, seed: int) -> Any:
    if name in CLASSIFIERS:
        from hpoflow.tasks.sklearn_hpo import ClassifierTask

        dataset, model = name.rsplit("_", 1)
        return ClassifierTask(dataset, model, folds=3, seed=seed, objectives="accuracy+size")
    if name == "gramacy":
        from hpoflow.tasks.constrained import make_gramacy

        return make_gramacy()
    from hpoflow.tasks.multi_objective import make_multi_objective

    return make_multi_objective(name, dim=6)


def make_algo(method: str, task: Any, seed: int, rounds: int) -> Any:
    from hpoflow.algorithms.base import BuildContext
    from hpoflow.algorithms.configs import BUILTINS as A
    from hpoflow.algorithms.parego_config import BUILTINS as B
    from hpoflow.algorithms.peers.mo_config import BUILTINS as C
    from hpoflow.surrogates.gp import ExactGP

    e = next(e for e in (*A, *B, *C) if e.name == method)
    ctx = BuildContext(task, rounds=rounds, seed=seed, surrogate=lambda d: ExactGP(d))
    return e.load()(e.make_config(**SETTINGS.get(method, {})), ctx)


def one(task_name: str, method: str, seed: int, rounds: int) -> dict[str, Any]:
    """One run: every evaluated point's objectives (minimisation form), feasibility, best feasible per round."""
    from hpoflow.core.budget import Budget
    from hpoflow.runner.loop import run

    task = make_task(task_name, seed)
    start = time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = run(task, make_algo(method, task, seed, rounds), budget=Budget(rounds=rounds))
    spec = task.objectives
    points = [list(spec.minimised(r.values)) for r in result.records if r.values and not r.failed]
    feasible = [bool(spec.feasible(r.values)) for r in result.records if r.values and not r.failed]
    return {"task": task_name, "method": method, "seed": seed, "rounds": rounds, "points": points,
            "feasible": feasible, "best_feasible": [m.get("best_feasible") for m in result.metrics],
            "cpu_s": time.process_time() - start, "reference": list(spec.reference_minimised() or []),
            "constraints": [{n: r.values[n] for n in spec.constraints} for r in result.records
                            if r.values and not r.failed] if spec.constraints else []}


def fit_noise(seeds: int, repeats: int = 5) -> list[dict[str, Any]]:
    """The same configurations evaluated ``repeats`` times: fit_s varies (wall-clock), accuracy and size do not."""
    import torch

    task = make_task("breast_cancer_gb", 0)
    rows = []
    for k in range(seeds):
        u = torch.rand(task.space.dim, generator=torch.Generator().manual_seed(k), dtype=torch.float64)
        config = task.space.decode(u)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            evs = [task.evaluate(config, round=1).values for _ in range(repeats)]
        rows.append({"task": "fit_noise", "seed": k, "method": "repeat", "fit_s": [e["fit_s"] for e in evs],
                     "accuracy": [e["accuracy"] for e in evs], "size": [e["size"] for e in evs]})
    return rows


def cmd_run(args: argparse.Namespace) -> None:
    if args.part == "noise":
        with open(args.out, "a") as f:
            for row in fit_noise(args.seeds):
                f.write(json.dumps(row) + "\n")
        return
    if args.part == "constrained":
        jobs = [("gramacy", m, s) for s in range(args.seeds) for m in ("gp_ei", "random")]
    else:
        methods = ("botorch_qnehvi",) if args.part == "qnehvi" else tuple(m for m in MO_METHODS
                                                                         if m != "botorch_qnehvi")
        jobs = [(t, m, s) for t in args.tasks.split(",") for s in range(args.seeds) for m in methods]
    done = {(r["task"], r["method"], r["seed"]) for r in load(args.out)}
    for t, m, s in jobs:
        if (t, m, s) in done:
            continue
        row = one(t, m, s, args.rounds)
        if not os.path.exists(args.out):  # the results/ convention: a header naming the command
            with open(args.out, "w") as f:
                f.write(f"# Regenerate: OMP_NUM_THREADS=1 nice python scripts/mo_compare.py run --part {args.part} "
                        f"--out results/{os.path.basename(args.out)}\n")
        with open(args.out, "a") as f:
            f.write(json.dumps(row) + "\n")
        print(f"{t} {m} seed {s}: {row['cpu_s']:.1f} CPU s", flush=True)


def load(path: str) -> list[dict[str, Any]]:
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip() and not line.startswith("#")]


def normalised_hv(points: np.ndarray, ideal: np.ndarray, ref: np.ndarray) -> float:
    from hpoflow.core.objectives import hypervolume

    if len(points) == 0:
        return 0.0
    return hypervolume(((points - ideal) / (ref - ideal)).tolist(), [1.0, 1.0])


def regrets(rows: list[dict[str, Any]]) -> dict[tuple[str, int], dict[str, float]]:
    """{(task, seed): {method: final normalised hypervolume regret}}."""
    from hpoflow.tasks.multi_objective import MAX_HYPERVOLUME

    out: dict[tuple[str, int], dict[str, float]] = {}
    blocks: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for r in rows:
        if r["task"] in MO_TASKS:
            blocks.setdefault((r["task"], r["seed"]), []).append(r)
    for (task, seed), runs in blocks.items():
        ref = np.array(runs[0]["reference"])
        feas = {r["method"]: np.array([p for p, ok in zip(r["points"], r["feasible"]) if ok]) for r in runs}
        if task in MAX_HYPERVOLUME:
            ideal = np.zeros(2)
            best = MAX_HYPERVOLUME[task] / float(np.prod(ref - ideal))
        else:
            everything = np.concatenate([p for p in feas.values() if len(p)])
            ideal = everything.min(axis=0)
            best = normalised_hv(everything, ideal, ref)
        out[(task, seed)] = {m: best - normalised_hv(p, ideal, ref) for m, p in feas.items()}
    return out


def holm(pvalues: list[float]) -> list[float]:
    order = np.argsort(pvalues)
    adjusted, running = [0.0] * len(pvalues), 0.0
    for k, i in enumerate(order):
        running = max(running, min(1.0, (len(pvalues) - k) * pvalues[i]))
        adjusted[i] = running
    return adjusted


def section(reg: dict[tuple[str, int], dict[str, float]], methods: list[str],
            blocks: list[tuple[str, int]]) -> list[str]:
    """Median regret and mean rank per task, mean rank overall, parego against each method (W/T/L, Wilcoxon, Holm)."""
    from scipy.stats import rankdata, wilcoxon

    if not blocks:
        return ["  (no complete block)"]
    R = np.array([[reg[b][m] for m in methods] for b in blocks])  # blocks x methods
    ranks = np.array([rankdata(np.round(r, 12)) for r in R])
    tasks = [t for t in MO_TASKS if any(b[0] == t for b in blocks)]
    head = f"{'method':16s}" + "".join(f"{t:>22s}" for t in tasks) + f"{'mean rank':>11s}"
    lines = ["", "median regret [mean rank] per task", head]
    for j, m in enumerate(methods):
        cells = ""
        for t in tasks:
            idx = [i for i, b in enumerate(blocks) if b[0] == t]
            cells += f"{np.median(R[idx, j]):>13.4f} [{ranks[idx, j].mean():4.2f}]"
        lines.append(f"{m:16s}{cells}{ranks[:, j].mean():>11.2f}")
    lines += ["", "parego against each method over these blocks: wins/ties/losses (regret), Wilcoxon signed-rank "
              "two-sided p, Holm-corrected"]
    i0 = methods.index("parego")
    others = [m for m in methods if m != "parego"]
    raw = []
    for m in others:
        d = R[:, i0] - R[:, methods.index(m)]
        raw.append(float(wilcoxon(d).pvalue) if np.any(np.abs(d) > 1e-12) else 1.0)
    for m, p, ph in zip(others, raw, holm(raw)):
        d = R[:, i0] - R[:, methods.index(m)]
        w, t, lo = int((d < -1e-12).sum()), int((np.abs(d) <= 1e-12).sum()), int((d > 1e-12).sum())
        lines.append(f"  parego vs {m:15s} {w:2d}/{t}/{lo:<2d}  p = {p:.3g}  Holm p = {ph:.3g}")
    for task in tasks:
        idx = [i for i, b in enumerate(blocks) if b[0] == task]
        cells = []
        for m in others:
            d = R[idx, i0] - R[idx, methods.index(m)]
            cells.append(f"{m} {int((d < -1e-12).sum())}/{int((np.abs(d) <= 1e-12).sum())}/{int((d > 1e-12).sum())}")
        lines.append(f"  {task}: parego W/T/L vs " + ", ".join(cells))
    return lines


def cmd_table(args: argparse.Namespace) -> None:
    from scipy.stats import wilcoxon

    rows = [r for path in (args.out, *args.extra) for r in load(path)]
    reg = regrets(rows)
    methods = list(MO_METHODS)
    blocks = sorted(k for k, v in reg.items() if all(m in v for m in methods))
    lines = [f"# Regenerate: OMP_NUM_THREADS=1 nice python scripts/mo_compare.py run --part {p}" for p in
             ("mo", "constrained", "noise")]
    lines += ["# Regenerate: OMP_NUM_THREADS=1 nice python scripts/mo_compare.py run --part qnehvi "
              "--tasks zdt1,zdt2,dtlz2 --out results/mo_compare_qnehvi.jsonl"]
    lines += ["# Regenerate: OMP_NUM_THREADS=1 nice python scripts/mo_compare.py run --part qnehvi "
              "--tasks breast_cancer_gb --out results/mo_compare_qnehvi_clf.jsonl"]
    lines += ["# Regenerate: OMP_NUM_THREADS=1 nice python scripts/mo_compare.py run --part mo --tasks wine_gb"]
    lines += ["# Regenerate: OMP_NUM_THREADS=1 nice python scripts/mo_compare.py run --part qnehvi "
              f"--tasks wine_gb --seeds {QNEHVI_WINE_SEEDS} --out results/mo_compare_qnehvi_clf.jsonl"]
    lines += ["# Regenerate: python scripts/mo_compare.py table", ""]
    lines.append(f"Final hypervolume regret (normalised to [ideal, reference]; smaller is better), {args.rounds} "
                 f"evaluations, {len(blocks)} (task, seed) blocks where all five methods ran")
    gaps: dict[tuple[str, str], list[int]] = {}  # (task, the methods that did not run) -> seeds
    for b in sorted(set(reg) - set(blocks)):
        gaps.setdefault((b[0], ", ".join(m for m in methods if m not in reg[b])), []).append(b[1])
    for (task, missing), seeds in gaps.items():
        lines.append(f"Not in this table: {task} seed{'s' if len(seeds) > 1 else ''} {', '.join(map(str, seeds))}, "
                     f"where {missing} did not run (stopped: the evidence's CPU budget on the shared machine)")
    lines += section(reg, methods, blocks)
    four = [m for m in MO_METHODS if m != "botorch_qnehvi"]
    every = sorted(k for k, v in reg.items() if all(m in v for m in four))
    if len(every) > len(blocks):
        lines += ["", f"Without botorch_qnehvi, over every block the other four ran ({len(every)} blocks):"]
        lines += section(reg, four, every)
    for task in CLASSIFIERS:  # the two ends of the classifier's front each method reached, over all its runs
        clf = [r for r in rows if r["task"] == task]
        if not clf:
            continue
        lines += ["", f"{task.replace('_gb', ' gb')}: the ends of each method's front, median over the seeds it ran "
                  "(best accuracy; smallest size among points with accuracy >= 0.95)"]
        for m in methods:
            mine = [np.array(r["points"]) for r in clf if r["method"] == m]
            if not mine:
                continue
            acc = [float(-P[:, 0].min()) for P in mine]
            small = [float(P[-P[:, 0] >= 0.95, 1].min()) if (-P[:, 0] >= 0.95).any() else math.inf for P in mine]
            lines.append(f"  {m:16s} {len(mine)} seeds  best accuracy {np.median(acc):.4f}  smallest model at "
                         f">= 0.95: {np.median(small):.0f} leaves")
    lines += ["", "CPU seconds per run (median over seeds; the shared 2-core machine)"]
    for task in MO_TASKS:
        cpu = {m: [r["cpu_s"] for r in rows if r["task"] == task and r["method"] == m] for m in MO_METHODS}
        lines.append(f"  {task:17s}" + ", ".join(f"{m} {np.median(v):.1f}" for m, v in cpu.items() if v))
    cons = [r for r in rows if r["task"] == "gramacy"]
    if cons:
        from hpoflow.tasks.constrained import GRAMACY_OPTIMUM

        lines += ["", f"task=gramacy (constrained; f* = {GRAMACY_OPTIMUM:.5f}, the unconstrained optimum (0, 0) is "
                  f"infeasible), {cons[0]['rounds']} evaluations: final best feasible value per seed"]
        for m in ("gp_ei", "random"):
            mine = sorted((r for r in cons if r["method"] == m), key=lambda r: r["seed"])
            finals = [r["best_feasible"][-1] for r in mine]
            ok = all(v is not None for v in finals)
            vals = [math.inf if v is None else v for v in finals]
            first = [next((i + 1 for i, v in enumerate(r["best_feasible"]) if v is not None), None) for r in mine]
            lines.append(f"  {m:8s} median {np.median(vals):.4f}  per seed {' '.join(f'{v:.4f}' for v in vals)}  "
                         f"every seed feasible: {'yes' if ok else 'no'}  first feasible round {first}  "
                         f"feasible share {np.mean([np.mean(r['feasible']) for r in mine]):.2f}")
        gp = [r for r in cons if r["method"] == "gp_ei" and r.get("constraints")]
        if gp:  # where the constrained GP's infeasible points are: the c1 = 0 boundary, near f*
            bad = [(c["c1"], p[0]) for r in gp for c, p, ok in zip(r["constraints"], r["points"], r["feasible"])
                   if not ok]
            c1 = np.array([b[0] for b in bad])
            near = np.mean([abs(b[1] - GRAMACY_OPTIMUM) < 0.05 for b in bad])
            lines.append(f"  gp_ei's infeasible points ({len(bad)} of {sum(len(r['points']) for r in gp)}): c1 "
                         f"exceeded by a median {np.median(c1):.2g}, {np.mean(c1 < 0.05):.0%} by less than 0.05, "
                         f"{near:.0%} within 0.05 of f*: it refines along the constraint boundary the optimum lies on")
        a = {r["seed"]: r["best_feasible"][-1] for r in cons if r["method"] == "gp_ei"}
        b = {r["seed"]: r["best_feasible"][-1] for r in cons if r["method"] == "random"}
        seeds = sorted(set(a) & set(b))
        d = np.array([(a[s] if a[s] is not None else math.inf) - (b[s] if b[s] is not None else math.inf)
                      for s in seeds])
        p = float(wilcoxon(d).pvalue) if len(d) and np.all(np.isfinite(d)) and np.any(d != 0) else float("nan")
        lines.append(f"  gp_ei better than random in {int((d < 0).sum())} of {len(d)} seeds (Wilcoxon p = {p:.3g}; "
                     "5 seeds: the smallest two-sided p possible is 0.0625)")
    noise = [r for r in rows if r["task"] == "fit_noise"]
    if noise:
        spread = [max(r["fit_s"]) / min(r["fit_s"]) for r in noise]
        cv = [float(np.std(r["fit_s"]) / np.mean(r["fit_s"])) for r in noise]
        same = all(len(set(r["accuracy"])) == 1 and len(set(r["size"])) == 1 for r in noise)
        lines += ["", f"Fit-time noise (breast_cancer gb, 3 folds, on the shared 2-core machine): {len(noise)} "
                  f"configurations x {len(noise[0]['fit_s'])} repeats: fit_s max/min {min(spread):.2f}-"
                  f"{max(spread):.2f} (median {np.median(spread):.2f}), "
                  f"coefficient of variation median {np.median(cv):.2f}; accuracy and size identical across repeats: "
                  f"{'yes' if same else 'no'}. Hence the classifier row uses accuracy vs size."]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.write:
        with open(args.write, "w") as f:
            f.write(text)


def main() -> None:
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="cmd", required=True)
    run_p = sub.add_parser("run")
    run_p.add_argument("--part", choices=("mo", "qnehvi", "constrained", "noise"), default="mo")
    run_p.add_argument("--tasks", default=",".join(MO_TASKS))
    run_p.add_argument("--seeds", type=int, default=5)
    run_p.add_argument("--rounds", type=int, default=50)
    table_p = sub.add_parser("table")
    table_p.add_argument("--rounds", type=int, default=50)
    table_p.add_argument("--write", default=os.path.join(RESULTS, "mo_compare.txt"))
    table_p.add_argument("--extra", nargs="*", default=[os.path.join(RESULTS, f"mo_compare_qnehvi{s}.jsonl")
                                                        for s in ("", "_clf")])
    for p in (run_p, table_p):
        p.add_argument("--out", default=os.path.join(RESULTS, "mo_compare_runs.jsonl"))
    args = parser.parse_args()
    cmd_run(args) if args.cmd == "run" else cmd_table(args)


if __name__ == "__main__":
    main()
