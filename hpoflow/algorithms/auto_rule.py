"""The rule behind ``algo=auto``: which of our algorithms to run, from the space, the budget and the noise.

A pure function of what is known before the first evaluation (no torch, no task call), so a resumed run picks
the same algorithm again. Each branch names the measurement that supports it (results/auto_ablation.txt).

RULE_PLACEHOLDER
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hpoflow.core.space import Categorical, Float, Int, SearchSpace

MAX_ENUMERATED = 20_000  # GP-BO's own limit (gp_bo.MAX_ENUMERATED): up to this size it searches every configuration
SNAP_SHARE = 0.5         # integer/categorical share of the parameters from which GP-EI snaps to cell centres
TURBO_MIN_ROUNDS = 0     # continuous spaces: TuRBO from this many rounds (placeholder until the r20 slice is in)


@dataclass(frozen=True)
class SpaceProfile:
    """What the rule reads of a search space: how many parameters of each type."""

    floats: int
    integers: int
    categoricals: int
    finite_size: int | None = None  # the number of configurations when every parameter is discrete

    @property
    def dim(self) -> int:
        return self.floats + self.integers + self.categoricals

    @property
    def discrete_share(self) -> float:
        """The fraction of parameters that are integer or categorical (booleans included)."""
        return (self.integers + self.categoricals) / self.dim if self.dim else 0.0

    def describe(self) -> str:
        return f"d={self.dim} ({self.floats} float, {self.integers} int, {self.categoricals} categorical)"


def profile(space: SearchSpace) -> SpaceProfile:
    """Count the space's parameters by type."""
    params = space.parameters
    return SpaceProfile(floats=sum(isinstance(p, Float) for p in params),
                        integers=sum(isinstance(p, Int) for p in params),
                        categoricals=sum(isinstance(p, Categorical) for p in params),
                        finite_size=space.finite_size())


@dataclass(frozen=True)
class Choice:
    """The algorithm picked, the settings it runs with (over its config's defaults), and why."""

    algo: str
    reason: str
    settings: dict[str, Any] = field(default_factory=dict)

    def tags(self) -> dict[str, str]:
        """The run's tags: ``auto.choice``, ``auto.settings`` (``key=value,...``; empty: defaults), ``auto.reason``."""
        settings = ",".join(f"{k}={v}" for k, v in sorted(self.settings.items()))
        return {"auto.choice": self.algo, "auto.settings": settings, "auto.reason": self.reason}

    def summary(self) -> str:
        """One line for the CLI's end-of-run summary."""
        settings = " ".join(f"algo.{k}={v}" for k, v in sorted(self.settings.items()))
        return f"auto picked algo={self.algo}{' ' + settings if settings else ''}: {self.reason}"


def decide(space: SpaceProfile, rounds: int, finite: bool = False) -> Choice:
    """The algorithm for a space and a budget of ``rounds`` evaluations (the branches: the module docstring).

    ``finite``: the task offers a finite candidate set of its own (GP-EI searches it exhaustively).
    """
    if finite or (space.finite_size is not None and space.finite_size <= MAX_ENUMERATED):
        return Choice("gp_ei", f"finite space ({_size(space, finite)}): GP-EI scores every configuration "
                      "(measured: ahead of TuRBO on knn's 100 configurations)")
    if space.discrete_share >= SNAP_SHARE:
        return Choice("gp_ei", f"mostly integer/categorical, {space.describe()}: GP-EI on cell centres, no "
                      "configuration twice (measured: ahead of discrete=relax on such spaces)", {"discrete": "snap"})
    if space.discrete_share > 0:
        return Choice("gp_ei", f"mixed, {space.describe()}: GP-EI on the relaxed cube (measured: first on the "
                      "sklearn suite's mixed spaces, ahead of snap and TuRBO)")
    if rounds < TURBO_MIN_ROUNDS:
        return Choice("gp_ei", f"continuous, {space.describe()}, {rounds} rounds < {TURBO_MIN_ROUNDS}: GP-EI "
                      "(measured: TuRBO's edge needs the budget)")
    return Choice("turbo", f"continuous, {space.describe()}, {rounds} rounds: TuRBO's trust region (measured: "
                  "ahead of GP-EI on BBOB at 40 evaluations)")


def _size(space: SpaceProfile, finite: bool) -> str:
    return "the task's candidate set" if finite else f"{space.finite_size} configurations"
