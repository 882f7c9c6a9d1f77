"""experiment=bbob_small|sklearn_small: every algorithm and every task setting of the grid composes and validates
(each algorithm on the first task setting, each task setting with the first algorithm; nothing runs)."""
from __future__ import annotations

import itertools

import pytest
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from hpoflow.config import registry
from hpoflow.config.schema import CONF_DIR, register_configs
from hpoflow.config.settings import validate

pytestmark = pytest.mark.integration  # many jobs composed or run in-process: make test, not test-fast

register_configs()


@pytest.mark.parametrize("study", ["bbob_small", "sklearn_small"])
def test_every_job_of_the_study_composes_and_validates(study):
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = compose(config_name="config", overrides=[f"experiment={study}"], return_hydra_config=True)
        params = {k: str(v).split(",") for k, v in OmegaConf.to_container(cfg.hydra.sweeper.params).items()}
        assert cfg.tracking.experiment == study and cfg.budget.rounds == {"bbob_small": 40, "sklearn_small": 20}[study]
        algos = params.pop("algo")
        assert {"random", "gp_ei", "turbo", "go_ucb", "optuna_tpe", "optuna_gp", "botorch_logei"} <= set(algos)
        keys, grid = list(params), list(itertools.product(*params.values()))
        cases = [(algos[0], values) for values in grid] + [(algo, grid[0]) for algo in algos[1:]]
        for algo, values in cases:
            if registry.get("algorithm", algo).missing():
                continue  # a peer without the extra: its job would stop with the pip install line
            overrides = [f"experiment={study}", f"algo={algo}", *(f"{k}={v}" for k, v in zip(keys, values))]
            settings = validate(OmegaConf.to_container(compose(config_name="config", overrides=overrides),
                                                       resolve=True))
            assert settings.algo_entry.name == algo and settings.task_entry.name == params["task"][0]
            for key, value in zip(keys, values):
                assert str(getattr(settings.task, key.removeprefix("task."), None) if key.startswith("task.")
                           else settings.seed if key == "seed" else params["task"][0]) == value, key
