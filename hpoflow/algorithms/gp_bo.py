"""GP Bayesian optimisation: GP-UCB, GP-EI, GP-PI on the foundation's exact GP.

The GP models the reward ``sign * y`` (so every acquisition maximises); the first ``n_init`` rounds
are a scrambled Sobol design. Subclasses (e.g. the bilevel variants) override ``acquisition``.
"""
from __future__ import annotations

import dataclasses
import json
import math
import time
from collections.abc import Callable
from typing import ClassVar

import torch
from torch import Tensor

from hpoflow.acquisition import functions as acq
from hpoflow.acquisition.config import OptimizerConfig
from hpoflow.algorithms.base import AskTellAlgorithm, BuildContext
from hpoflow.algorithms.configs import GPBOConfig, GPEIConfig, GPUCBConfig
from hpoflow.algorithms.constrained import ConstraintModels
from hpoflow.algorithms.pending import Fantasies, RefitPacer, believer, condition, extra_design_point, has_fantasies
from hpoflow.core.records import Evaluation, Failure, Suggestion
from hpoflow.core.space import Float
from hpoflow.surrogates.base import ConfiguredSurrogate, LengthscaleSurrogate, StandardizedSurrogate
from hpoflow.surrogates.configs import GPConfig

PENDING_RESTARTS = 0.5  # share of optimizer.num_restarts while trials are pending (keeps up with k workers)
# While trials are pending, the surrogate keeps its own refit schedule (as sequentially: auto = growth + surprise)
# instead of the RefitPacer's once per k tells: the pacer cost Branin's gp_ei regret at 4 workers 0.095 against
# 0.051 (16 seeds, better on 12; Hartmann-6 and the mixed space unchanged within noise: scripts/sim_pending.py
# --variant paced-refits) and saved little (a warm-started refit on 32 points: ~0.01 s; the acquisition search
# 0.02-0.07 s). True brings the pacer back (what sim_pending's variant measures).
PACED_REFITS = False
MAX_ENUMERATED = 20_000  # finite spaces up to this size are searched exhaustively
PRECONDITION = True  # search the acquisition in x / lengthscale (see acquisition.maximize)


