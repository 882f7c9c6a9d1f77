"""The cost budget holds: a job whose expected cost does not fit in what remains (running jobs counted) is not
started, the run ends there and its summary says so; no lifted round limit (10^6) in what a user reads."""
from __future__ import annotations

import itertools
import logging
from typing import Any

import pandas as pd
import pytest

from hpoflow.algorithms.base import AskTellAlgorithm, BuildContext
from hpoflow.algorithms.configs import RandomConfig
from hpoflow.algorithms.multi_fidelity import MultiFidelity
from hpoflow.algorithms.multi_fidelity_config import MultiFidelityConfig
from hpoflow.algorithms.random_search import RandomSearch
from hpoflow.core.budget import ROUNDS_UNDER_COST, Budget, cost_note, fits, rounds_text
from hpoflow.core.fidelity import Fidelity
from hpoflow.core.records import Direction, Evaluation, Failure, PlainSuggestion, Suggestion
from hpoflow.core.space import Float, SearchSpace
from hpoflow.runner.loop import Loop, drive
from hpoflow.runner.progress import RunProgress
from hpoflow.runner.simulated import drive_simulated
from hpoflow.runner.workers import drive_parallel
from hpoflow.tasks.base import Task
from hpoflow.tasks.function import FunctionTask
from hpoflow.tasks.multi_fidelity import make_branin_mf

SPACE = SearchSpace((Float("x", 0.0, 1.0),))


class Unit(Task):
    """No fidelity: every evaluation costs ``cost`` (known only once it ran)."""

    def __init__(self, cost: float = 1.0) -> None:
        self.space, self.direction, self.name, self.cost, self.calls = SPACE, Direction.MINIMIZE, "unit", cost, 0

    def evaluate(self, config: dict[str, Any], *, round: int, observe: bool = True) -> Evaluation:
        self.calls += 1
        return Evaluation(value=float(config["x"]), cost=self.cost)


class AtLevel(AskTellAlgorithm):
    """Every job a new configuration at ``level`` (a fidelity job: its cost is known before it runs)."""

    name = "at_level"
    pending_rule = "independent"

    def __init__(self, task: Task, level: float) -> None:
        super().__init__(task)
        self.level, self.ids = level, itertools.count(1)

    def ask(self, round: int) -> Suggestion:
        return PlainSuggestion({"x": 0.5}, [0.5], fidelity=self.level, config_id=next(self.ids))

    def tell(self, suggestion: Suggestion, outcome: Evaluation | Failure) -> None:
        pass


def levelled(calls: list[float]) -> FunctionTask:
    def train(config: dict[str, Any], epochs: float) -> float:
        calls.append(epochs)
        return float(config["x"]) + 1.0 / epochs

    return FunctionTask(SPACE, train, fidelity=Fidelity("epochs", 1, 10))


def test_a_cost_budget_exactly_reached():
    task = Unit()
    result = drive(Loop(task, RandomSearch(RandomConfig(), BuildContext(task, 10**6)), budget=Budget(10**6, cost=5)))
    assert len(result.records) == 5 == task.calls and result.summary["query_cost"] == 5.0
    assert result.summary["cost_budget"] == 5.0 and result.summary["cost_note"] == "cost budget 5: spent 5"


def test_a_job_that_does_not_fit_is_not_started():
    calls: list[float] = []
    task = levelled(calls)
    result = drive(Loop(task, AtLevel(task, 4), budget=Budget(10**6, cost=10)))
    assert calls == [4, 4] and result.summary["query_cost"] == 8.0 and len(result.records) == 2
    assert result.summary["cost_note"] == "cost budget 10: spent 8; the next job (4 units) did not fit in the 2 left"


@pytest.mark.parametrize("executor", ["simulated", "thread"])
def test_k_workers_count_the_running_jobs_against_the_budget(executor):
    calls: list[float] = []
    task = levelled(calls)
    loop = Loop(task, AtLevel(task, 4), budget=Budget(10**6, cost=10, workers=3, executor=executor))
    # three jobs of 4 would start at once (nothing spent yet) and end at 12; the third does not fit beside the two
    result = drive_simulated(loop, 3) if executor == "simulated" else drive_parallel(loop, 3, "thread")
    assert calls == [4, 4] and result.summary["query_cost"] == 8.0 and not loop.pending


def test_a_continued_trial_is_charged_only_the_units_it_adds():
    task = make_branin_mf(max_resource=27)
    assert task.expected_cost(9, 3.0, config_id=1) == 6.0 and task.expected_cost(9, config_id=1) == 9.0
    assert task.expected_cost(3, 9.0, config_id=1) == 3.0  # not continued from above: trained from scratch
    assert task.expected_cost(None, 9.0) == 27.0  # the full evaluation trains from scratch
    ev = task.evaluate_at({"x0": 0.0, "x1": 0.0}, fidelity=3, config_id=1, round=1)
    assert ev.cost == 3.0 and task.expected_cost(9, 3.0, config_id=1) == 6.0
    assert task.expected_cost(9, 3.0, config_id=2) == 9.0  # no state kept for it: from scratch
    task.states.drop(1)  # evicted (capacity): the next evaluation trains from scratch, and is expected to
    assert task.expected_cost(9, 3.0, config_id=1) == 9.0
    assert Unit().expected_cost(None) is None and levelled([]).expected_cost(4, reached=3) == 4.0


