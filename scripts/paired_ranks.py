"""Mean ranks and paired wins/ties/losses of one method against each other one, over the blocks every method of an
experiment finished (a block: one task and seed; ranks by the final simple regret, 1 = best, ties averaged;
two-sided Wilcoxon signed-rank p on the paired final values, no multiple-test correction: the report's
Wilcoxon-Holm table is the corrected one). A block is keyed by every task parameter of the BBOB and sklearn
suites (function, dimension, instance, model, dataset) and the seed. With a second ``--experiment`` (an ablation
run into the same store) its methods join the comparison as ``<algo>@<experiment>``; with ``--variant KEY`` (a
setting an ablation sweeps inside one experiment, e.g. ``surrogate.output_transform``) as ``<algo>[KEY=value]``.

    python scripts/paired_ranks.py --uri sqlite:///outputs/mlflow.db --experiment auto_check_heldout --against cobyqa
    python scripts/paired_ranks.py --uri sqlite:///s.db --experiment sklearn_small --experiment sklearn_small_warp \
        --against gp_ei@sklearn_small_warp --only gp_ei,gp_ei@sklearn_small_warp
    python scripts/paired_ranks.py --uri sqlite:///s.db --experiment bbob_small --variant surrogate.output_transform \
        --against "gp_ei[surrogate.output_transform=power]"
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
  (SELECT value FROM params p WHERE p.run_uuid = r.run_uuid AND p.key = 'task.model'),
  (SELECT value FROM params p WHERE p.run_uuid = r.run_uuid AND p.key = 'task.dataset'),
  (SELECT value FROM params p WHERE p.run_uuid = r.run_uuid AND p.key = 'seed'),
  (SELECT value FROM latest_metrics m WHERE m.run_uuid = r.run_uuid AND m.key = 'simple_regret'),
  (SELECT value FROM params p WHERE p.run_uuid = r.run_uuid AND p.key = ?)
  FROM runs r JOIN experiments e ON e.experiment_id = r.experiment_id
  WHERE e.name = ? AND r.status = 'FINISHED' AND r.lifecycle_stage = 'active'"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--uri", required=True, help="a SQLite tracking URI (sqlite:///...)")
    ap.add_argument("--experiment", required=True, action="append",
                    help="repeatable: the methods of the second and later ones are named <algo>@<experiment>")
    ap.add_argument("--against", required=True, help="the method every other one is paired with")
    ap.add_argument("--only", default=None, help="comma-separated methods to compare (default: all)")
    ap.add_argument("--variant", default=None, help="a run parameter whose values split a method: <algo>[KEY=value]")
    args = ap.parse_args()
    db = sqlite_path(args.uri)
    if db is None:
        raise SystemExit(f"--uri {args.uri!r} is not a SQLite URI; allowed: sqlite:///<path>")
    blocks: dict[tuple, dict[str, float]] = collections.defaultdict(dict)
    only = set(args.only.split(",")) if args.only else None
    for i, experiment in enumerate(args.experiment):
        rows = sqlite3.connect(db).execute(QUERY, (args.variant or "", experiment))
        for algo, fn, dim, inst, model, data, seed, regret, variant in rows:
            name = algo if i == 0 else f"{algo}@{experiment}"
            if args.variant and algo:
                name += f"[{args.variant}={variant}]"
            if algo and regret is not None and (only is None or name in only):
                blocks[(fn, int(dim or 0), inst, model, data, seed)][name] = float(regret)
    algos = sorted({a for b in blocks.values() for a in b})
    experiment = ", ".join(args.experiment)
    full = {k: v for k, v in blocks.items() if set(v) == set(algos)}
    if args.against not in algos:
        raise SystemExit(f"--against {args.against!r} has no runs in {experiment}; allowed: {algos}")
    print(f"{experiment}: {len(full)} blocks that every method finished (of {len(blocks)}); {', '.join(algos)}")
    ranks: dict[str | None, dict[str, list[float]]] = collections.defaultdict(lambda: {a: [] for a in algos})
    for (_, dim, _, model, _, _), v in sorted(full.items(), key=str):
        vals = np.array([v[a] for a in algos])
        group = f"d={dim}" if dim else f"model={model}"  # BBOB by dimension, sklearn by model
        for a in algos:
            r = float((vals < v[a]).sum() + ((vals == v[a]).sum() - 1) / 2 + 1)
            ranks[None][a].append(r)
            ranks[group][a].append(r)
    for key in [None, *sorted((k for k in ranks if k is not None), key=lambda k: (len(k), k))]:
        label = "all" if key is None else key
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
