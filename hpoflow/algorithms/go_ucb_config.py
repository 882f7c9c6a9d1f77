"""Config of GO-UCB (papers 003/004) (no torch import: composed by Hydra at start-up)."""
from __future__ import annotations

from dataclasses import dataclass, field

from hpoflow.surrogates.parametric_config import ParametricConfig

VARIANTS = ("ball", "bonus")
BETA_SCHEDULES = ("paper", "constant")
BALL_MAX = ("exact", "linear")


@dataclass(frozen=True)
class GOUCBConfig:
    """GO-UCB: Phase I uniform exploration + regression oracle, Phase II optimistic exploration.

    GO-UCB reads its network from ``algo.model.*`` (the ``surrogate`` group is ignored), so the CLI's
    default ``surrogate=gp`` needs no change. Rounds: ``budget.rounds`` counts both phases; Phase II
    has ``T2 = rounds - n_init`` rounds and the schedules below use ``T2`` as the paper's ``T``.
    """

    name: str = "go_ucb"
    variant: str = "ball"            # ball (ICML, Algorithm 1) | bonus (arXiv)
    n_init: int = 0                  # Phase I queries; 0: ceil(sqrt(budget.rounds))
    model: ParametricConfig = field(default_factory=ParametricConfig)
    standardize: bool = True         # rewards standardised with the Phase I mean/std (fixed afterwards)
    # Phase I data in Sigma_t and in the closed-form w_t (eq. 3-5 with the n Phase I points linearised at
    # w_0, where the oracle put them): the ball then cannot move f at the points Phase I already measured.
    # Off by default: it shrinks the width only near the data, so the optimism sends x to the box's corners
    # (breast_cancer-mlp n=5 T=20, seeds 0/1: Phase II regret 7.10 / 1.11 vs 1.40 / 1.23 without it).
    phase1_in_sigma: bool = False
    # every refit_every Phase II rounds (0: never) refit w_0 by the oracle on all data so far (warm-started,
    # refit_iterations steps) and relinearise Sigma_t and eq. 5 around it (arXiv version: MLE each round).
    # Off by default: refit_every=1 left breast_cancer-mlp unchanged (1.40 / 1.23) and cost go_ucb_f1
    # 17 / 25 Phase II regret (vs 0 / 0), the refitted net extrapolating to far corners.
    refit_every: int = 0
    # ball variant
    lam: float = 0.0                 # lambda of eq. 3/4; 0: lam_scale * sqrt(T2) (theory: lambda ~ sqrt(T))
    lam_scale: float = 1.0
    # beta_t: constant (default) | paper: beta_scale * d_w^3 F^4 t / T2, Appendix D.1's setting. The paper's
    # value (~1e8 for d_w = 551) only worked there because its ascent (2000 steps of rate 1e-4 in raw w)
    # never reached the ball's boundary; with an exact ascent it makes Phase II pure exploration
    # (go_ucb_f1, n=5, T=25, 2 seeds: cumulative regret 275 / 319 vs 49 / 90 with constant beta = 1).
    beta_schedule: str = "constant"
    beta: float = 1.0                # constant schedule's beta (standardised reward units)
    beta_scale: float = 1.0
    # x_t = argmax_x max_{w in Ball_t} of: exact (f_x(w) itself, joint ascent over (x, w): Algorithm 1) |
    # linear (its first-order expansion at w_t, closed form f_x(w_t) + sqrt(beta) ||grad_w f_x(w_t)||_{Sigma^-1},
    # the quantity Lemma 5.4 bounds the regret with; ascent over x only)
    # Default exact: linear left breast_cancer-mlp unchanged (Phase II regret 1.44 / 1.23 vs 1.40 / 1.23, 2 seeds).
    ball_max: str = "exact"
    ascent_steps: int = 100          # joint projected gradient ascent over (x, w) (paper: 2000 plain steps)
    ascent_lr: float = 0.02          # Adam step on x in the unit cube
    ascent_lr_w: float = 0.05        # Adam step on w in whitened ellipsoid coordinates (ball = unit ball)
    ascent_starts: int = 8           # starts kept from the raw candidates (scored by the linearised UCB)
    raw_samples: int = 512
    # bonus variant
    sigma: float = 0.01              # noise scale in the bonus sigma * ||grad_w f|| sqrt(U/t)
    U: float = 10.0
    refit_iterations: int = 500      # oracle steps per round (warm-started) for w_t

    def __post_init__(self) -> None:
        if self.variant not in VARIANTS:
            raise ValueError(f"algo.variant='{self.variant}' is unknown; allowed: {', '.join(VARIANTS)}")
        if self.beta_schedule not in BETA_SCHEDULES:
            raise ValueError(f"algo.beta_schedule='{self.beta_schedule}' is unknown; "
                             f"allowed: {', '.join(BETA_SCHEDULES)}")
        if self.ball_max not in BALL_MAX:
            raise ValueError(f"algo.ball_max='{self.ball_max}' is unknown; allowed: {', '.join(BALL_MAX)}")
        if self.n_init < 0:
            raise ValueError(f"algo.n_init={self.n_init} must be >= 0 (0: ceil(sqrt(rounds)))")
        for key in ("lam", "beta", "sigma", "U"):
            if getattr(self, key) < 0:
                raise ValueError(f"algo.{key}={getattr(self, key)} must be >= 0")
        for key in ("lam_scale", "beta_scale", "ascent_lr", "ascent_lr_w"):
            if getattr(self, key) <= 0:
                raise ValueError(f"algo.{key}={getattr(self, key)} must be > 0")
        if self.refit_every < 0:
            raise ValueError(f"algo.refit_every={self.refit_every} must be >= 0 (0: never refit w_0)")
        for key in ("ascent_steps", "ascent_starts", "raw_samples", "refit_iterations"):
            if getattr(self, key) < 1:
                raise ValueError(f"algo.{key}={getattr(self, key)} must be >= 1")
