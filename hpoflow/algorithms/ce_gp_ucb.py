"""TV-GP-UCB, R-GP-UCB and CE-GP-UCB (paper 002, Algorithm 1) with a pluggable query rule.

Each round: x_t = argmax mu_{t-1}(x) + sqrt(beta_t) sigma_{t-1}(x) under the time-varying GP, then the
query rule decides whether to pay for y_t (``Suggestion.observe``). A skipped round leaves the model
unchanged; its posterior variance grows by itself as the temporal kernel decays.
"""
from __future__ import annotations

import math

import torch
from torch import Tensor

from hpoflow.acquisition import functions as acq
from hpoflow.algorithms.base import AskTellAlgorithm, BuildContext
from hpoflow.algorithms.ce_gp_ucb_config import TVUCBConfig
from hpoflow.algorithms.query import (
    ce_rule,
    compared_optima,
    continuous_ascent,
    discrete_ascent,
    knn_graph,
    lcb_ucb_rule,
)
from hpoflow.core.config_values import period
from hpoflow.core.records import Evaluation, Failure, Suggestion
from hpoflow.surrogates.base import CandidateSurrogate

MAX_ENUMERATED = 20_000
# how the CE / LCB-UCB rules find the local optima of the UCB to compare x_t with (paper 002, App. C): N_STARTS
# local ascents that stop where the slope (per unit of the cube) is below SLOPE_TOL; end points within
# BANDWIDTH of x_t are dropped, the rest merged by mean shift with BANDWIDTH. Solver internals, not settings.
N_STARTS, BANDWIDTH, SLOPE_TOL = 50, 0.2, 0.5


def finite_candidates(ctx: BuildContext) -> Tensor | None:
    """The task's candidate set, or the grid of a small all-discrete space, else None (continuous)."""
    if ctx.task.candidates is not None:
        return ctx.task.candidates.to(ctx.dtype)
    size = ctx.task.space.finite_size()
    if size is not None and size <= MAX_ENUMERATED:
        return ctx.task.space.grid(max(p.cardinality for p in ctx.task.space.parameters), ctx.dtype)  # type: ignore[union-attr]
    return None


