"""A task's fidelity: the resource one evaluation may be given (epochs, boosting rounds, inner steps, a data
fraction), from a cheap, biased ``min`` to the full ``max``; and the rung levels multi-fidelity methods use.

A task that declares a :class:`Fidelity` can be evaluated at any level in ``[min, max]`` (``Task.evaluate_at``);
what an evaluation at level ``r`` costs is ``r`` fidelity units by default (training from scratch), or only the
units added when the task continues a trial from a level it reached before. ``budget.cost`` then counts fidelity
units spent across trials, so methods compare against compute, not against evaluations.
"""
from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any

__all__ = ["Fidelity", "curve_key", "parse_fidelity", "rung_levels"]


def _number(value: Any) -> bool:
    """A finite real number that a float holds (``10**400`` is not one)."""
    if not isinstance(value, numbers.Real) or isinstance(value, bool):
        return False
    try:
        return math.isfinite(float(value))
    except OverflowError:
        return False


@dataclass(frozen=True)
class Fidelity:
    """The fidelity a task can be evaluated at.

    Attributes:
        name: what it counts (``epochs``, ``n_estimators``, ``inner_steps``, ``fraction``): the keyword a user's
            objective takes it by, and the label of learning curves.
        min: the lowest level worth evaluating (> 0).
        max: the full fidelity: the level the task's value means without a fidelity.
        integer: levels are whole numbers (epochs); rung levels are then rounded.

    Raises ``ValueError`` (one line naming the bad value and what is allowed) on a bad spec.
    """

    name: str
    min: float
    max: float
    integer: bool = True

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.isidentifier():
            raise ValueError(f"fidelity name {self.name!r} must be an identifier (the objective's keyword)")
        for key in ("min", "max"):
            if not _number(getattr(self, key)):
                shown = repr(getattr(self, key))
                shown = shown if len(shown) <= 40 else f"{shown[:20]}...({len(shown)} digits)"
                raise ValueError(f"fidelity {self.name}: {key}={shown} must be a finite number")
        if not isinstance(self.integer, bool):
            raise ValueError(f"fidelity {self.name}: integer={self.integer!r} must be true or false")
        if not self.min > 0:
            raise ValueError(f"fidelity {self.name}: min={self.min!r} must be > 0 (a positive resource)")
        if self.min > self.max:
            raise ValueError(f"fidelity {self.name}: min={self.min!r} > max={self.max!r}; allowed: 0 < min <= max")
        if self.integer:
            for key in ("min", "max"):
                value = getattr(self, key)
                if float(value) != int(value):
                    raise ValueError(f"fidelity {self.name}: {key}={value!r} is fractional but the fidelity is "
                                     "integer (give whole numbers, or integer=false)")
                object.__setattr__(self, key, int(value))
        else:
            object.__setattr__(self, "min", float(self.min))
            object.__setattr__(self, "max", float(self.max))

    def level(self, value: float) -> float:
        """``value`` clipped to ``[min, max]`` (rounded to a whole number for an integer fidelity)."""
        clipped = min(max(float(value), float(self.min)), float(self.max))
        return int(round(clipped)) if self.integer else clipped

    def check(self, value: Any) -> float:
        """``value`` as a level of this fidelity.

        Raises:
            ValueError: not a number in ``[min, max]``, or fractional for an integer fidelity.
        """
        if not _number(value) or not self.min <= float(value) <= self.max:
            raise ValueError(f"{self.name}={value!r} is outside the fidelity's range [{self.min}, {self.max}]")
        if self.integer and float(value) != int(value):
            raise ValueError(f"{self.name}={value!r} must be a whole number")
        return int(value) if self.integer else float(value)

    def describe(self) -> dict[str, Any]:
        """What a run records as ``task.fidelity``."""
        return {"name": self.name, "min": self.min, "max": self.max, "integer": self.integer}


def parse_fidelity(spec: Any) -> Fidelity | None:
    """A :class:`Fidelity` from what the library and the config accept: None, a Fidelity, a tuple
    ``(name, min, max)`` or ``(name, min, max, integer)`` (integer defaults to both bounds being ints), or a
    mapping with those keys.

    Raises:
        ValueError: anything else, or a bad spec (one line).
    """
    if spec is None or isinstance(spec, Fidelity):
        return spec
    if isinstance(spec, dict) or hasattr(spec, "keys"):
        d = dict(spec)
        unknown = set(d) - {"name", "min", "max", "integer"}
        if unknown or not {"name", "min", "max"} <= set(d):
            raise ValueError(f"fidelity={d!r} must have the keys name, min, max (and optionally integer)")
        integer = d.get("integer")
        if integer is None:
            integer = all(isinstance(d[k], numbers.Integral) for k in ("min", "max"))
        return Fidelity(d["name"], d["min"], d["max"], integer)
    if isinstance(spec, (tuple, list)) and len(spec) in (3, 4):
        name, lo, hi = spec[:3]
        integer = spec[3] if len(spec) == 4 else all(
            isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in (lo, hi))
        return Fidelity(name, lo, hi, integer)
    raise ValueError(f"fidelity={spec!r} is not a fidelity; allowed: (name, min, max), (name, min, max, integer) "
                     "or a dict with those keys")


def rung_levels(fidelity: Fidelity, eta: float, min_level: float | None = None) -> list[float]:
    """The rung levels ``min * eta^k`` up to and including ``max`` (the top rung is always ``max``).

    Levels of an integer fidelity are rounded, and repeated levels dropped: ``(epochs, 1, 27), eta=3`` gives
    ``[1, 3, 9, 27]``; ``(epochs, 1, 20), eta=3`` gives ``[1, 3, 9, 20]``.
    """
    if not eta > 1:
        raise ValueError(f"eta={eta!r} must be > 1 (the factor between rung levels)")
    lo = float(fidelity.min if min_level is None else fidelity.level(min_level))
    levels: list[float] = []
    k = 0
    while True:
        r = lo * eta ** k
        if r >= float(fidelity.max) * (1 - 1e-9):
            break
        level = fidelity.level(r)
        if not levels or level > levels[-1]:
            levels.append(level)
        k += 1
    top = fidelity.level(fidelity.max)
    if levels and levels[-1] >= top:
        levels.pop()
    levels.append(top)
    return levels


def curve_key(config_id: int) -> str:
    """The MLflow metric a configuration's learning curve is logged under (step = the fidelity step), one per
    configuration: ``lc/config_0007``; the MLflow UI charts the ``lc`` group one configuration per chart."""
    return f"lc/config_{int(config_id):04d}"
