"""The common loop: budgets, failure policy, and what the tracker sees on every kind of ending."""
from __future__ import annotations

import math

import pytest

from hpoflow.algorithms.base import BuildContext
from hpoflow.algorithms.configs import RandomConfig
from hpoflow.algorithms.random_search import RandomSearch
from hpoflow.core.records import Direction, Evaluation, ObjectiveFailed, OnError, RunStatus
from hpoflow.core.space import Float, SearchSpace
from hpoflow.runner.loop import Budget, ObjectiveError, run
from hpoflow.tasks.base import Task


class Flaky(Task):
    """Fails on chosen rounds: raises, or returns NaN."""

    name = "flaky"
    direction = Direction.MINIMIZE
    optimum = 0.0

    def __init__(self, raise_on=(), nan_on=(), interrupt_on=()):
        self.space = SearchSpace.of(Float("x", -1.0, 1.0))
        self.raise_on, self.nan_on, self.interrupt_on = set(raise_on), set(nan_on), set(interrupt_on)

    def evaluate(self, config, *, round, observe=True):
        if round in self.raise_on:
            raise RuntimeError("simulated crash")
        if round in self.interrupt_on:
            raise KeyboardInterrupt
        return Evaluation(value=math.nan if round in self.nan_on else config["x"] ** 2, cost=2.0)


class Recorder:
    def __init__(self):
        self.steps, self.finished = [], None

    def start(self, params, tags):
        pass

    def log(self, record, metrics):
        self.steps.append((record.round, metrics))

    def finish(self, status, summary, error=None):
        self.finished = (status, error)


def _algo(task):
    return RandomSearch(RandomConfig(), BuildContext(task=task, rounds=10, seed=0))


def test_fail_policy_keeps_earlier_rounds_and_marks_failed():
    task, rec = Flaky(raise_on={4}), Recorder()
    with pytest.raises(ObjectiveError, match="round 4: RuntimeError: simulated crash"):
        run(task, _algo(task), rec, Budget(10), on_error=OnError.FAIL)
    assert [s for s, _ in rec.steps] == [1, 2, 3, 4]
    assert rec.finished[0] is RunStatus.FAILED and "simulated crash" in rec.finished[1]


def test_skip_policy_counts_failures_and_goes_on():
    task, rec = Flaky(raise_on={2}, nan_on={5}), Recorder()
    result = run(task, _algo(task), rec, Budget(8), on_error=OnError.SKIP)
    assert rec.finished == (RunStatus.FINISHED, None)
    assert len(result.records) == 8 and result.summary["failed"] == 2
    assert rec.steps[-1][1]["failed"] == 2.0 and "failed" not in rec.steps[0][1]
    assert rec.steps[-1][1]["query_cost"] == 2.0 * 7  # the NaN round spent its cost; the crash reported none


def test_failure_that_reports_its_cost_is_charged():
    class Costly(Flaky):
        def evaluate(self, config, *, round, observe=True):
            if round == 3:
                raise ObjectiveFailed("diverged after 1.5 units", cost=1.5)
            return super().evaluate(config, round=round, observe=observe)

    task, rec = Costly(), Recorder()
    result = run(task, _algo(task), rec, Budget(4), on_error=OnError.SKIP)
    assert [m["query_cost"] for _, m in rec.steps] == [2.0, 4.0, 5.5, 7.5]
    assert result.records[2].failed and result.records[2].cost == 1.5


def test_interrupt_marks_killed():
    task, rec = Flaky(interrupt_on={3}), Recorder()
    with pytest.raises(KeyboardInterrupt):
        run(task, _algo(task), rec, Budget(10))
    assert rec.finished[0] is RunStatus.KILLED and len(rec.steps) == 2


def test_cost_budget_stops_the_loop():
    task = Flaky()
    result = run(task, _algo(task), None, Budget(rounds=100, cost=7.0))
    # each evaluation costs 2: the fourth is predicted to cost 2 too and does not fit in the 1 left
    assert len(result.records) == 3 and result.summary["query_cost"] == 6.0
    assert result.summary["cost_note"] == "cost budget 7: spent 6; the next job (2 units) did not fit in the 1 left"


@pytest.mark.parametrize("kwargs,fragment", [({"rounds": 0}, "budget.rounds=0"), ({"cost": -1.0}, "budget.cost=-1.0")])
def test_budget_validation(kwargs, fragment):
    with pytest.raises(ValueError, match=fragment):
        Budget(**kwargs)
