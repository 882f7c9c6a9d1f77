"""The Ray launcher's composition shortcut (issue 27): a sweep job that differs from the first one only in plain
values gets exactly the config Hydra composes for it in full; every other job is composed by Hydra."""
from __future__ import annotations

import copy
from pathlib import Path

import pytest
from hydra import initialize_config_dir
from hydra.core.global_hydra import GlobalHydra
from hydra.core.hydra_config import HydraConfig
from hydra.errors import ConfigCompositionException
from hydra.types import RunMode
from omegaconf import OmegaConf, open_dict

import hpoflow.__main__  # noqa: F401 - registers hpoflow's structured configs, as the CLI does
from hydra_plugins.hpoflow_ray_launcher.compose import SweepComposer

CONF = Path(__file__).resolve().parents[1] / "conf"


def _resolved_job(cfg):
    """The task config as the job sees it (resolved; the fields a launcher sets at run time filled in)."""
    cfg = copy.deepcopy(cfg)
    with open_dict(cfg):
        cfg.hydra.job.num, cfg.hydra.job.id, cfg.hydra.runtime.output_dir = 0, "job_0", "/out"
    HydraConfig.instance().set_config(cfg)
    with open_dict(cfg):
        del cfg["hydra"]
    return OmegaConf.to_container(cfg, resolve=True)


def test_value_only_jobs_are_copies_equal_to_hydras_full_composition():
    jobs = [["algo=random", "task=branin", f"seed={s}", f"budget.rounds={r}"] for r in (3, 7) for s in (0, 1)]
    jobs += [["algo=gp_ei", "task=branin", "seed=1", "budget.rounds=3"],      # another config group: in full
             ["algo=random", "task=branin", "seed=1", "budget.rounds=3", "+extra=1"]]  # another key set: in full
    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        loader = GlobalHydra.instance().config_loader()
        master = loader.load_configuration("config", overrides=[], run_mode=RunMode.MULTIRUN)
        full = type(loader).load_sweep_config
        composer = SweepComposer(loader, lambda m, o: full(loader, m, o))
        for job in jobs:
            fast, slow = composer.compose(master, job), full(loader, master, job)
            assert OmegaConf.to_container(fast) == OmegaConf.to_container(slow), job  # hydra node included
            assert _resolved_job(fast) == _resolved_job(slow), job
        assert (composer.shortcuts, composer.full_compositions) == (3, 3)
        with pytest.raises(ConfigCompositionException):  # a bad value: Hydra's own error, from its composition
            composer.compose(master, ["algo=random", "task=branin", "seed=abc", "budget.rounds=3"])
