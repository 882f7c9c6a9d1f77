import math

import torch

from hpoflow import acquisition as acq
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
