"""The CLI's config from Python: Hydra composes ``conf/`` for a list of overrides, exactly as
``python -m hpoflow <overrides>`` would, so the library's defaults and one-line errors are the CLI's."""
from __future__ import annotations

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
    ambiguous = re.match(r"Ambiguous value for argument '([^']*)'", str(ex))
    if ambiguous:  # a comma list without -m
        arg = ambiguous.group(1)
        return (f"'{arg}' gives several values: to run one job per value add -m (python -m hpoflow -m {arg} ...); "
                f"for a list value write {arg.split('=')[0]}=[{arg.split('=', 1)[-1]}], for one string quote it")
    if isinstance(ex, CompactHydraException):
        cause = ex.__cause__
        head = _tidy(str(ex).splitlines()[0])
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


def _tidy(head: str) -> str:
    """Hydra's heads without a doubled "Error" or stray punctuation: "Error merging override x" -> "cannot apply
    the override x", "Could not override 'a.b'." -> "cannot override 'a.b'"."""
    head = head.strip().rstrip(".").rstrip(":")
    if head.startswith("Error merging override "):
        head = "cannot apply the override " + head.removeprefix("Error merging override ")
    elif head.startswith("Could not override "):
        head = "cannot override " + head.removeprefix("Could not override ")
    elif head.startswith("Error "):
        head = head.removeprefix("Error ")
    return head


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
                     tracking: str | dict[str, Any] | None = None, surrogate: str | dict[str, Any] | None = None,
                     hardware: str = "auto", on_error: str = "fail", checkpoint_every: int = 1,
                     algo_settings: dict[str, Any] | None = None) -> Settings:
    """Validated Settings for a library run: the CLI's composed config with ``task`` set to the caller's own.

    Args:
        algo: a registered algorithm (``conf/algo/<algo>.yaml``); its YAML may pick the surrogate.
        task: what the run records as its task config (the caller's task object is used as it is).
        tracking: None: nothing is logged; a store URI (``sqlite:///runs.db``); or tracking settings
            (``{"uri": ..., "experiment": ..., "run_name": ...}``).
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
    if tracking is None:
        overrides.append("tracking=off")
    else:
        chosen = {"uri": tracking} if isinstance(tracking, str) else dict(tracking)
        overrides += ["tracking=mlflow", *overrides_for("tracking", chosen)]
    overrides += [f"seed={override_value(seed)}", f"budget.rounds={override_value(rounds)}",
                  f"hardware={hardware}", f"on_error={override_value(on_error)}", "progress=false",
                  f"checkpoint_every={override_value(checkpoint_every)}"]
    raw = compose(overrides)
    raw["task"] = task
    return validate(raw, own_task=True)
