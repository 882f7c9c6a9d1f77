"""The examples run: the torch digits training loop driven by Study ask/tell logs every trial to MLflow."""
from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import REPO, cli_env, mlflow_runs

pytestmark = pytest.mark.cli  # runs examples/digits_study.py in a subprocess (make test-fast skips it)


def test_digits_study_example_trains_and_logs_every_trial(tmp_path, new_store):
    uri = new_store("mlflow.db")
    args = [sys.executable, str(REPO / "examples" / "digits_study.py"), "--rounds", "3", "--epochs", "1",
            "--algo", "random", "--tracking", uri, "--checkpoint", str(tmp_path / "study.json")]
    proc = subprocess.run(args, cwd=tmp_path, env=cli_env(), capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert [line.split()[1] for line in proc.stdout.splitlines() if line.startswith("trial")] == ["1", "2", "3"]
    (run,) = mlflow_runs(uri, "digits-mlp")
    assert run.info.status == "FINISHED" and run.data.tags["task"] == "digits-mlp"
    assert 0.0 <= run.data.metrics["val_accuracy"] <= 1.0 and run.data.metrics["query_cost"] == 3.0
    assert run.data.params["task.space.activation"] == "['relu', 'tanh']"
