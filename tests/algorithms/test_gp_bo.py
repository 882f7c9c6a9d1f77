"""GP-BO family: failures are imputed pessimistically so the search moves away from them."""
from __future__ import annotations

import torch

from hpoflow.algorithms.base import BuildContext
from hpoflow.algorithms.configs import GPBOConfig
from hpoflow.algorithms.gp_bo import GPEI
from hpoflow.records import Failure
from hpoflow.surrogates.gp import ExactGP
from hpoflow.tasks.synthetic import make_branin


def test_failed_point_is_told_with_the_worst_reward():
    task = make_branin()
    algo = GPEI(GPBOConfig(n_init=3), BuildContext(task=task, rounds=10, seed=0, surrogate=lambda d: ExactGP(d)))
    for t in range(1, 4):
        s = algo.ask(t)
        algo.tell(s, task.evaluate(s.config, round=t))
    s = algo.ask(4)
    algo.tell(s, Failure("diverged"))
    assert len(algo.y) == 4 and algo.y[-1] == min(algo.y[:3])
    assert torch.equal(algo.X[-1], s.x)
