"""Syne Tune 0.16's multi-fidelity schedulers (``syne_tune.optimizer.baselines``: ``ASHA``, ``BOHB``, ``ASHABORE``,
``ASHACQR``) deciding inside hpoflow's loop, through the scheduler API Syne Tune's own ``Tuner`` calls:
``suggest`` for a new trial's configuration (the scheduler's own searcher: random for ASHA, its KDE for BOHB, a
BORE classifier or a conformalized quantile regression for ASHABORE/ASHACQR, each fitted on the last value of every
trial), ``on_trial_add`` when it starts, ``on_trial_result`` for each result (CONTINUE or STOP),
``on_trial_complete`` when it stops or reaches ``max_t`` (where Syne Tune's ``Tuner`` ends a trial) and
``on_trial_error`` for a failure.

All four are Syne Tune's ``AsynchronousSuccessiveHalving`` (a stopping-type ASHA: a trial reports after every
fidelity step and is judged at the milestones ``grace_period * eta^k``, continued only if in the top ``1/eta`` of
the results recorded at that milestone so far), so our loop evaluates a trial at those milestones only (the rung
levels, as for ``raytune_asha``) and at ``max_t``, the task's maximum: what Syne Tune would have decided with a
result after every step. Syne Tune's trials are its own ``Trial`` objects (no backend, no tuner, no worker
processes). Seeded by ``random_seed`` (Syne Tune's master seed for its searchers); the draws Syne Tune makes from
NumPy's global generator (the bracket of a new trial in ``on_trial_add``, the random draws of BOHB's KDE searcher
in its ``suggest``) come from a generator of our own seeded into it for the call, so the global one is left as it was.

Syne Tune's DyHPO (``syne_tune.optimizer.baselines.DyHPO`` until 0.15) is not in 0.16: it is not wrapped.
"""
from __future__ import annotations

import contextlib
import datetime
import logging
import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np
from syne_tune import config_space as cs
from syne_tune.backend.trial_status import Trial
from syne_tune.optimizer import baselines
from syne_tune.optimizer.scheduler import SchedulerDecision

from hpoflow.algorithms.base import BuildContext
from hpoflow.algorithms.peers.mf_base import Climb, ClimbingPeer
from hpoflow.algorithms.peers.mf_config import SyneTuneBOHBConfig, SyneTuneConfig
from hpoflow.core.fidelity import rung_levels
from hpoflow.core.space import Float, Int, SearchSpace

TIME, METRIC = "fidelity", "value"  # the result keys the scheduler reads: time_attr and metric
_EPOCH = datetime.datetime(2000, 1, 1)  # Trial.creation_time: read by Syne Tune's tuner only, not its schedulers


def synetune_space(space: SearchSpace) -> dict[str, cs.Domain]:
    """Syne Tune's domain of every parameter (its ``randint`` bounds are both inclusive, as ours)."""
    out: dict[str, cs.Domain] = {}
    for p in space.parameters:
        if isinstance(p, Float):
            out[p.name] = cs.loguniform(p.low, p.high) if p.log else cs.uniform(p.low, p.high)
        elif isinstance(p, Int):
            out[p.name] = cs.lograndint(p.low, p.high) if p.log else cs.randint(p.low, p.high)
        else:  # positions (strings: Syne Tune's categorical encoders take any hashable, its casts str/int/float)
            out[p.name] = cs.choice([str(i) for i in range(p.cardinality)])
    return out


