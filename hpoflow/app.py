"""Build components from a composed config, start tracking, run the loop, print a summary."""
from __future__ import annotations

import contextlib
import hashlib
import subprocess
import sys
from dataclasses import asdict, dataclass, field, fields, is_dataclass
from functools import partial
from pathlib import Path
from typing import Any

from hpoflow import registry
from hpoflow.hardware import HardwareConfig
from hpoflow.records import OnError
from hpoflow.schema import BudgetConfig, SweepConfig, TrackingConfig


class ConfigError(ValueError):
    """The composed config is invalid; the message names the key and what is allowed."""


@dataclass(frozen=True)
class Settings:
    """The validated config: every component's dataclass, plus run-level settings."""

    algo: Any
    algo_entry: registry.Entry | None
    algo_target: str | None
    surrogate: Any
    surrogate_entry: registry.Entry | None
    task: Any
    task_entry: registry.Entry | None
    task_target: str | None
    hardware: HardwareConfig
    tracking: TrackingConfig
    budget: BudgetConfig
    seed: int
    on_error: OnError
    raw: dict[str, Any]
    checkpoint_every: int = 1
    resume: str | None = None
    progress: bool = True
    sweep: SweepConfig = field(default_factory=SweepConfig)


def _to_dataclass(cls: type, values: dict[str, Any], group: str) -> Any:
    names = {f.name for f in fields(cls)}
    unknown = sorted(set(values) - names)
    if unknown:
        raise ConfigError(f"{group}.{unknown[0]} is not a setting of {group}={values.get('name')}; "
                          f"allowed: {', '.join(sorted(names))}")
    kwargs = {}
    for f in fields(cls):
        if f.name not in values:
            continue
        v = values[f.name]
        sub = f.default_factory() if callable(getattr(f, "default_factory", None)) else None  # type: ignore[misc]
        if isinstance(v, dict) and is_dataclass(sub):
            v = _to_dataclass(type(sub), v, f"{group}.{f.name}")
        kwargs[f.name] = v
    try:
        return cls(**kwargs)
    except (ValueError, TypeError) as exc:
        raise ConfigError(str(exc)) from None


def _component(kind: str, values: dict[str, Any]) -> tuple[Any, registry.Entry | None, str | None]:
    group = registry.GROUP_OF_KIND[kind]
    if not isinstance(values, dict):
        raise ConfigError(f"{group} must be a config group option, got {values!r}")
    if "_target_" in values:  # a user's own component from their --config-dir: trusted, they wrote it
        return {k: v for k, v in values.items() if k != "_target_"}, None, str(values["_target_"])
    name = values.get("name")
    try:
        entry = registry.get(kind, str(name))
        entry.require()  # an optional extra that is not installed: the one-line pip install, before any work
    except (registry.UnknownComponentError, registry.MissingExtraError) as exc:
        raise ConfigError(str(exc)) from None
    return _to_dataclass(entry.config, {**entry.defaults, **values}, group), entry, None


