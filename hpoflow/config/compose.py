"""The CLI's config from Python: Hydra composes ``conf/`` for a list of overrides, exactly as
``python -m hpoflow <overrides>`` would, so the library's defaults and one-line errors are the CLI's."""
from __future__ import annotations

import copy
import dataclasses
import enum
import re
from typing import Any

from hpoflow.config.settings import ConfigError, Settings, validate

_REGISTERED = False
_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_\-]*")  # a word Hydra reads as a string without quotes
_KEYWORDS = ("true", "false", "null", "nan", "inf")


def one_line(ex: BaseException) -> str | None:
    """A one-line message for a Hydra/OmegaConf composition error, or None if it is not one."""
    from hydra.errors import CompactHydraException, MissingConfigException
    from omegaconf.errors import OmegaConfBaseException

    if isinstance(ex, MissingConfigException) or (isinstance(ex, CompactHydraException) and
                                                   "Could not find" in str(ex)):
        text = str(ex).split("Config search path")[0]
        lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
        head = lines[0].removeprefix("In 'config': ")
        options = [ln for ln in lines[1:] if not ln.endswith(":")]
        if any(f"hydra/launcher/{p}" in head for p in ("ray", "submitit")):
            head += " (the launcher plugin is not installed: pip install 'hpoflow[cluster]')"
        return f"{head}; allowed: {', '.join(options)}" if options else head
    if isinstance(ex, CompactHydraException):
        cause = ex.__cause__
        head = str(ex).splitlines()[0]
        if isinstance(cause, OmegaConfBaseException):
            first = str(cause).splitlines()[0]
            allowed = ""
            obj = getattr(cause, "object_type", None)
            if "not in" in first and obj is not None and dataclasses.is_dataclass(obj):
                allowed = "; allowed keys: " + ", ".join(f.name for f in dataclasses.fields(obj))
            key = getattr(cause, "full_key", None)
            return f"{head}: {first}" + (f" (key: {key})" if key else "") + allowed
        return " ".join(str(ex).split())
    return None


def compose(overrides: list[str]) -> dict[str, Any]:
    """The resolved config (plain dict) for ``overrides`` (``["algo=gp_ei", "algo.beta=3.0"]``).

    Raises:
        ConfigError: an unknown option or key, a value of the wrong type (the CLI's one-line message).
    """
    global _REGISTERED
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir
    from omegaconf import OmegaConf

    from hpoflow.config.identity import register_resolvers
    from hpoflow.config.schema import CONF_DIR, register_configs

    if not _REGISTERED:
        register_configs()
        register_resolvers()
        _REGISTERED = True
    try:
        with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):  # restores any Hydra app's state
            cfg = hydra_compose(config_name="config", overrides=overrides)
    except Exception as exc:  # composition errors become the CLI's one line; others re-raise
        message = one_line(exc)
        if message is None:
            raise
        raise ConfigError(message) from None
    return OmegaConf.to_container(cfg, resolve=True, enum_to_str=True)  # type: ignore[return-value]


_COMPOSED: dict[tuple[str, ...], dict[str, Any]] = {}


def composed(overrides: tuple[str, ...]) -> dict[str, Any]:
    """:func:`compose`, remembered per override list for this process (a fresh copy each call). The config folder
    is the package's own, so the same overrides always compose the same config."""
    if overrides not in _COMPOSED:
        _COMPOSED[overrides] = compose(list(overrides))
    return copy.deepcopy(_COMPOSED[overrides])


def override_value(value: Any) -> str:
    """A Python value in Hydra's override grammar (strings quoted, so ``'1e-3'`` stays a string)."""
    if isinstance(value, enum.Enum):
        value = value.value
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        if _PLAIN.fullmatch(value) and value.lower() not in _KEYWORDS:  # as typed on the command line
            return value
        return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(override_value(v) for v in value) + "]"
    raise ConfigError(f"{value!r} ({type(value).__name__}) is not a setting value; allowed: a number, string, "
                      "bool, None, a list of those, or a dict for a nested setting")


