"""Markdown and CSV renderings of the per-task summaries."""
from __future__ import annotations

import csv
import json
import math
from pathlib import Path
from typing import Any

import pandas as pd

from hpoflow.report.aggregate import Summary

CAPTION_KNOWN = ("Final cumulative and simple regret, query cost and wall time: mean ± 1.96·std/√n over the "
                 "n seeds; regret against the task's known optimum f*.")
CAPTION_REAL = ("Final cumulative and simple regret, query cost and wall time: mean ± 1.96·std/√n over the "
                "n seeds. The optimum of this (real) task is unknown: f* is the best value seen for the task "
                "across the selected runs.")


def _fmt(pair: tuple[float, float]) -> str:
    m, h = pair
    return f"{m:.4g} ± {h:.2g}"


CAPTION_FULL = (" Simple regret and the best value count only the evaluations at the task's full fidelity "
                "({level:g}), the level a run's incumbent is taken from (report.incumbent=any counts every level); "
                "cumulative regret counts every evaluation; a run with none at that level has no simple regret.")


def caption(rows: list[Summary]) -> str:
    text = CAPTION_KNOWN if all(s.f_star_known for s in rows) else CAPTION_REAL
    levels = [s.full_fidelity for s in rows if math.isfinite(s.full_fidelity)]
    return text + CAPTION_FULL.format(level=max(levels)) if levels else text


def format_table(rows: list[Summary]) -> str:
    """Markdown table: final cumulative and simple regret (mean ± 1.96·std/√n), query cost, wall time."""
    lines = ["| algorithm | n | cumulative regret | simple regret | query cost | wall time (s) |",
             "|---|---|---|---|---|---|"]
    for s in sorted(rows, key=lambda s: s.cumulative[0]):
        lines.append(f"| {s.algo} | {s.n} | {_fmt(s.cumulative)} | {_fmt(s.simple)} | {_fmt(s.query_cost)} | "
                     f"{_fmt(s.wall_time)} |")
    return "\n".join(lines)


def _config_text(config: dict[str, Any] | None) -> str:
    if config is None:
        return "n/a"
    return ", ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in config.items())


def format_best_configs(rows: list[Summary]) -> str:
    """Markdown table: per algorithm, the best value seen, its seed and run, and its configuration."""
    lines = ["| algorithm | best value | seed | run | best configuration |", "|---|---|---|---|---|"]
    for s in sorted(rows, key=lambda s: s.algo):
        lines.append(f"| {s.algo} | {s.best_value:.6g} | {s.best_seed} | `{s.best_run[:12]}` | "
                     f"{_config_text(s.best_config)} |")
    return "\n".join(lines)


CSV_FIELDS = ["task", "algo", "n", "cumulative_regret_mean", "cumulative_regret_ci95", "simple_regret_mean",
              "simple_regret_ci95", "query_cost_mean", "query_cost_ci95", "wall_time_mean", "wall_time_ci95",
              "f_star", "best_value", "best_seed", "best_run", "best_config"]


def csv_row(s: Summary) -> dict[str, Any]:
    """One (task, algorithm) row of ``CSV_FIELDS``; ``*_ci95`` is the half-width 1.96·std/√n."""
    return {"task": s.task, "algo": s.algo, "n": s.n,
            "cumulative_regret_mean": s.cumulative[0], "cumulative_regret_ci95": s.cumulative[1],
            "simple_regret_mean": s.simple[0], "simple_regret_ci95": s.simple[1],
            "query_cost_mean": s.query_cost[0], "query_cost_ci95": s.query_cost[1],
            "wall_time_mean": s.wall_time[0], "wall_time_ci95": s.wall_time[1],
            "f_star": "known optimum" if s.f_star_known else "best seen across selected runs",
            "best_value": s.best_value, "best_seed": s.best_seed, "best_run": s.best_run,
            "best_config": json.dumps(s.best_config, default=str) if s.best_config is not None else ""}


def write_csv(summaries: dict[tuple[str, ...], list[Summary]], path: Path) -> Path:
    """One row per (task, algorithm) of the per-task regret summaries."""
    with open(path, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=CSV_FIELDS)
        writer.writeheader()
        for rows in summaries.values():
            for s in rows:
                writer.writerow(csv_row(s))
    return path


# -- cross-task statistics (normalised regret) ----------------------------------------------------------------
def _ci(m: float, lo: float, hi: float, digits: int = 3) -> str:
    if math.isnan(lo):  # one value: no interval
        return f"{m:.{digits}g}"
    return f"{m:.{digits}g} [{lo:.{digits}g}, {hi:.{digits}g}]"


