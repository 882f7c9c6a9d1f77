"""Build small MLflow stores for the report tests with MLflow's client directly (fast; exact known values)."""
from __future__ import annotations

import math
import time
from typing import Any

from mlflow.entities import Metric, Param, RunTag
from mlflow.tracking import MlflowClient


def add_study_parent(client: MlflowClient, exp_id: str, name: str, sweep_id: str) -> str:
    """A study parent run as the lead's tracker writes it: ``hpoflow.kind=study``."""
    run = client.create_run(exp_id, tags={"hpoflow.kind": "study", "hpoflow.study": name, "sweep_id": sweep_id},
                            run_name=f"study-{name}")
    return run.info.run_id


def add_run(client: MlflowClient, exp_id: str, *, algo: str, task: str, seed: int, values: list[float | None],
            direction: str = "minimize", optimum: float | None = None, status: str = "FINISHED",
            parent: str | None = None, sweep_id: str = "sw", rounds: int | None = None,
            task_params: dict[str, Any] | None = None, costs: list[float] | None = None) -> str:
    """One job run with the tags, params and per-round metrics the loop logs.

    ``values[t]`` is the observed value at round t+1 (None: not queried, nothing logged but the cost);
    ``best_value`` is its running best, ``regret`` = |value - optimum| when ``optimum`` is given.
    """
    tags = {"algo": algo, "task": task, "seed": str(seed), "direction": direction, "sweep_id": sweep_id,
            "regret_reference": "optimum" if optimum is not None else "none"}
    if parent:
        tags["mlflow.parentRunId"] = parent
    run_id = client.create_run(exp_id, tags=tags, run_name=f"{algo}-{task}-s{seed}").info.run_id
    params = {"algo.name": algo, "task.name": task, "seed": seed, "budget.rounds": rounds or len(values),
              **{f"task.{k}": v for k, v in (task_params or {}).items()}}
    ts, metrics, best, cost = int(time.time() * 1000), [], None, 0.0
    better = (lambda a, b: a < b) if direction == "minimize" else (lambda a, b: a > b)
    for t, v in enumerate(values, start=1):
        cost = costs[t - 1] if costs else cost + 1.0
        if v is not None:
            best = v if best is None or better(v, best) else best
            metrics.append(Metric("value", float(v), ts, t))
            if optimum is not None:
                metrics.append(Metric("regret", abs(v - optimum), ts, t))
        if best is not None:
            metrics.append(Metric("best_value", float(best), ts, t))
        metrics.append(Metric("query_cost", cost, ts, t))
    client.log_batch(run_id, metrics=metrics, params=[Param(k, str(v)) for k, v in params.items()],
                     tags=[RunTag("mlflow.runName", f"{algo}-{task}-s{seed}")])
    if status != "RUNNING":
        client.set_terminated(run_id, status=status)
    return run_id


def nan_equal(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or a == b
