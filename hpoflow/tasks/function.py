"""A plain Python function (or a training loop the caller owns) as a task of the common loop."""
from __future__ import annotations

import dataclasses
import inspect
import math
import os
from collections.abc import Callable
from typing import Any

from hpoflow.core.fidelity import Fidelity
from hpoflow.core.objectives import Objectives
from hpoflow.core.records import Direction, Evaluation, as_evaluation
from hpoflow.core.space import SearchSpace, describe_space
from hpoflow.tasks.base import Task
from hpoflow.tasks.trial_states import Kept, TrialStates

__all__ = ["FunctionTask", "Objective", "as_evaluation", "takes_state"]

Objective = Callable[[dict[str, Any]], "float | Evaluation"]


def takes_state(fn: Callable[..., Any]) -> bool:
    """``fn`` declares a parameter named ``state`` (``def train(config, epochs, state=None)``; ``**kwargs`` alone
    does not count): it continues its trials."""
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
    p = params.get("state")
    return p is not None and p.kind is not p.POSITIONAL_ONLY


def split_state(out: Any) -> tuple[Any, Any]:
    """A pausable objective's result: ``(value, state)`` (a 2-tuple), or a plain result without a state."""
    if isinstance(out, tuple) and len(out) == 2:
        return out[0], out[1]
    return out, None


def takes_keyword(fn: Callable[..., Any], name: str) -> bool:
    """``fn`` can be called with the keyword ``name`` (a parameter of that name, or ``**kwargs``)."""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):  # a builtin without a signature: let the call decide
        return True
    return any(p.kind is p.VAR_KEYWORD or (p.name == name and p.kind is not p.POSITIONAL_ONLY) for p in params)


