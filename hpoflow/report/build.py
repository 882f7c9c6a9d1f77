"""Assemble the whole report from a :class:`StudyData`: cross-task statistics first, then per-task regret.

Writes ``report.html`` (self-contained), ``report.md``, ``summary.csv`` and the figures (PNG, SVG) into one
folder, and prints the tables; the CLI (:mod:`hpoflow.report.cli`) only parses keys and calls ``build``.
"""
from __future__ import annotations

import csv
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from hpoflow.core.budget import ROUNDS_UNDER_COST
from hpoflow.report import statistics as st
from hpoflow.report.aggregate import summarise
from hpoflow.report.compute import CostSettings, wanted
from hpoflow.report.cost_regret import cost_regret_section
from hpoflow.report.cost_section import cost_section
from hpoflow.report.figures import palette, plot_anytime, plot_cd, plot_profiles, plot_task
from hpoflow.report.html import Block, Figure, Heading, Table, Text, to_html, to_markdown
from hpoflow.report.learning_curves import per_task_curve_figures
from hpoflow.report.loading import StudyData, best_config, to_run_curves
from hpoflow.report.pareto_section import pareto_section, split
from hpoflow.report.profiles import ALL, BBOB_GROUPS, TARGETS_TEXT, data_profiles, final_table
from hpoflow.report.tables import (
    CAPTION_NORMALISED,
    CSV_FIELDS,
    caption,
    cd_caption,
    csv_row,
    format_best_configs,
    format_table,
    overall_table,
    references_table,
    versus_best_caption,
    versus_best_table,
)

TITLE = "hpoflow report"
MAX_CONFIG_VALUES = 8   # swept params listing more values than this show a count

CAPTION_CURVES = ("Learning curves: every trial of one run per method (its lowest seed), value against the step "
                  "(the fidelity); strong: the trials that reached the task's full fidelity, faint: those stopped "
                  "earlier. The same figure for every run is its MLflow artifact learning_curves.png.")


@dataclass
class Built:
    """What ``build`` wrote and printed."""

    html: Path
    markdown: Path
    csv: Path
    figures: list[Path] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    text: str = ""          # the tables as printed
    extra: list[Path] = field(default_factory=list)   # other files written (cost_summary.csv)


def _table_md(frame: pd.DataFrame) -> str:
    return to_markdown([Table(frame)], "").split("\n", 2)[2].strip()


def _shown(col: str, value: object) -> str:
    """A param's value as the config table shows it: ``budget.rounds``' default under a cost budget (10^6) is
    ``no limit (budget.cost)``."""
    if col == "params.budget.rounds":
        try:
            if int(float(str(value))) >= ROUNDS_UNDER_COST:
                return "no limit (budget.cost)"
        except ValueError:
            pass
    return str(value)


