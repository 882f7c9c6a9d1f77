"""The rule behind ``algo=auto``: which of our algorithms to run, from the space, the budget and the noise.

A pure function of what is known before the first evaluation (no torch, no task call), so a resumed run picks
the same algorithm again. Each branch names the measurement that supports it (results/auto_ablation.txt).

RULE_PLACEHOLDER
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hpoflow.core.space import Categorical, Float, Int, SearchSpace


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


def decide(space: SpaceProfile, rounds: int, noisy: bool = False, finite: bool = False) -> Choice:
    """The algorithm for a space, a budget of ``rounds`` evaluations and the declared noise.

    ``finite``: the task offers a finite candidate set of its own (GP-EI searches it exhaustively).
    """
    return Choice("gp_ei", "provisional", {"discrete": "snap"})