class GPBO(AskTellAlgorithm):
    """Sequential GP-based BO with a pluggable acquisition over the standardised reward."""

    name = "gp_bo"
    surrogate_protocol = StandardizedSurrogate  # its acquisitions work in standardised units
    surrogate_extras = (LengthscaleSurrogate, ConfiguredSurrogate)  # the search's preconditioner; output_transform
    pending_rule: ClassVar[str | None] = "kriging_believer"  # BBO's subclasses have none
    uses_fantasies: ClassVar[bool] = False  # its acquisition reads ``self.fantasies`` while trials are pending

    def __init__(self, config: GPBOConfig, ctx: BuildContext) -> None:
        super().__init__(ctx.task)
        self.config, self.dtype = config, ctx.dtype
        self.dim = ctx.task.space.dim
        self.sign = ctx.task.direction.sign
        self.model = self.new_surrogate(ctx, config.name)  # a bad config: one line, exit 2
        model_config = getattr(self.model, "config", None)
        self._resolved: dict[str, str] = {}  # settings left null that this algorithm filled in (run tags)
        if isinstance(model_config, GPConfig) and model_config.output_transform is None:  # null: this algorithm's
            transform = self._resolved["surrogate.output_transform"] = self.output_transform(config)
            self.model.config = dataclasses.replace(model_config, output_transform=transform)
        self._scaled = isinstance(self.model, LengthscaleSurrogate)
        self.generator = ctx.generator(17)
        self.n_init = max(2, min(self.dim + 1, ctx.rounds // 2)) if config.n_init is None else config.n_init
        if getattr(config, "init", "sobol") == "random":  # subclasses' configs (BBO) have no init: Sobol
            self.init_points = torch.rand(self.n_init, self.dim, generator=ctx.generator(19), dtype=ctx.dtype)
        else:
            sobol = torch.quasirandom.SobolEngine(self.dim, scramble=True, seed=ctx.seed * 7 + 3)
            self.init_points = sobol.draw(self.n_init, dtype=ctx.dtype)
        if getattr(config, "init_center", False):
            self.init_points[0] = 0.5
        self.candidates = ctx.task.candidates
        size = ctx.task.space.finite_size()
        if self.candidates is None and size is not None and size <= MAX_ENUMERATED:
            self.candidates = ctx.task.space.grid(max(p.cardinality for p in ctx.task.space.parameters),  # type: ignore[union-attr]
                                                  ctx.dtype)
        self.X: list[Tensor] = []
        self.y: list[float] = []
        self._asked = 0
        # discrete=snap: integer/categorical coordinates at their cell centre, in the GP's data and the search
        self.snap = getattr(config, "discrete", "relax") == "snap" and self.candidates is None and any(
            not isinstance(p, Float) for p in ctx.task.space.parameters)
        self.seen: set[str] = set()
        self.pacer = RefitPacer()  # only with PACED_REFITS: refit once per k tells while trials run concurrently
        self.fantasies: Fantasies | None = None  # during a pending ask (uses_fantasies): the drawn pending outcomes
        self._pending_ask = False

    def output_transform(self, config: GPBOConfig) -> str:
        """The GP's ``surrogate.output_transform`` where the user left it null: none (standardised outputs only);
        GP-EI overrides it (:meth:`GPEI.output_transform`)."""
        return "none"

    def run_tags(self) -> dict[str, str]:
        """The value a null ``surrogate.output_transform`` took (the param shows ``None``): a tag of that name."""
        return dict(self._resolved)

    # -- acquisition ------------------------------------------------------------------------
    def acquisition(self, t: int) -> tuple[Callable[[Tensor], Tensor], dict[str, float]]:
        """The function to maximise at round ``t`` and diagnostics to log. Override in subclasses."""
        raise NotImplementedError

    def _posterior(self, X: Tensor) -> tuple[Tensor, Tensor]:
        return self.model.posterior(X, standardized=True)

    def search_scale(self) -> Tensor | None:
        """Per-dimension scale that preconditions the acquisition search: the GP's lengthscales, when it has them."""
        if not PRECONDITION:
            return None
        lengthscale = self.model.lengthscale if self._scaled else None
        return lengthscale if isinstance(lengthscale, Tensor) and lengthscale.numel() in (1, self.dim) else None

    def incumbent(self) -> Tensor:
        """Best observed standardised reward."""
        return self.model.standardize(torch.tensor(self.y, dtype=self.dtype)).max()

    def constrain(self, fn: Callable[[Tensor], Tensor], info: dict[str, float]
                  ) -> tuple[Callable[[Tensor], Tensor], dict[str, float]]:
        """The acquisition under the task's constraints; GP-EI/PI weigh it by the probability of feasibility."""
        return fn, info

    def best_index(self) -> int:
        """The observed point the acquisition search also starts from: the best reward."""
        return int(torch.tensor(self.y).argmax())

    # -- ask / tell -------------------------------------------------------------------------
    def ask(self, round: int) -> Suggestion:
        self._asked += 1
        if len(self.y) < self.n_init or len(self.y) < 2:
            x = self.init_points[min(self._asked, self.n_init) - 1]
            if self.candidates is not None:
                x = self.candidates[torch.cdist(x[None], self.candidates).argmin()]
            elif self.snap:
                x = self.task.space.snap(x.reshape(1, -1))[0]
            return Suggestion(self.task.space.decode(x), x, info={"phase": 0.0})
        if self.pacer.due():  # observations told while trials ran, none pending now
            self._refit()
        return self._propose(round)

    def _propose(self, round: int) -> Suggestion:
        """The acquisition's maximiser on the current model (at least two observations)."""
        start = time.perf_counter()
        fn, info = self.constrain(*self.acquisition(round))
        best = self.X[self.best_index()]
        x, value = acq.maximize(fn, self.dim, self.generator, self._optimizer(), self.candidates,
                                self.dtype, extra_starts=best, scale=self.search_scale())
        if self.snap:
            x, value = self._snapped(fn, x)
        info.update(acquisition=value, acq_time=time.perf_counter() - start, phase=1.0)
        return Suggestion(self.task.space.decode(x), x, info=info)

    def _optimizer(self) -> OptimizerConfig:
        """The acquisition search's settings; with trials pending, fewer L-BFGS-B restarts (its time is about
        proportional to them, and it runs once per trial on the main thread while ``k`` workers wait on it)."""
        opt = self.config.optimizer
        if not self._pending_ask:
            return opt
        return dataclasses.replace(opt, num_restarts=max(2, math.ceil(PENDING_RESTARTS * opt.num_restarts)))

    def _ask_with_pending(self, round: int, pending: list[Suggestion]) -> Suggestion:
        """Kriging believer: maximise the acquisition of a model that believes its mean at the pending points;
        an acquisition with ``uses_fantasies`` (EI) averages over joint draws of their outcomes instead.

        A pending trial takes the next design point while the design lasts; once it is all asked, the model
        guides as soon as two points are observed (the rest of the design is pending, hence believed), and
        before that a uniform point stands in.
        """
        if self._asked < self.n_init:  # the design's next point (fewer than n_init are observed)
            return self.ask(round)
        self._asked += 1
        if len(self.y) < 2:
            x = extra_design_point(self.dim, self.generator, self.dtype)
            if self.candidates is not None:
                x = self.candidates[torch.cdist(x[None], self.candidates).argmin()]
            elif self.snap:
                x = self.task.space.snap(x.reshape(1, -1))[0]
            return Suggestion(self.task.space.decode(x), x, info={"phase": 0.0})
        if PACED_REFITS:
            self.pacer.saw(len(pending))
        if self.pacer.due():
            self._refit()
        real, seen = self.model, self.seen
        self.model = believer(real, torch.stack([s.x.to(self.dtype).reshape(-1) for s in pending]))
        if self.uses_fantasies and has_fantasies(self.model):
            self.fantasies = Fantasies(self.model, real.n, self.generator)
        self.seen = seen | {_key(s.config) for s in pending}  # discrete=snap: never a pending configuration
        self._pending_ask = True
        try:
            return self._propose(round)
        finally:
            self.model, self.seen, self.fantasies, self._pending_ask = real, seen, None, False

    def _snapped(self, fn: Callable[[Tensor], Tensor], x: Tensor) -> tuple[Tensor, float]:
        """The best configuration not evaluated before, by the acquisition at cell centres, among the search's
        result and ``optimizer.raw_samples`` uniform points, all snapped (``x``'s own cell if all were seen)."""
        space = self.task.space
        raw = torch.rand(self.config.optimizer.raw_samples, self.dim, generator=self.generator, dtype=self.dtype)
        cells = space.snap(torch.cat([x.reshape(1, -1), raw]))
        fresh = [i for i, c in enumerate(cells) if _key(space.decode(c)) not in self.seen]
        with torch.no_grad():
            pool = cells[fresh] if fresh else cells[:1]
            values = fn(pool)
        j = int(torch.argmax(values))
        return pool[j], float(values[j])

    def tell(self, suggestion: Suggestion, outcome: Evaluation | Failure) -> None:
        if not suggestion.observe:
            return
        self.seen.add(_key(suggestion.config))
        if isinstance(outcome, Failure) or not math.isfinite(outcome.value):
            if not self.y:
                return
            # a failed point gets the worst reward seen so far, so the GP steers away instead of re-proposing it
            reward = min(self.y)
        else:
            reward = self.sign * outcome.value
        self.X.append(suggestion.x.detach().clone())
        self.y.append(reward)
        start = time.perf_counter()
        if len(self.y) == 2 or self.model.n == 0:
            self._refit()
        elif len(self.y) > 2:
            x, y = suggestion.x.reshape(1, -1), torch.tensor([reward], dtype=self.dtype)
            if self.pacer.deferring and condition(self.model, x, y):
                self.pacer.stale += 1  # refitted by the next ask that finds it due
            else:
                self.model.update(x, y)
        self.fit_time = time.perf_counter() - start

    def _refit(self) -> None:
        """Fit the surrogate's hyperparameters on every observation (warm-started from the last fit)."""
        self.model.fit(torch.stack(self.X), torch.tensor(self.y, dtype=self.dtype))
        self.pacer.refitted(len(self.y))


def _key(config: dict) -> str:
    """A hashable identity of a decoded configuration."""
    return json.dumps(config, sort_keys=True, default=str)


class GPUCB(GPBO):
    """GP-UCB: maximise mu + sqrt(beta_t) sigma. It ignores a task's constraints (a UCB may be negative, so it cannot
    be weighed by a probability as EI and PI are): use gp_ei or gp_pi on a constrained task."""

    name = "gp_ucb"
    config: GPUCBConfig

    def beta_t(self, t: int) -> float:
        if self.config.beta_schedule == "srinivas":
            return acq.srinivas_beta(t, self.dim, self.config.delta)
        return self.config.beta

    def acquisition(self, t: int) -> tuple[Callable[[Tensor], Tensor], dict[str, float]]:
        beta = self.beta_t(t)

        def fn(X: Tensor) -> Tensor:
            return acq.upper_confidence_bound(*self._posterior(X), beta)

        return fn, {"beta": beta}


class GPImprovement(GPBO):
    """GP-EI and GP-PI: improvement over the best observed reward plus a margin ``xi``.

    With constraints (``task.objectives.constraints``) each constraint value gets its own GP
    (:class:`hpoflow.algorithms.constrained.ConstraintModels`); the acquisition becomes log improvement + log
    probability of feasibility over the best *feasible* reward, and the probability of feasibility alone while no
    observation is feasible (Gardner et al. 2014).
    """

    config: GPEIConfig

    def __init__(self, config: GPEIConfig, ctx: BuildContext) -> None:
        super().__init__(config, ctx)
        spec = ctx.task.objectives
        self.constraints: ConstraintModels | None = None
        if spec is not None and spec.constraints:
            def make() -> object:
                model = self.new_surrogate(ctx, config.name)
                if isinstance(getattr(model, "config", None), GPConfig) and model.config.output_transform is None:
                    model.config = dataclasses.replace(model.config, output_transform="none")  # Gaussian c: exact PoF
                return model

            self.constraints = ConstraintModels(spec, make, ctx.dtype)

    def tell(self, suggestion: Suggestion, outcome: Evaluation | Failure) -> None:
        n = len(self.X)
        super().tell(suggestion, outcome)
        if self.constraints is not None and len(self.X) > n:  # the point was kept: its constraint values too
            ok = isinstance(outcome, Evaluation) and math.isfinite(outcome.value)
            self.constraints.observe(outcome.values if ok else None)  # type: ignore[union-attr]

    def _feasible(self) -> list[bool] | None:
        return None if self.constraints is None else self.constraints.feasible()[: len(self.y)]

    def incumbent(self) -> Tensor:
        """Best observed standardised reward; with constraints, the best feasible one (-inf: none is feasible)."""
        z = self.model.standardize(torch.tensor(self.y, dtype=self.dtype))
        feasible = self._feasible()
        if feasible is None:
            return z.max()
        if not any(feasible):
            return torch.tensor(-math.inf, dtype=self.dtype)
        return z[torch.tensor(feasible)].max()

    def best_index(self) -> int:
        feasible = self._feasible()
        if not feasible or not any(feasible):
            return super().best_index()
        y = torch.tensor(self.y)
        return int(torch.where(torch.tensor(feasible), y, torch.tensor(-math.inf)).argmax())

    def constrain(self, fn: Callable[[Tensor], Tensor], info: dict[str, float]
                  ) -> tuple[Callable[[Tensor], Tensor], dict[str, float]]:
        """log acquisition + log PoF; only log PoF while nothing observed is feasible."""
        cons = self.constraints
        if cons is None:
            return fn, info
        cons.fit(torch.stack(self.X))
        feasible = self._feasible() or []
        info["n_feasible"] = float(sum(feasible))
        if not any(feasible):
            return cons.log_pof, info

        def constrained(X: Tensor) -> Tensor:
            return fn(X) + cons.log_pof(X)

        return constrained, info

    def margin(self) -> float:
        """The improvement margin ``xi`` in standardised units (``xi_units=raw``: divided by the reward std)."""
        if self.config.xi_units == "raw":
            return self.config.xi / float(self.model.y_std)
        return self.config.xi


class GPEI(GPImprovement):
    """GP-EI: maximise log expected improvement over the best observed reward."""

    name = "gp_ei"
    pending_rule = "fantasies"
    uses_fantasies = True

    def output_transform(self, config: GPBOConfig) -> str:
        """power (Yeo-Johnson before standardising), except under ``preset=skopt`` (scikit-optimize's model):
        ahead of none on BBOB (214 wins, 2 ties, 144 losses over 360 blocks, Wilcoxon p = 4e-4), level on the sklearn
        suite (38 / 52 / 30, p = 0.18), 5 seeds each (results/ablate_output_transform.txt)."""
        return "power" if config.preset == "default" else "none"

    def acquisition(self, t: int) -> tuple[Callable[[Tensor], Tensor], dict[str, float]]:
        if self.fantasies is not None:  # trials pending: EI averaged over joint draws of their outcomes
            return self.fantasies.log_ei(self.incumbent(), self.margin()), {"incumbent": float(self.incumbent())}
        best = self.incumbent() + self.margin()

        def fn(X: Tensor) -> Tensor:
            return acq.log_expected_improvement(*self._posterior(X), best)

        return fn, {"incumbent": float(best)}


class GPPI(GPImprovement):
    """GP-PI: maximise log probability of improvement over the best observed reward (margin xi)."""

    name = "gp_pi"

    def acquisition(self, t: int) -> tuple[Callable[[Tensor], Tensor], dict[str, float]]:
        best, xi = self.incumbent(), self.margin()

        def fn(X: Tensor) -> Tensor:
            return acq.log_probability_of_improvement(*self._posterior(X), best, xi)

        return fn, {"incumbent": float(best)}
