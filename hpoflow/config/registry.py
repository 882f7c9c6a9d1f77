"""Name -> component, per kind (algorithm, task, surrogate). Built-ins are imported lazily by path.

A built-in declares its entries in a ``BUILTINS`` list next to its config dataclass (the component packages'
``config.py``, ``configs.py`` and ``*_config.py`` modules, see :mod:`hpoflow.core.component`); the registry
imports those modules, which import no torch. A plugin registers itself with :func:`register` (or the
decorators), or through a ``hpoflow.plugins`` entry point whose target is a module that calls :func:`register`
when imported.
"""
from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from functools import cache
from typing import Any

from hpoflow.core.component import GROUP_OF_KIND, KINDS, Entry, MissingExtraError, entry
from hpoflow.core.suggest import did_you_mean

__all__ = ["GROUP_OF_KIND", "KINDS", "Entry", "MissingExtraError", "UnknownComponentError", "builtin_entries",
           "entries", "get", "register", "register_algorithm", "register_task"]

COMPONENT_PACKAGES = ("hpoflow.algorithms", "hpoflow.surrogates", "hpoflow.tasks", "hpoflow.acquisition")


class UnknownComponentError(ValueError):
    """A config names a component that is not registered."""


_REGISTRY: dict[str, dict[str, Entry]] = {kind: {} for kind in KINDS}
_PLUGINS_LOADED = False


def register(kind: str, name: str, target: str | Callable[..., Any], config: type, description: str = "",
             smoke: tuple[str, ...] = (), tasks: tuple[str, ...] = (), requires: tuple[str, ...] = (),
             extra: str = "", surrogate: str = "", **defaults: Any) -> Entry:
    """Add (or replace) a component under ``name``; ``defaults`` override the config dataclass's defaults.

    ``requires``/``extra``: modules outside the core dependencies and the optional extra that installs them;
    the component is still listed (``--help``, README) without them, and selecting it names the install.
    """
    new = entry(kind, name, target, config, description, smoke=smoke, tasks=tasks, requires=requires, extra=extra,
                surrogate=surrogate, **defaults)
    _REGISTRY[kind][name] = new
    return new


def register_algorithm(name: str, config: type, description: str = "", **defaults: Any) -> Callable[[type], type]:
    """Class decorator: ``@register_algorithm("my_algo", MyConfig)``."""

    def wrap(cls: type) -> type:
        register("algorithm", name, cls, config, description or (cls.__doc__ or "").strip().split("\n")[0],
                 **defaults)
        return cls

    return wrap


def register_task(name: str, config: type, description: str = "", **defaults: Any) -> Callable[[Any], Any]:
    """Decorator for a task factory ``f(**config_fields, seed) -> Task``."""

    def wrap(factory: Any) -> Any:
        register("task", name, factory, config, description or (factory.__doc__ or "").strip().split("\n")[0],
                 **defaults)
        return factory

    return wrap


def _is_config_module(name: str) -> bool:
    leaf = name.rpartition(".")[2]
    return leaf in ("config", "configs") or leaf.endswith("_config")


@cache
def builtin_entries() -> tuple[Entry, ...]:
    """Every built-in's entry, from the ``BUILTINS`` lists of the component packages' config modules.

    Raises:
        ValueError: two built-ins of one kind share a name.
    """
    found: dict[tuple[str, str], str] = {}
    out: list[Entry] = []
    for package_name in COMPONENT_PACKAGES:
        package = importlib.import_module(package_name)
        for info in pkgutil.walk_packages(package.__path__, prefix=f"{package_name}.", onerror=lambda _: None):
            if info.ispkg or not _is_config_module(info.name):
                continue
            for e in getattr(importlib.import_module(info.name), "BUILTINS", ()):
                if (e.kind, e.name) in found:
                    raise ValueError(f"{GROUP_OF_KIND[e.kind]}={e.name} is declared twice: in "
                                     f"{found[e.kind, e.name]} and {info.name}")
                found[e.kind, e.name] = info.name
                out.append(e)
    return tuple(out)


def _load_plugins() -> None:
    global _PLUGINS_LOADED
    if _PLUGINS_LOADED:
        return
    _PLUGINS_LOADED = True
    from importlib.metadata import entry_points

    for e in builtin_entries():
        _REGISTRY[e.kind][e.name] = e

    for ep in entry_points(group="hpoflow.plugins"):
        ep.load()


def entries(kind: str) -> list[Entry]:
    _load_plugins()
    return sorted(_REGISTRY[kind].values(), key=lambda e: e.name)


def get(kind: str, name: str) -> Entry:
    _load_plugins()
    try:
        return _REGISTRY[kind][name]
    except KeyError:
        names = sorted(_REGISTRY[kind])
        raise UnknownComponentError(f"{GROUP_OF_KIND[kind]}='{name}' is unknown{did_you_mean(str(name), names)}; "
                                    f"allowed: {', '.join(names)}") from None
