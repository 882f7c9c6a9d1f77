"""Shared helpers of the paper-002 reproduction scripts: run one configuration through the library loop."""
from __future__ import annotations

import os
import time
from functools import partial
from typing import Any

os.environ.setdefault("OMP_NUM_THREADS", "1")
import torch

from hpoflow.algorithms.base import BuildContext
from hpoflow.config import registry
from hpoflow.core.tracker import NullTracker
from hpoflow.runner.loop import Budget, run
from hpoflow.surrogates.temporal import build as build_tv_gp
from hpoflow.surrogates.temporal_config import TemporalGPConfig

torch.set_num_threads(1)


def run_one(algo: str, task: str, rounds: int, seed: int, algo_kw: dict[str, Any], task_kw: dict[str, Any],
            surrogate_kw: dict[str, Any] | None = None) -> dict[str, Any]:
    """One run with a NullTracker; returns R_T/T, C_T, wall time and the run's summary."""
    te = registry.get("task", task)
    task_obj = te.load()(**vars(te.make_config(**task_kw)), seed=seed)
    surrogate = partial(build_tv_gp, TemporalGPConfig(**(surrogate_kw or {})), dtype=torch.float64, device="cpu")
    ctx = BuildContext(task=task_obj, rounds=rounds, seed=seed, surrogate=surrogate)
    ae = registry.get("algorithm", algo)
    algorithm = ae.load()(ae.make_config(**algo_kw), ctx)
    start = time.perf_counter()
    res = run(task_obj, algorithm, NullTracker(), Budget(rounds))
    wall = time.perf_counter() - start
    s = res.summary
    out = {"R/T": s.get("cumulative_regret", float("nan")) / rounds, "C": s["query_cost"], "wall": wall,
           "metrics": res.metrics[-1] if res.metrics else {}}
    return out
