"""Concurrent writers: a joblib sweep of 8 jobs, 4 at a time, on a fresh SQLite store."""
from __future__ import annotations

import sqlite3
from pathlib import Path

from mlflow.tracking import MlflowClient

from tests.conftest import mlflow_runs

JOBS, ROUNDS = 8, 10


def test_parallel_joblib_sweep_on_one_fresh_sqlite_store(run_cli, tmp_path):
    store = f"sqlite:///{tmp_path / 'fresh.db'}"  # not the test's ready-made store: four writers create it
    assert not Path(store.removeprefix("sqlite:///")).exists()
    proc = run_cli("-m", "hydra/launcher=joblib", "hydra.launcher.n_jobs=4", "algo=random", "task=branin",
                   f"seed={','.join(map(str, range(JOBS)))}", f"budget.rounds={ROUNDS}",
                   "tracking.flush_every=1", "tracking.artifacts=false", f"tracking.uri={store}")
    output = proc.stdout + proc.stderr
    assert "locked" not in output.lower() and "Traceback" not in output

    client = MlflowClient(tracking_uri=store)
    experiments = [e for e in client.search_experiments() if e.name == "branin"]
    runs = mlflow_runs(store, "branin")
    statuses = sorted(r.info.status for r in runs)
    rows = {r.data.tags["seed"]: {k: sorted(m.step for m in client.get_metric_history(r.info.run_id, k))
                                  for k in ("value", "query_cost", "wall_time")} for r in runs}
    print(f"\nconcurrent writers: {len(experiments)} experiment 'branin', {len(runs)} runs {set(statuses)}, "
          f"metric rows per run (value/query_cost/wall_time): "
          f"{sorted({tuple(len(v) for v in r.values()) for r in rows.values()})}, "
          f"total metric rows {sum(len(v) for r in rows.values() for v in r.values())}")
    assert len(experiments) == 1
    assert len(runs) == JOBS and statuses == ["FINISHED"] * JOBS
    assert sorted(rows) == [str(s) for s in range(JOBS)] and len({r.data.tags["sweep_id"] for r in runs}) == 1
    for seed, history in rows.items():
        for key, steps in history.items():
            assert steps == list(range(1, ROUNDS + 1)), (seed, key, steps)
    with sqlite3.connect(store.removeprefix("sqlite:///")) as con:
        assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
