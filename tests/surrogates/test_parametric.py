"""The parametric model f_w(x): layout, batched values and gradients, the least-squares oracle, surrogate=nn."""
from __future__ import annotations

import pytest
import torch

from hpoflow.surrogates.parametric import NeuralSurrogate, ParametricModel
from hpoflow.surrogates.parametric_config import ParametricConfig

torch.set_num_threads(1)


def test_default_is_the_papers_two_layer_sigmoid_network():
    m = ParametricModel(20)
    assert m.d_w == 25 * 20 + 25 + 25 + 1 == 551
    assert [type(layer).__name__ for layer in m.net] == ["Linear", "Sigmoid", "Linear"]


@pytest.mark.parametrize("depth,activation", [(1, "sigmoid"), (2, "tanh"), (2, "softplus")])
def test_values_match_the_module_with_loaded_weights(depth, activation):
    m = ParametricModel(4, ParametricConfig(hidden=7, depth=depth, activation=activation))
    w = m.init(torch.Generator().manual_seed(1))
    X = torch.rand(6, 4, dtype=torch.float64)
    m.net.load_state_dict(m.unflatten(w))
    assert torch.allclose(m.value(w, X), m.net(X).squeeze(-1))
    assert torch.allclose(m.value_pairs(w.expand(6, -1), X), m.net(X).squeeze(-1))
    assert torch.equal(m.flatten(m.unflatten(w)), w)
    W = torch.stack([w, m.init(torch.Generator().manual_seed(2))])
    rows = torch.stack([m.value(W[0], X), m.value(W[1], X)])
    assert m.values(W, X).shape == (2, 6) and torch.allclose(m.values(W, X), rows, rtol=0, atol=1e-14)


def test_batched_gradients_match_autograd_and_pass_gradcheck():
    m = ParametricModel(3, ParametricConfig(hidden=5, depth=2, activation="tanh"))
    w = m.init(torch.Generator().manual_seed(2))
    X = torch.rand(4, 3, dtype=torch.float64)
    gw, gx = m.grad_w(w, X), m.grad_x(w, X)
    assert gw.shape == (4, m.d_w) and gx.shape == (4, 3)
    for i in range(4):
        wi, xi = w.clone().requires_grad_(True), X[i].clone().requires_grad_(True)
        m.value(wi, xi.unsqueeze(0))[0].backward()
        assert torch.allclose(gw[i], wi.grad) and torch.allclose(gx[i], xi.grad)
    assert torch.autograd.gradcheck(lambda v: m.value(v, X), (w.clone().requires_grad_(True),))
    assert torch.autograd.gradcheck(lambda x: m.value(w, x), (X.clone().requires_grad_(True),))


@pytest.mark.parametrize("depth,activation", [(1, "sigmoid"), (2, "tanh"), (1, "relu")])
def test_per_sample_gradients_equal_torch_func_jacobians_and_stay_differentiable_in_x(depth, activation):
    """grad_w / grad_x use plain autograd (no torch.func transform, whose first call imports torch._dynamo):
    they must equal the jacrev Jacobians they replaced, and grad_w must keep its graph in X for the ascents."""
    from torch.func import jacrev, vmap

    m = ParametricModel(5, ParametricConfig(hidden=6, depth=depth, activation=activation, input_scale=10.0))
    w = m.init(torch.Generator().manual_seed(7))
    X = torch.rand(9, 5, dtype=torch.float64)
    assert torch.allclose(m.grad_w(w, X), vmap(jacrev(m._single, argnums=0), in_dims=(None, 0))(w, X), atol=1e-12)
    assert torch.allclose(m.grad_x(w, X), vmap(jacrev(m._single, argnums=1), in_dims=(None, 0))(w, X), atol=1e-12)
    with torch.no_grad():
        assert not m.grad_w(w, X).requires_grad
    Xg = X.clone().requires_grad_(True)
    norm = lambda P: (m.grad_w(w, P) ** 2).sum()
    (auto,) = torch.autograd.grad(norm(Xg), Xg)
    exact = jacrev(lambda P: (vmap(jacrev(m._single, argnums=0), in_dims=(None, 0))(w, P) ** 2).sum())(X)
    assert torch.allclose(auto, exact, atol=1e-10)


def test_oracle_fits_realizable_f1_to_near_zero_training_error():
    """go_ucb_f1 in cube coordinates, 25 sigmoid(sum(10u - 5) + 1) + 1, lies in the model class."""
    g = torch.Generator().manual_seed(0)
    d = 20
    X = torch.rand(20, d, generator=g, dtype=torch.float64)
    y = 25 * torch.sigmoid((10 * X - 5).sum(1) + 1) + 1
    z = (y - y.mean()) / y.std()
    m = ParametricModel(d, ParametricConfig(iterations=2000, restarts=1))
    w, mse = m.fit(X, z, g)
    assert mse < 1e-4
    assert float(((m.value(w, X) - z) ** 2).mean()) == pytest.approx(mse)
    _, untrained = m.fit(X, z, g, iterations=1, restarts=1)
    assert untrained > 100 * mse


def test_oracle_restarts_keep_the_best_and_warm_start_is_used():
    g = torch.Generator().manual_seed(3)
    X = torch.rand(10, 2, dtype=torch.float64)
    y = torch.sin(6 * X[:, 0]) + X[:, 1]
    m = ParametricModel(2, ParametricConfig(hidden=8, optimizer="lbfgs", lr=1.0, iterations=200, restarts=2))
    w, mse = m.fit(X, y, g)
    _, mse2 = m.fit(X, y, g, w0=w, iterations=1, restarts=1)
    assert mse2 <= mse + 1e-9


