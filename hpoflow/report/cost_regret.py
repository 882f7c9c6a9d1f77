"""Regret against query cost as a two-objective view (paper 002's trade-off; issue 40): for tasks where runs choose
when to query (some rounds cost nothing: CE-GP-UCB and the bandit baselines with Bernoulli queries), each method's
(mean cumulative query cost C_t, mean average regret R_t/t) over rounds, its non-dominated points, and which methods'
final (C_T, R_T/T) no other method's dominates. Tasks with a fidelity are left to the "Against compute" section."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from hpoflow.report.html import Block, Figure, Heading, Table, Text, to_markdown
from hpoflow.report.loading import StudyData, logged_rounds
from hpoflow.report.pareto import cost_regret_front
from hpoflow.report.pareto_figures import plot_cost_regret
from hpoflow.report.statistics import _matrix


@dataclass
class CostRegretSection:
    blocks: list[Block] = field(default_factory=list)
    printed: list[str] = field(default_factory=list)
    figures: list[Path] = field(default_factory=list)
    csv: Path | None = None


def chooses_queries(group: pd.DataFrame, curves: pd.DataFrame) -> bool:
    """Every run of the task logs regret (against the task's optimum, fixed or per round), none a fidelity, and some
    round cost nothing (a round without a query)."""
    c = curves[curves["run_id"].isin(set(group["run_id"]))]
    if not len(c) or "query_cost" not in c.columns or "cumulative_regret" not in c.columns:
        return False
    if c.groupby("run_id")["cumulative_regret"].count().reindex(group["run_id"]).fillna(0).eq(0).any():
        return False
    if "fidelity" in c.columns and c["fidelity"].notna().any():
        return False
    steps = c.sort_values(["run_id", "step"])
    spent = steps.groupby("run_id")["query_cost"].diff().fillna(steps["query_cost"])
    return bool((spent == 0).any())


def trade_off(group: pd.DataFrame, curves: pd.DataFrame
              ) -> tuple[dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]], pd.DataFrame]:
    """Per method: its (mean C_t, mean R_t/t) over rounds and the indices of the non-dominated ones; a table of its
    final mean C_T and R_T/T (with their standard deviations over runs) and whether it is on the methods' front."""
    rounds = logged_rounds(curves, group["run_id"], int(group["rounds"].min()))  # not 10^6 under a cost budget
    paths, rows = {}, []
    for algo, g in group.groupby("algo", sort=True):
        ids = list(g["run_id"])
        cost = np.fmax.accumulate(np.nan_to_num(_matrix(curves, ids, "query_cost", rounds), nan=0.0), axis=1)
        regret = _matrix(curves, ids, "cumulative_regret", rounds) / np.arange(1, rounds + 1)
        mc, mr = cost.mean(axis=0), np.nanmean(regret, axis=0)
        keep = cost_regret_front(mc, mr)
        paths[str(algo)] = (mc, mr, keep)
        rows.append({"algo": str(algo), "n": len(ids), "cost": float(mc[-1]), "cost_sd": float(cost[:, -1].std(ddof=1))
                     if len(ids) > 1 else 0.0, "regret": float(mr[-1]),
                     "regret_sd": float(np.nanstd(regret[:, -1], ddof=1)) if len(ids) > 1 else 0.0})
    final = pd.DataFrame(rows)
    on = set(cost_regret_front(final["cost"].to_numpy(), final["regret"].to_numpy()))
    final["front"] = [i in on for i in range(len(final))]
    return paths, final.sort_values(["cost", "regret"], kind="stable").reset_index(drop=True)


def _table(final: pd.DataFrame) -> pd.DataFrame:
    return pd.DataFrame({"algorithm": [f"**{a}**" if f else a for a, f in zip(final["algo"], final["front"])],
                         "n": final["n"],
                         "C_T (query cost)": [f"{c:.4g} ± {s:.2g}" for c, s in zip(final["cost"], final["cost_sd"])],
                         "R_T/T (average regret)": [f"{r:.4g} ± {s:.2g}" for r, s in
                                                    zip(final["regret"], final["regret_sd"])],
                         "non-dominated": ["yes" if f else "" for f in final["front"]]})


CAPTION = ("Regret against query cost as two objectives, both minimised: each method's final mean cumulative query "
           "cost C_T and mean average regret R_T/T over its runs (± one standard deviation over runs). Bold, "
           "'non-dominated': no other method has both a lower (or equal) C_T and a lower R_T/T. The figure draws each "
           "method's mean (C_t, R_t/t) over rounds (thin), its non-dominated points (thick) and its final point "
           "(filled when non-dominated).")


def cost_regret_section(data: StudyData, out: Path, colors: dict[str, str] | None = None) -> CostRegretSection:
    """The section for the tasks of ``data`` whose runs choose when to query (:func:`chooses_queries`)."""
    sec = CostRegretSection()
    tables = []
    for task, group in data.runs.groupby("task_key", sort=True):
        if not chooses_queries(group, data.curves):
            continue
        paths, final = trade_off(group, data.curves)
        if not sec.blocks:
            sec.blocks.append(Heading("Regret against query cost (two objectives)"))
        figure = plot_cost_regret(str(task), paths, final, out, colors)
        sec.figures += figure
        table = _table(final)
        sec.blocks += [Heading(str(task), 3), Table(table), Text(CAPTION, "caption"),
                       Figure(figure[0], f"{task}: each method's non-dominated (C_t, R_t/t) over rounds; circles: "
                              "final points (filled: non-dominated among the methods).")]
        md = to_markdown([Table(table)], "").split("\n", 2)[2].strip()
        sec.printed += [f"### {task}: regret against query cost", md, ""]
        tables.append(final.assign(task=str(task)))
    if tables:
        sec.csv = out / "cost_regret.csv"
        pd.concat(tables, ignore_index=True).to_csv(sec.csv, index=False)
    return sec
