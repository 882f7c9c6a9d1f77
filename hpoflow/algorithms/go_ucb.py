"""GO-UCB: global optimisation with a parametric surrogate (Liu & Wang, papers 003/004).

Phase I queries ``n`` uniform points and fits ``w_0`` by least squares (the regression oracle).
Phase II, variant ``ball`` (ICML Algorithm 1), keeps ``Sigma_t = lam I + sum_i g_i g_i^T`` with
``g_i = grad_w f_{x_i}(w_i)`` and the closed-form centre ``w_t`` of eq. 5, and picks
``x_t = argmax_x max_{w in Ball_t} f_x(w)`` by joint projected gradient ascent over ``(x, w)``
(``go_ucb_ascent``: all starts at once, stopped once no start improves for ``advanced.ascent_patience`` steps). The
ascent runs in whitened coordinates ``w = w_t + sqrt(beta_t) A z`` (``A = Sigma_t^{-1/2}``, applied in ``O(d_w t)``
from ``Sigma_t``'s gradient rows: ``go_ucb_ellipsoid``), where ``Ball_t`` is the unit ball ``||z|| <= 1``, so the
projection is exact and a radial rescaling.
Variant ``bonus`` (arXiv) refits ``w_t`` each round and maximises
``f_x(w_t) + sigma ||grad_w f_x(w_t)|| sqrt(U/t) + U/t``.

The network is the ``nn`` surrogate's (``surrogate.*``); it sees the unit cube the loop works on (times
``input_scale``: an affine map of the
task's box, so a network that is realizable on the box stays realizable); rewards ``sign * value`` are
scaled with the Phase I median and interquartile range (``outputs``), fixed for the run so that the online regression
stays consistent, and clipped from below (``clip_low``). Step 5 searches a box around the best observed point
(side ``trust_region``, halved after ``shrink_after`` non-improving queries and doubled back on an improvement, as
TuRBO does), kept ``interior`` away from the cube's faces, and returns the best candidate not queried before
(``avoid_repeats``); ``preset=paper`` restores Appendix D.1 literally (see ``go_ucb_config.PAPER``). Solver
internals and ablation toggles live in ``algo.advanced.*`` (:class:`go_ucb_config.GOUCBAdvanced`).
"""
from __future__ import annotations

import json
import math
import time
from collections.abc import Callable
from typing import Any, Self

import torch
from torch import Tensor

from hpoflow.algorithms.base import AskTellAlgorithm, BuildContext
from hpoflow.algorithms.go_ucb_ascent import (
    Objective,
    onto_box,
    onto_unit_ball,
    projected_ascent,
    whitened_objective,
    x_objective,
)
from hpoflow.algorithms.go_ucb_config import GOUCBConfig, paper_network
from hpoflow.algorithms.go_ucb_ellipsoid import ConfidenceEllipsoid
from hpoflow.core.config_values import period
from hpoflow.core.records import Evaluation, Failure, Suggestion
from hpoflow.surrogates.parametric import NeuralSurrogate, ParametricModel


def closed_form_center(G: Tensor, W_prev: Tensor, f_prev: Tensor, y: Tensor, lam: float, w0: Tensor) -> Tensor:
    """Minimiser of eq. 4: ``lam/2 ||w - w0||^2 + 1/2 sum_i ((w - w_i)^T g_i + f_i - y_i)^2`` (eq. 5).

    Args:
        G: gradients ``g_i`` (``t x d_w``); W_prev: the centres ``w_i`` they were taken at (``t x d_w``);
        f_prev: ``f_{x_i}(w_i)`` (``t``); y: observations (``t``); lam: regularisation; w0: oracle weights.
    """
    Sigma = lam * torch.eye(G.shape[1], dtype=G.dtype, device=G.device) + G.T @ G
    b = G.T @ ((G * W_prev).sum(1) + y - f_prev) + lam * w0
    return torch.linalg.solve(Sigma, b)


