"""The maths of the report's several-objectives section: reference fronts, normalised hypervolume regret, empirical
attainment surfaces and non-dominated (cost, regret) points.

Every point here is in minimisation form (``Objectives.minimised``: ``+v`` for ``min``, ``-v`` for ``max``), one row
per point, one column per objective: arrays of shape (n, m).

Normalisation: a task's *box* runs from its ideal point (the best value of each objective on the reference front)
to its hypervolume reference point; objectives are mapped linearly onto ``[0, 1]^m`` by it, so the hypervolume of a
front is a fraction of the box and *hypervolume regret* = HV(reference front) - HV(front found), both normalised.
A linear map scales every hypervolume by the same factor, so the normalised regret is the raw regret divided by the
box's volume.

Attainment: the k-th empirical attainment surface of n runs (Fonseca, Grunert da Fonseca, Paquete 2011) is the
boundary of the points of objective space that at least k of the n runs' fronts weakly dominate; the 50% surface
(k = ceil(n/2)) is the "median front". moocore computes it (any number of objectives) when it is installed
(``pip install moocore``, optional); without it, a 2-objective sweep here computes the same points.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from hpoflow.core.objectives import dominates, hypervolume, non_dominated

FRONT_POINTS = 2001          # samples of a known front (its figure, its ideal point)
REFERENCE_MARGIN = 0.1       # without a declared reference point: nadir + 10% of the front's range


def known_front(task: str, n: int = FRONT_POINTS) -> np.ndarray | None:
    """The Pareto front of a built-in two-objective problem, sampled densely: (n', 2), sorted by f1; None if the
    task has no front known here. ZDT1 ``f2 = 1 - sqrt(f1)``, ZDT2 ``f2 = 1 - f1^2``, ZDT3 the non-dominated part of
    ``1 - sqrt(f1) - f1 sin(10 pi f1)``, DTLZ2 the quarter unit circle (``hpoflow.tasks.multi_objective``)."""
    t = np.linspace(0.0, 1.0, n)
    if task == "zdt1":
        return np.column_stack([t, 1.0 - np.sqrt(t)])
    if task == "zdt2":
        return np.column_stack([t, 1.0 - t**2])
    if task == "zdt3":
        f2 = 1.0 - np.sqrt(t) - t * np.sin(10.0 * np.pi * t)
        keep = f2 < np.minimum.accumulate(np.concatenate([[np.inf], f2[:-1]]))  # f1 rises: below every earlier f2
        return np.column_stack([t, f2])[keep]
    if task == "dtlz2":
        angle = t * np.pi / 2
        front = np.column_stack([np.cos(angle), np.sin(angle)])
        return np.where(np.abs(front) < 1e-12, 0.0, front)  # cos(pi/2) = 6e-17 in floating point
    return None


@dataclass(frozen=True)
class Box:
    """The normalisation box of a task: ``ideal`` (best of each objective) to ``reference`` (the hypervolume
    reference point), both (m,) in minimisation form."""

    ideal: np.ndarray
    reference: np.ndarray

    @property
    def volume(self) -> float:
        return float(np.prod(self.reference - self.ideal))

    def normalise(self, points: np.ndarray) -> np.ndarray:
        """(n, m) -> (n, m): the ideal point goes to 0, the reference point to 1."""
        return (np.asarray(points, float) - self.ideal) / (self.reference - self.ideal)

    def hypervolume(self, points: np.ndarray) -> float:
        """The normalised hypervolume of ``points`` (a fraction of the box; 0 for no point)."""
        pts = np.asarray(points, float).reshape(-1, len(self.ideal))
        return hypervolume(self.normalise(pts).tolist(), [1.0] * len(self.ideal)) if len(pts) else 0.0


def box_around(front: np.ndarray, reference: Sequence[float] | None = None,
               margin: float = REFERENCE_MARGIN) -> tuple[Box, str]:
    """The box of ``front`` (n, m): its ideal point, and ``reference`` where given, else its nadir plus ``margin``
    of its range in each objective (1 where the range is 0). Returns the box and how its reference was chosen."""
    pts = np.asarray(front, float)
    ideal, nadir = pts.min(axis=0), pts.max(axis=0)
    if reference is not None:
        return Box(ideal, np.asarray(reference, float)), "the task's reference point"
    span = np.where(nadir > ideal, nadir - ideal, 1.0)
    return Box(ideal, nadir + margin * span), f"nadir of the reference front + {margin:.0%} of its range"


def running_front(points: np.ndarray) -> list[np.ndarray]:
    """The non-dominated points after each row of ``points`` (T, m); a row with a NaN (not evaluated, failed or
    infeasible) adds nothing. Returns T arrays (k_t, m)."""
    front: list[tuple[float, ...]] = []
    out = []
    for row in np.asarray(points, float):
        if np.all(np.isfinite(row)):
            p = tuple(row)
            if not any(dominates(q, p) or q == p for q in front):
                front = [q for q in front if not dominates(p, q)] + [p]
        out.append(np.array(front, float).reshape(-1, points.shape[1]))
    return out


def attainment_surface(fronts: Sequence[np.ndarray], percentile: float = 50.0) -> np.ndarray:
    """The points of the empirical attainment surface that at least ``ceil(percentile/100 · n)`` of the n
    ``fronts`` (each (k_i, m)) attain: (p, m), sorted by the first objective; empty (0, m) when too few runs have
    a point. moocore's ``eaf`` where installed, else :func:`attainment_surface_2d` (2 objectives)."""
    fronts = [np.asarray(f, float) for f in fronts]
    m = next((f.shape[1] for f in fronts if f.size), 2)
    level = max(1, math.ceil(percentile / 100.0 * len(fronts) - 1e-9))
    if sum(1 for f in fronts if len(f)) < level:
        return np.zeros((0, m))
    try:
        import moocore
    except ImportError:
        return attainment_surface_2d(fronts, level)
    sets = np.concatenate([np.full(len(f), i) for i, f in enumerate(fronts) if len(f)])
    points = np.vstack([f for f in fronts if len(f)])
    eaf = moocore.eaf(points, sets + 1, percentiles=[100.0 * level / len(fronts)])
    surface = eaf[:, :m]
    return surface[np.lexsort(surface.T[::-1])]


def attainment_surface_2d(fronts: Sequence[np.ndarray], level: int) -> np.ndarray:
    """The ``level``-th attainment surface of two-objective ``fronts`` by a sweep over the first objective: at each
    candidate f1, the level-th smallest over runs of the best f2 a run attains with f1' <= f1. (p, 2)."""
    if any(len(f) and f.shape[1] != 2 for f in fronts):
        raise ValueError("attainment without moocore needs 2 objectives; pip install moocore for more")
    xs = np.unique(np.concatenate([f[:, 0] for f in fronts if len(f)]))
    out: list[tuple[float, float]] = []
    for x in xs:
        ys = sorted(float(f[f[:, 0] <= x, 1].min()) if (f[:, 0] <= x).any() else math.inf for f in fronts)
        y = ys[level - 1]
        if math.isfinite(y) and (not out or y < out[-1][1]):
            out.append((float(x), y))
    return np.array(out, float).reshape(-1, 2)


def cost_regret_front(cost: np.ndarray, regret: np.ndarray) -> np.ndarray:
    """Indices of the non-dominated (cost, regret) pairs (both minimised; NaN pairs left out), by cost."""
    c, r = np.asarray(cost, float), np.asarray(regret, float)
    ok = np.flatnonzero(np.isfinite(c) & np.isfinite(r))
    keep = ok[non_dominated(np.column_stack([c[ok], r[ok]]).tolist())] if len(ok) else ok
    return keep[np.argsort(c[keep], kind="stable")]
