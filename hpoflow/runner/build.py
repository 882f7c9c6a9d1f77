"""The build step of every run (CLI job, ``minimize``, ``Study``): validated settings -> a ready :class:`Loop`.

In order: hardware and seeds, the task (or the caller's own), the algorithm and its surrogate factory, the
MLflow run (tags, lease; continued when resuming), the checkpointer. :func:`execute` is the run step that
follows when the loop evaluates its own task; a :class:`hpoflow.Study` advances the loop itself instead.
"""
from __future__ import annotations

import contextlib
import json
import os
import subprocess
from dataclasses import dataclass
from functools import partial
from typing import Any

from hpoflow.config.settings import ConfigError, Settings, build_algorithm, build_task
from hpoflow.core.checkpoint import Checkpointer, LoopState
from hpoflow.runner.loop import Loop, RunResult, drive
from hpoflow.store.params import mask_secrets
from hpoflow.tasks.base import Task

NODE_ENV = "HPOFLOW_RAY_NODE"   # set by hpoflow's Ray launcher in a job's worker: the Ray node id
NODE_TAG = "hpoflow.node"       # the node that started the run (``hpoflow.resumed_node``: the one that resumed it)


@dataclass
class OpenRun:
    """A built run, ready to go: its loop, the task it evaluates, the store it logs to (None: untracked)."""

    loop: Loop
    task: Task
    uri: str | None
    label: str  # "<algo>/<task> s<seed>", for the progress bar

    @property
    def run_id(self) -> str | None:
        return getattr(self.loop.tracker, "run_id", None)


def open_run(s: Settings, *, task: Task | None = None, config_text: str = "", sweep_id: str | None = None,
             checkpoint_path: str | None = None, resume: LoopState | None = None) -> OpenRun:
    """Build task, algorithm, tracker (its MLflow run started) and checkpointer from ``s``.

    Args:
        task: the caller's own task (``minimize``, ``Study``); default: built from ``s.task``.
        config_text: the composed config as YAML (the ``config.yaml`` artifact when ``s.raw`` is empty).
        sweep_id: tags the run as one job of a sweep.
        checkpoint_path: where the loop state is saved after every ``s.checkpoint_every`` rounds.
        resume: a loaded checkpoint: its MLflow run is continued and the loop restored to it.

    Raises:
        ConfigError: one line naming the bad setting (unknown device, unreadable task file, a store that
            cannot be opened, a run another live process writes); nothing was written to MLflow then.
    """
    if s.tracking.enabled and s.tracking.compact:
        checkpoint_path = None  # its rounds reach the store only at the end: nothing a checkpoint could continue
    if s.tracking.enabled:
        open_store(s.tracking.uri)  # before any work: a task or a model can take seconds to build
    task, algorithm, resolved = build_components(s, task)
    check_workers(s.budget.workers, algorithm)
    tracker: Any = None
    uri = None
    if s.tracking.enabled:
        from hpoflow.store.backend import default_uri

        uri = s.tracking.uri or default_uri()
        hardware = resolved.description_if_used()  # None: no torch yet; tagged at the end (never imported for it)
        tags = {**_tags(s, task, sweep_id, hardware, checkpoint_path), **algorithm_tags(algorithm)}
        tracker = _start_tracker(s, task, uri, tags, config_text, resume)
        tracker.final_tags = lambda: {"hardware": resolved.final_description()}
        if s.tracking.artifacts and s.tracking.plots and task.space.dim <= 2:
            from hpoflow.surrogates.plot import surrogate_artifact_writer

            tracker.add_artifact_writer(surrogate_artifact_writer(algorithm, task))
    checkpointer = None
    if checkpoint_path:
        from hpoflow.store.params import mask_text, redact_tree

        meta = {"config": redact_tree(s.raw), "config_text": mask_text(config_text),
                "run_id": getattr(tracker, "run_id", None), "uri": mask_secrets(uri) if uri else uri,
                "sweep_id": sweep_id}
        from hpoflow.core.checkpoint import DEFER_S

        # deferred file writes (cheap rounds): in sequential runs whose store is never ahead of the file (sync()
        # before each flush)
        deferrable = s.budget.workers <= 1 and (tracker is None or hasattr(tracker, "before_flush"))
        checkpointer = Checkpointer(checkpoint_path, meta, every=max(1, s.checkpoint_every),
                                    defer_s=DEFER_S if deferrable else None)
        if tracker is not None and deferrable:
            tracker.before_flush = checkpointer.sync
        from hpoflow.store.checkpoint_artifacts import THROTTLE_S, ArtifactMirror, in_store

        if tracker is not None and in_store(uri):  # a server or a database: the checkpoint also lives in the store
            loaded = resume.meta.get("artifact_slot") if resume is not None else None
            mirror = ArtifactMirror(tracker.artifact_store, str(tracker.run_id),
                                    first_slot=0 if loaded is None else int(loaded) + 1, throttle_s=THROTTLE_S)
            checkpointer.mirror = mirror
            if not deferrable:  # deferred: sync() brings the store's copy up to date before each flush instead
                tracker.after_flush = partial(mirror.after_flush, checkpointer.path)
    if checkpoint_path and callable(getattr(task, "set_state_folder", None)):  # trials a multi-fidelity task continues
        from hpoflow.tasks.trial_states import state_folder

        told = told_levels(resume.records) if resume is not None else None
        task.set_state_folder(state_folder(checkpoint_path), resume.round if resume is not None else 0,  # type: ignore[attr-defined]
                              told)
    budget = s.budget  # already checked (hpoflow/core/budget.py)
    replay = None
    if resume is not None and budget.executor == "simulated":  # resumed where the simulation stood
        from hpoflow.runner.simulated import replay_simulation

        replay = replay_simulation
    loop = Loop(task, algorithm, tracker, budget, on_error=s.on_error, checkpoint=checkpointer, resume=resume,
                replay=replay)
    if checkpointer is not None and callable(getattr(task, "commit_states", None)):
        state = loop.state  # the trial states the checkpoint file now knows: older ones go
        checkpointer.on_write = lambda round: task.commit_states(round, told_levels(state.records))  # type: ignore[attr-defined]
    label = f"{s.raw['algo'].get('name') or 'algo'}/{s.raw['task'].get('name') or task.name} s{s.seed}"
    return OpenRun(loop, task, uri, label)