def project_ellipsoid(W: Tensor, center: Tensor, chol: Tensor, beta: float) -> Tensor:
    """Map rows of ``W`` onto ``{w : (w - c)^T Sigma (w - c) <= beta}``, ``Sigma = chol chol^T``.

    Points inside are returned unchanged; points outside are pulled radially towards the centre until
    they lie on the boundary (the projection in the ``Sigma`` metric, i.e. Euclidean in whitened
    coordinates ``u = chol^T (w - c)``).
    """
    D = W - center
    norm = torch.linalg.norm(D @ chol, dim=-1, keepdim=True)  # ||chol^T d|| for each row d
    scale = torch.clamp(math.sqrt(beta) / norm.clamp_min(1e-300), max=1.0)
    return center + D * scale


def output_scaling(y: Tensor, outputs: str) -> tuple[float, float]:
    """Centre and scale of the rewards ``y`` (``n``): iqr (median, IQR / 1.349), mad (median, 1.4826 MAD) --
    both fall back to the std, then 1, where the spread is 0 --, standard (mean, std) or raw (0, 1)."""
    if outputs == "raw" or y.numel() < 2:
        return 0.0, 1.0
    if outputs == "standard":
        return float(y.mean()), max(float(y.std()), 1e-9)
    center = float(y.median())
    if outputs == "iqr":
        q = torch.quantile(y, torch.tensor([0.25, 0.75], dtype=y.dtype))
        spread = float(q[1] - q[0]) / 1.349
    else:
        spread = 1.4826 * float((y - center).abs().median())
    if spread <= 1e-12:
        spread = float(y.std())
    return center, spread if spread > 1e-12 else 1.0


def _network(config: GOUCBConfig, ctx: BuildContext) -> ParametricModel:
    """The network f_w(x) of the run's ``nn`` surrogate (its oracle set by ``preset=paper``).

    Raises:
        ValueError: the run's surrogate is not the network (``surrogate=gp`` given explicitly).
    """
    surrogate = ctx.surrogate(ctx.task.space.dim) if ctx.surrogate is not None else None
    if not isinstance(surrogate, NeuralSurrogate):
        raise ValueError(f"algo '{config.name}' needs the network surrogate: add surrogate=nn "  # noqa: TRY004 (a config error, as TVGPUCB's)
                         f"(got {type(surrogate).__name__ if surrogate is not None else 'none'})")
    model = surrogate.model
    if config.preset == "paper":  # the oracle's settings only: the architecture the model was built with stays
        model.config = paper_network(surrogate.config)
    return model


def _key(config: dict[str, Any]) -> str:
    """A hashable identity of a decoded configuration."""
    return json.dumps(config, sort_keys=True, default=str)


