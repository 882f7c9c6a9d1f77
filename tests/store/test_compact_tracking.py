"""``tracking.compact=true``: a run writes its final values as metrics and its per-round values and learning curves
as two artifacts; the report reads the same per-round table from either form."""
from __future__ import annotations

import csv
from pathlib import Path

import pandas as pd
from mlflow.tracking import MlflowClient

from hpoflow.api import run_config
from hpoflow.report.loading import load_study
from hpoflow.store.mlflow_tracker import COMPACT_TAG, CURVES_TABLE, ROUNDS_FILE

ARGS = ["algo=hyperband", "task=lc_replay", "task.benchmark=breast_cancer-linear", "budget.cost=300", "seed=3",
        "checkpoint_every=0", "progress=false"]


def _run(uri: str, experiment: str, compact: bool) -> str:
    result = run_config([*ARGS, f"tracking.uri={uri}", f"tracking.experiment={experiment}",
                         f"tracking.compact={str(compact).lower()}"])
    assert result.run_id is not None
    return result.run_id


def test_a_compact_run_logs_one_row_per_metric_and_its_rounds_and_curves_as_artifacts(store: str, tmp_path: Path):
    run_id = _run(store, "c", compact=True)
    client = MlflowClient(tracking_uri=store)
    run = client.get_run(run_id)
    assert run.info.status == "FINISHED" and run.data.tags[COMPACT_TAG] == "true"
    assert not any(k.startswith("lc/") for k in run.data.metrics)
    history = client.get_metric_history(run_id, "query_cost")
    assert len(history) == 1  # the final value only, at the last round
    local = Path(client.download_artifacts(run_id, "", str(tmp_path)))
    rounds = list(csv.DictReader(open(local / ROUNDS_FILE)))
    assert [int(r["step"]) for r in rounds] == list(range(1, len(rounds) + 1))
    assert history[0].step == len(rounds) and float(rounds[-1]["query_cost"]) == history[0].value
    points = list(csv.DictReader(open(local / CURVES_TABLE)))
    units = sum(1 for _ in points)
    assert abs(units - float(rounds[-1]["query_cost"])) < 1e-9  # every unit trained is one curve point, once
    per_config: dict[str, list[int]] = {}
    for p in points:
        per_config.setdefault(p["config_id"], []).append(int(float(p["step"])))
    assert all(steps == list(range(1, len(steps) + 1)) for steps in per_config.values())


def test_the_report_reads_the_same_rounds_from_a_compact_run_as_from_a_full_one(store: str):
    full, compact = _run(store, "full", compact=False), _run(store, "compact", compact=True)
    a = load_study(store, experiment="full").curves
    b = load_study(store, experiment="compact").curves
    assert set(a["run_id"]) == {full} and set(b["run_id"]) == {compact}
    columns = sorted(set(a.columns) - {"run_id", "wall_time"})  # wall time: the only value that differs
    assert columns == sorted(set(b.columns) - {"run_id", "wall_time"})
    pd.testing.assert_frame_equal(a[columns].reset_index(drop=True), b[columns].reset_index(drop=True),
                                  check_dtype=False)
