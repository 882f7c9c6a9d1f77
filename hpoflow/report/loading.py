"""Select runs (experiment, tags, sweep id) and read their per-round curves with MLflow's client."""
from __future__ import annotations

import json
import math
import os
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

TASK_PARAM_PREFIX = "task."
IGNORED_TASK_PARAMS = {"task.name", "task.noise_std"}
REPORT_KIND_TAG = "hpoflow.kind"  # summary runs written by the report carry hpoflow.kind=report


@dataclass
class RunCurve:
    """One run's per-round values (noise-free where logged), logged regret and cumulative query cost."""

    run_id: str
    algo: str
    task_key: tuple[str, ...]
    seed: str
    status: str
    direction: str
    reference: str
    values: np.ndarray            # observed (or true) value per round, NaN where not queried
    regret: np.ndarray | None     # logged instantaneous regret per round (known optimum)
    query_cost: np.ndarray        # cumulative query cost per round
    wall_time: float
    extra: dict[str, Any] = field(default_factory=dict)


def _history(client: Any, run_id: str, key: str, rounds: int) -> np.ndarray:
    out = np.full(rounds, np.nan)
    for m in client.get_metric_history(run_id, key):
        if 1 <= m.step <= rounds:
            out[m.step - 1] = m.value
    return out


def _quote(v: Any) -> str:
    return "'" + str(v).replace("'", "\\'") + "'"


def filter_string(sweep_id: str | None = None, tags: dict[str, Any] | None = None) -> str:
    """MLflow search filter for a sweep id and exact tag values (``algo``, ``task``, ``seed``, ...)."""
    clauses = [f"tags.sweep_id = {_quote(sweep_id)}"] if sweep_id else []
    for k, v in sorted((tags or {}).items()):
        key = f"tags.`{k}`" if not str(k).isidentifier() else f"tags.{k}"
        clauses.append(f"{key} = {_quote(v)}")
    return " and ".join(clauses)


def experiment_ids(client: Any, experiments: str | Iterable[str] | None, uri: str) -> list[str]:
    """Ids of the named experiments (comma-separated or a list); all experiments when None."""
    if not experiments:
        return [e.experiment_id for e in client.search_experiments()]
    names = [n.strip() for n in experiments.split(",")] if isinstance(experiments, str) else list(experiments)
    ids = []
    for name in names:
        exp = client.get_experiment_by_name(name)
        if exp is None:
            avail = ", ".join(e.name for e in client.search_experiments())
            raise SystemExit(f"Error: tracking.experiment='{name}' not found in {uri}; available: {avail}")
        ids.append(exp.experiment_id)
    return ids


def load_curves(uri: str, experiment: str | Iterable[str] | None = None, sweep_id: str | None = None,
                include_failed: bool = False, tags: dict[str, Any] | None = None) -> list[RunCurve]:
    """Every selected run's curves (FINISHED runs only unless ``include_failed``)."""
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=uri)
    runs = client.search_runs(experiment_ids(client, experiment, uri), filter_string=filter_string(sweep_id, tags),
                              max_results=50_000)
    curves = []
    for run in runs:
        status = run.info.status
        if run.data.tags.get(REPORT_KIND_TAG) in ("report", "study") or (status != "FINISHED" and not include_failed):
            continue
        rounds = int(float(run.data.params.get("budget.rounds", 0)) or 0)
        if rounds <= 0:
            continue
        task_key = (run.data.tags.get("task", "?"),) + tuple(
            f"{k.removeprefix(TASK_PARAM_PREFIX)}={v}" for k, v in sorted(run.data.params.items())
            if k.startswith(TASK_PARAM_PREFIX) and k not in IGNORED_TASK_PARAMS and v not in ("None", ""))
        reference = run.data.tags.get("regret_reference", "none")
        rid = run.info.run_id
        values = _history(client, rid, "value", rounds)
        truth = _history(client, rid, "true_value", rounds)  # logged only where it differs
        values = np.where(np.isnan(truth), values, truth)
        regret = _history(client, rid, "regret", rounds) if reference == "optimum" else None
        cost = _history(client, rid, "query_cost", rounds)
        curves.append(RunCurve(rid, run.data.tags.get("algo", "?"), task_key, run.data.tags.get("seed", "?"),
                               status, run.data.tags.get("direction", ""), reference, values, regret, cost,
                               float(run.data.metrics.get("wall_time", math.nan)),
                               extra={"run_name": run.info.run_name, "experiment_id": run.info.experiment_id}))
    return curves


def best_config(uri: str, run_id: str) -> dict[str, Any] | None:
    """The run's best configuration from its ``summary.json`` artifact (None if it has none)."""
    os.environ.setdefault("MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR", "false")
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=uri)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            path = client.download_artifacts(run_id, "summary.json", tmp)
            with open(path) as fh:
                return json.load(fh).get("best_config")
    except Exception:  # noqa: BLE001 - artifacts switched off or not reachable: the table says n/a
        return None
