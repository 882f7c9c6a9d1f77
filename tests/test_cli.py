"""CLI smoke tests through a real subprocess, read back with MLflow's client."""
from __future__ import annotations

from mlflow.tracking import MlflowClient

from tests.conftest import mlflow_runs


def test_single_run_logs_metrics_params_tags_and_artifacts(run_cli, store):
    proc = run_cli("algo=gp_ei", "task=branin", "budget.rounds=6", f"tracking.uri={store}")
    assert "mlflow ui --backend-store-uri" in proc.stdout
    (run,) = mlflow_runs(store, "branin")
    assert run.info.status == "FINISHED"
    assert {"algo", "task", "surrogate", "hardware", "seed"} <= set(run.data.tags)
    assert run.data.tags["algo"] == "gp_ei" and run.data.params["budget.rounds"] == "6"
    client = MlflowClient(tracking_uri=store)
    history = client.get_metric_history(run.info.run_id, "cumulative_regret")
    assert [m.step for m in history] == list(range(1, 7))
    for key in ("value", "best_value", "regret", "simple_regret", "query_cost", "wall_time"):
        assert key in run.data.metrics, key
    assert run.data.metrics["query_cost"] == 6
    names = {a.path for a in client.list_artifacts(run.info.run_id)}
    assert {"config.yaml", "trajectory.csv", "regret.png"} <= names


def test_bad_algorithm_name_is_one_line_error(run_cli):
    proc = run_cli("algo=nope", "task=branin", check=False)
    assert proc.returncode != 0
    assert "nope" in proc.stderr and "gp_ei" in proc.stderr
