import numpy as np
import pytest
import torch

from hpoflow.surrogates.configs import GPConfig
from hpoflow.surrogates.gp import ExactGP


def _matern52(A, B, ls, s2):
    d = np.sqrt((((A[:, None, :] - B[None, :, :]) / ls) ** 2).sum(-1))
    return s2 * (1 + np.sqrt(5) * d + 5 * d**2 / 3) * np.exp(-np.sqrt(5) * d)


def _data(n=12, d=2, seed=0):
    g = torch.Generator().manual_seed(seed)
    X = torch.rand(n, d, generator=g, dtype=torch.float64)
    y = torch.sin(6 * X[:, 0]) + X[:, 1] ** 2
    return X, y


def test_posterior_matches_closed_form_with_fixed_hyperparameters():
    X, y = _data()
    gp = ExactGP(2, GPConfig(fit="fixed", lengthscale=0.3, noise=1e-2, standardize=False))
    gp.fit(X, y)
    Xs = torch.rand(5, 2, generator=torch.Generator().manual_seed(3), dtype=torch.float64)
    mean, var = gp.posterior(Xs)
    A, B, yy = X.numpy(), Xs.numpy(), y.numpy()
    K = _matern52(A, A, 0.3, 1.0) + 1e-2 * np.eye(len(A))
    Ks = _matern52(B, A, 0.3, 1.0)
    ref_mean = Ks @ np.linalg.solve(K, yy)
    ref_var = 1.0 - np.einsum("ij,ji->i", Ks, np.linalg.solve(K, Ks.T))
    assert np.allclose(mean.detach().numpy(), ref_mean, atol=1e-8)
    assert np.allclose(var.detach().numpy(), ref_var, atol=1e-8)


def test_rank_one_update_equals_refactorisation():
    X, y = _data(20)
    gp = ExactGP(2, GPConfig(refit_every=100, max_iter=15))
    gp.fit(X[:10], y[:10])
    for i in range(10, 20):
        gp.update(X[i:i + 1], y[i:i + 1])
    ref = ExactGP(2, GPConfig())
    ref.model.load_state_dict(gp.model.state_dict())
    ref.X, ref.y, ref.y_mean, ref.y_std = X, y, gp.y_mean, gp.y_std
    ref.z = (y - gp.y_mean) / gp.y_std
    ref._factorise()
    Xs = torch.rand(7, 2, dtype=torch.float64)
    for a, b in zip(gp.posterior(Xs), ref.posterior(Xs)):
        assert torch.allclose(a, b, atol=1e-9)


def test_marginal_likelihood_fit_interpolates_smooth_data():
    X, y = _data(30)
    gp = ExactGP(2)
    gp.fit(X, y)
    mean, var = gp.posterior(X)
    assert torch.allclose(mean, y, atol=0.05)
    assert gp.noise < 0.05 and (gp.lengthscale > 0.025).all()
    Xs, ys = _data(50, seed=9)
    assert (gp.posterior(Xs)[0] - ys).abs().mean() < 0.1


def test_posterior_is_differentiable_in_inputs_only():
    X, y = _data()
    gp = ExactGP(2)
    gp.fit(X, y)
    x = torch.rand(3, 2, dtype=torch.float64, requires_grad=True)
    m, v = gp.posterior(x)
    (m + v).sum().backward()
    assert x.grad is not None and torch.isfinite(x.grad).all()
    assert all(not p.requires_grad for p in gp.model.parameters())


def test_auto_refit_schedule_refits_on_growth_or_surprise_only():
    X, y = _data(60)
    gp = ExactGP(2, GPConfig(max_iter=15))  # refit_every=null: auto
    gp.fit(X[:40], y[:40])
    ls = gp.lengthscale.clone()
    for i in range(40, 43):  # 3 ordinary points: growth < 10%, residuals small -> no refit
        gp.update(X[i:i + 1], y[i:i + 1])
    assert gp._n_at_fit == 40 and gp.n == 43 and torch.equal(gp.lengthscale, ls)
    gp.update(X[43:44], y[43:44])  # n = 44 = 1.1 * 40: growth triggers a refit
    assert gp._n_at_fit == 44
    gp.update(X[44:45], y[44:45] + 50.0)  # a wild observation forces a refit
    assert gp._n_at_fit == 45


