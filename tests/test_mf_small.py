"""experiment=mf_small: every (task, algorithm) job of the study composes and validates with its cost budget
(nothing runs; the study's report is checked on a tiny sweep in tests/report/test_report_cost_cli.py)."""
from __future__ import annotations

import itertools

import pytest
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from hpoflow.config.schema import CONF_DIR, register_configs
from hpoflow.config.settings import validate

pytestmark = pytest.mark.integration

register_configs()


def test_every_job_of_mf_small_composes_with_a_cost_budget():
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = compose(config_name="config", overrides=["experiment=mf_small"], return_hydra_config=True)
        params = {k: str(v).split(",") for k, v in OmegaConf.to_container(cfg.hydra.sweeper.params).items()}
        assert cfg.tracking.experiment == "mf_small" and cfg.budget.cost == 2430 and cfg.budget.rounds == 3000
        assert params == {"task": ["branin_mf", "hartmann6_mf"], "seed": ["0", "1", "2", "3", "4"],
                          "algo": ["sha", "hyperband", "asha", "mf_gp", "random"]}
        for task, algo in itertools.product(params["task"], params["algo"]):
            raw = compose(config_name="config", overrides=["experiment=mf_small", f"task={task}", f"algo={algo}"])
            settings = validate(OmegaConf.to_container(raw, resolve=True))
            assert (settings.task_entry.name, settings.algo_entry.name) == (task, algo)
