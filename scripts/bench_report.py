"""Scale benchmark of the report's reading and statistics: runs -> seconds, today's code against the new, one
invocation.

Builds (once, cached) one SQLite MLflow store holding 10,000 runs x 50 rounds (10 metrics per round, ~40 params,
~11 tags; no artifacts, like ``tracking.artifacts=false``), split over three experiments of 500, 1,500 and 8,000
runs, so that selecting the first one, two or three experiments selects 500, 2,000 or 10,000 runs of the same
store. The first 500 runs are written with MLflow's client (``log_batch``; about 0.4 s a run here); the other
9,500 are copies of them made in SQL (MLflow's own tables, new run ids, seeds shifted so every (task, seed)
block is new), because writing them all through the client would take over an hour on this machine. Each measurement
runs in a fresh subprocess and reports its own CPU clock (user + system, which
includes SQLite's work) and wall time:

- ``old``: the report's reading and aggregation at ``--against`` (default: the last commit before issue 14),
  exported into a temporary folder (``git archive``): ``load_curves`` (one ``get_metric_history`` per metric per
  run) + ``summarise``.
- ``new``: this checkout: ``load_study`` (bulk) + the per-task ``summarise`` + every cross-task statistic
  (normalisation, ranks over rounds and cost, CD test, per-task Wilcoxon-Holm, seed adequacy); no figures.

    python scripts/bench_report.py                          # 500 / 2,000 / 10,000 runs; table to stdout
    python scripts/bench_report.py --out scripts/results/bench_report.txt --old-max 2000

Wall time on a shared machine is inflated by other processes; the CPU clock and same-run ratios are the numbers
to compare.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BEFORE_ISSUE_14 = "25cbd00"
SPLITS = (("bench_a", 500), ("bench_b", 1500), ("bench_c", 8000))
ALGOS = ("random", "gp_ei", "gp_ucb", "turbo")
TASKS = (("branin", 0.397887, 2), ("hartmann6", -3.32237, 6), ("rastrigin", 0.0, 4), ("styblinski_tang", -156.66, 4),
         ("ackley", 0.0, 5))
EXTRA_KEYS = ("phase", "decision_time", "acq_time", "acquisition")  # logged like a GP run's internals


def _params(algo: str, task: str, dim: int, seed: int, rounds: int) -> dict[str, str]:
    """About as many params as a real run logs (the flattened resolved config)."""
    p = {"algo.name": algo, "algo.n_init": "0", "algo.beta": "2.0", "algo.xi": "0.0", "surrogate.name": "gp",
         "surrogate.kernel": "matern52", "surrogate.noise": "0.001", "task.name": task, "task.dim": str(dim),
         "task.noise_std": "0.0", "seed": str(seed), "budget.rounds": str(rounds), "tracking.artifacts": "False",
         "hardware.name": "auto", "on_error": "fail", "progress": "False"}
    p.update({f"algo.optimizer.opt{i}": str(i) for i in range(10)})
    p.update({f"surrogate.opt{i}": str(i) for i in range(15)})
    return p


def clone_runs(path: Path, src: str, dst: str, copy: int, seeds_per_copy: int) -> None:
    """Copy every run of experiment ``src`` into ``dst`` with new run ids, its seed shifted by
    ``copy * seeds_per_copy`` (tags and params), in MLflow's tables of the SQLite store at ``path``."""
    import sqlite3

    con = sqlite3.connect(path)
    (src_id,), (dst_id,) = (con.execute("SELECT experiment_id FROM experiments WHERE name = ?", (n,)).fetchone()
                            for n in (src, dst))
    con.execute("CREATE TEMP TABLE IF NOT EXISTS idmap (old TEXT PRIMARY KEY, new TEXT)")
    con.execute("DELETE FROM idmap")
    con.execute("INSERT INTO idmap SELECT run_uuid, lower(hex(randomblob(16))) FROM runs WHERE experiment_id = ?",
                (src_id,))
    shift = copy * seeds_per_copy
    for table in ("runs", "tags", "params", "metrics", "latest_metrics"):
        cols = [r[1] for r in con.execute(f"PRAGMA table_info({table})")]
        exprs = []
        for c in cols:
            if c == "run_uuid":
                exprs.append("m.new")
            elif c == "experiment_id":
                exprs.append(str(dst_id))
            elif c == "artifact_uri":
                exprs.append("replace(t.artifact_uri, t.run_uuid, m.new)")
            elif c == "value" and table in ("tags", "params"):
                exprs.append(f"CASE WHEN t.key = 'seed' THEN CAST(CAST(t.value AS INTEGER) + {shift} AS TEXT) "
                             "ELSE t.value END")
            else:
                exprs.append(f"t.{c}")
        con.execute(f"INSERT INTO {table} ({', '.join(cols)}) SELECT {', '.join(exprs)} "
                    f"FROM {table} t JOIN idmap m ON t.run_uuid = m.old")
    con.commit()
    con.close()


