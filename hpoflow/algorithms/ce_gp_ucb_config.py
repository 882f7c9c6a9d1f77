"""Configs of the costly-feedback family (paper 002): TV-GP-UCB / R-GP-UCB / CE-GP-UCB and the bandits.

No torch import: Hydra composes these at start-up. The query rule is its own setting (``query``), so
every selection rule pairs with every query rule.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from hpoflow.algorithms.configs import OptimizerConfig
from hpoflow.config_values import NEVER, Period, check_auto_positive, check_period

QUERY_RULES = ("always", "bernoulli", "ce", "lcb_ucb")
CE_SCALES = ("std", "variance")  # scale of the beliefs in the CE probability (hpoflow.algorithms.query)
COMPARE = ("auto", "arms", "local_optima")


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
    compare: which x the ce / lcb_ucb rules compare x_t with: every other arm (``arms``), or the local
        optima of the UCB found by ``n_starts`` local ascents that stop where the slope is below
        ``slope_tol``: end points within ``bandwidth`` of x_t are dropped, the rest merged by mean shift
        with ``bandwidth`` (``local_optima``, paper 002 App. C); if every ascent ends within the bandwidth,
        the best-UCB start (continuous) or candidate (finite) outside it is compared instead, so the rule
        never skips for lack of a competitor. ``auto``: arms for the identity kernel.
    reset_every: rounds between resets of the model: k >= 1 | never | null (auto: ceil(12 eps^{-1/4}), the
        R-GP-UCB period of Bogunovic et al. for the surrogate's eps; r_gp_ucb's default).
    ce_scale: the scale of the beliefs ŷ(x) in the CE probability Φ((μ_t - μ)/sqrt(s_t² + s²)): ``std``
        (s = posterior standard deviation, the main text's ŷ ~ N(μ̃, σ̃²)) or ``variance`` (s = posterior
        variance: Appendix B's N(μ̃, σ̃) read literally; narrower beliefs below unit variance, fewer queries).
    """

    name: str = "tv_gp_ucb"
    beta: float = 2.0
    beta_schedule: str = "constant"  # constant | srinivas
    delta: float = 0.1
    query: str = "always"
    query_prob: float = 0.5
    kappa: float = 0.9
    compare: str = "auto"
    n_starts: int = 50
    bandwidth: float = 0.2
    slope_tol: float = 0.5          # UCB slope (per unit of the cube) below which a local ascent stops
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
        if self.compare not in COMPARE:
            raise ValueError(f"algo.compare='{self.compare}' is unknown; allowed: {', '.join(COMPARE)}")
        if self.n_starts < 1:
            raise ValueError(f"algo.n_starts={self.n_starts} must be >= 1")
        if self.bandwidth <= 0 or self.slope_tol < 0:
            raise ValueError(f"algo.bandwidth={self.bandwidth} must be > 0 and algo.slope_tol={self.slope_tol} >= 0")
        if self.ce_scale not in CE_SCALES:
            raise ValueError(f"algo.ce_scale='{self.ce_scale}' is unknown; allowed: {', '.join(CE_SCALES)}")
        check_period("algo.reset_every", self.reset_every, "auto: ceil(12 eps^(-1/4))")


@dataclass(frozen=True)
class BanditConfig:
    """Time-varying multi-armed bandit baselines on a task's finite candidate set (arms).

    query: always | bernoulli with ``query_prob`` (paper 002 Table A1 uses Ber(0.1)).
    discount: eps_greedy / softmax / ucb1 estimates forget with this factor per observation (1 = plain means).
    gamma, alpha: EXP3.S exploration and weight-sharing rates (alpha null: 1/T).
    """

    name: str = "ucb1"
    query: str = "bernoulli"
    query_prob: float = 0.1
    epsilon: float = 0.1
    temperature: float = 0.1
    c: float = 1.0
    gamma: float = 0.1
    alpha: float | None = None  # EXP3.S weight sharing; null: 1/T
    discount: float = 1.0

    def __post_init__(self) -> None:
        _check_query(self.query, self.query_prob, 0.5, allowed=("always", "bernoulli"))
        if not 0 <= self.epsilon <= 1:
            raise ValueError(f"algo.epsilon={self.epsilon} must be in [0, 1]")
        if self.temperature <= 0 or self.c < 0:
            raise ValueError(f"algo.temperature={self.temperature} must be > 0 and algo.c={self.c} >= 0")
        if not 0 < self.gamma <= 1:
            raise ValueError(f"algo.gamma={self.gamma} must be in (0, 1]")
        check_auto_positive("algo.alpha", self.alpha, "1/T", high=1.0)
        if not 0 < self.discount <= 1:
            raise ValueError(f"algo.discount={self.discount} must be in (0, 1]")
