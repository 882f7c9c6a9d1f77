"""Algorithm x surrogate: refuse, while validating, a surrogate that lacks the capability an algorithm declares.

Each algorithm class names the protocol of :mod:`hpoflow.surrogates.base` it uses (``surrogate_protocol``); each
registered surrogate's factory names the class it builds (its return annotation, or the class itself). The pair is
checked class against protocol (:func:`hpoflow.surrogates.base.provides`), so no model is built and no run is
created before ``algo=turbo surrogate=nn`` is refused in one line. A registry entry that declares its model's
class and protocols (``model_class=``, ``model_provides=``: every built-in) is checked from that declaration,
importing nothing (validating ``algo=auto`` imported torch and gpytorch, 1.1 CPU s, before); only an entry without
one (a plug-in) has its module imported to read the class.
"""
from __future__ import annotations

import importlib
import typing
from typing import Any

from hpoflow.config import registry
from hpoflow.surrogates.base import needs, provides


def _import(target: str) -> Any:
    module, _, attr = target.replace(":", ".").rpartition(".")
    return getattr(importlib.import_module(module), attr)


def built_class(factory: Any) -> type | None:
    """The class a surrogate factory builds: the factory itself if it is a class, else its return annotation."""
    if isinstance(factory, type):
        return factory
    try:
        hint = typing.get_type_hints(factory).get("return")
    except Exception:  # noqa: BLE001 - an unresolvable annotation: the algorithm checks the built model instead
        return None
    return hint if isinstance(hint, type) else None


def fitting(protocol: type) -> list[str]:
    """The registered surrogates (their extras installed) whose models provide ``protocol``."""
    out = []
    for entry in registry.entries("surrogate"):
        if entry.missing():
            continue
        if entry.model_provides:  # declared: no import
            if protocol.__name__ in entry.model_provides:
                out.append(entry.name)
            continue
        cls = built_class(entry.load())
        if cls is not None and provides(cls, protocol):
            out.append(entry.name)
    return out


def refusal(algo_name: str, algo_entry: registry.Entry | None, algo_target: str | None,
            surrogate_name: str, surrogate_entry: registry.Entry | None, surrogate_target: str | None) -> str | None:
    """The one-line refusal of the pair, or None when the surrogate provides what the algorithm uses.

    An algorithm that declares no protocol takes any surrogate (it builds none); a surrogate whose class cannot
    be told from its factory is left to the algorithm's own check of the built model.
    """
    try:
        algorithm = algo_entry.load() if algo_entry is not None else _import(str(algo_target))
    except (ImportError, AttributeError):  # a user's _target_ that does not import: the build step names it
        return None
    protocol = getattr(algorithm, "surrogate_protocol", None)
    if protocol is None:
        return None
    if surrogate_entry is not None and surrogate_entry.model_provides:  # declared by the entry: nothing imported
        surrogate_entry.require()
        if protocol.__name__ in surrogate_entry.model_provides:
            return None
        got = f"{surrogate_entry.model_class} (surrogate={surrogate_name})"
        return needs(algo_name, protocol, got, fitting(protocol))
    try:
        factory = surrogate_entry.load() if surrogate_entry is not None else _import(str(surrogate_target))
    except (ImportError, AttributeError):
        return None
    cls = built_class(factory)
    if cls is None or provides(cls, protocol):
        return None
    return needs(algo_name, protocol, f"{cls.__name__} (surrogate={surrogate_name})", fitting(protocol))
