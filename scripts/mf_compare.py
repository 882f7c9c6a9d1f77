"""Multi-fidelity methods against full-fidelity random search on the synthetic multi-fidelity tasks, in process
(no store): anytime simple regret at fractions of a cost budget, and the cost each method needs to reach random
search's final quality. What ``algo=auto``'s multi-fidelity branch was chosen from.

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 python scripts/mf_compare.py --seeds 5

With ``--out DIR`` every run is saved to ``DIR`` as it finishes (a rerun skips the runs already there, so a crash
loses one run per process), ``--jobs`` processes run them, and the tables are the report's against-compute ones
(:mod:`hpoflow.report.compute`: normalised regret of the best full-fidelity value at fractions of the cost budget,
mean ranks, the cost to reach random search's final value) with paired Wilcoxon-Holm p-values of ``--against``
against every other method. ``--set BENCH:key=value,...`` shrinks a real task (e.g. its fidelity maximum)::

    python scripts/mf_compare.py --real breast_cancer_gb,digits_cnn --set digits_cnn:epochs=9 --seeds 5 \
        --methods random,hyperband,mf_gp --out results/mf_live_runs --jobs 2
"""
from __future__ import annotations

import argparse
import os
import sys
import time

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(var, "1")
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import numpy as np
from scipy.stats import rankdata, wilcoxon

from hpoflow.algorithms.base import BuildContext
from hpoflow.algorithms.multi_fidelity import MultiFidelity
from hpoflow.algorithms.multi_fidelity_config import MultiFidelityConfig
from hpoflow.algorithms.random_search import RandomConfig, RandomSearch
from hpoflow.core.budget import Budget
from hpoflow.runner.loop import run
from hpoflow.surrogates.gp import ExactGP
from hpoflow.tasks.multi_fidelity import make_branin_mf, make_hartmann6_mf

TASKS = {"branin_mf": make_branin_mf, "hartmann6_mf": make_hartmann6_mf}


def real_task(benchmark: str, overrides: dict[str, object] | None = None):
    """A real training task with its fidelity on (the settings scripts/record_curves.py records, with
    ``overrides``)."""
    sys.path.insert(0, os.path.dirname(__file__))
    import record_curves
    from record_curves import make_task

    if overrides:
        name, settings = record_curves.BENCHMARKS[benchmark]
        record_curves.BENCHMARKS[benchmark] = (name, {**settings, **overrides})
    return lambda seed=0: make_task(benchmark, seed)


def parse_sets(items: list[str]) -> dict[str, dict[str, object]]:
    """``["digits_gb:max_resource=54,folds=3"]`` -> ``{"digits_gb": {"max_resource": 54, "folds": 3}}``."""
    out: dict[str, dict[str, object]] = {}
    for item in items:
        bench, _, pairs = item.partition(":")
        for pair in pairs.split(","):
            key, _, text = pair.partition("=")
            value: object = text
            for cast in (int, float):
                try:
                    value = cast(text)
                    break
                except ValueError:
                    pass
            out.setdefault(bench, {})[key] = value
    return out


FRACTIONS = (0.125, 0.25, 0.5, 1.0)


def replay_task(name: str, overrides: dict[str, object] | None = None):
    """``lc_<benchmark>``: the recorded curves replayed (``task=lc_replay``), e.g. ``lc_digits_mlp`` with
    ``--set lc_digits_mlp:max_fidelity=27`` for the curves cut at 27 epochs."""
    from hpoflow.tasks.replay import ReplayTask

    return lambda seed=0: ReplayTask(name.removeprefix("lc_"), seed, **(overrides or {}))


def live_task(name: str):
    """``live_<suite task>``: the suite task trained for real over its whole space (``scripts/lc_suite/live.py``),
    e.g. ``live_breast_cancer-gb``, the live counterpart of ``lc_breast_cancer-gb``."""
    from scripts.lc_suite.live import LiveSuiteTask

    return lambda seed=0: LiveSuiteTask(name.removeprefix("live_"), seed)


def variant(method: str) -> tuple[str, dict[str, object]]:
    """``mf_gp+model=joint+min_points=4`` -> ``("mf_gp", {"model": "joint", "min_points": 4})``: a method with
    config overrides (for ablations; the saved runs keep the whole name). Two keys are the script's own:
    ``output_transform`` (the GP's) and ``seed_offset`` (``random+seed_offset=100``: an A/A twin of ``random``, the
    same task realisation searched with another algorithm seed, which measures the comparison's noise floor)."""
    base, *pairs = method.split("+")
    return base, parse_sets([f"x:{','.join(pairs)}"]).get("x", {}) if pairs else {}


