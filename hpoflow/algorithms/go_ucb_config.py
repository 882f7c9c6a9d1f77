"""Config of GO-UCB (papers 003/004) (no torch import: composed by Hydra at start-up).

Each setting's default and its one-line comment live on its field below (``conf/algo/go_ucb.yaml`` is generated
from them); this docstring holds why the defaults differ from paper 004's Appendix D.1, which ``preset=paper``
(``algo=go_ucb_paper``) applies literally (:data:`PAPER`, :data:`PAPER_ADVANCED`, :data:`PAPER_MODEL`). The
ablation behind them: ``python scripts/ablate_go_ucb.py`` (``scripts/results/ablate_go_ucb.txt``).

Why the defaults differ from the paper
--------------------------------------
``preset``: default = ours (local, robust, no repeats); paper = Appendix D.1 literally: every setting left at
its default takes ``outputs=raw clip_low=0 trust_region=1 shrink_after=0 interior=0 avoid_repeats=false
refit_every=never``, ``advanced.*``: ``beta_schedule=paper ascent_optimizer=sgd ascent_steps=2000
ascent_patience=0 ascent_lr=1e-4 ascent_lr_w=1e-4 ascent_starts=1 sigma=0.01``, and the network's oracle
(``surrogate=nn``, settings left at their default): ``optimizer=sgd lr=1e-11 iterations=2000 restarts=1 tol=0
input_scale=10`` ([0,10]^d inputs). The paper does not say where Step 5's ascent starts: we start it at the best
of ``raw_samples`` uniform points (and the best observed point) by the linearised optimistic value.

``outputs`` (the rewards the network fits, fixed after Phase I): iqr = (r - median) / (IQR / 1.349) of Phase I |
mad = (r - median) / (1.4826 MAD) | standard = Phase I mean/std | raw (the paper). Standardising by the std of 5
near-equal accuracies made one bad point -70 sd and the fitted net predict corners +5 sd above the data
(issue 19). mad collapses when most Phase I values tie (f1's flat tails: z up to 60): go_ucb_f1 Phase II regret
0 / 95.9 / 0 / 0 / 12.0 (mad) vs 0 / 1.3 / 0 / 0 / 0 (iqr), seeds 0-4.

``clip_low``: rewards more than ``clip_low`` scaled units below the Phase I centre count as exactly that bad
(0: off): a failed / degenerate configuration says "bad", its size must not dominate the least squares.
Measured downside: on breast_cancer-mlp seed 2 the net saw a 0.61-accuracy plateau as only 3 units worse and
spent 14 of 25 Phase II rounds there (session 3's default); with ``interior`` the default never went there
(worst mlp query 0.945 over 5 seeds), so ``clip_low`` stays.

``trust_region``: Step 5 searches a box of this side (unit-cube units) around the best observed point, clipped
to the cube (1: the whole cube, as the paper); widened x2 until it holds a configuration not queried yet. A
local optimistic search, not a global one: the 25-unit net fitted to a handful of points extrapolates to the
box's corners, which are catastrophic on real tasks. Measured: floats queried on a bound 83% -> 24% (mlp),
77% -> 3% (gb); a cliff next to the best point on a face stays reachable (mlp learning_rate_init -> 1e-6 on the
task's linear axis): see ``interior``.

``shrink_after``: TuRBO's success/failure rule on that box: after ``shrink_after`` Phase II queries in a row that
do not improve the best, its side halves (not below ``advanced.trust_region_min``); a success doubles it (up to
``trust_region``). 0: a fixed box. Measured (with interior, 3 seeds, T=30): breast_cancer-mlp 0.175
(shrink_after=2) vs 0.316 (fixed box, interior=0.03); without interior shrinking alone did not help (mlp 4.03
vs 5.75, 2-3 seeds).

``interior``: Step 5's new points keep every coordinate at least this far (unit-cube units) from the cube's faces
(0: off; the best point seen stays a candidate, as with ``avoid_repeats``): the net's monotone extrapolation
otherwise puts x on a face, and a face can be a cliff (breast_cancer-mlp: learning_rate_init = 1e-6, u = 0 on the
task's linear axis, scores 0.26-0.61; u >= 0.007 scores >= 0.97). Measured (shrink_after=2, T=30, same seeds,
cumulative regret): mlp 4.03 -> 0.20, gb 0.71 -> 0.58 (seeds 0-1), rf 0.48 -> 0.48 (seed 0); 5 seeds of the
default: rf 0.26, mlp 0.17, gb 0.96 vs random 0.40, 0.38, 1.80.

``avoid_repeats``: pick the best candidate whose decoded configuration was never queried or is the best seen
(ascent results first, then the screened raw points): on integer / categorical spaces many x decode to one
configuration, and re-querying a non-best one teaches nothing (v0 repeated a 0.864 GB configuration 14 times,
issue 19).

``refit_every``: every ``refit_every`` Phase II rounds (never: keep the Phase I fit) refit w_0 by the oracle on all
data so far (warm-started at w_t; stops once its loss gains < 1% over 50 steps, at most
``advanced.refit_iterations``) and relinearise Sigma_t and eq. 5 around it (the arXiv version refits each round).
Default 1: without it w_0 stays the Phase I fit of n points and Phase II only moves the linearised centre, so on
BBOB its box collapsed around Phase I's best and never improved (f1 d=10, seed 0: 33 Phase II queries, none
better). Measured (5 seeds, cumulative regret): rf 0.26 -> 0.21, mlp 0.19 -> 0.16, gb 0.98 -> 0.76, f1 63.5 ->
63.4; BBOB and sklearn suites: ``scripts/results/bbob_small.txt``, ``sklearn_small.txt``. Cost: one
warm-started oracle fit per round (``scripts/results/bench_go_ucb.txt``).

``advanced.phase1_in_sigma``: Phase I data in Sigma_t and in the closed-form w_t (eq. 3-5 with the n Phase I
points linearised at w_0, where the oracle put them): the ball then cannot move f at the points Phase I already
measured. Off by default: it shrinks the width only near the data, so the optimism sends x to the box's corners
(breast_cancer-mlp n=5 T=20, seeds 0/1: Phase II regret 7.10 / 1.11 vs 1.40 / 1.23 without it).

``advanced.beta_schedule``: constant (default) | paper: ``beta_scale * d_w^3 F^4 t / T2``, Appendix D.1's
setting. The paper's value (~1e8 for d_w = 551) only worked there because its ascent (2000 steps of rate 1e-4 in
raw w) never reached the ball's boundary; with an exact ascent it makes Phase II pure exploration (go_ucb_f1,
n=5, T=25, 2 seeds: cumulative regret 275 / 319 vs 49 / 90 with constant beta = 1).

``advanced.ball_max``: x_t = argmax_x max_{w in Ball_t} of: exact (f_x(w) itself, joint ascent over (x, w):
Algorithm 1) | linear (its first-order expansion at w_t, closed form f_x(w_t) + sqrt(beta)
||grad_w f_x(w_t)||_{Sigma^-1}, the quantity Lemma 5.4 bounds the regret with; ascent over x only). Default
exact: linear left breast_cancer-mlp unchanged (Phase II regret 1.44 / 1.23 vs 1.40 / 1.23, 2 seeds).

``advanced.ascent_patience``: stop the ascent once no start has raised its best value for this many steps in a
row (0: run all ascent_steps). Measured: bit-identical runs (breast_cancer rf/mlp/gb, f1, styblinski_tang-20;
seeds 0-4) at 12-21 instead of 100 steps a round; decision time / 2.5-3.8 (``scripts/results/bench_go_ucb.txt``).

``advanced.refit_stall``: a ``refit_every`` refit (warm-started at w_t, one point more than the last fit) stops
once its loss fell by less than this fraction over 50 steps (0: run all refit_iterations). Measured (5 seeds):
same regret as the full 500 steps within 0.02 (rf 0.21 vs 0.207, mlp 0.164 vs 0.164, gb 0.757 vs 0.747, f1 63.4
both); after the first refits the loss moves ~0.1% per 50 steps (breast_cancer-gb), so the full budget bought
time, not fit.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

from hpoflow.core.component import algorithm
from hpoflow.core.config_values import NEVER, Period, check_auto_int, check_auto_positive, check_period
from hpoflow.surrogates.parametric_config import ParametricConfig

VARIANTS = ("ball", "bonus")
BETA_SCHEDULES = ("paper", "constant")
BALL_MAX = ("exact", "linear")
OUTPUTS = ("iqr", "mad", "standard", "raw")
ASCENT_OPTIMIZERS = ("adam", "sgd")
PRESETS = ("default", "paper")
# algo.preset=paper: paper 004, Appendix D.1, literally (settings the user left at their default take these).
# The paper does not say where Step 5's ascent starts; we start it from the one point with the highest
# linearised optimistic value among raw_samples uniform points and the best observed point.
PAPER = {"outputs": "raw", "clip_low": 0.0, "trust_region": 1.0, "shrink_after": 0, "interior": 0.0,
         "avoid_repeats": False, "refit_every": NEVER}
PAPER_ADVANCED = {"beta_schedule": "paper", "ascent_optimizer": "sgd", "ascent_steps": 2000, "ascent_patience": 0,
                  "ascent_lr": 1e-4, "ascent_lr_w": 1e-4, "ascent_starts": 1, "sigma": 0.01}
PAPER_MODEL = {"optimizer": "sgd", "lr": 1e-11, "iterations": 2000, "restarts": 1, "tol": 0.0, "input_scale": 10.0}


@dataclass(frozen=True)
class GOUCBAdvanced:
    """GO-UCB's solver internals and ablation toggles (``algo.advanced.*``): ridge, beta schedule, Step 5's ascent
    and the bonus variant's constants. No experiment (``conf/experiment``) or ablation row changes them; the
    ``paper`` preset sets the ascent and the beta schedule to Appendix D.1's (:data:`PAPER_ADVANCED`)."""

    trust_region_min: float = 0.05   # the smallest side shrink_after halves the search box to
    phase1_in_sigma: bool = False    # Phase I data in Sigma_t and the closed-form w_t (off: see the module doc)
    lam: float | None = None         # lambda of eq. 3/4; null: lam_scale * sqrt(T2) (theory: lambda ~ sqrt(T))
    lam_scale: float = 1.0           # lam's multiplier when lam is null
    beta_schedule: str = "constant"  # constant | paper (beta_scale * d_w^3 F^4 t / T2, Appendix D.1)
    beta_scale: float = 1.0          # the paper schedule's multiplier
    ball_max: str = "exact"          # exact (joint ascent over (x, w), Algorithm 1) | linear (first-order in w)
    ascent_steps: int = 100          # joint projected gradient ascent over (x, w) (paper: 2000 plain steps)
    ascent_optimizer: str = "adam"   # adam | sgd (plain gradient ascent, the paper)
    ascent_lr: float = 0.02          # step on x: adam in the unit cube; sgd in the net's input units (paper)
    ascent_lr_w: float = 0.05        # step on w in whitened ellipsoid coordinates (ball = unit ball)
    ascent_starts: int = 8           # starts kept from the raw candidates (scored by the linearised UCB)
    ascent_patience: int = 10        # stop the ascent after this many steps without a better value (0: never)
    raw_samples: int = 512           # uniform candidates screened by the linearised UCB before the ascent
    sigma: float = 0.01              # bonus variant: noise scale in the bonus sigma * ||grad_w f|| sqrt(U/t)
    U: float = 10.0                  # bonus variant: U in the bonus
    refit_iterations: int = 500      # oracle steps per refit (warm-started): refit_every, bonus
    refit_stall: float = 0.01        # a refit stops once its loss fell < this fraction over 50 steps (0: never)

    def __post_init__(self) -> None:
        for key, allowed in (("ascent_optimizer", ASCENT_OPTIMIZERS), ("beta_schedule", BETA_SCHEDULES),
                             ("ball_max", BALL_MAX)):
            if getattr(self, key) not in allowed:
                raise ValueError(f"algo.advanced.{key}='{getattr(self, key)}' is unknown; "
                                 f"allowed: {', '.join(allowed)}")
        if self.trust_region_min <= 0:
            raise ValueError(f"algo.advanced.trust_region_min={self.trust_region_min} must be > 0")
        check_auto_positive("algo.advanced.lam", self.lam, "lam_scale * sqrt(T2)")
        for key in ("sigma", "U"):
            if getattr(self, key) < 0:
                raise ValueError(f"algo.advanced.{key}={getattr(self, key)} must be >= 0")
        for key in ("lam_scale", "beta_scale", "ascent_lr", "ascent_lr_w"):
            if getattr(self, key) <= 0:
                raise ValueError(f"algo.advanced.{key}={getattr(self, key)} must be > 0")
        if not 0 <= self.refit_stall < 1:
            raise ValueError(f"algo.advanced.refit_stall={self.refit_stall} must be in [0, 1) (0: run all "
                             "refit_iterations)")
        if self.ascent_patience < 0:
            raise ValueError(f"algo.advanced.ascent_patience={self.ascent_patience} must be >= 0 "
                             "(0: run all ascent_steps)")
        for key in ("ascent_steps", "ascent_starts", "raw_samples", "refit_iterations"):
            if getattr(self, key) < 1:
                raise ValueError(f"algo.advanced.{key}={getattr(self, key)} must be >= 1")


