"""Time-varying GP: posterior against a dense hand-written reference, growth of uncertainty on skipped
rounds, incremental updates equal to a full refit, no cubic work per round, eps fitting."""
from __future__ import annotations

import itertools
import math

import gpytorch
import numpy as np
import pytest
import torch

from hpoflow.surrogates.temporal import TemporalGP, space_kernel
from hpoflow.surrogates.temporal_config import TemporalGPConfig


def dense_reference(X, y, h, Xs, t, eps, ls, noise, outputscale=1.0, mean0=0.0):
    """Paper 002 §3.1 in NumPy: K~ = K o D + noise I, k~(x) = k(x, X) o d with d_i = (1-eps)^{|t-h_i|/2}."""
    def k(A, B):
        r = np.sqrt(3.0) * np.abs(A[:, None] - B[None, :]) / ls
        return outputscale * (1 + r) * np.exp(-r)

    D = (1 - eps) ** (np.abs(h[:, None] - h[None, :]) / 2)
    Kt = k(X, X) * D + noise * np.eye(len(X))
    ks = k(Xs, X) * (1 - eps) ** (np.abs(t - h)[None, :] / 2)
    mean = mean0 + ks @ np.linalg.solve(Kt, y - mean0)
    var = outputscale - np.einsum("ij,ji->i", ks, np.linalg.solve(Kt, ks.T))
    return mean, var


def _data():
    rng = np.random.default_rng(0)
    X = rng.uniform(size=6)
    y = rng.normal(size=6)
    h = np.array([1.0, 2.0, 5.0, 6.0, 9.0, 14.0])  # rounds 3-4, 7-8, 10-13 skipped
    return X, y, h


@pytest.mark.parametrize("t", [15.0, 20.0, 40.0])
def test_posterior_matches_dense_reference_with_skipped_rounds(t):
    X, y, h = _data()
    cfg = TemporalGPConfig(kernel="matern32", lengthscale=0.3, noise=0.05, epsilon=0.1, outputscale=1.3,
                           prior_mean=0.2)
    Xs = np.linspace(0, 1, 7)
    gp = TemporalGP(1, cfg)
    gp.set_candidates(torch.tensor(Xs).reshape(-1, 1))
    for xi, yi, hi in zip(X, y, h):
        gp.add(torch.tensor([xi]), float(yi), float(hi))
    ref_m, ref_v = dense_reference(X, y, h, Xs, t, 0.1, 0.3, 0.05, 1.3, 0.2)
    m, v = gp.posterior(torch.tensor(Xs).reshape(-1, 1), t)
    cm, cv = gp.candidate_posterior(t)
    for mean, var in ((m, v), (cm, cv)):
        np.testing.assert_allclose(mean.numpy(), ref_m, atol=1e-10)
        np.testing.assert_allclose(var.numpy(), ref_v, atol=1e-10)


def test_uncertainty_grows_on_rounds_without_observations():
    X, y, h = _data()
    gp = TemporalGP(1, TemporalGPConfig(epsilon=0.05))
    gp.fit(torch.tensor(X).reshape(-1, 1), torch.tensor(y), torch.tensor(h))
    xs = torch.tensor([[X[-1]]])
    variances = [float(gp.posterior(xs, t)[1]) for t in (15, 16, 20, 40, 400)]
    assert all(a < b for a, b in itertools.pairwise(variances))
    assert variances[-1] == pytest.approx(1.0, abs=1e-6)  # back to the prior
    assert variances[0] < 0.2


