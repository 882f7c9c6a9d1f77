"""The paper studies of issue #18 (conf/experiment/my_hpo_table2.yaml, my_hpo_steps.yaml, ce_gp_ucb_table_a1.yaml): a
job of every
kind of cell and every swept choice composes and validates, with the cell's settings, and each file says what it
reproduces."""
from __future__ import annotations

import pytest
import yaml
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from hpoflow.config.schema import CONF_DIR, register_configs
from hpoflow.config.settings import validate

pytestmark = pytest.mark.integration  # many jobs composed or run in-process: make test, not test-fast

register_configs()
STUDIES = ("my_hpo_table2", "my_hpo_steps", "ce_gp_ucb_table_a1")


def _jobs(name: str) -> list[list[str]]:
    """Overrides of: each swept choice (others first), and one cell per distinct (algo, keys) signature."""
    sweeper = yaml.safe_load((CONF_DIR / "experiment" / f"{name}.yaml").read_text())["hydra"]["sweeper"]
    params = {k: str(v).split(",") for k, v in sweeper["params"].items() if k != "seed"}
    first = [f"{k}={v[0]}" for k, v in params.items()]
    jobs, seen = [], set()
    for cell, settings in sweeper["cells"].items():
        signature = (settings.get("algo"), settings.get("task"), tuple(sorted(settings)))
        if signature not in seen:
            seen.add(signature)
            jobs.append([*first, *(f"{k}={v}" for k, v in settings.items()), f"sweep.cell={cell}"])
    cell = [f"{k}={v}" for k, v in next(iter(sweeper["cells"].values())).items()]
    jobs += [[*(o for o in first if not o.startswith(f"{key}=")), f"{key}={value}", *cell]
             for key, values in params.items() for value in values[1:]]
    return jobs


@pytest.mark.parametrize("name", STUDIES)
def test_every_kind_of_job_of_the_study_composes_and_validates(name):
    assert (CONF_DIR / "experiment" / f"{name}.yaml").read_text().startswith("# @package _global_\n# Paper 00")
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        for overrides in _jobs(name):
            raw = OmegaConf.to_container(compose(config_name="config", overrides=[f"experiment={name}", "seed=0",
                                                                                   *overrides]), resolve=True)
            s = validate(raw)
            assert s.raw["tracking"]["experiment"] == name
            for override in overrides:
                key, _, value = override.partition("=")
                if key in ("algo", "task"):
                    assert s.raw[key]["name"] == value
                elif not key.startswith("sweep."):
                    assert OmegaConf.select(OmegaConf.create(raw), key) == yaml.safe_load(value), override
