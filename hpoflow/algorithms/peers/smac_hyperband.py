"""SMAC3's multi-fidelity facade (``MultiFidelityFacade``: random forest + log EI, random initial design, the
``Hyperband`` intensifier) through SMAC's own ``ask``/``tell``.

Each ``ask`` returns a ``TrialInfo`` whose ``budget`` is the fidelity level to evaluate at (SMAC's budgets are
``max * eta^-k`` floats: rounded for an integer fidelity, as the task's level), and whose configuration keeps its
runhistory id across budgets, our ``config_id``: a configuration SMAC promotes continues training. The space maps to
ConfigSpace as for ``algo=smac_hpo``; SMAC minimises a cost, so a maximised value is told negated; a failure is a
CRASHED trial at the scenario's crash cost, left out of the model's data (see :mod:`.smac_hpo`). SMAC's
successive halving yields further trials while earlier ones run (it opens new brackets rather than wait), so
several trials may be pending. SMAC writes its run history to a temporary folder, removed with the optimizer.
"""
from __future__ import annotations

import math
import tempfile
from pathlib import Path
from typing import ClassVar

from ConfigSpace import Configuration
from smac import MultiFidelityFacade, Scenario
from smac.runhistory.dataclasses import TrialInfo, TrialValue
from smac.runhistory.enumerations import StatusType

from hpoflow.algorithms.base import BuildContext
from hpoflow.algorithms.peers.configspace import configuration_space, to_config
from hpoflow.algorithms.peers.mf_base import MultiFidelityPeer
from hpoflow.algorithms.peers.mf_config import MFPeerConfig
from hpoflow.algorithms.peers.smac_hpo import QUIET
from hpoflow.core.records import Evaluation, Failure, Suggestion


class SMACHyperband(MultiFidelityPeer):
    """``algo=smac_hyperband``: SMAC's MultiFidelityFacade told ``n_trials=budget.rounds``, budgets = the task's
    fidelity from ``min_fidelity`` to its maximum."""

    name = "smac_hyperband"
    pending_rule: ClassVar[str | None] = "smac_running_trials"  # RUNNING trials are SMAC's; it yields others

    def __init__(self, config: MFPeerConfig, ctx: BuildContext) -> None:
        super().__init__(ctx, config.name, config.min_fidelity)
        self._folder = tempfile.TemporaryDirectory(prefix="hpoflow-smac-")
        scenario = Scenario(configuration_space(ctx.task.space, ctx.seed), deterministic=True,
                            n_trials=max(ctx.rounds, 1), seed=ctx.seed, output_directory=Path(self._folder.name),
                            min_budget=self.min_level, max_budget=self.fidelity.max)
        intensifier = MultiFidelityFacade.get_intensifier(scenario, eta=config.eta)
        encoder = type(MultiFidelityFacade.get_runhistory_encoder(scenario))(
            scenario, considered_states=[StatusType.SUCCESS])
        self.smac = MultiFidelityFacade(scenario, target_function=_never_called, intensifier=intensifier,
                                        overwrite=True, logging_level=QUIET, runhistory_encoder=encoder)
        crash_cost = scenario.crash_cost
        if isinstance(crash_cost, list):
            raise TypeError(f"SMAC's crash_cost is per objective ({crash_cost}); hpoflow has one objective")
        self.crash_cost = float(crash_cost)
        self.running: dict[int, TrialInfo] = {}  # id(suggestion) -> SMAC's trial, in ask order

    def ask(self, round: int) -> Suggestion:
        info = self.smac.ask()
        if info.budget is None:
            raise RuntimeError("SMAC's multi-fidelity intensifier returned a trial without a budget")
        config_id = self.smac.runhistory.get_config_id(info.config)
        s = self.mf_suggestion(to_config(self.space, info.config), info.budget, config_id)
        self.running[id(s)] = info
        return s

    def tell(self, suggestion: Suggestion, outcome: Evaluation | Failure) -> None:
        # a replayed round (resume) may tell a rebuilt Suggestion: it completes the oldest running trial
        info = self.running.pop(id(suggestion), None)
        if info is None:
            if not self.running:
                raise ValueError("tell() takes a suggestion this algorithm asked and was not told yet")
            info = self.running.pop(next(iter(self.running)))
        if isinstance(outcome, Failure) or not math.isfinite(outcome.value):
            value = TrialValue(cost=self.crash_cost, status=StatusType.CRASHED)
        else:
            value = TrialValue(cost=self.loss(outcome))
        self.smac.tell(info, value, save=False)


def _never_called(config: Configuration, seed: int = 0, budget: float = 0.0) -> float:
    """SMAC's multi-fidelity facade wants a target function taking ``budget``; hpoflow's loop evaluates instead."""
    raise RuntimeError("SMAC is driven through ask/tell: its target function is never called")
