"""SHO and MY-HPO: hand-computed iterations, convergence to the exact λ*, backtracking, costs, failures."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from hpoflow.algorithms.base import BuildContext
from hpoflow.algorithms.bilevel import MYHPO, SHO, backtrack, box_step
from hpoflow.algorithms.bilevel_config import MYHPOConfig, SHOConfig
from hpoflow.core.records import RunStatus
from hpoflow.runner.loop import Budget, ObjectiveError, run
from hpoflow.tasks.synthetic import make_branin
from tests.algorithms.bilevel_helpers import orthogonal_ridge


def _ctx(task, rounds=10):
    return BuildContext(task=task, rounds=rounds, seed=0)


def test_my_hpo_full_converges_to_lambda_star_of_a_dense_grid_of_exact_solutions():
    task, lam_closed_form = orthogonal_ridge(c_target=0.8)
    X, y, n = task.X_train, task.y_train, task.X_train.shape[0]
    grid = torch.linspace(-10, 5, 15001, dtype=torch.float64)
    eye = torch.eye(task.dim, dtype=torch.float64)
    vals = [float(task.val_loss(torch.linalg.solve(X.T @ X / n + 2 * math.exp(g) * eye, X.T @ y / n)))
            for g in grid[::10]]  # coarse pass, then refine around the minimum
    i = int(np.argmin(vals)) * 10
    fine = grid[max(0, i - 10): i + 11]
    vals = [float(task.val_loss(torch.linalg.solve(X.T @ X / n + 2 * math.exp(g) * eye, X.T @ y / n)))
            for g in fine]
    lam_grid = float(fine[int(np.argmin(vals))])
    assert lam_grid == pytest.approx(lam_closed_form, abs=2e-3)
    algo = MYHPO(MYHPOConfig(variant="full"), _ctx(task))
    for k in range(1, 121):
        rec = algo.step(k)
    assert rec.metrics["lambda"] == pytest.approx(lam_grid, abs=2e-3)
    assert rec.metrics["r_norm"] < 1e-6 and rec.metrics["s_norm"] < 1e-6


@pytest.mark.parametrize("variant", ["constant", "backtracking"])
def test_algorithm_1_converges_on_the_small_problem(variant):
    task, lam_star = orthogonal_ridge(c_target=0.8)
    algo = MYHPO(MYHPOConfig(variant=variant, alpha=0.3, beta=0.3, delta=0.5), _ctx(task))
    for k in range(1, 201):
        rec = algo.step(k)
    assert rec.metrics["lambda"] == pytest.approx(lam_star, abs=1e-4)
    assert rec.cost == 2


def test_one_my_hpo_iteration_matches_algorithm_1_by_hand():
    task, _ = orthogonal_ridge()
    a, b, d, rho, lam = 0.1, 0.2, 0.3, 1.0, -1.0
    algo = MYHPO(MYHPOConfig(variant="constant", alpha=a, beta=b, delta=d, rho=rho), _ctx(task))
    algo.step(1)
    algo.step(2)  # second iteration: u, w, v all non-zero
    v, w, u, lam = algo.v.clone(), algo.w.clone(), algo.u.clone(), float(algo.lam)
    X, y, n = task.X_train.numpy(), task.y_train.numpy(), task.X_train.shape[0]
    Xv, yv = task.X_val.numpy(), task.y_val.numpy()
    grad_t = lambda x, lg: -X.T @ (y - X @ x) / n + 2 * math.exp(lg) * x  # noqa: E731
    v, w, u = v.numpy(), w.numpy(), u.numpy()
    g = grad_t(v, lam)
    v1 = v - a * g
    phi0 = v1.mean()
    phi1 = (v1 - phi0) / lam
    w1 = w - b * (g + u + rho * (w - (lam * phi1 + phi0)))
    gv = -Xv.T @ (yv - Xv @ (lam * phi1 + phi0)) / len(yv)  # ∇L_V at G_φ(λ)
    g_lam = phi1 @ (gv - u - rho * (w1 - lam * phi1 - phi0))
    lam1 = lam - d * g_lam
    u1 = u + rho * (w1 - lam1 * phi1 - phi0)
    rec = algo.step(3)
    assert np.allclose(algo.w.numpy(), w1) and np.allclose(algo.u.numpy(), u1)
    assert float(algo.lam) == pytest.approx(lam1)
    assert rec.metrics["r_norm"] == pytest.approx(np.linalg.norm(w1 - lam1 * phi1 - phi0))
    assert rec.metrics["s_norm"] == pytest.approx(rho * abs(lam1 - lam) * np.linalg.norm(phi1))


def test_one_sho_iteration_matches_appendix_b_by_hand():
    task, _ = orthogonal_ridge()
    algo = SHO(SHOConfig(alpha=0.05, beta=0.1, sigma=0.0), _ctx(task))
    for k in range(1, 4):
        algo.step(k)
    phi1, phi0, lam = algo.phi1.numpy(), algo.phi0.numpy(), float(algo.lam)
    X, y, n = task.X_train.numpy(), task.y_train.numpy(), task.X_train.shape[0]
    Xv, yv = task.X_val.numpy(), task.y_val.numpy()
    w = lam * phi1 + phi0
    g = -X.T @ (y - X @ w) / n + 2 * math.exp(lam) * w  # σ = 0: λ̂ = λ
    phi1, phi0 = phi1 - 0.05 * lam * g, phi0 - 0.05 * g
    g_lam = phi1 @ (-Xv.T @ (yv - Xv @ (lam * phi1 + phi0)) / len(yv))
    rec = algo.step(4)
    assert float(algo.lam) == pytest.approx(lam - 0.1 * g_lam)
    assert np.allclose(algo.phi1.numpy(), phi1) and rec.cost == 2


def test_backtracking_never_accepts_an_ascent_step():
    gen = torch.Generator().manual_seed(0)
    for trial in range(200):
        A = torch.randn(4, 4, generator=gen, dtype=torch.float64)
        fn = lambda x, A=A: torch.sum((A @ x) ** 2) + torch.sin(3 * x).sum()  # noqa: E731
        x = torch.randn(4, generator=gen, dtype=torch.float64)
        d = torch.randn(4, generator=gen, dtype=torch.float64)  # arbitrary, often not a descent direction
        if trial % 3 == 0:
            d = -torch.func.grad(fn)(x)  # the exact ascent direction
        t, _ = backtrack(fn, x, d, step=10.0 ** float(torch.randint(-3, 3, (1,), generator=gen)),
                         shrink=0.5, armijo=1e-4, max_halvings=30)
        assert float(fn(x - t * d)) <= float(fn(x))
        if trial % 3 == 0:
            assert t == 0.0


def test_backtracking_iterations_decrease_each_objective_on_real_data():
    from hpoflow.tasks.bilevel import make_bilevel

    task = make_bilevel("logreg", "digits_38", seed=0)
    algo = MYHPO(MYHPOConfig(variant="backtracking", alpha=5.0, beta=5.0, delta=50.0), _ctx(task))
    for k in range(1, 16):
        lam, v = algo.lam.clone(), algo.v.clone()
        before = float(task.train_loss(v, lam))
        rec = algo.step(k)
        assert float(task.train_loss(algo.v, lam)) <= before
        assert rec.metrics["alpha_step"] <= 5.0 and math.isfinite(rec.value)
    const = MYHPO(MYHPOConfig(variant="constant", alpha=5.0, beta=5.0, delta=50.0), _ctx(task))
    with pytest.raises(FloatingPointError, match="my_hpo diverged at iteration"):
        for k in range(1, 201):  # λ sits at its bound 5 from k = 2; the losses grow ~1e5x per 2 iterations
            const.step(k)


def test_fresh_w_gradient_costs_three_and_full_counts_its_solver_gradients():
    task, _ = orthogonal_ridge()
    fresh = MYHPO(MYHPOConfig(variant="constant"), _ctx(task))
    fresh.fresh_w_gradient = True
    assert fresh.step(1).cost == 3
    assert MYHPO(MYHPOConfig(variant="full"), _ctx(task)).step(1).cost >= 3


class _Memory:
    def __init__(self):
        self.rows, self.status, self.error = [], None, None

    def log(self, record, metrics):
        self.rows.append(metrics)

    def finish(self, status, summary, error=None):
        self.status, self.error = status, error


def test_divergence_fails_the_run_with_a_clear_message_and_keeps_earlier_rounds():
    from hpoflow.tasks.bilevel import make_bilevel

    task = make_bilevel("ridge", "nir", seed=0)
    tracker = _Memory()
    with pytest.raises(ObjectiveError, match="sho diverged at iteration"):
        run(task, SHO(SHOConfig(alpha=0.05), _ctx(task, 150)), tracker, Budget(150))  # diverges at k = 99
    assert tracker.status is RunStatus.FAILED and "diverged" in tracker.error
    assert len(tracker.rows) >= 2 and "lambda" in tracker.rows[0] and tracker.rows[-1]["failed"] == 1


@pytest.mark.parametrize("cls,config", [(SHO, SHOConfig()), (MYHPO, MYHPOConfig())])
def test_non_differentiable_task_is_refused(cls, config):
    with pytest.raises(ValueError, match=r"needs a differentiable bilevel task \(task=ridge or task=logreg\), "
                                         r"got task 'branin'"):
        cls(config, _ctx(make_branin()))


def test_box_step_ends_a_scalar_step_at_the_bound_it_would_cross():
    x = torch.tensor(-3.0)
    assert box_step(x, torch.tensor(2.0), 0.25, -4.0, 5.0) == 0.25       # -3 - 0.5 stays inside
    assert box_step(x, torch.tensor(2.0), 1.0, -4.0, 5.0) == 0.5         # -3 - 2 would cross -4: ends there
    assert box_step(x, torch.tensor(-4.0), 10.0, -4.0, 5.0) == 2.0       # upward: ends at 5
    assert box_step(torch.tensor(-4.0), torch.tensor(1.0), 1.0, -4.0, 5.0) == 0.0  # at the bound, pushing out
    assert box_step(x, torch.tensor(0.0), 0.7, -4.0, 5.0) == 0.7


@pytest.mark.parametrize("cls,config", [(SHO, SHOConfig()), (MYHPO, MYHPOConfig()),
                                        (MYHPO, MYHPOConfig(variant="constant")), (MYHPO, MYHPOConfig(variant="full"))])
def test_lambda_stays_in_the_task_range_where_lambda_star_is_at_its_lower_bound(cls, config):
    """c_target = 1.2: L_V keeps falling as λ → -inf, the hypergradient stays positive, and the 1/L steps grow
    with 1/||φ1||²; uncapped, SHO reaches λ ≈ -9e3 and MY-HPO ≈ -60 by iteration 50 (-2e14 / -1e6 by 200)."""
    task, lam_star = orthogonal_ridge(c_target=1.2, lambda_low=-4.0)
    assert lam_star == -math.inf
    algo = cls(config, _ctx(task))
    lams = [algo.step(k).metrics["lambda"] for k in range(1, 51)]
    assert min(lams) >= -4.0 and lams[-1] == -4.0 and lams[-5:] == [-4.0] * 5
    assert task.lambda_star.lam == pytest.approx(-4.0)


def test_init_lambda_outside_the_task_range_is_refused():
    task, _ = orthogonal_ridge(lambda_low=-4.0)
    with pytest.raises(ValueError, match=r"algo.init_lambda=-5.0 is outside the task's λ range \[-4.0, 5.0\]"):
        MYHPO(MYHPOConfig(init_lambda=-5.0), _ctx(task))


def test_config_validation():
    with pytest.raises(ValueError, match="algo.variant='fast' is unknown"):
        MYHPOConfig(variant="fast")
    with pytest.raises(ValueError, match=r"algo.alpha=-1 is not allowed; allowed: null \(1/L .*\) or a number > 0"):
        SHOConfig(alpha=-1)
    with pytest.raises(ValueError, match="algo.init_lambda=0"):
        MYHPOConfig(init_lambda=0)


def _hessian_top(fn, x: torch.Tensor) -> float:
    """Largest eigenvalue of the autograd Hessian of ``fn`` at ``x``."""
    return float(torch.linalg.eigvalsh(torch.autograd.functional.hessian(fn, x)).max())


def test_default_steps_are_one_over_the_hessian_top_eigenvalue_of_each_step():
    from hpoflow.tasks.bilevel import make_bilevel

    task = make_bilevel("ridge", "nir", seed=0)
    sho = SHO(SHOConfig(sigma=0.0), _ctx(task))
    for k in range(1, 4):
        rec = sho.step(k)
    lam = float(rec.metrics["lambda_hat"])

    def on_phi(phi):  # the φ-step's objective L_T(λ̂ φ1 + φ0, λ̂) in the stacked (φ1, φ0)
        return task.train_loss(lam * phi[: task.dim] + phi[task.dim:], lam)

    top = _hessian_top(on_phi, torch.cat([sho.phi1, sho.phi0]))
    assert rec.metrics["alpha_step"] == pytest.approx(1 / top, rel=1e-6)
    my = MYHPO(MYHPOConfig(variant="constant"), _ctx(task))
    for k in range(1, 4):
        lam_k = float(my.lam)
        rec = my.step(k)
    top_v = _hessian_top(lambda v: task.train_loss(v, lam_k), my.v)
    assert rec.metrics["alpha_step"] == pytest.approx(1 / top_v, rel=1e-6)
    assert rec.metrics["beta_step"] == pytest.approx(1 / (top_v + 1.0), rel=1e-6)  # + rho
    top_lam = _hessian_top(lambda lam_: my._lambda_objective(my.w)(lam_.reshape(())), my.lam.reshape(1))
    bound = (task.curvature.val + 1.0) * float(my.phi1 @ my.phi1)  # bounds φ1ᵀH_Vφ1 + ρ||φ1||² = top_lam
    assert rec.metrics["delta_step"] == pytest.approx(1 / bound) and bound >= top_lam


@pytest.mark.parametrize("dataset,loss", [("nir", "ridge"), ("digits_regression", "ridge"),
                                          ("digits_01", "logreg"), ("digits_38", "logreg")])
def test_sho_and_constant_my_hpo_run_at_their_defaults_on_every_dataset(dataset, loss):
    from hpoflow.tasks.bilevel import make_bilevel

    task = make_bilevel(loss, dataset, seed=0)
    lam0 = -1.0
    for algo in (SHO(SHOConfig(), _ctx(task)), MYHPO(MYHPOConfig(variant="constant"), _ctx(task))):
        for k in range(1, 41):
            rec = algo.step(k)  # raises FloatingPointError on divergence
        assert rec.value < float(task.val_loss(task.init_w())) and rec.metrics["lambda"] != lam0
    if dataset == "nir":  # the paper's fixed α = 0.01 exceeds 2/L here (L ≈ 420): it diverges
        assert 0.01 > 2 / ((1 + lam0**2) * (task.curvature.train + 2 * math.exp(lam0)))
        with pytest.raises(FloatingPointError, match="sho diverged"):
            algo = SHO(SHOConfig(alpha=0.01, beta=0.01), _ctx(task))
            for k in range(1, 101):  # λ bounces between the range's ends; the weights grow ~1e5x per step
                algo.step(k)


def test_my_hpo_reaches_lambda_star_once_the_offset_moves_it_below_zero():
    """NIR seed 0: λ* ≈ 4.2 > 0, where the hypernetwork's slope (v - v̄)/λ has the wrong sign, so MY-HPO
    stalls at the singularity λ = 0; the same problem shifted by offset 8 (λ* ≈ -3.8) is solved."""
    from hpoflow.tasks.bilevel import make_bilevel

    for offset, reaches in ((0.0, False), (8.0, True)):
        task = make_bilevel("ridge", "nir", seed=0, lambda_offset=offset)
        algo = MYHPO(MYHPOConfig(variant="backtracking", alpha=0.005, beta=0.01, delta=0.5), _ctx(task))
        for k in range(1, 401):
            rec = algo.step(k)
        star = task.lambda_star
        assert (star.lam < 0) is reaches
        if reaches:
            assert rec.value == pytest.approx(star.val_loss, rel=0.05)
        else:
            assert abs(rec.metrics["lambda"]) < 0.05 and rec.value > 1.2 * star.val_loss
