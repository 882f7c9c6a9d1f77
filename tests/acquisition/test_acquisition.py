import math

import numpy as np
import torch

from hpoflow.acquisition import functions as acq
from hpoflow.algorithms.configs import OptimizerConfig


def test_expected_improvement_matches_monte_carlo():
    g = torch.Generator().manual_seed(0)
    mean, var, best = torch.tensor([0.3, -1.0, 2.0]), torch.tensor([0.5, 2.0, 0.1]), 0.5
    samples = mean + var.sqrt() * torch.randn(400_000, 3, generator=g, dtype=mean.dtype)
    mc = (samples - best).clamp_min(0).mean(0)
    assert torch.allclose(acq.expected_improvement(mean, var, best), mc, atol=4e-3)


def test_log_ei_agrees_with_ei_and_stays_finite_in_the_tail():
    mean = torch.linspace(-3, 3, 13, dtype=torch.float64)
    var = torch.full_like(mean, 0.7)
    assert torch.allclose(acq.log_expected_improvement(mean, var, 0.2).exp(),
                          acq.expected_improvement(mean, var, 0.2), rtol=1e-6)
    far = acq.log_expected_improvement(torch.tensor([-60.0], dtype=torch.float64),
                                       torch.tensor([1.0], dtype=torch.float64), 0.0)
    assert torch.isfinite(far).all() and far.item() < -1000
    x = torch.tensor([-40.0, -5.0], dtype=torch.float64, requires_grad=True)
    acq.log_expected_improvement(x, torch.ones(2, dtype=torch.float64), 0.0).sum().backward()
    assert torch.isfinite(x.grad).all() and (x.grad > 0).all()


def test_pi_and_ucb_closed_forms():
    mean, var = torch.tensor([1.0]), torch.tensor([4.0])
    assert math.isclose(acq.probability_of_improvement(mean, var, 0.0).item(), 0.5 * math.erfc(-0.5 / math.sqrt(2)),
                        rel_tol=1e-6)
    assert acq.upper_confidence_bound(mean, var, beta=4.0).item() == 5.0
    assert acq.srinivas_beta(2, 2) > acq.srinivas_beta(1, 2) > 0


def test_maximize_finds_interior_optimum_and_candidate_argmax():
    target = torch.tensor([0.3, 0.8], dtype=torch.float64)

    def f(X):
        return -((X - target) ** 2).sum(-1)

    x, v = acq.maximize(f, 2, torch.Generator().manual_seed(1), OptimizerConfig(raw_samples=64, num_restarts=3))
    assert torch.allclose(x, target, atol=1e-4) and v > -1e-8
    cands = torch.rand(50, 2, generator=torch.Generator().manual_seed(2), dtype=torch.float64)
    x2, _ = acq.maximize(f, 2, torch.Generator(), candidates=cands)
    assert torch.equal(x2, cands[f(cands).argmax()])


def _rosenbrock(z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Batched 2-d Rosenbrock: values (m) and gradients (m x 2)."""
    a, b = z[:, 0], z[:, 1]
    value = (1 - a) ** 2 + 100 * (b - a * a) ** 2
    grad = np.stack([-2 * (1 - a) - 400 * a * (b - a * a), 200 * (b - a * a)], axis=1)
    return value, grad


def test_batched_lbfgsb_equals_one_scipy_run_per_start(monkeypatch):
    """Each start follows exactly the iterates of its own scipy L-BFGS-B run, with or without greenlet."""
    from scipy.optimize import minimize

    x0 = np.array([[-1.5, 2.0], [0.2, 0.1], [1.8, -0.5]])
    bounds = [(-2.0, 2.0), (-1.0, 3.0)]
    calls = []

    def counted(z):
        calls.append(z.shape[0])
        return _rosenbrock(z)

    xs, fs = acq.batched_lbfgsb(counted, x0, bounds, max_iter=500)
    for i in range(3):
        ref = minimize(lambda x: (float(_rosenbrock(x[None])[0][0]), _rosenbrock(x[None])[1][0]), x0[i], jac=True,
                       method="L-BFGS-B", bounds=bounds, options={"maxiter": 500, "gtol": acq.LBFGS_GTOL})
        assert np.allclose(xs[i], ref.x, atol=1e-10) and np.isclose(fs[i], ref.fun, atol=1e-12)
    assert np.allclose(xs, 1.0, atol=1e-3)
    if acq.greenlet is not None:
        assert max(calls) == 3 and len(calls) < sum(calls)  # the starts were evaluated together
    monkeypatch.setattr(acq, "greenlet", None)
    xs_seq, fs_seq = acq.batched_lbfgsb(_rosenbrock, x0, bounds, max_iter=500)
    assert np.allclose(xs_seq, xs, atol=1e-10) and np.allclose(fs_seq, fs, atol=1e-12)


def test_maximize_with_a_scale_finds_the_same_optimum_of_an_anisotropic_function():
    """Preconditioning by per-dimension scales changes the search coordinates, never the maximiser."""
    target = torch.tensor([0.3, 0.8, 0.55], dtype=torch.float64)
    widths = torch.tensor([0.02, 0.5, 0.1], dtype=torch.float64)

    def f(X):
        return -(((X - target) / widths) ** 2).sum(-1)

    cfg = OptimizerConfig(raw_samples=64, num_restarts=4)
    x_plain, _ = acq.maximize(f, 3, torch.Generator().manual_seed(3), cfg)
    x_scaled, v = acq.maximize(f, 3, torch.Generator().manual_seed(3), cfg, scale=widths)
    assert torch.allclose(x_scaled, target, atol=1e-5) and torch.allclose(x_plain, target, atol=1e-4)
    assert v > -1e-8