def _negative_mll(gp: ExactGP) -> float:
    import gpytorch
    model = gp.model
    model.train()
    mll = gpytorch.mlls.ExactMarginalLogLikelihood(model.likelihood, model)
    with torch.no_grad(), gpytorch.settings.fast_computations(False, False, False):
        value = float(-mll(model(gp.X), gp.z))
    model.eval()
    return value


def test_default_fit_tolerance_reaches_the_strict_optimum():
    """The looser default ftol stops L-BFGS-B earlier but at the strict fit's likelihood and predictions."""
    Xs, _ = _data(200, d=3, seed=99)
    for seed in (4, 5, 6):
        X, y = _data(60, d=3, seed=seed)
        y = y + 0.05 * torch.randn(60, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
        loose, strict = ExactGP(3), ExactGP(3, GPConfig(fit_ftol=1e-12, max_iter=500))
        loose.fit(X, y)
        strict.fit(X, y)
        assert _negative_mll(loose) - _negative_mll(strict) < 1e-3
        assert (loose.posterior(Xs)[0] - strict.posterior(Xs)[0]).abs().max() < 0.01 * y.std()


def test_fit_tolerance_is_validated():
    import pytest
    with pytest.raises(ValueError, match="surrogate.fit_ftol=0"):
        GPConfig(fit_ftol=0)


def test_fit_is_a_local_optimum_in_every_hyperparameter():
    """Perturbing any fitted (log-searched) lengthscale or the noise by ±2% never improves the objective."""
    X, y = _data(40, d=3, seed=7)
    y = y + 0.05 * torch.randn(40, generator=torch.Generator().manual_seed(7), dtype=torch.float64)
    gp = ExactGP(3)
    gp.fit(X, y)
    best = _negative_mll(gp)
    raw_ls, raw_noise = gp._base_kernel.raw_lengthscale, gp.model.likelihood.noise_covar.raw_noise
    for param in (raw_ls, raw_noise):
        for i in range(param.numel()):
            for factor in (0.98, 1.02):
                saved = param.data.clone()
                param.data.view(-1)[i] *= factor
                assert _negative_mll(gp) >= best - 1e-7
                param.data.copy_(saved)


@pytest.mark.parametrize("kernel", ["matern12", "matern32", "matern52", "rbf"])
@pytest.mark.parametrize("ard", [True, False])
def test_closed_form_covariance_equals_gpytorch_kernel(kernel, ard):
    X, y = _data(25, d=3, seed=2)
    gp = ExactGP(3, GPConfig(kernel=kernel, ard=ard, learn_outputscale=True))
    gp.fit(X, y)
    A = torch.rand(7, 3, generator=torch.Generator().manual_seed(5), dtype=torch.float64)
    reference = gp.kernel(A, X).to_dense()
    assert torch.allclose(gp._k(A, X), reference, atol=1e-12, rtol=1e-10)
    assert torch.allclose(gp._k(X, X), gp.kernel(X, X).to_dense(), atol=1e-12, rtol=1e-10)
    x = A.clone().requires_grad_(True)
    (g_ours,) = torch.autograd.grad(gp._k(x, X).sum(), x)
    x = A.clone().requires_grad_(True)
    (g_ref,) = torch.autograd.grad(gp.kernel(x, X).to_dense().sum(), x)
    assert torch.allclose(g_ours, g_ref, atol=1e-10)


def test_kumaraswamy_warp_is_a_monotone_map_of_the_unit_interval_and_the_identity_at_one():
    from hpoflow.surrogates.warp import EPS, kumaraswamy_cdf
    x = torch.linspace(0, 1, 201, dtype=torch.float64).unsqueeze(-1).expand(-1, 3)  # 201 x 3
    one = torch.ones(3, dtype=torch.float64)
    assert torch.allclose(kumaraswamy_cdf(x, one, one), x, atol=1e-6)
    a = torch.tensor([0.2, 1.0, 5.0], dtype=torch.float64)
    b = torch.tensor([3.0, 0.3, 1.0], dtype=torch.float64)
    w = kumaraswamy_cdf(x, a, b)
    assert (w.diff(dim=0) > 0).all()  # strictly increasing in every dimension
    assert (w >= 0).all() and (w <= 1).all()
    # the ends: inputs are squeezed into [EPS, 1 - EPS] first (as BoTorch's Warp), so 0 goes to w(EPS), which
    # is ~0 for a >= 1 but visibly above it for a = 0.2 (EPS^0.2 = 0.04)
    assert torch.allclose(w[0], 1 - (1 - EPS ** a) ** b, atol=1e-12)
    assert torch.allclose(w[-1], 1 - (1 - (1 - EPS) ** a).clamp_min(1e-12) ** b, atol=1e-12)
    assert float(w[-1].min()) > 0.99
    assert not torch.allclose(w, x, atol=0.05)  # a, b != 1 really warp
    closed = 1 - (1 - 0.5 ** a) ** b  # w(0.5) by hand
    assert torch.allclose(w[100], closed, atol=1e-6)
    xg = x[1:-1].clone().requires_grad_(True)  # the gradient stays finite for a, b < 1 near the ends too
    (g,) = torch.autograd.grad(kumaraswamy_cdf(xg, a, b).sum(), xg)
    assert torch.isfinite(g).all() and (g > 0).all()


def test_warp_false_is_the_old_model_and_warp_true_learns_concentrations():
    """warp=false registers no parameter (so fits and predictions are the unwarped ones, bit for bit); warp=true
    fits a, b within BoTorch's bounds, predicts through the warped kernel and keeps the posterior consistent."""
    X, y = _data(15, d=2, seed=1)
    Xs = torch.rand(6, 2, generator=torch.Generator().manual_seed(2), dtype=torch.float64)
    off = ExactGP(2, GPConfig(warp=False))
    plain = ExactGP(2)
    off.fit(X, y)
    plain.fit(X, y)
    assert [n for n, _ in off.model.named_parameters()] == [n for n, _ in plain.model.named_parameters()]
    assert not any("warp" in n for n, _ in off.model.named_parameters())
    assert all(torch.equal(a, b) for a, b in zip(off.posterior(Xs), plain.posterior(Xs)))

    y_skew = torch.log(X[:, 0] + 0.01) + X[:, 1]  # a length scale that grows along x0: what warping is for
    on = ExactGP(2, GPConfig(warp=True))
    on.fit(X, y_skew)
    a, b = on._warp.a, on._warp.b
    assert ((a >= 0.1) & (a <= 10) & (b >= 0.1) & (b <= 10)).all()
    assert not (torch.allclose(a, torch.ones(2, dtype=a.dtype)) and torch.allclose(b, torch.ones(2, dtype=b.dtype)))
    Xw = on._warp(Xs)
    from hpoflow.surrogates.kernels import stationary
    assert torch.allclose(on._k(Xs, X), stationary("matern52", Xw, on._warp(X), on._base_kernel.lengthscale,
                                                   on.model.covar_module.outputscale))
    assert torch.allclose(on._k(Xs, X), on.kernel(Xw, on._warp(X)).to_dense(), atol=1e-12)  # fit and predict agree
    mean, _ = on.posterior(X)
    assert torch.allclose(mean, y_skew, atol=0.05 * float(y_skew.std()))  # interpolates (low noise)
    on.update(Xs[:1], y_skew[:1])  # rank-one extension through the warp equals a refactorisation
    L = on.L.clone()
    on._factorise()
    assert torch.allclose(L, on.L, atol=1e-9)



def test_yeo_johnson_matches_scipy_inverts_and_normalises_a_heavy_tail():
    """The power transform equals scipy's Yeo-Johnson at the fitted lambda, is strictly increasing, inverts,
    has the derivative its delta method uses, and makes a heavy-tailed sample less skewed."""
    from scipy import stats

    from hpoflow.surrogates.output_transform import LAMBDA_RANGE, YeoJohnson
    g = torch.Generator().manual_seed(0)
    y = -torch.exp(4 * torch.rand(40, generator=g, dtype=torch.float64))  # rewards of a loss spanning e^4: left tail
    T = YeoJohnson.fit(y)
    assert LAMBDA_RANGE[0] <= T.lmbda <= LAMBDA_RANGE[1] and T.lmbda != 1.0
    x = ((y - T.shift) / T.scale).numpy()
    assert np.allclose(T(y).numpy(), stats.yeojohnson(x, lmbda=T.lmbda), atol=1e-12)
    assert abs(stats.skew(T(y).numpy())) < 0.5 * abs(stats.skew(y.numpy()))
    grid = torch.linspace(-40, 5, 400, dtype=torch.float64)
    assert (T(grid).diff() > 0).all()  # monotone: the best point stays the best
    assert torch.allclose(T.inverse(T(grid)), grid, atol=1e-8)
    h = 1e-6
    assert torch.allclose((T(grid + h) - T(grid - h)) / (2 * h), T.derivative(grid), rtol=1e-5)
    for lam in (0.0, 2.0, -1.5, 3.5):  # the special cases of the closed forms
        S = YeoJohnson(0.3, 2.0, lam)
        assert torch.allclose(S.inverse(S(grid)), grid, atol=1e-6)
    assert YeoJohnson.fit(y[:2]).lmbda == 1.0 and torch.equal(YeoJohnson.fit(y[:2])(y), y)  # too few points: identity


def test_output_transform_power_models_transformed_outputs_and_reports_y_units():
    """output_transform=power standardises T(y); ``standardize`` and an extension use the same T; the posterior
    in y's units interpolates the data (inverse of the transformed mean); none is the old model bit for bit."""
    X, _ = _data(20, d=2, seed=3)
    y = -torch.exp(5 * X.sum(1))  # heavy left tail
    plain, off = ExactGP(2), ExactGP(2, GPConfig(output_transform="none"))
    plain.fit(X, y)
    off.fit(X, y)
    assert all(torch.equal(a, b) for a, b in zip(off.posterior(X), plain.posterior(X)))
    on = ExactGP(2, GPConfig(output_transform="power", noise=1e-4))
    on.fit(X[:15], y[:15])
    t = on._transform
    assert t is not None and t.lmbda > 1  # a left tail is compressed by lambda > 1
    z = (t(y[:15]) - t(y[:15]).mean()) / t(y[:15]).std()
    assert torch.allclose(on.z, z, atol=1e-12) and torch.allclose(on.standardize(y[:15]), z, atol=1e-12)
    mean, var = on.posterior(X[:15])
    assert torch.allclose(mean, y[:15], rtol=0.1, atol=0.5) and (var > 0).all()  # data spanning 5 to 900
    for i in range(15, 20):
        on.extend(X[i], y[i])
    assert torch.allclose(on.z[15:], on.standardize(y[15:]))  # the fitted T and scale kept between refits
    assert torch.argmax(on.standardize(y)) == torch.argmax(y)  # order preserved: the incumbent is y's best
    with pytest.raises(ValueError, match="surrogate.output_transform='log' is unknown; allowed: none, power"):
        GPConfig(output_transform="log")


@pytest.mark.parametrize("ard", [True, False])
@pytest.mark.parametrize("lengthscale", [None, 0.7])
def test_the_gpytorch_model_is_built_on_first_use_with_the_lengthscale_read_before(ard, lengthscale):
    """Issue 41 (cold start): the model is built at its first use, not in the constructor; the lengthscale read
    before (GP-BO's isinstance check reads it) is the built model's initial one, value, shape and dtype."""
    gp = ExactGP(3, GPConfig(ard=ard, lengthscale=lengthscale))
    before = gp.lengthscale
    assert gp._parts is None  # reading the lengthscale built nothing
    built = gp._base_kernel.lengthscale.detach().reshape(-1)
    assert gp._parts is not None and torch.equal(before, built) and before.dtype == built.dtype == torch.float64


def test_a_flat_likelihood_keeps_the_hyperparameter_search_inside_exps_range():
    """Replayed learning curves (task=lc_replay) sample a finite set, so the GP of algo=mf_gp sees repeated
    configurations with equal values: at the 17th point of this sequence L-BFGS-B's quasi-Newton step reached log
    hyperparameters of ~1e4 and ``exp`` overflowed (a RuntimeWarning, here an error). Bounded log search: none."""
    import warnings

    from hpoflow.tasks.replay import ReplayTask

    task = ReplayTask("digits_gb", 0)
    idx = [175, 55, 252, 82, 250, 138, 46, 102, 33, 89, 141, 249, 247, 43, 172, 157, 96, 9]
    X = task.points[idx]
    y = -torch.tensor([task.curves[i][-1] for i in idx], dtype=torch.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        gp = ExactGP(X.shape[1], GPConfig())
        gp.fit(X[:3], y[:3])
        for i in range(3, len(idx)):
            gp.update(X[i:i + 1], y[i:i + 1])
    lengthscale = gp._base_kernel.lengthscale
    assert gp.n == len(idx) and torch.isfinite(lengthscale).all() and (lengthscale <= 1e6).all()