class _NoPointsWarning(logging.Filter):
    """Syne Tune 0.16's ASHA family passes ``points_to_evaluate`` twice to its own searcher and logs a warning
    about it at every construction: not the user's to act on."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "points_to_evaluate is passed in searcher_kwargs" not in record.getMessage()


logging.getLogger("syne_tune.optimizer.schedulers.searchers.last_value_multi_fidelity_searcher").addFilter(
    _NoPointsWarning())


@contextlib.contextmanager
def _library(rng: np.random.Generator) -> Iterator[None]:
    """Around a call into Syne Tune: NumPy's global generator seeded from ``rng`` inside and restored after (its
    bracket draw and its KDE searcher's random draws read the global one); statsmodels' FutureWarning about a
    default and its RuntimeWarnings silenced (the library's, not the user's)."""
    state = np.random.get_state()
    np.random.seed(int(rng.integers(2**31 - 1)))
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", category=FutureWarning, message=r"After 0\.17")
            # its Aitchison-Aitken kernel divides by (levels - 1) when the good set holds one level of a categorical
            warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"statsmodels\.")
            yield
    finally:
        np.random.set_state(state)


class SyneTunePeer(ClimbingPeer):
    """A Syne Tune ASHA-family scheduler: a trial climbs its milestones until the scheduler says STOP."""

    pending_rule = "asha_running_trials"  # asynchronous: each running trial is decided on its own result
    method = "ASHA"  # the class of syne_tune.optimizer.baselines

    def __init__(self, config: SyneTuneConfig, ctx: BuildContext) -> None:
        super().__init__(ctx, config.name, config.min_fidelity)
        self.levels = rung_levels(self.fidelity, config.eta, self.min_level)
        if len(self.levels) < 2:
            raise ValueError(f"algo={config.name} needs a fidelity range: the lowest level {self.min_level} is the "
                             f"task's maximum {self.fidelity.max}")
        self.domains = synetune_space(ctx.task.space)
        low: Any = self.levels[0]  # ints for an integer fidelity (Syne Tune's type hints), floats otherwise
        top: Any = self.levels[-1]
        cls = getattr(baselines, self.method)
        self.scheduler = cls(config_space=self.domains, metric=METRIC, time_attr=TIME, max_t=top,
                             do_minimize=ctx.task.direction.sign < 0, random_seed=ctx.generator_seed(43) % 2**31,
                             grace_period=low, reduction_factor=config.eta, brackets=config.brackets,
                             **self.extra(config))
        self.rng = np.random.default_rng(ctx.generator_seed(44))

    def extra(self, config: SyneTuneConfig) -> dict[str, Any]:
        """The method's own keyword arguments beyond ASHA's."""
        return {}

    def start(self, number: int) -> Climb:
        with _library(self.rng):
            proposal = self.scheduler.suggest()
        if proposal is None or proposal.config is None:
            raise RuntimeError(f"algo={self.name}: Syne Tune's searcher has no configuration left to suggest")
        drawn = dict(proposal.config)
        config = {p.name: p.choices[int(drawn[p.name])] if not isinstance(p, (Float, Int)) else drawn[p.name]
                  for p in self.space.parameters}
        trial = Trial(trial_id=number, config=drawn, creation_time=_EPOCH)
        with _library(self.rng):  # its bracket: np.random.choice over the brackets
            self.scheduler.on_trial_add(trial)
        return Climb(trial, self.suggestion(config).config, number)

    def report(self, climb: Climb, level: float, value: float, top: bool) -> bool:
        result: dict[str, Any] = {TIME: level, METRIC: value}
        decision = self.scheduler.on_trial_result(climb.handle, result)  # deterministic: no draw
        if decision == SchedulerDecision.STOP or top:  # the top is max_t: Syne Tune stops the trial there
            self.scheduler.on_trial_complete(climb.handle, result)
            return False
        return True

    def fail(self, climb: Climb) -> None:
        self.scheduler.on_trial_error(climb.handle)  # what Syne Tune's tuner calls; the trial is not continued


class SyneTuneASHA(SyneTunePeer):
    """``algo=synetune_asha``: Syne Tune's ASHA (random search proposes)."""

    name = "synetune_asha"
    method = "ASHA"


class SyneTuneBOHB(SyneTunePeer):
    """``algo=synetune_bohb``: Syne Tune's BOHB (its KDE proposes, ASHA stops)."""

    name = "synetune_bohb"
    method = "BOHB"

    def extra(self, config: SyneTuneConfig) -> dict[str, Any]:
        assert isinstance(config, SyneTuneBOHBConfig)
        return {"top_n_percent": config.top_n_percent, "num_candidates": config.num_candidates,
                "random_fraction": config.random_fraction, "bandwidth_factor": config.bandwidth_factor,
                "min_bandwidth": config.min_bandwidth}


class SyneTuneASHABORE(SyneTunePeer):
    """``algo=synetune_ashabore``: Syne Tune's ASHABORE (a BORE classifier, XGBoost, on each rung proposes)."""

    name = "synetune_ashabore"
    method = "ASHABORE"


class SyneTuneASHACQR(SyneTunePeer):
    """``algo=synetune_ashacqr``: Syne Tune's ASHACQR (conformalized quantile regression proposes)."""

    name = "synetune_ashacqr"
    method = "ASHACQR"