@dataclass(frozen=True)
class GOUCBConfig:
    """GO-UCB: Phase I uniform exploration + regression oracle, Phase II optimistic exploration.

    The network f_w(x) and its least-squares oracle are the ``nn`` surrogate's (``surrogate.*``, selected by
    ``conf/algo/go_ucb.yaml``); ``preset=paper`` also sets its oracle to :data:`PAPER_MODEL`. Rounds:
    ``budget.rounds`` counts both phases; Phase II has ``T2 = rounds - n_init`` rounds and the schedules below use
    ``T2`` as the paper's ``T``. Why each default differs from the paper: this module's docstring.
    """

    name: str = "go_ucb"
    preset: str = "default"          # default (ours: local, robust, no repeats) | paper (Appendix D.1 literally)
    variant: str = "ball"            # ball (ICML, Algorithm 1) | bonus (arXiv)
    n_init: int | None = None        # Phase I queries; null: ceil(sqrt(budget.rounds))
    outputs: str = "iqr"             # rewards the network fits: iqr | mad | standard (Phase I mean/std) | raw
    clip_low: float = 3.0            # rewards below the Phase I centre by more than this count as this (0: off)
    trust_region: float = 0.4        # Step 5's box side around the best point, unit-cube units (1: whole cube)
    shrink_after: int = 2            # halve the box after this many Phase II failures in a row (0: fixed box)
    interior: float = 0.01           # new points keep this distance from the cube's faces (0: off)
    avoid_repeats: bool = True       # never re-query a configuration unless it is the best seen
    refit_every: Period = 1          # Phase II rounds between oracle refits of w_0 on all data (never: Phase I fit)
    beta: float = 1.0                # beta_t (constant schedule), standardised reward units: the ball's radius^2
    advanced: GOUCBAdvanced = field(default_factory=GOUCBAdvanced)  # solver internals and ablation toggles

    def __post_init__(self) -> None:
        if self.preset not in PRESETS:
            raise ValueError(f"algo.preset='{self.preset}' is unknown; allowed: {', '.join(PRESETS)}")
        if self.preset == "paper":
            self._apply(PAPER, PAPER_ADVANCED)
        for key, allowed in (("outputs", OUTPUTS), ("variant", VARIANTS)):
            if getattr(self, key) not in allowed:
                raise ValueError(f"algo.{key}='{getattr(self, key)}' is unknown; allowed: {', '.join(allowed)}")
        if not 0 < self.trust_region <= 1:
            raise ValueError(f"algo.trust_region={self.trust_region} must be in (0, 1] (1: the whole cube)")
        if not 0 <= self.interior < 0.5:
            raise ValueError(f"algo.interior={self.interior} must be in [0, 0.5) (0: off)")
        if self.shrink_after < 0:
            raise ValueError(f"algo.shrink_after={self.shrink_after} must be >= 0 (0: a fixed box)")
        if self.clip_low < 0:
            raise ValueError(f"algo.clip_low={self.clip_low} must be >= 0 (0: off)")
        check_auto_int("algo.n_init", self.n_init, "ceil(sqrt(budget.rounds))")
        if self.beta < 0:
            raise ValueError(f"algo.beta={self.beta} must be >= 0")
        check_period("algo.refit_every", self.refit_every, None)  # GO-UCB has no automatic refit schedule

    def _apply(self, values: dict, advanced: dict) -> None:
        """Set the preset's values on every field (and ``advanced`` field) still at its default (frozen dataclass)."""
        for key, value in _left_at_default(self, values, GOUCBConfig()).items():
            object.__setattr__(self, key, value)
        changes = _left_at_default(self.advanced, advanced, GOUCBAdvanced())
        object.__setattr__(self, "advanced", replace(self.advanced, **changes))


