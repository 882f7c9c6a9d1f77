"""GO-UCB maths: the closed-form centre (eq. 5), the ellipsoid projection, schedules, and the ask/tell loop."""
from __future__ import annotations

import json
import math
from dataclasses import fields

import pytest
import torch

from hpoflow.algorithms.base import BuildContext
from hpoflow.algorithms.go_ucb import (
    GOUCB,
    BallGOUCB,
    BonusGOUCB,
    closed_form_center,
    output_scaling,
    project_ellipsoid,
)
from hpoflow.algorithms.go_ucb_config import GOUCBAdvanced, GOUCBConfig, paper_network
from hpoflow.core.records import Direction, Evaluation
from hpoflow.core.space import Int, SearchSpace
from hpoflow.runner.loop import Budget, run
from hpoflow.surrogates.parametric import NeuralSurrogate
from hpoflow.surrogates.parametric_config import ParametricConfig
from hpoflow.tasks.base import Task
from hpoflow.tasks.synthetic import make_go_ucb_f1

torch.set_num_threads(1)
SMALL = ParametricConfig(hidden=5, iterations=200, restarts=1)


def _config(**settings) -> GOUCBConfig:
    """A GOUCBConfig from flat settings: the ``algo.advanced.*`` ones go into its advanced sub-config."""
    names = {f.name for f in fields(GOUCBAdvanced)}
    advanced = {k: settings.pop(k) for k in list(settings) if k in names}
    return GOUCBConfig(**settings, advanced=GOUCBAdvanced(**advanced))


def test_closed_form_center_is_the_minimiser_of_eq4():
    g = torch.Generator().manual_seed(0)
    t, d_w, lam = 7, 5, 0.7
    G = torch.randn(t, d_w, generator=g, dtype=torch.float64)
    W_prev = torch.randn(t, d_w, generator=g, dtype=torch.float64)
    f_prev, y = torch.randn(t, generator=g, dtype=torch.float64), torch.randn(t, generator=g, dtype=torch.float64)
    w0 = torch.randn(d_w, generator=g, dtype=torch.float64)

    def objective(w: torch.Tensor) -> torch.Tensor:  # eq. 4
        resid = ((w - W_prev) * G).sum(1) + f_prev - y
        return lam / 2 * ((w - w0) ** 2).sum() + 0.5 * (resid**2).sum()

    w = torch.zeros(d_w, dtype=torch.float64, requires_grad=True)
    opt = torch.optim.LBFGS([w], max_iter=100, tolerance_grad=1e-12, tolerance_change=1e-15,
                            line_search_fn="strong_wolfe")

    def closure():
        opt.zero_grad()
        loss = objective(w)
        loss.backward()
        return loss

    opt.step(closure)
    closed = closed_form_center(G, W_prev, f_prev, y, lam, w0)
    assert torch.allclose(closed, w.detach(), atol=1e-7)
    grad = torch.func.grad(objective)(closed)
    assert float(grad.norm()) < 1e-9


def test_projection_lands_on_or_inside_the_ellipsoid():
    g = torch.Generator().manual_seed(1)
    d_w, beta = 6, 2.5
    A = torch.randn(d_w, d_w, generator=g, dtype=torch.float64)
    Sigma = A @ A.T + 0.3 * torch.eye(d_w, dtype=torch.float64)
    chol = torch.linalg.cholesky(Sigma)
    center = torch.randn(d_w, generator=g, dtype=torch.float64)
    radii = torch.logspace(-2, 1, 200, dtype=torch.float64).unsqueeze(1)
    W = center + radii * torch.randn(200, d_w, generator=g, dtype=torch.float64)
    P = project_ellipsoid(W, center, chol, beta)
    q_before = (((W - center) @ Sigma) * (W - center)).sum(1)
    q_after = (((P - center) @ Sigma) * (P - center)).sum(1)
    assert bool((q_after <= beta * (1 + 1e-9)).all())
    outside = q_before > beta
    assert outside.any() and (~outside).any()
    assert torch.allclose(q_after[outside], torch.full_like(q_after[outside], beta))
    assert torch.equal(P[~outside], W[~outside])
    # the direction from the centre is kept
    cos = torch.nn.functional.cosine_similarity(P - center, W - center, dim=1)
    assert torch.allclose(cos, torch.ones_like(cos))


