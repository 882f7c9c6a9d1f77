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
5. Continuous, ``TURBO_MIN_ROUNDS`` to ``LOCAL_MAX_ROUNDS_PER_DIM`` x d evaluations: cobyqa (a local trust region
   with quadratic models from the centre of the box, restarted from the best point). bbob_small (session 11, 72
   tasks, 15 methods, 40 evaluations = 4-20 per dimension): cobyqa mean rank 4.53, NGOpt 4.96 (COBYLA from the
   centre at this budget; p = 1 after Holm), cobyla 5.22, turbo 6.56, gp_ei 7.32; its data profile the highest at
   d = 2, 5 and 10. Out of sample, on the 16 BBOB functions bbob_small leaves out (experiment=auto_check_heldout,
   d 2, 5, 10, 40 evaluations): cobyqa vs turbo 44/0/4 (p = 2e-8), vs gp_ei 38/2/8 (p = 6e-5), vs NGOpt 29/1/18
   (p = 0.32); with task.noise_std=1 (d 2, 5) vs turbo 26/0/6, vs gp_ei 23/2/7 (results/auto_check_heldout.txt).
   Its cost: a larger mean normalised regret on a few 2-d multimodal tasks, where it stays in a poor basin.
6. Continuous, more than ``LOCAL_MAX_ROUNDS_PER_DIM`` x d evaluations: turbo. At 40 evaluations (BBOB f1, f3, f8,
   f10, f15, f21 x d 2, 5, 10 x instances 1, 2) turbo 1.39, gp_ei 1.75, random 2.86; turbo vs gp_ei 22/0/14, p =
   0.036. Where a local method stops paying beyond 20 evaluations per dimension was not measured: the threshold is
   the largest budget per dimension measured (d = 2 at 40), so larger budgets keep the earlier default.

00. Before all: a task with several objectives (``Task.objectives`` with two or more directions): parego, our
   GP-EI on random Chebyshev scalarisations (with constraints: times the probability of feasibility).
   scripts/mo_compare.py (results/mo_compare.txt; ZDT1, ZDT2, DTLZ2 at d = 6, breast_cancer gb and wine gb
   accuracy vs size, 5 seeds, 50 evaluations; 21 blocks with all five methods, qLogNEHVI on one wine seed):
   mean rank of final hypervolume regret parego 1.48, BoTorch qLogNEHVI 2.05, Optuna MOTPE 3.24, NSGA-II 3.95,
   random 4.29; parego ahead of NSGA-II, MOTPE and random search in 20, 19 and 20 of 21 blocks (Holm p <= 4e-5),
   level with qLogNEHVI (15 wins, 6 losses, p = 0.39: ahead on ZDT1/2 in 10 of 10, behind on DTLZ2 in 3 of 5,
   breast_cancer in 2 of 5, wine in 1 of 1), which is an optional extra and costs 7x (ZDT/DTLZ2) to 30x
   (classifiers) parego's CPU time. Without qLogNEHVI, on all 25 blocks: parego 1.28, MOTPE 2.32 (level on wine:
   1.80 each, parego ahead in 3 of 5). With ``budget.workers > 1``:
   random search (parego has no pending rule). One objective with constraints (``Task.objectives.constraints``):
   gp_ei, whose acquisition is then log EI + log probability of feasibility (the other picks ignore constraints);
   task=gramacy, 5 seeds, 50 evaluations: best feasible 0.5998 in every seed (f* = 0.59979) against random
   search's median 0.818 (better in 5 of 5 seeds).
