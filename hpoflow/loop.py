"""The common loop: budgets, failure policy, regret book-keeping and tracking for every algorithm."""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from hpoflow.algorithms.base import Algorithm, AskTellAlgorithm
from hpoflow.records import Evaluation, Failure, OnError, Record, RegretBook, RunStatus
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
        return Failure(f"{type(exc).__name__}: {exc}")
    if observe and not math.isfinite(ev.value):
        return Failure(f"objective returned a non-finite value ({ev.value}) for {config}")
    return ev


def _ask_tell_round(algo: AskTellAlgorithm, task: Task, t: int) -> Record:
    start = time.perf_counter()
    s = algo.ask(t)
    decision = time.perf_counter() - start
    outcome = _evaluate(task, s.config, t, s.observe)
    start = time.perf_counter()
    algo.tell(s, outcome)
    decision += time.perf_counter() - start
    metrics = {**s.info, "decision_time": decision}
    if isinstance(outcome, Failure):
        return Record(round=t, config=s.config, value=None, queried=s.observe, cost=0.0, metrics=metrics,
                      failed=True, error=outcome.error)
    metrics.update(outcome.metrics)
    return Record(round=t, config=s.config, value=outcome.value if s.observe else None, queried=s.observe,
                  cost=outcome.cost, true_value=outcome.true_value, optimum=outcome.optimum, metrics=metrics)


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
        start_round: int = 1, book: RegretBook | None = None) -> RunResult:
    """Run ``algorithm`` on ``task`` until the budget is spent; every round is recorded and tracked.

    The tracker is finished in every case: FINISHED, FAILED (exception, with the error as a tag) or
    KILLED (Ctrl-C); everything logged before the failure is flushed first.

    Raises:
        ObjectiveError: an evaluation failed and ``on_error`` is ``fail``.
    """
    tracker = tracker or NullTracker()
    book = book or RegretBook(task.direction, task.regret_reference)
    result = RunResult(RunStatus.FINISHED, {})
    start = time.perf_counter()
    try:
        for t in range(start_round, budget.rounds + 1):
            if budget.cost is not None and book.query_cost >= budget.cost:
                break
            if isinstance(algorithm, AskTellAlgorithm):
                record = _ask_tell_round(algorithm, task, t)
            else:
                record = _step_round(algorithm, t)
            metrics = book.add(record)
            metrics["wall_time"] = time.perf_counter() - start
            tracker.log(record, metrics)
            result.records.append(record)
            result.metrics.append(metrics)
            if on_round is not None:
                on_round(record, metrics)
            if record.failed and on_error is OnError.FAIL:
                raise ObjectiveError(f"round {t}: {record.error}")
    except KeyboardInterrupt:
        tracker.finish(RunStatus.KILLED, book.summary(), error="interrupted (KeyboardInterrupt)")
        raise
    except BaseException as exc:
        tracker.finish(RunStatus.FAILED, book.summary(), error=f"{type(exc).__name__}: {exc}")
        raise
    result.summary = book.summary()
    tracker.finish(RunStatus.FINISHED, result.summary)
    return result
