"""A study at scale, three ways: hpoflow's Ray launcher vs Ray Tune vs Optuna (random search on Branin).

One invocation, one table. Each way runs N runs ("trials") of random search with ``--rounds`` evaluations, every
evaluation stored as one step, on ``--cpus`` CPUs of this machine, into a SQLite store of its own:

* hpoflow: ``python -m hpoflow -m hydra/launcher=ray hydra.launcher.num_cpus=C algo=random task=branin
  seed=range(0,N) budget.rounds=R`` into ``sqlite:///.../mlflow.db`` (a study: N child runs under one parent);
* Ray Tune: ``tune.Tuner`` on a local Ray of C CPUs, N trials each reporting R values, with
  ``MLflowLoggerCallback`` into a SQLite MLflow store;
* Optuna: one study, ``n_jobs=C`` threads, RDB storage on SQLite, N trials each ``trial.report``-ing R values.

Columns: wall time of the whole study (driver process start to exit), runs per minute, per-run overhead
(``(wall x C - N x R x t_eval) / N``: the CPU-slot seconds each run costs beyond its objective, ``t_eval`` timed
here), the driver's peak resident memory (VmHWM of the driver process; Ray's and the workers' memory is not in it),
and the steps found in the store afterwards (each must be stored exactly once: N x R).

    python scripts/bench_scale.py --n 100             # what fits on a shared 2-core machine (minutes)
    python scripts/bench_scale.py --n 1000            # the issue's 1,000-run figure
"""
from __future__ import annotations

import argparse
import math
import os
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def branin(x0: float, x1: float) -> float:
    a, b, c, r, s, t = 1.0, 5.1 / (4 * math.pi ** 2), 5 / math.pi, 6.0, 10.0, 1 / (8 * math.pi)
    return a * (x1 - b * x0 ** 2 + c * x0 - r) ** 2 + s * (1 - t) * math.cos(x0) + s


def eval_seconds() -> float:
    """Seconds per Branin evaluation (with its random draw), as the baselines' objectives do it."""
    import numpy as np

    rng = np.random.default_rng(0)
    start = time.perf_counter()
    for _ in range(20000):
        branin(rng.uniform(-5, 10), rng.uniform(0, 15))
    return (time.perf_counter() - start) / 20000


# -- the ways, each run in its own process (the driver) ----------------------------------------------------
def run_tune(n: int, rounds: int, cpus: int, folder: Path) -> None:
    os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")  # a loopback-only local Ray
    import numpy as np
    import ray
    from ray import tune
    from ray.air.integrations.mlflow import MLflowLoggerCallback

    def trainable(config: dict) -> None:
        rng = np.random.default_rng(config["seed"])
        best = math.inf
        for _ in range(rounds):
            value = branin(rng.uniform(-5, 10), rng.uniform(0, 15))
            best = min(best, value)
            tune.report({"value": value, "best_value": best})

    ray.init(address="local", num_cpus=cpus, include_dashboard=False, _node_ip_address="127.0.0.1")  # a new one
    tuner = tune.Tuner(
        tune.with_resources(trainable, {"cpu": 1}),
        param_space={"seed": tune.grid_search(list(range(n)))},
        run_config=tune.RunConfig(name="bench_scale", storage_path=str(folder / "tune"), verbose=0,
                                  callbacks=[MLflowLoggerCallback(tracking_uri=f"sqlite:///{folder / 'tune.db'}",
                                                                  experiment_name="bench_scale_tune")]))
    tuner.fit()


def run_optuna(n: int, rounds: int, cpus: int, folder: Path) -> None:
    import numpy as np
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(storage=f"sqlite:///{folder / 'optuna.db'}", study_name="bench_scale",
                                sampler=optuna.samplers.RandomSampler(seed=0))

    def objective(trial: optuna.Trial) -> float:
        rng = np.random.default_rng(trial.number)
        best = math.inf
        for step in range(1, rounds + 1):
            value = branin(rng.uniform(-5, 10), rng.uniform(0, 15))
            best = min(best, value)
            trial.report(value, step)
        return best

    study.optimize(objective, n_trials=n, n_jobs=cpus)


