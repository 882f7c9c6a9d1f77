"""The measurements behind ``algo=auto`` (issue 30): ranks of gp_ei, gp_ei with discrete=snap, turbo and random
search per slice (BBOB by dimension, budget and noise; the sklearn suite by model and space), read from the store the
``experiment=auto_check*`` studies wrote, plus the row ``auto (rule)``: in each block, the run of the algorithm
:func:`hpoflow.algorithms.auto_rule.decide` picks for that task (where the store also has real ``algo=auto`` runs,
their final values are checked against it: the same seed builds the same delegate).

A block is one (task, seed); within it, methods are ranked by their final best value (1 = best, ties averaged;
``auto (rule)`` takes the rank of its pick, so it is no competitor of its own and is directly comparable);
``vs gp_ei`` counts the blocks a method beats / ties / loses to plain gp_ei, with a two-sided Wilcoxon
signed-rank p-value on the final values' ranks within the block (too few blocks: n/a).

Usage: python scripts/auto_ablation.py [--uri sqlite:///outputs/auto/mlflow.db]
"""
from __future__ import annotations

import argparse
import math
from collections import defaultdict
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

EXPERIMENTS = ("auto_check_bbob", "auto_check_bbob_r20", "auto_check_bbob_r100", "auto_check_bbob_noisy", "auto_check",
               "auto_check_go_ucb_space")
METHODS = ("random", "gp_ei", "gp_ei_snap", "turbo")


def method_of(row: pd.Series) -> str:
    cell = row.get("params.sweep.cell")
    if isinstance(cell, str) and cell not in ("", "None"):
        return cell
    return str(row["tags.algo"])


def space_profile(row: pd.Series) -> Any:
    """The task's space as the rule sees it, rebuilt from the run's params (no objective call)."""
    from hpoflow.algorithms.auto_rule import SpaceProfile, profile

    if row["tags.task"] == "bbob":
        return SpaceProfile(floats=int(row["params.task.dim"]), integers=0, categoricals=0)
    from hpoflow.tasks.sklearn_hpo import REGRESSION
    from hpoflow.tasks.sklearn_spaces import suite_space

    dataset = row["params.task.dataset"]
    return profile(suite_space(row["params.task.model"], row["params.task.space"], dataset in REGRESSION))


def rule_pick(row: pd.Series) -> str:
    """The method name (a column of this table) of the rule's choice for the run's task and budget."""
    from hpoflow.algorithms.auto_rule import decide

    choice = decide(space_profile(row), int(float(row["params.budget.rounds"])))
    return "gp_ei_snap" if choice.settings.get("discrete") == "snap" else choice.algo


def group_of(row: pd.Series, experiment: str) -> str:
    if row["tags.task"] == "bbob":
        return f"{experiment} d={int(row['params.task.dim'])}"
    return f"{experiment} {row['params.task.model']}"


def load(uri: str) -> pd.DataFrame:
    from hpoflow.report.loading import load_study

    frames = []
    for experiment in EXPERIMENTS:
        try:
            data = load_study(uri, experiment=experiment, include_failed=False, metrics=())
        except Exception:  # noqa: BLE001 - a slice not run yet
            continue
        runs = data.runs
        if runs.empty:
            continue
        runs = runs.assign(method=runs.apply(method_of, axis=1), experiment=experiment,
                           final=pd.to_numeric(runs["tags.final.best_value"], errors="coerce"))
        sign = np.where(runs["tags.direction"] == "maximize", -1.0, 1.0)
        runs = runs.assign(loss=sign * runs["final"])  # lower is better everywhere
        runs = runs.assign(group=runs.apply(lambda r, e=experiment: group_of(r, e), axis=1))
        frames.append(runs)
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def table(runs: pd.DataFrame) -> tuple[list[str], list[list[str]]]:
    """Mean rank per method and group (and per experiment), with the rule's row."""
    rows: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    versus: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    checked = mismatched = 0
    for (_, _, _), block in runs.groupby(["experiment", "task_key", "seed"]):
        losses = {m: float(v) for m, v in zip(block["method"], block["loss"])}
        if not all(m in losses for m in ("random", "gp_ei", "turbo")):
            continue
        first = block.iloc[0]
        pick = rule_pick(first)
        if pick in losses:
            if "auto" in losses:
                checked += 1
                mismatched += not math.isclose(losses["auto"], losses[pick], rel_tol=1e-9, abs_tol=1e-12)
        names = [m for m in METHODS if m in losses]
        ranks = dict(zip(names, stats.rankdata([losses[m] for m in names])))
        if pick in ranks:  # the rule's row: its pick's rank among the methods (not a competitor of its own)
            ranks["auto (rule)"] = ranks[pick]
            losses["auto (rule)"] = losses[pick]
        for key in (first["group"], first["experiment"]):
            for m, r in ranks.items():
                rows[key][m].append(float(r))
                versus[key][m].append(losses[m] - losses["gp_ei"])
    header = ["slice", "blocks", *[f"{m} rank" for m in (*METHODS, "auto (rule)")], "turbo vs gp_ei (W/T/L, p)",
              "snap vs gp_ei (W/T/L, p)"]
    out = []
    for key in sorted(rows, key=lambda k: (k.split(" ")[0], len(k), k)):
        n = len(rows[key]["gp_ei"])
        cells = [key, str(n)]
        for m in (*METHODS, "auto (rule)"):
            cells.append(f"{np.mean(rows[key][m]):.2f}" if rows[key][m] else "")
        for m in ("turbo", "gp_ei_snap"):
            d = np.array(versus[key][m])
            if not len(d):
                cells.append("")
                continue
            w, t, losses_ = int((d < 0).sum()), int((d == 0).sum()), int((d > 0).sum())
            p = stats.wilcoxon(d[d != 0]).pvalue if (d != 0).sum() >= 6 else float("nan")
            cells.append(f"{w}/{t}/{losses_}, p={p:.3g}" if not math.isnan(p) else f"{w}/{t}/{losses_}, n/a")
        out.append(cells)
    note = (f"real algo=auto runs checked against the rule's pick: {checked} blocks, {mismatched} differ"
            if checked else "no algo=auto runs in the store")
    return header, out + [[note]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--uri", default="sqlite:///outputs/auto/mlflow.db")
    args = parser.parse_args()
    runs = load(args.uri)
    if runs.empty:
        raise SystemExit(f"no runs of {', '.join(EXPERIMENTS)} in {args.uri}")
    header, rows = table(runs)
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for r in rows:
        print("| " + " | ".join(r) + " |" if len(r) > 1 else r[0])


if __name__ == "__main__":
    main()