class TVGPUCB(AskTellAlgorithm):
    """UCB on a time-varying GP (surrogate=tv_gp) with query rule ``algo.query``."""

    name = "tv_gp_ucb"

    def __init__(self, config: TVUCBConfig, ctx: BuildContext) -> None:
        super().__init__(ctx.task)
        if ctx.surrogate is None:
            raise ValueError(f"algo '{config.name}' needs the time-varying GP: add surrogate=tv_gp")
        self.model = ctx.surrogate(ctx.task.space.dim)
        if not isinstance(self.model, CandidateSurrogate):
            message = (f"algo '{config.name}' needs the time-varying GP: add surrogate=tv_gp "
                       f"(got {type(self.model).__name__})")
            raise ValueError(message)  # noqa: TRY004 - a bad config: one line, exit 2
        self.config, self.dtype, self.dim = config, ctx.dtype, ctx.task.space.dim
        self.sign = ctx.task.direction.sign
        self.generator = ctx.generator(23)
        self.candidates = finite_candidates(ctx)
        if self.candidates is not None:
            self.model.set_candidates(self.candidates)
        # independent arms (identity kernel) are compared with every other arm, a smooth UCB with its local optima
        compare = "arms" if self.model.config.kernel == "identity" else "local_optima"
        if compare == "arms" and self.candidates is None:
            raise ValueError("surrogate.kernel=identity needs a finite domain (task.candidates or a discrete space)")
        self.compare = compare
        self.n_starts, self.bandwidth, self.slope_tol = N_STARTS, BANDWIDTH, SLOPE_TOL
        if compare == "local_optima" and self.candidates is not None:
            self._nbr, self._nbr_dist = knn_graph(self.candidates, max(16, 4 * self.dim))
        self.reset_every = self._reset_period(config.reset_every)
        self._round = 0

    def _reset_period(self, reset_every: int | str | None) -> int | None:
        """Rounds between resets: ``k``; ``None`` for never; ``null`` (auto): ceil(12 eps^{-1/4})."""
        if reset_every is None:
            return max(1, math.ceil(12 * max(self.model.epsilon, 1e-8) ** -0.25))
        return period(reset_every)

    def beta_t(self, t: int) -> float:
        if self.config.beta_schedule == "srinivas":
            return acq.srinivas_beta(t, self.dim, self.config.delta)
        return self.config.beta

    # -- ask ----------------------------------------------------------------------------------
    def ask(self, round: int) -> Suggestion:
        t = self._round = round
        if self.reset_every and t > 1 and (t - 1) % self.reset_every == 0:
            self.model.clear()
        beta = self.beta_t(t)
        root = math.sqrt(beta)
        if self.candidates is not None:
            mean, var = self.model.candidate_posterior(t)
            ucb = mean + root * var.sqrt()
            i = int(torch.argmax(ucb))
            x, mean_t, var_t = self.candidates[i], float(mean[i]), float(var[i])
            others = self._compare_finite(i, ucb, mean, var)
        else:
            def ucb_fn(X: Tensor) -> Tensor:
                m, v = self.model.posterior(X, t)
                return m + root * v.clamp_min(0).sqrt()

            x, _ = acq.maximize(ucb_fn, self.dim, self.generator, self.config.optimizer, None, self.dtype)
            with torch.no_grad():
                m, v = self.model.posterior(x.reshape(1, -1), t)
            mean_t, var_t = float(m), float(v)
            others = self._compare_continuous(x, ucb_fn, t)
        observe, info = self._query(mean_t, var_t, others, beta)
        info.update(beta=beta, ucb=mean_t + root * math.sqrt(var_t), sigma=math.sqrt(var_t),
                    n_obs=float(self.model.n), epsilon=float(self.model.epsilon))
        return Suggestion(self.task.space.decode(x), x.detach().clone(), observe=observe, info=info)

    def _compare_finite(self, i: int, ucb: Tensor, mean: Tensor, var: Tensor) -> tuple[Tensor, Tensor] | None:
        if self.config.query in ("always", "bernoulli"):
            return None
        if self.compare == "arms":
            keep = torch.ones(mean.shape[0], dtype=torch.bool)
            keep[i] = False
            return mean[keep], var[keep]
        m = self.candidates.shape[0]  # type: ignore[union-attr]
        starts = torch.randint(m, (min(self.n_starts, m),), generator=self.generator)
        ends = torch.unique(discrete_ascent(ucb, self._nbr, self._nbr_dist, starts, self.slope_tol))
        C = self.candidates
        assert C is not None
        sel, from_pool = compared_optima(C[ends], ucb[ends], C[i], self.bandwidth, C, ucb)
        reps = sel if from_pool else ends[sel]
        return mean[reps], var[reps]

    def _compare_continuous(self, x: Tensor, ucb_fn, t: int) -> tuple[Tensor, Tensor] | None:
        if self.config.query in ("always", "bernoulli"):
            return None
        starts = torch.rand(self.n_starts, self.dim, generator=self.generator, dtype=self.dtype)
        ends = continuous_ascent(ucb_fn, starts, self.slope_tol)
        with torch.no_grad():
            vals, start_vals = ucb_fn(ends), ucb_fn(starts)
        sel, from_pool = compared_optima(ends, vals, x, self.bandwidth, starts, start_vals)
        reps = starts[sel] if from_pool else ends[sel]
        with torch.no_grad():
            return self.model.posterior(reps, t) if reps.shape[0] else (reps.new_zeros(0), reps.new_zeros(0))

    def _query(self, mean_t: float, var_t: float, others: tuple[Tensor, Tensor] | None,
               beta: float) -> tuple[bool, dict[str, float]]:
        rule = self.config.query
        if rule == "always":
            return True, {}
        if rule == "bernoulli":
            return bool(torch.rand((), generator=self.generator) < self.config.query_prob), {}
        assert others is not None
        n_cmp = float(others[0].numel())
        if rule == "ce":
            q, p = ce_rule(mean_t, var_t, *others, self.config.kappa, self.config.ce_scale)
            return q, {"ce_min_prob": p, "n_compared": n_cmp}
        q, gap = lcb_ucb_rule(mean_t, var_t, *others, beta)
        return q, {"ucb_lcb_gap": gap if math.isfinite(gap) else -1.0, "n_compared": n_cmp}

    # -- tell ---------------------------------------------------------------------------------
    def tell(self, suggestion: Suggestion, outcome: Evaluation | Failure) -> None:
        if isinstance(outcome, Failure) or not suggestion.observe or not math.isfinite(outcome.value):
            return
        self.model.add(suggestion.x, self.sign * outcome.value, self._round)


class RGPUCB(TVGPUCB):
    """GP-UCB with a time-invariant kernel (eps = 0) and a reset every ``reset_every`` rounds."""

    name = "r_gp_ucb"

    def __init__(self, config: TVUCBConfig, ctx: BuildContext) -> None:
        super().__init__(config, ctx)  # the auto reset period uses the surrogate's eps, before it is zeroed
        self.model.set_epsilon(0.0)
        self.model.fit_epsilon = False
