"""The paper studies of issue #18 (conf/experiment/my_hpo_table2.yaml, ce_gp_ucb_table_a1*.yaml): every value of
every swept choice composes and validates (the others at their first value), and each file says what it studies."""
from __future__ import annotations

import pytest
import yaml
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from hpoflow.app import validate
from hpoflow.schema import CONF_DIR, register_configs

register_configs()
STUDIES = ("my_hpo_table2", "ce_gp_ucb_table_a1", "ce_gp_ucb_table_a1_bernoulli")


@pytest.mark.parametrize("name", STUDIES)
def test_every_swept_choice_of_the_study_composes_and_validates(name):
    text = (CONF_DIR / "experiment" / f"{name}.yaml").read_text()
    assert text.startswith("# @package _global_\n# " + name)
    params = yaml.safe_load(text)["hydra"]["sweeper"]["params"]
    swept = {k: str(v).split(",") for k, v in params.items()}
    seeds = swept.pop("seed")
    first = {k: v[0] for k, v in swept.items()}
    jobs = [first] + [{**first, key: value} for key, values in swept.items() for value in values[1:]
                      if not isinstance(yaml.safe_load(value), (int, float))]  # numbers: the schema types them
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        for job in jobs:
            overrides = [f"experiment={name}", f"seed={seeds[0]}", *(f"{k}={v}" for k, v in job.items())]
            s = validate(OmegaConf.to_container(compose(config_name="config", overrides=overrides), resolve=True))
            assert s.raw["tracking"]["experiment"] == name.removesuffix("_bernoulli")
            for key, value in job.items():
                group, _, field = key.partition(".")
                got = s.raw[group]["name"] if not field else OmegaConf.select(OmegaConf.create(s.raw), key)
                assert got == (yaml.safe_load(value) if field else value), (key, got, value)
