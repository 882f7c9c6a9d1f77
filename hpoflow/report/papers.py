"""Paper table layouts, read from a study's MLflow runs (``python -m hpoflow.report experiment=<name>``).

Each layout takes the study's runs (one row per run: params, tags, final metrics, status) and returns the
paper's table as text, with the paper's own numbers beside ours where the paper prints them. Failed runs are
counted in every cell (``n``, and ``failed`` when any), never silently dropped. ``LAYOUTS`` maps an
experiment name (``conf/experiment/<name>.yaml``) to its layout; other modules may add entries.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

# Paper 000, Section 5 tables (MNIST): mean, std of the final validation loss, per acquisition and T, for its N.
BBO_PAPER = {
    "bbo_ei": {20: [(3.15, .75), (2.73, .03), (2.70, .04), (2.43, .12), (2.46, .13)],
               40: [(3.45, .85), (2.42, .23), (2.44, .55), (2.39, .09), (2.51, .09)],
               60: [(2.58, .58), (2.40, .35), (2.34, .28), (2.10, .08), (2.25, .17)]},
    "bbo_ucb": {20: [(2.93, .60), (2.59, .47), (2.49, .34), (2.39, .07), (2.31, .13)],
                40: [(2.56, .53), (2.34, .45), (2.29, .29), (2.27, .30), (2.22, .16)],
                60: [(2.57, .27), (2.26, .28), (2.23, .17), (2.19, .19), (2.20, .10)]},
}
BBO_GRID = {20: (100, 500, 1000, 2000, 3000), 40: (500, 1000, 2000, 3000, 4000), 60: (1000, 2000, 3000, 4000, 6000)}


def load_runs(uri: str, experiment: str) -> Any:
    """The study's job runs as a DataFrame (``params.*``, ``metrics.*`` = last value, ``tags.*``, ``status``).

    One bulk search (MLflow pages it); parent runs and runs a rerun superseded are left out.
    """
    import mlflow

    from hpoflow.sweeps import KIND_TAG, SUPERSEDED_TAG

    mlflow.set_tracking_uri(uri)
    runs = mlflow.search_runs(experiment_names=[experiment], max_results=100_000, output_format="pandas")
    if runs.empty:
        return runs
    for tag in (KIND_TAG, SUPERSEDED_TAG):
        if f"tags.{tag}" not in runs:
            runs[f"tags.{tag}"] = None
    keep = (runs[f"tags.{KIND_TAG}"] != "study") & (runs[f"tags.{SUPERSEDED_TAG}"] != "true")
    return runs[keep].reset_index(drop=True)


def mean_std(values: Any, fmt: str = ".3f") -> str:
    a = np.asarray([v for v in values if v is not None and np.isfinite(v)], dtype=float)
    if a.size == 0:
        return "n/a"
    sd = a.std(ddof=1) if a.size > 1 else 0.0
    return f"{a.mean():{fmt}} ± {sd:{fmt}}"


def _count(cell: Any) -> str:
    failed = int((cell["status"] != "FINISHED").sum())
    return f"n={len(cell)}" + (f", {failed} failed" if failed else "")


def _num(runs: Any, column: str) -> Any:
    import pandas as pd

    return pd.to_numeric(runs[column], errors="coerce") if column in runs else pd.Series(np.nan, index=runs.index)


# -- paper 000 ---------------------------------------------------------------------------------------
def bbo_inner_horizon(runs: Any) -> str:
    """Per acquisition and T: the paper's N, our N, our final validation/test loss at lambda+_T, the paper's."""
    runs = runs.assign(T=_num(runs, "params.budget.rounds"), paperN=_num(runs, "params.task.inner_steps"),
                       scale=_num(runs, "params.task.steps_scale").fillna(1.0),
                       val=_num(runs, "metrics.returned_value"), test=_num(runs, "metrics.returned_test_loss"))
    task = ", ".join(sorted(set(runs.get("params.task.name", ["?"]))))
    scales = sorted(set(runs["scale"]))
    seeds = sorted(set(_num(runs, "params.seed").dropna().astype(int)))
    title = (f"Paper 000, T x N tables on {task}: final validation loss at the returned point lambda+_T "
             f"(posterior-mean argmin), mean ± std over seeds {seeds}; N = paper N x {scales}; "
             "paper: MNIST, 2-conv CNN (the loss scales differ: compare shapes, not values)")
    out = [title, ""]
    width = 16
    for algo, label in (("bbo_ei", "EI"), ("bbo_ucb", "UCB")):
        out.append(f"=== {label} acquisition ===")
        for T, grid in BBO_GRID.items():
            mine = runs[(runs["params.algo.name"] == algo) & (runs["T"] == T)]
            if mine.empty:
                continue
            cells = [mine[mine["paperN"] == n] for n in grid]
            out.append(f"outer Bayesian optimization steps T = {T}")
            out.append("paper N".ljust(18) + "".join(f"{n:>{width}d}" for n in grid))
            out.append("our N".ljust(18) + "".join(f"{round(n * scales[0]) if scales else n:>{width}d}" for n in grid))
            out.append("val loss".ljust(18) + "".join(f"{mean_std(c['val']):>{width}}" for c in cells))
            out.append("test loss".ljust(18) + "".join(f"{mean_std(c['test']):>{width}}" for c in cells))
            out.append("runs".ljust(18) + "".join(f"{_count(c):>{width}}" for c in cells))
            out.append("paper (MNIST)".ljust(18) + "".join(f"{f'{m:.2f} ± {s:.2f}':>{width}}"
                                                           for m, s in BBO_PAPER[algo][T]))
            out.append("")
    return "\n".join(out)


# -- paper 002, Table A2 -----------------------------------------------------------------------------
def _cell_order(name: str) -> tuple[int, float]:
    head, _, tail = name.partition("_")
    rank = {"R-GP-UCB": 0, "TV-GP-UCB": 1, "Ber": 2, "CE": 3, "LCB-UCB": 4}.get(head, 5)
    try:
        return rank, float(tail)
    except ValueError:
        return rank, 0.0


def ce_gp_ucb_table_a2(runs: Any) -> str:
    """R_T/T and C_T per row (cell) and eps, then CE / LCB-UCB against Bernoulli at equal cost."""
    runs = runs.assign(T=_num(runs, "params.budget.rounds"), eps=_num(runs, "params.task.epsilon"),
                       R=_num(runs, "metrics.cumulative_regret"), C=_num(runs, "metrics.query_cost"))
    runs = runs.assign(RT=runs["R"] / runs["T"])
    rows = sorted(set(runs["params.sweep.cell"].dropna()), key=_cell_order)
    eps = sorted(set(runs["eps"].dropna()))
    T = sorted(set(runs["T"].dropna().astype(int)))
    width = 28
    out = [f"Paper 002, Table A2 (T={T}): R_T/T and C_T, mean ± std over trials [n]",
           " " * 14 + "".join(f"| eps={e:<{width - 6}g}" for e in eps),
           " " * 14 + "".join(f"| {'R_T/T':>13s} {'C_T':>9s}   " for _ in eps)]
    stats: dict[tuple[str, float], tuple[float, float]] = {}
    for row in rows:
        line = f"{row:14s}"
        for e in eps:
            cell = runs[(runs["params.sweep.cell"] == row) & (runs["eps"] == e)]
            stats[(row, e)] = (float(cell["RT"].mean()), float(cell["C"].mean()))
            failed = int((cell["status"] != "FINISHED").sum())
            line += (f"| {mean_std(cell['RT']):>13s} {mean_std(cell['C'], '.0f'):>9s} [{len(cell)}"
                     + (f", {failed} failed]" if failed else "]"))
        out.append(line)
    ber = [r for r in rows if r.startswith("Ber_")]
    if ber and "TV-GP-UCB" in rows:
        caption = ("CE vs Bernoulli at equal cost: CE R_T/T / Bernoulli R_T/T interpolated at CE's mean C_T "
                   "(< 1: CE better; '<': CE's cost is below every Bernoulli row's)")
        out += ["", caption, " " * 14 + "".join(f"| eps={e:<10g}" for e in eps)]
        for row in (r for r in rows if r.startswith(("CE_", "LCB"))):
            line = f"{row:14s}"
            for e in eps:
                curve = sorted([stats[(b, e)][::-1] for b in ber] + [stats[("TV-GP-UCB", e)][::-1]])
                costs, regrets = zip(*curve)
                r, c = stats[(row, e)]
                line += f"| {r / float(np.interp(c, costs, regrets)):>8.2f}{'<' if c < costs[0] else ' '}     "
            out.append(line)
    return "\n".join(out)


LAYOUTS: dict[str, Callable[[Any], str]] = {
    "bbo_inner_horizon": bbo_inner_horizon,
    "ce_gp_ucb_table_a2": ce_gp_ucb_table_a2,
}


def study_experiment(name: str) -> str:
    """The MLflow experiment a study writes to (its file's ``tracking.experiment``, else its name).

    Raises:
        ValueError: no ``conf/experiment/<name>.yaml``; the message lists the studies there are.
    """
    import yaml

    from hpoflow.schema import CONF_DIR

    path = CONF_DIR / "experiment" / f"{name}.yaml"
    if not path.is_file():
        allowed = sorted(p.stem for p in (CONF_DIR / "experiment").glob("*.yaml"))
        raise ValueError(f"experiment={name} is unknown; allowed: {', '.join(allowed)}")
    declared = yaml.safe_load(path.read_text()) or {}
    return str((declared.get("tracking") or {}).get("experiment") or name)


def paper_table(uri: str, name: str) -> str | None:
    """The paper layout of study ``name`` from the store at ``uri`` (None when the study has no layout)."""
    layout = LAYOUTS.get(name)
    if layout is None:
        return None
    runs = load_runs(uri, study_experiment(name))
    if runs.empty:
        raise ValueError(f"experiment={name}: no runs in MLflow experiment '{study_experiment(name)}' of {uri}; "
                         f"run the study first: python -m hpoflow -m experiment={name}")
    return layout(runs)
