"""scripts/shard_study.py: blocks of a study, overrides, the merge of the block stores, one small run end to end."""
from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from scripts.shard_study import apply_overrides, merge_stores, plan_blocks, sweep_params

ROOT = Path(__file__).resolve().parents[2]


def test_blocks_are_every_swept_value_but_algo_the_costliest_first():
    params = {"task": ["bbob"], "task.dim": ["2", "10", "5"], "task.instance": ["1", "2"], "algo": ["a", "b"]}
    blocks = plan_blocks(params, "task.dim")
    assert len(blocks) == 6 and all("algo" not in b for b in blocks)
    assert [b["task.dim"] for b in blocks] == ["10", "10", "5", "5", "2", "2"]


def test_overrides_replace_swept_values_and_others_go_to_every_block():
    params = sweep_params("bbob_small")
    assert params["task.dim"] == ["2", "5", "10"] and "algo" in params
    new, extra = apply_overrides(dict(params), ["task.dim=5", "algo=random,gp_ei", "budget.rounds=3",
                                                "task.model=rf"], others={"task.model"})
    assert new["task.dim"] == ["5"] and new["algo"] == ["random", "gp_ei"]
    assert extra == ["algo=random,gp_ei", "budget.rounds=3"]  # task.model: another experiment's key


def _store(path: Path, experiment: str, runs: int) -> None:
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=f"sqlite:///{path}")
    exp = client.create_experiment(experiment) if experiment != "Default" else "0"
    for i in range(runs):
        run = client.create_run(exp, run_name=f"r{i}")
        client.log_param(run.info.run_id, "i", i)
        for step in range(3):
            client.log_metric(run.info.run_id, "value", float(i + step), step=step)
        client.set_terminated(run.info.run_id)


def test_merge_keeps_every_run_param_and_step_once_under_one_experiment(tmp_path):
    a, b = tmp_path / "a.db", tmp_path / "b.db"
    _store(a, "study", 2)
    _store(b, "other", 0)  # a second experiment first: "study" gets another id in b
    _store(b, "study", 3)
    n = merge_stores([a, b], tmp_path / "merged.db")
    db = sqlite3.connect(tmp_path / "merged.db")
    assert n == 5
    (exp_id,) = db.execute("SELECT experiment_id FROM experiments WHERE name = 'study'").fetchone()
    assert db.execute("SELECT count(*) FROM runs WHERE experiment_id = ?", (exp_id,)).fetchone() == (5,)
    assert db.execute("SELECT count(*) FROM metrics WHERE key = 'value'").fetchone() == (15,)
    assert db.execute("SELECT count(*) FROM params").fetchone() == (5,)
    assert merge_stores([a, b], tmp_path / "merged.db") == 5  # merging again starts from scratch


@pytest.mark.slow
def test_a_two_block_study_runs_and_merges(tmp_path):
    proc = subprocess.run([sys.executable, "scripts/shard_study.py", "--experiment", "bbob_small", "--jobs", "2",
                           "--work", str(tmp_path), "--", "task.function=1", "task.dim=2", "task.instance=1,2",
                           "algo=random", "budget.rounds=3"], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "merged 2 of 2 blocks, 4 runs" in proc.stdout  # 2 runs + 2 study parents
    db = sqlite3.connect(tmp_path / "bbob_small" / "mlflow.db")
    assert db.execute("SELECT count(*) FROM metrics WHERE key = 'value'").fetchone() == (6,)
