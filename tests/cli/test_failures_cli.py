"""Failing objectives through the CLI: on_error=fail|skip, and a failing job inside a multirun."""
from __future__ import annotations

from mlflow.tracking import MlflowClient

from tests.conftest import REPO, cli_env, mlflow_runs

FAULTY = REPO / "tests" / "fixtures" / "faulty"


def faulty_env() -> dict[str, str]:
    env = cli_env()
    env["PYTHONPATH"] = f"{FAULTY}:{env['PYTHONPATH']}"
    return env


def faulty(*overrides: str) -> list[str]:
    return ["--config-dir", str(FAULTY / "conf"), "task=faulty", "algo=random", *overrides]


def _steps(uri: str, run_id: str, key: str) -> list[int]:
    return sorted(m.step for m in MlflowClient(tracking_uri=uri).get_metric_history(run_id, key))


def test_on_error_fail_marks_run_failed_with_error_tag_and_earlier_steps(run_cli, store):
    proc = run_cli(*faulty("task.fail_at=3", "budget.rounds=6", "tracking.flush_every=10", f"tracking.uri={store}"),
                   check=False, env=faulty_env())
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    errors = [ln for ln in proc.stderr.splitlines() if ln.startswith("Error:")]
    assert errors == ["Error: run failed: round 3: RuntimeError: simulated objective crash at round 3"]
    (run,) = mlflow_runs(store)
    assert run.info.status == "FAILED" and "simulated objective crash" in run.data.tags["error"]
    assert _steps(store, run.info.run_id, "query_cost") == [1, 2, 3]  # the failed round too, flushed at the end
    assert _steps(store, run.info.run_id, "value") == [1, 2]


def test_on_error_skip_records_failures_and_finishes(run_cli, store):
    run_cli(*faulty("task.nan_at=2", "task.fail_at=4", "budget.rounds=6", "on_error=skip", f"tracking.uri={store}"),
            env=faulty_env())
    (run,) = mlflow_runs(store)
    assert run.info.status == "FINISHED" and run.data.metrics["failed"] == 2
    assert _steps(store, run.info.run_id, "query_cost") == [1, 2, 3, 4, 5, 6]
    assert _steps(store, run.info.run_id, "value") == [1, 3, 5, 6]  # NaN and the exception: no value
    assert _steps(store, run.info.run_id, "failed") == [2, 3, 4, 5, 6]


def test_failing_job_does_not_stop_the_rest_of_the_sweep(run_cli, store):
    # three distinct configs (identical ones would be one run of the study: its config hash dedupes them)
    proc = run_cli("-m", *faulty("task.fail_at=0,2,5", "budget.rounds=3", f"tracking.uri={store}"), check=False,
                   env=faulty_env())
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert "Error: run failed: round 2" in proc.stderr and "the sweep had failed jobs" in proc.stderr
    runs = mlflow_runs(store)
    by_fail = {r.data.params["task.fail_at"]: r.info.status for r in runs}
    assert len(runs) == 3 and sorted(r.info.status for r in runs) == ["FAILED", "FINISHED", "FINISHED"]
    assert by_fail["2"] == "FAILED"  # job 1 failed; job 2 still ran (Hydra's sweeper finishes the batch)
