"""The power-law ensemble: its hand-written gradient, its fit of an exact power law, its spread, its state."""
from __future__ import annotations

import json

import numpy as np
import pytest

from hpoflow.surrogates.power_law import PowerLawEnsemble

BUDGETS = np.array([1, 2, 3, 5, 8, 11, 17, 26, 27]) / 27.0


def curves(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``n`` configurations in [0, 1]^2 with exact power-law curves over BUDGETS; and each one's full value."""
    rng = np.random.default_rng(seed)
    U = rng.uniform(size=(n, 2))
    alpha, beta, gamma = -1 + 0.5 * U[:, 0], 0.3 + U[:, 1], 0.2 + 0.6 * U[:, 0] * U[:, 1]
    X = np.repeat(U, len(BUDGETS), axis=0)
    b = np.tile(BUDGETS, n)
    y = np.repeat(alpha, len(BUDGETS)) + np.repeat(beta, len(BUDGETS)) * b ** -np.repeat(gamma, len(BUDGETS))
    return X, b, y, alpha + beta


def test_the_gradient_is_the_loss_derivative():
    X, b, y, _ = curves(4)
    model = PowerLawEnsemble(2, members=3, hidden=5, seed=1)
    _, grad = model.loss_and_gradient(X, b, y)
    theta, eps = model.theta.copy(), 1e-6
    for j in np.random.default_rng(0).choice(len(theta), 25, replace=False):
        model.theta = theta.copy()
        model.theta[j] += eps
        up = model.loss_and_gradient(X, b, y)[0]
        model.theta[j] -= 2 * eps
        down = model.loss_and_gradient(X, b, y)[0]
        assert grad[j] == pytest.approx((up - down) / (2 * eps), rel=1e-4, abs=1e-7)
    model.theta = theta


def test_it_fits_an_exact_power_law_and_extrapolates_to_the_full_budget():
    X, b, y, full = curves(8)
    model = PowerLawEnsemble(2, seed=0, init_steps=1500)
    model.fit(X, b, y)
    mean, _ = model.predict(X, b)
    assert np.abs(mean - y).mean() < 0.03 * y.std()  # L1 error under 3% of the values' spread
    early = b <= 8 / 27  # trained on the first five budgets only, it predicts the full-budget values
    model = PowerLawEnsemble(2, seed=0, init_steps=1500)
    model.fit(X[early], b[early], y[early])
    U = X[::len(BUDGETS)]
    mean, _ = model.predict(U, np.ones(len(U)))
    assert np.abs(mean - full).mean() < 0.1 * full.std() + 0.02


def test_the_ensemble_spread_shrinks_with_data():
    X, b, y, _ = curves(12)
    probe, at = X[::len(BUDGETS)], np.full(12, 0.5)
    few = PowerLawEnsemble(2, seed=3, init_steps=600)
    few.fit(X[:2 * len(BUDGETS)], b[:2 * len(BUDGETS)], y[:2 * len(BUDGETS)])  # two curves
    many = PowerLawEnsemble(2, seed=3, init_steps=600)
    many.fit(X, b, y)  # twelve
    assert many.predict(probe, at)[1].mean() < 0.5 * few.predict(probe, at)[1].mean()


def test_minibatches_and_warm_started_fits_keep_the_loss_low():
    X, b, y, _ = curves(10)
    model = PowerLawEnsemble(2, seed=0, init_steps=800, steps=20)
    first = model.fit(X, b, y, batch=32, seed=1)
    later = [model.fit(X, b, y, batch=32, seed=k) for k in range(2, 6)]
    assert max(later) < 2 * first + 0.05  # a warm start does not throw away what the first fit learnt


def test_the_state_reloads_bit_for_bit():
    X, b, y, _ = curves(5)
    model = PowerLawEnsemble(2, seed=0, init_steps=50, steps=10)
    model.fit(X, b, y)
    copy = PowerLawEnsemble(2, seed=99, init_steps=50, steps=10)
    copy.load_state_dict(json.loads(json.dumps(model.state_dict())))
    model.fit(X, b, y)
    copy.fit(X, b, y)
    assert np.array_equal(model.theta, copy.theta) and model.fits == copy.fits == 2
    with pytest.raises(ValueError, match="weights"):
        PowerLawEnsemble(2, hidden=7).load_state_dict(model.state_dict())
