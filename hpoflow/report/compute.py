"""Methods compared against compute: anytime normalised regret over the fraction of a task's cost budget.

Every run logs its cumulative ``query_cost`` per round (fidelity units on a multi-fidelity task, one per
evaluation elsewhere). Here each run becomes a step function of cost: its normalised regret
``(best - f*) / (worst initial - f*)`` after the last round whose cumulative cost is within ``fraction x budget``
(1 before its first counted value: no answer yet). From it: the values at fixed fractions of the budget (with
mean ranks and the Friedman / post-hoc tests of :mod:`hpoflow.report.statistics`), the area under the curve, the
cost to reach a target (a reference method's final value) and the data-profile ECDF over cost.

The bookkeeping (budgets, step functions, areas) is written here because it is specific to MLflow's per-round
metrics; the tests of significance are the statistics module's (scipy, scikit-posthocs).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np
import pandas as pd

from hpoflow.report import statistics as st
from hpoflow.report.loading import FAILED_STATUSES, StudyData, full_fidelity

FRACTIONS = (0.125, 0.25, 0.5, 1.0)
X_CHOICES = ("auto", "cost", "round")
INCUMBENTS = ("full", "any")
GRID_POINTS = 49            # log-spaced fractions of the budget per figure, 1/256 .. 1 (plus the table's)
GRID_LOW = 1 / 256
TOL = 1e-9


@dataclass(frozen=True)
class CostSettings:
    """The report's ``report.x``, ``report.fractions``, ``report.reference``, ``report.incumbent`` and
    ``report.task_figures``."""

    x: str = "auto"                               # auto: cost sections when runs logged a fidelity or budget.cost
    fractions: tuple[float, ...] = FRACTIONS
    reference: str = st.RANDOM_ALGO               # whose final value is the cost-to-target target
    incumbent: str = "full"                       # full: only full-fidelity evaluations count; any: every one
    task_figures: str = "auto"                    # auto: per-task figures up to MAX_TASK_FIGURES tasks; true; false

    def draws_task_figures(self, tasks: int) -> bool:
        """Whether the report draws a figure per task for a study of ``tasks`` tasks (three figures a task, about
        a second each: a 40-task suite would spend two minutes on 120 figures nobody scrolls through)."""
        return self.task_figures == "true" or (self.task_figures == "auto" and tasks <= MAX_TASK_FIGURES)


MAX_TASK_FIGURES = 12  # report.task_figures=auto: per-task figures for studies of up to this many tasks
TASK_FIGURE_CHOICES = ("auto", "true", "false")


def _fraction(text: str) -> float:
    try:
        value = float(Fraction(text.strip()))
    except (ValueError, ZeroDivisionError):
        value = math.nan
    if not 0 < value <= 1:
        raise ValueError(f"report.fractions: '{text.strip()}' is not allowed; use fractions of the budget in "
                         "(0, 1], e.g. report.fractions=1/8,1/4,1/2,1")
    return value


def parse_settings(report: Any) -> CostSettings:
    """:class:`CostSettings` from the CLI's ``report`` keys.

    Raises:
        ValueError: a value outside its choices (the message is the one-line ``Error:``).
    """
    x = str(report.get("x", "auto")).lower()
    if x not in X_CHOICES:
        raise ValueError(f"report.x={x} is not allowed; use one of {', '.join(X_CHOICES)}")
    incumbent = str(report.get("incumbent", "full")).lower()
    if incumbent not in INCUMBENTS:
        raise ValueError(f"report.incumbent={incumbent} is not allowed; use one of {', '.join(INCUMBENTS)}")
    raw = report.get("fractions")
    fractions: tuple[float, ...]
    if raw is None:
        fractions = FRACTIONS
    else:
        items = str(raw).strip("[]").split(",") if isinstance(raw, (str, int, float)) else [str(v) for v in raw]
        fractions = tuple(sorted({_fraction(v) for v in items}))
    reference = str(report.get("reference", st.RANDOM_ALGO))
    task_figures = str(report.get("task_figures", "auto")).lower()
    if task_figures not in TASK_FIGURE_CHOICES:
        raise ValueError(f"report.task_figures={task_figures} is not allowed; use one of "
                         f"{', '.join(TASK_FIGURE_CHOICES)}")
    return CostSettings(x, fractions, reference, incumbent, task_figures)


def wanted(data: StudyData, settings: CostSettings) -> bool:
    """Whether the report compares against cost: ``report.x=cost``, or ``auto`` and some run logged a
    ``fidelity`` or set ``budget.cost``."""
    if settings.x != "auto":
        return settings.x == "cost"
    fidelity = "fidelity" in data.curves.columns and data.curves["fidelity"].notna().any()
    return bool(fidelity or _budget_costs(data.runs).notna().any())


def _budget_costs(runs: pd.DataFrame) -> pd.Series:
    col = runs["params.budget.cost"] if "params.budget.cost" in runs.columns else pd.Series(np.nan, index=runs.index)
    cost = pd.to_numeric(col, errors="coerce")
    return cost.where(cost > 0)


@dataclass
class TaskScale:
    """How one task's runs are put on a common scale (all values on the minimisation scale but the text)."""

    task: str
    budget: float
    budget_source: str          # "budget.cost" | "smallest budget.cost of its runs" | "largest cost any run reached"
    f_star: float
    f_star_source: str          # "known optimum" | "best value any run found"
    f_worst: float
    f_worst_source: str         # "worst initial value"
    max_fidelity: float         # NaN: no run logged a fidelity
    sign: float                 # -1 for a maximised task (loss = sign * value)


