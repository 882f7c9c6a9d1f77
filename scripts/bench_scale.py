"""A study at scale, three ways: hpoflow's Ray launcher vs Ray Tune vs Optuna (random search on Branin).

One invocation, one table. Each way runs N runs ("trials") of random search with ``--rounds`` evaluations, every
evaluation stored as one step, on ``--cpus`` CPUs of this machine, into a store of the kind ``--store`` names:

* hpoflow: ``python -m hpoflow -m hydra/launcher=ray hydra.launcher.num_cpus=C algo=random task=branin
  seed=range(0,N) budget.rounds=R`` (a study: N child runs under one parent);
* hpoflow_db (``--store postgresql`` only): the same study with ``tracking.uri=postgresql+psycopg2://...``, the
  MLflow database itself, no server between (as Optuna writes to its database);
* Ray Tune: ``tune.Tuner`` on a local Ray of C CPUs, N trials each reporting R values, with
  ``MLflowLoggerCallback`` into an MLflow store of the same kind;
* Optuna: one study, ``n_jobs=C`` threads, RDB storage, N trials each ``trial.report``-ing R values.

``--store sqlite``: each way its own SQLite file. ``--store postgresql``: one PostgreSQL started by
``scripts/tracking_server.sh`` (free loopback ports) with MLflow's server on it: hpoflow and Ray Tune log to
that server (``http://``), hpoflow_db to its database directly, Optuna's RDB storage is a database of its own
on the same PostgreSQL.

Columns: wall time of the whole study (driver process start to exit), runs per minute, per-run overhead
(``(wall x C - N x R x t_eval) / N``: the CPU-slot seconds each run costs beyond its objective, ``t_eval`` timed
here), CPU seconds per run of the study's processes (the driver and everything it started: Ray and its
workers; sampled from /proc every 0.5 s, so a robust figure on a shared machine where wall time depends on
the neighbours' load) and of the tracking server (MLflow server + PostgreSQL, ``--store postgresql`` only), the
driver's peak resident memory (VmHWM of the driver process), and the steps found in the store afterwards
(each must be stored exactly once: N x R).

``--n-tune`` runs Ray Tune on fewer trials than the others (at about 10 s of wall time per trial on 2 CPUs,
1,000 trials take hours): its row says its N, and the ratios compare wall time *per run* then.

    python scripts/bench_scale.py --n 100                       # what fits on a shared 2-core machine (minutes)
    python scripts/bench_scale.py --n 1000                      # the issue's 1,000-run figure
    python scripts/bench_scale.py --n 1000 --store postgresql   # ... into the PostgreSQL-backed server
    python scripts/bench_scale.py --n 1000 --report              # ... and time the report over hpoflow's study
    python scripts/bench_scale.py --n 1000 --store postgresql --ways hpoflow_db,optuna   # same database kind
"""
from __future__ import annotations

import argparse
import contextlib
import math
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

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
def run_tune(n: int, rounds: int, cpus: int, folder: Path, store: str) -> None:
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
    tracking_uri = store or f"sqlite:///{folder / 'tune.db'}"
    tuner = tune.Tuner(
        tune.with_resources(trainable, {"cpu": 1}),
        param_space={"seed": tune.grid_search(list(range(n)))},
        run_config=tune.RunConfig(name="bench_scale", storage_path=str(folder / "tune"), verbose=0,
                                  callbacks=[MLflowLoggerCallback(tracking_uri=tracking_uri,
                                                                  experiment_name="bench_scale_tune")]))
    tuner.fit()


