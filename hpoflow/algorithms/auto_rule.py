"""The rule behind ``algo=auto``: which of our algorithms to run, from the space's types and the budget.

A pure function of what is known before the first evaluation (no torch, no task call), so a resumed run picks
the same algorithm again. Each branch and the measurement behind it (``python scripts/auto_ablation.py`` over the
``experiment=auto_check*`` studies, results/auto_ablation.txt; ranks within each (task, seed) block among random,
gp_ei, gp_ei with discrete=snap and turbo, 1 = best; W/T/L = wins/ties/losses; two-sided Wilcoxon p):

1. A finite space (the task's candidate set, or at most ``MAX_ENUMERATED`` configurations): gp_ei, whose acquisition
   then scores every configuration (snap and relax coincide). knn's 2 integers (100 configurations), 6 blocks:
   gp_ei rank 2.25, turbo 3.08 (sklearn_small, session 4: gp_ei ahead of turbo on knn in 6 of 8 task rows, 0 behind).
2. At least half the parameters integer/categorical (``SNAP_SHARE``): gp_ei with ``discrete=snap``. lasso (3 of 5
   discrete): snap vs relax 2 wins, 4 ties, 0 losses; paper 004's all-discrete rf and mostly-discrete gb spaces:
   see results/auto_ablation.txt (and results/ablate_mixed_gp.txt: snap 4/1/1 against relax).
3. Other mixed spaces: gp_ei as it is (``discrete=relax``). gb (2 of 6 integer): relax 1.42, snap 2.42, turbo 3.17
   (relax ahead of snap in 4 of 6 blocks, of turbo in 5 of 6); rf (1 of 6): all three GP rows tie at 2.17.
4. Continuous, fewer than ``TURBO_MIN_ROUNDS`` evaluations: gp_ei. BBOB at 20 evaluations (f1, f8, f15, f21 x d 2,
   5, 10): turbo vs gp_ei 7/0/6, p = 0.50, a tie, so the default before auto stays.
5. Continuous, at least ``TURBO_MIN_ROUNDS`` evaluations: turbo. BBOB at 40 evaluations (f1, f3, f8, f10, f15, f21
   x d 2, 5, 10 x instances 1, 2): turbo 1.39, gp_ei 1.75, random 2.86; turbo vs gp_ei 22/0/14, p = 0.036 (d = 2:
   7/5, d = 5: 7/5, d = 10: 8/4); bbob_small (session 4, 72 tasks, 11 methods): turbo 4.43, gp_ei 4.94.

Measured and left out of the rule: observation noise (BBOB with ``task.noise_std=1``, d 2 and 5, 40 evaluations:
turbo vs gp_ei 7/0/5, p = 0.47, the noiseless ranking), and the dimension beyond the budget (turbo's lead holds at
d = 2, 5 and 10 alike). Thin evidence, stated: 6-36 blocks per slice, the rule is read off the same runs it is scored
on (auto_check's auto rows are in-sample); the out-of-sample checks are the session-4 suites named above.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hpoflow.core.space import Categorical, Float, Int, SearchSpace

MAX_ENUMERATED = 20_000  # GP-BO's own limit (gp_bo.MAX_ENUMERATED): up to this size it searches every configuration
SNAP_SHARE = 0.5         # integer/categorical share of the parameters from which GP-EI snaps to cell centres
TURBO_MIN_ROUNDS = 40    # continuous spaces: TuRBO from this budget on (measured ahead at 40 evaluations, a tie at 20)


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