class GOUCB(AskTellAlgorithm):
    """GO-UCB's shared part: Phase I, the reward scaling, Step 5's search box, candidates, ascent and choice.

    The Phase II rule is the variant's: :class:`BallGOUCB` (``variant=ball``, ICML Algorithm 1) or
    :class:`BonusGOUCB` (``variant=bonus``, arXiv); ``GOUCB(config, ctx)`` builds the one ``config.variant`` names.
    """

    name = "go_ucb"

    def __new__(cls, config: GOUCBConfig | None = None, ctx: BuildContext | None = None) -> Self:
        """``GOUCB(config, ctx)`` is an instance of the variant's class (as ``pathlib.Path()`` is a ``PosixPath``)."""
        variant = {"ball": BallGOUCB, "bonus": BonusGOUCB}[config.variant] if cls is GOUCB and config else cls
        return super().__new__(variant)

    def __init__(self, config: GOUCBConfig, ctx: BuildContext) -> None:
        super().__init__(ctx.task)
        self.config, self.advanced, self.dtype = config, config.advanced, ctx.dtype
        self.dim = ctx.task.space.dim
        self.sign = ctx.task.direction.sign
        self.rounds = ctx.rounds
        self.n_init = config.n_init or math.ceil(math.sqrt(ctx.rounds))
        self.T2 = max(ctx.rounds - self.n_init, 1)
        self.model = _network(config, ctx)
        self.d_w = self.model.d_w
        self.generator = ctx.generator(29)
        self.init_points = torch.rand(self.n_init, self.dim, generator=self.generator, dtype=ctx.dtype)
        self.X: list[Tensor] = []
        self.rewards: list[float] = []
        self.w0: Tensor | None = None
        self.w_t: Tensor | None = None
        self.t = 0  # Phase II rounds told so far
        self._asked = 0
        self.mu, self.scale, self.F = 0.0, 1.0, 1.0
        self.queried: set[str] = set()
        self.side = config.trust_region  # Step 5's box side: halved after failures, doubled on an improvement
        self._failures = 0

    # -- the variant's Phase II ---------------------------------------------------------------
    def _phase_two(self, t: int) -> tuple[Tensor, dict[str, float]]:
        """Phase II round ``t`` (1-based): the point to query and what to log about the choice."""
        raise NotImplementedError

    def _maybe_refit(self, t: int) -> bool:
        """Refit the oracle before round ``t`` when the variant's schedule says so; whether it did."""
        return False

    def _observe(self, x: Tensor, reward: float) -> None:
        """Take in a Phase II observation (after it was appended to the data)."""

    # -- Phase I ----------------------------------------------------------------------------
    def _z(self, rewards: Tensor) -> Tensor:
        """Scaled rewards the network fits, clipped from below at ``-clip_low`` (when > 0)."""
        z = (rewards - self.mu) / self.scale
        return z.clamp_min(-self.config.clip_low) if self.config.clip_low > 0 else z

    def _finish_phase_one(self) -> None:
        y = torch.tensor(self.rewards, dtype=self.dtype)
        self.mu, self.scale = output_scaling(y, self.config.outputs)
        z = self._z(y)
        self.F = max(1.0, float(z.abs().max()))
        self.w0, self.oracle_mse = self.model.fit(torch.stack(self.X), z, self.generator)
        self.w_t = self.w0.clone()

    # -- Step 5: search box, starts, ascent, choice ---------------------------------------------
    def _incumbent(self) -> Tensor:
        return self.X[int(torch.tensor(self.rewards).argmax())]

    def _region(self, side: float | None = None) -> tuple[Tensor, Tensor]:
        """Lower and upper corners (``d`` each) of the search box: side ``side`` (default: the current adaptive
        side, ``trust_region`` at the start) around the best point, within ``[interior, 1 - interior]^d``."""
        half = (side or self.side) / 2
        m = self.config.interior
        if half >= 0.5:
            lo, hi = torch.zeros(self.dim, dtype=self.dtype), torch.ones(self.dim, dtype=self.dtype)
        else:
            best = self._incumbent()
            lo, hi = best - half, best + half
        lo = lo.clamp(m, 1.0 - m)
        return lo, torch.maximum(hi.clamp(m, 1.0 - m), lo)

    def _raw_points(self, side: float | None = None) -> Tensor:
        """``raw_samples`` uniform points of the search box and the best observed point (``m x d``)."""
        lo, hi = self._region(side)
        raw = lo + (hi - lo) * torch.rand(self.advanced.raw_samples, self.dim, generator=self.generator,
                                          dtype=self.dtype)
        return torch.cat([raw, self._incumbent().unsqueeze(0)])

    def _starts(self, score: Tensor) -> Tensor:
        """Indices of the ``ascent_starts`` best-scored raw points."""
        return torch.topk(score, min(self.advanced.ascent_starts, score.shape[0])).indices

    def _ascend(self, objective: Objective, starts: list[Tensor], keep: str = "best") -> tuple[list[Tensor], Tensor]:
        """Step 5's ascent (:func:`projected_ascent`) from ``starts = [X0]`` (x only) or ``[X0, Z0]`` (x and the
        whitened w): x stays in the search box, z in the unit ball (= w in Ball_t)."""
        a = self.advanced
        lr_x = a.ascent_lr if a.ascent_optimizer == "adam" else a.ascent_lr / self.model.config.input_scale**2
        # sgd (the paper): the rate is in the net's input units, x_in = s x, so lr / s^2 in x
        rates, projections = [lr_x, a.ascent_lr_w][:len(starts)], [onto_box(*self._region()), onto_unit_ball]
        params, values, _ = projected_ascent(objective, starts, rates, projections[:len(starts)], a.ascent_steps,
                                             a.ascent_optimizer, a.ascent_patience if keep == "best" else 0, keep)
        return params, values

    def _choose(self, X: Tensor, values: Tensor, raw: Tensor, score: Tensor,
                score_fn: Callable[[Tensor], Tensor]) -> tuple[int | None, Tensor, float]:
        """The highest-valued ascent result, or with ``avoid_repeats`` the first configuration never queried (or
        the best one seen) among the ascent results (by value), then the raw points (by score), then fresh points
        (scored by
        ``score_fn``) of boxes twice, four times, ... as wide until the whole cube: a discrete search box can
        run out of new configurations. Returns ``(start index or None, x, its value)``; falls back to the best
        ascent result when no new configuration turns up."""
        order = torch.argsort(values, descending=True).tolist()
        if self.config.avoid_repeats:
            best = _key(self.task.space.decode(self._incumbent()))
            for j in order:
                key = _key(self.task.space.decode(X[j]))
                if key not in self.queried or key == best:
                    return j, X[j].detach().clone(), float(values[j])
            side = self.side
            while True:
                for i in torch.argsort(score, descending=True).tolist():
                    key = _key(self.task.space.decode(raw[i]))
                    if key not in self.queried or key == best:
                        return None, raw[i].clone(), float(score[i])
                if side >= 1.0:
                    break
                side = min(2 * side, 1.0)
                raw = self._raw_points(side)
                with torch.no_grad():
                    score = score_fn(raw)
        return order[0], X[order[0]].detach().clone(), float(values[order[0]])

    def _predicted(self, w: Tensor, x: Tensor) -> float:
        """``f_x(w)`` in the task's reward units."""
        return float(self.model.value(w, x.unsqueeze(0))[0]) * self.scale + self.mu

    def _adapt_region(self, improved: bool) -> None:
        """TuRBO's rule on Step 5's box: ``shrink_after`` Phase II queries in a row that do not improve the best
        halve its side (down to ``advanced.trust_region_min``); an improvement doubles it (up to ``trust_region``)."""
        c = self.config
        if c.shrink_after == 0:
            return
        if improved:
            self._failures, self.side = 0, min(2 * self.side, c.trust_region)
            return
        self._failures += 1
        if self._failures >= c.shrink_after:
            self._failures, self.side = 0, max(self.side / 2, min(self.advanced.trust_region_min, c.trust_region))

    # -- ask / tell -------------------------------------------------------------------------
    def ask(self, round: int) -> Suggestion:
        self._asked += 1
        if len(self.rewards) < self.n_init:
            x = self.init_points[min(self._asked, self.n_init) - 1]
            return Suggestion(self.task.space.decode(x), x, info={"phase": 0.0})
        start = time.perf_counter()
        if self.w0 is None:
            self._finish_phase_one()
        t = self.t + 1
        refit = self._maybe_refit(t)
        x, info = self._phase_two(t)
        info.update(phase=1.0, phase2_round=float(t), oracle_mse=self.oracle_mse, refit=float(refit),
                    region_side=self.side, acq_time=time.perf_counter() - start)
        return Suggestion(self.task.space.decode(x), x, info=info)

    def tell(self, suggestion: Suggestion, outcome: Evaluation | Failure) -> None:
        if isinstance(outcome, Failure) or not suggestion.observe or not math.isfinite(outcome.value):
            return
        x = suggestion.x.detach().to(self.dtype).reshape(-1)
        self.queried.add(_key(suggestion.config))
        reward = self.sign * outcome.value
        if self.w0 is not None:
            self._adapt_region(reward > max(self.rewards))
        self.X.append(x)
        self.rewards.append(reward)
        if self.w0 is None:
            return
        self.t += 1
        self._observe(x, reward)


