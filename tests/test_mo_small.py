"""experiment=mo_small: every (task, algorithm) job of the study composes and validates (nothing runs; a tiny run of
the study and its report: tests/report/test_report_pareto_cli.py)."""
from __future__ import annotations

import itertools

import pytest
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from hpoflow.config.schema import CONF_DIR, register_configs
from hpoflow.config.settings import validate

pytestmark = pytest.mark.integration

register_configs()


def test_every_job_of_mo_small_composes():
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = compose(config_name="config", overrides=["experiment=mo_small"], return_hydra_config=True)
        params = {k: str(v).split(",") for k, v in OmegaConf.to_container(cfg.hydra.sweeper.params).items()}
        assert cfg.tracking.experiment == "mo_small" and cfg.budget.rounds == 50
        assert params == {"task": ["zdt1", "zdt2", "dtlz2"], "seed": ["0", "1", "2", "3", "4"],
                          "algo": ["parego", "random", "optuna_nsga2", "optuna_motpe", "botorch_qnehvi"]}
        for task, algo in itertools.product(params["task"], params["algo"]):
            raw = compose(config_name="config", overrides=["experiment=mo_small", f"task={task}", f"algo={algo}"])
            settings = validate(OmegaConf.to_container(raw, resolve=True))
            assert (settings.task_entry.name, settings.algo_entry.name) == (task, algo)
            assert settings.task_entry.name != "dtlz2" or raw.task.dim == 6
