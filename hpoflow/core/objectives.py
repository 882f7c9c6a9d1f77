"""Several objectives and constraints: the spec, Pareto dominance, feasibility and hypervolume.

Conventions (one place for all of them):

* A task reports its named values raw (``{"acc": 0.93, "fit_s": 1.2}``); the spec says each objective's direction
  (``"min"`` or ``"max"``) and each constraint's bound (``{"mem_mb": ("<=", 512)}``).
* The single ``Evaluation.value`` of a multi-objective evaluation is the **first** objective in minimisation form
  (``+v`` for ``min``, ``-v`` for ``max``): a single-objective method minimises it, and ``best_value`` tracks it.
* Dominance and hypervolume work on the minimisation form of every objective; the reference point is given in the
  objectives' own units (raw) and converted the same way. Only feasible points enter the front.

Hypervolume is exact and hand-written (recursive slicing, exact for any number of objectives, fast for 2-3): BoTorch
has one but is an optional extra, and pymoo would add a compiled dependency for ~30 lines of tested arithmetic.
"""
from __future__ import annotations

import math
import operator
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from hpoflow.core.records import Evaluation

DIRECTIONS = ("min", "max")
_OPERATORS: dict[str, Callable[[float, float], bool]] = {"<=": operator.le, ">=": operator.ge, "<": operator.lt,
                                                         ">": operator.gt}


@dataclass(frozen=True)
class Objectives:
    """Which named values are objectives (with a direction) and which are constraints (with a bound).

    Attributes:
        directions: ``{name: "min" | "max"}`` in order; the first one is ``Evaluation.value``.
        constraints: ``{name: (op, bound)}`` with ``op`` one of ``<=``, ``>=``, ``<``, ``>``.
        reference: the hypervolume reference point in raw units (one number per objective), or None (no
            hypervolume is computed).
    """

    directions: dict[str, str]
    constraints: dict[str, tuple[str, float]] = field(default_factory=dict)
    reference: tuple[float, ...] | None = None

    @property
    def names(self) -> list[str]:
        return list(self.directions)

    def signs(self) -> list[float]:
        """+1 for a minimised objective, -1 for a maximised one: ``sign * value`` is minimised."""
        return [1.0 if d == "min" else -1.0 for d in self.directions.values()]

    def check(self, values: Mapping[str, Any]) -> None:
        """Every objective and constraint is among ``values``.

        Raises:
            ValueError: one line naming the missing value and the values returned.
        """
        returned = ", ".join(values) or "none"
        for kind, names in (("objective", self.directions), ("constraint", self.constraints)):
            for name in names:
                if name not in values:
                    raise ValueError(f"{kind} '{name}' is not among the values the task returned ({returned}); "
                                     f"allowed: one of them")

    def minimised(self, values: Mapping[str, float]) -> tuple[float, ...]:
        """The objectives of ``values`` in minimisation form, in spec order."""
        return tuple(s * float(values[n]) for s, n in zip(self.signs(), self.directions))

    def evaluation(self, out: Any) -> Evaluation:
        """What the task returned (a dict of named values, or an Evaluation with ``values``) as an Evaluation whose
        ``value`` is the first objective in minimisation form.

        Raises:
            ValueError: an objective or constraint the task does not return (one line).
            TypeError: neither a dict nor an Evaluation.
        """
        if isinstance(out, Evaluation):
            values: dict[str, float] = dict(out.values)
        elif isinstance(out, Mapping):
            values = {str(k): _number(k, v) for k, v in out.items()}
        else:
            raise TypeError(f"the objective returned {type(out).__name__} {out!r:.80}; with objectives it must return "
                            f"a dict of values ({', '.join(self.names)})")
        self.check(values)
        first = self.minimised(values)[0]
        if isinstance(out, Evaluation):
            return replace(out, value=first, values=values)
        return Evaluation(value=first, values=values)

    def feasible(self, values: Mapping[str, float]) -> bool:
        """Every constraint holds (a missing or non-finite constrained value is infeasible)."""
        for name, (op, bound) in self.constraints.items():
            v = values.get(name)
            if v is None or not math.isfinite(v) or not _OPERATORS[op](float(v), bound):
                return False
        return True

    def reference_minimised(self) -> tuple[float, ...] | None:
        if self.reference is None:
            return None
        return tuple(s * r for s, r in zip(self.signs(), self.reference))

    def describe(self) -> dict[str, Any]:
        """The spec as plain values (what a run records)."""
        out: dict[str, Any] = {"objectives": dict(self.directions)}
        if self.constraints:
            out["constraints"] = {k: [op, b] for k, (op, b) in self.constraints.items()}
        if self.reference is not None:
            out["reference"] = list(self.reference)
        return out


