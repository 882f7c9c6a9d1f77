"""algo=sha|hyperband|asha|mf_gp through the common loop: cost accounting, continued trials, k workers, resume."""
from __future__ import annotations

import math
from collections import defaultdict

import pytest

from hpoflow.algorithms.base import BuildContext
from hpoflow.algorithms.multi_fidelity import MultiFidelity
from hpoflow.algorithms.multi_fidelity_config import MultiFidelityConfig
from hpoflow.core.budget import Budget
from hpoflow.runner.loop import Loop, drive, run
from hpoflow.runner.workers import drive_parallel
from hpoflow.surrogates.gp import ExactGP
from hpoflow.tasks.multi_fidelity import make_branin_mf, make_hartmann6_mf
from hpoflow.tasks.synthetic import make_branin


def build(scheduler="hyperband", searcher="random", task=None, seed=0, **kw):
    task = task or make_branin_mf(max_resource=27)
    ctx = BuildContext(task, rounds=10_000, seed=seed, surrogate=lambda d: ExactGP(d))
    return task, MultiFidelity(MultiFidelityConfig(name=scheduler, scheduler=scheduler, searcher=searcher, **kw), ctx)


@pytest.mark.parametrize("scheduler", ["sha", "hyperband", "asha", "asha_stopping", "warm_hyperband"])
def test_a_promotion_continues_and_pays_only_the_new_levels(scheduler):
    task, algo = build(scheduler)
    result = run(task, algo, budget=Budget(rounds=60))
    reached: dict[int, float] = {}
    for r in result.records:
        before = reached.get(r.config_id, 0)
        assert r.fidelity > before, "a configuration never goes down or repeats a level"
        assert r.cost == r.fidelity - before  # continued: only the levels in between are trained and charged
        reached[r.config_id] = r.fidelity
    assert result.summary["query_cost"] == sum(reached.values())
    assert max(reached.values()) == 27 and min(r.fidelity for r in result.records) == 1


def test_the_loop_stops_once_the_cost_budget_is_spent():
    task, algo = build("hyperband")
    result = run(task, algo, budget=Budget(rounds=10_000, cost=200))
    costs = [m["query_cost"] for m in result.metrics]
    assert costs[-1] <= 200  # the budget holds: the job that did not fit was not started
    assert result.summary["cost_note"].startswith(f"cost budget 200: spent {costs[-1]:g}; the next job (")
    refused = float(result.summary["cost_note"].split("the next job (")[1].split(" ")[0])
    assert refused > 200 - costs[-1]


def test_rounds_log_fidelity_config_id_and_a_learning_curve():
    task, algo = build("asha")
    result = run(task, algo, budget=Budget(rounds=12))
    assert all({"fidelity", "config_id"} <= set(m) for m in result.metrics)
    assert all(r.curve == [[r.fidelity, r.value]] for r in result.records)


def test_asha_with_four_workers_keeps_every_config_consistent():
    task, algo = build("asha", task=make_hartmann6_mf(max_resource=27))
    loop = Loop(task, algo, budget=Budget(rounds=80, workers=4))
    result = drive_parallel(loop, 4)
    levels = defaultdict(list)
    for r in result.records:
        levels[r.config_id].append(r.fidelity)
    assert all(v == sorted(set(v)) for v in levels.values())
    assert any(len(v) >= 3 for v in levels.values())  # some reached rung 2
    assert max(m["pending"] for m in result.metrics) >= 3  # k workers busy (and one asked ahead)


def test_state_dict_resumes_exactly_what_an_uninterrupted_run_asks_next():
    task, algo = build("hyperband", searcher="random")
    loop = Loop(task, algo, budget=Budget(rounds=25))
    for _ in range(25):
        s = loop.ask()
        loop.tell(s, task.evaluate_at(s.config, fidelity=s.fidelity, config_id=s.config_id, round=loop.round))
    state = algo.state_dict()
    _, again = build("hyperband", searcher="random")
    again.load_state_dict(state)
    for _ in range(20):
        a, b = algo.ask(), again.ask()
        assert (a.config, a.fidelity, a.config_id) == (b.config, b.fidelity, b.config_id)
        ev = task.evaluate_at(a.config, fidelity=a.fidelity, config_id=None, round=1)
        algo.tell(a, ev)
        again.tell(b, ev)


def test_a_task_without_a_fidelity_is_refused_in_one_line():
    with pytest.raises(ValueError, match="needs a task with a fidelity") as info:
        build("asha", task=make_branin(seed=0))
    assert "\n" not in str(info.value)


def test_min_fidelity_outside_the_task_range_is_refused():
    with pytest.raises(ValueError, match="outside the task's fidelity"):
        build("hyperband", min_fidelity=100)
    with pytest.raises(ValueError, match="algo.eta"):
        MultiFidelityConfig(eta=1)


def test_the_gp_searcher_proposes_from_the_highest_rung_with_enough_data():
    task, algo = build("hyperband", searcher="gp", task=make_branin_mf(max_resource=9), random_fraction=0.0,
                       min_points=4)
    result = run(task, algo, budget=Budget(rounds=40))
    rungs = [m["model_rung"] for m in result.metrics if "model_rung" in m]
    assert rungs[0] == -1  # no rung has enough results yet: random
    assert max(rungs) >= 1  # later the GP fits a higher rung's results
    assert all(math.isfinite(r.value) for r in result.records)


def test_the_gp_searcher_fits_a_rung_once_it_holds_min_d_plus_2_and_5_results():
    from hpoflow.algorithms.searchers import default_min_points

    assert [default_min_points(d) for d in (1, 2, 3, 6, 20)] == [3, 4, 5, 5, 5]
    _, algo = build("hyperband", searcher="gp", task=make_hartmann6_mf(max_resource=9))
    assert algo.searcher.min_points == 5
    _, algo = build("hyperband", searcher="gp", task=make_hartmann6_mf(max_resource=9), min_points=8)
    assert algo.searcher.min_points == 8
    with pytest.raises(ValueError, match=r"algo.scheduler='nope' is unknown; allowed: sha, hyperband, asha, "
                                         r"asha_stopping, warm_hyperband"):
        MultiFidelityConfig(scheduler="nope")


def test_drive_with_one_worker_equals_the_sequential_order():
    task, algo = build("sha")
    a = drive(Loop(task, algo, budget=Budget(rounds=30)))
    task2, algo2 = build("sha")
    b = drive_parallel(Loop(task2, algo2, budget=Budget(rounds=30)), 1)
    assert [(r.config_id, r.fidelity) for r in a.records] == [(r.config_id, r.fidelity) for r in b.records]


def test_mf_gp_with_the_warm_up_proposes_uniformly_until_hyperband_starts_then_from_its_gp():
    task, algo = build("warm_hyperband", searcher="gp", task=make_hartmann6_mf(max_resource=9))
    result = run(task, algo, budget=Budget(rounds=70))
    news = [(m["model_rung"], r.config_id) for r, m in zip(result.records, result.metrics) if "model_rung" in m]
    warm = [rung for rung, i in news if i in algo.scheduler.warm_ids]
    assert len(warm) == 9 and set(warm) == {-1}  # uniform though rung 0 holds 5+ results after 5 of them
    later = [rung for rung, i in news if i not in algo.scheduler.warm_ids]
    assert later and max(later) >= 0  # the GP proposes in Hyperband's brackets, fitted on the warm-up's results too