def told_levels(records: list[Any]) -> set[tuple[int, float]]:
    """The (config id, level) pairs of the recorded multi-fidelity rounds that did not fail: the trial states a
    checkpoint holding ``records`` knows."""
    return {(int(r.config_id), float(r.fidelity)) for r in records
            if r.config_id is not None and r.fidelity is not None and not r.failed}


def check_workers(workers: int, algorithm: Any) -> None:
    """``budget.workers > 1`` needs an ask/tell algorithm with a rule for pending points.

    Raises:
        ConfigError: one line naming the setting and the algorithm (before any run is started).
    """
    from hpoflow.algorithms.base import AskTellAlgorithm

    if workers <= 1:
        return
    name = getattr(algorithm, "name", type(algorithm).__name__)
    if not isinstance(algorithm, AskTellAlgorithm):
        raise ConfigError(f"budget.workers={workers}: algo={name} is a gradient method that runs its own steps one "
                          "at a time; use budget.workers=1")
    if algorithm.pending_rule is None:
        raise ConfigError(f"budget.workers={workers}: algo={name} does not support pending trials "
                          f"({algorithm.pending_refusal}); use budget.workers=1, or e.g. algo=gp_ei, turbo, random")


def build_components(s: Settings, task: Task | None = None) -> tuple[Task, Any, Any]:
    """Set up the hardware, seed Python/NumPy/torch, build the task (unless given) and the algorithm.

    Returns:
        ``(task, algorithm, resolved hardware)``.

    Raises:
        ConfigError: an unusable device, an unreadable task file, settings the algorithm refuses.
    """
    from hpoflow.algorithms.base import BuildContext
    from hpoflow.core import hardware as hw

    try:
        resolved = hw.setup(s.hardware)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    hw.seed_everything(s.algo_seed)
    task = task if task is not None else _task(s)
    surrogate = None
    if s.surrogate_entry is not None:  # loaded on first use: an algorithm without a model never imports gpytorch
        surrogate = partial(_surrogate_on, s.surrogate_entry, s.surrogate, resolved)
    ctx = BuildContext(task=task, rounds=s.budget.rounds, seed=s.algo_seed, surrogate=surrogate, hardware=resolved,
                       workers=s.budget.workers, cost=s.budget.cost)
    try:
        algorithm = build_algorithm(s, ctx)
    except (ValueError, TypeError) as exc:
        raise ConfigError(f"algo: {exc}") from None
    return task, algorithm, resolved


