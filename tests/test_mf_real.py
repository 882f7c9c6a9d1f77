"""experiment=mf_real: the training tasks with a fidelity (conf/mf_task/) x our multi-fidelity methods, random
search and the peers x 5 seeds. Every job composes and validates with a budget of 30 full-fidelity evaluations in
fidelity units; a tiny version of the study runs through the CLI and its report compares against compute."""
from __future__ import annotations

import itertools

import pytest
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from hpoflow.config.schema import CONF_DIR, register_configs
from hpoflow.config.settings import ConfigError, validate
from tests.conftest import mlflow_runs

register_configs()

TASKS = {  # preset -> (task, model, fidelity maximum, budget.cost)
    "breast_cancer_gb": ("breast_cancer", "gb", 54, 1620), "breast_cancer_mlp": ("breast_cancer", "mlp", 27, 810),
    "digits_gb": ("digits", "gb", 27, 810), "digits_mlp": ("digits", "mlp", 27, 810),
    "digits_cnn": ("digits_cnn", None, 9, 270)}
ALGOS = ["random", "hyperband", "asha", "mf_gp", "optuna_tpe_hyperband", "smac_hyperband", "raytune_asha", "dehb"]


@pytest.mark.integration
def test_every_job_of_mf_real_composes_with_30_full_evaluations_of_budget():
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = compose(config_name="config", overrides=["experiment=mf_real"], return_hydra_config=True)
        params = {k: str(v).split(",") for k, v in OmegaConf.to_container(cfg.hydra.sweeper.params).items()}
        assert cfg.tracking.experiment == "mf_real"
        assert params == {"+mf_task": list(TASKS), "seed": ["0", "1", "2", "3", "4"], "algo": ALGOS}
        for preset, algo in itertools.product(TASKS, ALGOS):
            raw = compose(config_name="config", overrides=["experiment=mf_real", f"+mf_task={preset}", f"algo={algo}"])
            task, model, top, cost = TASKS[preset]
            try:
                settings = validate(OmegaConf.to_container(raw, resolve=True))
            except ConfigError as exc:  # a peer whose library is not installed here (dehb is in no extra)
                assert f"algo={algo} needs" in str(exc) and "not installed" in str(exc), exc
            else:
                assert (settings.task_entry.name, settings.algo_entry.name) == (task, algo)
            assert raw.task.get("model") == model and raw.task.fidelity is True
            assert raw.task.get("max_resource", raw.task.get("epochs")) == top and raw.budget.cost == cost == 30 * top


@pytest.mark.cli
def test_a_tiny_mf_real_runs_and_reports_against_compute(run_cli, store, tmp_path):
    """Two presets x three methods x one seed, fidelity 1..6 on 2 folds, 6 full evaluations of budget."""
    run_cli("-m", "experiment=mf_real", "+mf_task=breast_cancer_gb,breast_cancer_mlp", "seed=0",
            "algo=random,hyperband,mf_gp", "task.min_resource=1", "task.max_resource=6", "task.folds=2",
            "budget.cost=36", f"tracking.uri={store}")
    runs = mlflow_runs(store)
    assert sorted((r.data.params["task.model"], r.data.params["algo.name"]) for r in runs) == sorted(
        itertools.product(("gb", "mlp"), ("random", "hyperband", "mf_gp")))
    assert all(r.info.status == "FINISHED" and 36 <= r.data.metrics["query_cost"] < 42 for r in runs)
    proc = run_cli("experiment=mf_real", f"tracking.uri={store}", module="hpoflow.report")
    md = (tmp_path / "report" / "mf_real" / "report.md").read_text()
    assert "## Against compute" in md and "### Cost to reach a target" in md, proc.stdout[-2000:]
