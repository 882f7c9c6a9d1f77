"""Ablation of a setting of auto's picks against a whole suite study (issue 30): variant runs (a separate store or
experiment, e.g. ``algo=turbo,gp_ei algo.init_center=true`` over the suite's grid or a slice of it) ranked beside
every method of the suite study, block by block.

A block is one (task, seed) that the variant and the suite both ran. Within it, every method is ranked by its final
best value (1 = best, ties averaged; the same order as the report's normalised regret, which is a per-task affine
map of it), jointly: the suite's methods (``auto`` included unless ``--methods`` leaves it out) and the variants.
``W/T/L`` counts the blocks where the variant beats / ties / loses to a method; ``p`` is the two-sided Wilcoxon
signed-rank test on the within-block rank differences (scale-free across tasks; n/a: fewer than 6 untied blocks).

Usage: python scripts/ablate_suites.py --base sqlite:///.../bbob/mlflow.db@bbob_small \\
           --variant sqlite:///.../abl/mlflow.db@abl_center_bbob --label center --against turbo,gp_ei,nevergrad_ngopt
"""
from __future__ import annotations

import argparse
import math
from collections import defaultdict

import numpy as np
import pandas as pd
from scipy import stats


def load(uri: str, experiment: str, suffix: str = "") -> pd.DataFrame:
    """Finished runs of one experiment: method (algo tag plus ``suffix``), block key, and the loss (lower = better)."""
    from hpoflow.report.loading import load_study

    runs = load_study(uri, experiment=experiment, include_failed=False, metrics=()).runs
    final = pd.to_numeric(runs["tags.final.best_value"], errors="coerce")
    sign = np.where(runs["tags.direction"] == "maximize", -1.0, 1.0)
    return pd.DataFrame({"method": runs["tags.algo"].astype(str) + suffix, "task": runs["task_key"].astype(str),
                         "seed": runs["seed"].astype(str), "loss": sign * final}).dropna()


def ranks_by_block(suite: pd.DataFrame, variant: pd.DataFrame, methods: list[str] | None = None
                   ) -> tuple[pd.DataFrame, list[str], list[str]]:
    """Rank table (block x method): the suite's methods (or ``methods``) and the variants ranked jointly."""
    with_auto = methods is None or "auto" in methods  # the suite's own auto row, ranked with its peers
    peers = sorted(set(methods or suite["method"]) - {"auto"})
    variants = sorted(set(variant["method"]))
    both = pd.concat([suite, variant])
    rows = []
    for (task, seed), block in both.groupby(["task", "seed"]):
        losses = dict(zip(block["method"], block["loss"]))
        if not all(m in losses for m in (*peers, *variants, *(["auto"] if with_auto else []))):
            continue  # a block not complete in both stores
        row: dict[str, float] = {"task": task, "seed": seed}  # type: ignore[dict-item]
        pool = [*peers, *(["auto"] if with_auto else []), *variants]  # one joint ranking
        row.update(zip(pool, (float(r) for r in stats.rankdata([losses[m] for m in pool]))))
        row.update({f"loss:{m}": float(x) for m, x in losses.items()})
        rows.append(row)
    return pd.DataFrame(rows), peers, variants


def versus(table: pd.DataFrame, a: str, b: str) -> str:
    d = table[a].to_numpy() - table[b].to_numpy()  # joint within-block ranks: lower is better
    w, t, lo = int((d < 0).sum()), int((d == 0).sum()), int((d > 0).sum())
    p = stats.wilcoxon(d[d != 0]).pvalue if (d != 0).sum() >= 6 else math.nan
    return f"{w}/{t}/{lo}, " + (f"p={p:.3g}" if not math.isnan(p) else "n/a")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", action="append", required=True, metavar="URI@EXPERIMENT",
                        help="baseline runs (the suite study; more stores/experiments add blocks or methods)")
    parser.add_argument("--variant", action="append", required=True, metavar="URI@EXPERIMENT",
                        help="the variant runs (their rows are named algo+label)")
    parser.add_argument("--label", default="variant", help="suffix of the variant rows' names (algo+label)")
    parser.add_argument("--methods", default="", help="rank only among these baseline methods (default: all)")
    parser.add_argument("--against", default="turbo,gp_ei", help="methods to count W/T/L against")
    parser.add_argument("--by", default="", help="a regex on the task key whose first group splits the blocks")
    args = parser.parse_args()
    suite = pd.concat([load(*b.rsplit("@", 1)) for b in args.base]).drop_duplicates(["method", "task", "seed"])
    variant = pd.concat([load(*v.rsplit("@", 1), f"+{args.label}") for v in args.variant])
    methods = [m for m in args.methods.split(",") if m] or None
    table, peers, variants = ranks_by_block(suite, variant, methods)
    if table.empty:
        raise SystemExit("no block is complete in both stores")
    groups: dict[str, pd.DataFrame] = {"all": table}
    if args.by:
        key = table["task"].str.extract(args.by, expand=False)
        for g in sorted(key.dropna().unique()):
            groups[g] = table[key == g]
    against = [m for m in args.against.split(",") if m]
    for name, t in groups.items():
        print(f"\n### {name} ({len(t)} blocks)")
        cols = [*peers, *(["auto"] if "auto" in t else []), *variants]
        mean = {m: float(np.mean(t[m])) for m in cols}
        print("| method | mean rank (joint, 1 = best) |")
        print("|---|---|")
        for m in sorted(cols, key=mean.get):
            print(f"| {m} | {mean[m]:.2f} |")
        out = defaultdict(list)
        for v in variants:
            for m in [*against, *(["auto"] if "auto" in t else [])]:
                if f"loss:{m}" in t:
                    out[v].append(f"vs {m}: {versus(t, v, m)}")
        for v, parts in out.items():
            print(f"{v}: " + "; ".join(parts))


if __name__ == "__main__":
    main()
