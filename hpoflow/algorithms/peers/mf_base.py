"""What the multi-fidelity peers share: the task's fidelity, suggestions that carry a level and a configuration id,
and the "climb" of trial-based libraries (Optuna's pruners, Ray Tune's schedulers): a trial is evaluated at one
rung level per round and the library says, after each result, whether it goes on to the next level or stops.

Trials that may go on wait in a first-in first-out queue; ``ask`` continues the oldest one before starting a new
trial, so with several workers (``budget.workers``) every running trial is a different configuration, as in the
libraries' own loops (one trial per worker, each reporting until it is stopped).
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Any, ClassVar

from hpoflow.algorithms.base import BuildContext
from hpoflow.algorithms.peers.base import PeerAlgorithm
from hpoflow.core.fidelity import Fidelity
from hpoflow.core.records import Evaluation, Failure, Suggestion


def task_fidelity(name: str, ctx: BuildContext, min_fidelity: float | None) -> Fidelity:
    """The task's fidelity; ``min_fidelity`` (if given) inside it.

    Raises:
        ValueError: the task declares no fidelity, or ``min_fidelity`` is outside it (one line).
    """
    fidelity = ctx.task.fidelity
    if fidelity is None:
        raise ValueError(f"algo={name} needs a task with a fidelity (epochs, boosting rounds, ...); task "
                         f"'{ctx.task.name}' declares none: pick e.g. task=branin_mf, or a full-fidelity algorithm")
    if min_fidelity is not None and not fidelity.min <= min_fidelity < fidelity.max:
        raise ValueError(f"algo.min_fidelity={min_fidelity} is outside the task's fidelity {fidelity.name} in "
                         f"[{fidelity.min}, {fidelity.max})")
    return fidelity


class MultiFidelityPeer(PeerAlgorithm):
    """A peer whose suggestions carry ``fidelity`` (a level of the task's fidelity) and ``config_id``."""

    def __init__(self, ctx: BuildContext, name: str, min_fidelity: float | None) -> None:
        super().__init__(ctx)
        self.name = name
        self.fidelity = task_fidelity(name, ctx, min_fidelity)
        self.min_level = self.fidelity.level(self.fidelity.min if min_fidelity is None else min_fidelity)

    def mf_suggestion(self, config: dict[str, Any], level: float, config_id: int,
                      info: dict[str, float] | None = None) -> Suggestion:
        """The library's configuration to evaluate at ``level`` (a library's float budget is rounded for an
        integer fidelity and clipped to its range) under ``config_id``."""
        s = self.suggestion(config)
        s.fidelity, s.config_id, s.info = self.fidelity.level(level), int(config_id), dict(info or {})
        return s


@dataclass
class Climb:
    """One library trial on its way up the rung levels: ``handle`` is the library's trial object."""

    handle: Any
    config: dict[str, Any]
    config_id: int
    rung: int = 0  # index into the levels of the rung it is evaluated at next


class ClimbingPeer(MultiFidelityPeer):
    """A trial-based library: a trial climbs ``self.levels`` one evaluation per round until the library stops it.

    Subclasses start a library trial (``start``), report a result (``report``: True = go on to the next level;
    the top level always ends the trial) and a failure (``fail``).
    """

    pending_rule: ClassVar[str | None] = "running_trials"  # several trials at once, as in the library's own loop
    levels: list[float]

    def __init__(self, ctx: BuildContext, name: str, min_fidelity: float | None) -> None:
        super().__init__(ctx, name, min_fidelity)
        self.ready: deque[Climb] = deque()  # told "go on", waiting for their next level (oldest first)
        self.running: dict[int, Climb] = {}  # id(suggestion) -> the trial it evaluates, in ask order
        self.started = 0

    def start(self, number: int) -> Climb:
        raise NotImplementedError

    def report(self, climb: Climb, level: float, value: float, top: bool) -> bool:
        raise NotImplementedError

    def fail(self, climb: Climb) -> None:
        raise NotImplementedError

    def ask(self, round: int) -> Suggestion:
        if self.ready:
            climb = self.ready.popleft()
        else:
            climb = self.start(self.started)
            self.started += 1
        s = self.mf_suggestion(climb.config, self.levels[climb.rung], climb.config_id, {"rung": float(climb.rung)})
        self.running[id(s)] = climb
        return s

    def tell(self, suggestion: Suggestion, outcome: Evaluation | Failure) -> None:
        # a replayed round (resume) may tell a rebuilt Suggestion: it completes the oldest running trial
        climb = self.running.pop(id(suggestion), None)
        if climb is None:
            if not self.running:
                raise ValueError("tell() takes a suggestion this algorithm asked and was not told yet")
            climb = self.running.pop(next(iter(self.running)))
        if isinstance(outcome, Failure):
            self.fail(climb)
            return
        top = climb.rung == len(self.levels) - 1
        if self.report(climb, self.levels[climb.rung], float(outcome.value), top) and not top:
            climb.rung += 1
            self.ready.append(climb)
