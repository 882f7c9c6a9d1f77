"""Bayesian bilevel optimisation (Fu et al., ICLR 2024; paper 000, Algorithms 1 and 2).

Outer level: GP-BO over the hyperparameters; inner level: the task trains a model with N SGD steps
and returns the validation loss. Both variants reuse the foundation's GPBO, which models the
standardised *reward* ``sign * y`` and maximises its acquisition, so for a loss (sign = -1):

* ``bbo_ei``: the incumbent is the best posterior mean at the observed points,
  ``mu+ = min_i mu_{t-1}(lambda_i)`` on the loss (= max of the reward's posterior mean), not the best
  observed y; ``EI = (mu+ - mu) Phi(z) + sigma phi(z)``, ``z = (mu+ - mu)/sigma`` (maximised as log EI).
* ``bbo_ucb``: the lower confidence bound ``mu - beta_t sigma`` on the loss (= the reward's
  ``mu + beta_t sigma``) with the paper's ``beta_t = sqrt(B^2 + t phi(N)^2 / (sigma^2 N))``.

Each round logs the queried point (the record's config) and the returned point ``lambda+_t``:
``returned_<param>``, ``returned_mu`` (its posterior mean, loss units), ``returned_index`` (1-based
observation number) and, once observed, ``returned_value`` (its observed validation loss) plus its
``returned_test_loss`` / ``returned_test_accuracy`` when the task reports them.
"""
from __future__ import annotations

import math
from collections.abc import Callable

import torch
from torch import Tensor

from hpoflow.acquisition import functions as acq
from hpoflow.algorithms.base import BuildContext
from hpoflow.algorithms.bbo_config import BBOConfig
from hpoflow.algorithms.gp_bo import GPBO
from hpoflow.core.records import Evaluation, Failure, Suggestion

DEFAULT_INNER_STEPS = 1000  # N (SGD steps per evaluation) for tasks that do not say how many they run

RETURNED_METRICS = ("test_loss", "test_accuracy")


def paper_beta(t: int, n_inner: int, B: float = 1.0, noise_sigma: float = 1.0, phi_c: float = 1.0) -> float:
    """beta_t = sqrt(B^2 + t phi(N)^2 / (sigma^2 N)) with phi(N) = phi_c log N (paper 000, Theorem 4)."""
    phi = phi_c * math.log(n_inner)
    return math.sqrt(B**2 + max(t, 1) * phi**2 / (noise_sigma**2 * n_inner))


def expected_improvement_min(mean: Tensor, var: Tensor, incumbent: Tensor | float) -> Tensor:
    """EI for minimisation: E[max(mu+ - L, 0)], L ~ N(mean, var); 0 where var = 0 and mean >= mu+."""
    return acq.expected_improvement(-mean, var, -incumbent)


