"""CLI smoke tests of go_ucb (both variants), turbo and surrogate=nn, read back with MLflow's client."""
from __future__ import annotations

import pytest
from mlflow.tracking import MlflowClient

from tests.conftest import mlflow_runs

TINY_NN = ("surrogate.iterations=100", "surrogate.restarts=1", "algo.advanced.ascent_steps=10",
           "algo.advanced.raw_samples=64")


@pytest.mark.parametrize("variant", ["ball", "bonus"])
def test_go_ucb_cli_logs_phase_and_ball_diagnostics(run_cli, store, variant):
    run_cli("algo=go_ucb", f"algo.variant={variant}", "task=go_ucb_f1", "task.dim=3", "budget.rounds=6",
            "algo.advanced.refit_iterations=50", *TINY_NN, f"tracking.uri={store}")
    (run,) = mlflow_runs(store, "go_ucb_f1")
    assert run.info.status == "FINISHED" and run.data.tags["algo"] == "go_ucb"
    client = MlflowClient(tracking_uri=store)
    phase = [m.value for m in sorted(client.get_metric_history(run.info.run_id, "phase"), key=lambda m: m.step)]
    assert phase == [0.0, 0.0, 0.0, 1.0, 1.0, 1.0]  # n_init = ceil(sqrt(6))
    keys = {"acquisition", "w_drift", "cumulative_regret"} | (
        {"beta", "ball_radius"} if variant == "ball" else {"bonus_coef"}
    )
    assert keys <= set(run.data.metrics)
    assert len(client.get_metric_history(run.info.run_id, "acquisition")) == 3


def test_turbo_cli_logs_trust_region(run_cli, store):
    run_cli("algo=turbo", "task=branin", "budget.rounds=8", "algo.n_init=4", f"tracking.uri={store}")
    (run,) = mlflow_runs(store, "branin")
    assert run.info.status == "FINISHED"
    history = MlflowClient(tracking_uri=store).get_metric_history(run.info.run_id, "tr_length")
    assert len(history) == 8 and {"restarts", "tr_failures", "regret"} <= set(run.data.metrics)


def test_gp_ei_runs_on_the_neural_surrogate(run_cli, store):
    run_cli("algo=gp_ei", "surrogate=nn", "surrogate.iterations=100", "surrogate.restarts=1", "task=branin",
            "budget.rounds=5", "algo.n_init=3", f"tracking.uri={store}")
    (run,) = mlflow_runs(store, "branin")
    assert run.info.status == "FINISHED" and run.data.tags["surrogate"] == "nn"
    assert run.data.metrics["query_cost"] == 5


def test_go_ucb_bad_variant_is_a_one_line_error(run_cli):
    proc = run_cli("algo=go_ucb", "algo.variant=nope", "task=branin", check=False)
    assert proc.returncode != 0 and "algo.variant" in proc.stderr and "ball" in proc.stderr


def test_go_ucb_paper_preset_runs_from_the_cli_and_logs_its_preset(run_cli, store):
    run_cli("algo=go_ucb", "algo.preset=paper", "task=go_ucb_f1", "task.dim=3", "budget.rounds=6",
            "algo.advanced.ascent_steps=20", "algo.advanced.raw_samples=64", "surrogate.iterations=50",
            f"tracking.uri={store}")
    (run,) = mlflow_runs(store, "go_ucb_f1")
    assert run.info.status == "FINISHED" and run.data.params["algo.preset"] == "paper"
    assert {"beta", "acquisition"} <= set(run.data.metrics)


def test_gp_ei_skopt_preset_uses_ten_random_initial_points(run_cli, store):
    run_cli("algo=gp_ei", "algo.preset=skopt", "task=branin", "budget.rounds=11", "algo.optimizer.raw_samples=64",
            "algo.optimizer.num_restarts=2", f"tracking.uri={store}")
    (run,) = mlflow_runs(store, "branin")
    assert run.info.status == "FINISHED"
    phase = [m.value for m in sorted(MlflowClient(tracking_uri=store).get_metric_history(run.info.run_id, "phase"),
                                     key=lambda m: m.step)]
    assert phase == [0.0] * 10 + [1.0]


@pytest.mark.parametrize("algo", ["go_ucb", "gp_pi"])
def test_unknown_preset_is_a_one_line_error(run_cli, algo):
    proc = run_cli(f"algo={algo}", "algo.preset=nope", "task=branin", check=False)
    assert proc.returncode == 2 and "algo.preset" in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.parametrize("experiment", ["go_ucb_classifiers", "go_ucb_synthetic", "go_ucb_f1"])
def test_go_ucb_studies_compose_and_validate_every_cell(experiment):
    """Each row of the GO-UCB studies composes (the algorithm's surrogate selected) and validates."""
    import yaml
    from hydra import compose, initialize_config_dir
    from omegaconf import OmegaConf

    from hpoflow.config.schema import CONF_DIR, register_configs
    from hpoflow.config.settings import validate

    register_configs()
    sweeper = yaml.safe_load((CONF_DIR / "experiment" / f"{experiment}.yaml").read_text())["hydra"]["sweeper"]
    first = [f"{k}={0 if str(v).startswith('range(') else str(v).split(',')[0]}" for k, v in sweeper["params"].items()]
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        for name, cell in sweeper["cells"].items():
            cfg = compose(config_name="config", overrides=[f"experiment={experiment}", *first,
                                                           *(f"{k}={v}" for k, v in cell.items())])
            settings = validate(OmegaConf.to_container(cfg, resolve=True))
            assert settings.algo.name == cell["algo"], name
            implied = (
                "skopt_gp" if cell["algo"].startswith("skopt_") else "nn" if cell["algo"].startswith("go_ucb") else "gp"
            )
            assert cfg.surrogate.name == implied, name
            if "algo.n_init" in cell:
                assert settings.algo.n_init == cell["algo.n_init"]


def test_go_ucb_with_another_surrogate_is_a_one_line_error(run_cli):
    """algo=go_ucb selects surrogate=nn; an explicit surrogate=gp wins and is refused with the fix named."""
    proc = run_cli("algo=go_ucb", "surrogate=gp", "task=branin", check=False)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "needs the network surrogate (surrogate=nn), got ExactGP" in proc.stderr.strip().splitlines()[-1]