def execute(run: OpenRun, progress: bool = True) -> RunResult:
    """The run step: evaluate the task every round until the budget is spent (a progress bar on a terminal).

    Raises:
        ObjectiveError: an evaluation failed under ``on_error=fail`` (the run is FAILED, every round logged).
    """
    from hpoflow.runner.progress import RunProgress

    budget = run.loop.budget
    with RunProgress(budget.round_limit, run.label, enabled=progress, cost=budget.cost) as bar:
        run.loop.on_round = bar
        if run.loop.budget.executor == "simulated":
            from hpoflow.runner.simulated import drive_simulated

            return drive_simulated(run.loop, run.loop.budget.workers)
        if run.loop.budget.workers > 1:
            from hpoflow.runner.workers import drive_parallel

            return drive_parallel(run.loop, run.loop.budget.workers, run.loop.budget.executor)
        return drive(run.loop)


def _task(s: Settings) -> Task:
    from hpoflow.config.validation import check_task

    try:
        task = build_task(s)
    except ConfigError:
        raise
    except (ValueError, TypeError) as exc:
        raise ConfigError(str(exc) if str(exc).startswith("task.") else f"task: {exc}") from None
    try:
        check_task(s.task, task)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    return task


def _surrogate_on(entry: Any, config: Any, hardware: Any, dim: int) -> Any:
    """A surrogate on the run's device and dtype (read only now: an algorithm without one never imports torch)."""
    return _build_surrogate(entry, config, dim, dtype=hardware.dtype, device=hardware.device)


def _build_surrogate(entry: Any, config: Any, dim: int, **kwargs: Any) -> Any:
    return entry.load()(config, dim, **kwargs)


_COMMITS: dict[str, str] = {}  # the git commit of each working directory, asked once per process


def _git_commit() -> str:
    """The commit of the current directory's git checkout (once per directory and process: the jobs of a sweep
    in one worker process share it; a fork of git costs ~10 ms in a large process)."""
    cwd = os.getcwd()
    if cwd not in _COMMITS:
        try:
            out = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5,
                                 check=False)
            _COMMITS[cwd] = out.stdout.strip() or "unknown"
        except (OSError, subprocess.SubprocessError):
            _COMMITS[cwd] = "unknown"
    return _COMMITS[cwd]


def tags_for(s: Settings, sweep_id: str | None, hardware_desc: str | None, task_name: str) -> dict[str, str]:
    """The run's identity tags: algo, task, surrogate, hardware (None: written at the end), seed, commit, config
    hash, study links."""
    algo = s.raw["algo"].get("name") or str(s.algo_target).replace(":", ".").rsplit(".", 1)[-1]
    tags = {"algo": str(algo), "task": str(s.raw["task"].get("name") or task_name),
            "surrogate": str(s.raw.get("surrogate", {}).get("name")), "seed": str(s.seed), "git_commit": _git_commit()}
    if s.sweep.twin:  # an A/A twin: the report labels it '<algo> twin<k>' and pairs it with seed
        tags["twin"] = str(s.sweep.twin)
    if hardware_desc is not None:
        tags["hardware"] = hardware_desc
    if sweep_id:
        tags["sweep_id"] = sweep_id
    from hpoflow.store import sweeps

    tags[sweeps.HASH_TAG] = sweeps.config_hash(s.raw)
    if s.sweep.parent_run_id:  # a study's job: nested under the study's parent run
        tags[sweeps.PARENT_TAG] = s.sweep.parent_run_id
        tags[sweeps.INVOCATION_TAG] = str(s.sweep.invocation)
        tags[sweeps.STUDY_TAG] = str(s.sweep.study)
        tags["sweep_id"] = s.sweep.parent_run_id  # stable across re-runs of the study
    return tags


def algorithm_tags(algorithm: Any) -> dict[str, str]:
    """What the algorithm records about its own build-time choices (``algo=auto``: ``auto.choice``, ...)."""
    hook = getattr(algorithm, "run_tags", None)
    return {str(k): str(v) for k, v in hook().items()} if callable(hook) else {}


