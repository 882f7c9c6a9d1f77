"""Nevergrad's NGOpt (or any optimizer of its registry) through ``ask``/``tell``, told the budget up front.

The space maps to Nevergrad's parameters (``Scalar``/``Log``, integer casting, ``Choice``); Nevergrad
minimises, so a maximised value is told negated; a failed evaluation is told as ``inf`` (Nevergrad's
"infinitely bad" loss, which it accepts with a ``BadLossWarning``).
"""
from __future__ import annotations

import math
import warnings
from typing import Any

import nevergrad as ng

from hpoflow.algorithms.base import BuildContext
from hpoflow.algorithms.peers.base import PeerAlgorithm
from hpoflow.algorithms.peers.configs import NevergradConfig
from hpoflow.core.records import Evaluation, Failure, Suggestion
from hpoflow.core.space import Float, Int, SearchSpace


def parametrization(space: SearchSpace, seed: int) -> ng.p.Dict:
    """Nevergrad's parameter for every hyperparameter, seeded from ``seed``."""
    params: dict[str, Any] = {}
    for p in space.parameters:
        if isinstance(p, (Float, Int)):
            param = ng.p.Log(lower=p.low, upper=p.high) if p.log else ng.p.Scalar(lower=p.low, upper=p.high)
            params[p.name] = param.set_integer_casting() if isinstance(p, Int) else param
        else:
            params[p.name] = ng.p.Choice(list(p.choices))
    out = ng.p.Dict(**params)
    out.random_state.seed(seed)
    return out


class NevergradOptimizer(PeerAlgorithm):
    """One Nevergrad optimizer with ``budget=budget.rounds`` and one worker."""

    name = "nevergrad_ngopt"

    def __init__(self, config: NevergradConfig, ctx: BuildContext) -> None:
        super().__init__(ctx)
        if config.optimizer not in ng.optimizers.registry:
            raise ValueError(f"algo.optimizer='{config.optimizer}' is not a Nevergrad optimizer; e.g. NGOpt, "
                             "TwoPointsDE, CMA, PSO, OnePlusOne (see nevergrad.optimizers.registry)")
        self.optimizer = ng.optimizers.registry[config.optimizer](
            parametrization=parametrization(ctx.task.space, ctx.seed), budget=ctx.rounds, num_workers=1)
        self._candidate: Any = None

    def ask(self, round: int) -> Suggestion:
        self._candidate = self.optimizer.ask()
        return self.suggestion(self._candidate.value)

    def tell(self, suggestion: Suggestion, outcome: Evaluation | Failure) -> None:
        candidate, self._candidate = self._candidate, None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ng.errors.BadLossWarning)
            self.optimizer.tell(candidate, math.inf if isinstance(outcome, Failure) else self.loss(outcome))
