"""TV-GP-UCB / R-GP-UCB / CE-GP-UCB through the common loop, and the CLI."""
from __future__ import annotations

import math
from functools import partial

import numpy as np
import pytest
import torch
from mlflow.tracking import MlflowClient

from hpoflow.algorithms.base import BuildContext
from hpoflow.config import registry
from hpoflow.core.records import Direction, Evaluation
from hpoflow.core.space import Categorical, SearchSpace
from hpoflow.runner.loop import Budget, run
from hpoflow.surrogates.temporal import build
from hpoflow.surrogates.temporal_config import TemporalGPConfig
from hpoflow.tasks.base import Task
from hpoflow.tasks.time_varying import TVSynthetic
from tests.conftest import mlflow_runs


def _run(algo: str, rounds: int = 60, seed: int = 0, eps: float = 0.05, **kw):
    task = TVSynthetic(epsilon=eps, n_points=200, seed=seed)
    ctx = BuildContext(task=task, rounds=rounds, seed=seed,
                       surrogate=partial(build, TemporalGPConfig(epsilon=eps), dtype=torch.float64, device="cpu"))
    entry = registry.get("algorithm", algo)
    algorithm = entry.load()(entry.make_config(**kw), ctx)
    return algorithm, run(task, algorithm, budget=Budget(rounds))


def test_skipped_rounds_record_no_value_no_cost_but_regret_against_the_round_optimum():
    algo, res = _run("tv_gp_ucb", query="bernoulli", query_prob=0.5)
    skipped = [r for r in res.records if not r.queried]
    assert 10 < len(skipped) < 50
    task = algo.task
    for r in skipped:
        assert r.value is None and r.cost == 0.0
        f = task.function(r.round)
        assert r.optimum == pytest.approx(f.max()) and r.true_value == pytest.approx(f[task.index(r.config)])
    assert res.summary["query_cost"] == len(res.records) - len(skipped)
    expected = sum(r.optimum - r.true_value for r in res.records)
    assert res.summary["cumulative_regret"] == pytest.approx(expected)
    assert algo.model.n == res.summary["query_cost"]  # only observed rounds reach the model


def test_ce_and_lcb_ucb_query_less_than_always_but_keep_querying():
    _, always = _run("tv_gp_ucb", rounds=80)
    _, ce = _run("ce_gp_ucb", rounds=80, kappa=0.8)
    _, lcb = _run("tv_gp_ucb", rounds=80, query="lcb_ucb")
    assert always.summary["query_cost"] == 80
    for res in (ce, lcb):
        assert 5 < res.summary["query_cost"] < 80
        late = [r.queried for r in res.records[40:]]
        assert any(late), "the rule stopped querying (a single-optimum plateau trap)"
    assert all("ce_min_prob" in r.metrics for r in ce.records)


def test_r_gp_ucb_resets_its_model_and_ignores_time():
    algo, _ = _run("r_gp_ucb", rounds=50, reset_every=7)
    assert algo.model.epsilon == 0.0
    assert algo.model.n == (50 - 1) % 7 + 1


def test_continuous_domain_uses_lbfgs_local_optima():
    # a task without candidates: the UCB and its local optima are found by L-BFGS-B
    from hpoflow.tasks.synthetic import make_branin

    task = make_branin(noise_std=0.1)  # minimised: the algorithm models the reward sign * y
    ctx = BuildContext(task=task, rounds=6, seed=0,
                       surrogate=partial(build, TemporalGPConfig(epsilon=0.01, noise=1.0, outputscale=100.0),
                                         dtype=torch.float64, device="cpu"))
    entry = registry.get("algorithm", "ce_gp_ucb")
    algorithm = entry.load()(entry.make_config(), ctx)
    algorithm.n_starts = 8
    res = run(task, algorithm, budget=Budget(6))
    assert len(res.records) == 6 and all("n_compared" in r.metrics for r in res.records)


def test_config_errors_name_the_key():
    from hpoflow.algorithms.ce_gp_ucb_config import BanditConfig, TVUCBConfig

    with pytest.raises(ValueError, match="algo.kappa"):
        TVUCBConfig(kappa=1.5)
    with pytest.raises(ValueError, match="algo.query"):
        TVUCBConfig(query="sometimes")
    with pytest.raises(ValueError, match="algo.query"):
        BanditConfig(query="ce")


