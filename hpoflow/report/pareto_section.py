"""The report's "Several objectives" section (issue 40): hypervolume regret per method and task over rounds, the
final hypervolume regret with mean ranks and Wilcoxon-Holm (:mod:`statistics`, as for single-objective regret), a
Pareto-front figure per task, the 50% attainment surfaces, and ``pareto_summary.csv``.

A run has several objectives when it carries the tag ``objectives`` (the spec as JSON, written by
``runner.build``); its per-round objective and constraint values are its metrics of those names. Each task is
normalised by its box (:mod:`pareto`): the known front where the task has one here and declares its hypervolume
(tag ``task.hypervolume``: ZDT1-3, DTLZ2), else the best front found across every run of the task in the report.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from hpoflow.core.objectives import Objectives, non_dominated, parse_objectives
from hpoflow.report import statistics as st
from hpoflow.report.html import Block, Figure, Heading, Table, Text, to_markdown
from hpoflow.report.loading import FAILED_STATUSES, StudyData, logged_rounds, read_curves
from hpoflow.report.pareto import Box, attainment_surface, box_around, known_front, running_front
from hpoflow.report.pareto_figures import plot_hv_regret, plot_pareto

OBJECTIVES_TAG = "tags.objectives"
ATTAINMENT = 50.0   # percent of a method's runs that attain its summary surface


@dataclass
class TaskFront:
    """How one task is normalised: its objectives, box and reference front (minimisation form)."""

    task: str
    objectives: Objectives
    box: Box
    box_source: str
    front: np.ndarray            # (p, m): the known front sampled, or the best front found
    front_source: str
    best: float                  # normalised hypervolume of the reference front
    rounds: int


@dataclass
class ParetoSection:
    """What the section adds to the report."""

    blocks: list[Block] = field(default_factory=list)
    printed: list[str] = field(default_factory=list)
    figures: list[Path] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    csv: Path | None = None
    final: pd.DataFrame | None = None   # one row per run: task, algo, seed, run_id, status, failed, nr


def is_multi_objective(runs: pd.DataFrame) -> pd.Series:
    """True for the runs that recorded an objectives spec (tag ``objectives``)."""
    if OBJECTIVES_TAG not in runs.columns:
        return pd.Series(False, index=runs.index)
    return runs[OBJECTIVES_TAG].fillna("").astype(str).str.startswith("{")


def split(data: StudyData) -> tuple[StudyData, StudyData]:
    """The single-objective runs and the multi-objective ones, each with its curves."""
    mo = is_multi_objective(data.runs)

    def part(mask: pd.Series) -> StudyData:
        runs = data.runs[mask].reset_index(drop=True)
        curves = data.curves[data.curves["run_id"].isin(set(runs["run_id"]))] if len(data.curves) else data.curves
        return StudyData(runs, curves.reset_index(drop=True), data.parents, data.uri, data.selection)

    return part(~mo), part(mo)


def spec_of(text: str) -> Objectives:
    """The Objectives a run's ``objectives`` tag describes."""
    d = json.loads(text)
    spec = parse_objectives(d.get("objectives"), {k: tuple(v) for k, v in (d.get("constraints") or {}).items()},
                            d.get("reference"))
    assert spec is not None
    return spec


def _points(curves: pd.DataFrame, run_id: str, spec: Objectives, rounds: int) -> np.ndarray:
    """(rounds, m) objectives in minimisation form per round; NaN rows where the run has no feasible value."""
    out = np.full((rounds, len(spec.names)), np.nan)
    c = curves[(curves["run_id"] == run_id) & curves["step"].between(1, rounds)]
    for row in c.itertuples(index=False):
        values = {k: getattr(row, k) for k in [*spec.names, *spec.constraints] if k in c.columns}
        if all(k in values and np.isfinite(values[k]) for k in spec.names) and spec.feasible(values):
            out[int(row.step) - 1] = spec.minimised(values)
    return out