def _network(model: ParametricConfig = SMALL):
    """The ``surrogate=nn`` factory GO-UCB takes its network from (dim -> NeuralSurrogate)."""
    return lambda dim: NeuralSurrogate(dim, model)


def _ctx(rounds: int = 12, dim: int = 3, model: ParametricConfig = SMALL) -> BuildContext:
    return BuildContext(task=make_go_ucb_f1(dim=dim), rounds=rounds, seed=0, surrogate=_network(model))


def test_defaults_n_init_lambda_and_paper_beta_schedule():
    algo = GOUCB(_config(beta_schedule="paper", beta_scale=2.0), _ctx(rounds=27))
    assert algo.n_init == 6 and algo.T2 == 21
    assert algo.lam == pytest.approx(math.sqrt(21))
    algo.F = 1.5
    assert algo.beta_t(7) == pytest.approx(2.0 * algo.d_w**3 * 1.5**4 * 7 / 21)
    const = GOUCB(_config(beta=0.3, lam=2.0), _ctx())
    assert const.beta_t(5) == 0.3 and const.lam == 2.0


def test_incremental_sigma_and_center_equal_the_closed_form_from_scratch():
    ctx = _ctx(rounds=10)
    algo = GOUCB(_config(n_init=4, ascent_steps=5, raw_samples=32, refit_every="never"), ctx)  # eq. 5 at a fixed w_0
    G, W_prev, f_prev, z = [], [], [], []
    for t in range(1, 10):
        s = algo.ask(t)
        assert s.info["phase"] == (0.0 if t <= 4 else 1.0)
        if t > 4:  # record what the tell will linearise at: the centre used for this round
            x = s.x.reshape(1, -1)
            G.append(algo.model.grad_w(algo.w_t, x)[0])
            W_prev.append(algo.w_t.clone())
            f_prev.append(float(algo.model.value(algo.w_t, x)[0]))
            for key in ("beta", "ball_radius", "w_drift", "acquisition", "phase"):
                assert math.isfinite(s.info[key])
            assert s.info["acquisition"] >= float(algo.model.value(algo.w_t, x)[0]) - 1e-9  # w_t is in the ball
        ev = ctx.task.evaluate(s.config, round=t)
        algo.tell(s, ev)
        if t > 4:
            z.append(float(algo._z(torch.tensor(ev.value))))
    G_, W_, f_, z_ = torch.stack(G), torch.stack(W_prev), torch.tensor(f_prev, dtype=torch.float64), \
        torch.tensor(z, dtype=torch.float64)
    algo.ask(10)  # recomputes w_t from the incremental Sigma_t and right-hand side
    expected = closed_form_center(G_, W_, f_, z_, algo.lam, algo.w0)
    assert torch.allclose(algo.w_t, expected, atol=1e-8)
    assert torch.allclose(algo.Sigma, algo.lam * torch.eye(algo.d_w, dtype=torch.float64) + G_.T @ G_)


@pytest.mark.parametrize("variant", ["ball", "bonus"])
def test_both_variants_run_through_the_loop_and_stay_in_the_cube(variant):
    ctx = _ctx(rounds=9)
    cfg = _config(variant=variant, ascent_steps=10, raw_samples=64, refit_iterations=50)
    result = run(ctx.task, GOUCB(cfg, ctx), budget=Budget(9))
    assert len(result.records) == 9
    phases = [r.metrics["phase"] for r in result.records]
    assert phases == [0.0] * 3 + [1.0] * 6  # n_init = ceil(sqrt(9))
    for r in result.records:
        assert all(-5.0 <= v <= 5.0 for v in r.config.values())
    assert "acquisition" in result.records[-1].metrics and "w_drift" in result.records[-1].metrics


@pytest.mark.parametrize("bad,key", [({"variant": "x"}, "variant"), ({"beta_schedule": "x"}, "beta_schedule"),
                                     ({"n_init": -1}, "n_init"), ({"ascent_steps": 0}, "ascent_steps"),
                                     ({"beta": -1.0}, "beta"), ({"shrink_after": -1}, "shrink_after"),
                                     ({"trust_region_min": 0.0}, "trust_region_min"), ({"interior": 0.5}, "interior")])
def test_config_errors_name_the_key(bad, key):
    with pytest.raises(ValueError, match=rf"algo\.(advanced\.)?{key}="):  # solver internals: algo.advanced.*
        _config(**bad)