class BallGOUCB(GOUCB):
    """ICML Algorithm 1: ``Sigma_t``, the closed-form centre ``w_t`` (eq. 5) and ``x_t = argmax_x max_{w in Ball_t}
    f_x(w)`` (``ball_max=exact``) or of its first-order expansion at ``w_t`` (``ball_max=linear``)."""

    def __init__(self, config: GOUCBConfig, ctx: BuildContext) -> None:
        super().__init__(config, ctx)
        self.lam = config.advanced.lam or config.advanced.lam_scale * math.sqrt(self.T2)
        self.ellipsoid = ConfidenceEllipsoid(self.lam, self.d_w, ctx.dtype)
        self.b = torch.zeros(self.d_w, dtype=ctx.dtype)

    @property
    def Sigma(self) -> Tensor:
        """The dense ``Sigma_t`` (``d_w x d_w``; checks only: the algorithm works with its rows, ``ellipsoid``)."""
        return self.ellipsoid.matrix

    def beta_t(self, t: int) -> float:
        """beta_t: the paper's ``d_w^3 F^4 t / T`` (Appendix D.1) times ``beta_scale``, or a constant."""
        if self.advanced.beta_schedule == "constant":
            return self.config.beta
        return self.advanced.beta_scale * self.d_w**3 * self.F**4 * t / self.T2

    def _finish_phase_one(self) -> None:
        super()._finish_phase_one()
        if self.advanced.phase1_in_sigma:
            self._relinearise()

    def _relinearise(self) -> None:
        """Sigma_t and the right-hand side of eq. 5 with every used point linearised at ``w_0`` (``w_i = w_0``).

        Used points: all data with ``phase1_in_sigma``, else the Phase II points only.
        """
        start = 0 if self.advanced.phase1_in_sigma else self.n_init
        self.ellipsoid.reset()
        self.b = torch.zeros(self.d_w, dtype=self.dtype)
        if len(self.X) <= start:
            return
        X = torch.stack(self.X[start:])
        z = self._z(torch.tensor(self.rewards[start:], dtype=self.dtype))
        G = self.model.grad_w(self.w0, X)
        f = self.model.value(self.w0, X)
        self.ellipsoid.reset(G)
        self.b += G.T @ (G @ self.w0 + z - f)

    def _maybe_refit(self, t: int) -> bool:
        """Every ``refit_every`` Phase II rounds (``never``: never) refit ``w_0`` on all data (warm-started at the
        current
        centre, stopped once it stalls: ``advanced.refit_stall``) and relinearise around it."""
        every = period(self.config.refit_every)
        if every is None or t == 1 or (t - 1) % every:
            return False
        X = torch.stack(self.X)
        z = self._z(torch.tensor(self.rewards, dtype=self.dtype))
        self.w0, self.oracle_mse = self.model.fit(X, z, self.generator, w0=self.w_t,
                                                  iterations=self.advanced.refit_iterations, restarts=1,
                                                  stall=self.advanced.refit_stall)
        self.w_t = self.w0.clone()
        self._relinearise()
        return True

    def _phase_two(self, t: int) -> tuple[Tensor, dict[str, float]]:
        ball = self.ellipsoid
        self.w_t = ball.solve(self.b + self.lam * self.w0)
        beta = self.beta_t(t)
        w_hat, root = self.w_t, math.sqrt(beta)

        raw = self._raw_points()
        with torch.no_grad():
            u = ball.whiten(self.model.grad_w(w_hat, raw))    # rows A g_x, ||A g_x|| = ||g_x||_{Sigma^-1}
            unorm = torch.linalg.norm(u, dim=1)
            score = self.model.value(w_hat, raw) + root * unorm  # linearised optimistic value

        def linear(P: Tensor) -> Tensor:
            return self.linear_ucb(P, w_hat, root)

        top = self._starts(score)
        if self.advanced.ball_max == "linear":
            (best_X,), best_v = self._ascend(x_objective(linear), [raw[top]])
        else:  # the exact max over the ball: z starts where the linearised max puts it, A g_x / ||A g_x||
            Z0 = u[top] / unorm[top].clamp_min(1e-12).unsqueeze(1)
            (best_X, best_Z), best_v = self._ascend(whitened_objective(self.model, w_hat, ball.whiten, root),
                                                    [raw[top], Z0])
        j, best_x, value = self._choose(best_X, best_v, raw, score, linear)
        exact = self.advanced.ball_max == "exact"
        w_opt = w_hat + root * ball.whiten(best_Z[j:j + 1])[0] if j is not None and exact else w_hat
        info = {"beta": beta, "ball_radius": root, "ball_radius_l2": math.sqrt(beta / self.lam),
                "w_shift": float(torch.linalg.norm(w_opt - w_hat)),
                "w_drift": float(torch.linalg.norm(w_hat - self.w0)), "acquisition": value,
                "predicted": self._predicted(w_hat, best_x)}
        return best_x, info

    def linear_ucb(self, X: Tensor, w_hat: Tensor, root: float) -> Tensor:
        """``max_{w in Ball_t}`` of the first-order expansion of ``f_x`` at ``w_hat``, in closed form:
        ``f_x(w_hat) + sqrt(beta) ||grad_w f_x(w_hat)||_{Sigma^-1}`` (the bound of Lemma C.8 / 5.4)."""
        u = self.ellipsoid.whiten(self.model.grad_w(w_hat, X))
        return self.model.value(w_hat, X) + root * torch.sqrt((u * u).sum(1) + 1e-24)

    def _observe(self, x: Tensor, reward: float) -> None:
        """Rank-one updates of Sigma_t and of the right-hand side of eq. 5, linearised at the current centre."""
        w_i = self.w_t
        g = self.model.grad_w(w_i, x.unsqueeze(0))[0]
        f_i = float(self.model.value(w_i, x.unsqueeze(0))[0])
        self.ellipsoid.add(g)
        self.b += g * (float(g @ w_i) + float(self._z(torch.tensor(reward))) - f_i)


