"""Bilevel tasks: autograd-checked losses, standardised seeded splits, black-box cost accounting."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from hpoflow.tasks.bilevel import LAMBDA, BilevelTask, make_bilevel
from hpoflow.tasks.bilevel_config import BilevelConfig
from hpoflow.tasks.datasets import Split, load_split


def _small(loss: str, seed: int = 0) -> BilevelTask:
    rng = np.random.default_rng(seed)
    X = [rng.standard_normal((n, 5)) for n in (7, 6, 5)]
    w = rng.standard_normal(5)
    ys = [x @ w + 0.3 * rng.standard_normal(len(x)) for x in X]
    if loss == "logreg":
        ys = [np.where(y > 0, 1.0, -1.0) for y in ys]
    kind = "classification" if loss == "logreg" else "regression"
    return BilevelTask(loss, Split(X[0], ys[0], X[1], ys[1], X[2], ys[2], kind), inner_steps=3, inner_lr=0.05)


@pytest.mark.parametrize("loss", ["ridge", "logreg"])
def test_losses_pass_gradcheck(loss):
    task = _small(loss)
    w = torch.randn(5, dtype=torch.float64, requires_grad=True)
    lam = torch.tensor(-0.7, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(task.train_loss, (w, lam))
    assert torch.autograd.gradcheck(task.val_loss, (w,))
    value, grad = task.train_grad(w, lam)
    assert torch.allclose(grad, torch.func.grad(task.train_loss)(w.detach(), lam.detach()))


def test_losses_match_the_paper_formulas():
    task = _small("ridge")
    w, lam = torch.randn(5, dtype=torch.float64), 0.4
    X, y = task.X_train.numpy(), task.y_train.numpy()
    expected = 0.5 * np.mean((y - X @ w.numpy()) ** 2) + math.exp(lam) * float(w @ w)
    assert float(task.train_loss(w, lam)) == pytest.approx(expected)
    clf = _small("logreg")
    X, y = clf.X_val.numpy(), clf.y_val.numpy()
    assert float(clf.val_loss(w)) == pytest.approx(np.mean(np.log1p(np.exp(-y * (X @ w.numpy())))))


@pytest.mark.parametrize("dataset", ["nir", "digits_regression", "digits_01", "digits_38"])
def test_splits_are_standardised_and_resampled_by_seed(dataset):
    a, b = load_split(dataset, 0), load_split(dataset, 1)
    n = len(a.y_train) + len(a.y_val) + len(a.y_test)
    assert np.allclose(a.X_train.mean(0), 0, atol=1e-9)
    assert not np.allclose(a.X_train, b.X_train)
    if dataset == "digits_regression":
        assert len(a.y_train) == 1000 and abs(len(a.y_val) - len(a.y_test)) <= 1
    else:
        assert len(a.y_train) == round(0.5 * n) and len(a.y_val) == round(0.25 * n)
    if a.kind == "regression":
        assert a.y_train.mean() == pytest.approx(0, abs=1e-9) and a.y_train.std() == pytest.approx(1)
    else:
        assert set(np.unique(a.y_train)) == {-1.0, 1.0}


def test_digits_regression_has_100_training_samples_per_digit():
    from sklearn.datasets import load_digits

    _, y = load_digits(return_X_y=True)
    s = load_split("digits_regression", 3)
    # undo the target standardisation: the 10 labels map to 10 distinct standardised values
    values, counts = np.unique(np.round(s.y_train, 8), return_counts=True)
    assert len(values) == 10 and set(counts) == {100}
    assert len(s.y_val) + len(s.y_test) == len(y) - 1000


def test_evaluate_trains_by_inner_steps_and_charges_them():
    task = _small("ridge")
    ev = task.evaluate({LAMBDA: -1.0}, round=1)
    assert ev.cost == 3
    w = task.init_w()
    for _ in range(3):
        w = w - 0.05 * torch.func.grad(task.train_loss)(w, -1.0)
    assert ev.value == pytest.approx(float(task.val_loss(w)))
    assert ev.metrics["test_loss"] == pytest.approx(float(task.test_loss(w)))
    assert task.evaluate({LAMBDA: -1.0}, round=1, observe=False).cost == 0


def test_factory_uses_paper_inner_settings_and_space():
    task = make_bilevel("logreg", "digits_01", seed=0)
    assert (task.inner_steps, task.inner_lr) == (500, 0.5)
    assert task.space.names == [LAMBDA] and task.space.parameters[0].low == -10
    assert make_bilevel("ridge", "nir", inner_steps=7, seed=0).inner_steps == 7


def test_bad_settings_are_one_line_errors():
    with pytest.raises(ValueError, match="task.dataset='mnist'"):
        BilevelConfig(dataset="mnist")
    with pytest.raises(ValueError, match="task=logreg needs a classification dataset"):
        make_bilevel("logreg", "nir", seed=0)
    with pytest.raises(ValueError, match="task.lambda_low"):
        BilevelConfig(lambda_low=5, lambda_high=5)


def _grid_lambda_star(task: BilevelTask, grid: np.ndarray) -> tuple[float, float]:
    """Brute force: solve the inner problem at each grid λ (torch solve / torch L-BFGS to a 1e-12 gradient).

    The logistic inner problem is strictly convex (its L2 penalty), so its minimiser does not depend on where
    L-BFGS starts: each λ starts from the previous λ's solution, which only saves iterations."""
    vals = []
    start = torch.zeros(task.dim, dtype=torch.float64)
    for lam in grid:
        if task.loss == "ridge":
            X, n = task.X_train, task.X_train.shape[0]
            A = X.T @ X / n + 2 * math.exp(lam + task.lambda_offset) * torch.eye(task.dim, dtype=X.dtype)
            w = torch.linalg.solve(A, X.T @ task.y_train / n)
        else:
            w = start.clone().requires_grad_(True)
            opt = torch.optim.LBFGS([w], lr=1, max_iter=500, tolerance_grad=1e-12, tolerance_change=0,
                                    line_search_fn="strong_wolfe")

            def closure(lam=lam, w=w, opt=opt):
                opt.zero_grad()
                loss = task.train_loss(w, float(lam))
                loss.backward()
                return loss

            opt.step(closure)
            start = w.detach().clone()
        vals.append(float(task.val_loss(w.detach())))
    i = int(np.argmin(vals))
    return float(grid[i]), vals[i]


