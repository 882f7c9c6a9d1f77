"""TuRBO-1: trust-region rules, the lengthscale-weighted region, candidates, restarts."""
from __future__ import annotations

import math

import pytest
import torch

from hpoflow.algorithms.base import BuildContext
from hpoflow.algorithms.turbo import TrustRegion, TuRBO, tr_bounds
from hpoflow.algorithms.turbo_config import TuRBOConfig
from hpoflow.core.records import Evaluation
from hpoflow.runner.loop import Budget, run
from hpoflow.surrogates.configs import GPConfig
from hpoflow.surrogates.gp import build
from hpoflow.tasks.synthetic import make_branin

torch.set_num_threads(1)


def test_trust_region_expands_after_successes_and_shrinks_after_failures():
    tr = TrustRegion(dim=6)
    assert tr.length == 0.8 and tr.failure_tolerance == 6
    for _ in range(2):
        tr.update(True)
    assert tr.length == 0.8 and tr.successes == 2
    tr.update(True)
    assert tr.length == 1.6 and tr.successes == 0
    for _ in range(3):
        tr.update(True)
    assert tr.length == 1.6  # capped at length_max
    tr.update(True)
    tr.update(False)  # a failure resets the success counter
    assert tr.successes == 0 and tr.failures == 1
    for _ in range(5):
        tr.update(False)
    assert tr.length == 0.8 and tr.failures == 0
    while not tr.needs_restart:
        tr.update(False)
    assert tr.length < 0.5**7 <= 2 * tr.length


def test_tr_bounds_weighted_by_lengthscales_with_volume_L_to_the_d():
    center = torch.full((3,), 0.5, dtype=torch.float64)
    ls = torch.tensor([0.1, 0.2, 0.8], dtype=torch.float64)
    lb, ub = tr_bounds(center, ls, 0.1)
    side = ub - lb
    assert torch.allclose(side / side[0], ls / ls[0])
    assert float(torch.prod(side)) == pytest.approx(0.1**3)
    assert torch.allclose((lb + ub) / 2, center)
    lb, ub = tr_bounds(torch.zeros(3, dtype=torch.float64), ls, 1.6)
    assert bool((lb >= 0).all() and (ub <= 1).all())


def _turbo(rounds: int = 20, **kw) -> TuRBO:
    task = make_branin()
    ctx = BuildContext(task=task, rounds=rounds, seed=0,
                       surrogate=lambda d: build(GPConfig(max_iter=30), d, torch.float64, torch.device("cpu")))
    return TuRBO(TuRBOConfig(**kw), ctx)


def test_candidates_lie_in_the_region_and_perturb_at_least_one_coordinate():
    algo = _turbo()
    algo.n_candidates = 300
    center = torch.tensor([0.3, 0.6], dtype=torch.float64)
    lb, ub = center - 0.1, center + 0.1
    cand = algo.candidates(center, lb, ub)
    assert cand.shape == (300, 2)
    assert bool(((cand >= lb) & (cand <= ub)).all())
    assert bool((cand != center).any(1).all())


def test_restart_after_the_region_collapses_discards_the_data():
    algo = _turbo(n_init=3)
    algo.tr.length_min, algo.tr.failure_tolerance = 0.2, 1
    for t in range(1, 4):
        s = algo.ask(t)
        algo.tell(s, Evaluation(value=10.0 - t))  # branin is minimised: improving design
    assert algo.restarts == 0 and len(algo.y) == 3
    lengths = []
    for t in range(4, 7):  # every later value is worse: failure_tolerance = 1 halves L each round
        s = algo.ask(t)
        assert s.info["phase"] == 1.0
        algo.tell(s, Evaluation(value=100.0))
        lengths.append(algo.tr.length)
    assert lengths[:2] == [0.4, 0.2] and algo.restarts == 1 and algo.y == [] and algo.tr.length == 0.8


def test_runs_through_the_loop_and_improves_on_its_design():
    task = make_branin()
    algo = _turbo(rounds=16, n_init=5)
    result = run(task, algo, budget=Budget(16))
    values = [r.value for r in result.records]
    assert min(values[5:]) < min(values[:5])
    assert all(math.isfinite(r.metrics["tr_length"]) for r in result.records)


def test_init_center_puts_the_first_design_point_at_the_centre_and_only_on_the_first_start():
    plain, centred = _turbo(n_init=3), _turbo(n_init=3, init_center=True)
    assert torch.equal(centred.design[0], torch.full((2,), 0.5, dtype=torch.float64))
    assert torch.equal(centred.design[1:], plain.design[1:])  # the rest of the Sobol design is unchanged
    assert not torch.equal(plain.design[0], centred.design[0])
    assert centred.ask(1).config == plain.task.space.decode(torch.full((2,), 0.5, dtype=torch.float64))
    centred.restarts = 1
    centred._start()  # a restart explores a fresh design, no centre
    assert not bool((centred.design == 0.5).all(1).any())
    with pytest.raises(ValueError, match="algo.init_center='yes' is not allowed; allowed: true, false"):
        TuRBOConfig(init_center="yes")  # type: ignore[arg-type]