def build(method: str, task, seed: int, cost: float | None = None, workers: int = 1):
    from hpoflow.surrogates.configs import GPConfig

    method, overrides = variant(method)
    gp = GPConfig(output_transform=overrides.pop("output_transform", None))  # the run's surrogate.output_transform
    seed += int(overrides.pop("seed_offset", 0))  # an A/A twin: the same method and task seed, another algorithm seed
    ctx = BuildContext(task, rounds=100_000, seed=seed, surrogate=lambda d: ExactGP(d, gp), cost=cost,
                       workers=workers)
    if method == "random":
        return RandomSearch(RandomConfig(), ctx)
    if method not in ("sha", "hyperband", "asha", "mf_gp", "asha_gp"):  # a peer: its registry entry
        sys.path.insert(0, os.path.dirname(__file__))
        from mf_replay_bench import entry

        e = entry(method)
        return e.load()(e.make_config(**overrides), ctx)
    scheduler, searcher = {"sha": ("sha", "random"), "hyperband": ("hyperband", "random"),
                           "asha": ("asha", "random"), "mf_gp": ("hyperband", "gp"),
                           "asha_gp": ("asha", "gp")}[method]
    settings = {"name": method, "scheduler": scheduler, "searcher": searcher, **overrides}
    return MultiFidelity(MultiFidelityConfig(**settings), ctx)


def trajectory(method: str, task_name: str, seed: int, budget: float) -> tuple[np.ndarray, np.ndarray, float]:
    """(cumulative cost, simple regret) per round, and the CPU time. A task without a known optimum (the real
    ones): the best value so far, signed so that smaller is better, in place of the regret. Both count full-fidelity
    evaluations only (the run's incumbent): inf before the first one."""
    task = TASKS[task_name](seed=seed)
    start = time.process_time()
    result = run(task, build(method, task, seed), budget=Budget(rounds=100_000, cost=budget))
    cost = np.array([m["query_cost"] for m in result.metrics])
    if task.optimum is not None:
        regret = np.array([m.get("simple_regret", np.inf) for m in result.metrics])
    else:
        regret = np.array([-task.direction.sign * m["best_value"] if "best_value" in m else np.inf
                           for m in result.metrics])
    return cost, regret, time.process_time() - start


def at(cost: np.ndarray, regret: np.ndarray, c: float) -> float:
    i = np.searchsorted(cost, c, side="right") - 1
    return float(regret[i]) if i >= 0 else float("inf")


# -- checkpointed runs, summarised with the report's against-compute functions ----------------------------------
def run_saved(job: tuple[str, str, int, int, dict[str, dict[str, object]], str, int]) -> str:
    """One (task, method, seed) run, saved as JSON under ``out``: per round its value, fidelity and cumulative
    cost. Skipped when the file exists (a rerun resumes the set). ``workers`` > 1: that many asynchronous workers
    in simulated time (``budget.executor=simulated``; rounds in the order their results arrive)."""
    import json

    task_name, method, seed, full, sets, out, workers = job
    path = os.path.join(out, f"{task_name}__{method}__{seed}.json")
    if os.path.exists(path):
        return path
    if task_name.startswith("lc_"):
        make = replay_task(task_name, sets.get(task_name))
    elif task_name.startswith("live_"):
        make = live_task(task_name)
    else:
        make = real_task(task_name, sets.get(task_name)) if task_name not in TASKS else TASKS[task_name]
    task = make(seed=seed)
    budget = float(full * task.fidelity.max)
    start, wall = time.process_time(), time.perf_counter()
    algo = build(method, task, seed, budget, workers)
    if workers > 1:
        from hpoflow.runner.loop import Loop
        from hpoflow.runner.simulated import drive_simulated

        loop = Loop(task, algo, budget=Budget(rounds=100_000, cost=budget, workers=workers, executor="simulated"))
        result = drive_simulated(loop, workers)
    else:
        result = run(task, algo, budget=Budget(rounds=100_000, cost=budget))
    top = float(task.fidelity.max)
    rows = {"task": task_name, "method": method, "seed": seed, "budget": budget, "max_fidelity": top,
            "direction": task.direction.value, "cpu": time.process_time() - start,
            "wall": time.perf_counter() - wall,
            "value": [r.value if r.value is not None and np.isfinite(r.value) else None for r in result.records],
            "fidelity": [top if r.fidelity is None else float(r.fidelity) for r in result.records],
            "cost": [float(m["query_cost"]) for m in result.metrics]}
    tmp = path + ".tmp"
    with open(tmp, "w") as fh:
        json.dump(rows, fh)
    os.replace(tmp, path)  # atomic: a killed run leaves no half file
    return path


