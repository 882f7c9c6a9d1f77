"""Config -> components: validate the composed config into :class:`Settings`, build the task and the algorithm
by registry name (the CLI's job, :func:`hpoflow.cli.main.run_from_settings`, hands them to the runner)."""
from __future__ import annotations

from dataclasses import MISSING, asdict, dataclass, field, fields, is_dataclass
from typing import Any

from hpoflow.config import registry
from hpoflow.config.schema import BudgetConfig, SweepConfig, TrackingConfig
from hpoflow.config.validation import MAX_SEED
from hpoflow.core.hardware import HardwareConfig
from hpoflow.core.records import OnError
from hpoflow.core.suggest import did_you_mean


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

    @property
    def algo_seed(self) -> int:
        """The seed of the algorithm's random streams: ``seed``, or for an A/A twin (``sweep.twin=k``)
        ``seed + TWIN_STRIDE * k`` (the task keeps ``seed``: the twin searches the same task instance)."""
        return self.seed + TWIN_STRIDE * self.sweep.twin


TWIN_STRIDE = 1_000_003  # sweep.twin=k seeds the algorithm seed + k * this (a prime: no twin meets another's seed)
MAX_TWIN = 1_000


def _to_dataclass(cls: type, values: dict[str, Any], group: str) -> Any:
    names = {f.name for f in fields(cls)}
    unknown = sorted(set(values) - names)
    if unknown:
        raise ConfigError(f"{group}.{unknown[0]} is not a setting of {group}={values.get('name')}"
                          f"{did_you_mean(unknown[0], sorted(names))}; allowed: {', '.join(sorted(names))}")
    kwargs = {}
    for f in fields(cls):
        if f.name not in values:
            continue
        v = values[f.name]
        sub = f.default_factory() if f.default_factory is not MISSING else None
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
        target = str(values["_target_"])
        try:
            _import(target)
        except Exception as exc:  # noqa: BLE001 - any import failure of the user's module: one line, exit 2
            raise ConfigError(f"{group}._target_={target!r} cannot be imported ({type(exc).__name__}: "
                              f"{str(exc).splitlines()[0][:200] if str(exc) else ''}); name an importable "
                              "module.Class (on PYTHONPATH or installed)") from None
        return {k: v for k, v in values.items() if k != "_target_"}, None, target
    name = values.get("name")
    try:
        entry = registry.get(kind, str(name))
        entry.require()  # an optional extra that is not installed: the one-line pip install, before any work
    except (registry.UnknownComponentError, registry.MissingExtraError) as exc:
        raise ConfigError(str(exc)) from None
    return _to_dataclass(entry.config, {**entry.defaults, **values}, group), entry, None


def validate(raw: dict[str, Any], own_task: bool = False) -> Settings:
    """Turn the resolved config (plain dict) into Settings, raising ConfigError on the first bad value.

    ``own_task``: the caller brings the task object (``hpoflow.minimize``, ``Study``); ``raw["task"]`` only
    describes it (recorded as the run's task config) and is not a registered component.
    """
    from hpoflow.config.validation import check_config

    try:
        check_config(raw)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    algo, algo_entry, algo_target = _component("algorithm", raw.get("algo") or {})
    surrogate, surrogate_entry, surrogate_target = _component("surrogate", raw.get("surrogate") or {})
    task, task_entry, task_target = (None, None, None) if own_task else _component("task", raw.get("task") or {})
    hardware = _to_dataclass(HardwareConfig, raw.get("hardware") or {}, "hardware")
    tracking = _to_dataclass(TrackingConfig, raw.get("tracking") or {}, "tracking")
    budget = _to_dataclass(BudgetConfig, raw.get("budget") or {}, "budget")
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
    if not isinstance(sweep.twin, int) or isinstance(sweep.twin, bool) or not 0 <= sweep.twin <= MAX_TWIN:
        raise ConfigError(f"sweep.twin={sweep.twin!r} must be an integer from 0 (not a twin) to {MAX_TWIN}")
    if seed + TWIN_STRIDE * sweep.twin > MAX_SEED:
        raise ConfigError(f"sweep.twin={sweep.twin} with seed={seed}: the twin's seed "
                          f"{seed + TWIN_STRIDE * sweep.twin} is over {MAX_SEED}; use a smaller seed or twin")
    _check_pair(raw, algo_entry, algo_target, surrogate_entry, surrogate_target)
    return Settings(algo, algo_entry, algo_target, surrogate, surrogate_entry, task, task_entry, task_target,
                    hardware, tracking, budget, seed, on_error, raw, every, resume,
                    progress=bool(raw.get("progress", True)), sweep=sweep)


def _check_pair(raw: dict[str, Any], algo_entry: registry.Entry | None, algo_target: str | None,
                surrogate_entry: registry.Entry | None, surrogate_target: str | None) -> None:
    """Refuse a surrogate without the capability the algorithm declares (after every cheaper check)."""
    from hpoflow.config.pairing import refusal

    algo_values, surrogate_values = raw.get("algo") or {}, raw.get("surrogate") or {}
    algo_name = str(algo_values.get("name") or algo_target)
    surrogate_name = str(surrogate_values.get("name") or surrogate_target)
    message = refusal(algo_name, algo_entry, algo_target, surrogate_name, surrogate_entry, surrogate_target)
    if message is not None:
        raise ConfigError(message)


def _import(target: str) -> Any:
    module, _, attr = target.replace(":", ".").rpartition(".")
    import importlib

    if not module:
        raise ImportError(f"'{target}' is not of the form module.Class")
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
    """The algorithm of ``s`` (a registry entry, or a ``_target_`` class) built as ``cls(config, ctx)``."""
    if s.algo_target is not None:
        cls = _import(s.algo_target)
        config_cls = getattr(cls, "Config", None)
        config = config_cls(**s.algo) if config_cls else s.algo
        return cls(config, ctx)
    return s.algo_entry.load()(s.algo, ctx)  # type: ignore[union-attr]