def hpoflow_command(n: int, rounds: int, cpus: int, folder: Path) -> list[str]:
    return [sys.executable, "-m", "hpoflow", "-m", "hydra/launcher=ray", f"hydra.launcher.num_cpus={cpus}",
            "algo=random", "task=branin", f"seed=range(0,{n})", f"budget.rounds={rounds}", "progress=false",
            f"tracking.uri=sqlite:///{folder / 'hpoflow.db'}", "tracking.experiment=bench_scale"]


# -- measuring -----------------------------------------------------------------------------------------------
def _peak_kib(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def measure(cmd: list[str], cwd: Path) -> tuple[float, float, int, str]:
    """Wall seconds, driver peak MiB, exit status and the output's tail of ``cmd``."""
    env = dict(os.environ, PYTHONPATH=f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    peak = [0]

    def poll() -> None:
        while proc.poll() is None:
            peak[0] = max(peak[0], _peak_kib(proc.pid))
            time.sleep(0.2)

    watcher = threading.Thread(target=poll, daemon=True)
    watcher.start()
    out, _ = proc.communicate()
    wall = time.perf_counter() - start
    watcher.join()
    return wall, peak[0] / 1024, proc.returncode, out[-3000:]


def steps(db: Path, sql: str) -> tuple[int, int]:
    """(rows, distinct (run, step) pairs) that ``sql`` counts."""
    with sqlite3.connect(db) as con:
        return con.execute(sql).fetchone()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=1000, help="runs (trials) per way")
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--cpus", type=int, default=2)
    parser.add_argument("--ways", default="hpoflow,tune,optuna")
    parser.add_argument("--way", help=argparse.SUPPRESS)  # internal: run one baseline in this process
    parser.add_argument("--folder", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.way:
        {"tune": run_tune, "optuna": run_optuna}[args.way](args.n, args.rounds, args.cpus, Path(args.folder))
        return 0
    for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[name] = "1"
    t_eval = eval_seconds()
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench_scale-") as tmp:
        folder = Path(tmp)
        for way in args.ways.split(","):
            if way == "hpoflow":
                cmd = hpoflow_command(args.n, args.rounds, args.cpus, folder)
                count = ("hpoflow.db", "SELECT count(*), count(DISTINCT run_uuid || ':' || step) FROM metrics "
                                       "WHERE key = 'query_cost'")
            else:
                cmd = [sys.executable, __file__, "--way", way, "--n", str(args.n), "--rounds", str(args.rounds),
                       "--cpus", str(args.cpus), "--folder", str(folder)]
                count = {"tune": ("tune.db", "SELECT count(*), count(DISTINCT run_uuid || ':' || step) FROM metrics "
                                             "WHERE key = 'value'"),
                         "optuna": ("optuna.db", "SELECT count(*), count(DISTINCT trial_id || ':' || step) FROM "
                                                 "trial_intermediate_values")}[way]
            wall, peak, status, tail = measure(cmd, folder)
            if status != 0:
                print(f"{way} failed (exit {status}):\n{tail}", file=sys.stderr)
                return 1
            stored, distinct = steps(folder / count[0], count[1])
            overhead = (wall * args.cpus - args.n * args.rounds * t_eval) / args.n
            rows.append((way, wall, 60 * args.n / wall, overhead, peak, stored, distinct))
    print(f"bench_scale: N={args.n} runs x {args.rounds} rounds, random search on Branin, {args.cpus} CPUs, SQLite "
          f"stores; objective {t_eval * 1e6:.1f} us/evaluation; load average (1 min) at the end "
          f"{os.getloadavg()[0]:.1f}")
    print("| way | wall s | runs/min | overhead s/run | driver peak MiB | steps stored (distinct) |")
    print("|---|---|---|---|---|---|")
    for way, wall, rate, overhead, peak, stored, distinct in rows:
        ok = "" if stored == distinct == args.n * args.rounds else " (NOT exactly once)"
        print(f"| {way} | {wall:.1f} | {rate:.1f} | {overhead:.2f} | {peak:.0f} | {stored} ({distinct}){ok} |")
    base = dict((r[0], r[1]) for r in rows)
    if "hpoflow" in base:
        ratios = [f"{base['hpoflow'] / base[w]:.2f}x {w}" for w in ("tune", "optuna") if w in base]
        print("hpoflow wall time: " + ", ".join(ratios) if ratios else "")
    return 0


if __name__ == "__main__":
    sys.exit(main())
