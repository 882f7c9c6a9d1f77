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
    assert run.data.params["surrogate.output_transform"] == "None"  # null in the config ...
    assert run.data.tags["surrogate.output_transform"] == "power"  # ... and what gp_ei made of it
    client = MlflowClient(tracking_uri=store)
    history = client.get_metric_history(run.info.run_id, "cumulative_regret")
    assert [m.step for m in history] == list(range(1, 7))
    for key in ("value", "best_value", "regret", "simple_regret", "query_cost", "wall_time"):
        assert key in run.data.metrics, key
    assert run.data.metrics["query_cost"] == 6
    names = {a.path for a in client.list_artifacts(run.info.run_id)}
    assert {"config.yaml", "summary.json", "trajectory.csv"} <= names
    assert not any(name.endswith(".png") for name in names)  # plots are opt-in (tracking.plots=true)
    assert float(run.data.tags["final.best_value"]) == run.data.metrics["best_value"]


def test_bad_algorithm_name_is_one_line_error(run_cli):
    proc = run_cli("algo=nope", "task=branin", check=False)
    assert proc.returncode != 0
    assert "nope" in proc.stderr and "gp_ei" in proc.stderr


import pytest  # noqa: E402


@pytest.mark.parametrize("override,fragment", [
    ("algo=nope", "algo/nope"),
    ("algo.beta=abc", "algo.beta"),
    ("algo.foo=1", "algo.foo"),
    ("budget.rounds=0", "budget.rounds=0"),
    ("task.dim=-2", "task.dim=-2"),
])
def test_bad_overrides_give_one_line_errors_before_any_work(run_cli, store, override, fragment):
    proc = run_cli("task=rastrigin", override, f"tracking.uri={store}", check=False)
    assert proc.returncode == 2
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error:") and fragment in lines[0], proc.stderr
    assert "Traceback" not in proc.stderr
    assert not mlflow_runs(store)


def test_help_lists_groups_and_cfg_prints_resolved_config(run_cli):
    help_text = run_cli("--help").stdout
    for line in ("algo: ", "task: ", "surrogate: ", "hardware: ", "tracking: "):
        assert line in help_text
    assert "gp_ucb" in help_text and "breast_cancer" in help_text
    cfg = run_cli("--cfg", "job", "task=branin", "seed=7").stdout
    assert "name: branin" in cfg and "seed: 7" in cfg


def test_multirun_sweep_lands_in_one_store_and_report_summarises_it(run_cli, store, tmp_path):
    run_cli("-m", "algo=random,gp_ei", "task=branin", "seed=0,1", "budget.rounds=4", f"tracking.uri={store}")
    runs = mlflow_runs(store, "branin")
    assert len(runs) == 4 and {r.info.status for r in runs} == {"FINISHED"}
    assert len({r.data.tags["sweep_id"] for r in runs}) == 1
    out = run_cli(f"tracking.uri={store}", "tracking.experiment=branin", f"report.out={tmp_path / 'figs'}",
                  module="hpoflow.report").stdout
    assert "| gp_ei | 2 |" in out and "| random | 2 |" in out
    assert list((tmp_path / "figs").glob("*.png"))


def test_tracking_disabled_runs_without_mlflow_store(run_cli, tmp_path):
    proc = run_cli("task=branin", "algo=random", "budget.rounds=3", "tracking=off")
    assert "best value" in proc.stdout and not (tmp_path / "outputs" / "mlflow.db").exists()


def test_user_components_from_own_config_dir_with_target(run_cli, store):
    from tests.conftest import REPO, cli_env

    env = cli_env()
    env["PYTHONPATH"] = f"{REPO / 'examples' / 'plugin'}:{env['PYTHONPATH']}"
    plugin_conf = REPO / "examples" / "plugin" / "conf"
    proc = run_cli("--config-dir", str(plugin_conf), "task=quadratic", "algo=coordinate", "budget.rounds=8",
                   f"tracking.uri={store}", env=env)
    assert "best value" in proc.stdout
    (run,) = mlflow_runs(store, "quadratic")
    assert run.info.status == "FINISHED" and run.data.params["algo.step"] == "0.2"
    assert run.data.metrics["simple_regret"] < 3 * 1.3**2


def test_surrogate_options_of_issue_30_run_through_the_cli_and_are_logged(run_cli, store):
    """surrogate.output_transform=power and surrogate.warp=true (both opt-in, results/ablate_output_transform.txt
    and results/ablate_warp.txt) run end to end under gp_ei and turbo, and land in the run's params."""
    run_cli("-m", "algo=gp_ei,turbo", "task=branin", "budget.rounds=10", "surrogate.output_transform=power",
            "surrogate.warp=true", f"tracking.uri={store}")
    runs = mlflow_runs(store, "branin")
    assert len(runs) == 2 and {r.info.status for r in runs} == {"FINISHED"}
    for run in runs:
        assert run.data.params["surrogate.output_transform"] == "power" and run.data.params["surrogate.warp"] == "True"
        assert run.data.metrics["query_cost"] == 10
