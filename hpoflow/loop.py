"""The common loop: budgets, failure policy, regret book-keeping and tracking for every algorithm."""
from __future__ import annotations

import math
import time
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable

import torch

from hpoflow.algorithms.base import Algorithm, AskTellAlgorithm
from hpoflow.checkpoint import (Checkpointer, LoopState, global_rng_state, load_rng_states, rng_states,
                                set_global_rng_state)
from hpoflow.records import Evaluation, Failure, OnError, Record, RegretBook, RunStatus, Suggestion
from hpoflow.tasks.base import Task
from hpoflow.tracking.base import NullTracker, Tracker


class ObjectiveError(RuntimeError):
    """The objective raised or returned a non-finite value and the policy is ``on_error=fail``."""


@dataclass(frozen=True)
class Budget:
    """Stop after ``rounds`` rounds, or once the cumulative cost reaches ``cost`` (if set)."""

    rounds: int = 30
    cost: float | None = None

    def __post_init__(self) -> None:
        if self.rounds < 1:
            raise ValueError(f"budget.rounds={self.rounds} must be a positive integer")
        if self.cost is not None and self.cost <= 0:
            raise ValueError(f"budget.cost={self.cost} must be > 0 (or null for no cost budget)")


@dataclass
class RunResult:
    """What a finished run returns: the summary, the records and the per-round metrics."""

    status: RunStatus
    summary: dict[str, Any]
    records: list[Record] = field(default_factory=list)
    metrics: list[dict[str, float]] = field(default_factory=list)


def _evaluate(task: Task, config: dict[str, Any], round: int, observe: bool) -> Evaluation | Failure:
    try:
        ev = task.evaluate(config, round=round, observe=observe)
    except (KeyboardInterrupt, SystemExit, MemoryError):
        raise
    except Exception as exc:  # noqa: BLE001 - any objective error becomes a recorded Failure
        cost = getattr(exc, "cost", 0.0)
        return Failure(f"{type(exc).__name__}: {exc}", cost=float(cost) if isinstance(cost, (int, float)) else 0.0)
    if observe and not math.isfinite(ev.value):
        return Failure(f"objective returned a non-finite value ({ev.value}) for {config}", cost=ev.cost)
    return ev


def _ask_tell_round(algo: AskTellAlgorithm, task: Task, t: int) -> tuple[Record, Any, Evaluation | Failure]:
    start = time.perf_counter()
    s = algo.ask(t)
    decision = time.perf_counter() - start
    outcome = _evaluate(task, s.config, t, s.observe)
    start = time.perf_counter()
    algo.tell(s, outcome)
    decision += time.perf_counter() - start
    metrics = {**s.info, "decision_time": decision}
    if isinstance(outcome, Failure):
        return (Record(round=t, config=s.config, value=None, queried=s.observe, cost=outcome.cost,
                       metrics=metrics, failed=True, error=outcome.error), s.x, outcome)
    metrics.update(outcome.metrics)
    return (Record(round=t, config=s.config, value=outcome.value if s.observe else None, queried=s.observe,
                   cost=outcome.cost, true_value=outcome.true_value, optimum=outcome.optimum, metrics=metrics),
            s.x, outcome)


def _step_round(algo: Algorithm, t: int) -> Record:
    start = time.perf_counter()
    try:
        record = algo.step(t)
    except (KeyboardInterrupt, SystemExit, MemoryError, ObjectiveError):
        raise
    except Exception as exc:  # noqa: BLE001 - same policy as for ask/tell algorithms
        return Record(round=t, config={}, value=None, failed=True, error=f"{type(exc).__name__}: {exc}")
    record.metrics.setdefault("decision_time", time.perf_counter() - start)
    if record.queried and record.value is not None and not math.isfinite(record.value):
        record.failed, record.error = True, f"objective returned a non-finite value ({record.value})"
    return record


def run(task: Task, algorithm: Algorithm, tracker: Tracker | None = None, budget: Budget = Budget(),
        on_error: OnError = OnError.FAIL, on_round: Callable[[Record, dict[str, float]], None] | None = None,
        start_round: int = 1, book: RegretBook | None = None, checkpoint: Checkpointer | None = None,
        resume: LoopState | None = None) -> RunResult:
    """Run ``algorithm`` on ``task`` until the budget is spent; every round is recorded and tracked.

    The tracker is finished in every case: FINISHED, FAILED (exception, with the error as a tag) or
    KILLED (Ctrl-C); everything logged before the failure is flushed first.

    With ``checkpoint``, the loop state is saved after every completed round (see ``hpoflow.checkpoint``).
    With ``resume`` (a loaded checkpoint), the algorithm, task RNGs, regret book and tracker are restored
    first (:func:`restore`) and the loop continues with the next round; the algorithm and task must be
    freshly built from the same config and seed.

    Raises:
        ObjectiveError: an evaluation failed and ``on_error`` is ``fail``.
    """
    tracker = tracker or NullTracker()
    book = book or RegretBook(task.direction, task.regret_reference)
    state = LoopState(plain=checkpoint is not None)
    result = RunResult(RunStatus.FINISHED, {}, state.records, state.metrics)
    elapsed = 0.0
    try:
        if resume is not None:
            restore(resume, task, algorithm, tracker, book)
            state, start_round, elapsed = resume, resume.round + 1, resume.wall_time
            result.records, result.metrics = state.records, state.metrics
        start = time.perf_counter() - elapsed
        for t in range(start_round, budget.rounds + 1):
            if budget.cost is not None and book.query_cost >= budget.cost:
                break
            x = outcome = None
            if isinstance(algorithm, AskTellAlgorithm):
                record, x, outcome = _ask_tell_round(algorithm, task, t)
            else:
                record = _step_round(algorithm, t)
            metrics = book.add(record)
            metrics["wall_time"] = time.perf_counter() - start
            tracker.log(record, metrics)
            state.add(record, metrics, x, outcome)
            if checkpoint is not None and checkpoint.due(t):
                _save(checkpoint, state, book, algorithm, task, metrics["wall_time"])
            if on_round is not None:
                on_round(record, metrics)
            if record.failed and on_error is OnError.FAIL:
                raise ObjectiveError(f"round {t}: {record.error}")
    except KeyboardInterrupt as exc:  # Ctrl-C, or SIGTERM through hpoflow.signals (its str names the signal)
        tracker.finish(RunStatus.KILLED, book.summary(), error=str(exc) or "interrupted (KeyboardInterrupt)")
        raise
    except BaseException as exc:
        tracker.finish(RunStatus.FAILED, book.summary(), error=f"{type(exc).__name__}: {exc}")
        raise
    result.summary = book.summary()
    tracker.finish(RunStatus.FINISHED, result.summary)
    if checkpoint is not None:
        _save(checkpoint, state, book, algorithm, task, time.perf_counter() - start, status="FINISHED")
    return result