def overrides_for(prefix: str, settings: dict[str, Any]) -> list[str]:
    """``{"beta": 3, "optimizer": {"raw_samples": 64}}`` -> ``["algo.beta=3", "algo.optimizer.raw_samples=64"]``."""
    out = []
    for key, value in settings.items():
        if isinstance(value, dict):
            out += overrides_for(f"{prefix}.{key}", value)
        else:
            out.append(f"{prefix}.{key}={override_value(value)}")
    return out


def library_settings(algo: str, task: dict[str, Any], *, seed: int = 0, rounds: int = 30,
                     tracking: str | dict[str, Any] | bool | None = None, surrogate: str | dict[str, Any] | None = None,
                     hardware: str = "auto", on_error: str = "fail", checkpoint_every: int = 1,
                     algo_settings: dict[str, Any] | None = None, workers: int = 1,
                     executor: str = "thread") -> Settings:
    """Validated Settings for a library run: the CLI's composed config with ``task`` set to the caller's own.

    Args:
        algo: a registered algorithm (``conf/algo/<algo>.yaml``); its YAML may pick the surrogate.
        task: what the run records as its task config (the caller's task object is used as it is).
        tracking: None or False: nothing is logged; True: the default store (``outputs/mlflow.db``); a store
            URI (``sqlite:///runs.db``); or tracking settings (``{"uri": ..., "experiment": ..., "run_name": ...}``).
        surrogate: a surrogate name, or ``{"name": ..., <setting>: ...}``; default: the algorithm's.
        algo_settings: the algorithm's settings (nested settings as dicts).

    Raises:
        ConfigError: the CLI's one-line message for the first bad name, key or value.
    """
    if not isinstance(algo, str) or not algo:
        raise ConfigError(f"algo={algo!r} must name a registered algorithm")
    overrides = [f"algo={algo}", *overrides_for("algo", algo_settings or {})]
    if isinstance(surrogate, str):
        overrides.append(f"surrogate={surrogate}")
    elif surrogate is not None:
        chosen = dict(surrogate)
        if chosen.get("name"):
            overrides.append(f"surrogate={chosen.pop('name')}")
        overrides += overrides_for("surrogate", chosen)
    if tracking is None or tracking is False:
        overrides.append("tracking=off")
    elif tracking is True:
        overrides.append("tracking=mlflow")
    elif not isinstance(tracking, (str, dict)):
        raise ConfigError(f"tracking={tracking!r} is not a tracking setting; allowed: None or False (off), True (the "
                          "default store), a store URI such as 'sqlite:///runs.db', or a dict of tracking settings")
    else:
        chosen = {"uri": tracking} if isinstance(tracking, str) else dict(tracking)
        overrides += ["tracking=mlflow", *overrides_for("tracking", chosen)]
    overrides += [f"hardware={hardware}", f"on_error={override_value(on_error)}", "progress=false"]
    counts = {"seed": seed, "budget.rounds": rounds, "budget.workers": workers, "checkpoint_every": checkpoint_every}
    if all(type(v) is int for v in counts.values()) and isinstance(executor, str):
        # plain values: set after composing (validate() checks them), so the composition is shared by every call
        # that differs only in them (seeds, budgets): Hydra's ~0.4 CPU s a call is paid once per shape
        raw = composed(tuple(overrides))
        raw["seed"], raw["checkpoint_every"] = seed, checkpoint_every
        raw["budget"] = {**raw.get("budget", {}), "rounds": rounds, "workers": workers, "executor": executor}
    else:  # let Hydra's type checks report the bad value (the CLI's message)
        raw = compose(overrides + [f"{k}={override_value(v)}" for k, v in counts.items()]
                      + [f"budget.executor={override_value(executor)}"])
    raw["task"] = task
    return validate(raw, own_task=True)