def _tags(s: Settings, task: Task, sweep_id: str | None, hardware: str | None,
          checkpoint_path: str | None) -> dict[str, str]:
    tags = tags_for(s, sweep_id, hardware, task.name)
    tags["direction"] = task.direction.value
    tags["regret_reference"] = "optimum" if task.optimum is not None else "bound" if task.bound is not None else "none"
    tags.update({f"task.{key}": f"{value:.8g}" for key, value in task.reference_values().items()})
    if task.objectives is not None:  # several objectives: the report reads their names, directions and reference
        tags["objectives"] = json.dumps(task.objectives.describe(), separators=(",", ":"))
    if checkpoint_path:
        tags["checkpoint"] = checkpoint_path
    if s.tracking.compact:
        from hpoflow.store.mlflow_tracker import COMPACT_TAG

        tags[COMPACT_TAG] = "true"
    node = os.environ.get(NODE_ENV)
    if node:
        tags[NODE_TAG] = node
    return tags


def _start_tracker(s: Settings, task: Task, uri: str, tags: dict[str, str], config_text: str,
                   resume: LoopState | None) -> Any:
    """An MlflowTracker whose run is started (or, resuming, continued under its lease); never left RUNNING."""
    from hpoflow.core.records import RunStatus
    from hpoflow.store.lease import LeaseError
    from hpoflow.store.mlflow_tracker import MlflowTracker

    experiment = s.tracking.experiment or tags["task"]
    twin = f"-twin{s.sweep.twin}" if s.sweep.twin else ""
    run_name = s.tracking.run_name or f"{tags['algo']}{twin}-{tags['task']}-s{s.seed}"
    run_id = resume.meta.get("run_id") if resume is not None else None
    take_over = False
    if resume is not None:
        node = tags.get(NODE_TAG)
        tags = {"resumed_at_round": str(resume.round),
                "hpoflow.resumed_from": "store" if resume.meta.get("artifact_slot") is not None else "file"}
        if node:
            tags["hpoflow.resumed_node"] = node
        take_over = bool(resume.meta.get("take_over"))
    try:
        tracker = MlflowTracker(uri, experiment, run_name, flush_every=s.tracking.flush_every,
                                artifacts=s.tracking.artifacts, run_id=run_id, plots=s.tracking.plots,
                                heartbeat_s=s.tracking.heartbeat_s, take_over=take_over,
                                objectives=task.objectives, compact=s.tracking.compact)
    except Exception as exc:  # noqa: BLE001 - unwritable path, unknown scheme: a one-line error
        raise ConfigError(f"tracking.uri={mask_secrets(uri)!r}: cannot open the MLflow store "
                          f"({first_line(exc)})") from None
    try:
        tracker.start(s.raw, tags, mask_secrets(config_text))
    except LeaseError as exc:  # another live writer, or a FINISHED run: nothing was written
        raise ConfigError(f"resume: {exc}") from None
    except Exception as exc:  # noqa: BLE001 - server down, deleted experiment: never leave it RUNNING
        if tracker.run_id is not None and run_id is None:
            with contextlib.suppress(Exception):
                tracker.finish(RunStatus.FAILED, {}, error=f"{type(exc).__name__}: {exc}")
        raise ConfigError(f"tracking.uri={mask_secrets(uri)!r}: cannot start the MLflow run "
                          f"({first_line(exc)})") from None
    return tracker


def open_store(uri: str | None) -> Any:
    """The client of the run's store, opened (and on first use created), or the one-line ConfigError."""
    from hpoflow.store.backend import default_uri, make_client

    uri = uri or default_uri()
    try:
        return make_client(uri)
    except Exception as exc:  # noqa: BLE001 - unwritable path, unknown scheme: a one-line error
        raise ConfigError(f"tracking.uri={mask_secrets(uri)!r}: cannot open the MLflow store "
                          f"({first_line(exc)})") from None


def first_line(exc: BaseException) -> str:
    """``Type: first line`` of an exception, secrets masked; a connection failure in a few words."""
    full = mask_secrets(str(exc))
    if "Max retries exceeded" in full or "NewConnectionError" in full:  # requests' 1,000-character story
        reason = ("connection refused" if "refused" in full.lower() else
                  "timed out" if "timed out" in full.lower() or "timeout" in full.lower() else "unreachable")
        return f"the server cannot be reached: {reason}, after MLflow's retries"
    text = full.strip().splitlines()
    return f"{type(exc).__name__}: {text[0][:300] if text else ''}"