# -- checkpoint and resume ------------------------------------------------------------------------------
_BOOK_STATE = ("best_value", "best_config", "cumulative_regret", "simple_regret", "query_cost", "n_failed")


def _overrides(obj: Any, method: str, base: type) -> bool:
    return getattr(type(obj), method, None) is not getattr(base, method)


def _save(checkpoint: Checkpointer, state: LoopState, book: RegretBook, algorithm: Algorithm, task: Task,
          wall_time: float, status: str = "RUNNING") -> None:
    state.book = {k: getattr(book, k) for k in _BOOK_STATE}
    state.wall_time = wall_time
    state.algorithm = algorithm.state_dict() if _overrides(algorithm, "state_dict", Algorithm) else None
    state.task_rng = task.state_dict() if callable(getattr(task, "state_dict", None)) else rng_states(task)
    state.global_rng = global_rng_state()
    checkpoint.save(state, status)


def _same_config(a: dict[str, Any], b: dict[str, Any]) -> bool:
    if a.keys() != b.keys():
        return False
    for k, v in a.items():
        w = b[k]
        if isinstance(v, float) or isinstance(w, float):
            if not (isinstance(v, (int, float)) and isinstance(w, (int, float))
                    and math.isclose(v, w, rel_tol=1e-9, abs_tol=1e-12)):
                return False
        elif v != w and not (isinstance(v, (list, tuple)) and list(v) == list(w)):
            return False
    return True


class ResumeWarning(UserWarning):
    """Replaying the history did not reproduce the recorded suggestions: the algorithm is not deterministic."""


def restore(state: LoopState, task: Task, algorithm: Algorithm, tracker: Tracker, book: RegretBook) -> None:
    """Bring a freshly built algorithm/task/book/tracker to where ``state`` left off.

    Algorithm: ``load_state_dict`` if the checkpoint holds its state; otherwise replay: ask/tell algorithms
    are asked again and told the recorded outcomes (no objective call); ``step`` algorithms re-run their
    steps (which re-evaluates the objective; deterministic tasks give the recorded values again).
    Then the task's and the global RNG states are restored, and the tracker re-logs the recorded rounds
    (a tracker skips rounds its store already holds, so each step is logged exactly once).
    """
    if state.algorithm is not None:
        algorithm.load_state_dict(state.algorithm)
    elif isinstance(algorithm, AskTellAlgorithm):
        diverged = None
        for record, x, outcome in zip(state.records, state.xs, state.outcomes):
            s = algorithm.ask(record.round)
            if not _same_config(s.config, record.config) or s.observe != record.queried:
                diverged = diverged or record.round
                point = (torch.tensor(x, dtype=s.x.dtype, device=s.x.device) if x is not None
                         else task.space.encode(record.config, s.x.dtype).to(s.x.device))
                s = Suggestion(record.config, point, record.queried, s.info)
            algorithm.tell(s, outcome)  # type: ignore[arg-type]
        if diverged is not None:
            warnings.warn(f"resume: replaying '{getattr(algorithm, 'name', type(algorithm).__name__)}' did not "
                          f"reproduce round {diverged}'s suggestion; it was told the recorded history, but the "
                          "rest of the run may differ from an uninterrupted one (implement state_dict/"
                          "load_state_dict for an exact resume)", ResumeWarning, stacklevel=2)
    else:
        diverged = None
        for record in state.records:
            again = _step_round(algorithm, record.round)
            if diverged is None and not _same_config(again.config, record.config):
                diverged = record.round
        if diverged is not None:
            warnings.warn(f"resume: re-running the steps of '{getattr(algorithm, 'name', type(algorithm).__name__)}'"
                          f" gave a different configuration at round {diverged}; implement state_dict/"
                          "load_state_dict for an exact resume", ResumeWarning, stacklevel=2)
    if callable(getattr(task, "load_state_dict", None)):
        task.load_state_dict(state.task_rng)
    else:
        load_rng_states(task, state.task_rng)
    if state.global_rng:
        set_global_rng_state(state.global_rng)
    for key, value in state.book.items():
        setattr(book, key, value)
    for record, metrics in zip(state.records, state.metrics):
        tracker.log(record, metrics)
