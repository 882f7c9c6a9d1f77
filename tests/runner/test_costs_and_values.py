"""Costs are finite numbers >= 0 wherever they enter, a cost budget that evaluations never spend ends with one
line, and a non-finite objective or constraint is a failed evaluation, as a non-finite first value is."""
from __future__ import annotations

import math

import pytest

import hpoflow
from hpoflow.core.records import Evaluation, ObjectiveFailed, check_cost
from hpoflow.runner.loop import ZERO_COST_ROUNDS, CostNeverSpent, ObjectiveError

SPACE = {"x": ("float", 0.0, 1.0)}


@pytest.mark.parametrize("bad", [-1, -1e-9, math.nan, math.inf, -math.inf, "3", True, None])
def test_a_cost_that_is_not_a_finite_number_at_least_0_is_refused_in_one_line(bad):
    with pytest.raises(ValueError, match=r"cost=.* must be a finite number >= 0") as info:
        check_cost(bad)
    assert "\n" not in str(info.value)


def test_good_costs_pass_as_floats():
    assert check_cost(0) == 0.0 and check_cost(2) == 2.0 and isinstance(check_cost(3), float)


@pytest.mark.parametrize("cost", [-1.0, math.nan, math.inf])
def test_an_objective_s_bad_cost_fails_the_run_under_a_cost_budget(cost):
    """Before: Evaluation(cost=-1 or nan) with cost=50 and no rounds ran forever."""
    with pytest.raises(ObjectiveError, match=r"round 1: the evaluation: cost=.* must be a finite number >= 0"):
        hpoflow.minimize(lambda c: Evaluation(value=c["x"], cost=cost), SPACE, algo="random", cost=50,
                         tracking=False)


def test_a_bad_cost_under_on_error_skip_is_a_failed_round_charged_nothing():
    result = hpoflow.minimize(lambda c: Evaluation(value=c["x"], cost=-5.0), SPACE, algo="random", rounds=4,
                              on_error="skip", tracking=False)
    assert all(r.failed and r.cost == 0 for r in result.records) and result.summary["query_cost"] == 0


def test_objective_failed_with_a_negative_cost_is_a_failure_charged_nothing():
    """Before: ObjectiveFailed(cost=-100) over 30 rounds gave a query cost of -3000."""
    def fn(config):
        raise ObjectiveFailed("diverged", cost=-100)

    result = hpoflow.minimize(fn, SPACE, algo="random", rounds=30, on_error="skip", tracking=False)
    assert result.summary["query_cost"] == 0 and all(r.failed for r in result.records)
    assert "cost=-100 must be a finite number >= 0" in result.records[0].error
    assert ObjectiveFailed("ok", cost=2).cost == 2.0


def test_an_exception_with_a_foreign_negative_cost_attribute_is_charged_nothing():
    class Odd(RuntimeError):
        cost = -7

    def fn(config):
        raise Odd("no")

    result = hpoflow.minimize(fn, SPACE, algo="random", rounds=3, on_error="skip", tracking=False)
    assert result.summary["query_cost"] == 0


def test_a_cost_budget_that_zero_cost_evaluations_never_spend_ends_in_one_line():
    """Before: cost=50 with Evaluation(cost=0) and no rounds ran until the 1,000,000-round cap."""
    with pytest.raises(CostNeverSpent, match=f"budget.cost=50 cannot be spent: the last {ZERO_COST_ROUNDS} rounds "
                                             "cost nothing") as info:
        hpoflow.minimize(lambda c: Evaluation(value=c["x"], cost=0.0), SPACE, algo="random", cost=50,
                         tracking=False)
    assert "\n" not in str(info.value)


def test_some_zero_cost_rounds_under_a_cost_budget_are_fine():
    calls = []

    def fn(config):
        calls.append(1)
        return Evaluation(value=config["x"], cost=0.0 if len(calls) % 2 else 1.0)

    result = hpoflow.minimize(fn, SPACE, algo="random", cost=5, tracking=False)
    assert result.summary["query_cost"] == 5 and len(result.records) == 10


@pytest.mark.parametrize("values", [{"a": 0.5, "b": math.nan}, {"a": 0.5, "b": math.inf}])
def test_a_non_finite_second_objective_is_a_failure(values):
    """Before: the run ended FINISHED with an empty front and hypervolume 0."""
    with pytest.raises(ObjectiveError, match=r"round 1: objective returned non-finite values \(b="):
        hpoflow.minimize(lambda c: values, SPACE, algo="random", rounds=5, objectives={"a": "min", "b": "min"},
                         tracking=False)


def test_a_non_finite_constraint_is_a_failure_and_skip_goes_on():
    with pytest.raises(ObjectiveError, match=r"non-finite values \(g=nan\)"):
        hpoflow.minimize(lambda c: {"a": c["x"], "g": math.nan}, SPACE, algo="random", rounds=5,
                         objectives={"a": "min"}, constraints={"g": ("<=", 0.0)}, tracking=False)
    result = hpoflow.minimize(lambda c: {"a": c["x"], "g": math.nan if c["x"] < 0.5 else -1.0}, SPACE,
                              algo="random", rounds=8, objectives={"a": "min"}, constraints={"g": ("<=", 0.0)},
                              on_error="skip", tracking=False)
    assert all(r.failed == (r.config["x"] < 0.5) for r in result.records)


def test_cost_budget_beyond_the_round_limit_is_refused_after_the_first_rounds():
    """cost=1e308 with no round limit: 1,000 rounds of cost 1 show that the rest needs ~1e308 rounds, beyond
    ROUNDS_UNDER_COST: one line naming the value and what would reach it, long before the 10^6-round cap."""
    import hpoflow

    with pytest.raises(CostNeverSpent, match=r"budget.cost=1e\+308 cannot be spent within the 1,000,000-round limit: "
                                             r"1000 rounds cost 1000 \(1 a round\).*cost of at most 1e\+06"):
        hpoflow.minimize(lambda c: c["x"] ** 2, {"x": ("float", -1.0, 1.0)}, cost=1e308, algo="random")


def test_reachable_cost_budget_without_round_limit_runs_to_its_end():
    import hpoflow

    result = hpoflow.minimize(lambda c: c["x"] ** 2, {"x": ("float", -1.0, 1.0)}, cost=1500, algo="random")
    assert len(result.records) == 1500


@pytest.mark.parametrize("cost", [float("inf"), float("nan"), -1.0, 0.0])
def test_budget_cost_must_be_finite_and_positive(cost):
    from hpoflow.core.budget import Budget

    with pytest.raises(ValueError, match=r"budget.cost=.* must be a finite number > 0, or null"):
        Budget(rounds=5, cost=cost)