@dataclass
class CostRuns:
    """Every run of the selection as a step function of cumulative cost.

    Attributes:
        runs: one row per run: task, algo, seed, run_id, failed, final_cost.
        steps: long table, one row per (run, round): task, algo, seed, run_id, step, cost (cumulative query
            cost), fraction (cost / the task's budget), best (best counted loss so far, NaN before the first),
            nr (normalised regret of ``best``; 1 before the first counted value).
        scales: per task, its budget and normalisation.
        incumbent: "full" or "any" (which evaluations count towards the best so far).
        warnings: one-line ``Warning: ...`` texts (tasks left out).
    """

    runs: pd.DataFrame
    steps: pd.DataFrame
    scales: dict[str, TaskScale]
    incumbent: str
    warnings: list[str] = field(default_factory=list)


def _series(c: pd.DataFrame, key: str) -> np.ndarray:
    return c[key].to_numpy(float) if key in c.columns else np.full(len(c), np.nan)


def _task_budget(set_costs: pd.Series, finals: list[float]) -> tuple[float, str]:
    """A task's cost budget and where it comes from: its runs' ``budget.cost`` (the smallest where they differ),
    else the largest cost any run reached (``finals``: each run's last cumulative cost)."""
    if len(set_costs) and set_costs.nunique() == 1:
        return float(set_costs.iloc[0]), "budget.cost"
    if len(set_costs):
        return float(set_costs.min()), "smallest budget.cost of its runs"
    return (max(finals) if finals else math.nan), "largest cost any run reached"


