"""Cross-task statistics over a :class:`~hpoflow.report.loading.StudyData`.

Per task, every run's best-so-far value becomes a normalised regret (Bayesmark's convention: the reference,
random search's median final value, is 1; the optimum is 0), so that tasks can be averaged and ranked. On top:
average ranks over rounds and over query cost, a Friedman test with Wilcoxon–Holm (or Nemenyi) post-hoc for
the critical-difference diagram, per-task Wilcoxon–Holm tables against the best method, bootstrap intervals
and the number of seeds a paired test would need. The tests come from scipy, statsmodels and
scikit-posthocs; only the bookkeeping (normalisation, blocks, grids) and Holm's step-down adjustment (see
:func:`holm`) are written here.
"""
from __future__ import annotations

import math
import re
import warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import stats

from hpoflow.core.budget import ROUNDS_UNDER_COST, rounds_text
from hpoflow.report.loading import FAILED_STATUSES, FULL_TOL, StudyData, full_fidelity, logged_rounds

ALPHA = 0.05
POWER = 0.8
MIN_WILCOXON_BLOCKS = 6   # with fewer pairs no two-sided exact Wilcoxon p-value can fall below 0.05
RANDOM_ALGO = "random"
COST_GRID = 51            # points on the fraction-of-budget axis


class ReportError(ValueError):
    """Input the statistics cannot honestly summarise (the message is the one-line ``Error:``)."""


@dataclass
class TaskReference:
    """How one task is normalised: ``(best - f_star) / (f_ref - f_star)`` on the minimisation scale."""

    task: str
    direction: str
    f_star: float                 # on the minimisation scale (sign-flipped for maximisation)
    f_star_source: str            # "known optimum" | "best seen in the study"
    f_ref: float
    f_ref_source: str             # "random search median final" | "median initial value"
    rounds: int                   # the round all runs of the task are compared at: the last one any of them logged
                                  # (at most budget.rounds; a cost-budgeted run has budget.rounds = 10^6)
    worst: float = 1.0            # what a failed run counts as: max(1, worst final of the finished runs)


@dataclass
class Normalised:
    """Normalised regret of every run.

    Attributes:
        curves: long table (task, algo, seed, run_id, failed, step, cost_fraction, nr): the normalised regret
            of the best value so far after each round ``step`` = 1..rounds of its task; a failed run is held at
            its task's ``worst`` from its last logged round on.
        final: one row per run (task, algo, seed, run_id, status, failed, nr): nr at the task's last round.
        references: per task, how it was normalised.
        warnings: one-line ``Warning: ...`` texts (different budgets in a cell, missing blocks, ...).
    """

    curves: pd.DataFrame
    final: pd.DataFrame
    references: dict[str, TaskReference]
    warnings: list[str] = field(default_factory=list)


def _names(ids) -> str:
    ids = list(ids)
    return ", ".join(str(i)[:12] for i in ids[:4]) + (f" and {len(ids) - 4} more" if len(ids) > 4 else "")


def check_directions(runs: pd.DataFrame) -> None:
    """Raise ReportError when one task mixes ``minimize`` and ``maximize`` runs (naming them)."""
    for task, group in runs.groupby("task_key"):
        dirs = sorted(set(group["direction"]) - {""})
        if len(dirs) > 1:
            detail = "; ".join(f"{d}: runs {_names(group.loc[group['direction'] == d, 'run_id'])}" for d in dirs)
            raise ReportError(f"task '{task}' mixes directions ({detail}); select one direction per task")


def budget_warnings(runs: pd.DataFrame) -> list[str]:
    """One warning per (task, algorithm) cell whose runs have different ``budget.rounds``."""
    out = []
    for (task, algo), group in runs.groupby(["task_key", "algo"]):
        budgets = group.groupby("rounds")["run_id"].apply(list)
        if len(budgets) > 1:
            detail = "; ".join(f"{rounds_text(int(r))}: runs {_names(ids)}" for r, ids in budgets.items())
            first = int(runs.loc[runs['task_key'] == task, 'rounds'].min())
            where = ("at the last round each run logged" if first >= ROUNDS_UNDER_COST else f"at round {first}")
            out.append(f"Warning: task '{task}', algorithm '{algo}' mixes budgets ({detail}); all runs of the "
                       f"task are compared {where}")
    return out