def _drive(algo: GOUCB, ctx: BuildContext, rounds: int) -> None:
    for t in range(1, rounds + 1):
        s = algo.ask(t)
        algo.tell(s, ctx.task.evaluate(s.config, round=t))


def _linearised_at(algo: GOUCB, w: torch.Tensor, start: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Sigma and the closed-form centre of eq. 4/5 over data[start:], every point linearised at ``w``."""
    X = torch.stack(algo.X[start:])
    z = algo._z(torch.tensor(algo.rewards[start:], dtype=torch.float64))
    G, f = algo.model.grad_w(w, X), algo.model.value(w, X)
    W = w.expand(len(X), -1)
    Sigma = algo.lam * torch.eye(algo.d_w, dtype=torch.float64) + G.T @ G
    return Sigma, closed_form_center(G, W, f, z, algo.lam, algo.w0)


def test_phase1_in_sigma_puts_the_phase1_points_in_sigma_and_the_centre():
    ctx = _ctx(rounds=10)
    algo = GOUCB(_config(n_init=4, ascent_steps=5, raw_samples=32, phase1_in_sigma=True), ctx)
    plain = GOUCB(_config(n_init=4, ascent_steps=5, raw_samples=32), _ctx(rounds=10))
    _drive(algo, ctx, 4)
    _drive(plain, _ctx(rounds=10), 4)
    algo.ask(5), plain.ask(5)
    Sigma, centre = _linearised_at(algo, algo.w0, 0)  # Phase I points sit at w_i = w_0
    assert torch.allclose(algo.Sigma, Sigma) and torch.allclose(algo.w_t, centre, atol=1e-8)
    assert torch.allclose(plain.Sigma, plain.lam * torch.eye(plain.d_w, dtype=torch.float64))
    # the ball is narrower along the Phase I gradients: the linearised UCB width at a Phase I point shrinks
    g = algo.model.grad_w(algo.w0, algo.X[0].unsqueeze(0))[0]
    width = lambda S: float(g @ torch.linalg.solve(S, g))
    assert width(algo.Sigma) < 0.5 * width(plain.Sigma)


def test_refit_every_refits_w0_on_all_data_and_relinearises():
    ctx = _ctx(rounds=12)
    cfg = _config(n_init=4, ascent_steps=5, raw_samples=32, phase1_in_sigma=True,
                      refit_every=3, refit_iterations=50)
    algo = GOUCB(cfg, ctx)
    _drive(algo, ctx, 4)
    refits = []
    for t in range(5, 12):
        w0_before = algo.w0 if algo.w0 is None else algo.w0.clone()
        s = algo.ask(t)
        refits.append(s.info["refit"])
        if s.info["refit"]:  # all data so far relinearised at the refitted w_0
            assert not torch.equal(algo.w0, w0_before)
            Sigma, centre = _linearised_at(algo, algo.w0, 0)
            assert torch.allclose(algo.Sigma, Sigma) and torch.allclose(algo.w_t, centre, atol=1e-8)
            assert len(algo.X) == t - 1
        algo.tell(s, ctx.task.evaluate(s.config, round=t))
    assert refits == [0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0]  # Phase II rounds 4 and 7


def test_bonus_coefficient_uses_the_global_round_index():
    ctx = _ctx(rounds=8)
    algo = GOUCB(_config(variant="bonus", n_init=3, ascent_steps=2, raw_samples=16,
                             refit_iterations=5, sigma=0.5, U=4.0), ctx)
    _drive(algo, ctx, 3)
    s = algo.ask(4)  # first Phase II round = round n + 1 of arXiv Algorithm 1
    assert s.info["bonus_coef"] == pytest.approx(0.5 * math.sqrt(4.0 / 4))


def test_refit_every_must_be_non_negative():
    with pytest.raises(ValueError, match="algo.refit_every"):
        _config(refit_every=-1)


def test_linear_ucb_is_the_max_of_the_linearisation_over_the_ball():
    """Closed form vs brute force: max over Ball_t of f_x(w_t) + (w - w_t)^T g_x, sampled on the boundary."""
    ctx = _ctx(rounds=10)
    algo = GOUCB(_config(n_init=4, ascent_steps=5, raw_samples=32, ball_max="linear"), ctx)
    _drive(algo, ctx, 7)  # three Phase II rounds through the linear ascent
    L = torch.linalg.cholesky(algo.Sigma)
    Linv = torch.linalg.solve_triangular(L, torch.eye(algo.d_w, dtype=torch.float64), upper=False)
    beta, x = 0.7, torch.rand(1, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(9))
    closed = float(algo.linear_ucb(x, algo.w_t, math.sqrt(beta))[0])
    g = algo.model.grad_w(algo.w_t, x)[0]
    f = float(algo.model.value(algo.w_t, x)[0])
    Z = torch.randn(4000, algo.d_w, dtype=torch.float64, generator=torch.Generator().manual_seed(10))
    Z = Z / Z.norm(dim=1, keepdim=True)
    W = math.sqrt(beta) * (Z @ Linv)  # w - w_t on the ellipsoid's boundary
    sampled = f + W @ g
    assert float(sampled.max()) <= closed + 1e-9
    w_star = (
        math.sqrt(beta) * torch.linalg.solve(algo.Sigma, g) / math.sqrt(float(g @ torch.linalg.solve(algo.Sigma, g)))
    )
    assert float(w_star @ algo.Sigma @ w_star) == pytest.approx(beta)  # the maximiser lies on the boundary
    assert f + float(w_star @ g) == pytest.approx(closed)


def test_ball_max_linear_runs_and_rejects_unknown():
    ctx = _ctx(rounds=8)
    cfg = _config(ball_max="linear", ascent_steps=10, raw_samples=64)
    result = run(ctx.task, GOUCB(cfg, ctx), budget=Budget(8))
    assert len(result.records) == 8 and result.records[-1].metrics["w_shift"] == 0.0
    with pytest.raises(ValueError, match="algo.advanced.ball_max"):
        _config(ball_max="x")


def test_output_scaling_iqr_mad_standard_raw():
    y = torch.tensor([0.95, 0.96, 0.94, 0.955, 0.30], dtype=torch.float64)  # one catastrophic point
    center, scale = output_scaling(y, "mad")
    assert center == pytest.approx(0.95)
    assert scale == pytest.approx(1.4826 * 0.01)  # MAD: |deviations| = 0, .01, .01, .005, .65 -> median .01
    center, scale = output_scaling(y, "iqr")  # quartiles .94 and .955 (linear interpolation of 5 points)
    assert center == pytest.approx(0.95) and scale == pytest.approx(0.015 / 1.349)
    tails = torch.tensor([1.0, 1.09, 1.28, 10.4, 25.92], dtype=torch.float64)  # f1 seed 1 Phase I: MAD 0.28, IQR 9.31
    assert output_scaling(tails, "iqr")[1] == pytest.approx(9.31 / 1.349)
    assert output_scaling(tails, "mad")[1] == pytest.approx(1.4826 * 0.28)
    assert output_scaling(y, "standard") == (pytest.approx(float(y.mean())), pytest.approx(float(y.std())))
    assert output_scaling(y, "raw") == (0.0, 1.0)
    ties = torch.tensor([1.0, 1.0, 1.0, 2.0], dtype=torch.float64)  # MAD 0: falls back to the std
    assert output_scaling(ties, "mad") == (1.0, pytest.approx(float(ties.std())))
    assert output_scaling(torch.ones(4, dtype=torch.float64), "iqr") == (1.0, 1.0)


def test_bad_rewards_are_clipped_from_below_only():
    algo = GOUCB(_config(clip_low=3.0), _ctx())
    algo.mu, algo.scale = 1.0, 0.5
    z = algo._z(torch.tensor([-10.0, 0.0, 1.0, 9.0], dtype=torch.float64))
    assert torch.allclose(z, torch.tensor([-3.0, -2.0, 0.0, 16.0], dtype=torch.float64))
    off = GOUCB(_config(clip_low=0.0), _ctx())
    off.mu, off.scale = 1.0, 0.5
    assert float(off._z(torch.tensor(-10.0, dtype=torch.float64))) == pytest.approx(-22.0)


def test_step5_stays_in_the_trust_region_around_the_best_point():
    ctx = _ctx(rounds=10, dim=4)
    algo = GOUCB(_config(n_init=4, trust_region=0.2, shrink_after=0, interior=0.0, ascent_steps=20,
                             raw_samples=64), ctx)
    for t in range(1, 11):
        s = algo.ask(t)
        if t > 4:
            best = algo._incumbent()
            lo, hi = algo._region()
            assert torch.allclose(lo, (best - 0.1).clamp(0, 1)) and torch.allclose(hi, (best + 0.1).clamp(0, 1))
            assert bool(((s.x >= lo - 1e-12) & (s.x <= hi + 1e-12)).all())
        algo.tell(s, ctx.task.evaluate(s.config, round=t))
    whole = GOUCB(_config(trust_region=1.0, interior=0.0), ctx)
    whole.X, whole.rewards = [torch.full((4,), 0.9, dtype=torch.float64)], [1.0]
    lo, hi = whole._region()
    assert bool((lo == 0).all() and (hi == 1).all())


def test_box_halves_after_shrink_after_failures_and_doubles_back_on_an_improvement():
    """TuRBO's rule on Step 5's box, driven through tell with chosen rewards (Phase II starts after n_init)."""
    ctx = _ctx(rounds=20, dim=2)
    algo = GOUCB(_config(n_init=2, trust_region=0.4, shrink_after=2, trust_region_min=0.08,
                             raw_samples=16, ascent_steps=2), ctx)
    sides = []
    for t, reward in enumerate([1.0, 2.0, 1.5, 1.0, 0.5, 0.0, 1.9, 1.8, 1.7, 1.6, 3.0, 4.0], start=1):
        s = algo.ask(t)
        algo.tell(s, Evaluation(value=ctx.task.direction.sign * reward))
        sides.append(algo.side)
    # Phase I leaves it alone; 2 failures: 0.2; 2 more: 0.1; 2 more: 0.08 (the floor); then 2 improvements
    assert sides == pytest.approx([0.4, 0.4, 0.4, 0.2, 0.2, 0.1, 0.1, 0.08, 0.08, 0.08, 0.16, 0.32])
    lo, hi = algo._region()
    assert float((hi - lo).max()) <= 0.32 + 1e-12
    fixed = GOUCB(_config(n_init=2, shrink_after=0, raw_samples=16, ascent_steps=2), ctx)
    _drive(fixed, ctx, 6)
    assert fixed.side == fixed.config.trust_region


def test_interior_keeps_step5_off_the_faces_of_the_cube():
    ctx = _ctx(rounds=9, dim=3)
    algo = GOUCB(_config(n_init=3, trust_region=1.0, interior=0.1, ascent_steps=30, raw_samples=32),
                 ctx)
    for t in range(1, 10):
        s = algo.ask(t)
        if t > 3:  # a new point lies inside [0.1, 0.9]^3; the best observed point itself may be re-queried
            inside = bool(((s.x >= 0.1 - 1e-12) & (s.x <= 0.9 + 1e-12)).all())
            assert inside or torch.equal(s.x, algo._incumbent())
        algo.tell(s, ctx.task.evaluate(s.config, round=t))
    algo.X, algo.rewards, algo.side = [torch.tensor([0.0, 0.5, 1.0], dtype=torch.float64)], [1.0], 0.1
    lo, hi = algo._region()  # a box around a best point on a face still lies inside [0.1, 0.9] and is not empty
    assert torch.allclose(lo, torch.tensor([0.1, 0.45, 0.9], dtype=torch.float64))
    assert torch.allclose(hi, torch.tensor([0.1, 0.55, 0.9], dtype=torch.float64))


class _Grid(Task):
    """A 3 x 3 integer grid with a unique maximum; every configuration is a distinct point."""

    name = "grid3"
    direction = Direction.MAXIMIZE
    space = SearchSpace((Int("a", 0, 2), Int("b", 0, 2)))

    def evaluate(self, config, *, round, observe=True):
        return Evaluation(value=-float((config["a"] - 2) ** 2 + (config["b"] - 1) ** 2))


@pytest.mark.parametrize("avoid", [True, False])
def test_avoid_repeats_requeries_only_the_best_configuration_seen(avoid):
    task = _Grid()
    # refit off: a net refitted each round moves its optimum, and the repeats this test provokes need a fixed one
    algo = GOUCB(_config(n_init=2, avoid_repeats=avoid, shrink_after=0, interior=0.0, refit_every="never",
                         ascent_steps=10, raw_samples=32),
                 BuildContext(task=task, rounds=12, seed=0, surrogate=_network()))
    records = run(task, algo, budget=Budget(12)).records
    seen: dict[str, float] = {}
    repeats_of_non_best = 0
    for r in records:
        key = json.dumps(r.config, sort_keys=True)
        if key in seen and seen[key] < max(seen.values()):
            repeats_of_non_best += 1
        seen[key] = r.value
    if avoid:
        assert repeats_of_non_best == 0
        assert max(seen.values()) == 0.0  # the grid's maximum was found
    else:
        assert repeats_of_non_best > 0  # without the filter the net's optimum is re-queried though worse


def test_paper_preset_sets_appendix_d1_and_keeps_explicit_values():
    c = _config(preset="paper")
    a = c.advanced
    assert (c.outputs, c.clip_low, a.beta_schedule, a.ascent_optimizer, a.ascent_steps, a.ascent_lr) == \
        ("raw", 0.0, "paper", "sgd", 2000, 1e-4)
    assert (c.trust_region, c.avoid_repeats, a.ascent_starts, a.sigma) == (1.0, False, 1, 0.01)
    net = paper_network(ParametricConfig())
    assert (net.optimizer, net.lr, net.iterations, net.input_scale, net.tol) == ("sgd", 1e-11, 2000, 10.0, 0.0)
    kept = _config(preset="paper", ascent_steps=7)
    assert kept.advanced.ascent_steps == 7
    kept_net = paper_network(ParametricConfig(hidden=5, lr=0.5))
    assert (kept_net.hidden, kept_net.lr, kept_net.optimizer) == (5, 0.5, "sgd")
    algo = GOUCB(_config(preset="paper"), _ctx(model=ParametricConfig(hidden=5)))
    assert (algo.model.config.lr, algo.model.config.hidden, algo.model.d_w) == (1e-11, 5, 5 * 3 + 5 + 5 + 1)
    assert GOUCB(_config(), _ctx(model=ParametricConfig(hidden=5))).model.config.lr == 0.01
    assert _config().outputs == "iqr" and _config().trust_region == 0.4
    assert (c.shrink_after, c.interior) == (0, 0.0) and (_config().shrink_after, _config().interior) == (2, 0.01)
    with pytest.raises(ValueError, match="algo.preset"):
        _config(preset="icml")


def test_go_ucb_without_the_network_surrogate_is_a_clear_error():
    with pytest.raises(ValueError, match="needs the network surrogate: add surrogate=nn"):
        GOUCB(_config(), BuildContext(task=make_go_ucb_f1(dim=2), rounds=8, seed=0))
    with pytest.raises(ValueError, match="surrogate=nn .got ExactGP"):
        from hpoflow.surrogates.gp import ExactGP
        GOUCB(_config(), BuildContext(task=make_go_ucb_f1(dim=2), rounds=8, seed=0, surrogate=lambda d: ExactGP(d)))


def test_paper_ascent_moves_x_by_at_most_its_step_budget():
    """Plain ascent with the paper's rate in [0, 10]-input units: 2000 steps of 1e-4 leave x where it started."""
    ctx = _ctx(rounds=8, dim=3, model=ParametricConfig(hidden=5, input_scale=10.0))
    cfg = _config(preset="paper", n_init=4, raw_samples=32,
                      ascent_steps=200)
    algo = GOUCB(cfg, ctx)
    for t in range(1, 6):
        s = algo.ask(t)
        algo.tell(s, ctx.task.evaluate(s.config, round=t))
    assert algo.oracle_mse > 0 and torch.isfinite(algo.w0).all()
    gen_state = algo.generator.get_state()
    raw = algo._raw_points()
    algo.generator.set_state(gen_state)
    s = algo.ask(6)
    assert float(torch.cdist(s.x.reshape(1, -1), raw).min()) < 0.013  # within the move of one start


@pytest.mark.parametrize("variant,cls", [("ball", BallGOUCB), ("bonus", BonusGOUCB)])
def test_go_ucb_builds_the_class_of_its_variant(variant, cls):
    """One class per Phase II rule; only the ball keeps Sigma_t (the bonus variant refits w_t instead)."""
    algo = GOUCB(_config(variant=variant), _ctx())
    assert type(algo) is cls and isinstance(algo, GOUCB)
    assert hasattr(algo, "Sigma") == (variant == "ball")
