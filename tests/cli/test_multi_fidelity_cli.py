"""Multi-fidelity runs through the real CLI, read back with MLflow's client: learning curves per configuration,
cost in fidelity units, and the one-line refusal of a task without a fidelity."""
from __future__ import annotations

from mlflow.tracking import MlflowClient

from tests.conftest import mlflow_runs


def test_asha_run_logs_learning_curves_and_stops_at_the_cost_budget(run_cli, store):
    run_cli("algo=asha", "task=branin_mf", "task.max_resource=27", "budget.rounds=1000", "budget.cost=150",
            "budget.workers=2", f"tracking.uri={store}")
    (run,) = mlflow_runs(store, "branin_mf")
    assert run.info.status == "FINISHED"
    client = MlflowClient(tracking_uri=store)
    cost = client.get_metric_history(run.info.run_id, "query_cost")
    spent = max(m.value for m in cost)
    assert 150 - 27 < spent <= 150  # the budget holds: a job that does not fit beside the running ones never starts
    fidelity = client.get_metric_history(run.info.run_id, "fidelity")
    assert {m.value for m in fidelity} <= {1, 3, 9, 27} and len(fidelity) == len(cost)
    curves = [k for k in run.data.metrics if k.startswith("lc/config_")]
    assert "lc/config_0001" in curves and len(curves) >= 10
    promoted = [k for k in curves if len(client.get_metric_history(run.info.run_id, k)) > 1]
    assert promoted  # a promoted configuration's curve goes on at higher steps, each step once
    for key in promoted:
        steps = [m.step for m in client.get_metric_history(run.info.run_id, key)]
        assert len(steps) == len(set(steps))


def test_stopping_asha_on_cut_replayed_curves(run_cli, store):
    run_cli("algo=asha", "algo.scheduler=asha_stopping", "task=lc_replay", "task.benchmark=digits_cnn",
            "task.max_fidelity=9", "budget.rounds=1000", "budget.cost=30", f"tracking.uri={store}")
    (run,) = mlflow_runs(store, "lc_replay")
    assert run.info.status == "FINISHED"
    fidelity = MlflowClient(tracking_uri=store).get_metric_history(run.info.run_id, "fidelity")
    assert fidelity[0].value == 1 and fidelity[2].value == 9  # the first configuration runs to the cut maximum
    assert {m.value for m in fidelity} <= {1, 3, 9}


def test_mf_gp_with_the_warm_up_on_cut_replayed_curves(run_cli, store):
    run_cli("algo=mf_gp", "algo.scheduler=warm_hyperband", "task=lc_replay", "task.benchmark=digits_gb",
            "task.max_fidelity=9", "budget.rounds=1000", "budget.cost=90", f"tracking.uri={store}")
    (run,) = mlflow_runs(store, "lc_replay")
    assert run.info.status == "FINISHED"
    client = MlflowClient(tracking_uri=store)
    fidelity = [m.value for m in client.get_metric_history(run.info.run_id, "fidelity")]
    assert fidelity[:3] == [2, 6, 9]  # the warm-up's first configuration runs to the (cut) top
    cost = sorted(client.get_metric_history(run.info.run_id, "query_cost"), key=lambda m: m.step)
    assert 90 - 9 < cost[-1].value <= 90  # the loop stops before a job that does not fit in the cost budget


def test_a_multi_fidelity_algorithm_on_a_task_without_fidelity_is_one_line(run_cli):
    proc = run_cli("algo=hyperband", "task=branin", "budget.rounds=5", "tracking=off", check=False)
    assert proc.returncode == 2
    assert "needs a task with a fidelity" in proc.stderr and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_a_run_that_reached_no_full_fidelity_says_it_has_no_incumbent(run_cli, store):
    """Five rounds of Hyperband at 81 units train its first bracket at 1 unit only: no incumbent yet."""
    proc = run_cli("algo=hyperband", "task=branin_mf", "budget.rounds=5", f"tracking.uri={store}")
    assert ("best value: none yet: no evaluation reached the full fidelity (81), the only level an incumbent is "
            "taken from") in proc.stdout and "best config" not in proc.stdout
    (run,) = mlflow_runs(store, "branin_mf")
    assert run.info.status == "FINISHED" and "best_value" not in run.data.metrics and "value" in run.data.metrics
    assert "final.best_value" not in run.data.tags and "final.best_config" not in run.data.tags
    assert float(run.data.tags["final.incumbent_fidelity"]) == 81.0
