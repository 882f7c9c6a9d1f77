"""The report's "Against compute" section: tables, figures and ``cost_summary.csv`` from :mod:`compute`."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd

from hpoflow.report import compute as cp
from hpoflow.report import statistics as st
from hpoflow.report.cost_figures import colours, plot_cost_profile, plot_task_cost
from hpoflow.report.html import Block, Figure, Heading, Table, Text, to_markdown
from hpoflow.report.loading import StudyData
from hpoflow.report.profiles import TARGETS, data_profiles, final_table

COST_TARGETS = TARGETS[TARGETS < 1.0]   # 1 = the worst initial value: every run's first counted value reaches it
INCUMBENT_TEXT = {
    "full": "only evaluations at the task's full fidelity count towards a run's best so far, as towards its "
            "incumbent (a configuration trained to the full budget is what one deploys; report.incumbent=any "
            "counts every evaluation)",
    "any": "every evaluation counts towards a run's best so far, at its true value where the task logs one (its "
           "worth at full fidelity, even when it was evaluated lower) else its observed value "
           "(report.incumbent=full counts only full-fidelity evaluations)",
}


@dataclass
class CostSection:
    """What the section adds to the report."""

    blocks: list[Block] = field(default_factory=list)
    printed: list[str] = field(default_factory=list)
    figures: list[Path] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    csv: Path | None = None


def label(fraction: float) -> str:
    """``0.125`` -> ``1/8``; ``1.0`` -> ``1``."""
    f = Fraction(fraction).limit_denominator(1024)
    return str(f) if abs(float(f) - fraction) < 1e-12 else f"{fraction:g}"


def _g(v: float) -> str:
    return "n/a" if not np.isfinite(v) else f"{v:.3g}"


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:] + "."


def _md(frame: pd.DataFrame) -> str:
    return to_markdown([Table(frame)], "").split("\n", 2)[2].strip()


def scales_table(cr: cp.CostRuns) -> pd.DataFrame:
    rows = [{"task": s.task, "budget": f"{s.budget:g}", "budget from": s.budget_source,
             "f*": f"{s.sign * s.f_star:.6g}", "f* from": s.f_star_source,
             "worst initial": f"{s.sign * s.f_worst:.6g}",
             "full fidelity": "none logged" if math.isnan(s.max_fidelity) else f"{s.max_fidelity:g}"}
            for s in cr.scales.values()]
    return pd.DataFrame(rows)


def fraction_tables(at: list[cp.AtFraction]) -> tuple[pd.DataFrame, pd.DataFrame, list[str]]:
    """Mean normalised regret (methods x fractions), mean rank with the post-hoc p-value against the
    best-ranked method at each fraction, and one line per fraction with the Friedman test."""
    algos = sorted(set().union(*[set(a.mean.index) for a in at]),
                   key=lambda a: (at[-1].mean.get(a, math.inf), a))
    regret = pd.DataFrame({"algorithm": algos})
    ranks = pd.DataFrame({"algorithm": algos})
    lines = []
    for a in at:
        name = label(a.fraction)
        regret[name] = [_g(a.mean.get(m, math.nan)) for m in algos]
        best = a.ranks.idxmin() if len(a.ranks) else None
        cells = []
        for m in algos:
            r = a.ranks.get(m, math.nan)
            if not np.isfinite(r):
                cells.append("n/a")
            elif m == best:
                cells.append(f"**{r:.2f}** (best)")
            elif a.cd is not None:
                cells.append(f"{r:.2f} (p={a.cd.pvalues.loc[best, m]:.3g})")
            else:
                cells.append(f"{r:.2f}")
        ranks[name] = cells
        lines.append(f"at {name} of the budget: " + (
            f"Friedman p = {a.cd.friedman_p:.3g} over {a.cd.n_blocks} (task, seed) blocks, post-hoc {a.cd.method}"
            if a.cd is not None else f"no test ({a.problem})"))
    return regret, ranks, lines


def auc_table(areas: pd.DataFrame) -> tuple[pd.DataFrame, str]:
    """Per method: runs, mean area with its bootstrap interval, mean rank over blocks, post-hoc p vs the best."""
    cd: st.CDResult | None = None
    try:
        found = st.critical_difference(areas)
        cd, note, ranks = found, f"Friedman p = {found.friedman_p:.3g} over {found.n_blocks} blocks, post-hoc " \
            f"{found.method}", found.mean_ranks
    except st.ReportError as exc:
        note, ranks = f"no test ({exc})", st.block_ranks(areas).mean(axis=0)
    best = ranks.idxmin() if len(ranks) else None
    rows = []
    for algo, g in areas.groupby("algo"):
        m, lo, hi = st.bootstrap_ci(g["nr"])
        r = ranks.get(algo, math.nan)
        p = "" if cd is None or algo == best or algo not in cd.pvalues.index else f"{cd.pvalues.loc[best, algo]:.3g}"
        rows.append({"algorithm": algo, "runs": len(g), "mean area": _g(m), "95% CI": f"[{_g(lo)}, {_g(hi)}]",
                     "mean rank": f"**{r:.2f}**" if algo == best else f"{r:.2f}", "p vs best": p, "_r": r})
    table = pd.DataFrame(rows).sort_values(["_r", "algorithm"], kind="stable").drop(columns="_r")
    return table.reset_index(drop=True), note


def reach_tables(reached: pd.DataFrame, targets: dict[str, cp.Target], cr: cp.CostRuns
                 ) -> tuple[pd.DataFrame, pd.DataFrame]:
    tt = pd.DataFrame([{"task": t.task, "target": f"{cr.scales[t.task].sign * t.value:.6g}", "from": t.source,
                        "reference cost": _g(t.reference_cost), "reference reaches it at (median)":
                        _g(t.reference_first)} for t in targets.values()])
    s = cp.reach_summary(reached)
    s = s.sort_values(["median_ratio", "algo"], kind="stable", na_position="last")
    summary = pd.DataFrame({"algorithm": s["algo"], "runs": s["runs"],
                            "reached": [f"{v:.0%}" for v in s["reached"]],
                            "median cost ratio": [_g(v) for v in s["median_ratio"]],
                            "quartiles": [f"[{_g(a)}, {_g(b)}]" for a, b in zip(s["q25"], s["q75"])]})
    return tt, summary.reset_index(drop=True)


def write_csv(path: Path, at: list[cp.AtFraction], areas: pd.DataFrame, reached: pd.DataFrame) -> Path:
    """One row per method: mean normalised regret and mean rank at each fraction, mean area, cost to target."""
    algos = sorted(areas["algo"].unique())
    out = pd.DataFrame({"algo": algos})
    for a in at:
        out[f"nr_at_{a.fraction:g}"] = [a.mean.get(m, math.nan) for m in algos]
        out[f"rank_at_{a.fraction:g}"] = [a.ranks.get(m, math.nan) for m in algos]
        out[f"friedman_p_at_{a.fraction:g}"] = a.cd.friedman_p if a.cd is not None else math.nan
    out["area"] = [areas.loc[areas["algo"] == m, "nr"].mean() for m in algos]
    summary = cp.reach_summary(reached).set_index("algo")
    out["reached"] = [summary.at[m, "reached"] for m in algos]
    out["median_cost_ratio"] = [summary.at[m, "median_ratio"] for m in algos]
    out.to_csv(path, index=False)
    return path


def cost_section(data: StudyData, settings: cp.CostSettings, out: Path) -> CostSection:
    """Blocks, printed text, figures and ``cost_summary.csv`` of the comparison against compute.

    Raises:
        st.ReportError: no task can be normalised (the caller turns it into a warning).
    """
    sec = CostSection()
    cr = cp.cost_runs(data, settings.incumbent)
    sec.warnings += cr.warnings
    palette = colours(cr.runs["algo"])
    fr = " ".join(label(f) for f in settings.fractions)
    sec.blocks += [Heading("Against compute"), Text(
        "Each run as a step function of its cumulative query cost (fidelity units on a multi-fidelity task, one "
        "per evaluation elsewhere): its normalised regret (best so far − f*) / (worst initial value − f*) after "
        "the last round whose cost is within a fraction of the task's budget (1 before its first counted value; "
        "a failed run is 1 after its last round). This is not the normalised regret of the \"Across tasks\" "
        "section, whose 1 is random search's median final value (or the runs' median first value): with 1 at the "
        "worst first value instead, the same run's regret is smaller here. " + _sentence(INCUMBENT_TEXT[cr.incumbent])),
        Table(scales_table(cr)), Text("Budget: the study's budget.cost where set, else the largest cost any run of "
                                      "the task reached; f*: the known optimum, else the best value any run found; "
                                      "the range's other end: the worst of the runs' first counted values.",
                                      "caption")]
    sec.printed += ["## Against compute", INCUMBENT_TEXT[cr.incumbent], _md(scales_table(cr)), ""]
    at = cp.at_fractions(cr, settings.fractions)
    regret, ranks, lines = fraction_tables(at)
    cap_r = f"Mean normalised regret over tasks x seeds at fractions {fr} of the budget (lower is better)."
    cap_k = ("Mean rank per fraction over complete (task, seed) blocks (1 = best), with the post-hoc p-value "
             "(Holm-adjusted Wilcoxon with >= 6 blocks, else Nemenyi) against the best-ranked method; " +
             "; ".join(lines) + ".")
    sec.blocks += [Heading("Normalised regret at fractions of the budget", 3), Table(regret), Text(cap_r, "caption"),
                   Table(ranks), Text(cap_k, "caption")]
    sec.printed += [cap_r, _md(regret), "", cap_k, _md(ranks), ""]
    areas = cp.areas(cr)
    auc, note = auc_table(areas)
    cap_a = ("Area under the anytime curve (normalised regret over the fraction 0..1 of the budget, linear axis; "
             f"0 = optimal from the start, 1 = no value all along), 95% bootstrap intervals; {note}.")
    sec.blocks += [Heading("Area under the anytime curve", 3), Table(auc), Text(cap_a, "caption")]
    sec.printed += [cap_a, _md(auc), ""]
    reached, targets = cp.cost_to_target(cr, settings.reference)
    tt, summary = reach_tables(reached, targets, cr)
    cap_t = (f"Cost to reach the target (the median final value of report.reference={settings.reference} within "
             "the budget), as a ratio to the reference cost (the median cost the reference's runs spent within the "
             "budget): share of runs that reach it, median ratio and quartiles of those that do.")
    sec.blocks += [Heading("Cost to reach a target", 3), Table(tt), Table(summary), Text(cap_t, "caption")]
    sec.printed += [cap_t, _md(tt), "", _md(summary), ""]
    grid = cp.on_grid(cr, cp.figure_grid(settings.fractions))
    for task, g in grid.groupby("task", sort=True) if settings.draws_task_figures(grid["task"].nunique()) else ():
        paths = plot_task_cost(task, g, palette, out)
        sec.figures += paths
        sec.blocks.append(Figure(paths[0], f"{task}: mean normalised regret against the fraction of the budget "
                                           "(log axes; bands: 1.96·SE over runs)."))
    prof = data_profiles(cp.profile_curves(cr), data.runs, COST_TARGETS, x="x")
    if not prof.curves.empty:
        pairs = int(prof.curves["pairs"].max())
        paths = plot_cost_profile(prof.curves, palette, pairs, out)
        sec.figures += paths
        table = final_table(prof)
        cap_p = (f"Data profile over cost: the fraction of (run, target) pairs reached against the fraction of the "
                 f"budget spent (log axis); {len(COST_TARGETS)} targets log-spaced from {COST_TARGETS[0]:.3g} to "
                 "1e-8 in this section's normalised regret. The table: fraction reached within the budget.")
        sec.blocks += [Heading("Data profile over cost", 3), Figure(paths[0], cap_p), Table(table)]
        sec.printed += [cap_p, _md(table), ""]
    sec.csv = write_csv(out / "cost_summary.csv", at, areas, reached)
    return sec
