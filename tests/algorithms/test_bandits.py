"""Bandit baselines: policies on small cases, Bernoulli query accounting, CLI."""
from __future__ import annotations

import pytest

from hpoflow.algorithms.base import BuildContext
from hpoflow.config import registry
from hpoflow.runner.loop import Budget, run
from hpoflow.tasks.time_varying import TVBandit
from tests.conftest import mlflow_runs

NAMES = ("exp3s", "eps_greedy", "softmax", "ucb1")


def _algo(name: str, task, rounds: int = 300, **kw):
    entry = registry.get("algorithm", name)
    return entry.load()(entry.make_config(**kw), BuildContext(task=task, rounds=rounds, seed=1))


@pytest.mark.parametrize("name", NAMES)
def test_bandits_beat_uniform_play_on_a_static_problem(name):
    task = TVBandit(shape="piecewise", horizon=10**6)  # one segment: arm 0 is best (0.8 vs 0.5, 0.2)
    res = run(task, _algo(name, task, query="always"), budget=Budget(300))
    assert res.summary["cumulative_regret"] / 300 < 0.2  # uniform play: 0.3


@pytest.mark.parametrize("name", NAMES)
def test_bernoulli_queries_cost_about_p_and_only_observed_rounds_update(name):
    task = TVBandit(shape="sine", horizon=500)
    algo = _algo(name, task, rounds=500, query="bernoulli", query_prob=0.2)
    res = run(task, algo, budget=Budget(500))
    assert 70 < res.summary["query_cost"] < 130
    assert algo.n_obs == res.summary["query_cost"]


def test_exp3s_probabilities_mix_in_uniform_exploration():
    task = TVBandit()
    algo = _algo("exp3s", task, gamma=0.3)
    for _ in range(200):
        algo._p = float(algo.probabilities()[0])
        algo.update(0, 1.0)
    p = algo.probabilities()
    assert float(p.sum()) == pytest.approx(1.0)
    assert float(p.min()) >= 0.3 / 3 - 1e-12 and int(p.argmax()) == 0


def test_ucb1_index_is_mean_plus_bonus():
    task = TVBandit()
    algo = _algo("ucb1", task, c=1.0)
    for arm, r in ((0, 0.5), (1, 0.9), (2, 0.1), (0, 0.5)):
        algo.update(arm, r)
    # n = 4: arm1 0.9 + sqrt(2 ln 4 / 1) = 2.565 beats arm0 0.5 + sqrt(2 ln4 / 2) = 1.677
    assert int(algo.probabilities().argmax()) == 1


def test_cli_runs_every_bandit(run_cli, store):
    run_cli("-m", f"algo={','.join(NAMES)}", "task=tv_bandit", "budget.rounds=10", f"tracking.uri={store}",
            "tracking.artifacts=false")
    runs = mlflow_runs(store, "tv_bandit")
    assert sorted(r.data.tags["algo"] for r in runs) == sorted(NAMES)
    assert all(r.info.status == "FINISHED" and "cumulative_regret" in r.data.metrics for r in runs)
