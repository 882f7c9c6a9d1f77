"""Reliability reproductions for multi-fidelity resumes, costs and values (the table in results/reliability_round5.txt).

Run from the repository root. ``--src DIR`` runs the same cases against another checkout of the package (e.g. an
export of an earlier commit: ``git archive <rev> | tar -x -C DIR``; copy ``tests/cli/kill_points.py`` there), so that
one invocation per checkout gives the before and after columns.

Cases:
- ``kill``: ``task=lc_replay`` runs (hyperband; asha with 4 simulated workers; hyperband with the warm_hyperband
  scheduler) killed with SIGKILL after their 35th evaluation, resumed and killed again after the resumed process's
  40th, resumed to the end; compared with the same run never killed (curves with a repeated step, units the curves
  hold, cost counted, rounds, equal or not).
- ``sigterm``: asha with 4 thread workers on lc_replay sent SIGTERM after evaluation 30 and 45, then resumed:
  checkpoint round against the rounds in MLflow, units against cost counted.
- ``workers``: asha and hyperband with 2 thread or process workers (and Ray with ``--cases ray``) on ``task=branin_mf``
  (levels 1, 3, 9; 0.02 s a unit), killed with SIGKILL as the run's 9th ``Loop.tell`` starts, resumed to the end: of
  the trials asked and not told when it died, how many were asked again once with the same config id and level;
  trials told twice; curves with a repeated step; units trained against cost counted; the run's status.
- ``library``: objectives with a bad cost, zero costs under a cost budget, a non-finite second objective or
  constraint (each given 20 s).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

KILL = {
    "hyperband": ["algo=hyperband", "task=lc_replay", "task.max_fidelity=27", "budget.cost=400", "seed=2"],
    "asha, 4 simulated workers": ["algo=asha", "task=lc_replay", "task.max_fidelity=27", "budget.cost=400",
                                  "budget.workers=4", "budget.executor=simulated", "seed=2"],
    "warm_hyperband": ["algo=hyperband", "algo.scheduler=warm_hyperband", "task=lc_replay",
                       "task.benchmark=digits_gb", "task.max_fidelity=54", "budget.cost=600", "seed=2"],
}
WORKER_ARGS = ["task=branin_mf", "task.max_resource=9", "task.sleep_per_unit=0.02", "budget.cost=60",
               "budget.workers=2", "seed=2"]
SIGTERM_ARGS = ["algo=asha", "task=lc_replay", "task.max_fidelity=27", "budget.cost=300", "budget.workers=4",
                "budget.executor=thread", "seed=2"]


def _history(uri: str) -> tuple:
    from mlflow.tracking import MlflowClient

    from tests.conftest import mlflow_runs

    (run,) = mlflow_runs(uri)
    client = MlflowClient(tracking_uri=uri)
    keys = [k for k in run.data.metrics if k.startswith("lc/")] + ["query_cost", "fidelity", "value"]
    return run, {k: sorted((m.step, m.value) for m in client.get_metric_history(run.info.run_id, k)) for k in keys}


def _figures(history: dict) -> tuple[int, int, float, int]:
    """(curves with a repeated step, distinct units the curves hold, cost counted, rounds)."""
    curves = {k: [s for s, _ in p] for k, p in history.items() if k.startswith("lc/")}
    repeated = sum(1 for steps in curves.values() if len(set(steps)) != len(steps))
    return repeated, sum(len(set(s)) for s in curves.values()), history["query_cost"][-1][1], len(history["value"])


def kill_cases() -> None:
    from tests.cli.kill_points import run_killed
    from tests.conftest import mlflow_runs

    for name, args in KILL.items():
        d = Path(tempfile.mkdtemp(prefix="rel5_"))
        ref, uri = f"sqlite:///{d}/ref.db", f"sqlite:///{d}/run.db"
        assert run_killed(d / "ref", [*args, f"tracking.uri={ref}"], None).returncode == 0
        assert run_killed(d / "run", [*args, f"tracking.uri={uri}"], 35).returncode == -9
        (crashed,) = mlflow_runs(uri)
        resume = [f"resume={crashed.info.run_id}", f"tracking.uri={uri}"]
        assert run_killed(d / "run", resume, 40).returncode == -9
        assert run_killed(d / "run", resume, None).returncode == 0
        (_, expected), (run, got) = _history(ref), _history(uri)
        a, b = _figures(expected), _figures(got)
        print(f"kill x2 {name}: uninterrupted {a[1]} units = {a[2]:.0f} counted, {a[3]} rounds | killed twice: "
              f"{b[0]} curves with a repeated step, curves hold {b[1]} units, {b[2]:.0f} counted, {b[3]} rounds, "
              f"{run.info.status}, equal to uninterrupted: {expected == got}", flush=True)


def sigterm_cases() -> None:
    from mlflow.tracking import MlflowClient

    from tests.cli.kill_points import run_killed
    from tests.conftest import mlflow_runs

    for at in (30, 45):
        d = Path(tempfile.mkdtemp(prefix="rel5_"))
        uri = f"sqlite:///{d}/m.db"
        proc = run_killed(d / "run", [*SIGTERM_ARGS, f"tracking.uri={uri}"], at, signal_name="SIGTERM")
        (path,) = (d / "run").glob("outputs/runs/*/*/checkpoint.json")
        (run,) = mlflow_runs(uri)
        logged = len(MlflowClient(tracking_uri=uri).get_metric_history(run.info.run_id, "value"))
        saved = json.loads(path.read_text())["round"]
        again = run_killed(d / "run", [f"resume={run.info.run_id}", f"tracking.uri={uri}"], None)
        _, history = _history(uri)
        repeated, units, counted, rounds = _figures(history)
        print(f"SIGTERM after evaluation {at}: exit {proc.returncode}, {run.info.status}, checkpoint round "
              f"{saved}, MLflow rounds {logged}; resumed (exit {again.returncode}): "
              f"{repeated} curves with a repeated step, curves hold {units} units, {counted:.0f} counted, {rounds} "
              "rounds", flush=True)


def worker_cases(executors: tuple[str, ...] = ("thread", "process")) -> None:
    from mlflow.tracking import MlflowClient

    from tests.cli.kill_points import run_killed
    from tests.conftest import mlflow_runs

    for executor in executors:
        for algo in ("asha", "hyperband"):
            d = Path(tempfile.mkdtemp(prefix="rel5_"))
            uri, args = f"sqlite:///{d}/m.db", [f"algo={algo}", f"budget.executor={executor}", *WORKER_ARGS]
            os.environ["HPOFLOW_TEST_KILL_PENDING"] = str(d / "pending.json")
            try:
                killed = run_killed(d / "run", [*args, f"tracking.uri={uri}"], 9, point="tell").returncode
            finally:
                del os.environ["HPOFLOW_TEST_KILL_PENDING"]
            pending = json.loads((d / "pending.json").read_text())
            (run,) = mlflow_runs(uri)
            again = run_killed(d / "run", [f"resume={run.info.run_id}", f"tracking.uri={uri}"], None).returncode
            (run,) = mlflow_runs(uri)
            client = MlflowClient(tracking_uri=uri)
            hist = {k: sorted((m.step, m.value) for m in client.get_metric_history(run.info.run_id, k))
                    for k in ("trial", "config_id", "fidelity", "query_cost")}
            trials = [int(v) for _, v in hist["trial"]]
            told = {int(t): (int(c), f) for (_, t), (_, c), (_, f) in
                    zip(hist["trial"], hist["config_id"], hist["fidelity"])}
            same = sum(told.get(p["trial"]) == (p["config_id"], p["fidelity"]) for p in pending)
            curves = [sorted(m.step for m in client.get_metric_history(run.info.run_id, k))
                      for k in run.data.metrics if k.startswith("lc/")]
            repeated = sum(len(c) != len(set(c)) for c in curves)
            jobs = list(told.values())
            print(f"kill -9 at tell 9, {algo}, 2 {executor} workers (exit {killed}), resumed (exit {again}): "
                  f"{same} of {len(pending)} trials running asked again with the same config id and level; "
                  f"{len(trials) - len(set(trials))} trials told twice, {len(jobs) - len(set(jobs))} jobs run twice; "
                  f"{repeated} curves with a repeated step; {sum(max(c) for c in curves):.0f} units trained, "
                  f"{hist['query_cost'][-1][1]:.0f} counted; {run.info.status}", flush=True)


def library_cases() -> None:
    import hpoflow
    from hpoflow.core.records import Evaluation, ObjectiveFailed

    space = {"x": ("float", 0.0, 1.0)}

    def failing(config: dict) -> float:
        raise ObjectiveFailed("diverged", cost=-100)

    cases = {
        "Evaluation(cost=-1), cost=50, no rounds": lambda: hpoflow.minimize(
            lambda c: Evaluation(value=c["x"], cost=-1), space, algo="random", cost=50, tracking=False),
        "Evaluation(cost=nan), cost=50, no rounds": lambda: hpoflow.minimize(
            lambda c: Evaluation(value=c["x"], cost=math.nan), space, algo="random", cost=50, tracking=False),
        "Evaluation(cost=0), cost=50, no rounds": lambda: hpoflow.minimize(
            lambda c: Evaluation(value=c["x"], cost=0.0), space, algo="random", cost=50, tracking=False),
        "ObjectiveFailed(cost=-100) x 30, on_error=skip": lambda: hpoflow.minimize(
            failing, space, algo="random", rounds=30, on_error="skip", tracking=False),
        "NaN second objective": lambda: hpoflow.minimize(
            lambda c: {"a": c["x"], "b": math.nan}, space, algo="random", rounds=5,
            objectives={"a": "min", "b": "min"}, tracking=False),
        "NaN constraint": lambda: hpoflow.minimize(
            lambda c: {"a": c["x"], "g": math.nan}, space, algo="random", rounds=5, objectives={"a": "min"},
            constraints={"g": ("<=", 0.0)}, tracking=False),
    }

    def alarm(*_: object) -> None:
        raise TimeoutError("still running after 20 s")

    signal.signal(signal.SIGALRM, alarm)
    for name, call in cases.items():
        start = time.perf_counter()
        signal.alarm(20)
        try:
            r = call()
            out = (f"finished: spent {r.summary.get('query_cost')}, {len(r.records)} rounds, "
                   f"{sum(x.failed for x in r.records)} failed")
        except BaseException as exc:  # noqa: BLE001 - what each case ends with is the result
            out = f"{type(exc).__name__}: {str(exc)[:110]}"
        signal.alarm(0)
        print(f"{name}: {out} ({time.perf_counter() - start:.1f} s)", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--src", default=None, help="the checkout whose package is run (default: this one)")
    parser.add_argument("--cases", default="kill,sigterm,library",
                        help="comma-separated: kill, sigterm, workers, ray, library")
    args = parser.parse_args()
    here = Path(__file__).resolve().parents[1]
    root = Path(os.environ.get("RELIABILITY_SRC") or args.src or here).resolve()
    if root != here and not os.environ.get("RELIABILITY_SRC"):  # run this very script against another checkout
        env = {**os.environ, "PYTHONPATH": str(root), "RELIABILITY_SRC": str(root)}
        sys.exit(subprocess.call([sys.executable, __file__, "--cases", args.cases], cwd=root, env=env))
    sys.path.insert(0, str(root))
    print(f"# {root}, load {os.getloadavg()[0]:.1f}", flush=True)
    for case in args.cases.split(","):
        cases = {"kill": kill_cases, "sigterm": sigterm_cases, "workers": worker_cases,
                 "ray": lambda: worker_cases(("ray",)), "library": library_cases}
        cases[case.strip()]()


if __name__ == "__main__":
    main()