def cost_runs(data: StudyData, incumbent: str = "full") -> CostRuns:
    """Each run's best-so-far and normalised regret per round against its cumulative cost, task by task.

    Counted values: the true value where the task logs one (the configuration's worth at full fidelity), else
    the observed value; with ``incumbent="full"`` only rounds at the task's full fidelity count (its runs'
    ``final.incumbent_fidelity`` tag, else the highest ``fidelity`` they logged: the rule of a run's own incumbent)
    (a configuration trained to the full budget is what one would deploy), with ``"any"`` every round does.
    f* is the known optimum (value - regret) where the runs logged regret against one, else the best counted
    value any run found; the range's other end is the worst of the runs' first counted values.

    Raises:
        st.ReportError: no runs, a task mixing directions, or no task with a range to normalise by.
    """
    runs = data.runs
    if runs.empty:
        raise st.ReportError(f"no runs match ({data.selection})")
    st.check_directions(runs)
    by_run = dict(tuple(data.curves.groupby("run_id", sort=False))) if len(data.curves) else {}
    budgets = _budget_costs(runs)
    meta, parts, scales, notes = [], [], {}, []
    for task, group in runs.groupby("task_key", sort=True):
        sign = -1.0 if (group["direction"] == "maximize").any() else 1.0
        curves = {r: by_run.get(r, pd.DataFrame(columns=["step"])).sort_values("step") for r in group["run_id"]}
        fid = [_series(c, "fidelity") for c in curves.values()]
        max_fid = full_fidelity(group, fid)  # the task's full fidelity, the level a run's incumbent counts
        counted, costs, stars = {}, {}, []
        for run_id, c in curves.items():
            value, truth = _series(c, "value"), _series(c, "true_value")
            loss = sign * np.where(np.isnan(truth), value, truth)
            if incumbent == "full" and math.isfinite(max_fid):
                loss = np.where(_series(c, "fidelity") >= max_fid - TOL, loss, np.nan)
            counted[run_id] = loss
            raw_cost = _series(c, "query_cost")
            cost = np.where(np.isnan(raw_cost), np.nan, raw_cost) if np.isfinite(raw_cost).any() else \
                c["step"].to_numpy(float)
            costs[run_id] = np.fmax.accumulate(np.nan_to_num(cost, nan=0.0)) if len(cost) else cost
            regret = _series(c, "regret")
            if (group["regret_reference"] == "optimum").all():
                stars.append(sign * np.where(np.isnan(truth), value, truth) - regret)
        known = np.concatenate(stars) if stars else np.zeros(0)
        if np.isfinite(known).any():
            f_star, star_src = float(np.nanmedian(known)), "known optimum"
        else:
            every = np.concatenate(list(counted.values())) if counted else np.zeros(0)
            f_star, star_src = (float(np.nanmin(every)) if np.isfinite(every).any() else math.nan,
                                "best value any run found")
        firsts = [v[np.isfinite(v)][0] for v in counted.values() if np.isfinite(v).any()]
        if not firsts and incumbent == "full" and math.isfinite(max_fid):
            notes.append(f"Warning: task '{task}' left out of the comparison against cost: no run evaluated at its "
                         f"full fidelity ({max_fid:g}), the only level report.incumbent=full counts")
            continue
        f_worst = float(max(firsts)) if firsts else math.nan
        if not (f_worst > f_star + st.SPREAD_TOL * max(1.0, abs(f_star))):
            notes.append(f"Warning: task '{task}' left out of the comparison against cost: its worst initial value "
                         f"({sign * f_worst:.6g}) is not worse than f* ({star_src}, {sign * f_star:.6g})")
            continue
        budget, budget_src = _task_budget(budgets[group.index].dropna(),
                                          [float(c[-1]) for c in costs.values() if len(c)])
        if not budget > 0:
            notes.append(f"Warning: task '{task}' left out of the comparison against cost: no run spent any cost")
            continue
        scales[task] = TaskScale(task, budget, budget_src, f_star, star_src, f_worst, "worst initial value",
                                 max_fid, sign)
        for row in group.itertuples(index=False):
            c, loss, cost = curves[row.run_id], counted[row.run_id], costs[row.run_id]
            best = st.best_so_far(loss) if len(loss) else loss
            nr = np.where(np.isnan(best), 1.0, (best - f_star) / (f_worst - f_star))
            failed = row.status in FAILED_STATUSES
            meta.append({"task": task, "algo": row.algo, "seed": row.seed, "run_id": row.run_id, "failed": failed,
                         "final_cost": float(cost[-1]) if len(cost) else 0.0})
            parts.append(pd.DataFrame({"task": task, "algo": row.algo, "seed": row.seed, "run_id": row.run_id,
                                       "step": c["step"].to_numpy(int), "cost": cost, "fraction": cost / budget,
                                       "best": best, "nr": nr}))
    if not scales:
        raise st.ReportError("no task has a range to normalise by: the comparison against cost is undefined")
    steps = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(
        columns=["task", "algo", "seed", "run_id", "step", "cost", "fraction", "best", "nr"])
    return CostRuns(pd.DataFrame(meta), steps, scales, incumbent, notes)


def _step_values(fraction: np.ndarray, nr: np.ndarray, grid: np.ndarray, failed: bool) -> np.ndarray:
    """The step function (value after the last round with ``fraction <= x``; 1 before the first) at ``grid``;
    a failed run counts as 1 (the worst) beyond its last round."""
    idx = np.searchsorted(fraction, grid + TOL, side="right") - 1
    out = np.where(idx >= 0, nr[np.clip(idx, 0, max(len(nr) - 1, 0))] if len(nr) else 1.0, 1.0)
    if failed and len(fraction):
        out = np.where(grid > fraction[-1] + TOL, 1.0, out)
    return out


