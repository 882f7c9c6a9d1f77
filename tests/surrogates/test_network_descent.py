"""The oracle's numpy descent is torch's maths: autograd's gradient of ParametricModel.values, torch.optim's updates."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from hpoflow.surrogates.network_descent import descend
from hpoflow.surrogates.parametric import ParametricModel
from hpoflow.surrogates.parametric_config import ParametricConfig
from hpoflow.surrogates.steppers import Stepper


def _problem(activation: str, depth: int, weight_decay: float = 0.0, restarts: int = 3):
    m = ParametricModel(4, ParametricConfig(hidden=5, depth=depth, activation=activation, weight_decay=weight_decay))
    g = torch.Generator().manual_seed(11)
    X = torch.rand(7, 4, generator=g, dtype=torch.float64)
    y = torch.randn(7, generator=g, dtype=torch.float64)
    W = torch.stack([m.init(g) * 6 for _ in range(restarts)])  # * 6: softplus / relu pre-activations of both signs
    return m, X, y, W, m.network_loss()


def _torch_losses(m: ParametricModel, W: torch.Tensor, X: torch.Tensor, y: torch.Tensor, wd: float) -> torch.Tensor:
    return ((m.values(W, X) - y) ** 2).mean(1) + wd * (W * W).sum(1)


@pytest.mark.parametrize("activation", ["sigmoid", "tanh", "relu", "softplus"])
@pytest.mark.parametrize("depth", [1, 2])
def test_loss_and_gradient_equal_autograd_through_the_model(activation, depth):
    m, X, y, W, loss = _problem(activation, depth, weight_decay=0.03)
    ours, grad = loss(W.numpy(), X.numpy(), y.numpy())
    Wg = W.clone().requires_grad_(True)
    theirs = _torch_losses(m, Wg, X, y, 0.03)
    (auto,) = torch.autograd.grad(theirs.sum(), Wg)
    assert loss.d_w == m.d_w
    np.testing.assert_allclose(ours, theirs.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(grad, auto.numpy(), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("optimizer,lr", [("adam", 0.01), ("sgd", 0.05)])
def test_descent_follows_torch_optim_step_for_step(optimizer, lr):
    m, X, y, W, loss = _problem("sigmoid", 1)
    ours = descend(loss, W.numpy(), X.numpy(), y.numpy(), optimizer, lr, iterations=30)
    Wt = W.clone().requires_grad_(True)
    opt = Stepper(optimizer, [(Wt, lr)])
    for _ in range(30):
        opt.zero_grad()
        _torch_losses(m, Wt, X, y, 0.0).sum().backward()
        opt.step()
    np.testing.assert_allclose(ours, Wt.detach().numpy(), rtol=1e-10, atol=1e-13)
    assert not np.allclose(ours, W.numpy())  # it moved
    assert _torch_losses(m, torch.from_numpy(ours), X, y, 0.0).max() < _torch_losses(m, W, X, y, 0.0).min()


def test_descent_stops_at_the_first_check_that_meets_the_target_or_stalls():
    _, X, y, W, loss = _problem("sigmoid", 1, restarts=1)
    args = (loss, W.numpy(), X.numpy(), y.numpy(), "adam", 0.01)
    full = descend(*args, iterations=120)
    # a target every loss meets: stop after step 0's check (1 step)
    np.testing.assert_array_equal(descend(*args, iterations=120, target=1e9), descend(*args, iterations=1))
    # stall=0.999: the step-50 check sees less than a 99.9% gain -> 51 steps
    np.testing.assert_array_equal(descend(*args, iterations=120, stall=0.999), descend(*args, iterations=51))
    # neither: all iterations; the input is not modified
    assert not np.array_equal(full, descend(*args, iterations=51))
    np.testing.assert_array_equal(args[1], W.numpy())