def run_optuna(n: int, rounds: int, cpus: int, folder: Path, store: str) -> None:
    import numpy as np
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(storage=store or f"sqlite:///{folder / 'optuna.db'}", study_name="bench_scale",
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


def hpoflow_command(n: int, rounds: int, cpus: int, folder: Path, store: str, batch: int | None = None) -> list[str]:
    return [sys.executable, "-m", "hpoflow", "-m", "hydra/launcher=ray", f"hydra.launcher.num_cpus={cpus}",
            *([f"hydra.sweeper.max_batch_size={batch}"] if batch else []),
            "algo=random", "task=branin", f"seed=range(0,{n})", f"budget.rounds={rounds}", "progress=false",
            f"tracking.uri={store or 'sqlite:///' + str(folder / 'hpoflow.db')}", "tracking.experiment=bench_scale"]


# -- measuring -----------------------------------------------------------------------------------------------
def _peak_kib(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def _cpu_ticks(pid: int) -> tuple[int, int]:
    """(parent pid, user + system clock ticks) of a live process, (-1, 0) if it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return int(fields[1]), int(fields[11]) + int(fields[12])
    except (OSError, IndexError, ValueError):
        return -1, 0


def _tree_ticks(roots: set[int], seen: dict[int, int]) -> None:
    """Record the CPU ticks of every process under ``roots`` (their descendants included) into ``seen``."""
    parents = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            parents[int(entry.name)] = _cpu_ticks(int(entry.name))
    for pid, (_, ticks) in parents.items():
        up, hops = pid, 0
        while up not in roots and up > 1 and hops < 50:
            up, hops = parents.get(up, (-1, 0))[0], hops + 1
        if up in roots:
            seen[pid] = max(seen.get(pid, 0), ticks)


def measure(cmd: list[str], cwd: Path, servers: set[int], tree: Path = ROOT,
            ) -> tuple[float, float, float, float, int, str]:
    """Wall seconds, CPU seconds of the command's process tree, CPU seconds of the ``servers`` trees meanwhile,
    driver peak MiB, exit status and the output's tail of ``cmd`` (run with ``tree``'s hpoflow)."""
    env = dict(os.environ, PYTHONPATH=f"{tree}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    hz = os.sysconf("SC_CLK_TCK")
    server_before: dict[int, int] = {}
    _tree_ticks(servers, server_before)
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    peak = [0]
    mine: dict[int, int] = {}
    server_after: dict[int, int] = {}

    def poll() -> None:
        while proc.poll() is None:
            peak[0] = max(peak[0], _peak_kib(proc.pid))
            _tree_ticks({proc.pid}, mine)
            _tree_ticks(servers, server_after)
            time.sleep(0.5)

    watcher = threading.Thread(target=poll, daemon=True)
    watcher.start()
    out, _ = proc.communicate()
    wall = time.perf_counter() - start
    watcher.join()
    _tree_ticks(servers, server_after)
    cpu = sum(mine.values()) / hz
    server_cpu = sum(t - server_before.get(pid, 0) for pid, t in server_after.items()) / hz
    return wall, cpu, server_cpu, peak[0] / 1024, proc.returncode, out[-3000:]


def _sql_counts(url: str, sql: str) -> tuple[int, int]:
    """(rows, distinct (run, step) pairs) that ``sql`` counts in the database at ``url`` (SQLAlchemy URL)."""
    import sqlalchemy

    engine = sqlalchemy.create_engine(url)
    try:
        with engine.connect() as con:
            row = con.execute(sqlalchemy.text(sql)).one()
            return int(row[0]), int(row[1])
    finally:
        engine.dispose()


@contextlib.contextmanager
def postgres(folder: Path, keep: bool = False) -> Iterator[dict[str, Any]]:
    """PostgreSQL + MLflow's server from scripts/tracking_server.sh on free loopback ports, and a second database
    ``optuna`` on it; yields the URIs and the server processes' pids. ``keep``: the server's folder is
    ``<folder>/server`` and stays after the server stops (``HPOFLOW_SERVER_DIR=<folder>/server
    scripts/tracking_server.sh start`` serves it again)."""
    import socket

    def free_port() -> int:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            return int(sock.getsockname()[1])

    if keep:
        server_dir = folder / "server"
        server_dir.mkdir(parents=True)
    else:
        server_dir = Path(tempfile.mkdtemp(prefix="bench_scale-server-"))  # postgres must reach it: not private
    os.chmod(server_dir, 0o755)
    env = dict(os.environ, HPOFLOW_SERVER_DIR=str(server_dir), PORT=str(free_port()), PG_PORT=str(free_port()),
               PYTHON=sys.executable, WORKERS="2")
    script = ROOT / "scripts" / "tracking_server.sh"
    started = subprocess.run(["bash", str(script), "start"], env=env, capture_output=True, text=True, timeout=900)
    try:
        if started.returncode != 0:
            raise RuntimeError(f"tracking_server.sh start failed: {started.stdout}{started.stderr}")
        password = (server_dir / "pg_password").read_text().strip()
        base = f"postgresql+psycopg2://mlflow:{password}@127.0.0.1:{env['PG_PORT']}"
        import sqlalchemy

        engine = sqlalchemy.create_engine(f"{base}/mlflow", isolation_level="AUTOCOMMIT")
        with engine.connect() as con:
            con.execute(sqlalchemy.text("CREATE DATABASE optuna"))
        engine.dispose()
        pids = {int((server_dir / "run" / "mlflow.pid").read_text())}
        pids.add(int((server_dir / "pgdata" / "postmaster.pid").read_text().split()[0]))
        yield {"http": f"http://127.0.0.1:{env['PORT']}", "mlflow_db": f"{base}/mlflow",
               "optuna_db": f"{base}/optuna", "pids": pids}
    finally:
        subprocess.run(["bash", str(script), "stop"], env=env, capture_output=True, timeout=300)
        if not keep:
            shutil.rmtree(server_dir, ignore_errors=True)


MLFLOW_STEPS = ("SELECT count(*), count(DISTINCT m.run_uuid || ':' || m.step) FROM metrics m JOIN runs r "
                "ON r.run_uuid = m.run_uuid JOIN experiments e ON e.experiment_id = r.experiment_id "
                "WHERE e.name = '{experiment}' AND m.key = '{key}'")
OPTUNA_STEPS = "SELECT count(*), count(DISTINCT trial_id || ':' || step) FROM trial_intermediate_values"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=1000, help="runs (trials) per way")
    parser.add_argument("--n-tune", type=int, help="trials for Ray Tune (default: --n)")
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--cpus", type=int, default=2)
    parser.add_argument("--ways", default="hpoflow,tune,optuna", help="any of hpoflow, hpoflow_db (postgresql "
                        "only), tune, optuna, comma-separated")
    parser.add_argument("--store", choices=("sqlite", "postgresql"), default="sqlite")
    parser.add_argument("--report", action="store_true", help="then time python -m hpoflow.report over hpoflow's "
                        "study (its N runs, read from the same store)")
    parser.add_argument("--baseline", type=Path, help="another checkout of hpoflow: adds the way <first hpoflow way>"
                        "@baseline, the same study with that checkout's code (a before/after in one invocation)")
    parser.add_argument("--keep", type=Path, help="a new folder for the stores, the runs and the server's data, kept "
                        "afterwards (default: a temporary folder, deleted): a failed --report can be re-run over it")
    parser.add_argument("--batch", type=int, help="hpoflow's sweeps launch N jobs at a time "
                        "(hydra.sweeper.max_batch_size: the driver composes and holds one batch, not the whole sweep)")
    parser.add_argument("--way", help=argparse.SUPPRESS)  # internal: run one baseline in this process
    parser.add_argument("--folder", help=argparse.SUPPRESS)
    parser.add_argument("--uri", default="", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.way:
        {"tune": run_tune, "optuna": run_optuna}[args.way](args.n, args.rounds, args.cpus, Path(args.folder),
                                                           args.uri)
        return 0
    for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[name] = "1"
    t_eval = eval_seconds()
    rows = []
    reports: list[str] = []
    if args.keep and args.keep.exists():
        parser.error(f"--keep {args.keep} exists; give a new folder")
    unknown = sorted(set(args.ways.split(",")) - {"hpoflow", "hpoflow_db", "tune", "optuna"})
    if unknown or ("hpoflow_db" in args.ways.split(",") and args.store != "postgresql"):
        parser.error(f"--ways {args.ways}: " + (f"unknown {', '.join(unknown)}; " if unknown else "") +
                     "allowed: hpoflow, hpoflow_db (with --store postgresql), tune, optuna")
    scratch = (contextlib.nullcontext(str(args.keep)) if args.keep
               else tempfile.TemporaryDirectory(prefix="bench_scale-"))
    with scratch as tmp, contextlib.ExitStack() as stack:
        folder = Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        server: dict[str, Any] = (stack.enter_context(postgres(folder, keep=bool(args.keep)))
                                  if args.store == "postgresql" else {})
        ways = args.ways.split(",")
        if args.baseline:  # before the first hpoflow way, into the same kind of store
            first = next((i for i, w in enumerate(ways) if w.startswith("hpoflow")), 0)
            ways.insert(first, (ways[first] if ways[first].startswith("hpoflow") else "hpoflow") + "@baseline")
        for way in ways:
            n = args.n_tune if way == "tune" and args.n_tune else args.n
            sqlite_url = f"sqlite:///{folder / (way + '.db')}"
            if way == "optuna":
                uri = server.get("optuna_db", sqlite_url)
                count = (uri, OPTUNA_STEPS)
            else:
                uri = server.get("mlflow_db" if way.startswith("hpoflow_db") else "http", sqlite_url)
                key = "value" if way == "tune" else "query_cost"
                experiment = {"tune": "bench_scale_tune", "hpoflow": "bench_scale", "hpoflow_db": "bench_scale_db",
                              "hpoflow_db@baseline": "bench_scale_db_baseline"}.get(way, "bench_scale_baseline")
                count = (server.get("mlflow_db", sqlite_url), MLFLOW_STEPS.format(experiment=experiment, key=key))
            if way.startswith("hpoflow"):
                cmd = hpoflow_command(n, args.rounds, args.cpus, folder, uri, args.batch)
                if way != "hpoflow":
                    cmd[-1] = f"tracking.experiment={experiment}"
            else:
                cmd = [sys.executable, __file__, "--way", way, "--n", str(n), "--rounds", str(args.rounds),
                       "--cpus", str(args.cpus), "--folder", str(folder), "--uri", uri]
            wall, cpu, server_cpu, peak, status, tail = measure(
                cmd, folder, server.get("pids", set()), args.baseline if way.endswith("@baseline") else ROOT)
            if status != 0:
                print(f"{way} failed (exit {status}):\n{tail}", file=sys.stderr)
                return 1
            stored, distinct = _sql_counts(*count)
            overhead = (wall * args.cpus - n * args.rounds * t_eval) / n
            rows.append((way, n, wall, 60 * n / wall, overhead, cpu / n, server_cpu / n, peak, stored, distinct,
                         n * args.rounds))
            print(f"  {way}: N={n} wall {wall:.1f} s, CPU {cpu / n:.2f} s/run, server CPU {server_cpu / n:.2f} s/run, "
                  f"driver peak {peak:.0f} MiB, steps {stored} ({distinct}); load average {os.getloadavg()[0]:.1f}",
                  file=sys.stderr, flush=True)
            if way == "hpoflow" and args.report:
                report_cmd = [sys.executable, "-m", "hpoflow.report", f"tracking.uri={uri}",
                              "tracking.experiment=bench_scale", f"report.out={folder / 'report'}"]
                r_wall, r_cpu, r_server, _, r_status, r_tail = measure(report_cmd, folder, server.get("pids", set()))
                if r_status != 0:  # noted in the table's footer; the other ways still run
                    print(f"the report failed (exit {r_status}):\n{r_tail}", file=sys.stderr)
                    reports.append(f"python -m hpoflow.report over hpoflow's {n} runs FAILED (exit {r_status}) after "
                                   f"{r_wall:.1f} s: {r_tail.strip().splitlines()[-1][:300]}")
                    continue
                reports.append(f"python -m hpoflow.report over hpoflow's {n} runs (tracking.uri={uri.split('://')[0]}"
                               f"://...): {r_wall:.1f} s wall, {r_cpu:.1f} CPU s" +
                               (f", server {r_server:.1f} CPU s" if server else ""))
    kind = "SQLite stores (one file per way)" if args.store == "sqlite" else (
        "PostgreSQL (MLflow server for hpoflow and Ray Tune, the MLflow database for hpoflow_db, RDB storage for "
        "Optuna)")
    print(f"bench_scale: {args.rounds} rounds per run, random search on Branin, {args.cpus} CPUs, {kind}; "
          f"objective {t_eval * 1e6:.1f} us/evaluation; load average (1 min) at the end {os.getloadavg()[0]:.1f}" +
          (f"; hpoflow's sweeps in batches of {args.batch} jobs" if args.batch else ""))
    print("| way | runs | wall s | runs/min | overhead s/run | CPU s/run | server CPU s/run | driver peak MiB | "
          "steps stored (distinct) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for way, n, wall, rate, overhead, cpu, server_cpu, peak, stored, distinct, expected in rows:
        ok = "" if stored == distinct == expected else f" (NOT exactly once: {expected} expected)"
        print(f"| {way} | {n} | {wall:.1f} | {rate:.1f} | {overhead:.2f} | {cpu:.2f} | "
              f"{server_cpu:.2f} | {peak:.0f} | {stored} ({distinct}){ok} |")
    per_run = {r[0]: r[2] / r[1] for r in rows}
    same_n = {r[0]: r[1] for r in rows}
    for mine in ("hpoflow", "hpoflow_db"):
        if mine not in per_run:
            continue
        ratios = [f"{per_run[mine] / per_run[w]:.2f}x {w}" + ("" if same_n[w] == same_n[mine] else
                                                                f" (per run: {w} ran {same_n[w]} trials)")
                  for w in (mine + "@baseline", "tune", "optuna") if w in per_run]
        if ratios:
            target = "<= 2.0x optuna on the same database (issue 42)" if mine == "hpoflow_db" else "<= 1.5x optuna"
            print(f"{mine} wall time: " + ", ".join(ratios) + f" (targets: <= 1.0x tune, {target})")
    for line in reports:
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
