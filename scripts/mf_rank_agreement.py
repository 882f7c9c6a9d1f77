"""Does the replayed benchmark rank methods as the live training tasks do? Two ``scripts/mf_compare.py --out``
folders (e.g. the recorded curves replayed, ``lc_<bench>``, and the same tasks trained live), the methods both ran:
their mean ranks of anytime normalised regret at fractions of the budget (and of the area under the curve) in each
folder, and how the two orders agree (Spearman's rho and Kendall's tau with scipy's p-values).

    python scripts/mf_rank_agreement.py /tmp/replay_runs /tmp/live_runs \
        --methods random,hyperband,asha,mf_gp,optuna_tpe_hyperband,smac_hyperband,raytune_asha,dehb
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.dirname(__file__))

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from scipy.stats import kendalltau, spearmanr  # noqa: E402

FRACTIONS = (0.125, 0.25, 0.5, 1.0)


def load(folder: str, methods: list[str]) -> list[dict]:
    """The saved runs of ``methods`` in ``folder`` (one JSON file per run)."""
    runs = [json.loads(p.read_text()) for p in sorted(Path(folder).glob("*.json"))]
    return [r for r in runs if r["method"] in methods]


def mean_ranks(saved: list[dict], methods: list[str]) -> pd.DataFrame:
    """Rows: ``1/8 .. 1`` and ``area``; columns: methods; cells: mean rank over complete (task, seed) blocks."""
    from mf_compare import as_study

    from hpoflow.report import compute as cp
    from hpoflow.report import statistics as st

    cr = cp.cost_runs(as_study(saved), incumbent="full")
    grid = cp.on_grid(cr, np.asarray(FRACTIONS))
    rows = {f"{f:g}": st.block_ranks(grid[np.isclose(grid["fraction"], f)]).mean()[methods] for f in FRACTIONS}
    rows["area"] = st.block_ranks(cp.areas(cr)).mean()[methods]
    return pd.DataFrame(rows).T


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("first", help="a mf_compare.py --out folder (e.g. the replayed curves)")
    parser.add_argument("second", help="another one (e.g. the live tasks)")
    parser.add_argument("--methods", required=True, help="comma-separated; each must have runs in both folders")
    args = parser.parse_args()
    methods = args.methods.split(",")
    a, b = load(args.first, methods), load(args.second, methods)
    missing = [m for m in methods if not any(r["method"] == m for r in a) or not any(r["method"] == m for r in b)]
    if missing:
        print(f"Error: no runs of {', '.join(missing)} in one of the folders; use methods both ran", file=sys.stderr)
        raise SystemExit(2)
    ra, rb = mean_ranks(a, methods), mean_ranks(b, methods)
    print(f"{len(a)} runs in {args.first}, {len(b)} runs in {args.second}; mean rank of normalised regret "
          "(incumbent: best full-fidelity value), 1 = best")
    print("| at | folder | " + " | ".join(methods) + " | Spearman rho (p) | Kendall tau (p) |")
    print("|---|---|" + "---|" * (len(methods) + 2))
    for at in ra.index:
        rho, tau = spearmanr(ra.loc[at], rb.loc[at]), kendalltau(ra.loc[at], rb.loc[at])
        print(f"| {at} | first | " + " | ".join(f"{v:.2f}" for v in ra.loc[at]) + " | | |")
        print(f"| {at} | second | " + " | ".join(f"{v:.2f}" for v in rb.loc[at])
              + f" | {rho.statistic:.2f} ({rho.pvalue:.2g}) | {tau.statistic:.2f} ({tau.pvalue:.2g}) |")


if __name__ == "__main__":
    main()
