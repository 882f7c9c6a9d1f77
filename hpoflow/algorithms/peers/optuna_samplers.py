"""Optuna's samplers (TPE, GP, CMA-ES, random) through ``Study.ask``/``Study.tell``.

The space maps to Optuna's own distributions (Float/Int with ``log``, Categorical); a failed evaluation is
told as a FAIL trial, which Optuna's samplers leave out of their models, as they do in ``Study.optimize``.
"""
from __future__ import annotations

import warnings
from typing import Any

import optuna
from optuna.distributions import BaseDistribution, CategoricalDistribution, FloatDistribution, IntDistribution
from optuna.trial import TrialState

from hpoflow.algorithms.base import BuildContext
from hpoflow.algorithms.peers.base import PeerAlgorithm
from hpoflow.algorithms.peers.configs import OptunaConfig, OptunaRandomConfig
from hpoflow.core.records import Evaluation, Failure, Suggestion
from hpoflow.core.space import Float, Int, SearchSpace


def distributions(space: SearchSpace) -> dict[str, BaseDistribution]:
    """Optuna's distribution for every parameter, in the space's order."""
    out: dict[str, BaseDistribution] = {}
    for p in space.parameters:
        if isinstance(p, Float):
            out[p.name] = FloatDistribution(p.low, p.high, log=p.log)
        elif isinstance(p, Int):
            out[p.name] = IntDistribution(p.low, p.high, log=p.log)
        else:
            out[p.name] = CategoricalDistribution(p.choices)
    return out


class OptunaSampler(PeerAlgorithm):
    """An Optuna study in memory; ``make_sampler`` picks the sampler (seeded from ``seed``)."""

    name = "optuna"
    pending_rule = "optuna_running_trials"  # several RUNNING trials in one Optuna study (TPE: its constant liar)

    def __init__(self, config: Any, ctx: BuildContext) -> None:
        super().__init__(ctx)
        optuna.logging.set_verbosity(optuna.logging.WARNING)  # no INFO line per trial
        self.distributions = distributions(ctx.task.space)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
            sampler = self.make_sampler(config, ctx.seed)
        self.study = self.create_study(ctx, sampler)
        self._trials: dict[int, optuna.Trial] = {}  # id(suggestion) -> its RUNNING trial, in ask order

    def create_study(self, ctx: BuildContext, sampler: optuna.samplers.BaseSampler) -> optuna.Study:
        """An in-memory study in the task's direction (the multi-objective adapter gives it several)."""
        return optuna.create_study(direction=ctx.task.direction.value, sampler=sampler)

    def make_sampler(self, config: Any, seed: int) -> optuna.samplers.BaseSampler:
        raise NotImplementedError

    def ask(self, round: int) -> Suggestion:
        trial = self.study.ask(self.distributions)
        s = self.suggestion(trial.params)
        self._trials[id(s)] = trial
        return s

    def tell(self, suggestion: Suggestion, outcome: Evaluation | Failure) -> None:
        # a replayed round (resume) may tell a rebuilt Suggestion: it completes the oldest running trial
        trial = self._trials.pop(id(suggestion), None) or self._trials.pop(next(iter(self._trials)))
        if trial.params != suggestion.config:  # that replayed ask diverged: record the point that was evaluated
            self.study.tell(trial, state=TrialState.FAIL)
            if not isinstance(outcome, Failure):
                self.study.add_trial(optuna.trial.create_trial(params=suggestion.config,
                                                               distributions=self.distributions,
                                                               value=float(outcome.value)))
            return
        if isinstance(outcome, Failure):
            self.study.tell(trial, state=TrialState.FAIL)
        else:
            self.study.tell(trial, float(outcome.value))


class OptunaTPE(OptunaSampler):
    """Optuna's TPESampler (its defaults)."""

    name = "optuna_tpe"

    def make_sampler(self, config: OptunaConfig, seed: int) -> optuna.samplers.BaseSampler:
        return optuna.samplers.TPESampler(seed=seed, n_startup_trials=config.n_startup_trials,
                                           constant_liar=True)  # pending trials: its lie (no change when sequential)


class OptunaGP(OptunaSampler):
    """Optuna's GPSampler (its defaults; greenlet batches its acquisition restarts)."""

    name = "optuna_gp"

    def make_sampler(self, config: OptunaConfig, seed: int) -> optuna.samplers.BaseSampler:
        return optuna.samplers.GPSampler(seed=seed, n_startup_trials=config.n_startup_trials)


class OptunaCmaEs(OptunaSampler):
    """Optuna's CmaEsSampler; categorical parameters go to its independent (random) sampler, as in Optuna."""

    name = "optuna_cmaes"

    def make_sampler(self, config: OptunaConfig, seed: int) -> optuna.samplers.BaseSampler:
        return optuna.samplers.CmaEsSampler(seed=seed, n_startup_trials=config.n_startup_trials,
                                            warn_independent_sampling=False)


class OptunaRandom(OptunaSampler):
    """Optuna's RandomSampler."""

    name = "optuna_random"

    def make_sampler(self, config: OptunaRandomConfig, seed: int) -> optuna.samplers.BaseSampler:
        return optuna.samplers.RandomSampler(seed=seed)
