"""Time-varying multi-armed bandit baselines with Bernoulli queries (paper 002, Table A1).

The arms are the task's finite candidate set. A round draws an arm from the policy, then the query rule
(always / Bernoulli(p)) decides whether the reward is observed; only observed rewards update the policy.
"""
from __future__ import annotations

import math

import torch

from hpoflow.algorithms.base import AskTellAlgorithm, BuildContext
from hpoflow.algorithms.ce_gp_ucb import finite_candidates
from hpoflow.algorithms.ce_gp_ucb_config import (
    BanditConfig,
    DiscountedBanditConfig,
    EpsGreedyConfig,
    EXP3SConfig,
    SoftmaxConfig,
    UCB1Config,
)
from hpoflow.core.records import Evaluation, Failure, Suggestion


class Bandit(AskTellAlgorithm):
    """Shared arm bookkeeping: (discounted) counts and sums of observed rewards; subclasses pick arms."""

    name = "bandit"

    def __init__(self, config: BanditConfig, ctx: BuildContext) -> None:
        super().__init__(ctx.task)
        arms = finite_candidates(ctx)
        if arms is None:
            raise ValueError(f"algo '{config.name}' needs a finite set of arms (task.candidates or a discrete space)")
        self.config, self.arms, self.k = config, arms, arms.shape[0]
        self.sign = ctx.task.direction.sign
        self.rounds = ctx.rounds
        self.generator = ctx.generator(29)
        self.counts = torch.zeros(self.k, dtype=torch.float64)
        self.sums = torch.zeros(self.k, dtype=torch.float64)
        self.n_obs = 0
        self.discount = 1.0  # plain means; DiscountedBandit forgets

    def means(self) -> torch.Tensor:
        return self.sums / self.counts.clamp_min(1e-12)

    def probabilities(self) -> torch.Tensor:
        """Distribution over arms this round (deterministic policies return a one-hot)."""
        raise NotImplementedError

    def ask(self, round: int) -> Suggestion:
        p = self.probabilities()
        i = int(torch.multinomial(p, 1, generator=self.generator))
        self._arm, self._p = i, float(p[i])
        c = self.config
        observe = c.query == "always" or bool(torch.rand((), generator=self.generator) < c.query_prob)
        x = self.arms[i]
        return Suggestion(self.task.space.decode(x), x.clone(), observe=observe, info={"arm": float(i)})

    def tell(self, suggestion: Suggestion, outcome: Evaluation | Failure) -> None:
        if isinstance(outcome, Failure) or not suggestion.observe or not math.isfinite(outcome.value):
            return
        self.n_obs += 1
        self.update(self._arm, self.sign * outcome.value)

    def update(self, arm: int, reward: float) -> None:
        g = self.discount
        self.counts.mul_(g)
        self.sums.mul_(g)
        self.counts[arm] += 1
        self.sums[arm] += reward


def _one_hot(k: int, i: int) -> torch.Tensor:
    p = torch.zeros(k, dtype=torch.float64)
    p[i] = 1.0
    return p


class DiscountedBandit(Bandit):
    """A bandit whose arm means forget with ``algo.discount`` per observation."""

    def __init__(self, config: DiscountedBanditConfig, ctx: BuildContext) -> None:
        super().__init__(config, ctx)
        self.discount = config.discount


class EpsGreedy(DiscountedBandit):
    """epsilon-greedy: a uniformly random arm with probability epsilon, else the best mean (unseen arms first)."""

    name = "eps_greedy"
    config: EpsGreedyConfig

    def probabilities(self) -> torch.Tensor:
        unseen = torch.nonzero(self.counts == 0).squeeze(-1)
        if unseen.numel():
            return _one_hot(self.k, int(unseen[0]))
        e = self.config.epsilon
        return (1 - e) * _one_hot(self.k, int(self.means().argmax())) + e / self.k


class Softmax(DiscountedBandit):
    """Boltzmann exploration: P(arm) proportional to exp(mean / temperature)."""

    name = "softmax"
    config: SoftmaxConfig

    def probabilities(self) -> torch.Tensor:
        unseen = torch.nonzero(self.counts == 0).squeeze(-1)
        if unseen.numel():
            return _one_hot(self.k, int(unseen[0]))
        return torch.softmax(self.means() / self.config.temperature, 0)


class UCB1(DiscountedBandit):
    """UCB1 (Auer et al., 2002a): mean + c sqrt(2 ln n / n_i); every arm once first."""

    name = "ucb1"
    config: UCB1Config

    def probabilities(self) -> torch.Tensor:
        unseen = torch.nonzero(self.counts == 0).squeeze(-1)
        if unseen.numel():
            return _one_hot(self.k, int(unseen[0]))
        n = float(self.counts.sum())
        bonus = self.config.c * torch.sqrt(2 * math.log(max(n, 1.0)) / self.counts)
        return _one_hot(self.k, int((self.means() + bonus).argmax()))


class EXP3S(Bandit):
    """EXP3.S (Auer et al., 2002b) for switching bandits, rewards assumed in [0, 1].

    The importance weight divides by the chance that the arm was both played and observed (p_i q),
    so reward estimates stay unbiased under Bernoulli(q) queries.
    """

    name = "exp3s"
    config: EXP3SConfig

    def __init__(self, config: EXP3SConfig, ctx: BuildContext) -> None:
        super().__init__(config, ctx)
        self.log_w = torch.zeros(self.k, dtype=torch.float64)
        self.alpha = 1.0 / max(ctx.rounds, 1) if config.alpha is None else config.alpha

    def probabilities(self) -> torch.Tensor:
        g = self.config.gamma
        return (1 - g) * torch.softmax(self.log_w, 0) + g / self.k

    def update(self, arm: int, reward: float) -> None:
        super().update(arm, reward)
        q = 1.0 if self.config.query == "always" else self.config.query_prob
        xhat = torch.zeros(self.k, dtype=torch.float64)
        xhat[arm] = min(1.0, max(0.0, reward)) / (self._p * q)
        w = torch.softmax(self.log_w, 0)  # weights normalised to sum 1 (the update is scale-free)
        w = w * torch.exp(self.config.gamma * xhat / self.k) + math.e * self.alpha / self.k
        self.log_w = torch.log(w)
