"""The library's settings (``minimize``, ``maximize``, ``Study``, ``make_algorithm``), built directly: no Hydra.

The same config ``python -m hpoflow`` composes for the same choices, from the same sources: each chosen option's
dataclass (with its registered defaults) overlaid with its ``conf/<group>/<name>.yaml`` values (and the surrogate
that file's defaults list selects), under ``conf/config.yaml``'s top-level values. The caller's settings are then
written in one key at a time as Hydra writes a command line's overrides (``OmegaConf.update`` on the type-checked
nodes), so a wrong type or an unknown key gives the CLI's one-line message word for word, and
:func:`~hpoflow.config.settings.validate` checks the result as it checks the CLI's. Python values go in as they are;
a value is formatted only to quote it in a message (``algo.beta=abc``). Hydra's own machinery (config search path,
ConfigStore, defaults-list resolution) costs more than the run's first evaluation, and a library call needs none
of it: one fixed defaults list, no experiments or sweeps.
"""
from __future__ import annotations

import enum
import numbers
import re
from functools import cache
from typing import Any

from hpoflow.config.schema import CONF_DIR, RootConfig, node, schema_options
from hpoflow.config.settings import ConfigError, Settings, validate
from hpoflow.config.validation import MAX_NAME
from hpoflow.core.suggest import did_you_mean

_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_\-]*")  # a word Hydra reads as a string without quotes
_KEYWORDS = ("true", "false", "null", "nan", "inf")
_CHOICE = re.compile(r"^(?:override\s+)?/?(?P<group>[A-Za-z_]\w*)(?:@\S*)?$")  # "override /surrogate@_global_.x"


def override_value(value: Any) -> str:
    """A Python value as the command line would spell it (strings quoted, so ``'1e-3'`` stays a string).

    Raises:
        ConfigError: a value no setting can hold (an object, a set).
    """
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


def tidy_head(head: str) -> str:
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


def override_error(head: str, cause: BaseException) -> str:
    """Hydra's one-line message for an override OmegaConf refused: ``<head>: <cause> (key: k)[; allowed keys: ...]``."""
    import dataclasses

    first = str(cause).splitlines()[0]
    allowed = ""
    obj = getattr(cause, "object_type", None)
    if "not in" in first and obj is not None and dataclasses.is_dataclass(obj):
        names = [f.name for f in dataclasses.fields(obj)]
        allowed = did_you_mean(str(getattr(cause, "key", "")), names) + "; allowed keys: " + ", ".join(names)
    key = getattr(cause, "full_key", None)
    return f"{tidy_head(head)}: {first}" + (f" (key: {key})" if key else "") + allowed


def settings_items(prefix: str, settings: dict[str, Any]) -> list[tuple[str, Any]]:
    """``("algo", {"beta": 3, "optimizer": {"raw_samples": 64}})`` -> ``[("algo.beta", 3),
    ("algo.optimizer.raw_samples", 64)]``: nested settings as dotted keys."""
    out: list[tuple[str, Any]] = []
    for key, value in settings.items():
        if isinstance(value, dict):
            out += settings_items(f"{prefix}.{key}", value)
        else:
            out.append((f"{prefix}.{key}", value))
    return out


def write(cfg: Any, key: str, value: Any) -> None:
    """Set ``key`` (dotted) of ``cfg`` to ``value`` as Hydra applies the override ``key=value``.

    Raises:
        ConfigError: the CLI's one line for an unknown key or a value the setting's type refuses.
    """
    from omegaconf import OmegaConf
    from omegaconf.errors import ConfigAttributeError, ConfigKeyError, OmegaConfBaseException

    spelled = override_value(value)  # also refuses values no setting can hold, as the override grammar did
    if isinstance(value, enum.Enum):
        value = value.value
    elif isinstance(value, tuple):
        value = list(value)
    try:
        OmegaConf.update(cfg, key, value, merge=True)
    except (ConfigAttributeError, ConfigKeyError) as exc:
        raise ConfigError(override_error(f"Could not override '{key}'.", exc)) from None
    except OmegaConfBaseException as exc:
        raise ConfigError(override_error(f"Error merging override {key}={spelled}", exc)) from None


@cache
def _yaml(group: str | None, name: str) -> tuple[dict[str, Any], dict[str, str]]:
    """``conf/<group>/<name>.yaml`` as (its values, the options its defaults list selects per group)."""
    from omegaconf import OmegaConf

    path = CONF_DIR / f"{name}.yaml" if group is None else CONF_DIR / group / f"{name}.yaml"
    if not path.is_file():  # a plugin registered without a YAML file: its dataclass alone
        return {}, {}
    values: dict[str, Any] = OmegaConf.to_container(OmegaConf.load(path), resolve=False)  # type: ignore[assignment]
    choices = {}
    for item in values.pop("defaults", None) or []:
        if isinstance(item, dict):
            for spec, option in item.items():
                match = _CHOICE.match(str(spec))
                if match and option is not None:
                    choices[match["group"]] = str(option)
    values.pop("hydra", None)
    return values, choices


def _option(group: str, name: Any) -> Any:
    """The node of option ``name`` of ``group``: its dataclass schema overlaid with its YAML values."""
    from omegaconf import OmegaConf

    options = schema_options()[group]
    yaml_options = sorted(p.stem for p in (CONF_DIR / group).glob("*.yaml"))
    if not isinstance(name, str) or name not in options:
        names = sorted(set(options) | set(yaml_options))
        hint = did_you_mean(name, names) if isinstance(name, str) else ""
        raise ConfigError(f"Could not find '{group}/{name}'{hint}; allowed: {', '.join(names)}")
    return OmegaConf.merge(node(options[name]), _yaml(group, name)[0])