def on_grid(cr: CostRuns, grid: np.ndarray) -> pd.DataFrame:
    """Every run's normalised regret at each fraction of its task's budget in ``grid``.

    Returns columns task, algo, seed, run_id, fraction, nr (one row per run and grid point).
    """
    grid = np.asarray(grid, dtype=float)
    by_run = dict(tuple(cr.steps.groupby("run_id", sort=False))) if len(cr.steps) else {}
    parts = []
    for run in cr.runs.itertuples(index=False):
        s = by_run.get(run.run_id)
        frac = s["fraction"].to_numpy(float) if s is not None else np.zeros(0)
        nr = s["nr"].to_numpy(float) if s is not None else np.zeros(0)
        parts.append(pd.DataFrame({"task": run.task, "algo": run.algo, "seed": run.seed, "run_id": run.run_id,
                                   "fraction": grid, "nr": _step_values(frac, nr, grid, bool(run.failed))}))
    return pd.concat(parts, ignore_index=True)


def figure_grid(fractions: tuple[float, ...] = FRACTIONS) -> np.ndarray:
    """Log-spaced fractions 1/256 .. 1 for the figures, with the table's fractions among them."""
    return np.unique(np.concatenate([np.geomspace(GRID_LOW, 1.0, GRID_POINTS), np.asarray(fractions, float)]))


# -- 2. normalised regret and ranks at fixed fractions ------------------------------------------------------
@dataclass
class AtFraction:
    """Mean normalised regret and mean rank per method at one fraction of the budget."""

    fraction: float
    mean: pd.Series                       # per algo, over tasks x seeds
    ranks: pd.Series                      # mean rank per algo over complete (task, seed) blocks
    cd: st.CDResult | None                # Friedman + post-hoc (None: too few blocks or methods)
    problem: str = ""                     # why there is no test


def at_fractions(cr: CostRuns, fractions: tuple[float, ...] = FRACTIONS) -> list[AtFraction]:
    """Per fraction: mean normalised regret per method, mean rank over (task, seed) blocks and the statistics
    module's Friedman test with its post-hoc p-values (``statistics.critical_difference``)."""
    table = on_grid(cr, np.asarray(fractions, float))
    out = []
    for frac in fractions:
        at = table[np.isclose(table["fraction"], frac)]
        mean = at.groupby("algo")["nr"].mean()
        ranked = st.block_ranks(at)
        cd: st.CDResult | None = None
        if len(ranked) and np.all(ranked.to_numpy() == ranked.to_numpy()[:, :1]):
            problem = "every (task, seed) block is a tie"     # e.g. no method has a value yet: all at 1
        else:
            try:
                cd, problem = st.critical_difference(at), ""
            except st.ReportError as exc:
                problem = str(exc)
        ranks = cd.mean_ranks if cd is not None else ranked.mean(axis=0)
        out.append(AtFraction(frac, mean, ranks, cd, problem))
    return out


# -- 3. area under the anytime curve ------------------------------------------------------------------------
def area(fraction: np.ndarray, nr: np.ndarray, failed: bool = False) -> float:
    """Exact area under the step function of normalised regret over fractions 0..1 of the budget.

    1 before the first round, ``nr[i]`` from ``fraction[i]`` to the next round's, the last value to 1 (the
    worst, 1, for a failed run beyond its last round). 0: optimal from the start; 1: never any value.
    """
    x = np.clip(np.asarray(fraction, float), 0.0, 1.0)
    if not len(x):
        return 1.0
    edges = np.concatenate([[0.0], x, [1.0]])
    values = np.concatenate([[1.0], np.asarray(nr, float)])
    if failed:
        values[-1] = 1.0
    return float(np.sum(values * np.diff(edges)))


def areas(cr: CostRuns) -> pd.DataFrame:
    """One row per run: task, algo, seed, run_id, nr = the area under its anytime curve (lower is better)."""
    by_run = dict(tuple(cr.steps.groupby("run_id", sort=False))) if len(cr.steps) else {}
    rows = []
    for run in cr.runs.itertuples(index=False):
        s = by_run.get(run.run_id)
        a = area(s["fraction"].to_numpy(), s["nr"].to_numpy(), bool(run.failed)) if s is not None else 1.0
        rows.append({"task": run.task, "algo": run.algo, "seed": run.seed, "run_id": run.run_id,
                     "failed": bool(run.failed), "nr": a})
    return pd.DataFrame(rows)


