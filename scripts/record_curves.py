"""Record the learning curves ``task=lc_replay`` replays: a fixed, seeded set of configurations of a real training
task, each trained once to its full fidelity, with the validation value after every unit and the training seconds.

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 python scripts/record_curves.py --benchmark digits_mlp \
        --n 64 --jobs 2

writes ``hpoflow/tasks/curves/<benchmark>.json.gz`` (``--out`` elsewhere). Imports no Hydra or MLflow: it runs
wherever torch, scikit-learn and the package's core do. Seconds are wall seconds of one process on one thread.
"""
from __future__ import annotations

import argparse
import gzip
import json
import os
import sys
import time
from dataclasses import asdict
from multiprocessing import get_context
from pathlib import Path
from typing import Any

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(var, "1")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from hpoflow.core.space import describe_space  # noqa: E402

# benchmark -> (registered task, its settings): the real training tasks with their fidelity on
BENCHMARKS: dict[str, tuple[str, dict[str, Any]]] = {
    "digits_mlp": ("digits", {"model": "mlp", "fidelity": True, "min_resource": 1, "max_resource": 81}),
    "breast_cancer_mlp": ("breast_cancer", {"model": "mlp", "fidelity": True, "min_resource": 1, "max_resource": 81}),
    "digits_gb": ("digits", {"model": "gb", "fidelity": True, "min_resource": 2, "max_resource": 162}),
    "breast_cancer_gb": ("breast_cancer", {"model": "gb", "fidelity": True, "min_resource": 2, "max_resource": 162}),
    "digits_cnn": ("digits_cnn", {"fidelity": True, "epochs": 27, "min_epochs": 1,
                                  "tune": ["lr", "momentum", "weight_decay", "width"]}),
}

_TASK: Any = None


def make_task(benchmark: str, seed: int) -> Any:
    """The benchmark's real task, built from its registry entry (no Hydra)."""
    from hpoflow.tasks.configs import BUILTINS as TASK_ENTRIES
    from hpoflow.tasks.training_config import BUILTINS as TRAINING_ENTRIES

    name, settings = BENCHMARKS[benchmark]
    entry = next(e for e in (*TASK_ENTRIES, *TRAINING_ENTRIES) if e.name == name)
    return entry.load()(**asdict(entry.make_config(**settings)), seed=seed)


def _init(benchmark: str, seed: int) -> None:
    global _TASK
    _TASK = make_task(benchmark, seed)


def _record(item: tuple[int, dict[str, Any]]) -> tuple[int, list[float], float]:
    i, config = item
    task = _TASK
    start = time.perf_counter()
    ev = task.evaluate_at(config, fidelity=task.fidelity.max, config_id=i + 1, round=i + 1)
    seconds = time.perf_counter() - start
    values = [v for _, v in sorted(ev.curve)]
    if len(values) != int(task.fidelity.max):  # a task reporting fewer points: hold each between its steps
        steps = sorted(ev.curve)
        values = [next(v for s, v in steps if s >= r) for r in range(1, int(task.fidelity.max) + 1)]
    return i, values, seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--benchmark", choices=sorted(BENCHMARKS), required=True)
    parser.add_argument("--n", type=int, default=64, help="configurations recorded")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=1, help="processes")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    import torch

    task = make_task(args.benchmark, args.seed)
    points = task.space.sample(args.n, torch.Generator().manual_seed(args.seed * 7919 + 1), torch.float64)
    configs = [task.space.decode(u) for u in points]
    start = time.perf_counter()
    with get_context("spawn").Pool(args.jobs, initializer=_init, initargs=(args.benchmark, args.seed)) as pool:
        rows = sorted(pool.imap_unordered(_record, list(enumerate(configs))))
    fidelity = task.fidelity
    data = {"benchmark": args.benchmark, "task": BENCHMARKS[args.benchmark][0],
            "settings": BENCHMARKS[args.benchmark][1], "seed": args.seed, "direction": task.direction.value,
            "space": describe_space(task.space), "fidelity": fidelity.describe(),
            "configs": configs, "curves": [r[1] for r in rows], "seconds": [round(r[2], 4) for r in rows],
            "recorded_with": {"jobs": args.jobs, "torch": torch.__version__, "threads": 1}}
    out = args.out or ROOT / "hpoflow" / "tasks" / "curves" / f"{args.benchmark}.json.gz"
    out.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(out, "wt") as fh:
        json.dump(data, fh, separators=(",", ":"))
    finals = [r[1][-1] for r in rows]
    print(f"{args.benchmark}: {args.n} configurations x {fidelity.max} {fidelity.name} in "
          f"{time.perf_counter() - start:.1f} s with {args.jobs} processes; training s per config "
          f"{sum(r[2] for r in rows) / len(rows):.2f}; final values {min(finals):.4g}..{max(finals):.4g}; "
          f"{out.stat().st_size / 1024:.0f} KiB -> {out}")


if __name__ == "__main__":
    main()