def validate(raw: dict[str, Any]) -> Settings:
    """Turn the resolved config (plain dict) into Settings, raising ConfigError on the first bad value."""
    from hpoflow.validation import check_config

    try:
        check_config(raw)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    algo, algo_entry, algo_target = _component("algorithm", raw.get("algo") or {})
    surrogate, surrogate_entry, _ = _component("surrogate", raw.get("surrogate") or {})
    task, task_entry, task_target = _component("task", raw.get("task") or {})
    hardware = _to_dataclass(HardwareConfig, raw.get("hardware") or {}, "hardware")
    tracking = _to_dataclass(TrackingConfig, raw.get("tracking") or {}, "tracking")
    budget = _to_dataclass(BudgetConfig, raw.get("budget") or {}, "budget")
    if budget.rounds < 1:
        raise ConfigError(f"budget.rounds={budget.rounds} must be a positive integer")
    if budget.cost is not None and budget.cost <= 0:
        raise ConfigError(f"budget.cost={budget.cost} must be > 0 or null")
    if tracking.flush_every < 1:
        raise ConfigError(f"tracking.flush_every={tracking.flush_every} must be >= 1")
    if not tracking.heartbeat_s > 0:
        raise ConfigError(f"tracking.heartbeat_s={tracking.heartbeat_s} must be > 0 (seconds between lease heartbeats)")
    seed = raw.get("seed", 0)
    if not isinstance(seed, int) or seed < 0:
        raise ConfigError(f"seed={seed!r} must be a non-negative integer")
    try:
        on_error = OnError(str(raw.get("on_error", "fail")).lower().removeprefix("onerror."))
    except ValueError:
        raise ConfigError(f"on_error={raw.get('on_error')!r} is unknown; allowed: fail, skip") from None
    every = raw.get("checkpoint_every", 1)
    if not isinstance(every, int) or isinstance(every, bool) or every < 0:
        raise ConfigError(f"checkpoint_every={every!r} must be a non-negative integer (0: no checkpoints)")
    resume = raw.get("resume")
    if resume is not None and (not isinstance(resume, str) or not resume.strip()):
        raise ConfigError(f"resume={resume!r} must name a run folder, a checkpoint file or an MLflow run id")
    sweep = _to_dataclass(SweepConfig, raw.get("sweep") or {}, "sweep")
    return Settings(algo, algo_entry, algo_target, surrogate, surrogate_entry, task, task_entry, task_target,
                    hardware, tracking, budget, seed, on_error, raw, every, resume,
                    progress=bool(raw.get("progress", True)), sweep=sweep)


def _import(target: str) -> Any:
    module, _, attr = target.replace(":", ".").rpartition(".")
    import importlib

    return getattr(importlib.import_module(module), attr)


def build_task(s: Settings) -> Any:
    """Build the task; a missing or unreadable file becomes a ConfigError naming the task setting."""
    values = dict(s.task) if s.task_target is not None else asdict(s.task)
    try:
        if s.task_target is not None:
            return _import(s.task_target)(**values, seed=s.seed)
        return s.task_entry.load()(**values, seed=s.seed)  # type: ignore[union-attr]
    except OSError as exc:
        name = getattr(exc, "filename", None)
        keys = [k for k, v in values.items() if isinstance(v, str) and v and name is not None
                and (str(name) == v or str(name).startswith(v.rstrip("/") + "/"))]
        key = f"task.{keys[0]}={values[keys[0]]!r}" if keys else "task"
        raise ConfigError(f"{key}: cannot read {name or ''}: {exc.strerror or exc}".replace(": :", ":")) from None


def build_algorithm(s: Settings, ctx: Any) -> Any:
    if s.algo_target is not None:
        cls = _import(s.algo_target)
        config_cls = getattr(cls, "Config", None)
        config = config_cls(**s.algo) if config_cls else s.algo
        return cls(config, ctx)
    return s.algo_entry.load()(s.algo, ctx)  # type: ignore[union-attr]


def _git_commit() -> str:
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5)
        return out.stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def tags_for(s: Settings, sweep_id: str | None, hardware_desc: str, task_name: str) -> dict[str, str]:
    algo = s.raw["algo"].get("name") or str(s.algo_target).replace(":", ".").rsplit(".", 1)[-1]
    tags = {"algo": str(algo), "task": str(s.raw["task"].get("name") or task_name),
            "surrogate": str(s.raw.get("surrogate", {}).get("name")), "hardware": hardware_desc,
            "seed": str(s.seed), "git_commit": _git_commit()}
    if sweep_id:
        tags["sweep_id"] = sweep_id
    from hpoflow import sweeps

    tags[sweeps.HASH_TAG] = sweeps.config_hash(s.raw)
    if s.sweep.parent_run_id:  # a study's job: nested under the study's parent run
        tags[sweeps.PARENT_TAG] = s.sweep.parent_run_id
        tags[sweeps.INVOCATION_TAG] = str(s.sweep.invocation)
        tags[sweeps.STUDY_TAG] = str(s.sweep.study)
        tags["sweep_id"] = s.sweep.parent_run_id  # stable across re-runs of the study
    return tags


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
    from hpoflow.checkpoint import CheckpointError, load, locate
    from hpoflow.resume_guard import differing_override, redacted_keys, secret_overrides, verify_store
    from hpoflow.tracking.store import default_uri

    try:
        path = locate(resume, uri or default_uri())
        state = load(path)
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
            verify_store(state, str(settings.tracking.uri or default_uri()), settings.checkpoint_every)
        except CheckpointError as exc:
            raise ConfigError(f"resume={resume!r}: {exc}") from None
    return settings, state, str(path)