# -- 4. cost to reach a target --------------------------------------------------------------------------------
@dataclass
class Target:
    """A task's target (minimisation scale) and what the reference spent to reach it."""

    task: str
    value: float
    source: str                 # "median final value of <reference>" | "median final value of all runs (...)"
    reference_cost: float       # median cost the reference's runs spent within the budget (their final value's)
    reference_first: float      # median cost at which the reference's runs that reach the target first do


def _final_best(s: pd.DataFrame, budget: float) -> float:
    within = s[s["cost"] <= budget + TOL]["best"].to_numpy(float)
    within = within[np.isfinite(within)]
    return float(within.min()) if len(within) else math.nan


def _spent(s: pd.DataFrame, budget: float) -> float:
    within = s["cost"][s["cost"] <= budget + TOL]
    return float(within.max()) if len(within) else math.nan


def _first_reach(s: pd.DataFrame, target: float, budget: float) -> float:
    hit = s[(s["best"] <= target + TOL * max(1.0, abs(target))) & (s["cost"] <= budget + TOL)]
    return float(hit["cost"].iloc[0]) if len(hit) else math.inf


def cost_to_target(cr: CostRuns, reference: str = st.RANDOM_ALGO) -> tuple[pd.DataFrame, dict[str, Target]]:
    """Per run, the cumulative cost at which its best so far first reaches its task's target, within the budget.

    The target is the median over the reference method's runs of their best value within the budget (all runs'
    median when the task has no run of the reference), so it is what the reference reaches with its whole
    budget; the reference cost is the median over its runs of the cost they spent within the budget. Returns
    (one row per run: task, algo, seed, run_id, cost, ratio = cost / reference cost, inf when never reached;
    the targets per task).
    """
    by_run = dict(tuple(cr.steps.groupby("run_id", sort=False))) if len(cr.steps) else {}
    targets, rows = {}, []
    for task, group in cr.runs.groupby("task", sort=True):
        budget = cr.scales[task].budget
        ref = group[(group["algo"] == reference) & group["run_id"].isin(list(by_run))]
        pool, source = (ref, f"median final value of {reference}") if len(ref) else (
            group[group["run_id"].isin(list(by_run))], f"median final value of all runs (no {reference} runs)")
        finals = np.array([_final_best(by_run[r], budget) for r in pool["run_id"]], dtype=float)
        value = float(np.nanmedian(finals)) if np.isfinite(finals).any() else math.nan
        reach = {r: (_first_reach(by_run[r], value, budget) if r in by_run and math.isfinite(value) else math.inf)
                 for r in group["run_id"]}
        spent = float(np.nanmedian([_spent(by_run[r], budget) for r in pool["run_id"]])) if len(pool) else math.nan
        firsts = [reach[r] for r in pool["run_id"] if math.isfinite(reach[r])]
        targets[task] = Target(task, value, source, spent, float(np.median(firsts)) if firsts else math.nan)
        for run in group.itertuples(index=False):
            c = reach[run.run_id]
            rows.append({"task": task, "algo": run.algo, "seed": run.seed, "run_id": run.run_id, "cost": c,
                         "ratio": c / spent if spent > 0 else math.nan})
    return pd.DataFrame(rows), targets


def reach_summary(reached: pd.DataFrame) -> pd.DataFrame:
    """Per method: runs, share reaching the target, median and quartiles of the cost ratio of those that do."""
    rows = []
    for algo, g in reached.groupby("algo", sort=True):
        ok = g["ratio"][np.isfinite(g["ratio"])]
        rows.append({"algo": algo, "runs": len(g), "reached": float(np.isfinite(g["cost"]).mean()),
                     "median_ratio": float(ok.median()) if len(ok) else math.nan,
                     "q25": float(ok.quantile(0.25)) if len(ok) else math.nan,
                     "q75": float(ok.quantile(0.75)) if len(ok) else math.nan})
    return pd.DataFrame(rows)


# -- 5. data profiles over cost -------------------------------------------------------------------------------
def profile_curves(cr: CostRuns) -> pd.DataFrame:
    """``cr.steps`` as the data profiles read it: task, algo, run_id, step, nr, and x = the fraction of the
    budget (rounds past the budget dropped)."""
    steps = cr.steps[cr.steps["fraction"] <= 1.0 + TOL]
    return steps.assign(x=steps["fraction"])[["task", "algo", "run_id", "step", "nr", "x"]]