class BonusGOUCB(GOUCB):
    """arXiv version: refit ``w_t`` by the oracle each round and maximise
    ``f_x(w_t) + sigma ||grad_w f_x(w_t)|| sqrt(U/t) + U/t`` (its final ascent iterates compete, not the best
    points visited)."""

    def _phase_two(self, t: int) -> tuple[Tensor, dict[str, float]]:
        X = torch.stack(self.X)
        z = self._z(torch.tensor(self.rewards, dtype=self.dtype))
        self.w_t, mse = self.model.fit(X, z, self.generator, w0=self.w_t,
                                       iterations=self.advanced.refit_iterations, restarts=1)
        w_hat, a = self.w_t, self.advanced
        t = self.n_init + t  # arXiv Algorithm 1 counts t = n + 1, ..., T (all rounds), not Phase II rounds
        coef = a.sigma * math.sqrt(a.U / t)

        def acq(P: Tensor) -> Tensor:  # differentiable in P (grad_w keeps its graph when P requires grad)
            g = self.model.grad_w(w_hat, P)
            return self.model.value(w_hat, P) + coef * torch.sqrt((g * g).sum(1) + 1e-24) + a.U / t

        raw = self._raw_points()
        with torch.no_grad():
            score = acq(raw)
        (final_X,), final = self._ascend(x_objective(acq), [raw[self._starts(score)]], keep="last")
        _, best_x, best_v = self._choose(final_X, final, raw, score, acq)
        info = {"bonus_coef": coef, "acquisition": best_v, "train_mse": mse,
                "w_drift": float(torch.linalg.norm(w_hat - self.w0)), "predicted": self._predicted(w_hat, best_x)}
        return best_x, info