def test_a_stalled_fit_stops_at_the_first_50_step_check_where_its_loss_gained_less_than_stall():
    X = torch.rand(12, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(4))
    y = X.sum(1)
    m = ParametricModel(3, ParametricConfig(hidden=6, optimizer="adam", lr=0.01, restarts=1, tol=0.0))
    w0 = m.init(torch.Generator().manual_seed(5))
    g = torch.Generator()
    # stall=0.999: any step-50 loss above 0.1% of the step-0 loss counts as stalled -> 51 steps exactly
    stalled, _ = m.fit(X, y, g, w0=w0, iterations=500, restarts=1, stall=0.999)
    assert torch.equal(stalled, m.fit(X, y, g, w0=w0, iterations=51, restarts=1)[0])
    # stall=0 (the default) never stops early: the same as running all iterations
    full, _ = m.fit(X, y, g, w0=w0, iterations=120, restarts=1, stall=0.0)
    assert not torch.equal(full, stalled)
    assert torch.equal(full, m.fit(X, y, g, w0=w0, iterations=120, restarts=1)[0])


def test_neural_surrogate_posterior_shapes_units_and_gradients():
    s = NeuralSurrogate(3, ParametricConfig(hidden=6, iterations=300, restarts=1))
    X = torch.rand(8, 3, dtype=torch.float64)
    y = 100 + 10 * X.sum(1)
    s.fit(X, y)
    Xq = torch.rand(5, 3, dtype=torch.float64, requires_grad=True)
    mean, var = s.posterior(Xq)
    zmean, zvar = s.posterior(Xq, standardized=True)
    assert mean.shape == var.shape == (5,) and bool((var > 0).all())
    assert torch.allclose(mean, zmean * s.y_std + s.y_mean) and torch.allclose(var, zvar * s.y_std**2)
    (zmean + zvar.sqrt()).sum().backward()
    assert Xq.grad is not None and torch.isfinite(Xq.grad).all()
    s.update(torch.rand(1, 3, dtype=torch.float64), torch.tensor([105.0], dtype=torch.float64))
    assert s.n == 9


@pytest.mark.parametrize("bad", [{"hidden": 0}, {"activation": "gelu"}, {"optimizer": "rmsprop"}, {"lr": 0.0}])
def test_config_errors_name_the_key(bad):
    key = next(iter(bad))
    with pytest.raises(ValueError, match=f"model.{key}"):
        ParametricConfig(**bad)


def test_center_inputs_feeds_the_net_the_centred_cube():
    m = ParametricModel(3, ParametricConfig(hidden=4, center_inputs=True))
    w = m.init(torch.Generator().manual_seed(4))
    X = torch.rand(5, 3, dtype=torch.float64)
    m.net.load_state_dict(m.unflatten(w))
    assert torch.allclose(m.value(w, X), m.net(2 * X - 1).squeeze(-1))
    gx = m.grad_x(w, X)
    Xr = X.clone().requires_grad_(True)
    m.net(2 * Xr - 1).sum().backward()
    assert torch.allclose(gx, Xr.grad)


def test_weight_decay_shrinks_the_fit_and_tames_extrapolation():
    """5 points in 20-d: plain least squares interpolates with large weights; weight decay keeps w small
    and the predictions over the cube closer to the data's range."""
    d = 20
    g = torch.Generator().manual_seed(5)
    X = torch.rand(5, d, generator=g, dtype=torch.float64)
    y = torch.randn(5, generator=g, dtype=torch.float64)
    Xq = torch.rand(2000, d, generator=g, dtype=torch.float64)
    out = {}
    for wd in (0.0, 1e-2):
        m = ParametricModel(d, ParametricConfig(iterations=1000, restarts=2, weight_decay=wd))
        w, mse = m.fit(X, y, torch.Generator().manual_seed(6))
        out[wd] = (float(w.norm()), mse, float(m.value(w, Xq).abs().max()))
    assert out[0.0][1] < 1e-3 and out[1e-2][1] < 0.5  # both fit the data; the penalised one less tightly
    assert out[1e-2][0] < out[0.0][0]
    assert out[1e-2][2] < out[0.0][2]


def test_restarts_are_selected_by_the_penalised_objective():
    d = 4
    g = torch.Generator().manual_seed(7)
    X = torch.rand(6, d, generator=g, dtype=torch.float64)
    y = torch.randn(6, generator=g, dtype=torch.float64)
    cfg = ParametricConfig(hidden=6, iterations=200, restarts=3, weight_decay=0.05)
    m = ParametricModel(d, cfg)
    w, mse = m.fit(X, y, torch.Generator().manual_seed(8))
    objective = lambda v: float(((m.value(v, X) - y) ** 2).mean()) + 0.05 * float((v * v).sum())
    g2 = torch.Generator().manual_seed(8)
    singles = [m.fit(X, y, g2, w0=m.init(g2), restarts=1)[0] for _ in range(3)]  # the same 3 starts, one by one
    assert objective(w) == pytest.approx(min(objective(v) for v in singles))  # batched rows = separate runs
    assert mse == pytest.approx(float(((m.value(w, X) - y) ** 2).mean()))
