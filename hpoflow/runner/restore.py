"""Checkpoint and restore of a running loop, in one place: what is saved after a round, and how a freshly built
algorithm, task, regret book and tracker are brought back to it (the file format is :mod:`hpoflow.core.checkpoint`)."""
from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from hpoflow.algorithms.base import Algorithm, AskTellAlgorithm
from hpoflow.core.checkpoint import (
    Checkpointer,
    LoopState,
    global_rng_state,
    load_rng_states,
    rng_states,
    set_global_rng_state,
)
from hpoflow.core.lazy import LazyModule
from hpoflow.core.records import Record, RegretBook, Suggestion
from hpoflow.core.tracker import Tracker
from hpoflow.tasks.base import Task

if TYPE_CHECKING:
    import torch
else:
    torch = LazyModule("torch")

BOOK_STATE = ("best_value", "best_config", "cumulative_regret", "simple_regret", "query_cost", "n_failed")


class ResumeWarning(UserWarning):
    """Replaying the history did not reproduce the recorded suggestions: the algorithm is not deterministic."""


def _overrides(obj: Any, method: str, base: type) -> bool:
    delegate = getattr(obj, "delegate", None)  # a wrapper (algo=auto) keeps a state where what it wraps does
    if isinstance(delegate, base):
        return _overrides(delegate, method, base)
    return getattr(type(obj), method, None) is not getattr(base, method)


def save(checkpoint: Checkpointer, state: LoopState, book: RegretBook, algorithm: Algorithm, task: Task,
         wall_time: float, status: str = "RUNNING", now: bool = False,
         pending: list[dict[str, Any]] | None = None) -> None:
    """Write ``state`` with the book, the algorithm's ``state_dict`` (if it has one), every RNG state and the
    trials ``pending`` (asked and not told: :func:`hpoflow.core.checkpoint.pending_trial`)."""
    state.pending = list(pending or [])
    state.book = {k: getattr(book, k) for k in BOOK_STATE}
    state.wall_time = wall_time
    state.algorithm = algorithm.state_dict() if _overrides(algorithm, "state_dict", Algorithm) else None
    task_state = getattr(task, "state_dict", None)  # optional on a Task: its RNGs are saved otherwise
    state.task_rng = task_state() if callable(task_state) else rng_states(task)
    state.global_rng = global_rng_state()
    checkpoint.save(state, status, now=now)


def same_config(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Equal configurations, floats compared to 1e-9 (a JSON round trip may change the last digit)."""
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


def restore(state: LoopState, task: Task, algorithm: Algorithm, tracker: Tracker, book: RegretBook,
            step: Callable[[Algorithm, int], Record], replay: Callable[[], None] | None = None) -> None:
    """Bring a freshly built algorithm/task/book/tracker to where ``state`` left off.

    Algorithm: ``load_state_dict`` if the checkpoint holds its state; otherwise replay: ask/tell algorithms
    are asked again and told the recorded outcomes (no objective call; a run whose trials overlapped --
    ``workers > 1`` or a Study with pending trials -- cannot be replayed exactly, and is told its recorded
    points and outcomes in completion order, without a warning); ``step`` algorithms re-run their
    steps through ``step(algorithm, round)`` (which re-evaluates the objective; deterministic tasks give the
    recorded values again). ``replay`` (a simulated run: :func:`hpoflow.runner.simulated.replay_simulation`)
    brings the algorithm back instead of both. Then the task's and the global RNG states are restored, and the
    tracker re-logs the recorded rounds (a tracker skips rounds its store already holds: each step is logged once).
    """
    name = getattr(algorithm, "name", type(algorithm).__name__)
    if replay is not None:
        replay()
    elif state.algorithm is not None:
        algorithm.load_state_dict(state.algorithm)
    elif isinstance(algorithm, AskTellAlgorithm):
        diverged = None
        for record, x, outcome in zip(state.records, state.xs, state.outcomes):
            s = algorithm.ask(record.round)
            if not same_config(s.config, record.config) or s.observe != record.queried:
                diverged = diverged or record.round
                point = (torch.tensor(x, dtype=s.x.dtype, device=s.x.device) if x is not None
                         else task.space.encode(record.config, s.x.dtype).to(s.x.device))
                s = Suggestion(record.config, point, record.queried, s.info)
            algorithm.tell(s, outcome)  # type: ignore[arg-type]
        concurrent = any("trial" in m for m in state.metrics)  # trials overlapped: asked with others pending
        if diverged is not None and not concurrent:
            warnings.warn(f"resume: replaying '{name}' did not reproduce round {diverged}'s suggestion; it was told "
                          "the recorded history, but the rest of the run may differ from an uninterrupted one "
                          "(implement state_dict/load_state_dict for an exact resume)", ResumeWarning, stacklevel=3)
    else:
        diverged = None
        for record in state.records:
            again = step(algorithm, record.round)
            if diverged is None and not same_config(again.config, record.config):
                diverged = record.round
        if diverged is not None:
            warnings.warn(f"resume: re-running the steps of '{name}' gave a different configuration at round "
                          f"{diverged}; implement state_dict/load_state_dict for an exact resume", ResumeWarning,
                          stacklevel=3)
    load_task_state = getattr(task, "load_state_dict", None)
    if callable(load_task_state):
        load_task_state(state.task_rng)
    else:
        load_rng_states(task, state.task_rng)
    if state.global_rng:
        set_global_rng_state(state.global_rng)
    for key, value in state.book.items():
        setattr(book, key, value)
    book.replay(state.records)
    for record, metrics in zip(state.records, state.metrics):
        tracker.log(record, metrics)