def paper_network(config: ParametricConfig) -> ParametricConfig:
    """``preset=paper``'s network oracle: :data:`PAPER_MODEL` on every ``surrogate.*`` setting left at its default."""
    return replace(config, **_left_at_default(config, PAPER_MODEL, ParametricConfig()))


def _left_at_default(config: object, values: dict, defaults: object) -> dict:
    """The preset ``values`` whose setting ``config`` still has at its default (``defaults``: a default instance)."""
    return {key: value for key, value in values.items() if getattr(config, key) == getattr(defaults, key)}


_SMOKE = ("task=branin", "surrogate=nn", "algo.advanced.ascent_steps=5", "algo.advanced.raw_samples=64")
BUILTINS = [
    algorithm("go_ucb", "hpoflow.algorithms.go_ucb:GOUCB", GOUCBConfig,
              "GO-UCB: neural-network surrogate (selects surrogate=nn), ball (ICML) or bonus (arXiv) optimism",
              smoke=_SMOKE, tasks=("breast_cancer", "go_ucb_f1"), surrogate="nn"),
    algorithm("go_ucb_paper", "hpoflow.algorithms.go_ucb:GOUCB", GOUCBConfig,
              "GO-UCB with paper 004's Appendix D.1 settings literally (algo.preset=paper; selects surrogate=nn)",
              smoke=_SMOKE, tasks=("go_ucb_f1",), surrogate="nn", preset="paper"),
]
