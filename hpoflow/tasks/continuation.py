"""``evaluate_at`` for a task that trains in units (epochs, boosting rounds, gradient steps) and can continue.

A task mixes in :class:`Continuable` and says how to start a trial (:meth:`Continuable.fresh_state`), how to train
it from one level to a higher one (:meth:`Continuable.advance`, which returns the learning curve of the units it
trained) and what the state is worth (:meth:`Continuable.score`). The mixin keeps the states in a
:class:`~hpoflow.tasks.trial_states.TrialStates` and applies its rule: continue from a lower level (cost = the units
added), replay a round lost with a crash, or train from scratch (cost = the level).
"""
from __future__ import annotations

import os
from abc import abstractmethod
from typing import Any

import numpy as np

from hpoflow.core.records import Evaluation
from hpoflow.tasks.base import Task, unobserved
from hpoflow.tasks.trial_states import Kept, TrialStates

__all__ = ["Continuable", "trial_seed"]


def trial_seed(seed: int, config_id: int | None, round: int) -> int:
    """A 31-bit seed of one trial: from ``(seed, config_id)`` for a multi-fidelity trial (the same whichever round
    continues it), from ``(seed, round)`` for a full evaluation without an id."""
    key = [seed, 0, round] if config_id is None else [seed, 1, int(config_id)]
    return int(np.random.SeedSequence(key).generate_state(1)[0] >> 1)


class Continuable(Task):
    """A task with a fidelity whose evaluations continue the trial kept for a ``config_id``."""

    states: TrialStates

    @abstractmethod
    def fresh_state(self, config: dict[str, Any], seed: int) -> Any:
        """An untrained trial of ``config`` (level 0), its randomness from ``seed``."""

    @abstractmethod
    def advance(self, state: Any, config: dict[str, Any], start: float, stop: float) -> list[list[float]]:
        """Train ``state`` in place from level ``start`` to ``stop``; the curve ``[[level, value], ...]`` of the
        units trained (ends at ``stop``)."""

    @abstractmethod
    def score(self, state: Any, config: dict[str, Any], curve: list[list[float]]) -> tuple[float, dict[str, float]]:
        """The value of a trained ``state`` (the curve's last value, usually) and its metrics."""

    def noisy(self, value: float) -> tuple[float, float | None]:
        """``(observed value, true value or None)``; default: noise-free. Called once per evaluation that trains
        or replays (a replay discards the draw: the task's RNG, restored from the checkpoint, stays in step)."""
        return value, None

    def set_state_folder(self, folder: str | os.PathLike[str], resumed_round: int = 0,
                         told: set[tuple[int, float]] | None = None) -> None:
        """Keep the trial states in ``folder`` too (the runner's hook for a checkpointed run; ``told``: the
        (config id, level) pairs of the rounds the resumed checkpoint recorded; see ``TrialStates.attach``);
        nothing without a fidelity."""
        if self.fidelity is not None:
            self.states.attach(folder, resumed_round, told)

    def commit_states(self, round: int, told: set[tuple[int, float]] | None = None) -> None:
        """The checkpoint file now holds round ``round`` and ``told`` (the runner's hook: older states go)."""
        self.states.commit(round, told)

    def expected_cost(self, fidelity: float | None, reached: float = 0.0,
                      config_id: int | None = None) -> float | None:
        """The units above ``reached`` (a trial continued from there; the full evaluation, ``fidelity`` None, trains
        from scratch), or the level when the trial cannot continue from below it or its state is no longer kept
        (:meth:`~hpoflow.tasks.trial_states.TrialStates.may_continue`)."""
        if self.fidelity is None or fidelity is None:
            return super().expected_cost(fidelity, reached, config_id)
        level = float(self.fidelity.level(fidelity))
        if not 0.0 < reached < level or config_id is None or self.states.may_continue(config_id) is False:
            return level
        return level - reached

    def evaluate_at(self, config: dict[str, Any], *, fidelity: float, config_id: int | None, round: int,
                    observe: bool = True) -> Evaluation:
        if self.fidelity is None:
            return super().evaluate_at(config, fidelity=fidelity, config_id=config_id, round=round, observe=observe)
        level = self.fidelity.check(fidelity)
        if not observe:
            return unobserved()
        start = self.states.resume(config_id, level, round)
        if start.replay is not None:
            self.noisy(start.replay.value)  # the lost round drew its noise: draw again, so the stream stays in step
            return start.replay
        state = start.state if start.state is not None else self.fresh_state(config, trial_seed(
            getattr(self, "seed", 0), config_id, round))
        curve = self.advance(state, config, start.level, level)
        value, metrics = self.score(state, config, curve)
        observed, truth = self.noisy(value)
        ev = Evaluation(value=observed, true_value=truth, cost=float(level - start.level), fidelity=float(level),
                        curve=curve, metrics={**metrics, self.fidelity.name: float(level)})
        # a state at the full level is never continued: keep only its evaluation (what a replay needs)
        self.states.put(config_id, Kept(level, round, state if level < self.fidelity.max else None, ev))
        return ev

    def evaluate_full(self, config: dict[str, Any], *, round: int, observe: bool = True) -> Evaluation:
        """The full fidelity's evaluation, trained from scratch (what ``evaluate`` is with a fidelity)."""
        assert self.fidelity is not None
        return self.evaluate_at(config, fidelity=self.fidelity.max, config_id=None, round=round, observe=observe)