def parse_objectives(objectives: Any, constraints: Any = None, reference: Any = None) -> Objectives | None:
    """``{"f1": "min", "f2": "max"}``, ``{"mem_mb": ("<=", 512)}`` and an optional reference point as Objectives.

    Returns None when nothing is given (a single-objective run); constraints and a reference need objectives.

    Raises:
        ValueError: one line naming the bad entry and what is allowed.
    """
    if objectives is None and constraints is None and reference is None:
        return None
    if not isinstance(objectives, Mapping) or not objectives:
        raise ValueError(f"objectives={objectives!r:.80} is not an objectives spec; allowed: a dict {{name: 'min' | "
                         "'max'}} with at least one entry")
    directions: dict[str, str] = {}
    for name, direction in objectives.items():
        if not isinstance(name, str) or not name:
            raise ValueError(f"objectives: {name!r} is not a value name; allowed: a non-empty string")
        if direction not in DIRECTIONS:
            raise ValueError(f"objectives['{name}']={direction!r} is not a direction; allowed: 'min', 'max'")
        directions[name] = str(direction)
    limits: dict[str, tuple[str, float]] = {}
    if constraints is not None and not isinstance(constraints, Mapping):
        raise ValueError(f"constraints={constraints!r:.80} is not a constraints spec; allowed: a dict {{name: (op, "
                         "bound)}} with op one of <=, >=, <, >")
    for name, spec in (constraints or {}).items():
        if not isinstance(name, str) or not name:
            raise ValueError(f"constraints: {name!r} is not a value name; allowed: a non-empty string")
        if not isinstance(spec, (tuple, list)) or len(spec) != 2 or spec[0] not in _OPERATORS:
            raise ValueError(f"constraints['{name}']={spec!r:.60} is not a constraint; allowed: (op, bound) with op "
                             f"one of {', '.join(_OPERATORS)}")
        bound = spec[1]
        if isinstance(bound, bool) or not isinstance(bound, (int, float)) or not math.isfinite(bound):
            raise ValueError(f"constraints['{name}'] bound {bound!r} is not a finite number")
        limits[name] = (str(spec[0]), float(bound))
    ref: tuple[float, ...] | None = None
    if reference is not None:
        if isinstance(reference, Mapping):
            missing = [n for n in directions if n not in reference]
            if missing or len(reference) != len(directions):
                raise ValueError(f"reference={dict(reference)!r:.80} must give one number per objective "
                                 f"({', '.join(directions)})")
            reference = [reference[n] for n in directions]
        if (not isinstance(reference, (tuple, list)) or len(reference) != len(directions)
                or any(isinstance(r, bool) or not isinstance(r, (int, float)) or not math.isfinite(r)
                       for r in reference)):
            raise ValueError(f"reference={reference!r:.80} is not a reference point; allowed: {len(directions)} "
                             f"finite numbers, one per objective ({', '.join(directions)})")
        ref = tuple(float(r) for r in reference)
    return Objectives(directions, limits, ref)


def _number(name: Any, value: Any) -> float:
    if hasattr(value, "item") and not isinstance(value, (int, float)):  # a NumPy scalar, a 1-element array/tensor
        try:
            value = value.item()
        except (ValueError, RuntimeError):
            pass
    if isinstance(value, (bool, str, bytes)) or not isinstance(value, (int, float)):
        raise TypeError(f"the objective returned {name}={value!r:.60}; expected a number")
    return float(value)


def dominates(a: Sequence[float], b: Sequence[float]) -> bool:
    """``a`` Pareto-dominates ``b`` (minimisation): no worse in every objective, better in one."""
    return all(x <= y for x, y in zip(a, b)) and any(x < y for x, y in zip(a, b))


def non_dominated(points: Sequence[Sequence[float]]) -> list[int]:
    """Indices of the points no other point dominates (minimisation; duplicates all kept), in input order."""
    import numpy as np

    if len(points) == 0:
        return []
    pts = np.asarray(points, dtype=float)  # (n, m)
    return [i for i, p in enumerate(pts) if not ((pts <= p).all(1) & (pts < p).any(1)).any()]


def hypervolume(points: Iterable[Sequence[float]], reference: Sequence[float]) -> float:
    """The volume dominated by ``points`` and bounded by ``reference`` (minimisation), exactly.

    Points that do not strictly dominate the reference in every objective add nothing. Recursive slicing along the
    last objective (Hypervolume by Slicing Objectives, While et al. 2006): exact, O(n^(d-1) log n).
    """
    ref = tuple(float(r) for r in reference)
    pts = [tuple(float(v) for v in p) for p in points]
    pts = [p for p in pts if len(p) == len(ref) and all(v < r for v, r in zip(p, ref))]
    return _hv(pts, ref)