def best_so_far(loss: np.ndarray) -> np.ndarray:
    """Running minimum along the last axis, ignoring NaN (NaN until the first value).

    Args:
        loss: (..., T) values on the minimisation scale.
    """
    filled = np.where(np.isnan(loss), np.inf, loss)
    out = np.minimum.accumulate(filled, axis=-1)
    out[np.isinf(out)] = np.nan
    return out


SPREAD_TOL = 1e-9  # a reference closer to f* than this (relative) is no spread: normalising by it gives ~1e13


def normalised_regret(best: np.ndarray, f_star: float, f_ref: float) -> np.ndarray:
    """``(best - f_star) / (f_ref - f_star)``: 0 at the optimum, 1 at the reference (any shape)."""
    return (best - f_star) / (f_ref - f_star)


def _matrix(curves: pd.DataFrame, run_ids: list[str], key: str, rounds: int) -> np.ndarray:
    """(runs, rounds) matrix of ``key`` at steps 1..rounds, NaN where not logged; ``rounds``: the group's
    :func:`~hpoflow.report.loading.logged_rounds`, not ``budget.rounds`` (10^6 for a cost-budgeted run)."""
    out = np.full((len(run_ids), rounds), np.nan)
    if key not in curves.columns or not len(curves):
        return out
    row = pd.Series(np.arange(len(run_ids)), index=run_ids)
    sub = curves[curves["run_id"].isin(run_ids) & curves["step"].between(1, rounds)]
    out[row[sub["run_id"]].to_numpy(), sub["step"].to_numpy(int) - 1] = sub[key].to_numpy(float)
    return out


def _last_logged(m: np.ndarray) -> np.ndarray:
    """Each row's last finite entry (NaN for a row without one): a run's final value wherever it stopped."""
    if not m.size:
        return np.full(len(m), np.nan)
    finite = np.isfinite(m)
    last = m.shape[1] - 1 - np.argmax(finite[:, ::-1], axis=1)
    return np.where(finite.any(axis=1), m[np.arange(len(m)), last], np.nan)


def _at_full_fidelity(data: StudyData, group: pd.DataFrame, loss: np.ndarray, rounds: int) -> tuple[np.ndarray, float]:
    """``loss`` (runs x rounds) with the rounds below the task's full fidelity blanked (NaN), and that level (NaN
    for a task without a fidelity: ``loss`` unchanged). The incumbent's rule: only full-fidelity rounds count."""
    fid = _matrix(data.curves, list(group["run_id"]), "fidelity", rounds)
    level = full_fidelity(group, fid)
    if math.isfinite(level):
        loss = np.where(np.isnan(fid) | (fid >= level - FULL_TOL), loss, np.nan)
    return loss, level


def _failed_runs_worst(nr: np.ndarray, failed: np.ndarray, logged: np.ndarray, worst: float) -> None:
    """In place: from its last logged round on (``logged``: runs x rounds), a failed run is at ``worst``."""
    for i in np.flatnonzero(failed):
        rounds = np.flatnonzero(logged[i])
        nr[i, (rounds[-1] + 1 if len(rounds) else 0):] = worst
        nr[i, -1] = worst