def run_from_settings(s: Settings, config_text: str = "", sweep_id: str | None = None,
                      print_summary: bool = True, run_dir: str | None = None,
                      resume: tuple[Any, str] | None = None) -> Any:
    """Build everything from validated settings and run the loop.

    ``run_dir``: where the per-round checkpoint is written (``<run_dir>/checkpoint.json``).
    ``resume``: ``(loop state, checkpoint path)`` from :func:`resume_settings`: continue that run.
    """
    from hpoflow import hardware as hw
    from hpoflow.algorithms.base import BuildContext
    from hpoflow.checkpoint import FILENAME, Checkpointer
    from hpoflow.loop import Budget, run
    from hpoflow.tracking.base import NullTracker

    state, checkpoint_path = resume if resume is not None else (None, None)
    if state is not None and state.meta.get("status") == "FINISHED":
        print(f"resume: the run already finished ({state.round} rounds); nothing to do", file=sys.stdout)
        return None
    if state is not None:
        config_text = state.meta.get("config_text", config_text)
    from hpoflow.tracking.params import mask_secrets, redact_tree
    from hpoflow.validation import check_task

    config_text = mask_secrets(config_text)
    try:
        resolved = hw.setup(s.hardware)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    hw.seed_everything(s.seed)
    try:
        task = build_task(s)
    except ConfigError:
        raise
    except (ValueError, TypeError) as exc:
        raise ConfigError(f"task: {exc}") from None
    try:
        check_task(s.task, task)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    surrogate_factory = None
    if s.surrogate_entry is not None:  # loaded on first use: an algorithm without a model never imports gpytorch
        surrogate_factory = partial(_build_surrogate, s.surrogate_entry, s.surrogate, dtype=resolved.dtype,
                                    device=resolved.device)
    ctx = BuildContext(task=task, rounds=s.budget.rounds, seed=s.seed, dtype=resolved.dtype, device=resolved.device,
                       surrogate=surrogate_factory)
    try:
        algorithm = build_algorithm(s, ctx)
    except (ValueError, TypeError) as exc:
        raise ConfigError(f"algo: {exc}") from None
    if checkpoint_path is None and run_dir is not None and s.checkpoint_every > 0:
        checkpoint_path = str((Path(run_dir) / FILENAME).resolve())
    tracker: Any = NullTracker()
    uri = None
    if s.tracking.enabled:
        from hpoflow.tracking.mlflow_tracker import MlflowTracker
        from hpoflow.tracking.store import default_uri

        uri = s.tracking.uri or default_uri()
        tags = tags_for(s, sweep_id, resolved.description, task.name)
        tags["direction"] = task.direction.value
        tags["regret_reference"] = ("optimum" if task.optimum is not None
                                    else "bound" if task.bound is not None else "none")
        tags.update({f"task.{key}": f"{value:.8g}" for key, value in task.reference_values().items()})
        if checkpoint_path:
            tags["checkpoint"] = checkpoint_path
        experiment = s.tracking.experiment or tags["task"]
        run_name = s.tracking.run_name or f"{tags['algo']}-{tags['task']}-s{s.seed}"
        run_id = state.meta.get("run_id") if state is not None else None
        if state is not None:
            tags = {"resumed_at_round": str(state.round)}
        try:
            tracker = MlflowTracker(uri, experiment, run_name, flush_every=s.tracking.flush_every,
                                    artifacts=s.tracking.artifacts, run_id=run_id, plots=s.tracking.plots,
                                    heartbeat_s=s.tracking.heartbeat_s)
        except Exception as exc:  # noqa: BLE001 - unwritable path, unknown scheme: a one-line error
            raise ConfigError(f"tracking.uri={mask_secrets(uri)!r}: cannot open the MLflow store "
                              f"({_first_line(exc)})") from None
        from hpoflow.tracking.lease import LeaseError

        try:
            tracker.start(s.raw, tags, config_text)
        except LeaseError as exc:  # another live writer, or a FINISHED run: nothing was written
            raise ConfigError(f"resume: {exc}") from None
        except Exception as exc:  # noqa: BLE001 - server down, deleted experiment: never leave it RUNNING
            if tracker.run_id is not None and run_id is None:
                from hpoflow.records import RunStatus

                with contextlib.suppress(Exception):
                    tracker.finish(RunStatus.FAILED, {}, error=f"{type(exc).__name__}: {exc}")
            raise ConfigError(f"tracking.uri={mask_secrets(uri)!r}: cannot start the MLflow run "
                              f"({_first_line(exc)})") from None
        if s.tracking.artifacts and s.tracking.plots and task.space.dim <= 2:
            from hpoflow.surrogate_plot import surrogate_artifact_writer

            tracker.add_artifact_writer(surrogate_artifact_writer(algorithm, task))
    from hpoflow.progress import RunProgress

    checkpointer = None
    if checkpoint_path:
        meta = {"config": redact_tree(s.raw), "config_text": config_text, "run_id": getattr(tracker, "run_id", None),
                "uri": mask_secrets(uri) if uri else uri, "sweep_id": sweep_id}
        checkpointer = Checkpointer(checkpoint_path, meta, every=max(1, s.checkpoint_every))
    label = f"{s.raw['algo'].get('name') or 'algo'}/{s.raw['task'].get('name') or task.name} s{s.seed}"
    with RunProgress(s.budget.rounds, label, enabled=s.progress) as progress:
        result = run(task, algorithm, tracker, Budget(s.budget.rounds, s.budget.cost), on_error=s.on_error,
                     on_round=progress, checkpoint=checkpointer, resume=state)
    if print_summary:
        print_run_summary(result.summary, uri, getattr(tracker, "run_id", None))
    return result


