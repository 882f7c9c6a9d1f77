"""CLI smoke tests of sho / my_hpo (each variant) and of a black-box baseline on the bilevel tasks."""
from __future__ import annotations

import pytest
from mlflow.tracking import MlflowClient

from tests.conftest import mlflow_runs

SMALL = ("task=ridge", "task.dataset=digits_regression", "task.inner_steps=20")


def test_sho_and_gp_ei_run_on_ridge_and_log_per_iteration_metrics(run_cli, store):
    # SHO at its defaults on the ill-conditioned NIR data (L ≈ 420): the paper's fixed α = 0.01 diverged at
    # iteration 5 there; the default step is 1/L
    run_cli("algo=sho", "task=ridge", "budget.rounds=6", f"tracking.uri={store}")
    run_cli("algo=gp_ei", *SMALL, "budget.rounds=3", f"tracking.uri={store}")
    runs = {r.data.tags["algo"]: r for r in mlflow_runs(store, "ridge")}
    assert set(runs) == {"sho", "gp_ei"} and all(r.info.status == "FINISHED" for r in runs.values())
    sho = runs["sho"]
    assert sho.data.metrics["query_cost"] == 12  # two gradient computations per iteration
    for key in ("lambda", "train_loss", "val_loss", "test_loss", "hypergrad"):
        assert key in sho.data.metrics, key
    history = MlflowClient(tracking_uri=store).get_metric_history(sho.info.run_id, "lambda")
    assert [m.step for m in history] == list(range(1, 7))
    assert runs["gp_ei"].data.metrics["query_cost"] == 60  # 3 evaluations x 20 gradient steps
    from hpoflow.tasks.bilevel import make_bilevel

    assert sho.data.metrics["alpha_step"] < 2 / 420
    for algo, dataset in (("sho", "nir"), ("gp_ei", "digits_regression")):  # each split's exact optimum
        star = make_bilevel("ridge", dataset, seed=0).lambda_star
        assert float(runs[algo].data.tags["task.lambda_star"]) == pytest.approx(star.lam, abs=1e-6)
        assert float(runs[algo].data.tags["task.val_loss_at_lambda_star"]) == pytest.approx(star.val_loss, rel=1e-6)


def test_every_my_hpo_variant_runs_and_logs_residuals_and_steps(run_cli, store):
    run_cli("-m", "algo=my_hpo", "algo.variant=constant,backtracking,full", *SMALL, "budget.rounds=4",
            f"tracking.uri={store}")
    runs = mlflow_runs(store, "ridge")
    assert sorted(r.data.params["algo.variant"] for r in runs) == ["backtracking", "constant", "full"]
    for r in runs:
        assert r.info.status == "FINISHED"
        assert {"lambda", "val_loss", "test_loss", "r_norm", "s_norm"} <= set(r.data.metrics)
        if r.data.params["algo.variant"] == "full":
            assert r.data.metrics["query_cost"] > 8  # exact sub-problems cost many gradients
        else:
            assert r.data.metrics["query_cost"] == 8
            assert {"alpha_step", "beta_step", "delta_step"} <= set(r.data.metrics)


@pytest.mark.slow  # the same path is unit-tested in test_bilevel.py with an in-memory tracker
def test_divergence_ends_the_run_failed_with_its_history_kept(run_cli, store):
    proc = run_cli("algo=sho", "algo.alpha=0.05", "task=ridge", "budget.rounds=150", f"tracking.uri={store}",
                   check=False)
    assert proc.returncode != 0 and "sho diverged at iteration" in proc.stderr
    (run,) = mlflow_runs(store, "ridge")
    assert run.info.status == "FAILED" and "diverged" in run.data.tags["error"]
    history = MlflowClient(tracking_uri=store).get_metric_history(run.info.run_id, "lambda")
    assert len(history) >= 2


def test_gradient_algorithm_refuses_a_black_box_task(run_cli):
    proc = run_cli("algo=my_hpo", "task=branin", "tracking.enabled=false", check=False)
    assert proc.returncode != 0
    assert "needs a differentiable bilevel task (task=ridge or task=logreg)" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_init_lambda_outside_the_task_range_is_a_one_line_error(run_cli):
    proc = run_cli("algo=sho", "task=ridge", "task.lambda_low=-4", "algo.init_lambda=-5",
                   "tracking.enabled=false", check=False)
    assert proc.returncode == 2
    assert proc.stderr.strip() == ("Error: algo: algo.init_lambda=-5.0 is outside the task's λ range [-4.0, 5.0] "
                                   "(task.lambda_low, task.lambda_high)")