def normalise(data: StudyData, incumbent: str = "full") -> Normalised:
    """Normalised regret per run and round, task by task (see :class:`TaskReference` for the convention).

    f* is the task's known optimum where its runs logged regret against it (recovered as value - regret),
    else the best value any selected run saw. The reference is random search's median final best value when
    the task has FINISHED random-search runs, else the median over runs of the first value observed. With
    ``incumbent="full"`` (the default) a task with a fidelity counts only its full-fidelity rounds (see
    :func:`~hpoflow.report.loading.full_fidelity`) towards a run's best so far, as the run's own incumbent does
    (a run is at the worst normalised regret until its first one); ``"any"`` counts every round.

    Raises:
        ReportError: no runs, a task mixing directions, or no task with a reference worse than f*. A task where
            random search's median final value already equals f* is normalised by the median initial value
            instead; a task where that equals f* too is left out, with a warning in ``warnings``.
    """
    runs = data.runs
    if runs.empty:
        raise ReportError(f"no runs match ({data.selection})")
    check_directions(runs)
    notes = budget_warnings(runs)
    curves_out, finals, refs = [], [], {}
    for task, group in runs.groupby("task_key", sort=True):
        ids = list(group["run_id"])
        sign = -1.0 if (group["direction"] == "maximize").any() else 1.0
        budget_rounds = int(group["rounds"].min())
        rounds = logged_rounds(data.curves, ids, budget_rounds)  # values carry forward past a run's last round
        values, truth = _matrix(data.curves, ids, "value", rounds), _matrix(data.curves, ids, "true_value", rounds)
        loss = sign * np.where(np.isnan(truth), values, truth)
        loss, level = _at_full_fidelity(data, group, loss, rounds) if incumbent == "full" else (loss, math.nan)
        if math.isfinite(level) and not np.isfinite(loss).any():
            notes.append(f"Warning: task '{task}' left out of the normalised statistics: no run evaluated at its "
                         f"full fidelity ({level:g}), the only level report.incumbent=full counts")
            continue
        best = best_so_far(loss)
        failed = group["status"].isin(FAILED_STATUSES).to_numpy()
        ok = ~failed
        known = (group["regret_reference"] == "optimum").all()
        regret = _matrix(data.curves, ids, "regret", rounds)
        if known and np.isfinite(loss - regret).any():
            f_star, star_src = float(np.nanmedian(loss - regret)), "known optimum"
        else:
            f_star, star_src = float(np.nanmin(loss)), "best seen in the study"
        is_random = (group["algo"] == RANDOM_ALGO).to_numpy() & ok
        first = np.array([r[np.isfinite(r)][0] if np.isfinite(r).any() else np.nan for r in loss])  # per run
        if is_random.any() and np.isfinite(best[is_random, -1]).any():
            f_ref, ref_src = float(np.nanmedian(best[is_random, -1])), "random search median final"
        else:
            f_ref, ref_src = float(np.nanmedian(first)), "median initial value"
        tol = SPREAD_TOL * max(1.0, abs(f_star))  # CV means that differ by rounding only (0.96 vs 0.96 + 1e-16)
        if not f_ref > f_star + tol:  # random search's median already reached f*: fall back to where runs started
            if np.nanmedian(first) > f_star + tol:
                f_ref, ref_src = float(np.nanmedian(first)), "median initial value (random search reached f*)"
        if not f_ref > f_star + tol:  # no spread to normalise by: every method is at f* on this task
            notes.append(f"Warning: task '{task}' left out of the normalised statistics: the reference "
                         f"({ref_src}, {sign * f_ref:.6g}) is not worse than f* ({star_src}, {sign * f_star:.6g})")
            continue
        nr = normalised_regret(best, f_star, f_ref)
        worst = float(max(1.0, np.nanmax(nr[ok, -1]) if np.isfinite(nr[ok, -1]).any() else 1.0))
        _failed_runs_worst(nr, failed, np.isfinite(values) | np.isfinite(truth), worst)
        nr = np.where(np.isnan(nr), worst, nr)  # rounds before a run's first value: no information yet
        cost = _matrix(data.curves, ids, "query_cost", rounds)
        final_cost = _last_logged(cost[ok])
        budget = float(np.nanmedian(final_cost)) if np.isfinite(final_cost).any() else float(budget_rounds)
        cost_fraction = np.where(np.isnan(cost), np.arange(1, rounds + 1) / budget_rounds, cost / budget)
        refs[task] = TaskReference(task, "maximize" if sign < 0 else "minimize", sign * f_star, star_src,
                                   sign * f_ref, ref_src, rounds, worst)
        n = len(ids)
        curves_out.append(pd.DataFrame({
            "task": task, "algo": np.repeat(group["algo"].to_numpy(), rounds),
            "seed": np.repeat(group["seed"].to_numpy(), rounds), "run_id": np.repeat(ids, rounds),
            "failed": np.repeat(failed, rounds), "step": np.tile(np.arange(1, rounds + 1), n),
            "cost_fraction": cost_fraction.ravel(), "nr": nr.ravel()}))
        finals.append(pd.DataFrame({"task": task, "algo": group["algo"].to_numpy(), "seed": group["seed"].to_numpy(),
                                    "run_id": ids, "status": group["status"].to_numpy(), "failed": failed,
                                    "nr": nr[:, -1]}))
    if not refs:
        raise ReportError("no task has a reference worse than f*: normalised regret is undefined on every task")
    return Normalised(pd.concat(curves_out, ignore_index=True), pd.concat(finals, ignore_index=True), refs, notes)


