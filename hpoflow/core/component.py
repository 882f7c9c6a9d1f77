"""What a component declares to be selectable by name: its registry entry (name, lazy target, config class, ...).

A built-in declares its entries next to its config dataclass, in a module-level ``BUILTINS`` list of its
``*_config.py`` (or ``config.py``/``configs.py``) module, with :func:`algorithm`, :func:`task` and
:func:`surrogate`; :mod:`hpoflow.config.registry` finds them by importing those modules. Plain data: the
target is an ``"package.module:attribute"`` string imported on first use, so start-up imports no torch.
"""
from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

KINDS = ("algorithm", "task", "surrogate")
GROUP_OF_KIND = {"algorithm": "algo", "task": "task", "surrogate": "surrogate"}


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
        defaults: field values that differ from the dataclass defaults for this name (and ``name``).
        description: one line for ``--help``, the README and the first line of its YAML file.
        smoke: CLI overrides for the registry-wide smoke/contract tests, e.g. ``("task=ridge",)`` for an
            algorithm that needs a differentiable task (default: runs on ``task=branin``).
        tasks: algorithms only: the tasks it is meant for (``--help`` names them; a test runs the algorithm at
            its YAML defaults on each). Empty: any black-box task (tested on ``branin`` and ``breast_cancer``).
        requires: top-level modules the component imports that are not core dependencies.
        extra: the optional extra of hpoflow that installs ``requires`` (named in the error when one is missing).
        install: the command to name instead, for a library no extra can hold (e.g. one whose pins clash).
        surrogate: algorithms only: the surrogate option its generated YAML file selects (``surrogate=...`` still
            wins); empty: the config's default surrogate. A plug-in selects its surrogate in its own YAML file.
        model_class: surrogates only: the name of the class the factory builds (``ExactGP``), and
        model_provides: the protocols of :mod:`hpoflow.surrogates.base` that class provides, by name. With both
            declared (names no config field takes, since ``defaults`` share the keywords),
            checking an algorithm x surrogate pair while validating imports nothing (no torch, no gpytorch);
            without them the factory's module is imported to read its class. tests/test_surrogate_pairs.py checks
            the built-ins' declarations against their classes.
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
    surrogate: str = ""
    install: str = ""
    model_class: str = ""
    model_provides: tuple[str, ...] = ()

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
            hint = self.install or (f"pip install 'hpoflow[{self.extra}]'" if self.extra else f"pip install {module}")
            raise MissingExtraError(f"{group}={self.name} needs '{module}', which is not installed; run: {hint}")

    def load(self) -> Callable[..., Any]:
        self.require()
        if not isinstance(self.target, str):
            return self.target
        module, _, attr = self.target.partition(":")
        return getattr(importlib.import_module(module), attr)

    def make_config(self, **overrides: Any) -> Any:
        return self.config(**{**self.defaults, **overrides})


def entry(kind: str, name: str, target: str | Callable[..., Any], config: type, description: str = "", *,
          smoke: tuple[str, ...] = (), tasks: tuple[str, ...] = (), requires: tuple[str, ...] = (),
          extra: str = "", surrogate: str = "", install: str = "", model_class: str = "",
          model_provides: tuple[str, ...] = (), **defaults: Any) -> Entry:
    """An :class:`Entry`; ``defaults`` override the config dataclass's defaults for this name only."""
    if kind not in KINDS:
        raise ValueError(f"kind '{kind}' is unknown; allowed: {', '.join(KINDS)}")
    if surrogate and kind != "algorithm":
        raise ValueError(f"{GROUP_OF_KIND[kind]}={name}: only an algorithm selects a surrogate")
    if (model_class or model_provides) and kind != "surrogate":
        raise ValueError(f"{GROUP_OF_KIND[kind]}={name}: only a surrogate declares the model it builds")
    if bool(model_class) != bool(model_provides):
        raise ValueError(f"surrogate={name}: declare both model_class= and model_provides=, or neither")
    return Entry(kind, name, target, config, {"name": name, **defaults}, description, tuple(smoke), tuple(tasks),
                 tuple(requires), extra, surrogate, install, model_class, tuple(model_provides))


def algorithm(name: str, target: str | Callable[..., Any], config: type, description: str = "",
              **options: Any) -> Entry:
    """An algorithm's entry: ``algorithm("gp_ei", "hpoflow.algorithms.gp_bo:GPEI", GPEIConfig, "GP-EI")``."""
    return entry("algorithm", name, target, config, description, **options)


def task(name: str, target: str | Callable[..., Any], config: type, description: str = "", **options: Any) -> Entry:
    """A task's entry; ``target`` is a factory ``f(**config_fields, seed) -> Task``."""
    return entry("task", name, target, config, description, **options)


def surrogate(name: str, target: str | Callable[..., Any], config: type, description: str = "",
              **options: Any) -> Entry:
    """A surrogate's entry; ``target`` is a factory ``f(config, dim, dtype, device)``."""
    return entry("surrogate", name, target, config, description, **options)
