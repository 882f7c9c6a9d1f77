"""Syne Tune 0.16's ASHA family through its scheduler API (algo=synetune_asha|synetune_bohb|synetune_ashabore|
synetune_ashacqr): ASHA's stopping rule as Syne Tune decides it, BOHB's KDE taking over from random draws, the
global NumPy generator left alone, categorical parameters, and a cost-budgeted run through the real CLI. The shared
cases (levels, direction, failures, pending trials, seeds, resume) are in test_peers_mf.py; every case skips
cleanly without syne-tune (pip install 'hpoflow[synetune]')."""
from __future__ import annotations

import math

import numpy as np
import pytest

from hpoflow.algorithms.base import BuildContext
from hpoflow.config import registry
from hpoflow.core.records import Direction, Evaluation
from hpoflow.core.space import Categorical, Float, SearchSpace
from hpoflow.runner.loop import Budget, run
from hpoflow.tasks.multi_fidelity import make_branin_mf
from tests.conftest import mlflow_runs

pytest.importorskip("syne_tune")


def _build(name: str, task, rounds: int = 30, seed: int = 0, **settings):
    entry = registry.get("algorithm", name)
    if entry.missing():
        pytest.skip(f"{name} needs '{entry.missing()}'")
    return entry.load()(entry.make_config(**settings), BuildContext(task=task, rounds=rounds, seed=seed))


def test_asha_stops_a_trial_below_the_rungs_cutoff_and_continues_the_others():
    task = make_branin_mf(max_resource=27)
    algo = _build("synetune_asha", task)
    assert algo.levels == [1, 3, 9, 27] and algo.scheduler.max_t == 27
    a, b = algo.ask(), algo.ask()
    c = algo.ask_pending(3, [a, b])
    assert [s.fidelity for s in (a, b, c)] == [1, 1, 1] and len({a.config_id, b.config_id, c.config_id}) == 3
    algo.tell(a, Evaluation(10.0))  # the first result at a milestone always continues
    algo.tell(b, Evaluation(5.0))   # the better of two: in the top 1/3, continues
    algo.tell(c, Evaluation(20.0))  # the worst of three: stopped
    nxt = [algo.ask(), algo.ask(), algo.ask()]
    assert [(s.config_id, s.fidelity) for s in nxt] == [(a.config_id, 3), (b.config_id, 3), (c.config_id + 1, 1)]
    assert set(algo.scheduler.trial_info) == {a.config_id, b.config_id, c.config_id + 1}  # c completed and removed


def test_a_trial_at_the_top_level_is_completed_and_never_asked_again():
    task = make_branin_mf(max_resource=3)  # levels 1, 3
    algo = _build("synetune_asha", task)
    s = algo.ask()
    algo.tell(s, Evaluation(1.0))
    top = algo.ask()
    assert (top.config_id, top.fidelity) == (s.config_id, 3)
    algo.tell(top, Evaluation(0.5))
    assert s.config_id not in algo.scheduler.trial_info and algo.ask().config_id == s.config_id + 1


def test_bohb_proposes_from_its_kde_after_its_random_draws():
    task = make_branin_mf(max_resource=27)
    algo = _build("synetune_bohb", task, rounds=40)
    run(task, algo, budget=Budget(40))
    searcher = algo.scheduler.searcher
    assert type(searcher.searcher).__name__ == "KernelDensityEstimator"  # fitted on each trial's last value
    assert searcher.num_results() >= searcher.num_init_random_draws


def test_the_global_numpy_generator_is_left_as_it_was():
    task = make_branin_mf(max_resource=27)
    np.random.seed(7)
    expected = np.random.random()
    np.random.seed(7)
    run(task, _build("synetune_bohb", task, rounds=30, brackets=2), budget=Budget(30))
    assert np.random.random() == expected


def test_categorical_parameters_come_back_as_their_choices():
    task = make_branin_mf(max_resource=9)
    space = SearchSpace.of(Float("x0", -5.0, 10.0), Float("x1", 0.0, 15.0), Categorical("shift", ("a", 1, 2.5)))

    class Wrapped:
        name, fidelity, direction, optimum = "mixed_mf", task.fidelity, Direction.MINIMIZE, task.optimum

        def __init__(self):
            self.space, self.seen = space, []

        def evaluate_at(self, config, *, fidelity, config_id, round, observe=True):
            self.seen.append(config["shift"])
            base = {"x0": config["x0"], "x1": config["x1"]}
            return task.evaluate_at(base, fidelity=fidelity, config_id=config_id, round=round, observe=observe)

    wrapped = Wrapped()
    algo = _build("synetune_bohb", wrapped, rounds=30)  # type: ignore[arg-type]
    for round in range(1, 31):
        s = algo.ask(round)
        algo.tell(s, wrapped.evaluate_at(s.config, fidelity=s.fidelity, config_id=s.config_id, round=round))
    assert set(wrapped.seen) <= {"a", 1, 2.5} and len(set(map(repr, wrapped.seen))) > 1


def test_bad_settings_are_one_line_errors():
    from hpoflow.algorithms.peers.mf_config import SyneTuneBOHBConfig, SyneTuneConfig

    with pytest.raises(ValueError, match=r"algo.brackets=0 must be an integer >= 1"):
        SyneTuneConfig(brackets=0)
    with pytest.raises(ValueError, match=r"algo.top_n_percent=0 must be in \(0, 100\)"):
        SyneTuneBOHBConfig(top_n_percent=0)


@pytest.mark.parametrize("name", ["synetune_asha", "synetune_bohb"])
def test_a_cost_budgeted_run_through_the_cli_into_mlflow(run_cli, store, name):
    run_cli(f"algo={name}", "task=branin_mf", "budget.cost=120", f"tracking.uri={store}")
    (r,) = mlflow_runs(store, "branin_mf")
    assert r.info.status == "FINISHED" and r.data.tags["algo"] == name
    assert math.isfinite(r.data.metrics["simple_regret"]) and r.data.metrics["query_cost"] <= 120
