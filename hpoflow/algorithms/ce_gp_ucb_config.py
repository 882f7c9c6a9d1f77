"""Configs of the costly-feedback family (paper 002): TV-GP-UCB / R-GP-UCB / CE-GP-UCB and the bandits.

No torch import: Hydra composes these at start-up. The query rule is its own setting (``query``), so
every selection rule pairs with every query rule.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from hpoflow.algorithms.configs import OptimizerConfig
from hpoflow.core.component import algorithm
from hpoflow.core.config_values import NEVER, Period, check_auto_positive, check_period

QUERY_RULES = ("always", "bernoulli", "ce", "lcb_ucb")
CE_SCALES = ("std", "variance")  # scale of the beliefs in the CE probability (hpoflow.algorithms.query)


def _check_query(query: str, query_prob: float, kappa: float, allowed: tuple[str, ...] = QUERY_RULES) -> None:
    if query not in allowed:
        raise ValueError(f"algo.query='{query}' is unknown; allowed: {', '.join(allowed)}")
    if not 0 < query_prob <= 1:
        raise ValueError(f"algo.query_prob={query_prob} must be in (0, 1]")
    if not 0 < kappa < 1:
        raise ValueError(f"algo.kappa={kappa} must be in (0, 1)")


@dataclass(frozen=True)
class TVUCBConfig:
    """UCB selection on the time-varying GP plus a query rule.

    query: always | bernoulli (observe with probability ``query_prob``) | ce (observe iff some
        compared x has P(y(x_t) > y(x)) < kappa) | lcb_ucb (observe iff some ucb(x) > lcb(x_t)).
        The ce / lcb_ucb rules compare x_t with every other arm (identity kernel), else with the local optima
        of the UCB (paper 002 App. C; how they are found: ``hpoflow.algorithms.ce_gp_ucb``); if every ascent
        ends near x_t, the best-UCB start (continuous) or candidate (finite) outside it is compared instead,
        so the rule never skips for lack of a competitor.
    reset_every: rounds between resets of the model: k >= 1 | never | null (auto: ceil(12 eps^{-1/4}), the
        R-GP-UCB period of Bogunovic et al. for the surrogate's eps; r_gp_ucb's default).
    ce_scale: the scale of the beliefs ŷ(x) in the CE probability Φ((μ_t - μ)/sqrt(s_t² + s²)): ``std``
        (s = posterior standard deviation, the main text's ŷ ~ N(μ̃, σ̃²)) or ``variance`` (s = posterior
        variance: Appendix B's N(μ̃, σ̃) read literally; narrower beliefs below unit variance, fewer queries).
    """

    name: str = "tv_gp_ucb"
    beta: float = 2.0                # UCB: mu + sqrt(beta_t) sigma
    beta_schedule: str = "constant"  # constant | srinivas
    delta: float = 0.1               # confidence parameter of the Srinivas schedule
    query: str = "always"            # always | bernoulli | ce | lcb_ucb: when to pay for y_t
    query_prob: float = 0.5          # bernoulli: probability of observing
    kappa: float = 0.9               # ce: observe iff some compared x has P(y(x_t) > y(x)) < kappa
    reset_every: Period = NEVER      # k >= 1 | never | null (auto: ceil(12 eps^{-1/4}))
    ce_scale: str = "std"           # std (main text) | variance (App. B read literally)
    optimizer: OptimizerConfig = field(default_factory=OptimizerConfig)

    def __post_init__(self) -> None:
        _check_query(self.query, self.query_prob, self.kappa)
        if self.beta < 0:
            raise ValueError(f"algo.beta={self.beta} must be >= 0")
        if self.beta_schedule not in ("constant", "srinivas"):
            raise ValueError(f"algo.beta_schedule='{self.beta_schedule}' is unknown; allowed: constant, srinivas")
        if not 0 < self.delta < 1:
            raise ValueError(f"algo.delta={self.delta} must be in (0, 1)")
        if self.ce_scale not in CE_SCALES:
            raise ValueError(f"algo.ce_scale='{self.ce_scale}' is unknown; allowed: {', '.join(CE_SCALES)}")
        check_period("algo.reset_every", self.reset_every, "auto: ceil(12 eps^(-1/4))")


@dataclass(frozen=True)
class BanditConfig:
    """Time-varying multi-armed bandit baselines on a task's finite candidate set (arms): the query rule.

    query: always | bernoulli with ``query_prob`` (paper 002 Table A1 uses Ber(0.1)).
    """

    name: str = "ucb1"
    query: str = "bernoulli"   # always | bernoulli: observe with probability query_prob
    query_prob: float = 0.1    # paper 002 Table A1: Ber(0.1)

    def __post_init__(self) -> None:
        _check_query(self.query, self.query_prob, 0.5, allowed=("always", "bernoulli"))


@dataclass(frozen=True)
class DiscountedBanditConfig(BanditConfig):
    """eps_greedy / softmax / ucb1: arm means that forget with ``discount`` per observation (1 = plain means)."""

    discount: float = 1.0  # arm means forget by this factor per observation (1: plain means)

    def __post_init__(self) -> None:
        super().__post_init__()
        if not 0 < self.discount <= 1:
            raise ValueError(f"algo.discount={self.discount} must be in (0, 1]")


@dataclass(frozen=True)
class EpsGreedyConfig(DiscountedBanditConfig):
    name: str = "eps_greedy"
    epsilon: float = 0.1  # probability of a uniformly random arm

    def __post_init__(self) -> None:
        super().__post_init__()
        if not 0 <= self.epsilon <= 1:
            raise ValueError(f"algo.epsilon={self.epsilon} must be in [0, 1]")


@dataclass(frozen=True)
class SoftmaxConfig(DiscountedBanditConfig):
    name: str = "softmax"
    temperature: float = 0.1  # P(arm) proportional to exp(mean / temperature)

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.temperature <= 0:
            raise ValueError(f"algo.temperature={self.temperature} must be > 0")


@dataclass(frozen=True)
class UCB1Config(DiscountedBanditConfig):
    name: str = "ucb1"
    c: float = 1.0  # bonus c sqrt(2 ln n / n_i)

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.c < 0:
            raise ValueError(f"algo.c={self.c} must be >= 0")


@dataclass(frozen=True)
class EXP3SConfig(BanditConfig):
    name: str = "exp3s"
    gamma: float = 0.1          # exploration rate
    alpha: float | None = None  # weight sharing; null: 1/T

    def __post_init__(self) -> None:
        super().__post_init__()
        if not 0 < self.gamma <= 1:
            raise ValueError(f"algo.gamma={self.gamma} must be in (0, 1]")
        check_auto_positive("algo.alpha", self.alpha, "1/T", high=1.0)


# every selection rule takes every query rule (algo.query)
_CE = "hpoflow.algorithms.ce_gp_ucb"
_TV = {"smoke": ("surrogate=tv_gp", "task=tv_synthetic", "task.n_points=200"),
       "tasks": ("tv_synthetic", "online_digits"), "surrogate": "tv_gp"}
_BANDIT = {"smoke": ("task=tv_bandit",), "tasks": ("tv_bandit",)}
BUILTINS = [
    algorithm("tv_gp_ucb", f"{_CE}:TVGPUCB", TVUCBConfig,
              "TV-GP-UCB on the time-varying GP (selects surrogate=tv_gp); algo.query=always by default", **_TV),
    algorithm("r_gp_ucb", f"{_CE}:RGPUCB", TVUCBConfig,
              "R-GP-UCB: time-invariant GP-UCB reset every algo.reset_every rounds (selects surrogate=tv_gp)",
              reset_every=None, **_TV),
    algorithm("ce_gp_ucb", f"{_CE}:TVGPUCB", TVUCBConfig,
              "CE-GP-UCB: TV-GP-UCB that observes only when P(y(x_t) > y(x)) < algo.kappa for some x",
              query="ce", **_TV),
    *(algorithm(name, f"hpoflow.algorithms.bandits:{cls}", config,
                f"{what} on finite arms, Bernoulli(algo.query_prob) queries", **_BANDIT)
      for name, cls, config, what in (("exp3s", "EXP3S", EXP3SConfig, "EXP3.S (switching bandits)"),
                                      ("eps_greedy", "EpsGreedy", EpsGreedyConfig, "epsilon-greedy bandit"),
                                      ("softmax", "Softmax", SoftmaxConfig, "Boltzmann-exploration bandit"),
                                      ("ucb1", "UCB1", UCB1Config, "UCB1 bandit"))),
]