def test_incremental_updates_equal_full_refit_and_do_no_cubic_work():
    rng = np.random.default_rng(1)
    n = 60
    X = torch.tensor(rng.uniform(size=(n, 2)))
    y = torch.tensor(rng.normal(size=n))
    h = torch.tensor(np.sort(rng.choice(np.arange(1, 200), n, replace=False)).astype(float))
    C = torch.tensor(rng.uniform(size=(30, 2)))
    cfg = TemporalGPConfig(kernel="matern52", lengthscale=0.25, epsilon=0.03, noise=0.01)
    inc = TemporalGP(2, cfg)
    inc.set_candidates(C)
    for i in range(n):
        inc.add(X[i], float(y[i]), float(h[i]))
    assert inc.n_factorisations == 0
    full = TemporalGP(2, cfg)
    full.set_candidates(C)
    full.fit(X, y, h)
    torch.testing.assert_close(inc.L, full.L)
    for t in (float(h[-1]) + 1, 250.0):
        for a, b in zip(inc.candidate_posterior(t), full.candidate_posterior(t)):
            torch.testing.assert_close(a, b)
        for a, b in zip(inc.posterior(C, t), full.posterior(C, t)):
            torch.testing.assert_close(a, b)


@pytest.mark.parametrize("name,nu", [("matern12", 0.5), ("matern32", 1.5), ("matern52", 2.5), ("rbf", None)])
def test_space_kernels_match_gpytorch(name, nu):
    A, B = torch.rand(5, 3, dtype=torch.float64), torch.rand(4, 3, dtype=torch.float64)
    ref = gpytorch.kernels.RBFKernel() if nu is None else gpytorch.kernels.MaternKernel(nu=nu)
    ref.double()
    ref.lengthscale = 0.3
    torch.testing.assert_close(space_kernel(name, A, B, 0.3, 2.0), 2.0 * ref(A, B).to_dense().detach())


def test_identity_kernel_makes_arms_independent():
    gp = TemporalGP(1, TemporalGPConfig(kernel="identity", epsilon=0.0, noise=0.01))
    arms = torch.tensor([[1 / 6], [0.5], [5 / 6]], dtype=torch.float64)
    gp.set_candidates(arms)
    gp.add(arms[0], 1.0, 1)
    mean, var = gp.candidate_posterior(2)
    assert mean[0] == pytest.approx(1.0 / 1.01) and float(mean[1]) == 0.0 and float(var[2]) == 1.0


def test_fitted_epsilon_is_near_the_truth():
    # data simulated from the model itself: one arm, AR(1) with a = sqrt(1 - eps)
    rng = np.random.default_rng(3)
    eps, T = 0.05, 300
    f = [rng.normal()]
    for _ in range(T - 1):
        f.append(math.sqrt(1 - eps) * f[-1] + math.sqrt(eps) * rng.normal())
    y = torch.tensor(np.array(f) + 0.1 * rng.normal(size=T))
    gp = TemporalGP(1, TemporalGPConfig(kernel="identity", noise=0.01, epsilon=0.5, fit="epsilon"))
    gp.fit(torch.zeros(T, 1, dtype=torch.float64), y)
    assert 0.02 < gp.epsilon < 0.12


def test_fitted_epsilon_stays_above_its_floor_and_refits_are_scheduled_in_rounds():
    gp = TemporalGP(1, TemporalGPConfig(kernel="identity", noise=0.01, epsilon=0.2, fit="epsilon",
                                        refit_every=25, epsilon_min=2e-3))
    x = torch.zeros(1, dtype=torch.float64)
    for t in (1, 2, 3):  # a constant signal: maximum likelihood wants eps -> 0
        gp.add(x, 1.0, t)
    assert gp.epsilon == pytest.approx(2e-3, rel=0.05)  # first fit once 3 observations exist, at the floor
    gp.set_epsilon(0.2)
    gp.add(x, 1.0, 20)  # 17 rounds after the fit: incremental, no refit
    assert gp.epsilon == 0.2
    gp.add(x, 1.0, 28)  # 25 rounds after the fit, only 2 observations later: refit
    assert gp.epsilon == pytest.approx(2e-3, rel=0.05)


def test_config_errors_name_the_key():
    with pytest.raises(ValueError, match="surrogate.epsilon_min"):
        TemporalGPConfig(epsilon_min=0.0)
    with pytest.raises(ValueError, match="surrogate.epsilon"):
        TemporalGPConfig(epsilon=1.0)
    with pytest.raises(ValueError, match="surrogate.kernel"):
        TemporalGPConfig(kernel="cosine")