class FunctionTask(Task):
    """``fn(config) -> float | Evaluation`` over ``space``; ``fn=None`` when the caller evaluates (``Study``).

    A float is the observed value (cost 1); an :class:`Evaluation` may add a noise-free value, a cost and
    metrics. Anything else, or an exception, is a failed evaluation (the loop's ``on_error`` policy applies).

    With a ``fidelity`` (``Fidelity("epochs", 1, 27)``) the function takes it as a keyword, ``fn(config,
    epochs=9)``, and trains from scratch to that level: a float then costs the level in fidelity units (an
    Evaluation's own ``cost`` is taken as it is). ``evaluate`` is the full fidelity's.

    A pausable function also names a parameter ``state`` (``def train(config, epochs, state=None)``): it gets the
    state it returned for this trial (``config_id``, kept across promotions) at its last, lower level, or None,
    trains from there and returns ``(value, state)``; a float value then costs only the levels it added. The states
    are a `hpoflow.tasks.trial_states.TrialStates` (bounded; beside the checkpoint, one pickle per trial,
    when the run has one); a state pickle cannot write is kept in this process only, and its trial is retrained
    from scratch (charged its whole level) after a resume. A Study's task (``fn`` None) keeps the states its caller
    tells (``Study.tell(trial, value, state=...)``) in the same way.

    With ``objectives`` (:class:`~hpoflow.core.objectives.Objectives`) ``fn`` returns a dict of named values: the
    Evaluation's ``values`` is that dict and its ``value`` the first objective in minimisation form (the direction
    is then MINIMIZE).
    """

    def __init__(self, space: SearchSpace, fn: Objective | None = None, direction: Direction = Direction.MINIMIZE,
                 name: str | None = None, optimum: float | None = None, fidelity: Fidelity | None = None,
                 objectives: Objectives | None = None) -> None:
        self.space, self.fn, self.direction, self.optimum = space, fn, Direction(direction), optimum
        self.objectives = objectives
        if objectives is not None:
            self.direction = Direction.MINIMIZE  # value = the first objective in minimisation form
        fn_name = getattr(fn, "__name__", "") if fn is not None else ""
        self.name = name or (fn_name if fn_name.isidentifier() else "objective")
        self.fidelity = fidelity
        self.pausable = fidelity is not None and (fn is None or takes_state(fn))
        self.states = TrialStates()
        if fn is not None and fidelity is not None and not takes_keyword(fn, fidelity.name):
            shown = fn_name if fn_name.isidentifier() else "fn"
            raise TypeError(f"the objective {shown} takes no keyword '{fidelity.name}' (the fidelity): define it as "
                            f"def {shown}(config, {fidelity.name}): ...")

    def evaluate(self, config: dict[str, Any], *, round: int, observe: bool = True) -> Evaluation:
        if self.fidelity is not None:
            return self.evaluate_at(config, fidelity=self.fidelity.max, config_id=None, round=round, observe=observe)
        if not observe:
            return Evaluation(value=math.nan, cost=0.0)
        if self.fn is None:
            raise RuntimeError(f"task '{self.name}' is evaluated by its caller (Study.tell), not by the loop")
        out = self.fn(dict(config))
        return self.objectives.evaluation(out) if self.objectives is not None else as_evaluation(out)

    def evaluate_at(self, config: dict[str, Any], *, fidelity: float, config_id: int | None, round: int,
                    observe: bool = True) -> Evaluation:
        assert self.fidelity is not None, "evaluate_at needs a task with a fidelity"
        level = self.fidelity.check(fidelity)
        if not observe:
            return Evaluation(value=math.nan, cost=0.0, fidelity=level)
        if self.fn is None:
            raise RuntimeError(f"task '{self.name}' is evaluated by its caller (Study.tell), not by the loop")
        if self.pausable:
            return self._continue(config, level, config_id, round)
        out = self.fn(dict(config), **{self.fidelity.name: level})
        return self._as_level(out, level)

    def _as_level(self, out: Any, level: float, start: float = 0.0) -> Evaluation:
        """The Evaluation of ``fn``'s result at ``level``; a plain value costs the levels above ``start`` (an
        Evaluation's own cost is taken as it is)."""
        if self.objectives is not None:
            ev = self.objectives.evaluation(out)
            if isinstance(out, Evaluation):
                return ev if ev.fidelity is not None else dataclasses.replace(ev, fidelity=level)
            return dataclasses.replace(ev, cost=float(level - start), fidelity=level, curve=[[float(level), ev.value]])
        if isinstance(out, Evaluation):
            return out if out.fidelity is not None else dataclasses.replace(out, fidelity=level)
        ev = as_evaluation(out)
        return dataclasses.replace(ev, cost=float(level - start), fidelity=level, curve=[[float(level), ev.value]])

    def _continue(self, config: dict[str, Any], level: float, config_id: int | None, round: int) -> Evaluation:
        """A pausable function's evaluation: replay a round a crash lost, else continue the kept state."""
        assert self.fidelity is not None and self.fn is not None
        start = self.states.resume(config_id, level, round)
        if start.replay is not None:  # the evaluation of a round a crash lost: nothing trained again
            return start.replay
        out, state = split_state(self.fn(dict(config), **{self.fidelity.name: level, "state": start.state}))
        ev = self._as_level(out, level, start.level if start.state is not None else 0.0)
        self.keep(config_id, level, round, state, ev)
        return ev

    def keep(self, config_id: int | None, level: float, round: int, state: Any, ev: Evaluation | None) -> None:
        """Keep ``state`` as ``config_id``'s trial at ``level`` (reached in loop round ``round``); a state at the
        full level is never continued: only its evaluation is kept (what a replay needs)."""
        assert self.fidelity is not None
        top = level >= self.fidelity.max
        self.states.put(config_id, Kept(level, round, None if top or state is None else state, ev))

    def kept(self, config_id: int | None, level: float) -> tuple[float, Any]:
        """``(level, state)`` of the newest state kept for ``config_id`` below ``level``, or ``(0.0, None)``."""
        got = self.states.get(config_id)
        if isinstance(got, Kept) and got.state is not None and got.level < level:
            return float(got.level), got.state
        return 0.0, None

    # -- the runner's hooks for the trial states (as hpoflow.tasks.continuation.Continuable's) ----------------
    def set_state_folder(self, folder: str | os.PathLike[str], resumed_round: int = 0,
                         told: set[tuple[int, float]] | None = None) -> None:
        """Keep the trial states in ``folder`` too (a checkpointed run); a pausable task's only."""
        if self.pausable:
            self.states.attach(folder, resumed_round, told)

    def commit_states(self, round: int, told: set[tuple[int, float]] | None = None) -> None:
        """The checkpoint file now holds round ``round`` and ``told``: older trial states go."""
        if self.pausable:
            self.states.commit(round, told)

    def expected_cost(self, fidelity: float | None, reached: float = 0.0,
                      config_id: int | None = None) -> float | None:
        """The level; for a pausable task, the levels above ``reached`` while the trial's state is kept."""
        if not self.pausable or self.fidelity is None or fidelity is None:
            return super().expected_cost(fidelity, reached, config_id)
        level = float(self.fidelity.level(fidelity))
        if not 0.0 < reached < level or config_id is None or self.states.may_continue(config_id) is False:
            return level
        return level - reached

    def description(self) -> dict[str, Any]:
        """What the run records as its ``task`` config: name, direction, space (and optimum when known)."""
        out: dict[str, Any] = {"name": self.name, "direction": self.direction.value,
                               "space": describe_space(self.space)}
        if self.optimum is not None:
            out["optimum"] = self.optimum
        if self.fidelity is not None:
            out["fidelity"] = self.fidelity.describe()
        if self.objectives is not None:
            out.update(self.objectives.describe())
        return out
