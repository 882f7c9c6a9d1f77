"""The learning-curve suite's table: per task its dataset, rows, features, classes, model, configurations, fidelity
steps, the spread of final validation values, the Spearman correlation between the ranking of configurations at
1/9 of the fidelity and at the full one, its size on disk and the recording's CPU seconds.

    python scripts/suite_table.py > results/lc_suite.txt
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np
from scipy.stats import spearmanr

from hpoflow.tasks.suite import SUITE, suite_tasks


def row(task: str) -> dict:
    """One task's line of the table."""
    path = SUITE / f"{task}.npz"
    with np.load(path) as z:
        meta = json.loads(str(z["meta"]))
        val = z["val_error"].astype(np.float64)
    steps = val.shape[1]
    early = max(1, round(steps / 9))
    final = val[:, -1]
    rho = spearmanr(val[:, early - 1], final).statistic
    return {"task": task, "dataset": meta["dataset"], "source": meta["source"], "rows": meta["rows"],
            "features": meta["features"], "classes": meta["classes"], "model": meta["family"],
            "configs": val.shape[0], "steps": steps, "best": final.min(), "p10": np.percentile(final, 10),
            "median": np.median(final), "p90": np.percentile(final, 90), "early": early, "spearman": rho,
            "kib": path.stat().st_size / 1024, "cpu_s": meta["cpu_seconds"]}


def main() -> None:
    rows = [row(t) for t in suite_tasks()]
    print("# The learning-curve suite (hpoflow/tasks/curves/suite/; python scripts/suite_table.py)")
    print("# final validation balanced error: best / 10th percentile / median / 90th percentile over the")
    print("# configurations; rho: Spearman correlation of the configurations' ranking at step `early` (1/9 of the")
    print("# fidelity) and at the end")
    print()
    print("| task | source | rows | features | classes | model | configurations | steps | "
          "final val error (best / p10 / median / p90) | rho at step | size KiB | CPU s |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['task']} | {r['source']} | {r['rows']} | {r['features']} | {r['classes']} | {r['model']} | "
              f"{r['configs']} | {r['steps']} | "
              f"{r['best']:.3f} / {r['p10']:.3f} / {r['median']:.3f} / {r['p90']:.3f} | "
              f"{r['spearman']:.2f} at {r['early']} | {r['kib']:.0f} | {r['cpu_s']:.0f} |")
    total_kib = sum(r["kib"] for r in rows)
    total_cpu = sum(r["cpu_s"] for r in rows)
    print()
    print(f"{len(rows)} tasks, {sum(r['configs'] for r in rows)} recorded curves; {total_kib / 1024:.1f} MiB on disk; "
          f"recording CPU {total_cpu:.0f} s ({total_cpu / 3600:.2f} CPU h, one thread per process)")


if __name__ == "__main__":
    main()
