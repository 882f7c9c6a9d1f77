"""Optuna's multi-objective samplers through ``Study.ask``/``Study.tell``: NSGA-II and multi-objective TPE.

The study has one direction per objective of the task's spec (``minimize``/``maximize``) and is told the raw
objective values; the spec's constraints go through Optuna's own mechanism, ``Trial.set_constraint`` (Optuna 5;
its samplers read them, as they read ``constraints_func``, deprecated since 5.0), feasible where ``c <= 0``:
``v - b`` for ``v <= b``, ``b - v`` for ``v >= b``. A failed evaluation is a FAIL trial.
"""
from __future__ import annotations

import math
from typing import Any

import optuna
from optuna.trial import TrialState

from hpoflow.algorithms.base import BuildContext
from hpoflow.algorithms.peers.mo_config import OptunaMOTPEConfig, OptunaNSGA2Config
from hpoflow.algorithms.peers.optuna_samplers import OptunaSampler
from hpoflow.core.objectives import Objectives
from hpoflow.core.records import Evaluation, Failure, Suggestion


def constraint_values(spec: Objectives, values: dict[str, float]) -> dict[str, float]:
    """Optuna's convention: one number per constraint, feasible when <= 0 (a missing or non-finite value: +inf)."""
    out = {}
    for name, (op, bound) in spec.constraints.items():
        v = values.get(name, math.nan)
        c = v - bound if op in ("<=", "<") else bound - v
        out[name] = c if math.isfinite(c) else math.inf
    return out


class OptunaMultiObjective(OptunaSampler):
    """An in-memory Optuna study with the task's directions; ``make_sampler`` picks NSGA-II or TPE."""

    name = "optuna_mo"

    def __init__(self, config: Any, ctx: BuildContext) -> None:
        spec = ctx.task.objectives
        if spec is None:
            raise ValueError(f"algo={config.name} needs a task with objectives (task.objectives, objectives=...); task "
                             f"'{ctx.task.name}' has one value: use algo=optuna_tpe")
        self.spec = spec
        super().__init__(config, ctx)

    def create_study(self, ctx: BuildContext, sampler: optuna.samplers.BaseSampler) -> optuna.Study:
        directions = [optuna.study.StudyDirection.MINIMIZE if d == "min" else optuna.study.StudyDirection.MAXIMIZE
                      for d in self.spec.directions.values()]
        return optuna.create_study(directions=directions, sampler=sampler)

    def tell(self, suggestion: Suggestion, outcome: Evaluation | Failure) -> None:
        trial = self._trials.pop(id(suggestion), None) or self._trials.pop(next(iter(self._trials)))
        values = None if isinstance(outcome, Failure) else [float(outcome.values.get(n, math.nan))
                                                             for n in self.spec.names]
        if values is None or not all(math.isfinite(v) for v in values):
            self.study.tell(trial, state=TrialState.FAIL)
            return
        assert isinstance(outcome, Evaluation)
        constraints = constraint_values(self.spec, outcome.values)
        if trial.params != suggestion.config:  # a replayed ask diverged (resume): record the point evaluated
            self.study.tell(trial, state=TrialState.FAIL)
            self.study.add_trial(optuna.trial.create_trial(params=suggestion.config, distributions=self.distributions,
                                                           values=values, constraints=constraints or None))
            return
        for name, c in constraints.items():
            trial.set_constraint(name, c)
        self.study.tell(trial, values)


class OptunaNSGA2(OptunaMultiObjective):
    """Optuna's NSGAIISampler (``population_size`` per generation: 10 here, Optuna's default 50 is a
    whole 50-evaluation budget of random first generation)."""

    name = "optuna_nsga2"

    def make_sampler(self, config: OptunaNSGA2Config, seed: int) -> optuna.samplers.BaseSampler:
        return optuna.samplers.NSGAIISampler(population_size=config.population_size, seed=seed)


class OptunaMOTPE(OptunaMultiObjective):
    """Optuna's TPESampler on several directions (multi-objective TPE, Ozaki et al. 2020)."""

    name = "optuna_motpe"

    def make_sampler(self, config: OptunaMOTPEConfig, seed: int) -> optuna.samplers.BaseSampler:
        return optuna.samplers.TPESampler(seed=seed, n_startup_trials=config.n_startup_trials, constant_liar=True)
