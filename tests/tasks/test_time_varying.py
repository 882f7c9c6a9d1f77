"""Drifting tasks: the AR(1) law of tv_synthetic, the bandit shapes, unobserved rounds, online digits."""
from __future__ import annotations

import math

import numpy as np
import pytest

from hpoflow.tasks.online_hpo import OnlineDigits
from hpoflow.tasks.time_varying import TVBandit, TVSynthetic, bandit_means
from tests.conftest import mlflow_runs


def test_tv_synthetic_follows_the_markov_model():
    eps = 0.1
    task = TVSynthetic(epsilon=eps, n_points=200, seed=0)
    F = np.stack([task.function(t) for t in range(1, 401)])
    # stationary unit variance (Matérn prior has k(x,x) = 1), lag-1 correlation sqrt(1 - eps) at every x
    assert F.var() == pytest.approx(1.0, abs=0.25)
    lag1 = np.mean([np.corrcoef(F[:-1, j], F[1:, j])[0, 1] for j in range(0, 200, 20)])
    assert lag1 == pytest.approx(math.sqrt(1 - eps), abs=0.05)
    # f_{t+1} - sqrt(1-eps) f_t is sqrt(eps) times a fresh GP draw: variance eps
    innov = F[1:] - math.sqrt(1 - eps) * F[:-1]
    assert innov.var() == pytest.approx(eps, rel=0.15)
    assert np.allclose(TVSynthetic(epsilon=eps, n_points=200, seed=0).function(7), F[6])  # seeded


def test_unobserved_rounds_reveal_truth_for_regret_but_no_value_or_cost():
    task = TVSynthetic(epsilon=0.05, n_points=100, seed=1)
    ev = task.evaluate({"x": 0.5}, round=3, observe=False)
    f = task.function(3)
    assert math.isnan(ev.value) and ev.cost == 0.0
    assert ev.true_value == pytest.approx(f[task.index({"x": 0.5})]) and ev.optimum == pytest.approx(f.max())
    obs = task.evaluate({"x": 0.5}, round=3)
    assert obs.cost == 1.0 and abs(obs.value - obs.true_value) < 0.6


@pytest.mark.parametrize("shape", ["sine", "gaussian", "piecewise"])
def test_bandit_shapes_drift_and_change_the_best_arm(shape):
    means = bandit_means(shape, np.arange(1, 2001), 2000)
    assert means.shape == (2000, 3) and means.min() >= 0 and means.max() <= 1
    assert len(set(means.argmax(1).tolist())) == 3  # every arm is best at some time
    task = TVBandit(shape=shape, seed=0)
    ev = task.evaluate({"arm": 1}, round=10, observe=False)
    assert ev.true_value == pytest.approx(means[9, 1]) and ev.optimum == pytest.approx(means[9].max())


def test_online_digits_charges_validation_passes_and_clips_the_reward():
    task = OnlineDigits(steps_per_round=5, seed=0)
    ev = task.evaluate({"lr_mult": 5.0}, round=1)
    assert ev.cost == 1.0 and -2.0 <= ev.value <= 2.0 and "val_acc" in ev.metrics and "test_acc" in ev.metrics
    skipped = task.evaluate({"lr_mult": 5.0}, round=2, observe=False)
    assert math.isnan(skipped.value) and skipped.cost == 0.0 and "val_acc" not in skipped.metrics
    before = task.last_acc
    ev3 = task.evaluate({"lr_mult": 5.0}, round=3)
    expected = float(np.clip(100 * (ev3.metrics["val_acc"] - before) / 2, -2, 2))  # gain per round since round 1
    assert ev3.value == pytest.approx(expected) and task.validation_passes == 2


def test_cli_runs_the_time_varying_tasks(run_cli, store):
    run_cli("task=tv_bandit", "task.shape=piecewise", "algo=ce_gp_ucb", "surrogate=tv_gp", "surrogate.kernel=identity",
            "budget.rounds=6", f"tracking.uri={store}", "tracking.artifacts=false")
    run_cli("task=online_digits", "task.n_multipliers=16", "algo=ce_gp_ucb", "surrogate=tv_gp", "budget.rounds=4",
            f"tracking.uri={store}", "tracking.artifacts=false")
    (bandit,) = mlflow_runs(store, "tv_bandit")
    (digits,) = mlflow_runs(store, "online_digits")
    assert bandit.info.status == digits.info.status == "FINISHED"
    assert "cumulative_regret" in bandit.data.metrics
    assert "test_acc" in digits.data.metrics and digits.data.metrics["query_cost"] <= 4