def overall_table(ov: pd.DataFrame) -> pd.DataFrame:
    """Per algorithm over all tasks: runs, failed, tasks, final normalised regret and rank (bootstrap 95%)."""
    return pd.DataFrame({
        "algorithm": ov["algo"], "runs": ov["runs"], "failed": ov["failed"], "tasks": ov["tasks"],
        "final normalised regret [95% CI]": [_ci(r.mean, r.ci_low, r.ci_high) for r in ov.itertuples()],
        "mean rank [95% CI]": [_ci(r.rank, r.rank_low, r.rank_high) for r in ov.itertuples()]})


def versus_best_table(rows: pd.DataFrame) -> pd.DataFrame:
    """One task's Wilcoxon–Holm table: the best and its statistical ties in bold, ties marked ≈."""
    rows = rows.sort_values("mean", kind="stable")
    cells = []
    for r in rows.itertuples():
        name, value = r.algo, _ci(r.mean, r.ci_low, r.ci_high)
        if r.best:
            verdict = "best"
        elif r.tie:
            verdict = "≈ tie" if not math.isnan(r.p_holm) else "≈ tie (too few pairs to test)"
        else:
            verdict = "worse"
        if r.best or r.tie:
            name, value = f"**{name}**", f"**{value}**"
        p = "" if math.isnan(r.p_holm) else f"{r.p_holm:.3g}"
        cells.append({"algorithm": name, "n": r.n, "failed": r.failed, "final normalised regret [95% CI]": value,
                      "p (Wilcoxon–Holm vs best)": p, "verdict": verdict})
    return pd.DataFrame(cells)


def references_table(refs: dict) -> pd.DataFrame:
    """How each task was normalised: f*, the reference, their sources, the round compared at."""
    return pd.DataFrame([{"task": r.task, "direction": r.direction, "f*": f"{r.f_star:.6g}",
                          "f* from": r.f_star_source, "reference (= 1)": f"{r.f_ref:.6g}",
                          "reference from": r.f_ref_source, "rounds": r.rounds,
                          "a failed run counts as": f"{r.worst:.3g}"} for r in refs.values()])


CAPTION_NORMALISED = (
    "Normalised regret = (best value so far − f*) / (reference − f*): 0 is the optimum, 1 the reference, which is "
    "random search's median final value on the task where the study has random-search runs (Bayesmark's "
    "convention), else the median first value of the task's runs. f* is the task's known optimum, or the best "
    "value any selected run saw (see the table above). Failures are counted, not dropped: a FAILED or KILLED run "
    "counts as its task's worst value, max(1, worst final normalised regret of a finished run), from its last "
    "logged round on. Means with 95% percentile-bootstrap intervals (scipy.stats.bootstrap, 2,000 resamples, "
    "seed 0); ranks are taken per (task, seed) block (1 = best, ties share the average rank) and averaged. On a "
    "task with a fidelity, report.incumbent says which evaluations count towards the best value so far: full (the "
    "default), only those at the task's full fidelity, as towards a run's incumbent; any, every one.")


def versus_best_caption(n_pairs: int) -> str:
    floor = math.ldexp(2.0, -n_pairs) if n_pairs else float("nan")  # 2 / 2^n as a float: 0.0 past ~1,075 pairs
    return ("Final normalised regret per algorithm. Each is compared with the best mean by a two-sided Wilcoxon "
            "signed-rank test over seeds (paired by seed; scipy), the p-values Holm-corrected over the task's "
            f"comparisons (statsmodels). Bold: the best and every method not significantly worse at α = 0.05 "
            f"(≈ tie). With {n_pairs} paired seeds the smallest attainable p is "
            f"{'below 1e-300' if floor == 0 else f'{floor:.3g}'}.")


def cd_caption(method: str, friedman_p: float, n_blocks: int, n_algos: int) -> str:
    test = "Friedman test" if n_algos >= 3 else "Wilcoxon signed-rank test"
    return (f"Critical-difference diagram of final normalised regret: average rank over {n_blocks} (task, seed) "
            f"blocks (lower is better). {test}: p = {friedman_p:.3g}. Post-hoc: {method} "
            f"(Wilcoxon signed-rank with Holm correction when there are at least 6 blocks, as Benavoli et al. "
            f"2016 advise; Nemenyi otherwise); a bar joins methods whose difference is not significant at "
            f"α = 0.05 (scikit-posthocs).")
