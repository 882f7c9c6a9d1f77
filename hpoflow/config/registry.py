"""Name -> component, per kind (algorithm, task, surrogate). Built-ins are imported lazily by path.

A plugin registers itself with :func:`register` (or the decorators), or through a ``hpoflow.plugins``
entry point whose target is a module that calls :func:`register` when imported.
"""
from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

KINDS = ("algorithm", "task", "surrogate")
GROUP_OF_KIND = {"algorithm": "algo", "task": "task", "surrogate": "surrogate"}


class UnknownComponentError(ValueError):
    """A config names a component that is not registered."""


class MissingExtraError(ValueError):
    """A registered component needs an optional extra (``pip install 'hpoflow[peers]'``) that is not installed."""


@dataclass(frozen=True)
class Entry:
    """One registered component.

    Attributes:
        kind: algorithm, task or surrogate.
        name: the registry key a config names (``algo=gp_ei``).
        target: ``"package.module:attribute"`` (imported on first use) or the object itself.
            Algorithms are classes called as ``cls(config, ctx)``; tasks are factories called with the
            config's fields and ``seed``; surrogates are called as ``factory(config, dim, dtype, device)``.
        config: the frozen dataclass holding the component's settings.
        defaults: field values that differ from the dataclass defaults for this name.
        description: one line for ``--help`` and the README.
        smoke: CLI overrides for the registry-wide smoke/contract tests, e.g. ``("task=ridge",)`` for an
            algorithm that needs a differentiable task (default: runs on ``task=branin``).
        tasks: algorithms only: the tasks it is meant for (``--help`` names them; a test runs the algorithm at
            its YAML defaults on each). Empty: any black-box task (tested on ``branin`` and ``breast_cancer``).
        requires: top-level modules the component imports that are not core dependencies.
        extra: the optional extra of hpoflow that installs ``requires`` (named in the error when one is missing).
    """

    kind: str
    name: str
    target: str | Callable[..., Any]
    config: type
    defaults: dict[str, Any] = field(default_factory=dict)
    description: str = ""
    smoke: tuple[str, ...] = ()
    tasks: tuple[str, ...] = ()
    requires: tuple[str, ...] = ()
    extra: str = ""

    def missing(self) -> str | None:
        """The first module of ``requires`` that cannot be imported, or None (a spec look-up, no import)."""
        for module in self.requires:
            try:
                if importlib.util.find_spec(module) is None:
                    return module
            except (ImportError, ValueError):
                return module
        return None

    def require(self) -> None:
        """Raise :class:`MissingExtraError` naming the ``pip install`` to run if a required module is missing."""
        module = self.missing()
        if module is not None:
            group = GROUP_OF_KIND[self.kind]
            hint = f"pip install 'hpoflow[{self.extra}]'" if self.extra else f"pip install {module}"
            raise MissingExtraError(f"{group}={self.name} needs '{module}', which is not installed; run: {hint}")

    def load(self) -> Callable[..., Any]:
        self.require()
        if not isinstance(self.target, str):
            return self.target
        module, _, attr = self.target.partition(":")
        return getattr(importlib.import_module(module), attr)

    def make_config(self, **overrides: Any) -> Any:
        return self.config(**{**self.defaults, **overrides})


_REGISTRY: dict[str, dict[str, Entry]] = {kind: {} for kind in KINDS}
_PLUGINS_LOADED = False


def register(kind: str, name: str, target: str | Callable[..., Any], config: type, description: str = "",
             smoke: tuple[str, ...] = (), tasks: tuple[str, ...] = (), requires: tuple[str, ...] = (),
             extra: str = "", **defaults: Any) -> Entry:
    """Add (or replace) a component under ``name``; ``defaults`` override the config dataclass's defaults.

    ``requires``/``extra``: modules outside the core dependencies and the optional extra that installs them;
    the component is still listed (``--help``, README) without them, and selecting it names the install.
    """
    if kind not in KINDS:
        raise ValueError(f"kind '{kind}' is unknown; allowed: {', '.join(KINDS)}")
    entry = Entry(kind, name, target, config, {"name": name, **defaults}, description, tuple(smoke),
                  tuple(tasks), tuple(requires), extra)
    _REGISTRY[kind][name] = entry
    return entry


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


def _load_plugins() -> None:
    global _PLUGINS_LOADED
    if _PLUGINS_LOADED:
        return
    _PLUGINS_LOADED = True
    from importlib.metadata import entry_points

    from hpoflow.config.builtins import register_builtins

    register_builtins(register)

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
        allowed = ", ".join(sorted(_REGISTRY[kind]))
        raise UnknownComponentError(f"{GROUP_OF_KIND[kind]}='{name}' is unknown; allowed: {allowed}") from None
