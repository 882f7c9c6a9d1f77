"""Stepper: torch.optim's Adam / SGD maths through their functional kernels (no torch._dynamo import)."""
from __future__ import annotations

import pytest
import torch

from hpoflow.surrogates.steppers import Stepper


@pytest.mark.parametrize("kind,cls", [("adam", torch.optim.Adam), ("sgd", torch.optim.SGD)])
def test_steps_equal_torch_optim_with_per_tensor_rates(kind, cls):
    g = torch.Generator().manual_seed(0)
    a0, b0 = torch.randn(4, 3, generator=g, dtype=torch.float64), torch.randn(5, generator=g, dtype=torch.float64)

    def loss(a, b):
        return (torch.sin(a) ** 2).sum() + (a.sum() - b).pow(2).sum() + (b ** 2).sum()

    a, b = a0.clone().requires_grad_(True), b0.clone().requires_grad_(True)
    ours = Stepper(kind, [(a, 0.05), (b, 0.01)])
    ra, rb = a0.clone().requires_grad_(True), b0.clone().requires_grad_(True)
    ref = cls([{"params": [ra], "lr": 0.05}, {"params": [rb], "lr": 0.01}])
    for _ in range(25):
        for opt, (x, y) in ((ours, (a, b)), (ref, (ra, rb))):
            opt.zero_grad()
            loss(x, y).backward()
            opt.step()
    assert not torch.equal(a, a0)
    assert torch.allclose(a, ra, atol=1e-14) and torch.allclose(b, rb, atol=1e-14)


def test_unknown_kind_is_named():
    with pytest.raises(ValueError, match="rmsprop"):
        Stepper("rmsprop", [])


@pytest.mark.parametrize("kind", ["adam", "sgd"])
def test_explicit_gradients_step_like_grad_attributes(kind):
    """step(grads) (GO-UCB's ascent passes its gradients) is the same step as backward() + step()."""
    g = torch.Generator().manual_seed(1)
    p0 = torch.randn(3, 4, generator=g, dtype=torch.float64)
    a, b = p0.clone().requires_grad_(True), p0.clone()
    by_attr, by_arg = Stepper(kind, [(a, 0.1)]), Stepper(kind, [(b, 0.1)])
    for _ in range(5):
        by_attr.zero_grad()
        (a ** 3).sum().backward()
        by_attr.step()
        by_arg.step([3 * b ** 2])
    assert not torch.equal(b, p0)
    assert torch.equal(a.detach(), b)
