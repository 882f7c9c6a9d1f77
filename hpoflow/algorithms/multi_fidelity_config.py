"""Config dataclasses and registry entries of the multi-fidelity algorithms (no torch import)."""
from __future__ import annotations

from dataclasses import dataclass, field

from hpoflow.acquisition.config import OptimizerConfig
from hpoflow.core.component import algorithm

SCHEDULERS = ("sha", "hyperband", "asha", "asha_stopping", "warm_hyperband")
SEARCHERS = ("random", "gp")
MF_TASKS = ("branin_mf", "hartmann6_mf")  # --help and the registry-wide test run them on these


@dataclass(frozen=True)
class MultiFidelityConfig:
    """A scheduler (when to start or promote) joined with a searcher (which new configuration)."""

    name: str = "hyperband"
    scheduler: str = "hyperband"     # sha (one bracket from the lowest level) | hyperband (all brackets) | asha
    # (promotion type) | asha_stopping (Ray Tune's: each configuration goes on while in its rung's top 1/eta) |
    # warm_hyperband (asha_stopping for Hyperband's first bracket's worth of uniform configurations, then hyperband)
    searcher: str = "random"         # random | gp (BOHB's rule with our GP: the highest rung with enough data)
    eta: float = 3.0                 # the factor between rung levels; the top 1/eta of a rung is promoted
    min_fidelity: float | None = None  # null: the task's fidelity minimum (the lowest rung)
    min_points: int | None = None    # searcher=gp: results a rung needs before the GP fits it (null: min(d + 2, 5))
    random_fraction: float = 0.3333333333333333  # searcher=gp: share of uniform proposals (BOHB's 1/3)
    optimizer: OptimizerConfig = field(default_factory=OptimizerConfig)  # searcher=gp's acquisition search

    def __post_init__(self) -> None:
        if self.scheduler not in SCHEDULERS:
            raise ValueError(f"algo.scheduler='{self.scheduler}' is unknown; allowed: {', '.join(SCHEDULERS)}")
        if self.searcher not in SEARCHERS:
            raise ValueError(f"algo.searcher='{self.searcher}' is unknown; allowed: {', '.join(SEARCHERS)}")
        check_eta_and_min_fidelity(self.eta, self.min_fidelity)
        if self.min_points is not None and (isinstance(self.min_points, bool) or not isinstance(self.min_points, int)
                                            or self.min_points < 2):
            raise ValueError(f"algo.min_points={self.min_points!r} must be an integer >= 2 or null (min(d + 2, 5))")
        if not 0 <= self.random_fraction <= 1:
            raise ValueError(f"algo.random_fraction={self.random_fraction!r} must be in [0, 1]")


_MF = "hpoflow.algorithms.multi_fidelity:MultiFidelity"
BUILTINS = [
    algorithm("sha", _MF, MultiFidelityConfig, "successive halving: start many at the lowest fidelity, promote the "
              "top 1/eta (needs a task with a fidelity)", scheduler="sha", tasks=MF_TASKS,
              smoke=("task=branin_mf",)),
    algorithm("hyperband", _MF, MultiFidelityConfig, "Hyperband: successive halving in brackets from aggressive "
              "to full fidelity (needs a task with a fidelity)", scheduler="hyperband", tasks=MF_TASKS,
              smoke=("task=branin_mf",)),
    algorithm("asha", _MF, MultiFidelityConfig, "ASHA: asynchronous successive halving, promotes as results arrive "
              "(budget.workers; needs a task with a fidelity)", scheduler="asha", tasks=MF_TASKS,
              smoke=("task=branin_mf",)),
    algorithm("mf_gp", f"{_MF}GP", MultiFidelityConfig, "ours: Hyperband brackets with GP proposals fitted on the "
              "highest rung with enough results (BOHB's rule, our GP; needs a task with a fidelity)",
              scheduler="hyperband", searcher="gp", tasks=MF_TASKS, smoke=("task=branin_mf",)),
]


def check_eta_and_min_fidelity(eta: object, min_fidelity: object) -> None:
    """The checks every multi-fidelity method's ``eta`` (a number > 1) and ``min_fidelity`` (> 0 or null) share.

    Raises:
        ValueError: one line naming the bad value.
    """
    if isinstance(eta, bool) or not isinstance(eta, (int, float)) or not eta > 1:
        raise ValueError(f"algo.eta={eta!r} must be a number > 1")
    if min_fidelity is not None and (isinstance(min_fidelity, bool) or not isinstance(min_fidelity, (int, float))
                                     or not min_fidelity > 0):
        raise ValueError(f"algo.min_fidelity={min_fidelity!r} must be > 0 or null (the task's minimum)")
