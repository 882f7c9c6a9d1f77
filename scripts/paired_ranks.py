"""Mean ranks and paired wins/ties/losses of one method against each other one, over the blocks every method of an
experiment finished (a block: one task and seed; ranks by the final simple regret, 1 = best, ties averaged;
two-sided Wilcoxon signed-rank p on the paired final values, no multiple-test correction: the report's
Wilcoxon-Holm table is the corrected one).

    python scripts/paired_ranks.py --uri sqlite:///outputs/mlflow.db --experiment auto_check_heldout --against cobyqa
"""
from __future__ import annotations

import argparse
import collections
import sqlite3

import numpy as np
from scipy.stats import wilcoxon

from hpoflow.store.backend import sqlite_path

QUERY = """SELECT (SELECT value FROM params p WHERE p.run_uuid = r.run_uuid AND p.key = 'algo.name'),
  (SELECT value FROM params p WHERE p.run_uuid = r.run_uuid AND p.key = 'task.function'),
  (SELECT value FROM params p WHERE p.run_uuid = r.run_uuid AND p.key = 'task.dim'),
  (SELECT value FROM params p WHERE p.run_uuid = r.run_uuid AND p.key = 'task.instance'),
  (SELECT value FROM params p WHERE p.run_uuid = r.run_uuid AND p.key = 'seed'),
  (SELECT value FROM latest_metrics m WHERE m.run_uuid = r.run_uuid AND m.key = 'simple_regret')
  FROM runs r JOIN experiments e ON e.experiment_id = r.experiment_id
  WHERE e.name = ? AND r.status = 'FINISHED' AND r.lifecycle_stage = 'active'"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--uri", required=True, help="a SQLite tracking URI (sqlite:///...)")
    ap.add_argument("--experiment", required=True)
    ap.add_argument("--against", required=True, help="the method every other one is paired with")
    args = ap.parse_args()
    db = sqlite_path(args.uri)
    if db is None:
        raise SystemExit(f"--uri {args.uri!r} is not a SQLite URI; allowed: sqlite:///<path>")
    blocks: dict[tuple, dict[str, float]] = collections.defaultdict(dict)
    for algo, fn, dim, inst, seed, regret in sqlite3.connect(db).execute(QUERY, (args.experiment,)):
        if algo and regret is not None:
            blocks[(fn, int(dim or 0), inst, seed)][algo] = float(regret)
    algos = sorted({a for b in blocks.values() for a in b})
    full = {k: v for k, v in blocks.items() if set(v) == set(algos)}
    if args.against not in algos:
        raise SystemExit(f"--against {args.against!r} has no runs in {args.experiment}; allowed: {algos}")
    print(f"{args.experiment}: {len(full)} blocks that every method finished (of {len(blocks)}); {', '.join(algos)}")
    ranks: dict[int | None, dict[str, list[float]]] = collections.defaultdict(lambda: {a: [] for a in algos})
    for (_, dim, _, _), v in sorted(full.items()):
        vals = np.array([v[a] for a in algos])
        for a in algos:
            r = float((vals < v[a]).sum() + ((vals == v[a]).sum() - 1) / 2 + 1)
            ranks[None][a].append(r)
            ranks[dim][a].append(r)
    for key in [None, *sorted(k for k in ranks if k is not None)]:
        label = "all" if key is None else f"d={key}"
        order = sorted(algos, key=lambda a: np.mean(ranks[key][a]))
        print(f"mean rank, {label} ({len(ranks[key][algos[0]])} blocks): "
              + ", ".join(f"{a} {np.mean(ranks[key][a]):.2f}" for a in order))
    x = np.array([full[k][args.against] for k in full])
    for a in algos:
        if a == args.against:
            continue
        y = np.array([full[k][a] for k in full])
        p = wilcoxon(x, y).pvalue if (x != y).any() else 1.0
        print(f"{args.against} vs {a}: {(x < y).sum()} wins / {(x == y).sum()} ties / {(x > y).sum()} losses, "
              f"Wilcoxon p = {p:.2g}")


if __name__ == "__main__":
    main()