class BBO(GPBO):
    """Shared part of bbo_ei / bbo_ucb: inner horizon N, returned point, its logging."""

    name = "bbo"
    default_returned = "mean"

    def __init__(self, config: BBOConfig, ctx: BuildContext) -> None:
        task = ctx.task
        if hasattr(task, "inner_steps") and task.inner_steps is None:  # task.inner_steps=auto: N = c T
            task.resolve_inner_steps(config.steps_per_round * ctx.rounds)  # type: ignore[attr-defined]
        super().__init__(config, ctx)  # type: ignore[arg-type]  # BBOConfig has every GPBOConfig field
        self.config: BBOConfig = config  # type: ignore[assignment]
        steps = getattr(task, "inner_steps", None)
        self.n_inner = int(steps) if steps is not None else DEFAULT_INNER_STEPS
        self.returned = self.default_returned if config.returned == "auto" else config.returned
        self.metrics_seen: list[dict[str, float]] = []  # task metrics of each observation, in order
        self.returned_index: list[int] = []             # 0-based observation index of lambda+_t, per round

    # -- posterior-mean quantities (standardised reward units) -----------------------------
    def posterior_mean_best(self, X: Tensor) -> tuple[int, float]:
        """Index and value of the largest standardised posterior-mean reward over the rows of ``X``."""
        with torch.no_grad():
            mean, _ = self._posterior(X)
        i = int(torch.argmax(mean))
        return i, float(mean[i])

    def to_value(self, standardized_reward: float) -> float:
        """A standardised reward back in the task's units (e.g. validation loss)."""
        return self.sign * (standardized_reward * float(self.model.y_std) + float(self.model.y_mean))

    # -- ask / tell ----------------------------------------------------------------------------
    def ask(self, round: int) -> Suggestion:
        s = super().ask(round)
        cands = torch.stack([*self.X, s.x.to(self.dtype)])
        if self.returned == "queried" or self.model.n == 0:
            i = len(self.X)
        else:
            i, mu = self.posterior_mean_best(cands)
            s.info["returned_mu"] = self.to_value(mu)
        self._pending = i
        s.info["returned_index"] = float(i + 1)
        config = self.task.space.decode(cands[i])
        for name, value in config.items():
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                s.info[f"returned_{name}"] = float(value)
        return s

    def tell(self, suggestion: Suggestion, outcome: Evaluation | Failure) -> None:
        n_before = len(self.y)
        super().tell(suggestion, outcome)
        observed = len(self.y) > n_before
        if observed:
            self.metrics_seen.append(dict(outcome.metrics))  # type: ignore[union-attr]
        i = getattr(self, "_pending", n_before)
        if i >= len(self.y):  # lambda+ was this round's query and it failed: fall back to the best mean
            if not self.y:
                return
            i = self.posterior_mean_best(torch.stack(self.X))[0] if self.model.n else len(self.y) - 1
        self.returned_index.append(i)
        # The loop builds the record's metrics from suggestion.info after tell, so the observed value of
        # the returned point (known only now when it is this round's query) is logged with this round.
        suggestion.info["returned_value"] = self.sign * self.y[i]
        for key in RETURNED_METRICS:
            if key in self.metrics_seen[i]:
                suggestion.info[f"returned_{key}"] = self.metrics_seen[i][key]

    def returned_value(self) -> float | None:
        """Observed value at the latest returned point lambda+_t."""
        return self.sign * self.y[self.returned_index[-1]] if self.returned_index else None


class BBOEI(BBO):
    """Algorithm 1: EI with the posterior-mean incumbent mu+ = min over observed of mu_{t-1}."""

    name = "bbo_ei"

    def incumbent(self) -> Tensor:
        """Largest standardised posterior-mean reward at the observed points (= mu+ on the loss)."""
        with torch.no_grad():
            return self._posterior(torch.stack(self.X))[0].max()

    def acquisition(self, t: int) -> tuple[Callable[[Tensor], Tensor], dict[str, float]]:
        best = self.incumbent()

        def fn(X: Tensor) -> Tensor:
            return acq.log_expected_improvement(*self._posterior(X), best)

        best_observed = self.model.standardize(torch.tensor(self.y, dtype=self.dtype)).max()
        return fn, {"incumbent": self.to_value(float(best)), "best_observed": self.to_value(float(best_observed))}


class BBOUCB(BBO):
    """Algorithm 2: minimise mu - beta_t sigma with the paper's (or Srinivas') beta_t."""

    name = "bbo_ucb"
    default_returned = "queried"

    def beta_t(self, t: int) -> float:
        """The multiplier of sigma at round ``t``."""
        c = self.config
        if c.beta_schedule == "paper":
            return paper_beta(t, self.n_inner, c.B, c.noise_sigma, c.phi_c)
        if c.beta_schedule == "srinivas":
            return math.sqrt(acq.srinivas_beta(t, self.dim, c.delta))
        return c.beta

    def acquisition(self, t: int) -> tuple[Callable[[Tensor], Tensor], dict[str, float]]:
        beta = self.beta_t(t)

        def fn(X: Tensor) -> Tensor:
            # the foundation's UCB is mu + sqrt(b) sigma; the paper's beta_t multiplies sigma directly
            return acq.upper_confidence_bound(*self._posterior(X), beta**2)

        return fn, {"beta": beta}