# -- intervals -----------------------------------------------------------------------------------------------
def bootstrap_ci(x, *, seed: int = 0, n_resamples: int = 2000, level: float = 0.95) -> tuple[float, float, float]:
    """Mean and its percentile-bootstrap interval (``scipy.stats.bootstrap``, seeded): (mean, low, high).

    One value: (x, nan, nan); identical values: (x, x, x).
    """
    a = np.asarray(x, dtype=float)
    a = a[np.isfinite(a)]
    if a.size == 0:
        return math.nan, math.nan, math.nan
    m = float(a.mean())
    if a.size == 1:
        return m, math.nan, math.nan
    if np.all(a == a[0]):
        return m, m, m
    res = stats.bootstrap((a,), np.mean, n_resamples=n_resamples, confidence_level=level, method="percentile",
                          rng=np.random.default_rng(seed))
    return m, float(res.confidence_interval.low), float(res.confidence_interval.high)


def normal_band(x: np.ndarray, axis: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Mean and 1.96·std/√n half-width along ``axis`` (for the figures' bands; NaN-aware)."""
    n = np.sum(np.isfinite(x), axis=axis)
    with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        mean = np.nanmean(x, axis=axis)
        std = np.nanstd(x, axis=axis, ddof=1)
    return mean, np.where(n > 1, 1.96 * np.nan_to_num(std) / np.sqrt(np.maximum(n, 1)), 0.0)


# -- ranks -------------------------------------------------------------------------------------------------
def block_ranks(table: pd.DataFrame, value: str = "nr", blocks: tuple[str, ...] = ("task", "seed")) -> pd.DataFrame:
    """Rank algorithms within each block (1 = best = lowest ``value``; ties share the average rank).

    Only blocks where every algorithm has a value are ranked. Returns the wide table: one row per block, one
    column per algorithm.
    """
    wide = table.pivot_table(index=list(blocks), columns="algo", values=value, aggfunc="first")
    wide = wide.dropna()
    ranked = stats.rankdata(wide.to_numpy(), axis=1, method="average")
    return pd.DataFrame(ranked, index=wide.index, columns=wide.columns)


def ranks_over(curves: pd.DataFrame, x: str) -> pd.DataFrame:
    """Average rank per algorithm at each ``x`` (step or cost fraction) over complete (task, seed) blocks.

    Returns columns x, algo, mean, half (1.96·std/√n over blocks), n.
    """
    wide = curves.pivot_table(index=["task", "seed", x], columns="algo", values="nr", aggfunc="first").dropna()
    ranked = pd.DataFrame(stats.rankdata(wide.to_numpy(), axis=1, method="average"), index=wide.index,
                          columns=wide.columns)
    return _band_by(ranked.stack().rename("v").reset_index(), x)


def _band_by(long: pd.DataFrame, x: str) -> pd.DataFrame:
    g = long.groupby(["algo", x])["v"]
    out = g.agg(mean="mean", std="std", n="count").reset_index()
    out["half"] = np.where(out["n"] > 1, 1.96 * out["std"].fillna(0) / np.sqrt(out["n"]), 0.0)
    return out.drop(columns="std")


def regret_over(curves: pd.DataFrame, x: str) -> pd.DataFrame:
    """Mean normalised regret per algorithm at each ``x`` over its runs (all tasks), with 1.96·SE bands."""
    return _band_by(curves.rename(columns={"nr": "v"}), x)


def on_cost_grid(norm: Normalised, points: int = COST_GRID) -> pd.DataFrame:
    """Normalised regret against the fraction of the task's budget spent (cumulative query cost / the median
    final cost of the task's finished runs), as a step function on a grid shared by all tasks, from the
    largest first-round fraction (where every run has its first value) to 1.
    """
    first = norm.curves.loc[norm.curves["step"] == 1, "cost_fraction"]
    grid = np.linspace(min(float(first.max()), 1.0) if len(first) else 0.0, 1.0, points)
    parts = []
    for task, c in norm.curves.groupby("task", sort=False):
        frac = c.pivot(index="run_id", columns="step", values="cost_fraction")
        nr = c.pivot(index="run_id", columns="step", values="nr").loc[frac.index].to_numpy()
        frac_m = np.fmax.accumulate(np.nan_to_num(frac.to_numpy(), nan=0.0), axis=1)
        idx = (frac_m[:, :, None] <= grid[None, None, :] + 1e-12).sum(axis=1) - 1   # (runs, points)
        values = np.where(idx >= 0, np.take_along_axis(nr, np.clip(idx, 0, nr.shape[1] - 1), axis=1),
                          norm.references[task].worst)
        meta = c.drop_duplicates("run_id").set_index("run_id").loc[frac.index]
        parts.append(pd.DataFrame({"task": task, "algo": np.repeat(meta["algo"].to_numpy(), points),
                                   "seed": np.repeat(meta["seed"].to_numpy(), points),
                                   "run_id": np.repeat(frac.index.to_numpy(), points),
                                   "cost_fraction": np.tile(grid, len(frac)), "nr": values.ravel()}))
    return pd.concat(parts, ignore_index=True)


# -- significance ------------------------------------------------------------------------------------------
def holm(pvalues) -> np.ndarray:
    """Holm-adjusted p-values: the i-th smallest of m times (m - i + 1), then a running maximum, at most 1.

    statsmodels' ``multipletests(method="holm")`` gives the same numbers (a test checks it) but runs a full
    ``gc.collect()`` per call: 1.3 of a small report's 6.9 s went there, five calls in a process holding MLflow,
    pandas and matplotlib."""
    p = np.asarray(pvalues, dtype=float)
    if not p.size:
        return p
    order = np.argsort(p)
    adjusted = np.empty_like(p)
    adjusted[order] = np.minimum(np.maximum.accumulate(p[order] * np.arange(p.size, 0, -1)), 1.0)
    return adjusted


def wilcoxon_p(a: np.ndarray, b: np.ndarray) -> float:
    """Two-sided Wilcoxon signed-rank p-value of paired samples (1.0 when every pair is equal)."""
    d = np.asarray(a, float) - np.asarray(b, float)
    if np.all(d == 0):
        return 1.0
    return float(stats.wilcoxon(a, b, zero_method="zsplit").pvalue)


@dataclass
class CDResult:
    """Friedman test over blocks and the post-hoc p-values the CD diagram draws."""

    mean_ranks: pd.Series          # per algorithm, over blocks
    pvalues: pd.DataFrame          # algo x algo, adjusted
    method: str                    # "Wilcoxon–Holm" | "Nemenyi"
    friedman_p: float
    n_blocks: int


def critical_difference(final: pd.DataFrame) -> CDResult:
    """Friedman test of final normalised regret over complete (task, seed) blocks, then pairwise post-hoc.

    Post-hoc: Wilcoxon signed-rank with Holm correction when there are at least ``MIN_WILCOXON_BLOCKS``
    blocks (Benavoli et al., 2016, prefer it to mean-rank tests), else Nemenyi (scikit-posthocs).

    Raises:
        ReportError: fewer than two algorithms or fewer than two complete blocks.
    """
    import scikit_posthocs as sp

    ranks = block_ranks(final)
    algos = list(ranks.columns)
    if len(algos) < 2 or len(ranks) < 2:
        raise ReportError(f"a critical-difference diagram needs >= 2 algorithms on >= 2 complete (task, seed) "
                          f"blocks; have {len(algos)} algorithms, {len(ranks)} blocks")
    wide = final.pivot_table(index=["task", "seed"], columns="algo", values="nr", aggfunc="first").dropna()
    friedman = (stats.friedmanchisquare(*[wide[a] for a in algos]).pvalue if len(algos) >= 3
                else wilcoxon_p(wide[algos[0]], wide[algos[1]]))
    if len(ranks) >= MIN_WILCOXON_BLOCKS:
        pairs = [(i, j) for i in range(len(algos)) for j in range(i + 1, len(algos))]
        adj = holm([wilcoxon_p(wide[algos[i]], wide[algos[j]]) for i, j in pairs])
        p = pd.DataFrame(1.0, index=algos, columns=algos)
        for (i, j), q in zip(pairs, adj):
            p.iloc[i, j] = p.iloc[j, i] = q
        method = "Wilcoxon–Holm"
    else:
        p = sp.posthoc_nemenyi_friedman(wide[algos].to_numpy())
        p.index, p.columns = algos, algos
        method = "Nemenyi"
    return CDResult(ranks.mean(axis=0), p, method, float(friedman), len(ranks))


def versus_best(final: pd.DataFrame) -> pd.DataFrame:
    """Per task: each algorithm against the task's best (lowest mean final nr), paired by seed.

    Returns one row per (task, algo): n, failed, mean, ci_low, ci_high (bootstrap), p_holm (Wilcoxon,
    Holm-corrected over the task's comparisons; NaN for the best itself), best (bool), tie (bool: not
    significantly worse than the best at ALPHA).
    """
    rows = []
    for task, group in final.groupby("task", sort=True):
        wide = group.pivot_table(index="seed", columns="algo", values="nr", aggfunc="first")
        means = group.groupby("algo")["nr"].mean()
        best = means.idxmin()
        others = [a for a in means.index if a != best]
        raw = []
        for a in others:
            pair = wide[[best, a]].dropna()
            raw.append(wilcoxon_p(pair[best], pair[a]) if len(pair) >= 2 else np.nan)
        finite = [i for i, p in enumerate(raw) if np.isfinite(p)]
        adj = dict(zip([others[i] for i in finite], holm([raw[i] for i in finite])))
        for algo, g in group.groupby("algo"):
            m, lo, hi = bootstrap_ci(g["nr"])
            p = adj.get(algo, np.nan) if algo != best else np.nan
            rows.append({"task": task, "algo": algo, "n": len(g), "failed": int(g["failed"].sum()), "mean": m,
                         "ci_low": lo, "ci_high": hi, "p_holm": p, "best": algo == best,
                         "tie": algo != best and not (p < ALPHA)})
    return pd.DataFrame(rows)


def overall(final: pd.DataFrame) -> pd.DataFrame:
    """Per algorithm over all tasks: runs, failed, mean final nr and mean rank with bootstrap intervals."""
    ranks = block_ranks(final)
    rows = []
    for algo, g in final.groupby("algo"):
        m, lo, hi = bootstrap_ci(g["nr"])
        r = ranks[algo] if algo in ranks.columns else pd.Series(dtype=float)
        rm, rlo, rhi = bootstrap_ci(r)
        rows.append({"algo": algo, "runs": len(g), "failed": int(g["failed"].sum()), "tasks": g["task"].nunique(),
                     "mean": m, "ci_low": lo, "ci_high": hi, "rank": rm, "rank_low": rlo, "rank_high": rhi})
    return pd.DataFrame(rows).sort_values("rank", kind="stable").reset_index(drop=True)


# -- seed adequacy -----------------------------------------------------------------------------------------
def seeds_needed(dz: float, alpha: float = ALPHA, power: float = POWER) -> float:
    """Pairs a two-sided paired t-test needs to detect the standardised effect ``dz`` = mean(d)/sd(d)
    (statsmodels ``TTestPower``); inf for no effect, 2 when the effect is certain (sd = 0)."""
    from statsmodels.stats.power import TTestPower

    if not np.isfinite(dz):
        return 2.0
    if dz == 0:
        return math.inf
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # huge effects: the solver leaves its bracket; the answer is then 2
        n = TTestPower().solve_power(effect_size=abs(dz), alpha=alpha, power=power, alternative="two-sided")
    n = float(np.squeeze(n))
    return n if np.isfinite(n) and n >= 2 else 2.0


@dataclass
class SeedAdequacy:
    task: str
    first: str
    second: str
    n: int                 # paired seeds
    effect: float          # mean of second - first (normalised regret)
    ci_low: float
    ci_high: float
    dz: float
    needed: float          # seeds for 80% power at alpha

    def line(self) -> str:
        observed = (f"{self.task}: {self.second} − {self.first} = {self.effect:+.3g} "
                    f"[{self.ci_low:.3g}, {self.ci_high:.3g}] over {self.n} paired seeds")
        if math.isinf(self.needed):  # d_z = 0: no seed count can tell the two apart
            return (f"{observed}: no mean difference (d_z = 0); they do equally well in these seeds, and more "
                    "seeds would not tell them apart")
        need = f"{math.ceil(self.needed)}" if self.needed <= 1000 else "more than 1,000"
        verdict = ("enough" if self.n >= self.needed else "not enough")
        return (f"{observed} (d_z = {self.dz:.2f}); a paired t-test needs {need} seeds for {POWER:.0%} power at "
                f"α = {ALPHA} — {self.n} are {verdict}")


def seed_adequacy(final: pd.DataFrame) -> list[SeedAdequacy]:
    """For each task, the two best algorithms (mean final nr): observed paired effect, interval, seeds needed."""
    out = []
    for task, group in final.groupby("task", sort=True):
        means = group.groupby("algo")["nr"].mean().sort_values(kind="stable")
        if len(means) < 2:
            continue
        first, second = means.index[0], means.index[1]
        wide = group.pivot_table(index="seed", columns="algo", values="nr", aggfunc="first")[[first, second]]
        d = (wide[second] - wide[first]).dropna().to_numpy()
        if d.size < 2:
            continue
        m, lo, hi = bootstrap_ci(d)
        sd = float(np.std(d, ddof=1))
        if sd <= 1e-12 * max(abs(m), 1e-300):  # every pair differs by the same amount (up to rounding)
            sd = 0.0
        dz = m / sd if sd > 0 else (math.inf if m != 0 else 0.0)
        out.append(SeedAdequacy(task, first, second, int(d.size), m, lo, hi, dz, seeds_needed(dz)))
    return out


# -- power, measured by A/A twins --------------------------------------------------------------------------
TWIN_SUFFIX = re.compile(r"^(?P<original>.+) twin(?P<k>[1-9][0-9]*)$")  # report label of a sweep.twin=k run


@dataclass
class TwinPower:
    """An A/A twin (the same method with other random streams) against its original, over complete blocks."""

    original: str
    twin: str
    n_blocks: int
    gap: float             # mean rank of the twin - mean rank of the original
    p_holm: float          # their Wilcoxon-Holm p-value in the comparison (nan when it used Nemenyi)
    sd: float              # standard deviation of their per-block rank difference
    detectable: float      # smallest mean-rank difference detected at Holm alpha with POWER
    methods: int           # methods in the comparison (twins included)

    def line(self) -> str:
        pairs = self.methods * (self.methods - 1) // 2
        if self.sd == 0 and self.gap == 0:
            return (f"A/A twins {self.twin} and {self.original}: identical in all {self.n_blocks} blocks (the method "
                    "does not depend on its seed here), so they measure no noise.")
        p = "" if math.isnan(self.p_holm) else f", Holm p = {self.p_holm:.2g}"
        return (f"A/A twins {self.twin} and {self.original} (one method, other random streams): their mean ranks "
                f"differ by {self.gap:+.2f} over {self.n_blocks} blocks{p}. From the spread of their per-block rank "
                f"difference (sd {self.sd:.2f}), this comparison of {self.methods} methods ({pairs} pairs) detects a "
                f"mean-rank difference of {self.detectable:.2f} or more at Holm α = {ALPHA} with {POWER:.0%} power; "
                "smaller differences are within its noise.")


def twin_power(final: pd.DataFrame, pvalues: pd.DataFrame | None = None) -> list[TwinPower]:
    """For every A/A twin in ``final`` (label ``'<algo> twin<k>'`` beside ``'<algo>'``): their mean-rank gap and
    the smallest mean-rank difference the comparison detects, measured from the twins' noise.

    Ranks are taken within complete (task, seed) blocks over every method. With ``d`` the per-block rank
    difference of twin and original (pure noise: the two are one method), a paired difference of mean ranks is
    detected at the strictest Holm step (``ALPHA / m`` for ``m`` pairs) with power ``POWER`` from
    ``(z(1 - ALPHA / 2m) + z(POWER)) * sd(d) / sqrt(n)`` on ``n`` blocks (the normal approximation; later Holm
    steps need less). ``pvalues``: the comparison's adjusted pairwise p-values, to quote the twins' own.
    """
    ranks = block_ranks(final)
    algos = list(ranks.columns)
    out = []
    for name in algos:
        m = TWIN_SUFFIX.match(str(name))
        if m is None or m["original"] not in algos or len(ranks) < 2:
            continue
        d = (ranks[name] - ranks[m["original"]]).to_numpy()
        sd = float(np.std(d, ddof=1))
        pairs = len(algos) * (len(algos) - 1) // 2
        z = stats.norm.ppf(1 - ALPHA / (2 * pairs)) + stats.norm.ppf(POWER)
        p = (float(pvalues.loc[name, m["original"]]) if pvalues is not None and name in pvalues.index
             and m["original"] in pvalues.columns else math.nan)
        out.append(TwinPower(m["original"], str(name), len(ranks), float(d.mean()), p, sd,
                             float(z * sd / math.sqrt(len(ranks))), len(algos)))
    return out
