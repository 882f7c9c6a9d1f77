"""algo=cobyqa / cobyla: scipy's trust regions through ask/tell (greenlet), on small quadratics."""
from __future__ import annotations

import math

import numpy as np
import pytest

from hpoflow.algorithms.base import BuildContext, PendingNotSupported
from hpoflow.algorithms.local_dfo import LocalDFO
from hpoflow.algorithms.local_dfo_config import CobylaConfig, LocalDFOConfig
from hpoflow.core.records import Direction, Evaluation, Failure
from hpoflow.core.space import Float, SearchSpace
from hpoflow.runner.loop import Budget, run
from hpoflow.tasks.base import Task


class Quadratic(Task):
    """sum((x - target)^2) on [0, 1]^d (the unit cube is the space itself); ``sign`` flips it for maximising."""

    name = "quadratic"

    def __init__(self, target: list[float], direction: Direction = Direction.MINIMIZE) -> None:
        self.target = np.asarray(target)
        self.direction = direction
        self.space = SearchSpace(tuple(Float(f"x{i}", 0.0, 1.0) for i in range(len(target))))
        self.optimum = 0.0 if direction is Direction.MINIMIZE else -0.0
        self.asked: list[np.ndarray] = []

    def loss(self, config: dict) -> float:
        x = np.array([config[n] for n in self.space.names])
        self.asked.append(x)
        return float(((x - self.target) ** 2).sum())

    def evaluate(self, config: dict, *, round: int, observe: bool = True) -> Evaluation:
        f = self.loss(config)
        value = f if self.direction is Direction.MINIMIZE else -f
        return Evaluation(value=value, true_value=value)


def _algo(task: Task, rounds: int, config: LocalDFOConfig | None = None) -> LocalDFO:
    return LocalDFO(config or LocalDFOConfig(), BuildContext(task=task, rounds=rounds, seed=0))


def _drive(algo: LocalDFO, task: Quadratic, rounds: int) -> list[float]:
    losses = []
    for t in range(1, rounds + 1):
        s = algo.ask(t)
        e = task.evaluate(s.config, round=t)
        losses.append(task.loss(s.config))
        algo.tell(s, e)
    return losses


@pytest.mark.parametrize("config, rounds, tol", [(LocalDFOConfig(), 30, 1e-6), (CobylaConfig(), 60, 1e-4)])
def test_it_starts_at_the_centre_and_converges_on_a_quadratic(config, rounds, tol):
    task = Quadratic([0.3, 0.7, 0.6])
    algo = _algo(task, rounds, config)
    first = algo.ask(1)
    assert first.config == {"x0": 0.5, "x1": 0.5, "x2": 0.5}
    algo.tell(first, task.evaluate(first.config, round=1))
    losses = [task.loss(first.config)] + _drive_from(algo, task, 2, rounds)
    assert min(losses) < tol < losses[0]


def _drive_from(algo: LocalDFO, task: Quadratic, start: int, rounds: int) -> list[float]:
    out = []
    for t in range(start, rounds + 1):
        s = algo.ask(t)
        out.append(task.loss(s.config))
        algo.tell(s, task.evaluate(s.config, round=t))
    return out


def test_points_stay_in_the_box_and_reach_a_bound_optimum():
    task = Quadratic([1.4, 0.2])  # the minimiser over [0, 1]^2 is (1, 0.2), on the boundary
    algo = _algo(task, 40)
    _drive(algo, task, 40)
    pts = np.array(task.asked)
    assert pts.min() >= 0.0 and pts.max() <= 1.0
    best = pts[np.argmin(((pts - task.target) ** 2).sum(1))]
    assert best == pytest.approx([1.0, 0.2], abs=1e-3)


def test_it_restarts_from_the_best_point_after_converging_and_keeps_proposing():
    task = Quadratic([0.25])
    algo = _algo(task, 80)
    losses = _drive(algo, task, 80)
    assert algo.restarts >= 1 and len(losses) == 80
    assert min(losses) < 1e-10


def test_maximising_the_negative_follows_the_same_points():
    lo, hi = Quadratic([0.3, 0.8]), Quadratic([0.3, 0.8], Direction.MAXIMIZE)
    _drive(_algo(lo, 15), lo, 15)
    _drive(_algo(hi, 15), hi, 15)
    assert np.array_equal(np.array(lo.asked), np.array(hi.asked))


def test_two_runs_are_identical_so_resume_can_replay():
    a, b = Quadratic([0.1, 0.9, 0.4]), Quadratic([0.1, 0.9, 0.4])
    assert _drive(_algo(a, 25), a, 25) == _drive(_algo(b, 25), b, 25)


def test_a_failure_counts_as_the_worst_value_and_the_run_goes_on():
    task = Quadratic([0.3, 0.3])
    algo = _algo(task, 12)
    for t in range(1, 13):
        s = algo.ask(t)
        algo.tell(s, Failure("boom") if t == 4 else task.evaluate(s.config, round=t))
    assert algo.losses[3] == max(algo.losses[:3]) and all(math.isfinite(v) for v in algo.losses)


def test_pending_trials_are_refused_in_one_line():
    task = Quadratic([0.5, 0.5])
    algo = _algo(task, 10)
    first = algo.ask(1)
    with pytest.raises(PendingNotSupported, match="algo=cobyqa does not support pending trials"):
        algo.ask_pending(2, [first])


def test_the_loop_runs_it_and_the_radius_is_checked():
    task = Quadratic([0.2, 0.4])
    result = run(task, _algo(task, 20), None, Budget(20))
    assert len(result.records) == 20 and result.summary["simple_regret"] < 1e-4
    with pytest.raises(ValueError, match=r"algo.radius=0 is not allowed; allowed: a number in \(0, 0.5\]"):
        LocalDFOConfig(radius=0)