def _build_surrogate(entry: registry.Entry, config: Any, dim: int, **kwargs: Any) -> Any:
    return entry.load()(config, dim, **kwargs)


def _first_line(exc: BaseException) -> str:
    from hpoflow.tracking.params import mask_secrets

    full = mask_secrets(str(exc))
    if "Max retries exceeded" in full or "NewConnectionError" in full:  # requests' 1,000-character story
        reason = ("connection refused" if "refused" in full.lower() else
                  "timed out" if "timed out" in full.lower() or "timeout" in full.lower() else "unreachable")
        return f"the server cannot be reached: {reason}, after MLflow's retries"
    text = full.strip().splitlines()
    return f"{type(exc).__name__}: {text[0][:300] if text else ''}"


def print_run_summary(summary: dict[str, Any], uri: str | None, run_id: str | None) -> None:
    lines = [f"best value: {summary.get('best_value')}", f"best config: {summary.get('best_config')}"]
    if summary.get("cumulative_regret") is not None:
        lines.append(f"cumulative regret: {summary['cumulative_regret']:.6g}   "
                     f"simple regret: {summary.get('simple_regret')}")
    lines.append(f"query cost: {summary.get('query_cost')}   failed evaluations: {summary.get('failed')}")
    if uri:
        from hpoflow.tracking.params import mask_secrets

        uri = mask_secrets(uri)
        lines.append(f"MLflow run {run_id} in {uri}")
        lines.append(f"browse: {uri}" if uri.startswith(("http://", "https://"))
                     else f"browse: mlflow ui --backend-store-uri {uri}")
    print("\n".join(lines), file=sys.stdout, flush=True)


def sweep_id_from(sweep_dir: str) -> str:
    return hashlib.sha1(sweep_dir.encode()).hexdigest()[:12]
