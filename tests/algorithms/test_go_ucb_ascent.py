"""GO-UCB's Step 5 solver: the shared projected ascent, its stall stop, and the whitened objective's gradients."""
from __future__ import annotations

import pytest
import torch

from hpoflow.algorithms.go_ucb_ascent import onto_box, onto_unit_ball, projected_ascent, whitened_objective
from hpoflow.algorithms.go_ucb_config import GOUCBAdvanced, GOUCBConfig
from hpoflow.algorithms.go_ucb_ellipsoid import ConfidenceEllipsoid
from hpoflow.surrogates.parametric import ParametricModel
from hpoflow.surrogates.parametric_config import ParametricConfig
from hpoflow.surrogates.steppers import Stepper

D = torch.float64


def _quadratic(center: torch.Tensor):
    """-||x - center||^2 per row, with its gradients of -values.sum()."""
    def objective(params):
        X = params[0].requires_grad_(True)
        values = -((X - center) ** 2).sum(1)
        return values.detach(), lambda: list(torch.autograd.grad(-values.sum(), X))
    return objective


def test_ascent_reaches_the_box_constrained_maximum():
    # max of -||x - (2, 0.5)||^2 over [0, 1]^2 is at (1, 0.5), value -1
    starts = torch.tensor([[0.1, 0.9], [0.6, 0.2]], dtype=D)
    lo, hi = torch.zeros(2, dtype=D), torch.ones(2, dtype=D)
    (best,), value, _ = projected_ascent(_quadratic(torch.tensor([2.0, 0.5], dtype=D)), [starts], [0.05],
                                         [onto_box(lo, hi)], steps=300)
    assert torch.allclose(best, torch.tensor([[1.0, 0.5], [1.0, 0.5]], dtype=D), atol=1e-3)
    assert torch.allclose(value, torch.full((2,), -1.0, dtype=D), atol=1e-5)


def test_best_is_the_best_point_each_start_visited():
    """With an overshooting rate (plain steps x <- x - 2.1 (x - c): each iterate 1.1 times further from c, on the
    other side) the last iterate is not the best one: the routine returns the best visited."""
    start = torch.tensor([[0.0]], dtype=D)
    center = torch.tensor([0.3], dtype=D)
    visited = [start.clone()]
    x = start.clone().requires_grad_(True)
    stepper = Stepper("sgd", [(x, 1.05)])
    for _ in range(6):  # the same plain steps by hand
        stepper.step([2 * (x.detach() - center)])
        visited.append(x.detach().clone())
    values = torch.stack([-((v - center) ** 2).sum(1) for v in visited])
    (best,), value, steps = projected_ascent(_quadratic(center), [start], [1.05], [lambda X: None], steps=6,
                                             optimizer="sgd")
    assert steps == 6
    assert torch.equal(value, values.max(0).values)
    assert torch.equal(best, visited[int(values.argmax())])
    assert not torch.equal(best, visited[-1])


def test_stall_stop_ends_after_patience_steps_without_improvement():
    # a constant objective: step 0 improves on -inf, steps 1..patience do not -> stop at step == patience
    def flat(params):
        X = params[0].requires_grad_(True)
        values = X.sum(1) * 0.0
        return values.detach(), lambda: list(torch.autograd.grad(-values.sum(), X))

    start = torch.rand(3, 2, dtype=D)
    _, _, steps = projected_ascent(flat, [start], [0.1], [lambda X: None], steps=100, patience=7)
    assert steps == 7
    _, _, steps = projected_ascent(flat, [start], [0.1], [lambda X: None], steps=100, patience=0)
    assert steps == 100


def test_stall_stop_keeps_the_result_once_the_ascent_has_converged():
    """The maximum lies on the box's face: once there, no step improves, and stopping changes nothing."""
    starts = torch.tensor([[0.2, 0.3], [0.7, 0.9]], dtype=D)
    lo, hi = torch.zeros(2, dtype=D), torch.ones(2, dtype=D)
    objective = _quadratic(torch.tensor([3.0, 3.0], dtype=D))
    full = projected_ascent(objective, [starts], [0.2], [onto_box(lo, hi)], steps=200)
    stopped = projected_ascent(objective, [starts], [0.2], [onto_box(lo, hi)], steps=200, patience=10)
    assert stopped[2] < 50
    assert torch.equal(stopped[0][0], full[0][0]) and torch.equal(stopped[1], full[1])


def test_projections():
    X = torch.tensor([[-1.0, 0.5], [2.0, 0.25]], dtype=D)
    onto_box(torch.tensor([0.0, 0.3], dtype=D), torch.tensor([1.0, 0.4], dtype=D))(X)
    assert X.tolist() == [[0.0, 0.4], [1.0, 0.3]]
    Z = torch.tensor([[3.0, 4.0], [0.3, 0.4]], dtype=D)
    onto_unit_ball(Z)
    assert torch.allclose(Z, torch.tensor([[0.6, 0.8], [0.3, 0.4]], dtype=D))


def test_whitened_gradients_equal_autograd_through_the_whitening():
    """grad_z by one more whitening, root grad_w A (A symmetric), equals autograd through w = w_hat + root z A."""
    g = torch.Generator().manual_seed(3)
    model = ParametricModel(3, ParametricConfig(hidden=4), D)
    w_hat = model.init(g)
    ball = ConfidenceEllipsoid(0.8, model.d_w, D)
    ball.reset(torch.randn(7, model.d_w, generator=g, dtype=D))
    X, Z, root = torch.rand(5, 3, generator=g, dtype=D), torch.randn(5, model.d_w, generator=g, dtype=D), 0.7
    values, gradients = whitened_objective(model, w_hat, ball.whiten, root)([X.clone(), Z.clone()])
    gX, gZ = gradients()
    Xr, Zr = X.clone().requires_grad_(True), Z.clone().requires_grad_(True)
    ref = model.value_pairs(w_hat + root * ball.whiten(Zr), Xr)
    rX, rZ = torch.autograd.grad(-ref.sum(), (Xr, Zr))
    assert torch.equal(values, ref.detach()) and torch.equal(gX, rX)
    assert torch.allclose(gZ, rZ, rtol=1e-12, atol=1e-14)


def test_patience_setting_is_validated_and_off_in_the_paper_preset():
    with pytest.raises(ValueError, match="algo.advanced.ascent_patience=-1"):
        GOUCBAdvanced(ascent_patience=-1)
    assert GOUCBConfig(preset="paper").advanced.ascent_patience == 0  # the paper's 2,000 fixed steps
    assert GOUCBConfig().advanced.ascent_patience > 0


def test_keep_last_returns_the_final_iterates():
    """keep=last (the bonus variant's rule): the final iterate and its value, whatever was visited before."""
    start, center = torch.tensor([[0.0]], dtype=D), torch.tensor([0.3], dtype=D)
    x = start.clone()
    for _ in range(6):  # plain steps by hand, each 1.1 times further from c
        x = x - 1.05 * 2 * (x - center)
    (last,), value, steps = projected_ascent(_quadratic(center), [start], [1.05], [lambda X: None], steps=6,
                                             optimizer="sgd", keep="last")
    assert steps == 6 and torch.allclose(last, x, atol=1e-12)
    assert torch.allclose(value, -((x - center) ** 2).sum(1), atol=1e-12)
    with pytest.raises(ValueError, match="keep='first'"):
        projected_ascent(_quadratic(center), [start], [0.1], [lambda X: None], steps=1, keep="first")
