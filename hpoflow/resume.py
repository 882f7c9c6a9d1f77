"""Checkpoint and restore of a running loop, in one place: what is saved after a round, and how a freshly built
algorithm, task, regret book and tracker are brought back to it (the file format is :mod:`hpoflow.checkpoint`)."""
from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch

from hpoflow.algorithms.base import Algorithm, AskTellAlgorithm
from hpoflow.checkpoint import (
    Checkpointer,
    LoopState,
    global_rng_state,
    load_rng_states,
    rng_states,
    set_global_rng_state,
)
from hpoflow.records import Record, RegretBook, Suggestion
from hpoflow.tasks.base import Task
from hpoflow.tracking.base import Tracker

if TYPE_CHECKING:
    from hpoflow.app import Settings

BOOK_STATE = ("best_value", "best_config", "cumulative_regret", "simple_regret", "query_cost", "n_failed")


class ResumeWarning(UserWarning):
    """Replaying the history did not reproduce the recorded suggestions: the algorithm is not deterministic."""


def _overrides(obj: Any, method: str, base: type) -> bool:
    return getattr(type(obj), method, None) is not getattr(base, method)


def save(checkpoint: Checkpointer, state: LoopState, book: RegretBook, algorithm: Algorithm, task: Task,
         wall_time: float, status: str = "RUNNING") -> None:
    """Write ``state`` with the book, the algorithm's ``state_dict`` (if it has one) and every RNG state."""
    state.book = {k: getattr(book, k) for k in BOOK_STATE}
    state.wall_time = wall_time
    state.algorithm = algorithm.state_dict() if _overrides(algorithm, "state_dict", Algorithm) else None
    state.task_rng = task.state_dict() if callable(getattr(task, "state_dict", None)) else rng_states(task)
    state.global_rng = global_rng_state()
    checkpoint.save(state, status)


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
            step: Callable[[Algorithm, int], Record]) -> None:
    """Bring a freshly built algorithm/task/book/tracker to where ``state`` left off.

    Algorithm: ``load_state_dict`` if the checkpoint holds its state; otherwise replay: ask/tell algorithms
    are asked again and told the recorded outcomes (no objective call); ``step`` algorithms re-run their
    steps through ``step(algorithm, round)`` (which re-evaluates the objective; deterministic tasks give the
    recorded values again). Then the task's and the global RNG states are restored, and the tracker re-logs
    the recorded rounds (a tracker skips rounds its store already holds, so each step is logged exactly once).
    """
    name = getattr(algorithm, "name", type(algorithm).__name__)
    if state.algorithm is not None:
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
        if diverged is not None:
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


RESUMABLE_OVERRIDES = ("resume", "tracking.uri")  # what a resume may set; everything else is recorded


def resume_settings(resume: str, overrides: list[str], uri: str | None,
                    composed: dict[str, Any] | None = None) -> tuple[Settings, Any, str]:
    """Settings, loop state and checkpoint path for ``resume=<run folder | checkpoint | MLflow run id>``.

    The run continues with the config recorded in its checkpoint; an override that differs from the recorded
    value is refused (``composed``: the config the command line composed; overrides equal to the recorded
    ones are accepted). ``tracking.uri`` and secrets may always be given (they are never recorded). The
    checkpoint is checked against its run in the store (``hpoflow.resume_guard``). Components given by
    ``_target_`` are only rebuilt from a checkpoint named by path, never from one found through an MLflow tag.
    """
    from hpoflow.app import ConfigError, validate
    from hpoflow.checkpoint import CheckpointError, check_folder, load, locate
    from hpoflow.resume_guard import differing_override, redacted_keys, secret_overrides, verify_store
    from hpoflow.tracking.store import default_uri

    try:
        path = locate(resume, uri or default_uri())
        state = load(path)
        check_folder(state, path)
    except CheckpointError as exc:
        raise ConfigError(str(exc)) from None
    raw = dict(state.meta.get("config") or {})
    extra = (differing_override(overrides, composed, raw) if composed is not None else
             next((o for o in overrides if o.lstrip("+~").split("=", 1)[0] not in RESUMABLE_OVERRIDES), None))
    if extra:
        raise ConfigError(f"resume={resume!r} continues a run with its recorded config; the override "
                          f"'{extra}' differs from it (drop it, or start a new run to change settings)")
    raw = secret_overrides(overrides, composed or {}, raw)
    by_tag = not Path(resume).expanduser().exists()
    if by_tag and any(isinstance(raw.get(g), dict) and "_target_" in raw[g] for g in ("algo", "task", "surrogate")):
        raise ConfigError(f"resume={resume!r}: this run uses a _target_ component; resume it by its run folder "
                          "(configs found through MLflow are never instantiated from _target_)")
    tracking = dict(raw.get("tracking") or {})
    tracking["uri"] = uri or tracking.get("uri") or state.meta.get("uri")  # the store the run lives in
    raw["tracking"] = tracking
    raw["resume"] = None
    missing = redacted_keys(raw)
    if missing:
        raise ConfigError(f"resume={resume!r}: {missing[0]} was recorded without its secret (secrets are never "
                          f"saved); give it again: {missing[0]}=...")
    settings = validate(raw)
    if settings.tracking.enabled:
        try:
            stored = verify_store(state, str(settings.tracking.uri or default_uri()), settings.checkpoint_every)
        except CheckpointError as exc:
            raise ConfigError(f"resume={resume!r}: {exc}") from None
        if stored == "FINISHED" and state.meta.get("status") != "FINISHED":
            state.meta["status"] = "FINISHED"  # every round of the checkpoint is in the store, which says FINISHED
            state.meta["finished_by"] = "store"
    return settings, state, str(path)


def plan_job(settings: Settings, overrides: list[str], composed: dict[str, Any], multirun: bool,
             ) -> tuple[Settings, tuple[LoopState, str] | None] | str:
    """What a CLI job does: start a run, continue one, or nothing (a study re-run that already has it).

    Returns ``(settings, None)`` for a new run, ``(settings, (state, checkpoint path))`` to continue one
    (``resume=``, or a study job whose earlier writer is gone), or a one-line message when there is nothing
    to do (the study's run is FINISHED, or kept FAILED).

    Raises:
        ConfigError: a refused resume, or two configs of one study with the same hash.
    """
    from hpoflow.app import ConfigError

    if settings.resume is not None:
        settings, state, path = resume_settings(settings.resume, overrides, settings.tracking.uri, composed=composed)
        return settings, (state, path)
    if not (multirun and settings.sweep.parent_run_id and settings.tracking.enabled):
        return settings, None
    from hpoflow.sweeps import Action, ConfigHashCollision, prepare_job

    try:
        plan = prepare_job(settings)
    except ConfigHashCollision as exc:
        raise ConfigError(str(exc)) from None
    if plan.action is Action.RESUME:
        settings, state, path = resume_settings(str(plan.checkpoint), [], settings.tracking.uri)
        return settings, (state, path)
    if plan.action is not Action.NEW:
        return f"{plan.action.value}: run {plan.run_id}"
    return settings, None
