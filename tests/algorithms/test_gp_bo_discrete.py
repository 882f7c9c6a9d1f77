"""algo.discrete=snap: GP-BO's data and proposals at the cells' centres, no configuration proposed twice."""
from __future__ import annotations

import math

import pytest
import torch

from hpoflow.algorithms.base import BuildContext
from hpoflow.algorithms.configs import GPEIConfig
from hpoflow.algorithms.gp_bo import GPEI
from hpoflow.config.settings import ConfigError, validate
from hpoflow.core.records import Direction, Evaluation
from hpoflow.core.space import Categorical, Float, Int, SearchSpace
from hpoflow.surrogates.gp import ExactGP
from hpoflow.tasks.base import Task
from hpoflow.tasks.synthetic import make_branin


class Mixed(Task):
    """Minimise a smooth function of a log-scaled float, an integer and a 3-way categorical."""

    name, direction, optimum = "mixed", Direction.MINIMIZE, None
    space = SearchSpace.of(Float("lr", 1e-4, 1e-1, log=True), Int("layers", 1, 6), Categorical("act", ("a", "b", "c")))

    def evaluate(self, config, *, round, observe=True):
        return Evaluation((math.log10(config["lr"]) + 2) ** 2 + 0.3 * abs(config["layers"] - 4)
                          + {"a": 0.5, "b": 0.0, "c": 1.0}[config["act"]])


def _run(task: Task, discrete: str, rounds: int = 14, seed: int = 0) -> GPEI:
    algo = GPEI(GPEIConfig(n_init=4, discrete=discrete),
                BuildContext(task=task, rounds=rounds, seed=seed, surrogate=lambda d: ExactGP(d)))
    for t in range(1, rounds + 1):
        s = algo.ask(t)
        algo.tell(s, task.evaluate(s.config, round=t))
    return algo


def test_snap_keeps_every_point_at_its_cell_centre_and_never_repeats_a_configuration():
    task = Mixed()
    algo = _run(task, "snap")
    X = torch.stack(algo.X)
    centres = task.space.snap(X)
    discrete = [1, 2]   # the Int and Categorical coordinates
    assert torch.allclose(X[:, discrete], centres[:, discrete])
    configs = {str(task.space.decode(x)) for x in X}
    assert len(configs) == len(X)


def test_relax_is_the_default_and_keeps_the_proposed_continuous_point():
    assert GPEIConfig().discrete == "relax"
    task = Mixed()
    algo = _run(task, "relax")
    X = torch.stack(algo.X)
    assert not torch.allclose(X[:, [1, 2]], task.space.snap(X)[:, [1, 2]])   # points inside cells, not centres


def test_snap_changes_nothing_on_a_continuous_space():
    a, b = _run(make_branin(), "snap", 8), _run(make_branin(), "relax", 8)
    assert not a.snap and torch.equal(torch.stack(a.X), torch.stack(b.X))


def test_unknown_discrete_mode_is_a_config_error():
    with pytest.raises(ConfigError, match=r"algo.discrete='round' is unknown; allowed: relax, snap"):
        validate({"algo": {"name": "gp_ei", "discrete": "round"}, "surrogate": {"name": "gp"},
                  "task": {"name": "branin"}})