def study_config(runs: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """The config the runs share (one value) and what the study varies, from the runs' params; git commits.

    A setting only some algorithms have (``algo.xi``, ``surrogate.*`` of the model-based ones) is marked
    "only <algorithms>" instead of being listed as shared by all.
    """
    rows = []
    algos = runs.get("tags.algo", pd.Series(["?"] * len(runs), index=runs.index)).astype(str)
    for col in sorted(c for c in runs.columns if c.startswith("params.")):
        present = runs[col].notna()
        values = sorted({_shown(col, v) for v in runs.loc[present, col]})
        if not values:
            continue
        shown = ", ".join(values) if len(values) <= MAX_CONFIG_VALUES else f"{len(values)} values"
        varies = "swept" if len(values) > 1 else ""
        if not present.all():
            varies = "; ".join(filter(None, [varies, "only " + ", ".join(sorted(set(algos[present])))]))
        rows.append({"setting": col.removeprefix("params."), "value": shown, "varies": varies})
    commits = sorted({str(v) for v in runs.get("tags.git_commit", pd.Series(dtype=object)).dropna()})
    return pd.DataFrame(rows, columns=["setting", "value", "varies"]), commits


def order_note(first_by_rank: str, first_by_mean: str, tied: bool = False) -> str:
    """Why the diagram's order (mean rank) can differ from the table's mean normalised regret."""
    if tied and first_by_rank != first_by_mean:  # one method first by both: nothing ties with it
        lead = (f"Here {first_by_mean} has the lowest mean normalised regret but ties on mean rank with "
                f"{first_by_rank}: ")
    elif first_by_rank != first_by_mean:
        lead = f"Here {first_by_rank} ranks first and {first_by_mean} has the lowest mean normalised regret: "
    else:
        lead = "The order here differs from the table's mean normalised regret: "
    return (lead + "the diagram averages each method's rank within every (task, seed) block, so it counts how "
            "often a method wins, not by how much, while the table averages the regret itself, so a few large "
            "losses (or wins) move the mean but change a rank by at most one place.")


def _data_profiles(norm: st.Normalised, runs: pd.DataFrame, out: Path, blocks: list[Block],
                   printed: list[str], colors: dict[str, str]) -> list[Path]:
    """COCO-style data profiles (``data_profile`` and, on BBOB, ``data_profile_groups``) and their final table."""
    prof = data_profiles(norm.curves, runs)
    if prof.curves.empty:
        return []
    scale = "evaluations / dimension" if prof.per_dimension else "evaluations"
    text = (f"Data profiles (COCO's empirical run-length distributions): the fraction of (run, target) pairs whose "
            f"best-so-far value reached the target, against {scale} (log axis). Targets: {TARGETS_TEXT} "
            "(1 = the task's reference, see above); a failed run reaches no further target after it failed.")
    figures = plot_profiles(prof.curves, prof.per_dimension, "Data profiles, all functions", out, "data_profile",
                            [ALL], colors)
    blocks += [Heading("Data profiles", 3), Figure(figures[0], text)]
    groups = [g for g in BBOB_GROUPS if (prof.curves["panel"] == g).any()]
    if groups:
        more = plot_profiles(prof.curves, prof.per_dimension, "Data profiles by BBOB function group", out,
                             "data_profile_groups", groups, colors)
        figures += more
        blocks.append(Figure(more[0], "The same data profiles per BBOB function group (COCO's five groups)."))
    table = final_table(prof)
    caption = f"Fraction of (run, target) pairs reached within the budget, all functions; targets: {TARGETS_TEXT}."
    blocks += [Table(table), Text(caption, "caption")]
    printed += ["Data profiles: " + caption, _table_md(table), ""]
    return figures


def _cross_task(norm: st.Normalised, out: Path, blocks: list[Block], printed: list[str],
                colors: dict[str, str]) -> list[Path]:
    figures: list[Path] = []
    blocks += [Heading("Across tasks"), Text("How each task is normalised:"),
               Table(references_table(norm.references))]
    ov = st.overall(norm.final)
    blocks += [Table(overall_table(ov)), Text(CAPTION_NORMALISED, "caption")]
    printed += ["## Across tasks", _table_md(overall_table(ov)), ""]
    by_cost = st.on_cost_grid(norm)
    reg = plot_anytime(st.regret_over(norm.curves, "step"), st.regret_over(by_cost, "cost_fraction"),
                       "normalised regret", "Normalised regret over the budget (mean, 95% bands)", out,
                       "normalised_regret", log=True, colors=colors)
    rank = plot_anytime(st.ranks_over(norm.curves, "step"), st.ranks_over(by_cost, "cost_fraction"),
                        "average rank (1 = best)", "Average rank over the budget (mean, 95% bands)", out,
                        "average_rank", colors=colors)
    figures += reg + rank
    blocks += [Figure(reg[0], "Normalised regret of the best value so far, averaged over tasks and seeds, against "
                      "the round and against the fraction of the task's budget spent in query cost (cumulative "
                      "query cost / the median final cost of the task's finished runs); bands: 1.96·SE over runs."),
               Figure(rank[0], "Average rank per (task, seed) block against round and against the fraction of the "
                      "budget's query cost; bands: 1.96·SE over blocks. Blocks where some algorithm has no run "
                      "are left out.")]
    pvalues = None  # the comparison's pairwise p-values, for the A/A twins' line
    try:
        cd = st.critical_difference(norm.final)
        pvalues = cd.pvalues if cd.method == "Wilcoxon–Holm" else None
    except st.ReportError as exc:
        blocks.append(Text(f"Warning: no critical-difference diagram: {exc}", "warning"))
        norm.warnings.append(f"Warning: no critical-difference diagram: {exc}")
    else:
        cd_paths = plot_cd(cd.mean_ranks, cd.pvalues, f"Final normalised regret, {cd.method}", out, colors=colors)
        figures += cd_paths
        text = cd_caption(cd.method, cd.friedman_p, cd.n_blocks, len(cd.mean_ranks))
        order = list(cd.mean_ranks.sort_values(kind="stable").index)
        by_mean = list(ov.sort_values("mean", kind="stable")["algo"])
        if [a for a in by_mean if a in order] != order:
            tied = abs(cd.mean_ranks[order[0]] - cd.mean_ranks.get(by_mean[0], float("inf"))) < 1e-12
            text += " " + order_note(order[0], by_mean[0], tied)
        pairs = cd.pvalues.loc[order, order].map(lambda p: f"{p:.3g}")
        for a in order:
            pairs.loc[a, a] = "—"
        pairs.insert(0, f"{cd.method} p", order)
        blocks += [Figure(cd_paths[0], text), Table(pairs)]
        printed += [text, "", _table_md(pairs), ""]
    vb = st.versus_best(norm.final)
    blocks.append(Heading("Per task: against the best method", 3))
    for task, rows in vb.groupby("task", sort=True):
        table = versus_best_table(rows)
        pairs = int(norm.final[norm.final["task"] == task].groupby("algo")["seed"].nunique().min())
        blocks += [Heading(task, 4), Table(table), Text(versus_best_caption(pairs), "caption")]
        printed += [f"### {task}", _table_md(table), ""]
    lines = [s.line() for s in st.seed_adequacy(norm.final)] or [
        "No task has two algorithms with at least two paired seeds."]
    blocks += [Heading("Seed adequacy", 3), Text(
        "For the two best methods per task: the observed paired difference of final normalised regret "
        "(second − first; bootstrap 95% interval) and the number of seeds a two-sided paired t-test would need "
        "to separate them at α = 0.05 with 80% power, from the observed standardised effect d_z = mean/sd of the "
        "paired differences (statsmodels TTestPower).", "caption")]
    twins = [t.line() for t in st.twin_power(norm.final, pvalues)] or [
        "No A/A twin in this study: run one method again with sweep.twin=1 (the same method and seeds, other "
        "random streams) and the report measures, from the twins' difference, the smallest mean-rank difference "
        "this comparison can detect."]
    lines += twins
    blocks += [Text(line) for line in lines]
    printed += ["Seed adequacy:"] + lines + [""]
    return figures


def _against_compute(data: StudyData, settings: CostSettings, out: Path, blocks: list[Block], printed: list[str],
                     warnings: list[str], figures: list[Path]) -> list[Path]:
    """The comparison against cost (:mod:`hpoflow.report.cost_section`) when ``settings`` asks for it."""
    if not wanted(data, settings):
        return []
    try:
        sec = cost_section(data, settings, out)
    except st.ReportError as exc:
        warnings.append(f"Warning: no comparison against compute: {exc}")
        return []
    warnings += sec.warnings
    return _merged(sec, blocks, printed, figures)


def _merged(sec: Any, blocks: list[Block], printed: list[str], figures: list[Path]) -> list[Path]:
    """A section's blocks, printed lines and figures appended to the report's; its CSV (none or one)."""
    blocks += sec.blocks
    printed += sec.printed
    figures += sec.figures
    return [sec.csv] if sec.csv else []


def _several_objectives(data: StudyData, out: Path, blocks: list[Block], printed: list[str], warnings: list[str],
                        figures: list[Path], colors: dict[str, str]) -> list[Path]:
    """The multi-objective runs' section (:mod:`hpoflow.report.pareto_section`); its CSV."""
    sec = pareto_section(data, out, colors)
    warnings += sec.warnings
    return _merged(sec, blocks, printed, figures)


def _cost_regret(data: StudyData, out: Path, blocks: list[Block], printed: list[str], figures: list[Path],
                 colors: dict[str, str]) -> list[Path]:
    """Regret against query cost as two objectives (:mod:`hpoflow.report.cost_regret`) where runs spend different
    query cost on a task with a known optimum."""
    return _merged(cost_regret_section(data, out, colors), blocks, printed, figures)


def _per_task(data: StudyData, out: Path, blocks: list[Block], printed: list[str], with_configs: bool,
              colors: dict[str, str], settings: CostSettings) -> tuple[list[Path], dict]:
    finished = StudyData(data.runs[data.runs["status"] == "FINISHED"], data.curves, data.parents, data.uri)
    summaries = summarise(to_run_curves(finished), settings.incumbent)
    figures = []
    blocks.append(Heading("Per task: regret of the finished runs"))
    draw = settings.draws_task_figures(len(summaries))
    if not draw:
        blocks.append(Text(f"{len(summaries)} tasks: no figure per task (report.task_figures=true draws them).",
                           "caption"))
    curve_figures = per_task_curve_figures(data.uri, finished.runs, out, colors) if draw else {}
    figures += list(curve_figures.values())
    for task_key, rows in summaries.items():
        if with_configs:
            for s in rows:  # no best run: no run of the algorithm has a counted (full-fidelity) evaluation
                s.best_config = best_config(data.uri, s.best_run, data.runs) if s.best_run else None
        task = " ".join(task_key)
        paths = plot_task(task, rows, out, colors) if draw else []
        figures += paths
        blocks += [
            Heading(task, 3),
            Table(_md_to_frame(format_table(rows))),
            Text(caption(rows) + " FINISHED runs only (failures are counted in the tables above).", "caption"),
            Text("Best configuration per algorithm:"),
            Table(_md_to_frame(format_best_configs(rows))),
        ]
        blocks += [Figure(p, p.stem.replace("_", " ")) for p in paths if p.suffix == ".png"]
        if task in curve_figures:
            blocks.append(Figure(curve_figures[task], CAPTION_CURVES))
        printed += [f"### {task} (finished runs)", format_table(rows), caption(rows), format_best_configs(rows), ""]
    return figures, summaries


def _md_to_frame(md: str) -> pd.DataFrame:
    """A Markdown table (as ``tables.format_*`` write it) back into string cells."""
    lines = [ln.strip().strip("|").split(" | ") for ln in md.splitlines() if ln.strip()]
    return pd.DataFrame(lines[2:], columns=[c.strip() for c in lines[0]])


def write_summary_csv(path: Path, summaries: dict, norm: st.Normalised | None) -> Path:
    """One row per (task, algorithm): the per-task regret columns (finished runs) and, beside them, the
    normalised-regret columns (all runs, failures counted)."""
    vb = st.versus_best(norm.final).set_index(["task", "algo"]) if norm is not None else pd.DataFrame()
    fields = CSV_FIELDS + ["runs", "failed", "normalised_regret_mean", "normalised_regret_ci_low",
                           "normalised_regret_ci_high", "p_holm_vs_best", "best", "tie"]
    rows = {(s.task, s.algo): csv_row(s) for rows in summaries.values() for s in rows}
    for (task, algo), r in vb.iterrows():
        rows.setdefault((task, algo), {"task": task, "algo": algo, "n": 0}).update(
            runs=r["n"], failed=r["failed"], normalised_regret_mean=r["mean"], normalised_regret_ci_low=r["ci_low"],
            normalised_regret_ci_high=r["ci_high"], p_holm_vs_best=r["p_holm"], best=r["best"], tie=r["tie"])
    with open(path, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=fields)
        writer.writeheader()
        for key in sorted(rows):
            writer.writerow(rows[key])
    return path


def build(data: StudyData, out: Path, *, best_configs: bool = True, cost: CostSettings | None = None) -> Built:
    """Write report.html, report.md, summary.csv and the figures into ``out``; with ``cost`` (and runs that
    logged a fidelity or set budget.cost, or ``report.x=cost``) also the "Against compute" section.

    Raises:
        st.ReportError: nothing selected, or input the statistics cannot honestly summarise.
    """
    out.mkdir(parents=True, exist_ok=True)
    single, several = split(data)  # several objectives: their own section; the rest is the single-objective report
    norm = (st.normalise(single, (cost or CostSettings()).incumbent) if len(single.runs) or not len(several.runs)
            else None)
    notes = list(norm.warnings) if norm is not None else []
    config, commits = study_config(data.runs)
    blocks: list[Block] = [Text(f"Selection: {data.selection}.")]
    blocks += [Text(w, "warning") for w in notes]
    printed: list[str] = []
    colors = palette(data.runs["tags.algo"].dropna() if "tags.algo" in data.runs else [])  # one per algorithm
    figures: list[Path] = []
    extra: list[Path] = []
    if norm is not None:
        figures += _cross_task(norm, out, blocks, printed, colors)
        figures += _data_profiles(norm, single.runs, out, blocks, printed, colors)
        extra += _against_compute(single, cost or CostSettings(), out, blocks, printed, norm.warnings, figures)
        extra += _cost_regret(single, out, blocks, printed, figures, colors)
    if len(several.runs):
        extra += _several_objectives(several, out, blocks, printed, notes, figures, colors)
    more, summaries = (_per_task(single, out, blocks, printed, best_configs, colors, cost or CostSettings())
                       if len(single.runs) else ([], {}))
    blocks += [Heading("Study"), Text(f"{len(data.runs)} runs; git commit(s): {', '.join(commits) or 'unknown'}."
                                      + (f" Study parent run: {data.study_parent()}." if data.study_parent() else "")),
               Table(config)]
    if norm is not None:
        notes += [w for w in norm.warnings if w not in notes]  # CD's
    blocks[1:1] = [Text(w, "warning") for w in notes if Text(w, "warning") not in blocks]
    html_path, md_path = out / "report.html", out / "report.md"
    from hpoflow.store.params import mask_secrets

    html_path.write_text(mask_secrets(to_html(blocks, TITLE)))  # the selection names the store's URI
    md_path.write_text(mask_secrets(to_markdown(blocks, TITLE)))
    csv_path = write_summary_csv(out / "summary.csv", summaries, norm)
    return Built(html_path, md_path, csv_path, figures + more, notes, "\n".join(printed), extra)