@pytest.mark.parametrize("loss", ["ridge", "logreg"])
def test_lambda_star_matches_a_brute_force_grid_of_inner_solutions(loss):
    for seed in range(3):
        task = _small(loss, seed)
        task.lambda_low, task.lambda_high = -6.0, 3.0
        grid = np.linspace(-6, 3, 181)
        lam_grid, val_grid = _grid_lambda_star(task, grid)
        star = task.lambda_star
        assert star.val_loss <= val_grid + 1e-7  # never worse than the brute force
        assert star.val_loss == pytest.approx(val_grid, abs=1e-3)
        if lam_grid not in (-6.0, 3.0):  # interior: the same minimiser within the grids' resolution
            assert star.lam == pytest.approx(lam_grid, abs=0.05 + star.resolution)
        assert star.val_loss == pytest.approx(float(task.val_loss(task.exact_fit(star.lam))), rel=1e-6)


def test_lambda_offset_scales_the_penalty_and_shifts_lambda_star():
    base = make_bilevel("ridge", "nir", seed=1)
    shifted = make_bilevel("ridge", "nir", seed=1, lambda_offset=8.0)
    w = torch.randn(base.dim, dtype=torch.float64)
    assert float(shifted.train_loss(w, -3.0)) == pytest.approx(float(base.train_loss(w, 5.0)))
    assert shifted.lambda_star.lam == pytest.approx(base.lambda_star.lam - 8.0, abs=1e-4)
    assert shifted.lambda_star.val_loss == pytest.approx(base.lambda_star.val_loss, rel=1e-6)
    assert base.lambda_star.lam > 0 > shifted.lambda_star.lam  # the NIR split where MY-HPO cannot reach λ*


def test_curvature_is_the_top_hessian_eigenvalue_for_ridge_and_bounds_it_for_logreg():
    for loss in ("ridge", "logreg"):
        task = _small(loss)
        w = torch.randn(task.dim, dtype=torch.float64)
        H = torch.autograd.functional.hessian(task.train_fit, w)
        top = float(torch.linalg.eigvalsh(H).max())
        if loss == "ridge":
            assert task.curvature.train == pytest.approx(top)
        else:
            assert top <= task.curvature.train and task.curvature.train == pytest.approx(
                float(torch.linalg.eigvalsh(task.X_train.T @ task.X_train).max()) / 4 / task.X_train.shape[0])


def test_features_option_standardises_centres_or_keeps_the_raw_data():
    std, cen, raw = (load_split("nir", 0, f) for f in ("standardised", "centred", "raw"))
    varying = raw.X_train.std(0) > 1e-12  # constant wavenumbers keep scale 1
    assert np.allclose(std.X_train.std(0)[varying], 1) and np.allclose(cen.X_train.mean(0), 0, atol=1e-9)
    assert np.allclose(cen.X_train + (raw.X_train.mean(0)), raw.X_train)
    assert not np.allclose(cen.X_train.std(0), 1)
    assert np.allclose(std.y_train, raw.y_train)  # targets are standardised in every case
    with pytest.raises(ValueError, match="task.features='scaled' is unknown; allowed: standardised, centred, raw"):
        BilevelConfig(features="scaled")