0. Before all of them: a task that declares a fidelity, with a cost budget (``budget.cost``, in fidelity units),
   and one worker: freeze_thaw. scripts/mf_compare.py on the learning-curve suite (results/lc_suite_compare.txt: 30
   recorded tasks, 20 seeds, 600 blocks, 30 full evaluations of budget): mean rank of anytime normalised regret
   2.18 / 2.47 / 3.26 / 3.43 at 1/8, 1/4, 1/2 and all of the budget, first at each, ahead of asha, hyperband, sha,
   Optuna TPE + Hyperband and random search with Holm p <= 0.0011; against mf_gp (results/lc_suite_mf_gp.txt, 120
   blocks) ahead at every fraction, p <= 1.75e-09. On all 42 tasks x 20 seeds as MLflow runs
   (results/lc_suite_compare42.txt, 840 blocks, with DEHB, Ray Tune ASHA and A/A twins): first at every fraction
   (3.14 / 3.25 / 3.72 / 3.57 of 9), ahead of every other method at 1/4, 1/2 and 1 (Holm p <= 0.0011), tied at 1/8
   with Ray Tune ASHA (p = 0.16) and DEHB. With ``budget.workers > 1``:
   mf_gp (Hyperband's brackets, GP proposals on the highest rung with enough results). scripts/mf_compare.py
   (results/mf_compare_synthetic.txt: branin_mf and hartmann6_mf, 5 seeds, 30 full evaluations of budget): mean
   rank of simple regret 1.00 / 1.60 / 1.60 / 1.30 at 1/8, 1/4, 1/2 and all of the budget among random, sha,
   hyperband, asha and mf_gp; final regret better than each of them in 8-10 of 10 runs (p <= 0.014). On the live
   training tasks (results/mf_real_check.txt, 50 blocks) no peer is significantly ahead at any fraction. Measured, not
   picked: ``scheduler=warm_hyperband`` (a stopping-type warm-up first), ahead on the live tasks in area but behind
   on the synthetic ones (4.40 against 1.40 of 6 at the full budget, p = 0.0039). With a fidelity but no cost budget
   the rule below applies.

With ``budget.workers > 1`` branch 5 gives turbo instead: cobyqa proposes one point at a time (no pending rule).

Measured and left out of the rule: observation noise (BBOB with ``task.noise_std=1``, d 2 and 5, 40 evaluations:
turbo vs gp_ei 7/0/5, p = 0.47, the noiseless ranking; cobyqa ahead of both, as without noise), and the dimension
beyond the budget. Thin evidence, stated: 6-72 blocks per slice, branches 1-4 and 6 read off the same runs they are
scored on; branch 5 was read off bbob_small and checked on held-out functions.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hpoflow.core.budget import ROUNDS_UNDER_COST, rounds_text
from hpoflow.core.space import Categorical, Float, Int, SearchSpace

MAX_ENUMERATED = 20_000  # GP-BO's own limit (gp_bo.MAX_ENUMERATED): up to this size it searches every configuration
SNAP_SHARE = 0.5         # integer/categorical share of the parameters from which GP-EI snaps to cell centres
TURBO_MIN_ROUNDS = 40    # continuous spaces: GP-EI below this budget (a tie with TuRBO at 20, behind at 40)
LOCAL_MAX_ROUNDS_PER_DIM = 20  # continuous spaces: COBYQA up to this many evaluations per dimension, then TuRBO


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


def several_objectives(spec: Any) -> bool:
    """The task's :class:`hpoflow.core.objectives.Objectives` has two or more objectives."""
    return spec is not None and len(spec.directions) > 1


def decide(space: SpaceProfile, rounds: int, finite: bool = False, workers: int = 1, fidelity: bool = False,
           cost_budget: bool = False, objectives: bool = False, constraints: bool = False) -> Choice:
    """The algorithm for a space and a budget of ``rounds`` evaluations (the branches: the module docstring).

    ``finite``: the task offers a finite candidate set of its own (GP-EI searches it exhaustively). ``workers``:
    trials evaluated at once; above 1 the pick must propose points while others are pending (cobyqa cannot: TuRBO).
    ``fidelity``: the task declares one; ``cost_budget``: the budget is in cost units (``budget.cost``).
    ``objectives``: the task has several objectives; ``constraints``: its spec has constraints.
    """
    if objectives and workers > 1:
        return Choice("random", f"several objectives, {space.describe()}, budget.workers={workers}: random search "
                      "(parego proposes one point at a time)")
    if objectives:
        return Choice("parego", f"several objectives, {space.describe()}: ParEGO (GP-EI on random Chebyshev "
                      f"scalarisations{', times the probability of feasibility' if constraints else ''}; "
                      "measured: best mean rank of hypervolume regret against NSGA-II, MOTPE, qLogNEHVI and random "
                      "search on ZDT1/2, DTLZ2 and a classifier)")
    if constraints:
        return Choice("gp_ei", f"one objective with constraints, {space.describe()}: GP-EI times the probability of "
                      "feasibility (measured: at the constrained optimum in every seed on task=gramacy, ahead of "
                      "random search)")
    if fidelity and cost_budget and workers <= 1:
        return Choice("freeze_thaw", f"the task has a fidelity and the budget is in cost units, {space.describe()}: "
                      "freeze-thaw (every trial pausable, a power-law learning-curve ensemble picks what to continue; "
                      "measured: first at every budget fraction on the 42-task learning-curve suite, 20 seeds, "
                      "ahead of asha, hyperband, Ray Tune ASHA, DEHB, Optuna TPE + Hyperband and random at 1/4, 1/2 "
                      "and the full budget, Holm p <= 0.0011; tied at 1/8 with Ray Tune ASHA and DEHB)")
    if fidelity and cost_budget:
        return Choice("mf_gp", f"the task has a fidelity and the budget is in cost units, {space.describe()}: "
                      "Hyperband's brackets with GP proposals (measured: first at every budget fraction on the "
                      "multi-fidelity functions against sha, hyperband, asha and random)",
                      {"scheduler": "hyperband", "searcher": "gp"})
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
    if rounds <= LOCAL_MAX_ROUNDS_PER_DIM * space.dim and workers > 1:
        return Choice("turbo", f"continuous, {space.describe()}, {rounds} rounds <= {LOCAL_MAX_ROUNDS_PER_DIM} x d "
                      f"with budget.workers={workers}: TuRBO (COBYQA, ahead with one worker, proposes one point at a "
                      "time; TuRBO has a pending rule)")
    if rounds <= LOCAL_MAX_ROUNDS_PER_DIM * space.dim:
        return Choice("cobyqa", f"continuous, {space.describe()}, {rounds} rounds <= {LOCAL_MAX_ROUNDS_PER_DIM} x d: "
                      "COBYQA's local trust region from the centre (measured: ahead of TuRBO and GP-EI on BBOB at 4-20 "
                      "evaluations per dimension)")
    many = rounds_text(rounds) if rounds >= ROUNDS_UNDER_COST else f"{rounds} rounds > {LOCAL_MAX_ROUNDS_PER_DIM} x d"
    return Choice("turbo", f"continuous, {space.describe()}, {many}: TuRBO's "
                  "trust region (measured: ahead of GP-EI on BBOB at 40 evaluations)")


def _size(space: SpaceProfile, finite: bool) -> str:
    return "the task's candidate set" if finite else f"{space.finite_size} configurations"
