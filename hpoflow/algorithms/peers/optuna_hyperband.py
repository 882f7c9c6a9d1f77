"""Optuna's TPESampler with its HyperbandPruner, through Optuna's ask/tell: ``Study.ask``, ``Trial.report``,
``Trial.should_prune``, ``Study.tell`` (COMPLETE at the top level, PRUNED when the pruner stops it, FAIL).

Optuna's ``report`` is per step and its pruner decides only at its rungs (``min_resource * eta^k`` steps, Optuna's
Hyperband brackets starting at ``k = bracket``): a trial is therefore evaluated at the rung levels
``min * eta^k`` up to the task's maximum, and each level's value is reported as that step. Reporting in between
would cost rounds (and, for a task that cannot continue a trial, fidelity) without a decision. A trial of a
bracket whose first rung is higher is still evaluated at the lower levels (the pruner's bracket is its private
state); the levels only record its curve there, and a task that continues a trial charges nothing extra.

The pruner's ``min_resource``/``max_resource``/``reduction_factor`` are our lowest level, the task's maximum and
``algo.eta``; steps are the levels themselves for an integer fidelity (epochs), and ``round(level / min * 1000)``
for a fractional one (Optuna's steps are integers). ``study_name`` is fixed: Optuna assigns a trial's bracket by
a hash of the study name and trial number, so a generated name would make runs irreproducible.
"""
from __future__ import annotations

import warnings
from typing import Any

import optuna
from optuna.trial import TrialState

from hpoflow.algorithms.base import BuildContext
from hpoflow.algorithms.peers.mf_base import Climb, ClimbingPeer
from hpoflow.algorithms.peers.mf_config import OptunaHyperbandConfig
from hpoflow.algorithms.peers.optuna_samplers import distributions
from hpoflow.core.fidelity import rung_levels


class OptunaTPEHyperband(ClimbingPeer):
    """``algo=optuna_tpe_hyperband``: one Optuna study in memory, a trial per configuration."""

    name = "optuna_tpe_hyperband"
    pending_rule = "optuna_running_trials"  # several RUNNING trials (TPE's constant liar; the pruner is async)

    def __init__(self, config: OptunaHyperbandConfig, ctx: BuildContext) -> None:
        super().__init__(ctx, config.name, config.min_fidelity)
        self.levels = rung_levels(self.fidelity, config.eta, self.min_level)
        self.scale = 1.0 if self.fidelity.integer else 1000.0 / float(self.levels[0])
        optuna.logging.set_verbosity(optuna.logging.WARNING)  # no INFO line per trial
        self.distributions = distributions(ctx.task.space)
        pruner = optuna.pruners.HyperbandPruner(min_resource=self.optuna_step(self.levels[0]),
                                                max_resource=self.optuna_step(self.levels[-1]),
                                                reduction_factor=config.eta)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
            sampler = optuna.samplers.TPESampler(seed=ctx.seed, n_startup_trials=config.n_startup_trials,
                                                 constant_liar=True)  # pending trials: its lie
        self.study = optuna.create_study(study_name="hpoflow", direction=ctx.task.direction.value,
                                         sampler=sampler, pruner=pruner)

    def optuna_step(self, level: float) -> int:
        """Optuna's integer step for a level."""
        return int(round(float(level) * self.scale))

    def start(self, number: int) -> Climb:
        trial = self.study.ask(self.distributions)
        return Climb(trial, self.suggestion(trial.params).config, trial.number)

    def report(self, climb: Climb, level: float, value: float, top: bool) -> bool:
        trial: Any = climb.handle
        trial.report(value, self.optuna_step(level))
        if top:
            self.study.tell(trial, value)
            return False
        if trial.should_prune():
            self.study.tell(trial, state=TrialState.PRUNED)  # Optuna keeps its last reported value
            return False
        return True

    def fail(self, climb: Climb) -> None:
        self.study.tell(climb.handle, state=TrialState.FAIL)
