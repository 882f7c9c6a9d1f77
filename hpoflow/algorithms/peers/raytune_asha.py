"""Ray Tune's ASHA (``ray.tune.schedulers.ASHAScheduler``) deciding inside hpoflow's loop, through the scheduler
API Ray's own ``TuneController`` calls: ``on_trial_add`` when a trial starts, ``on_trial_result`` for each result
(CONTINUE or STOP), ``on_trial_complete`` when a trial stops or reaches ``max_t``, ``on_trial_error`` for a failure.

Ray Tune owns its loop (``Tuner.fit``), but its scheduler is a plain object that decides from ``trial.trial_id`` and
the result dict alone, so our loop can stand in for the controller: each round is one result of one trial, at
ASHA's milestones ``grace_period * eta^k`` (the rung levels; ASHA decides only there: a result at a milestone is
stopped unless it is in the top ``1/eta`` of those recorded at that milestone so far) and at ``max_t`` (the task's
maximum), where Ray stops the trial. Configurations come from Ray's own random sampling (``tune.uniform``,
``loguniform``, ``randint``, ``choice`` domains, what ``Tuner`` with no ``search_alg`` draws), from a seeded NumPy
generator. The trials are Ray's own ``Trial`` objects, made as stubs (no Ray cluster is started).
"""
from __future__ import annotations

from typing import Any

import numpy as np
from ray.tune.experiment import Trial
from ray.tune.schedulers import ASHAScheduler, TrialScheduler
from ray.tune.search import sample

from hpoflow.algorithms.base import BuildContext
from hpoflow.algorithms.peers.mf_base import Climb, ClimbingPeer
from hpoflow.algorithms.peers.mf_config import RayASHAConfig
from hpoflow.core.fidelity import rung_levels
from hpoflow.core.space import Float, Int, SearchSpace

TIME, METRIC = "fidelity", "value"  # the result keys ASHA reads: time_attr and metric


def ray_domains(space: SearchSpace) -> dict[str, sample.Domain]:
    """Ray Tune's sampling domain for every parameter (Ray's ``Integer`` upper bound is exclusive)."""
    out: dict[str, sample.Domain] = {}
    for p in space.parameters:
        if isinstance(p, Float):
            out[p.name] = sample.Float(p.low, p.high).loguniform() if p.log else sample.Float(p.low, p.high).uniform()
        elif isinstance(p, Int):
            domain = sample.Integer(p.low, p.high + 1)
            out[p.name] = domain.loguniform() if p.log else domain.uniform()
        else:
            out[p.name] = sample.Categorical(list(range(p.cardinality))).uniform()  # positions: any value a choice
    return out


class RayTuneASHA(ClimbingPeer):
    """``algo=raytune_asha``: a trial climbs ASHA's milestones until the scheduler says STOP."""

    name = "raytune_asha"
    pending_rule = "asha_running_trials"  # ASHA is asynchronous: each running trial is decided on its own result

    def __init__(self, config: RayASHAConfig, ctx: BuildContext) -> None:
        super().__init__(ctx, config.name, config.min_fidelity)
        self.levels = rung_levels(self.fidelity, config.eta, self.min_level)
        low: Any = self.levels[0]  # ints for an integer fidelity; Ray's arithmetic takes the floats of others
        top: Any = self.levels[-1]
        self.scheduler = ASHAScheduler(time_attr=TIME, metric=METRIC, mode="max" if ctx.task.direction.sign > 0
                                       else "min", max_t=top, grace_period=low, reduction_factor=config.eta,
                                       brackets=config.brackets)
        self.domains = ray_domains(ctx.task.space)
        self.rng = np.random.default_rng(ctx.generator_seed(41))

    def start(self, number: int) -> Climb:
        drawn = {name: d.sample(random_state=self.rng) for name, d in self.domains.items()}
        config = {p.name: drawn[p.name] if isinstance(p, (Float, Int)) else p.choices[int(drawn[p.name])]
                  for p in self.space.parameters}
        trial = Trial("hpoflow", config=drawn, trial_id=f"{number:05d}", stub=True)
        self.scheduler.on_trial_add(None, trial)  # type: ignore[arg-type]  # no TuneController: ours is the loop
        return Climb(trial, self.suggestion(config).config, number)

    def report(self, climb: Climb, level: float, value: float, top: bool) -> bool:
        result: dict[str, Any] = {TIME: level, METRIC: value}
        decision = self.scheduler.on_trial_result(None, climb.handle, result)  # type: ignore[arg-type]
        if decision == TrialScheduler.STOP or top:  # Ray stops a trial at max_t itself (stop_last_trials)
            self.scheduler.on_trial_complete(None, climb.handle, result)  # type: ignore[arg-type]
            return False
        return True

    def fail(self, climb: Climb) -> None:
        self.scheduler.on_trial_error(None, climb.handle)  # type: ignore[arg-type]  # what Ray's controller calls