@cache
def _resolvers() -> None:
    """The resolvers a config may use (``${hpoflow.times:...}``), as :func:`hpoflow.config.compose.compose` has them."""
    from hpoflow.config.identity import register_resolvers

    register_resolvers()


def integer(key: str, value: Any) -> int:
    """``value`` as an int: a Python or NumPy integer; a bool, a string or a float is refused (the CLI's types)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ConfigError(f"{key}={value!r} ({type(value).__name__}) is not an integer; allowed: an int (NumPy's "
                          "integers too)")
    return int(value)


def check_arguments(*, name: Any = None, progress: Any = False, **words: Any) -> None:
    """The library's other argument types: ``name`` None or a non-empty string, ``progress`` a bool, each of
    ``words`` (``on_error="fail"``) a string.

    Raises:
        ConfigError: one line naming the argument, its value and what is allowed.
    """
    if name is not None and (not isinstance(name, str) or not name.strip() or len(name) > MAX_NAME):
        raise ConfigError(f"name={name!r:.80} is not a name; allowed: None (the function's name) or 1 to {MAX_NAME} "
                          "characters")
    if not isinstance(progress, bool):
        raise ConfigError(f"progress={progress!r} ({type(progress).__name__}) is not a bool; allowed: True, False")
    for key, value in words.items():
        if not isinstance(value, str):
            raise ConfigError(f"{key}={value!r} ({type(value).__name__}) is not a string; allowed: a name such as "
                              f"the default")


def library_settings(algo: str, task: dict[str, Any], *, seed: int = 0, rounds: int = 30,
                     tracking: str | dict[str, Any] | bool | None = None, surrogate: str | dict[str, Any] | None = None,
                     hardware: str = "auto", on_error: str = "fail", checkpoint_every: int = 1,
                     algo_settings: dict[str, Any] | None = None, workers: int = 1,
                     executor: str = "thread", cost: float | None = None) -> Settings:
    """Validated Settings for a library run: the CLI's config for these choices, ``task`` the caller's own.

    Args:
        algo: a registered algorithm (``conf/algo/<algo>.yaml``); its YAML may pick the surrogate.
        task: what the run records as its task config (the caller's task object is used as it is).
        tracking: None or False: nothing is logged; True: the default store (``outputs/mlflow.db``); a store
            URI (``sqlite:///runs.db``); or tracking settings (``{"uri": ..., "experiment": ..., "run_name": ...}``).
        surrogate: a surrogate name, or ``{"name": ..., <setting>: ...}``; default: the algorithm's.
        algo_settings: the algorithm's settings (nested settings as dicts).
        workers, executor: ``budget.workers`` (trials evaluated at once) and ``budget.executor``.
        cost: ``budget.cost`` (None: no cost budget).

    Raises:
        ConfigError: the CLI's one-line message for the first bad name, key or value.
    """
    from omegaconf import OmegaConf

    seed, rounds, workers = integer("seed", seed), integer("rounds", rounds), integer("workers", workers)
    checkpoint_every = integer("checkpoint_every", checkpoint_every)
    if cost is not None and (isinstance(cost, bool) or not isinstance(cost, numbers.Real)):
        raise ConfigError(f"cost={cost!r} ({type(cost).__name__}) is not a number; allowed: None or a number > 0 "
                          "(fidelity units with a fidelity)")
    check_arguments(on_error=on_error, executor=executor, hardware=hardware)
    if not isinstance(algo, str) or not algo:
        raise ConfigError(f"algo={algo!r} must name a registered algorithm")
    if tracking is not None and not isinstance(tracking, (bool, str, dict)):
        raise ConfigError(f"tracking={tracking!r} is not a tracking setting; allowed: None or False (off), True (the "
                          "default store), a store URI such as 'sqlite:///runs.db', or a dict of tracking settings")
    if surrogate is not None and not isinstance(surrogate, (str, dict)):
        raise ConfigError(f"surrogate={surrogate!r} is not a surrogate setting; allowed: None (the algorithm's), a "
                          "surrogate's name, or a dict {'name': ..., <setting>: ...}")
    tracked = tracking is not None and tracking is not False
    _resolvers()
    root_values, choices = _yaml(None, "config")
    algo_node = _option("algo", algo)
    chosen = {} if surrogate is None else {"name": surrogate} if isinstance(surrogate, str) else dict(surrogate)
    surrogate_name = chosen.pop("name", None) or _yaml("algo", algo)[1].get("surrogate") or choices["surrogate"]
    groups = {"algo": algo_node, "surrogate": _option("surrogate", surrogate_name),
              "hardware": _option("hardware", hardware),
              "tracking": _option("tracking", choices["tracking"] if tracked else "off")}
    cfg = OmegaConf.merge(OmegaConf.structured(RootConfig), root_values, groups)
    OmegaConf.set_struct(cfg, True)
    items = settings_items("algo", algo_settings or {}) + settings_items("surrogate", chosen)
    if isinstance(tracking, (str, dict)):
        items += settings_items("tracking", {"uri": tracking} if isinstance(tracking, str) else dict(tracking))
    items += [("on_error", on_error), ("progress", False), ("seed", seed), ("budget.rounds", rounds),
              ("budget.workers", workers), ("checkpoint_every", checkpoint_every), ("budget.executor", executor),
              ("budget.cost", cost)]
    for key, value in items:
        write(cfg, key, value)
    raw = OmegaConf.to_container(cfg, resolve=True, enum_to_str=True)
    assert isinstance(raw, dict)
    raw["task"] = task
    return validate(raw, own_task=True)  # type: ignore[arg-type]