def _hv(pts: list[tuple[float, ...]], ref: tuple[float, ...]) -> float:
    if not pts:
        return 0.0
    if len(ref) == 1:
        return ref[0] - min(p[0] for p in pts)
    if len(ref) == 2:  # sweep in the first objective, keeping the lowest second objective so far
        total, best = 0.0, ref[1]
        for x, y in sorted(pts):
            if y < best:
                total += (ref[0] - x) * (best - y)
                best = y
        return total
    pts = sorted(pts, key=lambda p: p[-1])
    total = 0.0
    for i, p in enumerate(pts):  # slab [p[-1], next z): the (d-1)-volume of every point below it
        top = pts[i + 1][-1] if i + 1 < len(pts) else ref[-1]
        if top > p[-1]:
            total += (top - p[-1]) * _hv([q[:-1] for q in pts[: i + 1]], ref[:-1])
    return total


@dataclass
class ParetoBook:
    """The run's feasible non-dominated points so far, and the per-round metrics of several objectives.

    ``add`` returns ``feasible`` (1/0, when there are constraints), ``hypervolume`` (when a reference point is
    known) and, for one objective with constraints, ``best_feasible`` (the best feasible value so far, raw units).
    """

    objectives: Objectives
    front: list[tuple[float, ...]] = field(default_factory=list)  # minimisation form

    def add(self, values: Mapping[str, float] | None) -> dict[str, float]:
        out: dict[str, float] = {}
        spec = self.objectives
        if values is not None and all(n in values for n in spec.directions):
            ok = spec.feasible(values)
            if spec.constraints:
                out["feasible"] = 1.0 if ok else 0.0
            point = spec.minimised(values)
            if ok and all(math.isfinite(v) for v in point):
                if not any(dominates(q, point) or q == point for q in self.front):
                    self.front = [q for q in self.front if not dominates(point, q)] + [point]
        ref = spec.reference_minimised()
        if ref is not None:
            out["hypervolume"] = hypervolume(self.front, ref)
        out.update(self._best_feasible())
        return out

    def _best_feasible(self) -> dict[str, float]:
        """One objective with constraints: ``best_feasible``, the best feasible value so far (raw units)."""
        spec = self.objectives
        if len(spec.directions) != 1 or not spec.constraints or not self.front:
            return {}
        return {"best_feasible": spec.signs()[0] * min(p[0] for p in self.front)}

    def summary(self) -> dict[str, Any]:
        """The front's size and (with a reference point) hypervolume, for the run's summary."""
        out: dict[str, Any] = {"pareto_size": len(self.front)}  # a count: an int
        ref = self.objectives.reference_minimised()
        if ref is not None:
            out["hypervolume"] = hypervolume(self.front, ref)
        out.update(self._best_feasible())
        return out


def pareto_front(objectives: Objectives, rows: Iterable[tuple[dict[str, Any], Mapping[str, float]]]
                 ) -> list[dict[str, Any]]:
    """``[{"config": ..., "values": ...}]``: the feasible, non-dominated ones of ``(config, values)`` rows (raw
    values, in evaluation order; a point seen twice is listed once)."""
    kept: list[tuple[dict[str, Any], dict[str, float]]] = []
    points: list[tuple[float, ...]] = []
    for config, values in rows:
        if not values or any(n not in values for n in objectives.directions) or not objectives.feasible(values):
            continue
        point = objectives.minimised(values)
        if all(math.isfinite(v) for v in point) and point not in points:
            kept.append((dict(config), dict(values)))
            points.append(point)
    return [{"config": kept[i][0], "values": kept[i][1]} for i in non_dominated(points)]


def best_of_front(objectives: Objectives, front: Sequence[Mapping[str, Any]]) -> tuple[dict[str, Any] | None,
                                                                                      float | None]:
    """The point of ``front`` (``pareto_front``'s output) best in the first objective: its config and that
    objective's value in its own sign (a ``"max"`` objective is not negated); ``(None, None)`` for an empty front.

    With one objective and constraints this is the best feasible evaluation; ties go to the earliest.
    """
    if not front:
        return None, None
    name, sign = objectives.names[0], objectives.signs()[0]
    best = min(front, key=lambda p: sign * float(p["values"][name]))
    return dict(best["config"]), float(best["values"][name])