def task_front(task: str, name: str, spec: Objectives, finals: list[np.ndarray], declared_hv: float | None,
               rounds: int) -> TaskFront:
    """The box and reference front of one task: the known front (when ``name`` has one and the task declares its
    hypervolume against its reference point), else the best front found across ``finals`` (each (k, m))."""
    known = known_front(name) if spec.reference is not None and set(spec.signs()) == {1.0} else None  # fronts: min
    if known is not None and declared_hv is not None and known.shape[1] == len(spec.names):
        box, src = box_around(known, spec.reference_minimised())
        return TaskFront(task, spec, box, src, known, "known front (formula); its hypervolume as the task declares "
                         "it", declared_hv / box.volume, rounds)
    pts = np.vstack([f for f in finals if len(f)]) if any(len(f) for f in finals) else np.zeros((0, len(spec.names)))
    if not len(pts):
        raise st.ReportError(f"task '{task}': no run found a feasible point")
    front = pts[non_dominated(pts.tolist())]
    box, src = box_around(front, spec.reference_minimised())
    return TaskFront(task, spec, box, src, front, "best front found across all methods in this report",
                     box.hypervolume(front), rounds)


def _g(v: float, digits: int = 3) -> str:
    return "n/a" if not np.isfinite(v) else f"{v:.{digits}g}"


def _md(frame: pd.DataFrame) -> str:
    return to_markdown([Table(frame)], "").split("\n", 2)[2].strip()


