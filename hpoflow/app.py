"""Build components from a composed config, start tracking, run the loop, print a summary."""
from __future__ import annotations

import hashlib
import subprocess
import sys
from dataclasses import asdict, dataclass, fields, is_dataclass
from functools import partial
from typing import Any

from hpoflow import registry
from hpoflow.hardware import HardwareConfig
from hpoflow.records import OnError
from hpoflow.schema import BudgetConfig, TrackingConfig


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
    except registry.UnknownComponentError as exc:
        raise ConfigError(str(exc)) from None
    return _to_dataclass(entry.config, values, group), entry, None


def validate(raw: dict[str, Any]) -> Settings:
    """Turn the resolved config (plain dict) into Settings, raising ConfigError on the first bad value."""
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
    seed = raw.get("seed", 0)
    if not isinstance(seed, int) or seed < 0:
        raise ConfigError(f"seed={seed!r} must be a non-negative integer")
    try:
        on_error = OnError(str(raw.get("on_error", "fail")).lower().removeprefix("onerror."))
    except ValueError:
        raise ConfigError(f"on_error={raw.get('on_error')!r} is unknown; allowed: fail, skip") from None
    return Settings(algo, algo_entry, algo_target, surrogate, surrogate_entry, task, task_entry, task_target,
                    hardware, tracking, budget, seed, on_error, raw)


def _import(target: str) -> Any:
    module, _, attr = target.replace(":", ".").rpartition(".")
    import importlib

    return getattr(importlib.import_module(module), attr)


def build_task(s: Settings) -> Any:
    if s.task_target is not None:
        return _import(s.task_target)(**s.task, seed=s.seed)
    return s.task_entry.load()(**asdict(s.task), seed=s.seed)  # type: ignore[union-attr]


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
    return tags


def run_from_settings(s: Settings, config_text: str = "", sweep_id: str | None = None,
                      print_summary: bool = True) -> Any:
    """Build everything from validated settings and run the loop."""
    from hpoflow import hardware as hw
    from hpoflow.algorithms.base import BuildContext
    from hpoflow.loop import Budget, run
    from hpoflow.tracking.base import NullTracker

    resolved = hw.setup(s.hardware)
    hw.seed_everything(s.seed)
    try:
        task = build_task(s)
    except (ValueError, TypeError, FileNotFoundError) as exc:
        raise ConfigError(f"task: {exc}") from None
    surrogate_factory = None
    if s.surrogate_entry is not None:
        surrogate_factory = partial(s.surrogate_entry.load(), s.surrogate, dtype=resolved.dtype, device=resolved.device)
    ctx = BuildContext(task=task, rounds=s.budget.rounds, seed=s.seed, dtype=resolved.dtype, device=resolved.device,
                       surrogate=surrogate_factory)
    try:
        algorithm = build_algorithm(s, ctx)
    except (ValueError, TypeError) as exc:
        raise ConfigError(f"algo: {exc}") from None
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
        experiment = s.tracking.experiment or tags["task"]
        run_name = s.tracking.run_name or f"{tags['algo']}-{tags['task']}-s{s.seed}"
        tracker = MlflowTracker(uri, experiment, run_name, flush_every=s.tracking.flush_every,
                                artifacts=s.tracking.artifacts)
        tracker.start(s.raw, tags, config_text)
    result = run(task, algorithm, tracker, Budget(s.budget.rounds, s.budget.cost), on_error=s.on_error)
    if print_summary:
        print_run_summary(result.summary, uri, getattr(tracker, "run_id", None))
    return result


def print_run_summary(summary: dict[str, Any], uri: str | None, run_id: str | None) -> None:
    lines = [f"best value: {summary.get('best_value')}", f"best config: {summary.get('best_config')}"]
    if summary.get("cumulative_regret") is not None:
        lines.append(f"cumulative regret: {summary['cumulative_regret']:.6g}   "
                     f"simple regret: {summary.get('simple_regret')}")
    lines.append(f"query cost: {summary.get('query_cost')}   failed evaluations: {summary.get('failed')}")
    if uri:
        lines.append(f"MLflow run {run_id} in {uri}")
        lines.append(f"browse: mlflow ui --backend-store-uri {uri}")
    print("\n".join(lines), file=sys.stdout, flush=True)


def sweep_id_from(sweep_dir: str) -> str:
    return hashlib.sha1(sweep_dir.encode()).hexdigest()[:12]