def as_study(saved: list[dict]):
    """The saved runs as the report's :class:`StudyData` (one run per file), so its compute functions apply."""
    import pandas as pd

    from hpoflow.report.loading import StudyData

    runs, curves = [], []
    for r in saved:
        run_id = f"{r['task']}/{r['method']}/{r['seed']}"
        runs.append({"task_key": r["task"], "algo": r["method"], "seed": str(r["seed"]), "run_id": run_id,
                     "direction": r["direction"], "status": "FINISHED", "regret_reference": "best found",
                     "params.budget.cost": str(r["budget"])})
        n = len(r["value"])
        curves.append(pd.DataFrame({"run_id": run_id, "step": np.arange(1, n + 1),
                                    "value": np.array([np.nan if v is None else v for v in r["value"]], float),
                                    "true_value": np.nan, "fidelity": r["fidelity"], "query_cost": r["cost"],
                                    "regret": np.nan}))
    return StudyData(pd.DataFrame(runs), pd.concat(curves, ignore_index=True), pd.DataFrame(), "in process",
                     "scripts/mf_compare.py")


def report_saved(saved: list[dict], methods: list[str], against: str) -> None:
    """Tables: normalised regret and mean ranks at fractions of the budget (Wilcoxon-Holm of ``against`` vs each
    other method, wins/ties/losses), the area under the anytime curve, and the cost to reach random search's final
    value (fractions of random's compute), all from :mod:`hpoflow.report.compute`."""
    from hpoflow.report import compute as cp
    from hpoflow.report import statistics as st

    cr = cp.cost_runs(as_study(saved), incumbent="full")
    tasks = sorted(cr.scales)
    print(f"{len(saved)} runs; tasks {', '.join(tasks)}; incumbent = best full-fidelity value; normalised regret "
          "= (best - best any run found) / (worst first full-fidelity value - that best)")
    for w in cr.warnings:
        print(w)
    grid = cp.on_grid(cr, np.asarray(FRACTIONS))
    others = [m for m in methods if m != against]

    def pairs(table, title: str) -> None:
        wide = table.pivot_table(index=["task", "seed"], columns="algo", values="nr").dropna()[methods]
        ranks = st.block_ranks(table).mean()[methods]
        raw = [st.wilcoxon_p(wide[against].to_numpy(), wide[m].to_numpy()) for m in others]
        holm = st.holm(raw)
        print(f"\n## {title}: mean rank over {len(wide)} (task, seed) blocks (mean normalised regret); 1 = best")
        print("| method | " + " | ".join(methods) + " |\n|---|" + "---|" * len(methods))
        print("| mean rank | " + " | ".join(f"{ranks[m]:.2f}" for m in methods) + " |")
        print("| mean nr | " + " | ".join(f"{wide[m].mean():.3f}" for m in methods) + " |")
        per_task = wide.groupby(level="task").mean()
        for t in per_task.index:
            print(f"| nr {t} | " + " | ".join(f"{per_task.loc[t, m]:.3f}" for m in methods) + " |")
        print(f"{against} vs each (two-sided Wilcoxon signed-rank, zsplit, Holm over {len(others)}): " + "; ".join(
            f"{m} {int((wide[against] < wide[m]).sum())}/{int((wide[against] == wide[m]).sum())}/"
            f"{int((wide[against] > wide[m]).sum())} (win/tie/loss) p={p:.3g}" for m, p in zip(others, holm)))

    for frac in FRACTIONS:
        pairs(grid[np.isclose(grid["fraction"], frac)], f"normalised regret at {frac:g} of the budget")
    pairs(cp.areas(cr), "area under the anytime normalised-regret curve (0..1 of the budget)")
    reached, targets = cp.cost_to_target(cr, reference="random")
    print("\n## compute to reach random search's final value (the median over random's seeds of its best after "
          "its full budget), as a fraction of random's compute; (runs reaching / runs)")
    print("| task | target | " + " | ".join(methods) + " |\n|---|---|" + "---|" * len(methods))
    for t in tasks:
        cells = []
        for m in methods:
            ratio = reached[(reached["task"] == t) & (reached["algo"] == m)]["ratio"].to_numpy(float)
            ok = ratio[np.isfinite(ratio)]
            cells.append(f"{np.median(ok):.3f} ({len(ok)}/{len(ratio)})" if len(ok) else f"- (0/{len(ratio)})")
        print(f"| {t} | {cr.scales[t].sign * targets[t].value:.4f} | " + " | ".join(cells) + " |")
    summary = cp.reach_summary(reached).set_index("algo")
    print("| all: median (runs reaching) | | " + " | ".join(
        f"{summary.loc[m, 'median_ratio']:.3f} ({summary.loc[m, 'reached']:.0%})" for m in methods) + " |")
    by_task = reached.assign(cost=lambda d: d["cost"].where(np.isfinite(d["cost"]),  # never: twice the budget
                                                         d["task"].map(lambda t: 2 * cr.scales[t].budget)))
    for name, unit in (("random's budget spent", {t: targets[t].reference_cost for t in tasks}),
                       ("random's own median cost to reach it", {t: targets[t].reference_first for t in tasks})):
        ratio = by_task.assign(r=by_task["cost"] / by_task["task"].map(unit)).groupby(["algo", "task"])["r"].median()
        print(f"compute to reach it as a fraction of {name} (a run that never reaches it counts as twice the budget; "
              "median over seeds, then over tasks): " + ", ".join(
                  f"{m} {float(np.nanmedian(ratio.loc[m].to_numpy(float))):.3f}" for m in methods))
    paired = {m: [] for m in methods}  # target: random's own final value on the same task and seed
    ref = {(r["task"], r["seed"]): r for r in saved if r["method"] == "random"}
    sign = {t: cr.scales[t].sign for t in tasks}
    for r in saved:
        if (r["task"], r["seed"]) not in ref or r["task"] not in sign:
            continue
        full = [sign[r["task"]] * v for v in ref[r["task"], r["seed"]]["value"] if v is not None]
        loss = [sign[r["task"]] * v if v is not None and f >= r["max_fidelity"] else np.inf
                for v, f in zip(r["value"], r["fidelity"])]
        hit = next((c for c, v in zip(r["cost"], loss) if full and v <= min(full)), None)
        paired[r["method"]].append(np.inf if hit is None else hit / r["budget"])
    med = {m: float(np.median([v for v in paired[m] if np.isfinite(v)] or [np.nan])) for m in methods}
    print("paired: compute (share of the budget) to reach random's final value on the same task and seed, median "
          "over the runs that do (runs reaching / runs): " + ", ".join(
              f"{m} {med[m]:.3f} ({int(np.isfinite(paired[m]).sum())}/{len(paired[m])})" for m in methods))
    every = {m: float(np.median(paired[m])) if paired[m] else np.nan for m in methods}  # inf: never reached
    print("the same over every run (one that never reaches it counts as never: inf), so a method that seldom "
          "reaches the target is not flattered by the few runs that do: " + ", ".join(
              f"{m} {every[m]:.3f}" for m in methods))
    first = {m: [next((c / r["budget"] for c, f in zip(r["cost"], r["fidelity"]) if f >= r["max_fidelity"]), 1.0)
                 for r in saved if r["method"] == m] for m in methods}
    print("share of the budget spent when the first full-fidelity evaluation ends (median [min, max]; before it the "
          "normalised regret is 1): " + ", ".join(f"{m} {np.median(v):.3f} [{min(v):.3f}, {max(v):.3f}]"
                                                  for m, v in first.items()))
    cpu = {m: np.mean([r["cpu"] for r in saved if r["method"] == m]) for m in methods}
    print("CPU s per run: " + ", ".join(f"{m} {cpu[m]:.1f}" for m in methods))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--full-evals", type=int, default=30, help="budget = this many full-fidelity evaluations")
    parser.add_argument("--methods", default="random,sha,hyperband,asha,mf_gp")
    parser.add_argument("--real", default="", help="real training tasks instead of the synthetic ones, e.g. "
                        "breast_cancer_gb,breast_cancer_mlp (scripts/record_curves.py's names); the table then "
                        "shows the best value so far (negated accuracy: smaller is better), not a regret")
    parser.add_argument("--set", action="append", default=[], metavar="BENCH:key=value,...",
                        help="override a real task's settings, e.g. digits_gb:max_resource=54,folds=3")
    parser.add_argument("--out", default="", help="save each run here (resumable); report with hpoflow.report")
    parser.add_argument("--jobs", type=int, default=1, help="processes (with --out)")
    parser.add_argument("--workers", type=int, default=1, help="(with --out) asynchronous workers in simulated time")
    parser.add_argument("--against", default="mf_gp", help="the method paired with every other one (with --out)")
    parser.add_argument("--report-only", action="store_true", help="(with --out) summarise the saved runs only")
    parser.add_argument("--first-seed", type=int, default=0, help="(with --out) run seeds from this one only (a "
                        "second process may take the last seeds; the report reads every seed below --seeds)")
    parser.add_argument("--reverse", action="store_true", help="(with --out) run the jobs last first (a second "
                        "process on the same --out meets the first one from the other end)")
    args = parser.parse_args()
    methods = args.methods.split(",")
    if args.out:
        import json
        from multiprocessing import get_context

        names = args.real.split(",") if args.real else list(TASKS)
        sets = parse_sets(args.set)
        os.makedirs(args.out, exist_ok=True)
        jobs = [(t, m, s, args.full_evals, sets, args.out, args.workers) for s in range(args.seeds) for t in names
                for m in methods]
        if not args.report_only:
            start = time.perf_counter()
            todo = [j for j in jobs if j[2] >= args.first_seed][::-1 if args.reverse else 1]
            with get_context("spawn").Pool(args.jobs) as pool:
                for k, path in enumerate(pool.imap_unordered(run_saved, todo), 1):
                    print(f"[{k}/{len(todo)} {time.perf_counter() - start:.0f} s] {path}", file=sys.stderr, flush=True)
        saved = []
        for t, m, s, *_ in jobs:
            path = os.path.join(args.out, f"{t}__{m}__{s}.json")
            if os.path.exists(path):
                with open(path) as fh:
                    saved.append(json.load(fh))
        print(f"budget: {args.full_evals} full-fidelity evaluations per task; {args.seeds} seeds; {args.workers} "
              "worker(s); settings " + "; ".join(f"{t}: {sets.get(t, {})}" for t in names))
        report_saved(saved, methods, args.against)
        return
    if args.real:
        TASKS.clear()
        TASKS.update({name: real_task(name) for name in args.real.split(",")})
    rows: dict[tuple[str, str, int], tuple[np.ndarray, np.ndarray, float]] = {}
    for task_name, make in TASKS.items():
        budget = args.full_evals * make().fidelity.max
        for seed in range(args.seeds):
            for m in methods:
                rows[task_name, m, seed] = trajectory(m, task_name, seed, budget)
    print(f"budget: {args.full_evals} full-fidelity evaluations per task; {args.seeds} seeds")
    for frac in FRACTIONS:
        what = "best value so far (smaller is better)" if args.real else "simple regret"
        print(f"\n## {what} at {frac:g} of the budget (mean over seeds), and mean rank over task x seed blocks")
        blocks = []
        print("| task | " + " | ".join(methods) + " |")
        print("|---|" + "---|" * len(methods))
        for task_name, make in TASKS.items():
            budget = args.full_evals * make().fidelity.max
            vals = np.array([[at(*rows[task_name, m, s][:2], frac * budget) for m in methods]
                             for s in range(args.seeds)])
            blocks.extend(vals)
            print(f"| {task_name} | " + " | ".join(f"{v:.4g}" for v in vals.mean(0)) + " |")
        ranks = np.array([rankdata(b) for b in blocks]).mean(0)
        print("| mean rank | " + " | ".join(f"{r:.2f}" for r in ranks) + " |")
    print("\n## cost to reach random search's final value (same task and seed), as a share of its budget")
    for m in methods:
        shares = []
        for task_name, make in TASKS.items():
            budget = args.full_evals * make().fidelity.max
            for s in range(args.seeds):
                target = rows[task_name, "random", s][1][-1]
                cost, regret, _ = rows[task_name, m, s]
                hit = np.nonzero(regret <= target)[0]
                shares.append(cost[hit[0]] / budget if hit.size else float("nan"))
        shares_arr = np.array(shares)
        reached = np.isfinite(shares_arr)
        print(f"{m}: reached in {reached.sum()}/{len(shares)} runs; median share "
              f"{np.nanmedian(shares_arr) if reached.any() else float('nan'):.3f}; "
              f"CPU s per run {np.mean([rows[k][2] for k in rows if k[1] == m]):.2f}")
    final = {m: [rows[t, m, s][1][-1] for t in TASKS for s in range(args.seeds)] for m in methods}
    print("\n## final value, paired two-sided Wilcoxon: the last method against each other")
    ref = methods[-1]
    for m in methods[:-1]:
        diff = np.array(final[ref]) - np.array(final[m])
        p = wilcoxon(final[ref], final[m]).pvalue if np.any(diff != 0) else 1.0
        print(f"{ref} vs {m}: better in {(diff < 0).sum()}, worse in {(diff > 0).sum()}, p = {p:.3g}")


if __name__ == "__main__":
    main()
