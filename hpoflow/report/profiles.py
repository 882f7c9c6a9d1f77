"""COCO-style data profiles: the ECDF of (run, target) pairs reached against the number of evaluations.

COCO reads BBOB results as the empirical cumulative distribution of run lengths: for a set of targets, each
(problem, trial) pair and each target is "solved" at the first evaluation whose best-so-far value reaches the
target; the profile at budget ``b`` is the fraction of all (run, target) pairs solved within ``b`` evaluations,
aggregated over functions, per dimension, and by BBOB function group (Hansen et al., "COCO: Performance
assessment", 2021). COCO's targets are 51 values log-spaced from 1e2 to 1e-8 in f - f*; here they are the same
51 values in *normalised* regret ``(best - f*) / (reference - f*)`` (see :mod:`hpoflow.report.statistics`), so
that the profile is defined on every task, with or without a known optimum, and reads like the report's other
figures (1 = random search's median final value). Written here because no maintained library computes ECDFs
from an MLflow store's curves (cocopp reads COCO's own data files only).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

TARGETS = 10.0 ** np.linspace(2.0, -8.0, 51)   # COCO's 51 targets 1e2 ... 1e-8, here in normalised regret
TARGETS_TEXT = "51 targets log-spaced from 1e2 to 1e-8 (5 per decade) in normalised regret"
ALL = "all"
# BBOB's five function groups (COCO's bbob suite: f1-f24)
BBOB_GROUPS: dict[str, range] = {
    "separable (f1-f5)": range(1, 6),
    "low/moderate conditioning (f6-f9)": range(6, 10),
    "high conditioning, unimodal (f10-f14)": range(10, 15),
    "multimodal, adequate structure (f15-f19)": range(15, 20),
    "multimodal, weak structure (f20-f24)": range(20, 25),
}


def bbob_group(function: int) -> str:
    """The BBOB function group of ``function`` (1..24).

    Raises:
        ValueError: ``function`` outside 1..24.
    """
    for name, members in BBOB_GROUPS.items():
        if function in members:
            return name
    raise ValueError(f"BBOB function {function} is not in 1..24")


def runtimes(nr: np.ndarray, targets: np.ndarray = TARGETS, x: np.ndarray | None = None) -> np.ndarray:
    """First evaluation (1-based) at which each run's best-so-far normalised regret reaches each target.

    Args:
        nr: ``runs x T`` normalised regret of the best value so far (NaN: no value yet, never reaches).
        targets: ``K`` targets; a target is reached when ``nr <= target``.
        x: ``runs x T`` where each round lies on another axis (e.g. its fraction of the cost budget); the run
            length is then that value at the first round reaching the target instead of the round's number.

    Returns:
        ``runs x K`` run lengths, ``inf`` where a run never reaches the target within its ``T`` evaluations.
    """
    nr = np.atleast_2d(np.asarray(nr, dtype=float))
    with np.errstate(invalid="ignore"):
        hit = nr[:, :, None] <= np.asarray(targets, dtype=float)[None, None, :]   # NaN never reaches
    first = hit.argmax(axis=1).astype(float) + 1.0      # runs x K
    if x is not None:
        first = np.take_along_axis(np.atleast_2d(np.asarray(x, dtype=float)), hit.argmax(axis=1), axis=1)
    first[~hit.any(axis=1)] = np.inf
    return first


def ecdf(lengths: np.ndarray, budgets: np.ndarray) -> np.ndarray:
    """Fraction of all (run, target) pairs whose run length is at most each budget.

    Args:
        lengths: run lengths of any shape (``inf``: never reached); every entry is one pair.
        budgets: ``B`` budgets (evaluations, or evaluations / dimension after scaling ``lengths``).

    Returns:
        ``B`` fractions in [0, 1], non-decreasing in the budget.
    """
    flat = np.sort(np.asarray(lengths, dtype=float).ravel())
    if flat.size == 0:
        return np.full(len(budgets), np.nan)
    reached = np.searchsorted(flat, np.asarray(budgets, dtype=float), side="right")
    return np.minimum(reached, np.isfinite(flat).sum()) / flat.size   # an infinite budget reaches no inf


@dataclass
class Profiles:
    """Data profiles of a study.

    Attributes:
        curves: long table (panel, dim, algo, x, fraction, pairs): the ECDF per panel and algorithm at each
            ``x`` = evaluations / dimension (evaluations where the dimension is unknown); ``panel`` is
            ``all`` (every function) or a BBOB function group; ``pairs`` counts the (run, target) pairs.
        final: one row per (dim, algo): the fraction of pairs reached at the end of the budget, all functions.
        per_dimension: True when ``x`` is divided by the task's dimension.
    """

    curves: pd.DataFrame
    final: pd.DataFrame
    per_dimension: bool


def _task_facets(runs: pd.DataFrame) -> pd.DataFrame:
    """Per task_key: its dimension (``params.task.dim``, else 'all') and BBOB function group (else 'all')."""
    first = runs.drop_duplicates("task_key").set_index("task_key")
    dims = pd.to_numeric(first.get("params.task.dim", pd.Series(np.nan, index=first.index)), errors="coerce")
    funcs = pd.to_numeric(first.get("params.task.function", pd.Series(np.nan, index=first.index)), errors="coerce")
    is_bbob = first.get("task", pd.Series("", index=first.index)).astype(str).eq("bbob")
    group = [bbob_group(int(f)) if b and np.isfinite(f) and 1 <= f <= 24 else None
             for f, b in zip(funcs, is_bbob)]
    return pd.DataFrame({"dim": dims, "group": group}, index=first.index)


def data_profiles(curves: pd.DataFrame, runs: pd.DataFrame, targets: np.ndarray = TARGETS,
                  points: int = 60, x: str = "step") -> Profiles:
    """ECDFs of (run, target) pairs against evaluations, per dimension, over all functions and per BBOB group.

    Args:
        curves: ``statistics.Normalised.curves`` (task, algo, run_id, step, nr): normalised regret of the best
            value so far per round; a failed run is already held at its task's worst value.
        runs: the study's run table (``task_key``, ``task``, ``params.task.dim``, ``params.task.function``).
        targets: the targets in normalised regret.
        points: budgets on a log grid from 1 to the largest ``rounds / dim``.
        x: ``"step"`` (evaluations) or the name of a column of ``curves`` giving each round's position on
            another axis, e.g. ``"x"`` = the fraction of the task's cost budget (:func:`compute.profile_curves`):
            the ECDF is then over that axis, from its smallest positive value, and never per dimension.
    """
    facets = _task_facets(runs)
    per_dim = bool(facets["dim"].notna().all()) and x == "step"
    rows, finals = [], []
    for _, g in curves.groupby("run_id", sort=False):
        task, algo = g["task"].iat[0], g["algo"].iat[0]
        g = g.sort_values("step")
        nr = g["nr"].to_numpy(float)
        dim = facets.at[task, "dim"] if task in facets.index else np.nan
        scale = float(dim) if per_dim and np.isfinite(dim) else 1.0
        where = None if x == "step" else g[x].to_numpy(float)[None, :]
        lengths = runtimes(nr, targets, where)[0] / scale
        horizon = len(nr) / scale if where is None else float(np.nanmax(where, initial=0.0))
        rows.append((dim if per_dim else ALL, facets.at[task, "group"] if task in facets.index else None,
                     algo, lengths, horizon))
    if not rows:
        return Profiles(pd.DataFrame(columns=["panel", "dim", "algo", "x", "fraction", "pairs"]),
                        pd.DataFrame(columns=["dim", "algo", "fraction", "pairs"]), per_dim)
    table = pd.DataFrame(rows, columns=["dim", "group", "algo", "lengths", "horizon"])
    out = []
    for dim, by_dim in table.groupby("dim", sort=True):
        start = 1.0 / (float(dim) if per_dim else 1.0)
        if x != "step":
            finite = np.concatenate([v[np.isfinite(v) & (v > 0)] for v in by_dim["lengths"]] + [np.ones(1)])
            start = float(finite.min())
        grid = np.unique(np.geomspace(start, max(by_dim["horizon"].max(), start), points))
        grouped = by_dim.dropna(subset=["group"])
        panels = [(ALL, by_dim)] + [(grp, grouped[grouped["group"] == grp]) for grp in BBOB_GROUPS
                                    if (grouped["group"] == grp).any()]
        for panel, sub in panels:
            for algo, cell in sub.groupby("algo", sort=True):
                lengths = np.stack(cell["lengths"].to_list())
                out.append(pd.DataFrame({"panel": panel, "dim": dim, "algo": algo, "x": grid,
                                         "fraction": ecdf(lengths, grid), "pairs": lengths.size}))
                if panel == ALL:
                    finals.append({"dim": dim, "algo": algo, "fraction": float(np.isfinite(lengths).mean()),
                                   "pairs": lengths.size})
    return Profiles(pd.concat(out, ignore_index=True), pd.DataFrame(finals), per_dim)


def final_table(profiles: Profiles) -> pd.DataFrame:
    """Algorithms (rows) x dimensions (columns): fraction of (run, target) pairs reached within the budget,
    best first by the mean over dimensions."""
    wide = profiles.final.pivot_table(index="algo", columns="dim", values="fraction", aggfunc="first")
    wide = wide.loc[wide.mean(axis=1).sort_values(ascending=False, kind="stable").index]
    out = pd.DataFrame({"algorithm": wide.index})
    for dim in wide.columns:
        label = f"d={int(dim)}" if profiles.per_dimension else "all tasks"
        out[label] = [f"{v:.3f}" for v in wide[dim]]
    return out
