"""SMAC3 (``smac``, CARP-S's reference HPO optimizer) through its own ``ask``/``tell`` interface.

The space maps to ConfigSpace's types (``Float``/``Integer`` with ``log``, ``Categorical`` over the choices'
positions, so that any Python value can be a choice); SMAC minimises a cost, so a maximised value is told
negated. ``algo.facade`` picks SMAC's facade: ``hpo`` (HyperparameterOptimizationFacade: random forest + log
EI, Sobol initial design, SMAC's recommendation for HPO) or ``blackbox`` (BlackBoxFacade: GP + EI). A failed
evaluation is told as SMAC tells its own crashed trials (status CRASHED, the scenario's crash cost, infinite by
default) and left out of the model's training data, as Optuna's samplers leave FAIL trials out: the facades'
own encoders would hand the infinite cost to the model (the random forest rejects it).
SMAC writes its run history to an output folder: here a temporary one, removed with the optimizer.
"""
from __future__ import annotations

import math
import tempfile
from pathlib import Path
from typing import Any

from ConfigSpace import Configuration
from smac import BlackBoxFacade, HyperparameterOptimizationFacade, Scenario
from smac.runhistory.dataclasses import TrialInfo, TrialValue
from smac.runhistory.enumerations import StatusType

from hpoflow.algorithms.base import BuildContext
from hpoflow.algorithms.peers.base import PeerAlgorithm
from hpoflow.algorithms.peers.configs import SMACConfig
from hpoflow.algorithms.peers.configspace import configuration_space, to_config
from hpoflow.core.records import Evaluation, Failure, Suggestion

FACADES: dict[str, type[HyperparameterOptimizationFacade] | type[BlackBoxFacade]] = {
    "hpo": HyperparameterOptimizationFacade, "blackbox": BlackBoxFacade}
QUIET = 40  # SMAC's logging level: errors only (it logs every incumbent change at INFO)


class SMACOptimizer(PeerAlgorithm):
    """One SMAC facade told ``n_trials=budget.rounds``, deterministic objective, one pending trial."""

    name = "smac_hpo"

    def __init__(self, config: SMACConfig, ctx: BuildContext) -> None:
        super().__init__(ctx)
        self._folder = tempfile.TemporaryDirectory(prefix="hpoflow-smac-")
        scenario = Scenario(configuration_space(ctx.task.space, ctx.seed), deterministic=True,
                            n_trials=max(ctx.rounds, 1), seed=ctx.seed, output_directory=Path(self._folder.name))
        facade = FACADES[config.facade]
        kwargs: dict[str, Any] = {}
        if config.n_init is not None:
            kwargs["initial_design"] = facade.get_initial_design(scenario, n_configs=config.n_init, max_ratio=1.0)
        encoder = type(facade.get_runhistory_encoder(scenario))(scenario, considered_states=[StatusType.SUCCESS])
        self.smac = facade(scenario, target_function=_never_called, overwrite=True, logging_level=QUIET,
                           runhistory_encoder=encoder, **kwargs)
        crash_cost = scenario.crash_cost  # one objective: a float (a list only for several objectives)
        if isinstance(crash_cost, list):
            raise TypeError(f"SMAC's crash_cost is per objective ({crash_cost}); hpoflow has one objective")
        self.crash_cost = float(crash_cost)
        self._trial: TrialInfo | None = None

    def ask(self, round: int) -> Suggestion:
        self._trial = self.smac.ask()
        return self.suggestion(to_config(self.space, self._trial.config))

    def tell(self, suggestion: Suggestion, outcome: Evaluation | Failure) -> None:
        trial, self._trial = self._trial, None
        if trial is None:
            raise RuntimeError("tell() without a pending ask()")
        if isinstance(outcome, Failure) or not math.isfinite(outcome.value):
            value = TrialValue(cost=self.crash_cost, status=StatusType.CRASHED)
        else:
            value = TrialValue(cost=self.loss(outcome))
        self.smac.tell(trial, value, save=False)


def _never_called(config: Configuration, seed: int = 0) -> float:
    """SMAC's facades want a target function; with ask/tell hpoflow's loop evaluates instead."""
    raise RuntimeError("SMAC is driven through ask/tell: its target function is never called")