def build_store(path: Path, rounds: int) -> None:
    """The store described in the module docstring: the first experiment through MLflow's client, the rest
    as SQL copies of it."""
    from mlflow.entities import Metric, Param, RunTag
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=f"sqlite:///{path}")
    rng = random.Random(0)
    t0 = time.perf_counter()
    (first, n_runs), rest = SPLITS[0], SPLITS[1:]
    seeds_per_copy = -(-n_runs // (len(ALGOS) * len(TASKS)))
    exp = client.create_experiment(first)
    for done, i in enumerate(range(n_runs), start=1):
        algo, (task, opt, dim) = ALGOS[i % len(ALGOS)], TASKS[(i // len(ALGOS)) % len(TASKS)]
        seed = i // (len(ALGOS) * len(TASKS))
        tags = {"algo": algo, "task": task, "seed": str(seed), "surrogate": "gp", "hardware": "cpu/float64/1t",
                "git_commit": "bench", "sweep_id": "bench", "direction": "minimize", "regret_reference": "optimum"}
        run_id = client.create_run(exp, tags=tags, run_name=f"{algo}-{task}-s{seed}").info.run_id
        ts, metrics, best, cum = int(time.time() * 1000), [], float("inf"), 0.0
        for t in range(1, rounds + 1):
            v = opt + abs(rng.gauss(0, 10)) / (1 + 0.1 * t * (algo != "random"))
            best, cum = min(best, v), cum + (v - opt)
            metrics += [Metric("value", v, ts, t), Metric("best_value", best, ts, t),
                        Metric("regret", v - opt, ts, t), Metric("cumulative_regret", cum, ts, t),
                        Metric("simple_regret", best - opt, ts, t), Metric("wall_time", 0.01 * t, ts, t)]
            metrics += [Metric(k, rng.random(), ts, t) for k in EXTRA_KEYS]
            metrics.append(Metric("query_cost", float(t), ts, t))
        params = [Param(k, v) for k, v in _params(algo, task, dim, seed, rounds).items()]
        for j in range(0, len(metrics), 1000):
            client.log_batch(run_id, metrics=metrics[j:j + 1000], params=params if j == 0 else [],
                             tags=[RunTag("final.best_value", repr(best))] if j == 0 else [])
        client.set_terminated(run_id, "FINISHED")
        if done % 100 == 0:
            print(f"  wrote {done} runs ({time.perf_counter() - t0:.0f} s)", file=sys.stderr, flush=True)
    copy = 0
    for name, n in rest:
        client.create_experiment(name)
        for _ in range(n // n_runs):
            copy += 1
            clone_runs(path, first, name, copy, seeds_per_copy)
    print(f"  copied to {sum(n for _, n in SPLITS)} runs ({time.perf_counter() - t0:.0f} s)", file=sys.stderr)


MEASURE_OLD = """
import json, os, sys, time
t0, c0 = time.perf_counter(), os.times()
from hpoflow.report.loading import load_curves
from hpoflow.report.aggregate import summarise
curves = load_curves(sys.argv[1], sys.argv[2].split(","))
summarise(curves)
c1 = os.times()
print(json.dumps({"runs": len(curves), "cpu": c1.user + c1.system - c0.user - c0.system,
                  "wall": time.perf_counter() - t0}))
"""

MEASURE_NEW = """
import json, os, sys, time
t0, c0 = time.perf_counter(), os.times()
from hpoflow.report import statistics as st
from hpoflow.report.aggregate import summarise
from hpoflow.report.loading import load_study, to_run_curves
data = load_study(sys.argv[1], experiment=sys.argv[2].split(","))
t_load = time.perf_counter() - t0
summarise(to_run_curves(data))
norm = st.normalise(data)
grid = st.on_cost_grid(norm)
st.ranks_over(norm.curves, "step"); st.ranks_over(grid, "cost_fraction")
st.regret_over(norm.curves, "step"); st.regret_over(grid, "cost_fraction")
st.critical_difference(norm.final); st.versus_best(norm.final); st.overall(norm.final); st.seed_adequacy(norm.final)
c1 = os.times()
print(json.dumps({"runs": len(data.runs), "cpu": c1.user + c1.system - c0.user - c0.system,
                  "wall": time.perf_counter() - t0, "load_wall": t_load}))
"""


def measure(code: str, pythonpath: Path, uri: str, experiments: str, timeout: float) -> dict:
    env = {**os.environ, "PYTHONPATH": str(pythonpath), "OMP_NUM_THREADS": "1", "MPLBACKEND": "Agg"}
    proc = subprocess.run([sys.executable, "-c", code, uri, experiments], env=env, capture_output=True, text=True,
                          timeout=timeout, cwd=tempfile.gettempdir(), check=False)
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr[-2000:])
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=50)
    parser.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "hpoflow_bench_report")
    parser.add_argument("--against", default=BEFORE_ISSUE_14, help="git revision holding today's report code")
    parser.add_argument("--old-max", type=int, default=10_000,
                        help="above this many runs, extrapolate the old code's CPU time linearly instead of running it")
    parser.add_argument("--out", type=Path, help="also write the table here")
    args = parser.parse_args()
    args.cache.mkdir(parents=True, exist_ok=True)
    db = args.cache / f"store_{sum(n for _, n in SPLITS)}x{args.rounds}.db"
    if not db.exists():
        print(f"building {db} ...", file=sys.stderr)
        partial = db.with_suffix(".partial.db")
        partial.unlink(missing_ok=True)
        t0 = time.perf_counter()
        build_store(partial, args.rounds)
        partial.rename(db)
        print(f"built in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    uri = f"sqlite:///{db}"
    old_tree = Path(tempfile.mkdtemp(prefix="bench_report_old_"))  # today's package, exported by git archive
    archive = subprocess.run(["git", "-C", str(REPO), "archive", args.against, "hpoflow"], check=True,
                             capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(old_tree)], input=archive, check=True)
    rev = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True,
                         text=True, check=True).stdout.strip()
    import mlflow

    lines = [(f"bench_report: {args.rounds} rounds per run, one SQLite store of {sum(n for _, n in SPLITS)} runs "
              f"(MLflow {mlflow.__version__}); old = {args.against}, new = {rev} (this checkout)"),
             "CPU s = user + system of the measuring process (includes SQLite); wall s inflated by other load.",
             "", "| runs | old CPU s | old wall s | new CPU s | new wall s (read) | CPU old/new |",
             "|---:|---:|---:|---:|---:|---:|"]
    try:
        selected, per_run = [], 0.0
        for name, _n in SPLITS:
            selected.append(name)
            exps = ",".join(selected)
            new = measure(MEASURE_NEW, REPO, uri, exps, 1800)
            old = measure(MEASURE_OLD, old_tree, uri, exps, 3600) if new["runs"] <= args.old_max else None
            if old is not None and old["runs"] != new["runs"]:
                raise RuntimeError(f"old read {old['runs']} runs, new {new['runs']}")
            if old is not None:
                per_run = old["cpu"] / old["runs"]
                cells, ratio = [f"{old['cpu']:.1f}", f"{old['wall']:.1f}"], f"{old['cpu'] / new['cpu']:.1f}x"
            else:  # linear in runs (one get_metric_history per metric per run): not measured, said so
                guess = per_run * new["runs"] if per_run else float("nan")
                cells = [f"~{guess:.0f} (extrapolated, not run)", "not run"]
                ratio = f"~{guess / new['cpu']:.0f}x" if per_run else ""
            lines.append(f"| {new['runs']} | {cells[0]} | {cells[1]} | {new['cpu']:.1f} | "
                         f"{new['wall']:.1f} ({new['load_wall']:.1f}) | {ratio} |")
            print(lines[-1], flush=True)
    finally:
        shutil.rmtree(old_tree, ignore_errors=True)
    text = "\n".join(lines)
    print("\n" + text)
    if args.out:
        args.out.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