def test_cli_runs_every_gp_rule_and_logs_skipped_rounds(run_cli, store):
    run_cli("-m", "algo=tv_gp_ucb,r_gp_ucb,ce_gp_ucb", "surrogate=tv_gp", "task=tv_synthetic", "task.n_points=100",
            "budget.rounds=8", "surrogate.fit=epsilon", "surrogate.epsilon_min=0.002",
            f"tracking.uri={store}", "tracking.artifacts=false")
    run_cli("algo=ce_gp_ucb", "algo.ce_scale=variance", "surrogate=tv_gp", "task=tv_synthetic", "task.n_points=100",
            "budget.rounds=4", f"tracking.uri={store}", "tracking.experiment=ce_scale", "tracking.artifacts=false")
    (literal,) = mlflow_runs(store, "ce_scale")
    assert literal.info.status == "FINISHED" and literal.data.params["algo.ce_scale"] == "variance"
    runs = mlflow_runs(store, "tv_synthetic")
    assert {r.data.params["surrogate.epsilon_min"] for r in runs} == {"0.002"}
    assert sorted(r.data.tags["algo"] for r in runs) == ["ce_gp_ucb", "r_gp_ucb", "tv_gp_ucb"]
    client = MlflowClient(tracking_uri=store)
    for r in runs:
        assert r.info.status == "FINISHED"
        hist = client.get_metric_history(r.info.run_id, "cumulative_regret")
        assert [m.step for m in hist] == list(range(1, 9))  # regret charged on every round, queried or not
        observed = client.get_metric_history(r.info.run_id, "value")  # a skipped round logs no value
        assert r.data.metrics["query_cost"] == len(observed)


def test_cli_rejects_the_plain_gp_surrogate(run_cli):
    proc = run_cli("algo=ce_gp_ucb", "surrogate=gp", "task=tv_synthetic", "tracking=off", "budget.rounds=2",
                   check=False)  # the algorithm selects tv_gp itself; an explicit surrogate=gp wins and is refused
    assert proc.returncode != 0 and "surrogate=tv_gp" in proc.stderr


def test_ce_queries_an_unexplored_x_t_after_one_bad_observation():
    # one bad observation at x = 0 leaves the rest of [0, 1] a flat prior plateau; x_t lies on it with
    # sigma ~ 1, so it must be compared with other plateau points (P ~ 0.5) and queried, not skipped
    task = TVSynthetic(epsilon=0.003, n_points=200, seed=0)
    ctx = BuildContext(task=task, rounds=10, seed=0,
                       surrogate=partial(build, TemporalGPConfig(epsilon=0.003), dtype=torch.float64, device="cpu"))
    entry = registry.get("algorithm", "ce_gp_ucb")
    algo = entry.load()(entry.make_config(kappa=0.99), ctx)
    algo.model.add(torch.zeros(1, dtype=torch.float64), -1.5, 1.0)
    s = algo.ask(2)
    assert float(s.x[0]) > 0.5 and s.info["sigma"] > 0.9
    assert s.info["n_compared"] >= 1 and abs(s.info["ce_min_prob"] - 0.5) < 0.05 and s.observe


class _SwitchingArms(Task):
    """Three arms, static means (0.8, 0.5, 0.2) until ``change``, then reversed; maximise."""

    name, direction = "switching_arms", Direction.MAXIMIZE

    def __init__(self, change: int, seed: int) -> None:
        self.space = SearchSpace.of(Categorical("arm", (0, 1, 2)))
        self.candidates = torch.stack([self.space.encode({"arm": a}) for a in range(3)])
        self.change, self.rng = change, np.random.default_rng(seed)

    def evaluate(self, config, *, round, observe=True):
        means = np.array([0.8, 0.5, 0.2]) if round <= self.change else np.array([0.2, 0.5, 0.8])
        true, best = float(means[int(config["arm"])]), float(means.max())
        if not observe:
            return Evaluation(value=math.nan, true_value=true, cost=0.0, optimum=best)
        return Evaluation(value=true + 0.1 * float(self.rng.standard_normal()), true_value=true, cost=1.0, optimum=best)


def _switch_run(seed: int, **surrogate):
    task, rounds = _SwitchingArms(200, seed), 600
    cfg = TemporalGPConfig(kernel="identity", outputscale=0.25, prior_mean=0.5, noise=0.01, fit="epsilon",
                           **surrogate)
    ctx = BuildContext(task=task, rounds=rounds, seed=seed,
                       surrogate=partial(build, cfg, dtype=torch.float64, device="cpu"))
    entry = registry.get("algorithm", "ce_gp_ucb")
    return run(task, entry.load()(entry.make_config(kappa=0.95), ctx), budget=Budget(rounds)).records


def test_fitted_epsilon_after_a_static_stretch_still_notices_a_change():
    """The deadlock of Table A1: 200 static rounds drive the ML eps to its lower bound; CE must still query
    after the best arm changes and find the new one (the floor epsilon_min keeps uncertainty growing)."""
    for seed in range(3):
        records = _switch_run(seed)
        after = [r for r in records if r.round > 200]
        assert sum(r.queried for r in after) >= 5
        assert next(r.round for r in after if r.queried) < 300
        assert np.mean([r.optimum - r.true_value for r in records[-100:]]) < 0.05
    # without the floor (the old bound 1e-4) seed 0 deadlocks: no query after the change
    stuck = _switch_run(0, epsilon_min=1e-4)
    assert not any(r.queried for r in stuck if r.round > 200)
    assert np.mean([r.optimum - r.true_value for r in stuck[-100:]]) > 0.5
