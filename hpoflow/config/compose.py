"""The CLI's config from Python: Hydra composes ``conf/`` for a list of overrides, exactly as
``python -m hpoflow <overrides>`` would (:func:`hpoflow.run_config`); :func:`one_line` words Hydra's errors.

The library's calls (``minimize``, ``Study``, ``make_algorithm``) build their settings without Hydra:
:func:`hpoflow.config.library.library_settings`, re-exported here.
"""
from __future__ import annotations

import re
from typing import Any

from hpoflow.config.library import library_settings, override_error
from hpoflow.config.settings import ConfigError
from hpoflow.core.suggest import did_you_mean

__all__ = ["compose", "library_settings", "one_line"]

_REGISTERED = False


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
        missing = re.search(r"Could not find '(?:[^'/]*/)*([^'/]*)'", head)  # 'algo/hyprband' -> hyprband
        if missing and options:
            head += did_you_mean(missing.group(1), options)
        return f"{head}; allowed: {', '.join(options)}" if options else head
    ambiguous = re.match(r"Ambiguous value for argument '([^']*)'", str(ex))
    if ambiguous:  # a comma list without -m
        arg = ambiguous.group(1)
        return (f"'{arg}' gives several values: to run one job per value add -m (python -m hpoflow -m {arg} ...); "
                f"for a list value write {arg.split('=')[0]}=[{arg.split('=', 1)[-1]}], for one string quote it")
    if isinstance(ex, CompactHydraException):
        cause = ex.__cause__
        if isinstance(cause, OmegaConfBaseException):
            return override_error(str(ex).splitlines()[0], cause)
        return " ".join(str(ex).split())
    return None


def register_all() -> None:
    """Register the schemas and resolvers with Hydra and OmegaConf once per process (what composing needs)."""
    global _REGISTERED
    from hpoflow.config.identity import register_resolvers
    from hpoflow.config.schema import register_configs

    if not _REGISTERED:
        register_configs()
        register_resolvers()
        _REGISTERED = True


def compose(overrides: list[str]) -> dict[str, Any]:
    """The resolved config (plain dict) for ``overrides`` (``["algo=gp_ei", "algo.beta=3.0"]``).

    Raises:
        ConfigError: an unknown option or key, a value of the wrong type (the CLI's one-line message).
    """
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir
    from omegaconf import OmegaConf

    from hpoflow.config.schema import CONF_DIR

    register_all()
    try:
        with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):  # restores any Hydra app's state
            cfg = hydra_compose(config_name="config", overrides=overrides)
    except Exception as exc:  # composition errors become the CLI's one line; others re-raise
        message = one_line(exc)
        if message is None:
            raise
        raise ConfigError(message) from None
    return OmegaConf.to_container(cfg, resolve=True, enum_to_str=True)  # type: ignore[return-value]