@pytest.mark.parametrize("scheduler,workers", [("hyperband", 1), ("asha", 4), ("sha", 1)])
@pytest.mark.parametrize("cost", [100, 243, 400])
def test_multi_fidelity_runs_never_spend_more_than_the_budget(scheduler, workers, cost):
    task = make_branin_mf(max_resource=27)
    algo = MultiFidelity(MultiFidelityConfig(scheduler=scheduler), BuildContext(task, 10**6, seed=1, cost=cost))
    loop = Loop(task, algo, budget=Budget(ROUNDS_UNDER_COST, cost=cost, workers=workers, executor="simulated"))
    result = drive_simulated(loop, workers)
    spent = result.summary["query_cost"]
    assert spent == sum(r.cost for r in result.records) <= cost
    assert cost - spent < 27  # what is left is less than one full job
    assert result.summary["cost_note"].startswith(f"cost budget {cost}: spent {spent:g}")


def test_a_prediction_that_falls_short_is_an_overshoot_the_summary_states():
    assert cost_note(500, 504) == ("cost budget 500: spent 504, 4 over: the last evaluations cost more than "
                                   "predicted (their cost is known only once they ran)")
    assert cost_note(810, 810, refused=2) == "cost budget 810: spent 810"  # spent in full: nothing to explain
    assert cost_note(810, 798, refused=54) == ("cost budget 810: spent 798; the next job (54 units) did not fit "
                                               "in the 12 left")
    assert fits(2.0, 2.0, 10.0) and fits(2.0 + 1e-12, 2.0, 10.0) and not fits(2.1, 2.0, 10.0)


def test_no_lifted_round_limit_in_what_a_user_reads():
    assert Budget(ROUNDS_UNDER_COST, cost=810).round_limit is None and Budget(30, cost=810).round_limit == 30
    assert rounds_text(ROUNDS_UNDER_COST, 810) == "no round limit (budget.cost=810)"
    assert rounds_text(30) == "30 rounds" and rounds_text(ROUNDS_UNDER_COST) == "no round limit (a cost budget)"
    progress = RunProgress(None, enabled=False, cost=810)
    assert progress.position(159, 612.0) == "round 159 (cost 612/810)"
    assert RunProgress(30, enabled=False, cost=810).position(5, 12.0) == "round 5/30 (cost 12/810)"
    assert RunProgress(30, enabled=False).position(5) == "round 5/30"
    task = Unit()
    loop = Loop(task, RandomSearch(RandomConfig(), BuildContext(task, ROUNDS_UNDER_COST)),
                budget=Budget(ROUNDS_UNDER_COST, cost=3))
    lines: list[str] = []

    class Lines(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            lines.append(record.getMessage())

    with RunProgress(None, enabled=False, cost=3) as bar:
        handler, level, disabled = Lines(), bar.logger.level, bar.logger.disabled
        bar.logger.addHandler(handler)
        bar.logger.setLevel(logging.INFO)
        bar.logger.disabled = False
        loop.on_round = bar
        try:
            drive(loop)
        finally:
            bar.logger.removeHandler(handler)
            bar.logger.setLevel(level)
            bar.logger.disabled = disabled
    assert lines and lines[-1].startswith("round 3 (cost 3/3) ") and not any("1000000" in x for x in lines)


def test_the_reports_budget_warning_says_no_round_limit():
    from hpoflow.report.statistics import budget_warnings

    runs = pd.DataFrame({"task_key": ["t"] * 2, "algo": ["a"] * 2, "rounds": [30, ROUNDS_UNDER_COST],
                         "run_id": ["r1", "r2"]})
    (warning,) = budget_warnings(runs)
    assert "no round limit (a cost budget): runs r2" in warning and "1000000" not in warning
    assert warning.endswith("compared at round 30")


def test_a_resumed_run_counts_every_unit_once(tmp_path):
    import hpoflow

    calls: list[float] = []
    stop_at: list[int] = []

    def train(config: dict[str, Any], epochs: float) -> float:
        if len(calls) in stop_at:
            stop_at.clear()
            raise KeyboardInterrupt("stopped for the test")
        calls.append(epochs)
        return (float(config["x"]) - 0.3) ** 2 + 1.0 / epochs

    def minimize(checkpoint: Any = None) -> Any:
        return hpoflow.minimize(train, {"x": ("float", 0.0, 1.0)}, algo="hyperband", fidelity=("epochs", 1, 27),
                                cost=200, checkpoint=checkpoint)

    whole = minimize()
    assert whole.summary["query_cost"] == sum(calls) <= 200
    calls.clear()
    stop_at.append(12)
    with pytest.raises(KeyboardInterrupt):
        minimize(tmp_path / "ck.json")
    resumed = minimize(tmp_path / "ck.json")
    assert [(r.config_id, r.fidelity, r.cost) for r in resumed.records] == [
        (r.config_id, r.fidelity, r.cost) for r in whole.records]
    assert resumed.summary["query_cost"] == whole.summary["query_cost"] == sum(calls)  # every unit trained once
    assert resumed.summary["cost_note"] == whole.summary["cost_note"]


def test_auto_states_no_round_limit_under_a_cost_budget():
    from hpoflow.algorithms.auto_rule import SpaceProfile, decide

    choice = decide(SpaceProfile(floats=2, integers=0, categoricals=0), ROUNDS_UNDER_COST, cost_budget=True)
    assert choice.algo == "turbo" and "no round limit (a cost budget)" in choice.reason
    assert "1000000" not in choice.reason and "1000000" not in choice.summary()