def _median_run(final: pd.DataFrame) -> str:
    """The run of median final regret (the lower middle one for an even count; ties by seed)."""
    ordered = final.sort_values(["nr", "seed"], kind="stable")
    return str(ordered.iloc[(len(ordered) - 1) // 2]["run_id"])


def references_table(fronts: dict[str, TaskFront]) -> pd.DataFrame:
    rows = []
    for t in fronts.values():
        s = np.array(t.objectives.signs())
        rows.append({"task": t.task, "objectives": ", ".join(f"{n} ({d})" for n, d in
                                                              t.objectives.directions.items()),
                     "ideal": ", ".join(_g(v, 4) for v in t.box.ideal * s),
                     "reference point": ", ".join(_g(v, 4) for v in t.box.reference * s),
                     "reference point from": t.box_source, "reference front": t.front_source,
                     "its HV (normalised)": _g(t.best, 5), "rounds": t.rounds})
    return pd.DataFrame(rows)


def final_table(vb: pd.DataFrame, eaf: dict[tuple[str, str], float]) -> pd.DataFrame:
    """Per task and method: final HV regret (bootstrap 95% interval), Holm-adjusted Wilcoxon p against the best,
    and the HV regret of the method's 50% attainment surface."""
    rows = []
    for r in vb.sort_values(["task", "mean"], kind="stable").itertuples():
        mark = "**" if r.best else ""
        p = "best" if r.best else f"{r.p_holm:.3g}" + (" (tie)" if r.tie else "") if np.isfinite(r.p_holm) else "n/a"
        rows.append({"task": r.task, "algorithm": f"{mark}{r.algo}{mark}", "n": r.n, "failed": r.failed,
                     "final HV regret [95% CI]": f"{_g(r.mean, 4)} [{_g(r.ci_low)}, {_g(r.ci_high)}]",
                     "Wilcoxon-Holm p vs best": p,
                     "HV regret of 50% attainment": _g(eaf.get((r.task, r.algo), math.nan), 4)})
    return pd.DataFrame(rows)


def overall_table(ov: pd.DataFrame) -> pd.DataFrame:
    return pd.DataFrame({
        "algorithm": ov["algo"], "runs": ov["runs"], "failed": ov["failed"], "tasks": ov["tasks"],
        "final HV regret [95% CI]": [f"{_g(r.mean, 4)} [{_g(r.ci_low)}, {_g(r.ci_high)}]" for r in ov.itertuples()],
        "mean rank [95% CI]": [f"{_g(r.rank)} [{_g(r.rank_low)}, {_g(r.rank_high)}]" for r in ov.itertuples()]})


CAPTION = ("Hypervolume (HV) regret = HV of the task's reference front − HV of the run's feasible non-dominated "
           "points so far, both on objectives mapped linearly onto [0, 1] by the task's box (ideal point → 0, "
           "reference point → 1; the table above), so 0 is the reference front and at most its normalised HV "
           "(no point inside the box). A failed run counts with the points it found before it failed. Mean ranks: "
           "within each (task, seed) block, 1 = lowest final HV regret; 95% bootstrap intervals.")


def pareto_section(data: StudyData, out: Path, colors: dict[str, str] | None = None) -> ParetoSection:
    """The section for the multi-objective runs of ``data`` (call with :func:`split`'s second part).

    A task where no run found a feasible point is left out, with a warning.

    Raises:
        st.ReportError: a task whose runs disagree on the objectives.
    """
    sec = ParetoSection()
    runs = data.runs
    specs = {r: spec_of(t) for r, t in zip(runs["run_id"], runs[OBJECTIVES_TAG])}
    keys = sorted({k for s in specs.values() for k in [*s.names, *s.constraints]})
    curves = read_curves(data, keys)
    fronts: dict[str, TaskFront] = {}
    long, finals, last_fronts = [], [], {}
    for task, group in runs.groupby("task_key", sort=True):
        ids = list(group["run_id"])
        spec = specs[ids[0]]
        if any(specs[r].describe() != spec.describe() for r in ids):
            raise st.ReportError(f"task '{task}' mixes objective specs; select runs with one spec per task")
        budget = int(group["rounds"].min())  # 10^6 under a cost budget: stop at the last round a run logged
        rounds = max(logged_rounds(data.curves, ids, budget), logged_rounds(curves, ids, budget))
        points = {r: _points(curves, r, spec, rounds) for r in ids}
        fr = {r: running_front(p) for r, p in points.items()}
        last_fronts.update({r: f[-1] for r, f in fr.items()})
        hv = pd.to_numeric(group.get("tags.task.hypervolume", pd.Series(np.nan, index=group.index)), errors="coerce")
        declared = float(hv.iloc[0]) if hv.notna().all() and hv.nunique() == 1 else None
        try:
            tf = task_front(str(task), str(group["task"].iloc[0]), spec, [f[-1] for f in fr.values()], declared,
                            rounds)
        except st.ReportError as exc:  # e.g. every run of the task failed before its first feasible point
            sec.warnings.append(f"Warning: task '{task}' left out of the hypervolume statistics: {exc}")
            continue
        fronts[str(task)] = tf
        for run in group.itertuples(index=False):
            nr = np.array([tf.best - tf.box.hypervolume(f) for f in fr[run.run_id]])
            long.append(pd.DataFrame({"task": str(task), "algo": run.algo, "seed": run.seed, "run_id": run.run_id,
                                      "step": np.arange(1, rounds + 1), "nr": nr}))
            finals.append({"task": str(task), "algo": run.algo, "seed": run.seed, "run_id": run.run_id,
                           "status": run.status, "failed": run.status in FAILED_STATUSES, "nr": float(nr[-1])})
    if not fronts:
        return sec
    curves_nr = pd.concat(long, ignore_index=True)
    final = pd.DataFrame(finals)
    sec.final = final
    sec.blocks += [Heading("Several objectives: hypervolume regret"), Text(
        "How each task is normalised (values in the objectives' own units; the reference front's HV as a fraction "
        "of its box):"), Table(references_table(fronts))]
    hv_fig = plot_hv_regret(curves_nr, out, colors)
    sec.figures += hv_fig
    sec.blocks.append(Figure(hv_fig[0], "Normalised hypervolume regret of each run's front so far against the "
                             "round, mean over seeds with 1.96·SE bands (log scale)."))
    ov = st.overall(final)
    sec.blocks += [Table(overall_table(ov)), Text(CAPTION, "caption")]
    sec.printed += ["## Several objectives: final hypervolume regret", _md(overall_table(ov)), ""]
    _rank_tests(final, sec)
    eaf, figures = _fronts_and_attainment(fronts, final, last_fronts, out, colors, sec)
    vb = st.versus_best(final)
    table = final_table(vb, eaf)
    caption = ("Final HV regret per task and method (bootstrap 95% interval over seeds), the two-sided Wilcoxon "
               "signed-rank p-value against the task's best mean (paired by seed, Holm-corrected within the task; "
               "'tie': not significantly worse at α = 0.05; with 5 paired seeds the smallest two-sided Wilcoxon p is "
               "0.0625, so 6 or more are needed for any difference to count) and the HV regret of the method's 50% "
               "attainment surface (the points at least half of its runs attained).")
    sec.blocks += [Heading("Per task: final hypervolume regret", 3), Table(table), Text(caption, "caption")]
    sec.printed += ["### Per task: final hypervolume regret", _md(table), caption, ""]
    sec.blocks += figures
    sec.csv = out / "pareto_summary.csv"
    out.mkdir(parents=True, exist_ok=True)
    vb.assign(hv_regret_attainment50=[eaf.get((t, a), math.nan) for t, a in zip(vb["task"], vb["algo"])]).rename(
        columns={"mean": "hv_regret_mean", "ci_low": "hv_regret_ci_low", "ci_high": "hv_regret_ci_high"}).to_csv(
        sec.csv, index=False)
    return sec


def _rank_tests(final: pd.DataFrame, sec: ParetoSection) -> None:
    """The pairwise p-values of final HV regret over (task, seed) blocks, added to ``sec`` (a warning if none)."""
    try:
        cd = st.critical_difference(final)
    except st.ReportError as exc:
        sec.warnings.append(f"Warning: no rank test on hypervolume regret: {exc}")
        return
    order = list(cd.mean_ranks.sort_values(kind="stable").index)
    pairs = cd.pvalues.loc[order, order].map(lambda p: f"{p:.3g}")
    for a in order:
        pairs.loc[a, a] = "—"
    pairs.insert(0, f"{cd.method} p", order)
    omnibus = "Friedman" if len(order) >= 3 else "paired Wilcoxon"  # statistics.critical_difference's test
    text = (f"Pairwise {cd.method} p-values of final HV regret over {cd.n_blocks} (task, seed) blocks; {omnibus} "
            f"p = {cd.friedman_p:.3g}.")
    sec.blocks += [Text(text), Table(pairs)]
    sec.printed += [text, _md(pairs), ""]


def _fronts_and_attainment(fronts: dict[str, TaskFront], final: pd.DataFrame, last: dict[str, np.ndarray],
                           out: Path, colors: dict[str, str] | None, sec: ParetoSection
                           ) -> tuple[dict[tuple[str, str], float], list[Block]]:
    """Per task: the Pareto figure (median seed's front, 50% attainment surface) and each method's HV regret of
    its 50% attainment surface."""
    eaf: dict[tuple[str, str], float] = {}
    blocks: list[Block] = [Heading("Per task: Pareto fronts", 3)]
    for task, tf in fronts.items():
        rows = final[final["task"] == task]
        median, surfaces = {}, {}
        for algo, g in rows.groupby("algo", sort=True):
            median[str(algo)] = last[_median_run(g)]
            try:
                surfaces[str(algo)] = attainment_surface([last[r] for r in g["run_id"]], ATTAINMENT)
            except ValueError as exc:  # more than 2 objectives without moocore
                sec.warnings.append(f"Warning: task '{task}': no attainment surface: {exc}")
                continue
            eaf[(task, str(algo))] = tf.best - tf.box.hypervolume(surfaces[str(algo)])
        if len(tf.objectives.names) < 2:
            continue
        paths = plot_pareto(task, tf.objectives.names, np.array(tf.objectives.signs()), median, surfaces, tf.front,
                            "known front" if tf.front_source.startswith("known") else "best front found", out,
                            colors)
        sec.figures += paths
        more = "" if len(tf.objectives.names) == 2 else f" (the first two of {len(tf.objectives.names)} objectives)"
        blocks.append(Figure(paths[0], f"{task}: left, each method's final front from its median seed by final HV "
                             f"regret; right, its 50% empirical attainment surface over seeds{more}; grey: the "
                             f"{'known front' if tf.front_source.startswith('known') else 'best front found'}."))
    return eaf, blocks
